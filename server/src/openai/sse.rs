//! Server-sent events, decoded from bytes that may break anywhere: inside a line, between `\r`
//! and `\n`, or inside a multi-byte character. Bytes are buffered until a line is whole, so a
//! character is only decoded once all its bytes are in.

/// Collects the `data` of each event from a byte stream.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    data: Option<String>,
    after_cr: bool,
}

impl SseDecoder {
    /// Reads more bytes, appending the data of each event they complete to `out`.
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        for &byte in bytes {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\n' => self.end_line(out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                _ => self.line.push(byte),
            }
        }
    }

    /// Ends the stream: an event not yet closed by a blank line still counts, since some servers
    /// close the connection right after their last `data` line.
    pub(crate) fn finish(&mut self, out: &mut Vec<String>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        out.extend(self.data.take());
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.is_empty() {
            out.extend(self.data.take());
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
    }
}
