//! Attachments as the server receives them (rules A1–A5): an upload is checked for size, its
//! kind sniffed from its bytes (the file name is not trusted), and it becomes core's
//! [`Attachment`]: a document, whose text is read (a PDF page by page, with its progress; a text
//! file's is its bytes, read from them in pieces and by storage when loaded), or a picture,
//! decoded to learn its size and reduced per model when sent. Uploads are read from a file in
//! pieces, never held whole in memory. The `read_document` and
//! `search_attachments` tools read the documents a conversation's transcript holds.

mod document;
mod pdf;
mod picture;
mod reader;
mod registered;
mod sniff;
mod tools;
mod upload;

use std::io::{BufRead, Seek, SeekFrom};

use portal_core::attachment::{Attachment, Document, file_size};
use portal_core::title::shown_name;
use thiserror::Error;
use unicode_segmentation::UnicodeSegmentation;

pub use document::pdf_reading;
pub use document::read_text;
pub use pdf::{PdfLimits, read_pdf};
pub use picture::{
    ModelPictures, PictureError, check_declared_size, encode_for_model, read_picture,
};
pub use reader::{PdfReaders, ReaderError, ReaderPlace, run_reader, this_program};
pub use registered::{ReadDocument, SearchAttachments, register};
pub use sniff::{Sniffed, named_markdown, sniff_head};
pub use tools::{DocumentToolConfig, ToolError, read_document, search_attachments};
pub use upload::{
    UploadFailed, is_attachment_id, keep_tool_picture, new_attachment_id, read_stored, store_upload,
};

/// The limits an upload is checked against, each refusal naming its limit (docs/security.md).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct UploadConfig {
    /// The largest upload, in bytes.
    #[arg(long = "max-upload-bytes", default_value_t = UploadConfig::DEFAULT.max_bytes)]
    pub max_bytes: usize,
    /// A picture's longest side at most, in pixels, read from its header before it is decoded.
    #[arg(skip = UploadConfig::DEFAULT.max_picture_side)]
    pub max_picture_side: u32,
    /// A picture's pixels (width × height) at most, read from its header before it is decoded.
    #[arg(
        long = "max-picture-pixels",
        default_value_t = UploadConfig::DEFAULT.max_picture_pixels
    )]
    pub max_picture_pixels: u64,
    /// The memory a picture may take decoded, in bytes.
    #[arg(skip = UploadConfig::DEFAULT.max_decoded_bytes)]
    pub max_decoded_bytes: u64,
    /// A file name is cut to this many characters.
    #[arg(skip = UploadConfig::DEFAULT.filename_chars)]
    pub filename_chars: usize,
    /// A file name longer than this many bytes is refused: no file system makes one.
    #[arg(skip = UploadConfig::DEFAULT.filename_bytes)]
    pub filename_bytes: usize,
    /// A PDF's pages read at most; the rest is left unread and its progress says so.
    #[arg(long = "max-pdf-pages", default_value_t = UploadConfig::DEFAULT.pdf_pages)]
    pub pdf_pages: u32,
    /// Seconds a PDF's pages are read for at most, once it is parsed; the rest is left unread and
    /// its progress says so.
    #[arg(
        long = "max-pdf-seconds",
        default_value_t = UploadConfig::DEFAULT.pdf_seconds
    )]
    pub pdf_seconds: u64,
    /// The memory one PDF's reader process may take, in bytes: its data segment (the parsed file,
    /// a page's content and its text); an allocation past it ends the reader, and the document
    /// keeps the pages read before.
    #[arg(
        long = "pdf-reader-memory-bytes",
        default_value_t = UploadConfig::DEFAULT.pdf_memory_bytes
    )]
    pub pdf_memory_bytes: u64,
    /// The most one stream of a PDF may decompress to, in bytes, and one page's content with its
    /// fonts' encodings; reading stops at a stream or page past it.
    #[arg(
        long = "max-pdf-stream-bytes",
        default_value_t = UploadConfig::DEFAULT.pdf_stream_bytes
    )]
    pub pdf_stream_bytes: usize,
    /// The most text a document keeps, in bytes; reading stops at a page that would pass it.
    #[arg(skip = UploadConfig::DEFAULT.pdf_text_bytes)]
    pub pdf_text_bytes: usize,
}

impl UploadConfig {
    /// **Decisions:** 20 MiB an upload; 12,000 pixels a side and 40,000,000 pixels a picture
    /// (an 8K frame is 33 million; a picture of 40 million takes 160 MB decoded as RGBA); 256 MiB
    /// decoded; names cut to 255 characters and refused past 1,024 bytes (no file system makes a
    /// longer one); 2,000 pages and 60 seconds of reading a PDF; 512 MiB for a PDF's reader
    /// process (the reader of a 16 MB file of 100,000 pages peaks at 136 MiB); 4 MiB a
    /// decompressed stream or page content (a page of dense text is tens of kilobytes, a detailed
    /// vector map a few megabytes; lopdf's parsed content takes about 32 times its bytes, so 128
    /// MB); 16 MiB of text a document (a 2,000-page book of dense text is about 6 MB).
    pub const DEFAULT: UploadConfig = UploadConfig {
        max_bytes: 20 * 1024 * 1024,
        max_picture_side: 12_000,
        max_picture_pixels: 40_000_000,
        max_decoded_bytes: 256 * 1024 * 1024,
        filename_chars: 255,
        filename_bytes: 1024,
        pdf_pages: 2_000,
        pdf_seconds: 60,
        pdf_memory_bytes: 512 * 1024 * 1024,
        pdf_stream_bytes: 4 * 1024 * 1024,
        pdf_text_bytes: 16 * 1024 * 1024,
    };

    /// How far a PDF is read.
    pub fn pdf_limits(&self) -> PdfLimits {
        PdfLimits {
            pages: self.pdf_pages,
            time: std::time::Duration::from_secs(self.pdf_seconds),
            stream_bytes: self.pdf_stream_bytes,
            text_bytes: self.pdf_text_bytes,
            memory_bytes: self.pdf_memory_bytes,
        }
    }
}

impl Default for UploadConfig {
    fn default() -> Self {
        UploadConfig::DEFAULT
    }
}

/// Why an upload was refused, naming the file and its size in the units people use. Nothing is
/// stored when one of these comes back.
#[derive(Debug, Error)]
pub enum UploadError {
    #[error("“{filename}” is empty; choose a file with something in it")]
    Empty { filename: String },
    #[error(
        "“{filename}” is {}, and the most a file may be is {}; send a smaller file",
        file_size(*size as u64),
        file_size(*limit as u64)
    )]
    TooLarge {
        filename: String,
        size: usize,
        limit: usize,
    },
    #[error(
        "“{filename}” is not a kind of file the portal reads; attach plain text, markdown, PDF, or a PNG, JPEG, GIF or WebP picture"
    )]
    Unsupported { filename: String },
    #[error("“{filename}” was refused: {source}")]
    Picture {
        filename: String,
        #[source]
        source: PictureError,
    },
    #[error(
        "“{filename}” could not be read back from where it was received ({source}); send it again, and tell an administrator if it happens again"
    )]
    Unreadable {
        filename: String,
        #[source]
        source: std::io::Error,
    },
}

/// An accepted upload, as core's attachment, read from `file` (the file left at its start): a
/// picture is decoded from it, a text read through in pieces, its text left in its bytes
/// (`document::read_text`). A PDF comes back `Reading`; finish it with [`read_stored`].
pub fn accept<R: BufRead + Seek>(
    id: &str,
    filename: &str,
    file: &mut R,
    config: &UploadConfig,
) -> Result<Attachment, UploadError> {
    let filename = clean_filename(filename, config);
    let unreadable = |filename: &str, source| UploadError::Unreadable {
        filename: filename.to_string(),
        source,
    };
    let size = size_of(file).map_err(|source| unreadable(&filename, source))?;
    if size > config.max_bytes as u64 {
        return Err(UploadError::TooLarge {
            filename,
            size: usize::try_from(size).unwrap_or(usize::MAX),
            limit: config.max_bytes,
        });
    }
    if size == 0 {
        return Err(UploadError::Empty { filename });
    }
    let markdown = named_markdown(&filename);
    let accepted = match sniff_head(file).map_err(|source| unreadable(&filename, source))? {
        Some(Sniffed::Pdf) => Attachment::Document(pdf_reading(id, &filename)),
        Some(picture) => {
            let media_type = picture.media_type(markdown);
            match read_picture(id, &filename, media_type, file, config) {
                Ok(picture) => Attachment::Picture(picture),
                Err(source) => return Err(UploadError::Picture { filename, source }),
            }
        }
        None => {
            let media_type = Sniffed::Text.media_type(markdown);
            match read_text(id, &filename, media_type, file) {
                Ok(Some(document)) => Attachment::Document(document),
                Ok(None) => return Err(UploadError::Unsupported { filename }),
                Err(source) => return Err(unreadable(&filename, source)),
            }
        }
    };
    file.rewind()
        .map_err(|source| unreadable(&filename, source))?;
    Ok(accepted)
}

/// The size of `file` in bytes, leaving it at its start.
pub(crate) fn size_of<R: Seek>(file: &mut R) -> std::io::Result<u64> {
    let size = file.seek(SeekFrom::End(0))?;
    file.rewind()?;
    Ok(size)
}

/// Whether `document` still has text to read from its bytes (a PDF accepted a moment ago).
pub fn needs_reading(document: &Document) -> bool {
    document.status == portal_core::attachment::ReadingStatus::Reading
}

/// The name shown for an upload: its last path component, cleaned as every shown name is
/// (`portal_core::title::shown_name`: no control or bidirectional characters), cut to the
/// configured length; `attachment` when nothing visible is left.
pub fn clean_filename(filename: &str, config: &UploadConfig) -> String {
    let last = filename.rsplit(['/', '\\']).next().unwrap_or(filename);
    let cleaned = shown_name(last);
    let cut = first_chars(&cleaned, config.filename_chars);
    if cut.is_empty() || cut == "." || cut == ".." {
        "attachment".to_string()
    } else {
        cut.to_string()
    }
}

/// The first `count` user-perceived characters of `text` (never splitting a grapheme cluster).
pub(crate) fn first_chars(text: &str, count: usize) -> &str {
    match text.grapheme_indices(true).nth(count) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests;
