//! The demo and knowledge (docs/knowledge.md): offered `search_knowledge`, the demo searches
//! with the person's message before it answers, and its answer opens with the passage that
//! matched best, quoted with its document and its reference.

use portal_core::prompt::Answer;

use super::attached::attribute;
use super::quote::opening;

/// The most of a passage the demo quotes, in characters.
const PASSAGE_QUOTE_CHARS: usize = 200;

/// The most of a message searched for, in characters.
const QUERY_CHARS: usize = 200;

/// The arguments of the demo's `search_knowledge` call for `message`.
pub fn search(message: &str) -> serde_json::Value {
    serde_json::json!({ "query": opening(message, QUERY_CHARS).text })
}

/// What the demo says of a `search_knowledge` answer: the best passage quoted with its document
/// and reference, or `None` when the answer holds no passage (it is not that tool's).
pub fn note(answer: &Answer) -> Option<String> {
    let start = answer.content.find("<passage reference=\"knowledge:")?;
    let rest = &answer.content[start..];
    let tag_end = rest.find(">\n")?;
    let tag = &rest[..tag_end];
    let reference = attribute(tag, "reference")?;
    let document = attribute(tag, "document")?;
    let body = &rest[tag_end + 2..];
    let body = &body[..body.find("\n</passage>").unwrap_or(body.len())];
    let page = attribute(tag, "page")
        .map(|p| format!(", page {p}"))
        .unwrap_or_default();
    // A passage's lines (a heading, then its paragraph) are quoted as one line.
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let quote = opening(&body, PASSAGE_QUOTE_CHARS).quoted()?;
    Some(format!(
        "I searched the organisation's documents. “{document}”{page} says: {quote} [{reference}]"
    ))
}
