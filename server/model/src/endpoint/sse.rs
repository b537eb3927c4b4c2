//! Server-sent events, decoded from bytes that may break anywhere: inside a line, between `\r`
//! and `\n`, or inside a multi-byte character. Bytes are buffered until a line is whole, so a
//! character is only decoded once all its bytes are in. A line, and an event's data, longer than
//! the cap is refused, so an endless line cannot grow the buffer without bound.

use super::error::EndpointError;

/// Collects the `data` of each event from a byte stream.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    data: Option<String>,
    after_cr: bool,
    /// The longest line, and the longest event's data, in bytes.
    max_line: usize,
}

impl SseDecoder {
    pub(crate) fn new(max_line: usize) -> SseDecoder {
        SseDecoder {
            line: Vec::new(),
            data: None,
            after_cr: false,
            max_line,
        }
    }

    /// Reads more bytes, appending the data of each event they complete to `out`.
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<String>,
    ) -> Result<(), EndpointError> {
        for &byte in bytes {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\n' => self.end_line(out)?,
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out)?;
                }
                _ if self.line.len() >= self.max_line => return Err(too_long(self.max_line)),
                _ => self.line.push(byte),
            }
        }
        Ok(())
    }

    /// Ends the stream: an event not yet closed by a blank line still counts, since some servers
    /// close the connection right after their last `data` line.
    pub(crate) fn finish(&mut self, out: &mut Vec<String>) -> Result<(), EndpointError> {
        if !self.line.is_empty() {
            self.end_line(out)?;
        }
        out.extend(self.data.take());
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<String>) -> Result<(), EndpointError> {
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.is_empty() {
            out.extend(self.data.take());
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    if data.len().saturating_add(1).saturating_add(value.len()) > self.max_line {
                        return Err(too_long(self.max_line));
                    }
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
        Ok(())
    }
}

fn too_long(max_line: usize) -> EndpointError {
    EndpointError::LineTooLong {
        kib: max_line.div_ceil(1024),
    }
}
