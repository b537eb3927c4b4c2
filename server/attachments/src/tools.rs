//! The document tools (rule A3): `read_document` reads a document's text in pieces and
//! `search_attachments` finds the passages that match a query. Both read the documents the
//! conversation's transcript holds, each as its latest copy, so a document still being read is
//! searched as far as it is read.

use portal_core::Transcript;
use portal_core::attachment::{Attachment, Document, ReadingStatus};
use portal_core::tag::attribute;
use portal_core::tools::{Page, page};
use serde_json::Value;
use thiserror::Error;
use unicode_segmentation::UnicodeSegmentation;

/// The document tools' numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentToolConfig {
    /// `read_document` reads this many characters when no length is given. **Decision:** 4,000.
    pub piece_chars: usize,
    /// …and at most this many whatever the length asked. **Decision:** 16,000.
    pub max_piece_chars: usize,
    /// `search_attachments` returns this many passages when no limit is given (the tool's
    /// documented default, 8)…
    pub search_limit: usize,
    /// …and at most this many. **Decision:** 20.
    pub max_search_limit: usize,
    /// A passage is a paragraph, cut into windows of at most this many characters.
    /// **Decision:** 600.
    pub passage_chars: usize,
}

impl Default for DocumentToolConfig {
    fn default() -> Self {
        DocumentToolConfig {
            piece_chars: 4_000,
            max_piece_chars: 16_000,
            search_limit: 8,
            max_search_limit: 20,
            passage_chars: 600,
        }
    }
}

/// Why a document tool call was refused; its text is the error answer the model reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ToolError {
    #[error("{tool} needs {argument}; call it again with it")]
    Argument {
        tool: &'static str,
        argument: &'static str,
    },
    #[error(
        "there is no document `{id}` in this conversation; use an id from a document's manifest"
    )]
    NoDocument { id: String },
    #[error("the conversation has no documents to search")]
    NoDocuments,
}

/// The conversation's documents, each as its latest copy, in the order first attached.
pub fn documents(transcript: &Transcript) -> Vec<&Document> {
    let mut found: Vec<&Document> = Vec::new();
    let attached = transcript
        .turns
        .iter()
        .flat_map(|turn| &turn.messages)
        .flat_map(|message| &message.attachments);
    for attachment in attached {
        if let Attachment::Document(document) = attachment {
            match found.iter_mut().find(|d| d.id == document.id) {
                Some(slot) => *slot = document,
                None => found.push(document),
            }
        }
    }
    found
}

fn unsigned(arguments: &Value, key: &str) -> Option<Option<usize>> {
    match arguments.get(key) {
        None | Some(Value::Null) => Some(None),
        Some(value) => value.as_u64().map(|n| Some(n as usize)),
    }
}

/// Runs `read_document` (`document_id`, `offset`, `length`, in characters): the piece of text
/// with where it sits in the whole, and how to read on.
pub fn read_document(
    transcript: &Transcript,
    arguments: &Value,
    config: &DocumentToolConfig,
) -> Result<String, ToolError> {
    const TOOL: &str = "read_document";
    let id = arguments
        .get("document_id")
        .and_then(Value::as_str)
        .ok_or(ToolError::Argument {
            tool: TOOL,
            argument: "`document_id`, the id from a document's manifest",
        })?;
    let offset = unsigned(arguments, "offset")
        .ok_or(ToolError::Argument {
            tool: TOOL,
            argument: "`offset` as a whole number of characters",
        })?
        .unwrap_or(0);
    let length = unsigned(arguments, "length")
        .ok_or(ToolError::Argument {
            tool: TOOL,
            argument: "`length` as a whole number of characters",
        })?
        .unwrap_or(config.piece_chars)
        .clamp(1, config.max_piece_chars);
    let document = documents(transcript)
        .into_iter()
        .find(|d| d.id == id)
        .ok_or_else(|| ToolError::NoDocument { id: id.to_string() })?;
    let text = document.text.as_deref().unwrap_or("");
    let Page {
        text: piece,
        next_offset: end,
        remaining,
    } = page(text, offset, length);
    let total = end + remaining;
    let start = offset.min(total);
    let mut out = format!(
        "<document id=\"{}\" name=\"{}\" characters=\"{start}–{end} of {total}\">\n{piece}\n</document>",
        attribute(&document.id),
        attribute(&document.filename)
    );
    let still_reading = document.status == ReadingStatus::Reading;
    if end < total {
        out.push_str(&format!("\nMore follows: read on with offset {end}."));
    } else if still_reading {
        out.push_str(&format!(
            "\nThis is all that is read so far ({} of {} pages); the document is still being read.",
            document.pages_read, document.pages_total
        ));
    } else if total == 0 {
        out.push_str("\nThe document has no text.");
    } else {
        out.push_str("\nThis is the end of the document.");
    }
    Ok(out)
}

/// Runs `search_attachments` (`query`, `document_ids`, `limit`): the passages with the most
/// query words (case-insensitive), best first, ties in document order, each with its document id
/// and character offset for `read_document`.
pub fn search_attachments(
    transcript: &Transcript,
    arguments: &Value,
    config: &DocumentToolConfig,
) -> Result<String, ToolError> {
    const TOOL: &str = "search_attachments";
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty())
        .ok_or(ToolError::Argument {
            tool: TOOL,
            argument: "`query`, the words to look for",
        })?;
    let limit = unsigned(arguments, "limit")
        .ok_or(ToolError::Argument {
            tool: TOOL,
            argument: "`limit` as a whole number",
        })?
        .unwrap_or(config.search_limit)
        .clamp(1, config.max_search_limit);
    let all = documents(transcript);
    if all.is_empty() {
        return Err(ToolError::NoDocuments);
    }
    let chosen: Vec<&Document> = match arguments.get("document_ids").and_then(Value::as_array) {
        Some(ids) => {
            let mut chosen = Vec::new();
            for id in ids {
                let id = id.as_str().ok_or(ToolError::Argument {
                    tool: TOOL,
                    argument: "`document_ids` as a list of ids",
                })?;
                let document = all
                    .iter()
                    .find(|d| d.id == id)
                    .ok_or_else(|| ToolError::NoDocument { id: id.to_string() })?;
                chosen.push(*document);
            }
            chosen
        }
        None => all,
    };
    let terms = words(query);
    let mut hits: Vec<(usize, usize, &Document, usize, String)> = Vec::new();
    let mut order = 0;
    for document in chosen {
        for (offset, passage) in passages(document.text.as_deref().unwrap_or(""), config) {
            let found = words(&passage);
            let distinct = terms.iter().filter(|t| found.contains(t)).count();
            let total = terms
                .iter()
                .map(|t| found.iter().filter(|w| *w == t).count())
                .sum::<usize>();
            if distinct > 0 {
                hits.push((distinct * 1_000 + total, order, document, offset, passage));
            }
            order += 1;
        }
    }
    if hits.is_empty() {
        return Ok(format!(
            "No passage matches `{query}`. Try other words, or read a document with read_document."
        ));
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let shown: Vec<String> = hits
        .into_iter()
        .take(limit)
        .map(|(_, _, document, offset, passage)| {
            format!(
                "<passage document=\"{}\" name=\"{}\" offset=\"{offset}\">\n{passage}\n</passage>",
                attribute(&document.id),
                attribute(&document.filename)
            )
        })
        .collect();
    Ok(shown.join("\n"))
}

/// Lowercase words of `text` (UAX #29 words with a letter or digit).
fn words(text: &str) -> Vec<String> {
    text.unicode_words().map(str::to_lowercase).collect()
}

/// The passages of `text` with their character offsets: paragraphs (split at blank lines), each
/// cut into windows of at most `passage_chars` characters.
fn passages(text: &str, config: &DocumentToolConfig) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut start = 0;
    let size = config.passage_chars.max(1);
    let flush = |paragraph: &mut Vec<&str>, start: usize, out: &mut Vec<(usize, String)>| {
        for (i, window) in paragraph.chunks(size).enumerate() {
            let passage = window.concat();
            if !passage.trim().is_empty() {
                out.push((start + i * size, passage.trim().to_string()));
            }
        }
        paragraph.clear();
    };
    let clusters: Vec<&str> = text.graphemes(true).collect();
    let mut i = 0;
    while i < clusters.len() {
        let blank_line = clusters[i] == "\n" && clusters.get(i + 1) == Some(&"\n");
        if blank_line {
            flush(&mut paragraph, start, &mut out);
            while i < clusters.len() && clusters[i] == "\n" {
                i += 1;
            }
            start = i;
            continue;
        }
        paragraph.push(clusters[i]);
        i += 1;
    }
    flush(&mut paragraph, start, &mut out);
    out
}
