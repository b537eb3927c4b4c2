//! The `/compact [instructions]` command (rules C6, C7).
//!
//! `/compact` is recognised only as the first word of a message, so no skill can be called
//! `compact`. What follows it (trimmed) is the instructions for the summary.

use serde::Serialize;
use thiserror::Error;

use super::view::newest_compaction;
use crate::attachment::Attachment;
use crate::transcript::{Transcript, TurnKind, TurnStatus};

/// The command word.
pub const COMMAND: &str = "/compact";

/// A parsed `/compact` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactCommand {
    /// What the user asked the summary to do, if anything.
    pub instructions: Option<String>,
}

/// Parses a message that opens with `/compact`; `None` for any other message.
pub fn parse_compact(text: &str) -> Option<CompactCommand> {
    let text = text.trim_start();
    let rest = text.strip_prefix(COMMAND)?;
    if rest.chars().next().is_some_and(|c| !c.is_whitespace()) {
        return None;
    }
    let instructions = rest.trim();
    Some(CompactCommand {
        instructions: (!instructions.is_empty()).then(|| instructions.to_string()),
    })
}

/// Why `/compact` was refused (rule C7). Checked before anything is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CompactRefusal {
    #[error(
        "/compact cannot run while the latest turn is running; wait for it to finish or stop it, then send /compact again"
    )]
    TurnRunning,
    #[error(
        "/compact cannot run while the latest turn waits for your answer; answer its question or approval (or stop it), then send /compact again"
    )]
    TurnPaused,
    #[error(
        "nothing has been written since the last compaction, so there is nothing new to summarise; carry on the conversation and compact later"
    )]
    NothingSinceLastCompaction,
    #[error("the conversation is empty, so there is nothing to summarise")]
    EmptyConversation,
    #[error(
        "/compact cannot carry attachments; send the attachments in a message of their own, then /compact alone"
    )]
    Attachments,
}

/// Checks whether `/compact` may open a turn now: not while the latest turn is running or
/// paused, not when nothing was written since the last compaction, not with attachments.
pub fn check_compact(
    transcript: &Transcript,
    attachments: &[Attachment],
) -> Result<(), CompactRefusal> {
    if !attachments.is_empty() {
        return Err(CompactRefusal::Attachments);
    }
    if let Some(latest) = transcript.turns.last() {
        match latest.status {
            TurnStatus::Running => return Err(CompactRefusal::TurnRunning),
            TurnStatus::Paused => return Err(CompactRefusal::TurnPaused),
            _ => {}
        }
    }
    if !transcript.turns.iter().any(|t| t.kind == TurnKind::Chat) {
        return Err(CompactRefusal::EmptyConversation);
    }
    match newest_compaction(transcript) {
        Some(newest) if !newest.written_since => Err(CompactRefusal::NothingSinceLastCompaction),
        _ => Ok(()),
    }
}
