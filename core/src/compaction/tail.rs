//! The kept tail (rules C3, C4): the last messages kept verbatim after the summary.
//!
//! Messages are grouped into units: an assistant message that makes calls together with the tool
//! message right after it, or any other single message. The tail is made of whole units:
//!
//! - It starts as the last `kept_messages` messages. When that start falls on a tool message, the
//!   start moves one message earlier to take the assistant message with the calls, so the tail
//!   never opens on a tool result and the newest results stay verbatim (the tail grows by one).
//! - A unit whose calls did not all get a result (a call that never returned, or a result whose
//!   call is missing) cannot be sent verbatim: model APIs refuse an unanswered call. The start
//!   moves later, past the newest such unit in the tail, and the summary records those calls as
//!   never returned. So the tail never opens on a call without its result, and never holds one.
//! - The exception is the very last unit of a turn still running: its calls are still running,
//!   the host answers them before the model call, and they stay in the tail.

use super::view::Entry;
use crate::transcript::Role;

/// Whether a unit's calls are all answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitState {
    /// No calls, or every call answered.
    Whole,
    /// The last unit of a running turn, with calls still running.
    Running,
    /// A call that never returned, or a result without its call.
    Broken,
}

/// A run of entries that must stay together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    pub start: usize,
    pub end: usize,
    pub state: UnitState,
    /// Calls without a result in the unit.
    pub unanswered: Vec<String>,
}

/// Groups entries into units.
pub(crate) fn units(entries: &[Entry<'_>]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        let entry = &entries[i];
        let calls = entry.call_ids();
        let answers = entries.get(i + 1).filter(|next| {
            !calls.is_empty()
                && next.role() == Role::Tool
                && next.flat == entry.flat + 1
                && std::ptr::eq(next.turn, entry.turn)
        });
        let end = if answers.is_some() { i + 2 } else { i + 1 };
        let results = match (entry.role(), answers) {
            (Role::Tool, _) => entry.result_ids(),
            (_, Some(next)) => next.result_ids(),
            (_, None) => Vec::new(),
        };
        let orphan = entry.role() == Role::Tool || results.iter().any(|r| !calls.contains(r));
        let unanswered: Vec<String> = calls
            .iter()
            .filter(|c| !results.contains(c))
            .map(|c| c.to_string())
            .collect();
        let last = end == entries.len();
        let state = if orphan {
            UnitState::Broken
        } else if unanswered.is_empty() {
            UnitState::Whole
        } else if last && entry.turn.status.is_open() {
            UnitState::Running
        } else {
            UnitState::Broken
        };
        units.push(Unit {
            start: i,
            end,
            state,
            unanswered,
        });
        i = end;
    }
    units
}

/// Where the tail starts, and how it was shifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TailChoice {
    /// Index of the tail's first entry; the entries before it are summarised.
    pub start: usize,
    /// Calls whose assistant message was taken in so the tail does not open on their results.
    pub shifted_earlier: Vec<String>,
    /// Calls that never returned, left to the summary.
    pub shifted_later: Vec<String>,
}

/// Chooses the tail of `kept` messages over `entries` grouped into `units`.
pub(crate) fn choose(entries: &[Entry<'_>], units: &[Unit], kept: usize) -> TailChoice {
    let len = entries.len();
    let mut choice = TailChoice {
        start: len,
        shifted_earlier: Vec::new(),
        shifted_later: Vec::new(),
    };
    if kept == 0 {
        return choice;
    }
    let naive = len.saturating_sub(kept);
    if let Some(unit) = units.iter().find(|u| u.end > naive) {
        choice.start = unit.start;
        if unit.start < naive {
            choice.shifted_earlier = entries[unit.start]
                .call_ids()
                .into_iter()
                .map(String::from)
                .collect();
        }
    }
    let broken: Vec<&Unit> = units
        .iter()
        .filter(|u| u.start >= choice.start && u.state == UnitState::Broken)
        .collect();
    if let Some(last) = broken.last() {
        choice.start = last.end;
        choice.shifted_later = broken
            .iter()
            .flat_map(|u| u.unanswered.iter().cloned())
            .collect();
    }
    choice
}
