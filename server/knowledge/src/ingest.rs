//! A document arriving in a collection, from its bytes to its passages: what it is is sniffed
//! from its bytes as an attachment's is (rule A1: a PDF, or UTF-8 text), and a text's name may
//! only say it is markdown or a web page; its text is then split by its structure
//! ([`crate::chunk`]). A PDF's pages are read by the server's reader processes
//! (`portal_attachments::ReaderPlace::read_pages`) before [`pages`] splits them.

use portal_attachments::{Sniffed, named_markdown, read_text};
use portal_store::NewPassage;
use thiserror::Error;

use crate::chunk::{Chunk, Source, split};
use crate::html;

/// The passages one document is split into at most. **Decision:** 20,000, some 20 million
/// characters: a 10,000-page manual fits, and a hostile file costs no more than that.
pub const MOST_PASSAGES: usize = 20_000;

/// What a document is, for reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pdf,
    /// HTML, read as markdown-like text.
    Html,
    Markdown,
    Plain,
}

impl Kind {
    /// The media type the document is listed with.
    pub fn media_type(self) -> &'static str {
        match self {
            Kind::Pdf => "application/pdf",
            Kind::Html => "text/html",
            Kind::Markdown => "text/markdown",
            Kind::Plain => "text/plain",
        }
    }
}

/// Why a document cannot join a collection.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum IngestError {
    #[error(
        "“{filename}” is neither a PDF nor UTF-8 text (Markdown, HTML or plain); convert it to one of those, then add it again"
    )]
    Unsupported { filename: String },
    #[error("“{filename}” has no text that can be read; add a document with text in it")]
    NoText { filename: String },
}

/// What the document `bytes`, named `filename`, is: a PDF by its magic number, else text when
/// all of it is UTF-8 text (a web page when named `.html` or `.htm` or starting as one, markdown
/// when named so). A picture, or anything else, is refused.
pub fn kind(filename: &str, sniffed: Option<Sniffed>, bytes: &[u8]) -> Result<Kind, IngestError> {
    let unsupported = || IngestError::Unsupported {
        filename: filename.to_string(),
    };
    match sniffed {
        Some(Sniffed::Pdf) => return Ok(Kind::Pdf),
        Some(_) => return Err(unsupported()),
        None => {}
    }
    let text = read_text("", filename, "text/plain", &mut &bytes[..])
        .ok()
        .flatten();
    if text.is_none() {
        return Err(unsupported());
    }
    let lower = filename.to_lowercase();
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).to_lowercase();
    let head = head.trim_start_matches('\u{feff}').trim_start();
    Ok(
        if lower.ends_with(".html")
            || lower.ends_with(".htm")
            || head.starts_with("<!doctype html")
            || head.starts_with("<html")
        {
            Kind::Html
        } else if named_markdown(filename) {
            Kind::Markdown
        } else {
            Kind::Plain
        },
    )
}

/// The passages of a text document of `kind` (not a PDF), at most [`MOST_PASSAGES`].
pub fn text(filename: &str, kind: Kind, bytes: &[u8]) -> Result<Vec<NewPassage>, IngestError> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_start_matches('\u{feff}');
    let chunks = match kind {
        Kind::Html => split(Source::Markdown(&html::to_text(text)), MOST_PASSAGES),
        Kind::Markdown => split(Source::Markdown(text), MOST_PASSAGES),
        Kind::Plain | Kind::Pdf => split(Source::Plain(text), MOST_PASSAGES),
    };
    found(filename, chunks)
}

/// The passages of a PDF's pages, page 1 first, at most [`MOST_PASSAGES`].
pub fn pages(filename: &str, pages: &[String]) -> Result<Vec<NewPassage>, IngestError> {
    found(filename, split(Source::Pages(pages), MOST_PASSAGES))
}

fn found(filename: &str, chunks: Vec<Chunk>) -> Result<Vec<NewPassage>, IngestError> {
    if chunks.is_empty() {
        return Err(IngestError::NoText {
            filename: filename.to_string(),
        });
    }
    Ok(chunks
        .into_iter()
        .map(|chunk| NewPassage {
            text: chunk.text,
            page: chunk.page,
            headings: chunk.headings,
        })
        .collect())
}
