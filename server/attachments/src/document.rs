//! Reading a document's text: plain text and markdown at once, and a PDF's record before its
//! pages are read (`super::pdf`) (rule A2).

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
        stopped_by: None,
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
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    }
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
}
