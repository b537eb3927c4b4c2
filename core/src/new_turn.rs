//! Opening a turn for the message a person sends: the checks every host makes before anything
//! of the turn is recorded (rules A5, B3, C6, C7, E2).

use serde::Deserialize;
use thiserror::Error;

use crate::Block;
use crate::attachment::{Attachment, AttachmentError, check_can_see};
use crate::compaction::{CompactRefusal, check_compact, parse_compact};
use crate::effort::Effort;
use crate::model::ModelCapabilities;
use crate::transcript::{Message, Role, TraceEntry, Transcript, Turn, TurnKind, TurnStatus};
use crate::validate::{TranscriptError, validate};

/// The message a person sends, before it is recorded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    /// The message as typed, `/slug` tokens included.
    pub text: String,
    #[serde(default)]
    pub attachments: Vec<Attachment>,
    /// The turn whose message this one answers again: the latest turn, a chat turn (Regenerate,
    /// or the latest message edited). The page shows them as versions of one turn.
    #[serde(default)]
    pub again: Option<u32>,
}

/// Why a message cannot open a turn. The transcript is left as it was.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NewTurnError {
    /// The last turn is still running or paused; its first message is the one being answered.
    #[error(
        "turn {turn} is still {}; wait for it to end, answer it or cancel it before sending another message",
        if *.paused { "paused" } else { "running" }
    )]
    TurnInProgress { turn: u32, paused: bool },
    /// Rule A5: a picture for a model that cannot see.
    #[error(transparent)]
    Attachment(#[from] AttachmentError),
    /// Rule C7: `/compact` refused (a turn running or paused, nothing new since the last
    /// compaction, attachments, an empty conversation).
    #[error(transparent)]
    Compact(#[from] CompactRefusal),
    /// The transcript with the new turn breaks an invariant.
    #[error(transparent)]
    Invalid(#[from] TranscriptError),
    /// Only the latest turn, a chat turn, can be answered again, by a chat message.
    #[error(
        "turn {turn} cannot be answered again: only the latest chat turn can be; send the message \
         as a new one"
    )]
    NotLatest { turn: u32 },
}

/// Appends a running turn holding `message`, recording `effort` on it (rule E2), and returns
/// its 1-based index. A message opening with `/compact` opens a `/compact` turn (rule C6), once
/// rule C7's refusals are checked. Nothing is appended when an error is returned.
pub fn open_turn(
    transcript: &mut Transcript,
    message: NewMessage,
    effort: Effort,
    model: &ModelCapabilities,
) -> Result<u32, NewTurnError> {
    let kind = if parse_compact(&message.text).is_some() {
        check_compact(transcript, &message.attachments)?;
        TurnKind::Compact
    } else {
        TurnKind::Chat
    };
    if let Some(turn) = transcript.turns.last().filter(|t| t.status.is_open()) {
        return Err(NewTurnError::TurnInProgress {
            turn: turn.index,
            paused: turn.status == TurnStatus::Paused,
        });
    }
    check_can_see(&message.attachments, model)?;
    if let Some(turn) = message.again {
        let latest_chat = transcript
            .turns
            .last()
            .is_some_and(|t| t.index == turn && t.kind == TurnKind::Chat);
        if kind != TurnKind::Chat || !latest_chat {
            return Err(NewTurnError::NotLatest { turn });
        }
    }
    let index = transcript.turns.len() as u32 + 1;
    transcript.turns.push(Turn {
        index,
        kind,
        status: TurnStatus::Running,
        effort: Some(effort),
        context_tokens: None,
        trace: message
            .again
            .map(|turn| TraceEntry::AnswersAgain { turn })
            .into_iter()
            .collect(),
        messages: vec![Message {
            role: Role::User,
            blocks: vec![Block::text(message.text)],
            attachments: message.attachments,
        }],
    });
    if let Err(error) = validate(transcript) {
        transcript.turns.pop();
        return Err(error.into());
    }
    Ok(index)
}
