//! Short-term memory: the recent action log, rebuilt from the transcript on every model call
//! (rules M1–M13, and C3 on the memory side).
//!
//! [`rebuild`] turns a transcript into the provider-neutral entries of layers 5 and 6:
//!
//! - the newest compaction summary first, under [`crate::compaction::SUMMARY_NOTE`], then its kept tail and what
//!   came after it (rule C3);
//! - at most [`MemoryConfig::max_turns`] past turns after the summary (M2), each with its
//!   [`MemoryConfig::max_calls_per_turn`] most recent calls, an omitted earlier run replaced by
//!   one line (M3);
//! - past calls as calls and their results as answers in the next entry (M8), every call answered
//!   (M9): results cut to [`MemoryConfig::result_chars`] characters plus a [`crate::compaction::reference`] in the
//!   [`MemoryConfig::output_turns`] closest turns (M4, M5), only the outcome further back (M7);
//!   argument strings cut with the JSON kept valid (M6);
//! - what a cut-off turn wrote and the calls it ran (M10); thinking and pre-tool narration left
//!   out (M12); adjacent prose of one role merged, never into a tool's answer (M11);
//! - the turn in progress live and whole (M13), tagged [`Layer::NewMessage`].
//!
//! # Cost (rule M1)
//!
//! The rebuild works from the end of the transcript backwards and reads only the turns it
//! replays. Finding the newest compaction is the one step that could reach further: memory looks
//! for it in the window's own turns, and only when the window holds none does it follow the
//! host's [`CompactionHint`]. A host that tracks where its newest compaction is (it appends every
//! compaction itself) passes [`CompactionHint::NewestInTurn`] or [`CompactionHint::NoCompaction`]
//! and the cost stays bounded by the window; [`CompactionHint::Search`] looks back through the
//! older turns and is meant for small transcripts and tests.

pub(crate) mod cut;
pub mod explain;
mod merge;
mod note;
mod replay;
mod window;

pub use cut::ARGUMENT_CUT_MARKER;

use crate::attachment::AttachmentConfig;
use crate::block::TurnsCovered;
use crate::model::ModelCapabilities;
use crate::prompt::{Entry, Layer, Part};
use crate::transcript::{Role, Transcript};

use replay::{Mode, Replayer};
use serde::{Deserialize, Serialize};

/// The memory bounds, each a default from the product rules or a documented decision.
///
/// Hosts write it in camelCase (`{ maxTurns: 10 }`, JavaScript's `MemoryOptions`); a missing field
/// keeps its default and an unknown one is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Past turns replayed after the newest summary (rule M2).
    pub max_turns: usize,
    /// Calls replayed per past turn, the most recent holding their place (rule M3).
    pub max_calls_per_turn: usize,
    /// The closest past turns whose tool output is replayed (rule M4).
    pub output_turns: usize,
    /// Each replayed result is cut to this many characters (rule M5).
    pub result_chars: usize,
    /// Each string inside replayed call arguments is cut to this many characters (rule M6).
    pub argument_chars: usize,
    /// How earlier turns' attachments replay (rules A6–A8).
    pub attachments: AttachmentConfig,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            max_turns: 20,
            max_calls_per_turn: 8,
            output_turns: 3,
            result_chars: 300,
            argument_chars: 200,
            attachments: AttachmentConfig::default(),
        }
    }
}

/// What the host knows about the newest compaction beyond the replay window. Written `"search"`,
/// `"none"` or `{ "newestInTurn": n }`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CompactionHint {
    /// Nothing: look back through the whole transcript (cost grows with the distance back to the
    /// newest compaction, or with the transcript when there is none).
    #[default]
    Search,
    /// The transcript holds no compaction before the window.
    #[serde(rename = "none")]
    NoCompaction,
    /// The newest compaction is in this turn (1-based). Checked; a wrong hint falls back to
    /// [`CompactionHint::Search`] with a diagnostic.
    NewestInTurn(u32),
}

/// Rebuilt memory: the entries of layers 5 and 6, in order. Serialised in camelCase (JavaScript's
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

/// Something odd memory worked around. None of these stop the rebuild. Serialised tagged by
/// `kind`, in camelCase (`{ "kind": "hintMissed", "turn": 3 }`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Diagnostic {
    /// No hint was given and the newest compaction lay beyond the window: the rebuild read older
    /// turns to find it. Pass a [`CompactionHint`] to keep the cost bounded.
    #[error(
        "the newest compaction lies beyond the replay window, so older turns were read to find it; pass a compaction hint to keep the rebuild cheap"
    )]
    SearchedBeyondWindow,
    /// The hint named a turn that holds no compaction beyond the window.
    #[error(
        "the compaction hint names turn {turn}, which holds no compaction; the hint was ignored"
    )]
    HintMissed { turn: u32 },
    /// A compaction keeps more messages than come before it.
    #[error(
        "a compaction keeps {kept_messages} messages but {missing} of them are not in the transcript; the kept tail is shorter"
    )]
    KeptTailShort { kept_messages: u32, missing: usize },
    /// Tool results without their calls before them (a kept tail that opens on results, rule
    /// C4); left out.
    #[error(
        "message {message} of turn {turn} holds tool results whose calls come before the kept tail; they were left out"
    )]
    OrphanResults { turn: u32, message: usize },
    /// A picture in the turn in progress for a model that cannot see; replaced by words. The
    /// turn should have been refused before it was recorded (rule A5).
    #[error(
        "picture {attachment_id} is in the turn in progress but the model cannot see; it was replaced by words"
    )]
    PictureForBlindModel { attachment_id: String },
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
