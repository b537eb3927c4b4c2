//! Reading a document's text: plain text and markdown at once, PDF page by page with its
//! progress, its unreadable pages and its outline's headings (rule A2).

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

/// Reads the PDF `bytes` of `document` page by page, handing `progress` the document as it stands
/// after each page (status `Reading`, the text so far), and returns it finished. A page without
/// extractable text (a scan, a picture, a broken content stream) is listed as unreadable. A file
/// that does not open as a PDF ends `Failed`. Headings come from the PDF's outline, each with
/// its page.
pub fn read_pdf(
    document: &Document,
    bytes: &[u8],
    mut progress: impl FnMut(&Document),
) -> Document {
    let mut doc = document.clone();
    let pdf = match lopdf::Document::load_mem(bytes) {
        Ok(pdf) => pdf,
        Err(error) => {
            tracing::info!("document {} is not a readable PDF: {error}", doc.id);
            doc.status = ReadingStatus::Failed;
            return doc;
        }
    };
    let pages: Vec<u32> = pdf.get_pages().into_keys().collect();
    doc.pages_total = pages.len() as u32;
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
    let mut texts: Vec<String> = Vec::new();
    for number in pages {
        match pdf.extract_text(&[number]) {
            Ok(text) if !text.trim().is_empty() => texts.push(text.trim().to_string()),
            _ => doc.unreadable_pages.push(number),
        }
        doc.pages_read += 1;
        doc.text = (!texts.is_empty()).then(|| texts.join("\n\n"));
        progress(&doc);
    }
    doc.status = ReadingStatus::Finished;
    doc
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
        let doc = read_pdf(&pdf_reading("d1", "x.pdf"), b"%PDF-1.4 broken", |_| {});
        assert_eq!(doc.status, ReadingStatus::Failed);
    }
}
