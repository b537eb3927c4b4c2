//! The words memory adds to what it replays: result references, the line for omitted calls and
//! the answers to calls that never returned. The summary note and the reference format are the
//! compaction module's, so that the summary prompt names them as memory writes them (rule C9).

pub(crate) use crate::compaction::{reference, summary_note};

/// A result cut to its first characters, ending in its reference (rule M5).
pub(crate) fn cut_result(kept: &str, call_id: &str) -> String {
    format!(
        "{kept}… (cut; the whole result: read_tool_result {})",
        reference(call_id)
    )
}

/// The outcome line an older turn keeps of a result (rule M7).
pub(crate) fn outcome(is_error: bool, call_id: &str) -> String {
    let outcome = if is_error { "error" } else { "ok" };
    format!("{outcome} {}", reference(call_id))
}

/// What a user message with no text and no attachments replays as, since providers refuse
/// empty messages and the model should know the user sent something.
pub(crate) const EMPTY_MESSAGE: &str = "[The user sent an empty message.]";

/// The content of an empty result, since providers refuse empty content.
pub(crate) const EMPTY_RESULT: &str = "(empty result)";

/// The line that stands for a turn's earlier calls left out of memory (rule M3).
pub(crate) fn omitted_calls(count: usize) -> String {
    let calls = if count == 1 { "call" } else { "calls" };
    format!("[{count} earlier tool {calls} of this turn omitted.]")
}

/// Why a replayed call has no result of its own (rule M9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unanswered {
    /// A past turn stopped before the call returned.
    NeverReturned,
    /// A past turn stopped while the call waited for approval.
    NotApproved,
    /// The turn in progress has not had the result yet.
    Pending,
    /// The turn in progress waits for the user to approve the call.
    AwaitingApproval,
}

impl Unanswered {
    pub(crate) fn answer(self) -> &'static str {
        match self {
            Unanswered::NeverReturned => {
                "No result: this call never returned (the turn stopped before it finished)."
            }
            Unanswered::NotApproved => {
                "Not run: this call was waiting for approval when the turn stopped."
            }
            Unanswered::Pending => "No result yet: this call has not returned.",
            Unanswered::AwaitingApproval => "Not run yet: this call is waiting for approval.",
        }
    }
}
