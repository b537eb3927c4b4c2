//! Reading a document's text: plain text and markdown at once, read in pieces, and a PDF's
//! record before its pages are read (`super::pdf`) (rule A2).

use std::io::{BufRead, ErrorKind};

use portal_core::attachment::{Document, ReadingStatus};

/// The section headings a markdown document keeps at most; the rest are left out. **Decision:**
/// 1,000: the manifest lists 20 (`AttachmentConfig::manifest_headings`), and a file of 20 MiB made
/// of nothing but headings would otherwise keep millions, hundreds of megabytes in memory.
const MAX_HEADINGS: usize = 1_000;

/// The start of each line kept while a markdown document is read, to find whether it is a
/// heading; a longer heading is cut there. **Decision:** 1 KiB, at least 250 characters of title
/// (the manifest cuts each to 200, `AttachmentConfig::heading_chars`), so a document's headings
/// take 1 MiB at most.
const LINE_BYTES: usize = 1024;

/// A text document, read from `file` in pieces: finished, with its section headings when it is
/// markdown (ATX headings, `# …`, outside code fences), and without its text, which storage reads
/// from the stored bytes (`portal_core::attachment::text_from_bytes`), so a file of any size
/// takes only `file`'s buffer and a line's start here. `None` when the bytes are not text: UTF-8
/// (a byte-order mark allowed) without NUL or other control characters than tab, line feed,
/// carriage return and form feed (rule A1).
pub fn read_text<R: BufRead>(
    id: &str,
    filename: &str,
    media_type: &str,
    file: &mut R,
) -> std::io::Result<Option<Document>> {
    let mut text = TextScan::new(media_type == "text/markdown");
    loop {
        let piece = match file.fill_buf() {
            Ok([]) => break,
            Ok(piece) => piece,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let read = piece.len();
        if !text.read(piece) {
            return Ok(None);
        }
        file.consume(read);
    }
    Ok(text.finish().map(|headings| Document {
        id: id.to_string(),
        filename: filename.to_string(),
        media_type: media_type.to_string(),
        status: ReadingStatus::Finished,
        pages_read: 0,
        pages_total: 0,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings,
        text: None,
    }))
}

/// A text read piece by piece: checked character by character across the pieces, and its lines
/// looked through for markdown headings.
struct TextScan {
    /// The start of a character the last piece cut off.
    cut: Vec<u8>,
    /// Whether any character was read yet: the first may be a byte-order mark.
    started: bool,
    /// Whether headings are looked for: in markdown, until there are [`MAX_HEADINGS`].
    headings_wanted: bool,
    /// The start of the line being read, to [`LINE_BYTES`].
    line: String,
    /// The code fence the lines are in, if any.
    fence: Option<&'static str>,
    headings: Vec<String>,
}

impl TextScan {
    fn new(markdown: bool) -> Self {
        TextScan {
            cut: Vec::new(),
            started: false,
            headings_wanted: markdown,
            line: String::new(),
            fence: None,
            headings: Vec::new(),
        }
    }

    /// Reads the next piece of bytes; `false` once they are not text.
    fn read(&mut self, mut piece: &[u8]) -> bool {
        // A character the last piece cut off is completed first, a byte at a time.
        while !self.cut.is_empty() {
            let Some((&byte, rest)) = piece.split_first() else {
                return true;
            };
            piece = rest;
            let mut cut = std::mem::take(&mut self.cut);
            cut.push(byte);
            match std::str::from_utf8(&cut) {
                Ok(character) => {
                    if !self.text(character) {
                        return false;
                    }
                }
                Err(error) if error.error_len().is_none() => self.cut = cut,
                Err(_) => return false,
            }
        }
        match std::str::from_utf8(piece) {
            Ok(text) => self.text(text),
            // The piece ends inside a character: its start waits for the next piece.
            Err(error) if error.error_len().is_none() => {
                let (whole, cut) = piece.split_at(error.valid_up_to());
                self.cut.extend_from_slice(cut);
                std::str::from_utf8(whole).is_ok_and(|text| self.text(text))
            }
            Err(_) => false,
        }
    }

    /// Reads whole characters; `false` when one is a control character text may not have.
    fn text(&mut self, text: &str) -> bool {
        if text.is_empty() {
            return true;
        }
        if text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}'))
        {
            return false;
        }
        let text = if self.started {
            text
        } else {
            self.started = true;
            text.strip_prefix('\u{feff}').unwrap_or(text)
        };
        if self.headings_wanted {
            let mut lines = text.split('\n');
            if let Some(first) = lines.next() {
                self.extend_line(first);
            }
            for line in lines {
                self.end_line();
                if !self.headings_wanted {
                    break;
                }
                self.extend_line(line);
            }
        }
        true
    }

    /// Keeps what fits of `part` of the line being read, to [`LINE_BYTES`], whole characters.
    fn extend_line(&mut self, part: &str) {
        let mut end = part.len().min(LINE_BYTES - self.line.len());
        while !part.is_char_boundary(end) {
            end -= 1;
        }
        self.line.push_str(&part[..end]);
    }

    /// Ends the line being read: a heading is kept.
    fn end_line(&mut self) {
        if let Some(heading) = heading(&self.line, &mut self.fence) {
            self.headings.push(heading);
            self.headings_wanted = self.headings.len() < MAX_HEADINGS;
        }
        self.line.clear();
    }

    /// The headings, once every piece is read; `None` when the text ends inside a character.
    fn finish(mut self) -> Option<Vec<String>> {
        if !self.cut.is_empty() {
            return None;
        }
        if self.headings_wanted {
            self.end_line();
        }
        Some(self.headings)
    }
}

/// The title `line` gives when it is an ATX heading outside a code fence, `fence` following the
/// fences it opens and closes. A `\r` ending the line (a `\r\n` line ending) changes nothing: it
/// is not where a fence or heading is recognised, and titles are trimmed.
fn heading(line: &str, fence: &mut Option<&'static str>) -> Option<String> {
    let trimmed = line.trim_start();
    if let Some(open) = *fence {
        if trimmed.starts_with(open) {
            *fence = None;
        }
        return None;
    }
    for open in ["```", "~~~"] {
        if trimmed.starts_with(open) {
            *fence = Some(open);
            return None;
        }
    }
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let hashes = trimmed.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &trimmed[hashes..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim_end();
    (!title.is_empty()).then(|| title.to_string())
}

/// A PDF as accepted at upload: reading, nothing read yet.
pub fn pdf_reading(id: &str, filename: &str) -> Document {
    Document {
        id: id.to_string(),
        filename: filename.to_string(),
        media_type: "application/pdf".to_string(),
        status: ReadingStatus::Reading,
        pages_read: 0,
        pages_total: 0,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use portal_core::attachment::text_from_bytes;

    use super::*;

    /// The document `text` reads as, read in pieces of `piece` bytes.
    fn read(media_type: &str, text: &str, piece: usize) -> Option<Document> {
        let mut file = BufReader::with_capacity(piece, text.as_bytes());
        read_text("d1", "notes", media_type, &mut file).expect("read")
    }

    #[test]
    fn a2_markdown_headings_outside_code_fences() {
        let text = "\u{feff}# Title\r\nintro\n## Part one ##\n```\n# not a heading\n```\n    # indented code\n#hashtag\n### Part two é\n";
        // Pieces of one byte cut every character of more than one byte, and the mark.
        for piece in [1, 2, 3, 7, 1024] {
            let doc = read("text/markdown", text, piece).expect("text");
            assert_eq!(doc.headings, ["Title", "Part one", "Part two é"], "{piece}");
            assert_eq!((doc.status, doc.text), (ReadingStatus::Finished, None));
        }
    }

    #[test]
    fn a2_plain_text_has_no_headings_and_empty_text_has_none() {
        let text = "# not markdown\r\nline\r\n";
        let doc = read("text/plain", text, 1024).expect("text");
        assert!(doc.headings.is_empty());
        // Its text is read from its bytes when it is loaded.
        assert_eq!(
            text_from_bytes(text.into()).as_deref(),
            Some("# not markdown\nline")
        );
        assert!(read("text/plain", " \n", 1024).is_some());
        assert_eq!(text_from_bytes(" \n".into()), None);
    }

    #[test]
    fn a_markdown_document_keeps_its_first_1000_headings_each_cut_to_the_lines_first_kib() {
        let long = format!("# {}\n", "é".repeat(3_000));
        let text = long + &"## Part\n".repeat(2 * MAX_HEADINGS);
        let doc = read("text/markdown", &text, 4096).expect("text");
        assert_eq!(doc.headings.len(), MAX_HEADINGS);
        // The line's first 1,024 bytes: the hash and the space, then 511 whole characters.
        assert_eq!(doc.headings[0], "é".repeat(511));
        assert_eq!(doc.headings[1], "Part");
    }
}
