//! Projected input (rule C1) and who may set a turn's context size (rule C11).

use super::CompactionConfig;
use super::view::{flat, newest_compaction};
use crate::tokens::{TokenCounter, message_tokens};
use crate::transcript::{Role, Transcript, Turn, TurnKind};
use crate::usage::CallPurpose;

/// The projected input of the next model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Projection {
    pub tokens: u64,
    pub basis: Basis,
}

/// What a projection stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The provider's reported input tokens of the previous call plus an estimate of what was
    /// added since.
    Reported { reported: u64, added: u64 },
    /// A full estimate: there is no previous call, or a compaction happened after it.
    Estimated,
}

/// Projects the input of the next call on the turn's model (rule C1).
///
/// The previous call is the newest turn's with a context size (`context_tokens`, the input of its
/// latest call on the turn's own model). What was added since is estimated from that turn's last
/// assistant message (the call's output) to the end of the transcript. When no turn has a context
/// size, or a compaction happened after the previous call (so its report describes a message list
/// that no longer exists), the projection is `full_estimate()`: the host's estimate of the whole
/// prompt the call would read.
pub fn project_input(
    transcript: &Transcript,
    counter: &dyn TokenCounter,
    full_estimate: impl FnOnce() -> u64,
) -> Projection {
    match reported_since(transcript, counter) {
        Some((reported, added)) => Projection {
            tokens: reported.saturating_add(added),
            basis: Basis::Reported { reported, added },
        },
        None => Projection {
            tokens: full_estimate(),
            basis: Basis::Estimated,
        },
    }
}

/// Whether `projected` tokens reach the compaction threshold of a `window`-token context
/// (rule C1). A window of 0 (unknown) never does.
pub fn reaches_threshold(projected: u64, window: u64, config: &CompactionConfig) -> bool {
    window > 0
        && u128::from(projected) * 100 >= u128::from(window) * u128::from(config.threshold_percent)
}

/// Records a call's reported input tokens as the turn's context size, which only calls of the
/// agent loop on the turn's own model do; summary, review and compaction calls carry none
/// (rule C11). Returns whether the context size was overwritten.
pub fn record_context_size(turn: &mut Turn, purpose: CallPurpose, input_tokens: u64) -> bool {
    if purpose != CallPurpose::Turn || turn.kind != TurnKind::Chat {
        return false;
    }
    turn.context_tokens = Some(input_tokens);
    true
}

fn reported_since(transcript: &Transcript, counter: &dyn TokenCounter) -> Option<(u64, u64)> {
    let at = transcript
        .turns
        .iter()
        .rposition(|t| t.context_tokens.is_some())?;
    let turn = &transcript.turns[at];
    let reported = turn.context_tokens?;
    if let Some(newest) = newest_compaction(transcript) {
        let in_turn = newest.position.turn == turn.index;
        let after_turn = newest.position.turn > turn.index;
        // A compaction in the previous call's own turn is behind that call only if its message
        // holds the call's output; a compaction message holding nothing else means the call
        // after it never answered, so the report is from before the compaction.
        let report_is_older = in_turn
            && turn
                .messages
                .get(newest.position.message)
                .is_some_and(|m| m.blocks.len() == 1);
        if after_turn || report_is_older {
            return None;
        }
    }
    let turn_start: usize = transcript.turns[..at]
        .iter()
        .map(|t| t.messages.len())
        .sum();
    let from = turn_start
        + turn
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .unwrap_or(0);
    let added: usize = flat(transcript)
        .skip(from)
        .filter(|e| e.turn.kind == TurnKind::Chat)
        .map(|e| message_tokens(counter, &e.live_message()))
        .sum();
    Some((reported, added as u64))
}
