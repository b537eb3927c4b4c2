//! The composer's `/skill` autocomplete: which skills to offer while a person types a leading
//! `/slug`, and the text once one is picked (rule S1).

use std::collections::HashSet;

use super::CatalogueEntry;
use super::command::{RESERVED_SLUG, is_slug};

/// The skills to offer for the slug being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Byte offset of the typed token's `/`.
    pub start: usize,
    /// Byte offset just past the typed token (the cursor).
    pub end: usize,
    /// The selectable skills whose names start with what is typed, in the order given, leaving
    /// out those the message already selects.
    pub matches: Vec<CatalogueEntry>,
}

impl Completion {
    /// The text with the typed token replaced by `/name` and a space, and the cursor after it.
    pub fn accept(&self, text: &str, name: &str) -> (String, usize) {
        let rest = text[self.end..].trim_start();
        let mut accepted = format!("{}/{name} ", &text[..self.start]);
        let cursor = accepted.len();
        accepted.push_str(rest);
        (accepted, cursor)
    }
}

/// What the completion says of `/compact`, offered first while the message's first token is
/// part of it, so the command can be found where skills are (rule C6).
pub const COMPACT_DESCRIPTION: &str =
    "Summarise the conversation so far to free the model's context; add what to keep after it.";

/// What to offer when the cursor, at byte `cursor` of `text`, ends a token that starts with `/`
/// among the message's leading slugs: the `/compact` command as the first token, then the
/// skills. `None` anywhere else, and when nothing matches: a slug after the message text selects
/// nothing, so nothing is offered there.
pub fn complete(text: &str, cursor: usize, selectable: &[CatalogueEntry]) -> Option<Completion> {
    let before = text.get(..cursor)?;
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(at, c)| at + c.len_utf8());
    let typed = before[start..].strip_prefix('/')?;
    if !typed.is_empty() && !is_slug(typed) {
        return None;
    }
    let mut selected = HashSet::new();
    for token in before[..start].split_whitespace() {
        let slug = token
            .strip_prefix('/')
            .filter(|s| is_slug(s) && *s != RESERVED_SLUG)?;
        selected.insert(slug);
    }
    // Typed whole, `/compact` is a message of its own: Enter sends it.
    let command = (before[..start].trim().is_empty()
        && RESERVED_SLUG.starts_with(typed)
        && typed != RESERVED_SLUG)
        .then(|| CatalogueEntry {
            name: RESERVED_SLUG.to_string(),
            description: COMPACT_DESCRIPTION.to_string(),
        });
    let matches: Vec<CatalogueEntry> = command
        .into_iter()
        .chain(
            selectable
                .iter()
                .filter(|s| s.name.starts_with(typed) && !selected.contains(s.name.as_str()))
                .cloned(),
        )
        .collect();
    (!matches.is_empty()).then_some(Completion {
        start,
        end: cursor,
        matches,
    })
}
