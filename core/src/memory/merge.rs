//! Rule M11: two adjacent prose entries never share a role, and an entry carrying a tool's
//! answer is never merged into.

use crate::prompt::entry::Entry;
use crate::transcript::Role;

/// The entries with empty ones dropped and adjacent entries of one role merged. An entry merges
/// into the one before it unless that one answers calls (a tool entry) or makes calls (its
/// answers must come next). A merged entry takes the later layer, the one the model answers.
pub(crate) fn merge(entries: impl IntoIterator<Item = Entry>) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for entry in entries {
        if entry.parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if mergeable(last, &entry) => {
                last.layer = last.layer.max(entry.layer);
                last.parts.extend(entry.parts);
            }
            _ => out.push(entry),
        }
    }
    out
}

fn mergeable(last: &Entry, next: &Entry) -> bool {
    last.role == next.role && last.role != Role::Tool && !last.has_calls()
}
