//! Rule S1: leading `/slug` tokens select skills; `/compact` is a command, not a skill.

use std::collections::HashSet;

use serde::Serialize;

use crate::compaction::{CompactCommand, parse_compact};

/// The slug no skill may take, because `/compact` is the compaction command (rule C6).
pub const RESERVED_SLUG: &str = "compact";

/// What the composer's text asks for. Serialised tagged by `kind`:
/// `{ "kind": "message", "skills": […], "text": … }` or `{ "kind": "compact", "instructions": … }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Composed {
    /// `/compact [instructions]`, parsed by the compaction module.
    Compact(CompactCommand),
    /// A message, with the skills its leading slugs select.
    Message(Selection),
}

/// The skills a message selects and the text that follows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selection {
    /// Distinct slugs, in the order first written; serialised as `skills`, what they select.
    #[serde(rename = "skills")]
    pub slugs: Vec<String>,
    /// The message text after the slugs.
    pub text: String,
}

/// Parses the composer's text: `/compact` first, else a message with its leading slugs.
pub fn parse_command(text: &str) -> Composed {
    match parse_compact(text) {
        Some(command) => Composed::Compact(command),
        None => Composed::Message(parse_selection(text)),
    }
}

/// The leading `/slug` tokens of `text` (rule S1). Parsing stops at the first token that is not
/// a slug (or is the reserved `/compact`); the rest is the message text. Repeated slugs count
/// once. Whitespace before the first token is allowed.
pub fn parse_selection(text: &str) -> Selection {
    let mut rest = text.trim_start();
    let mut slugs = Vec::new();
    let mut seen = HashSet::new();
    while let Some(after) = rest.strip_prefix('/') {
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        let token = &after[..end];
        if !is_slug(token) || token == RESERVED_SLUG {
            break;
        }
        if seen.insert(token) {
            slugs.push(token.to_string());
        }
        rest = after[end..].trim_start();
    }
    Selection {
        slugs,
        text: rest.to_string(),
    }
}

/// Whether `token` is a slug: `[a-z0-9][a-z0-9-]*`.
pub fn is_slug(token: &str) -> bool {
    let mut chars = token.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}
