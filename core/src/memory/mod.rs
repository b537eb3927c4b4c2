//! Short-term memory: the recent action log, rebuilt from the transcript on every model call
//! (rules M1–M13, and C3 on the memory side).
//!
//! [`rebuild`] turns a transcript into the provider-neutral entries of layers 6 and 7:
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
//! - the turn in progress live and whole (M13), tagged [`Layer::NewMessage`](crate::prompt::Layer::NewMessage).
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

mod config;
pub(crate) mod cut;
mod diagnostic;
pub mod explain;
mod merge;
mod note;
mod rebuild;
mod replay;
mod window;

pub use config::MemoryConfig;
pub use cut::ARGUMENT_CUT_MARKER;
pub use diagnostic::Diagnostic;
pub use rebuild::{Memory, ReplayedSummary, rebuild};
pub use window::CompactionHint;
