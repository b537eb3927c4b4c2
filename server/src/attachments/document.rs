//! Reading a document's text: plain text and markdown at once, PDF page by page with its
//! progress, its unreadable pages and its outline's headings (rule A2).

use std::time::{Duration, Instant};

use portal_core::attachment::{Document, ReadingStatus};

/// A text document, read whole: markdown gives its ATX headings (`# …`) outside code fences.
pub fn read_text(id: &str, filename: &str, media_type: &str, text: &str) -> Document {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let headings = if media_type == "text/markdown" {
        markdown_headings(&text)
    } else {
        Vec::new()
    };
    let trimmed = text.trim();
    Document {
        id: id.to_string(),
        filename: filename.to_string(),
        media_type: media_type.to_string(),
        status: ReadingStatus::Finished,
        pages_read: 0,
        pages_total: 0,
        unreadable_pages: Vec::new(),
        headings,
        text: (!trimmed.is_empty()).then(|| trimmed.to_string()),
    }
}

fn markdown_headings(text: &str) -> Vec<String> {
    let mut headings = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let rest = &trimmed[hashes..];
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            continue;
        }
        let title = rest.trim().trim_end_matches('#').trim_end();
        if !title.is_empty() {
            headings.push(title.to_string());
        }
    }
    headings
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
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    }
}

/// How far a PDF is read: its first `pages` pages, for `time` at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfLimits {
    pub pages: u32,
    pub time: Duration,
}

/// Reads the PDF `bytes` of `document` page by page and returns it finished. A page without
/// extractable text (a scan, a picture, a broken content stream) is listed as unreadable. A file
/// that does not open as a PDF ends `Failed`. Headings come from the PDF's outline, each with its
/// page.
///
/// Reading stops after `limits.pages` pages or once `limits.time` has passed since the file was
/// parsed (parsing takes time bounded by the upload's size): the document is
/// finished with `pages_read` below `pages_total`, which its progress note words as stopped at
/// the reading limit, and the text of the pages read.
///
/// `progress` is handed the document as it stands (status `Reading`, the text so far) after pages
/// 1, 2, 4, 8 and every power of two: the text handed over in all is less than twice the final
/// text, so writing each progress costs work linear in the pages, however many there are.
pub fn read_pdf(
    document: &Document,
    bytes: &[u8],
    limits: PdfLimits,
    mut progress: impl FnMut(&Document),
) -> Document {
    let mut doc = document.clone();
    let mut pdf = match lopdf::Document::load_mem(bytes) {
        Ok(pdf) => pdf,
        Err(error) => {
            tracing::info!("document {} is not a readable PDF: {error}", doc.id);
            doc.status = ReadingStatus::Failed;
            return doc;
        }
    };
    let pages: Vec<lopdf::ObjectId> = pdf.page_iter().collect();
    doc.pages_total = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    doc.pages_read = 0;
    doc.headings = pdf
        .get_toc()
        .map(|toc| {
            toc.toc
                .into_iter()
                .map(|entry| format!("{} (page {})", entry.title.trim(), entry.page))
                .collect()
        })
        .unwrap_or_default();
    let root = pdf
        .catalog()
        .and_then(|catalog| catalog.get(b"Pages"))
        .and_then(lopdf::Object::as_reference)
        .ok();
    let mut text = String::new();
    let started = Instant::now();
    for (page_id, number) in pages.into_iter().zip(1u32..) {
        if doc.pages_read >= limits.pages || started.elapsed() >= limits.time {
            tracing::info!(
                "document {} stopped at the reading limit after {} of {} pages ({:.1} s)",
                doc.id,
                doc.pages_read,
                doc.pages_total,
                started.elapsed().as_secs_f64()
            );
            break;
        }
        match page_text(&mut pdf, root, page_id) {
            Some(page) => {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&page);
            }
            None => doc.unreadable_pages.push(number),
        }
        doc.pages_read += 1;
        if doc.pages_read.is_power_of_two() {
            doc.text = (!text.is_empty()).then(|| text.clone());
            progress(&doc);
        }
    }
    doc.text = (!text.is_empty()).then_some(text);
    doc.status = ReadingStatus::Finished;
    doc
}

/// The trimmed text of the page `page_id`, or `None` when it has none. lopdf's `extract_text`
/// numbers pages by walking the whole page tree on every call, so reading page by page would take
/// time quadratic in the pages; the page is made the only child of the tree's root first, so the
/// walk finds it at once, and lopdf still reads its fonts, encodings and content.
fn page_text(
    pdf: &mut lopdf::Document,
    root: Option<lopdf::ObjectId>,
    page_id: lopdf::ObjectId,
) -> Option<String> {
    pdf.get_dictionary_mut(root?)
        .ok()?
        .set("Kids", vec![lopdf::Object::Reference(page_id)]);
    let text = pdf.extract_text(&[1]).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2_markdown_headings_outside_code_fences() {
        let text = "# Title\nintro\n## Part one ##\n```\n# not a heading\n```\n    # indented code\n#hashtag\n### Part two\n";
        let doc = read_text("d1", "notes.md", "text/markdown", text);
        assert_eq!(doc.headings, ["Title", "Part one", "Part two"]);
        assert_eq!(doc.status, ReadingStatus::Finished);
    }

    #[test]
    fn a2_plain_text_has_no_headings_and_empty_text_has_none() {
        let doc = read_text(
            "d1",
            "notes.txt",
            "text/plain",
            "# not markdown\r\nline\r\n",
        );
        assert!(doc.headings.is_empty());
        assert_eq!(doc.text.as_deref(), Some("# not markdown\nline"));
        let empty = read_text("d2", "blank.txt", "text/plain", " \n");
        assert_eq!(empty.text, None);
    }

    #[test]
    fn a2_a_file_that_is_not_a_pdf_fails() {
        let limits = PdfLimits {
            pages: 10,
            time: Duration::from_secs(10),
        };
        let doc = read_pdf(
            &pdf_reading("d1", "x.pdf"),
            b"%PDF-1.4 broken",
            limits,
            |_| {},
        );
        assert_eq!(doc.status, ReadingStatus::Failed);
    }
}
