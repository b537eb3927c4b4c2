//! What an upload is, from its bytes: the file name is never trusted for the kind.

/// What the bytes of an upload are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Png,
    Jpeg,
    Gif,
    Webp,
    Pdf,
    /// UTF-8 text; the name may only say whether it is markdown.
    Text,
    /// Anything else: refused.
    Unknown,
}

impl Sniffed {
    /// The media type the upload is stored with.
    pub fn media_type(self, markdown: bool) -> &'static str {
        match self {
            Sniffed::Png => "image/png",
            Sniffed::Jpeg => "image/jpeg",
            Sniffed::Gif => "image/gif",
            Sniffed::Webp => "image/webp",
            Sniffed::Pdf => "application/pdf",
            Sniffed::Text if markdown => "text/markdown",
            Sniffed::Text => "text/plain",
            Sniffed::Unknown => "application/octet-stream",
        }
    }

    /// Whether the upload is a picture (rule A1: decided once, here).
    pub fn is_picture(self) -> bool {
        matches!(
            self,
            Sniffed::Png | Sniffed::Jpeg | Sniffed::Gif | Sniffed::Webp
        )
    }
}

/// Sniffs `bytes` by their magic numbers; text is UTF-8 (a byte-order mark allowed) without NUL
/// or other control characters than tab, line feed, carriage return and form feed.
pub fn sniff(bytes: &[u8]) -> Sniffed {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Sniffed::Png
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Sniffed::Jpeg
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Sniffed::Gif
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Sniffed::Webp
    } else if pdf_header(bytes) {
        Sniffed::Pdf
    } else if is_text(bytes) {
        Sniffed::Text
    } else {
        Sniffed::Unknown
    }
}

/// `%PDF-` within the first kilobyte, as readers accept it after leading junk.
fn pdf_header(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    head.windows(5).any(|w| w == b"%PDF-")
}

fn is_text(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).is_ok_and(|text| {
        text.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\u{c}'))
    })
}

/// Whether a text upload's name says markdown (`.md`, `.markdown`). Only the flavour of text
/// follows the name, never the kind.
pub fn named_markdown(filename: &str) -> bool {
    let lower = filename.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a1_magic_bytes_decide_the_kind_not_the_name() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Sniffed::Png);
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0]), Sniffed::Jpeg);
        assert_eq!(sniff(b"GIF89a...."), Sniffed::Gif);
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Sniffed::Webp);
        assert_eq!(sniff(b"%PDF-1.7\n"), Sniffed::Pdf);
        assert_eq!(sniff("# Notes\n\nHéllo 👋\n".as_bytes()), Sniffed::Text);
        assert_eq!(sniff(b"\xEF\xBB\xBFtext"), Sniffed::Text);
        assert_eq!(sniff(b"MZ\x90\0\x03\0"), Sniffed::Unknown);
        assert_eq!(sniff(b"text with a \0 byte"), Sniffed::Unknown);
        assert_eq!(sniff(&[0xC3, 0x28]), Sniffed::Unknown);
    }

    #[test]
    fn a1_only_text_takes_its_flavour_from_the_name() {
        assert!(named_markdown("README.MD"));
        assert!(!named_markdown("notes.txt"));
        assert_eq!(Sniffed::Text.media_type(true), "text/markdown");
        assert_eq!(Sniffed::Png.media_type(true), "image/png");
    }
}
