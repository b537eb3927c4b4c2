//! What an upload is, from its bytes: the file name is never trusted for the kind.

use std::io::{Read, Seek};

/// What the bytes of an upload are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Png,
    Jpeg,
    Gif,
    Webp,
    Pdf,
    /// UTF-8 text; the name may only say whether it is markdown. Anything that is none of these
    /// is refused.
    Text,
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

/// How much of an upload's start its magic numbers are looked for in.
const HEAD_BYTES: u64 = 1024;

/// Sniffs the upload in `file` by the magic numbers in its first kilobyte, and leaves the file at
/// its start. `None` when there are none: the upload is text if all of it reads as text
/// (`super::document::read_text`), else of no kind the portal reads.
pub fn sniff_head<R: Read + Seek>(file: &mut R) -> std::io::Result<Option<Sniffed>> {
    file.rewind()?;
    let mut head = Vec::new();
    file.by_ref().take(HEAD_BYTES).read_to_end(&mut head)?;
    file.rewind()?;
    Ok(magic(&head))
}

/// The kind `head`'s magic numbers say.
fn magic(head: &[u8]) -> Option<Sniffed> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Sniffed::Png)
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Sniffed::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(Sniffed::Gif)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(Sniffed::Webp)
    } else if head.windows(5).any(|w| w == b"%PDF-") {
        // `%PDF-` anywhere in the first kilobyte, as readers accept it after leading junk.
        Some(Sniffed::Pdf)
    } else {
        None
    }
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

    /// What `bytes` are sniffed as: by their magic numbers, else text if they read as text;
    /// `None` for anything else.
    fn sniff(bytes: &[u8]) -> Option<Sniffed> {
        let mut file = std::io::Cursor::new(bytes);
        let sniffed = sniff_head(&mut file).expect("read");
        assert_eq!(file.position(), 0, "the file is left at its start");
        sniffed.or_else(|| {
            crate::document::read_text("d", "n.txt", "text/plain", &mut file)
                .expect("read")
                .map(|_| Sniffed::Text)
        })
    }

    #[test]
    fn a1_magic_bytes_decide_the_kind_not_the_name() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some(Sniffed::Png));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0]), Some(Sniffed::Jpeg));
        assert_eq!(sniff(b"GIF89a...."), Some(Sniffed::Gif));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some(Sniffed::Webp));
        assert_eq!(sniff(b"%PDF-1.7\n"), Some(Sniffed::Pdf));
        assert_eq!(sniff(b"junk\n%PDF-1.7\n"), Some(Sniffed::Pdf));
        assert_eq!(
            sniff("# Notes\n\nHéllo 👋\n".as_bytes()),
            Some(Sniffed::Text)
        );
        assert_eq!(sniff(b"\xEF\xBB\xBFtext"), Some(Sniffed::Text));
        assert_eq!(sniff(b"MZ\x90\0\x03\0"), None);
        assert_eq!(sniff(b"text with a \0 byte"), None);
        assert_eq!(sniff(&[0xC3, 0x28]), None);
        // A character cut short at the end is not text.
        assert_eq!(sniff(&[b'a', 0xE2, 0x82]), None);
        assert_eq!(sniff("a\u{85}b".as_bytes()), None);
    }

    #[test]
    fn a1_only_text_takes_its_flavour_from_the_name() {
        assert!(named_markdown("README.MD"));
        assert!(!named_markdown("notes.txt"));
        assert_eq!(Sniffed::Text.media_type(true), "text/markdown");
        assert_eq!(Sniffed::Png.media_type(true), "image/png");
    }
}
