//! Reading a PDF's pages within bounds (rule A2): what reading reports page by page
//! ([`Reading`]), the reading itself ([`read_pages`], what a reader process runs), and the fold of
//! those reports into the stored [`Document`] with its progress ([`Progress`]).
//!
//! Every stream lopdf decompresses (object and cross-reference streams at load, a page's content
//! and its fonts' encodings while reading) is bounded by [`PdfLimits::stream_bytes`], and the text
//! kept by [`PdfLimits::text_bytes`]; the object graph lopdf parses is bounded by the reader
//! process's memory (`super::reader`).

use std::time::{Duration, Instant};

use portal_core::attachment::{Document, ReadingLimit, ReadingStatus};
use serde::{Deserialize, Serialize};

/// How far a PDF is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PdfLimits {
    /// Pages read at most.
    pub pages: u32,
    /// Time spent reading pages once the file is parsed.
    pub time: Duration,
    /// The most one decompressed stream, or one page's content with its fonts' encodings, may
    /// take.
    pub stream_bytes: usize,
    /// The most text a document keeps, in bytes.
    pub text_bytes: usize,
    /// The memory a reader process may take (its data segment, heap and anonymous mappings).
    pub memory_bytes: u64,
}

/// What reading a PDF reports, in this order: [`Reading::Opened`] once, a [`Reading::Page`] for
/// each page read, and [`Reading::Stopped`] when a limit ended reading early; or
/// [`Reading::NotPdf`] alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reading {
    /// The file is parsed: its pages and its outline's headings, each with its page.
    Opened { pages: u32, headings: Vec<String> },
    /// The next page's trimmed text, or `None` when it has none that can be extracted.
    Page { text: Option<String> },
    /// A limit stopped reading here.
    Stopped { limit: ReadingLimit },
    /// The file does not open as a PDF.
    NotPdf,
}

/// Reads the PDF `bytes` page by page, handing each report to `report`, which says whether to
/// go on. Reading stops at `limits`' pages, after `limits.time` once the file is parsed (parsing
/// takes time bounded by the upload's size), at a stream, page or text past its bytes, or when
/// `report` says stop.
pub fn read_pages(bytes: &[u8], limits: &PdfLimits, mut report: impl FnMut(Reading) -> bool) {
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(limits.stream_bytes),
        ..lopdf::LoadOptions::default()
    };
    let mut pdf = match lopdf::Document::load_mem_with_options(bytes, options) {
        Ok(pdf) => pdf,
        Err(error) if past_limit(&error) => {
            report(Reading::Stopped {
                limit: ReadingLimit::Memory,
            });
            return;
        }
        Err(error) => {
            tracing::info!("a document is not a readable PDF: {error}");
            report(Reading::NotPdf);
            return;
        }
    };
    let pages: Vec<lopdf::ObjectId> = pdf.page_iter().collect();
    let headings = pdf
        .get_toc()
        .map(|toc| {
            toc.toc
                .into_iter()
                .map(|entry| format!("{} (page {})", entry.title.trim(), entry.page))
                .collect()
        })
        .unwrap_or_default();
    let opened = Reading::Opened {
        pages: u32::try_from(pages.len()).unwrap_or(u32::MAX),
        headings,
    };
    if !report(opened) {
        return;
    }
    let root = pdf
        .catalog()
        .and_then(|catalog| catalog.get(b"Pages"))
        .and_then(lopdf::Object::as_reference)
        .ok();
    let started = Instant::now();
    let mut text_bytes = 0usize;
    for (read, page_id) in (0u32..).zip(pages) {
        let limit = if read >= limits.pages {
            Some(ReadingLimit::Pages)
        } else if started.elapsed() >= limits.time {
            Some(ReadingLimit::Time)
        } else {
            None
        };
        if let Some(limit) = limit {
            report(Reading::Stopped { limit });
            return;
        }
        let text = match page_text(&mut pdf, root, page_id, limits.stream_bytes) {
            Ok(text) => text,
            Err(()) => {
                report(Reading::Stopped {
                    limit: ReadingLimit::Memory,
                });
                return;
            }
        };
        text_bytes = text_bytes.saturating_add(text.as_ref().map_or(0, String::len));
        if text_bytes > limits.text_bytes {
            report(Reading::Stopped {
                limit: ReadingLimit::Memory,
            });
            return;
        }
        if !report(Reading::Page { text }) {
            return;
        }
    }
}

/// Whether lopdf stopped because a stream would decompress past its limit.
fn past_limit(error: &lopdf::Error) -> bool {
    matches!(
        error,
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })
    )
}

/// The trimmed text of the page `page_id`, `None` when it has none, or `Err` when its content or
/// a font's encoding decompresses past `stream_bytes`. lopdf's `extract_text` numbers pages by
/// walking the whole page tree on every call, so reading page by page would take time quadratic
/// in the pages; the page is made the only child of the tree's root first, so the walk finds it
/// at once, and lopdf still reads its fonts, encodings and content.
fn page_text(
    pdf: &mut lopdf::Document,
    root: Option<lopdf::ObjectId>,
    page_id: lopdf::ObjectId,
    stream_bytes: usize,
) -> Result<Option<String>, ()> {
    let Some(root) = root else { return Ok(None) };
    let Ok(tree) = pdf.get_dictionary_mut(root) else {
        return Ok(None);
    };
    tree.set("Kids", vec![lopdf::Object::Reference(page_id)]);
    match pdf.extract_text_with_limit(&[1], stream_bytes) {
        Ok(text) => {
            let text = text.trim();
            Ok((!text.is_empty()).then(|| text.to_string()))
        }
        Err(error) if past_limit(&error) => Err(()),
        Err(_) => Ok(None),
    }
}

/// A document being read, folded from [`Reading`] reports: it counts pages, keeps the text and
/// hands the document as it stands to its progress after pages 1, 2, 4, 8 and every power of
/// two, so the text handed over in all is less than twice the final text and writing each
/// progress costs work linear in the pages, however many there are.
#[derive(Debug)]
pub struct Progress {
    document: Document,
    text: String,
    text_bytes: usize,
    /// Where each page read is in `text`, page 1 first (empty for a page without text).
    pages: Vec<std::ops::Range<usize>>,
}

impl Progress {
    /// `document` as accepted at upload, about to be read with `limits`.
    pub fn new(document: &Document, limits: &PdfLimits) -> Progress {
        let mut document = document.clone();
        document.pages_read = 0;
        document.pages_total = 0;
        document.stopped_by = None;
        document.unreadable_pages.clear();
        Progress {
            document,
            text: String::new(),
            text_bytes: limits.text_bytes,
            pages: Vec::new(),
        }
    }

    /// Takes the next report; `progress` is handed the document when a power of two of pages has
    /// been read. Answers whether reading should go on: a page whose text would take the
    /// document past its text limit stops it at the memory limit.
    pub fn take(&mut self, reading: Reading, mut progress: impl FnMut(&Document)) -> bool {
        match reading {
            Reading::Opened { pages, headings } => {
                self.document.pages_total = pages;
                self.document.headings = headings;
                true
            }
            Reading::Page { text } => {
                let number = self.document.pages_read.saturating_add(1);
                match text {
                    Some(page) if self.text.len() + page.len() + 2 > self.text_bytes => {
                        self.stop(ReadingLimit::Memory);
                        return false;
                    }
                    Some(page) => {
                        if !self.text.is_empty() {
                            self.text.push_str("\n\n");
                        }
                        let start = self.text.len();
                        self.text.push_str(&page);
                        self.pages.push(start..self.text.len());
                    }
                    None => {
                        self.document.unreadable_pages.push(number);
                        self.pages.push(self.text.len()..self.text.len());
                    }
                }
                self.document.pages_read = number;
                if number.is_power_of_two() {
                    self.document.text = (!self.text.is_empty()).then(|| self.text.clone());
                    progress(&self.document);
                }
                true
            }
            Reading::Stopped { limit } => {
                self.stop(limit);
                false
            }
            Reading::NotPdf => {
                self.document.status = ReadingStatus::Failed;
                false
            }
        }
    }

    /// Records that `limit` stopped reading, unless one already did.
    pub fn stop(&mut self, limit: ReadingLimit) {
        self.document.stopped_by.get_or_insert(limit);
    }

    /// Records that reading failed after the pages read so far.
    pub fn fail(&mut self) {
        self.document.status = ReadingStatus::Failed;
    }

    /// The document as [`Progress::finish`] leaves it, and the text of each page read, page 1
    /// first (empty for a page without text): what knowledge splits a PDF by.
    pub fn finish_with_pages(self) -> (Document, Vec<String>) {
        let pages = self
            .pages
            .iter()
            .map(|range| self.text[range.clone()].to_string())
            .collect();
        (self.finish(), pages)
    }

    /// The document as reading left it: finished, unless it failed, with the text read.
    pub fn finish(self) -> Document {
        let mut document = self.document;
        if document.status != ReadingStatus::Failed {
            document.status = ReadingStatus::Finished;
        }
        if let Some(limit) = document.stopped_by {
            tracing::info!(
                "document {} stopped at the {} after {} of {} pages",
                document.id,
                limit.name(),
                document.pages_read,
                document.pages_total
            );
        }
        document.text = (!self.text.is_empty()).then_some(self.text);
        document
    }
}

/// Reads the PDF `bytes` of `document` in this process and returns it finished, its progress
/// handed to `progress` as [`Progress`] says. A page without extractable text (a scan, a
/// picture, a broken content stream) is listed as unreadable; a file that does not open as a PDF
/// ends `Failed`; a limit reached ends it finished with the pages read and the limit named.
/// Bounded in memory only by `limits`' streams and text: the server reads in a reader process
/// (`super::reader`), which also bounds the parsed file.
pub fn read_pdf(
    document: &Document,
    bytes: &[u8],
    limits: &PdfLimits,
    mut progress: impl FnMut(&Document),
) -> Document {
    let mut folded = Progress::new(document, limits);
    read_pages(bytes, limits, |reading| folded.take(reading, &mut progress));
    folded.finish()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{UploadConfig, pdf_reading};

    #[test]
    fn a2_a_file_that_is_not_a_pdf_fails() {
        let limits = PdfLimits {
            pages: 10,
            time: Duration::from_secs(10),
            ..UploadConfig::DEFAULT.pdf_limits()
        };
        let doc = read_pdf(
            &pdf_reading("d1", "x.pdf"),
            b"%PDF-1.4 broken",
            &limits,
            |_| {},
        );
        assert_eq!(doc.status, ReadingStatus::Failed);
    }

    #[test]
    fn a_page_whose_text_passes_the_documents_text_limit_stops_reading_at_the_memory_limit() {
        let limits = PdfLimits {
            text_bytes: 12,
            ..UploadConfig::DEFAULT.pdf_limits()
        };
        let mut folded = Progress::new(&pdf_reading("d1", "x.pdf"), &limits);
        let mut take = |reading| folded.take(reading, |_| {});
        assert!(take(Reading::Opened {
            pages: 3,
            headings: Vec::new()
        }));
        assert!(take(Reading::Page {
            text: Some("ten bytes!".into())
        }));
        assert!(!take(Reading::Page {
            text: Some("more".into())
        }));
        let doc = folded.finish();
        assert_eq!(
            (doc.status, doc.pages_read, doc.stopped_by),
            (ReadingStatus::Finished, 1, Some(ReadingLimit::Memory))
        );
        assert_eq!(doc.text.as_deref(), Some("ten bytes!"));
    }
}
