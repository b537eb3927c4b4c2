//! Rebuilding short-term memory for one model call: the window memory replays, each of its turns
//! replayed newest first, then the entries put in reading order and merged.

use serde::Serialize;

use crate::block::TurnsCovered;
use crate::model::ModelCapabilities;
use crate::prompt::entry::{Entry, Layer, Part};
use crate::transcript::{Role, Transcript};

use super::config::MemoryConfig;
use super::diagnostic::Diagnostic;
use super::replay::{Mode, Replayer};
use super::window::{self, CompactionHint};
use super::{merge, note};

/// Rebuilt memory: the entries of layers 6 and 7, in order. Serialised in camelCase (JavaScript's
/// `ShortTermMemory`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    pub entries: Vec<Entry>,
    /// The summary replayed first, if any.
    pub summary: Option<ReplayedSummary>,
    /// The past turns replayed, oldest first (1-based).
    pub turns: Vec<u32>,
    /// Whether any replayed message carries a document (so the document tools are offered).
    pub has_documents: bool,
    pub diagnostics: Vec<Diagnostic>,
}

/// The compaction whose summary memory replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReplayedSummary {
    /// The turn holding the compaction block (1-based).
    pub turn: u32,
    pub covers: TurnsCovered,
}

/// Rebuilds short-term memory for a call on `model`.
///
/// The turn in progress is the last turn when it is running or paused; every other turn is past.
pub fn rebuild(
    transcript: &Transcript,
    hint: CompactionHint,
    model: &ModelCapabilities,
    config: &MemoryConfig,
) -> Memory {
    let mut diagnostics = Vec::new();
    let window = window::window(transcript, hint, config, &mut diagnostics);
    let mut replayer = Replayer::new(config, model);

    let mut past: Vec<Vec<Entry>> = Vec::with_capacity(window.past.len());
    for (closest, span) in window.past.iter().enumerate() {
        let turn = &transcript.turns[span.turn];
        let mode = Mode::Past {
            distance: closest + 1,
        };
        past.push(replayer.turn(turn, *span, mode));
    }
    let live = window
        .live
        .map(|span| replayer.turn(&transcript.turns[span.turn], span, Mode::Live));
    diagnostics.append(&mut replayer.diagnostics);
    let has_documents = replayer.documents;

    let summary = window.compaction.map(|c| {
        let mut entry = Entry::new(Role::User, Layer::Memory);
        entry.parts.push(Part::Text {
            text: note::summary_note(c.covers, c.summary),
        });
        (
            entry,
            ReplayedSummary {
                turn: transcript.turns[c.turn].index,
                covers: c.covers,
            },
        )
    });
    let (summary_entry, summary) = summary.unzip();
    let entries = summary_entry
        .into_iter()
        .chain(past.into_iter().rev().flatten())
        .chain(live.into_iter().flatten());
    Memory {
        entries: merge::merge(entries),
        summary,
        turns: window
            .past
            .iter()
            .rev()
            .map(|span| transcript.turns[span.turn].index)
            .collect(),
        has_documents,
        diagnostics,
    }
}
