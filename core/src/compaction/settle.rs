//! Settling a planned compaction once its summary call has answered (rules C3, C5, B2).

use thiserror::Error;

use super::note::{normalise_summary, summary_note};
use super::plan::{Cause, CompactionPlan};
use super::view::{conversation, flat_len};
use crate::block::Block;
use crate::tokens::{TokenCounter, messages_tokens};
use crate::transcript::{Message, Role, TraceEntry, Transcript};

/// Why a summary call produced no summary.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SummaryFailure {
    #[error("the model answered the summary call with no summary")]
    Empty,
    #[error("the summary call failed: {0}")]
    Error(String),
    #[error("the summary call's stream was cut off before it finished")]
    CutOff,
}

/// A compaction that failed the turn.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CompactionError {
    #[error(
        "the conversation no longer fits the model's context window and summarising it failed ({failure}); nothing was lost: send the message again, or start a new conversation"
    )]
    SummaryFailedAfterOverflow { failure: SummaryFailure },
    #[error(
        "the summary could not be written ({failure}); nothing was changed: send /compact again"
    )]
    CommandFailed { failure: SummaryFailure },
    #[error(
        "the latest messages, kept verbatim, take about {tokens} tokens and do not fit the model's context window of {window} tokens even after compaction; send a shorter message or fewer attachments, or choose a model with a larger window"
    )]
    TailTooLarge { tokens: u64, window: u64 },
}

/// A compaction that succeeded: what the host records and what the call reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// The compaction block (rule B2). It opens the assistant message of the call it was made
    /// for; for `/compact` it is that turn's whole assistant message.
    pub block: Block,
    /// What the call reads after compaction (rule C3): the summary under its note, then the kept
    /// messages verbatim (compaction blocks left out).
    pub live_messages: Vec<Message>,
    /// The calls at the end of the live list that are still running; the host answers them, as
    /// always, before the model call.
    pub still_running: Vec<String>,
    /// The estimated tokens of the live list.
    pub live_tokens: usize,
}

/// What the host does after a summary call.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Record the block and make the call on the live list.
    Commit(Box<Commit>),
    /// The summary failed before a call: record the trace entry and make the call without
    /// compaction (rule C5).
    Proceed { trace: TraceEntry },
    /// Record the trace entry and fail the turn with the error (rule C5). Nothing in the
    /// transcript is lost or rewritten.
    FailTurn {
        error: CompactionError,
        trace: TraceEntry,
    },
}

/// Settles `plan` with the summary call's answer against the transcript as it is now (it may
/// have grown since the plan, e.g. by the results of a call that was still running).
pub fn settle(
    plan: &CompactionPlan,
    answer: Result<String, SummaryFailure>,
    transcript: &Transcript,
    counter: &dyn TokenCounter,
) -> Outcome {
    match commit(plan, answer, transcript, counter) {
        Ok(commit) => Outcome::Commit(Box::new(commit)),
        Err(failure) => on_failure(plan.cause, failure),
    }
}

/// The outcome of a summary that failed, by what caused the compaction (rule C5).
pub(crate) fn on_failure(cause: Cause, failure: SummaryFailure) -> Outcome {
    let trace = TraceEntry::CompactionFailed {
        reason: failure.to_string(),
    };
    match cause {
        Cause::Threshold { .. } => Outcome::Proceed { trace },
        Cause::Overflow => Outcome::FailTurn {
            error: CompactionError::SummaryFailedAfterOverflow { failure },
            trace,
        },
        Cause::Command => Outcome::FailTurn {
            error: CompactionError::CommandFailed { failure },
            trace,
        },
    }
}

/// The commit for a summary, or why there is none.
pub(crate) fn commit(
    plan: &CompactionPlan,
    answer: Result<String, SummaryFailure>,
    transcript: &Transcript,
    counter: &dyn TokenCounter,
) -> Result<Commit, SummaryFailure> {
    let summary = normalise_summary(&answer?, plan.covers).ok_or(SummaryFailure::Empty)?;
    let (kept_messages, tail) = match (plan.cause, plan.tail.start) {
        (Cause::Command, _) | (_, None) => (0, Vec::new()),
        _ => {
            let total = flat_len(transcript);
            let kept = total.saturating_sub(plan.tail.flat_start);
            let tail = conversation(transcript, plan.tail.flat_start)
                .map(|e| e.live_message())
                .collect();
            (u32::try_from(kept).unwrap_or(u32::MAX), tail)
        }
    };
    let mut live_messages = vec![Message::new(
        Role::User,
        vec![Block::text(summary_note(plan.covers, &summary))],
    )];
    live_messages.extend(tail);
    let live_tokens = messages_tokens(counter, &live_messages);
    Ok(Commit {
        block: Block::Compaction {
            summary,
            trigger: plan.cause.trigger(),
            covers: plan.covers,
            kept_messages,
        },
        still_running: still_running(&live_messages),
        live_messages,
        live_tokens,
    })
}

/// Calls in the live list's last assistant message that no following message answers.
fn still_running(messages: &[Message]) -> Vec<String> {
    let Some(at) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return Vec::new();
    };
    let answered: Vec<&str> = messages
        .get(at + 1)
        .map(|m| {
            m.blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolResult { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    messages[at]
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } if !answered.contains(&id.as_str()) => Some(id.clone()),
            _ => None,
        })
        .collect()
}
