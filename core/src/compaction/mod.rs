//! The compaction planner (rules C1–C12, B2): when a turn compacts, what the summary call reads,
//! which messages stay verbatim, and what is committed when the summary comes back.
//!
//! The planner is sans-IO: it decides, the host (the server's turn loop) makes the model calls.
//! One model call of the agent loop goes through a [`CallGuard`]:
//!
//! 1. [`CallGuard::before_call`] with the call's [`Projection`] (rule C1) answers
//!    [`Decision::Proceed`] or [`Decision::Compact`] with a [`CompactionPlan`].
//! 2. The host sends the plan's [`SummaryRequest`] to a separate instance of the turn's own model
//!    (rule C11) and hands the answer to [`CallGuard::on_summary`], which returns an [`Outcome`]:
//!    [`Outcome::Commit`] (the compaction block and the live message list), [`Outcome::Proceed`]
//!    (the summary failed before the call: logged, the call goes ahead, rule C5) or
//!    [`Outcome::FailTurn`].
//! 3. When the gateway reports a context overflow, [`CallGuard::on_overflow`] plans a compaction
//!    and the host retries the call (rule C2), or fails the turn with a typed [`CompactionError`].
//!
//! A guard compacts at most once per call attempt (the call and its overflow retry), so a history
//! that does not fit even after compaction ends in a clear error, never in a loop.
//!
//! `/compact [instructions]` (rules C6, C7) is parsed by [`parse_compact`], refused by
//! [`check_compact`], planned by [`plan`] with [`Cause::Command`] and settled by [`settle`]; the
//! turn ends without entering the agent loop.
//!
//! # The summary call (rule C11)
//!
//! The summary is written by a separate instance of the turn's own model, because the history
//! being summarised is close to that model's window and a background model may have a smaller
//! one. Both triggers use the same prompt; `/compact` instructions are appended to it. The call
//! leaves a usage row priced at the turn's model like any other call, but it carries no context
//! size: a turn's `context_tokens` is overwritten only by calls on the turn's own model for the
//! turn itself ([`record_context_size`]).

mod command;
pub mod extractive;
mod guard;
mod language;
pub(crate) mod locate;
mod note;
mod plan;
mod projection;
mod prompt;
mod screen;
mod settle;
mod summary_call;
mod tail;
mod text;
mod view;

pub use crate::usage::CallPurpose;
pub use command::{CompactCommand, CompactRefusal, check_compact, parse_compact};
pub use guard::{CallGuard, Decision};
pub use language::{language_sample, word_count};
pub use note::{SECTIONS, SUMMARY_NOTE, reference, strip_references, summary_note, turns_header};
pub use plan::{Cause, CompactionPlan, Diagnostic, PlanError, Tail, plan};
pub use projection::{Basis, Projection, project_input, reaches_threshold, record_context_size};
pub use prompt::SummaryRequest;
pub use screen::{
    ContextMeter, Divider, compact_pill, composer_refusal, context_in_use, context_meter, divider,
    summarising_clock,
};
pub use settle::{Commit, CompactionError, Outcome, SummaryFailure, settle};
pub use summary_call::{SummaryCall, SummaryReader};
pub use view::{MessagePosition, NewestCompaction, newest_compaction};

/// The compaction numbers, each a default from the product rules or a documented decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Compact before a call whose projected input reaches this share of the window (rule C1).
    pub threshold_percent: u32,
    /// Messages kept verbatim after the summary, before the shift of rule C4 (rule C3).
    pub kept_messages: usize,
    /// The user's latest paragraphs quoted as the language sample (rule C10).
    pub sample_paragraphs: usize,
    /// Paragraphs of fewer words are left out of the sample (rule C10).
    pub sample_min_words: usize,
    /// Each quoted paragraph is cut to this many characters. **Decision:** 400.
    pub sample_paragraph_chars: usize,
    /// The summary request may fill this share of the window; the rest is left for the summary.
    /// **Decision:** 75 %.
    pub summary_input_percent: u32,
    /// How much of each tool result and argument string the summary request shows, most detailed
    /// first; the planner takes the first level whose request fits the budget above.
    pub detail_levels: Vec<Detail>,
    /// The "Summarising conversation" divider shows a clock after this long (rule R11), in ms.
    pub clock_delay_ms: u64,
}

/// How much of the tool traffic the summary request shows, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// Each tool result is cut to this many characters; 0 leaves results out, keeping outcomes.
    pub result_chars: usize,
    /// Each string inside a call's arguments is cut to this many characters.
    pub argument_chars: usize,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            threshold_percent: 85,
            kept_messages: 4,
            sample_paragraphs: 8,
            sample_min_words: 3,
            sample_paragraph_chars: 400,
            summary_input_percent: 75,
            detail_levels: vec![
                Detail {
                    result_chars: 2_000,
                    argument_chars: 500,
                },
                Detail {
                    result_chars: 600,
                    argument_chars: 200,
                },
                Detail {
                    result_chars: 300,
                    argument_chars: 100,
                },
                Detail {
                    result_chars: 0,
                    argument_chars: 100,
                },
            ],
            clock_delay_ms: 3_000,
        }
    }
}
