//! The demo and knowledge (docs/knowledge.md): offered `search_knowledge`, the demo searches
//! with the person's message before it answers, and its answer opens with the passage that
//! matched best, quoted with its document and cited by its reference.

use portal_core::prompt::Answer;
use portal_core::sources;

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
/// and cited, or `None` when the answer quotes no passage (it is not that tool's).
pub fn note(answer: &Answer) -> Option<String> {
    let best = sources::read(&answer.content).into_iter().next()?;
    let page = best.page.map(|p| format!(", page {p}")).unwrap_or_default();
    // A passage's lines (a heading, then its paragraph) are quoted as one line.
    let text = best.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let quote = opening(&text, PASSAGE_QUOTE_CHARS).quoted()?;
    Some(format!(
        "I searched the organisation's documents. “{}”{page} says: {quote} [{}]",
        best.document, best.reference
    ))
}
