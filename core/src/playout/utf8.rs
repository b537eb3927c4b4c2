//! Joining UTF-8 bytes whose chunks may end inside a character.

/// The bytes of a character cut by a chunk's end, kept until the rest arrives.
#[derive(Debug, Clone, Default)]
pub(super) struct Utf8Tail {
    pending: Vec<u8>,
}

impl Utf8Tail {
    /// Decodes a chunk after the kept bytes. An incomplete character at the end is kept for the
    /// next chunk; invalid bytes become U+FFFD.
    pub fn decode(&mut self, chunk: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(chunk);
        let mut text = String::with_capacity(input.len());
        let mut rest = input.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    text.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(invalid) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[invalid..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        text
    }

    /// The stream has ended: an incomplete character left over becomes U+FFFD.
    pub fn flush(&mut self) -> Option<char> {
        let cut = !self.pending.is_empty();
        self.pending.clear();
        cut.then_some(char::REPLACEMENT_CHARACTER)
    }
}
