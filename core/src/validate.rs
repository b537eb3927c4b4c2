//! The six block invariants (rules B3, B4), enforced in this one place.
//!
//! 1. [`Invariant::TerminalText`]: only a text block may be terminal. A completed turn ends on a
//!    text block; a completed `/compact` turn ends on its compaction block, since it has no answer.
//! 2. [`Invariant::CallsAnswered`]: every tool use is answered exactly once in the next message.
//!    Only the last calls of a turn that did not complete may be left unanswered (a call that
//!    never returned); memory answers those itself (rule M9).
//! 3. [`Invariant::ResultHasCall`]: no tool result without its call in the previous message.
//! 4. [`Invariant::UniqueCallIds`]: tool call ids are unique across the transcript, and none is
//!    empty.
//! 5. [`Invariant::KindInRole`]: block kinds only in the roles that may carry them.
//! 6. [`Invariant::NoEmptyMessage`]: every message has at least one block.

use std::collections::{HashMap, HashSet};
use std::fmt;

use thiserror::Error;

use crate::block::{Block, BlockKind};
use crate::transcript::{FORMAT_VERSION, Message, Role, Transcript, Turn, TurnKind, TurnStatus};

/// Parses transcript JSON and validates it.
pub fn parse_transcript(json: &str) -> Result<Transcript, TranscriptError> {
    let transcript: Transcript = serde_json::from_str(json).map_err(|e| TranscriptError::Json {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    validate(&transcript)?;
    Ok(transcript)
}

/// Checks the transcript's structure and the six block invariants, naming the first place that
/// breaks one.
pub fn validate(transcript: &Transcript) -> Result<(), TranscriptError> {
    if transcript.version != FORMAT_VERSION {
        return Err(TranscriptError::Version {
            found: transcript.version,
        });
    }
    let mut call_ids = HashSet::new();
    for (position, turn) in transcript.turns.iter().enumerate() {
        let expected = position as u32 + 1;
        if turn.index != expected {
            return Err(structure(
                Location::turn(turn.index),
                format!(
                    "turn is numbered {} but is turn {expected} of the transcript; number turns 1, 2, 3, … in order",
                    turn.index
                ),
            ));
        }
        validate_turn(turn, &mut call_ids)?;
        validate_again(transcript, turn)?;
    }
    Ok(())
}

/// A turn answers again only an earlier chat turn's message, and is a chat turn itself.
fn validate_again(transcript: &Transcript, turn: &Turn) -> Result<(), TranscriptError> {
    let Some(again) = turn.answers_again() else {
        return Ok(());
    };
    let earlier_chat = again < turn.index
        && transcript
            .turn(again)
            .is_some_and(|t| t.kind == TurnKind::Chat);
    if turn.kind != TurnKind::Chat || !earlier_chat {
        return Err(structure(
            Location::turn(turn.index),
            format!(
                "turn answers turn {again} again, which is not an earlier chat turn's message; \
                 a chat turn answers again only an earlier chat turn"
            ),
        ));
    }
    Ok(())
}

/// Why a transcript was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TranscriptError {
    #[error("transcript is not valid transcript JSON: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "transcript format version {found} is not supported; this build reads version {FORMAT_VERSION}"
    )]
    Version { found: u32 },
    #[error("{location}: {problem}")]
    Structure { location: Location, problem: String },
    #[error("{location}: {detail} (invariant {invariant})")]
    Invariant {
        location: Location,
        invariant: Invariant,
        detail: String,
    },
}

/// The six block invariants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Invariant {
    TerminalText,
    CallsAnswered,
    ResultHasCall,
    UniqueCallIds,
    KindInRole,
    NoEmptyMessage,
}

impl Invariant {
    /// A short stable name, used in error messages and by the JavaScript binding.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::TerminalText => "terminal-text",
            Invariant::CallsAnswered => "calls-answered",
            Invariant::ResultHasCall => "result-has-call",
            Invariant::UniqueCallIds => "unique-call-ids",
            Invariant::KindInRole => "kind-in-role",
            Invariant::NoEmptyMessage => "no-empty-message",
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where in a transcript a problem is. All positions are 1-based, as a person counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub turn: u32,
    pub message: Option<usize>,
    pub block: Option<usize>,
}

impl Location {
    fn turn(turn: u32) -> Self {
        Location {
            turn,
            message: None,
            block: None,
        }
    }

    fn message(turn: u32, message: usize) -> Self {
        Location {
            turn,
            message: Some(message + 1),
            block: None,
        }
    }

    fn block(turn: u32, message: usize, block: usize) -> Self {
        Location {
            turn,
            message: Some(message + 1),
            block: Some(block + 1),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {}", self.turn)?;
        if let Some(message) = self.message {
            write!(f, ", message {message}")?;
        }
        if let Some(block) = self.block {
            write!(f, ", block {block}")?;
        }
        Ok(())
    }
}

fn structure(location: Location, problem: String) -> TranscriptError {
    TranscriptError::Structure { location, problem }
}

fn broken(location: Location, invariant: Invariant, detail: String) -> TranscriptError {
    TranscriptError::Invariant {
        location,
        invariant,
        detail,
    }
}

fn validate_turn(turn: &Turn, call_ids: &mut HashSet<String>) -> Result<(), TranscriptError> {
    let t = turn.index;
    let Some(first) = turn.messages.first() else {
        return Err(structure(
            Location::turn(t),
            "turn has no messages; a turn opens with the user's message".into(),
        ));
    };
    if first.role != Role::User {
        return Err(structure(
            Location::message(t, 0),
            format!(
                "turn opens with {} message; a turn opens with the user's message",
                first.role.with_article()
            ),
        ));
    }
    for (m, message) in turn.messages.iter().enumerate() {
        validate_message_shape(t, m, message)?;
        if m > 0 && message.role == Role::User && turn.messages[m - 1].role == Role::User {
            return Err(structure(
                Location::message(t, m),
                "two user messages in a row inside one turn; a later user message opens a new turn"
                    .into(),
            ));
        }
        for (b, block) in message.blocks.iter().enumerate() {
            if let Block::ToolUse { id, .. } = block
                && id.is_empty()
            {
                return Err(broken(
                    Location::block(t, m, b),
                    Invariant::UniqueCallIds,
                    "a tool call has an empty id; give every call its own id".into(),
                ));
            }
            if let Block::ToolUse { id, .. } = block
                && !call_ids.insert(id.clone())
            {
                return Err(broken(
                    Location::block(t, m, b),
                    Invariant::UniqueCallIds,
                    format!(
                        "tool call id `{id}` is used by an earlier call; give every call its own id"
                    ),
                ));
            }
        }
    }
    validate_pairing(turn)?;
    validate_terminal(turn)
}

fn validate_message_shape(t: u32, m: usize, message: &Message) -> Result<(), TranscriptError> {
    if message.blocks.is_empty() {
        return Err(broken(
            Location::message(t, m),
            Invariant::NoEmptyMessage,
            format!(
                "{} message has no blocks; drop the message or give it content",
                message.role.as_str()
            ),
        ));
    }
    if !message.attachments.is_empty() && message.role != Role::User {
        return Err(structure(
            Location::message(t, m),
            format!(
                "{} message carries attachments; only the user's message may",
                message.role.as_str()
            ),
        ));
    }
    for (b, block) in message.blocks.iter().enumerate() {
        let kind = block.kind();
        if !role_may_carry(message.role, kind) {
            return Err(broken(
                Location::block(t, m, b),
                Invariant::KindInRole,
                format!(
                    "{} message may not carry a {kind} block; {}",
                    message.role.with_article(),
                    where_kind_belongs(kind)
                ),
            ));
        }
        if let Block::Compaction { covers, .. } = block
            && (covers.first != 1 || covers.last < covers.first || covers.last > t)
        {
            return Err(structure(
                Location::block(t, m, b),
                format!(
                    "compaction covers turns {}–{}; a summary covers turn 1 up to a turn no later than its own",
                    covers.first, covers.last
                ),
            ));
        }
        if let Block::ToolResult { pictures, .. } = block
            && let Some(picture) = pictures
                .iter()
                .find(|p| p.attachment_id.is_empty() || p.width == 0 || p.height == 0)
        {
            return Err(structure(
                Location::block(t, m, b),
                format!(
                    "a tool result's picture must name its attachment and a size of at least one pixel, not `{}` at {}×{}",
                    picture.attachment_id, picture.width, picture.height
                ),
            ));
        }
    }
    Ok(())
}

fn role_may_carry(role: Role, kind: BlockKind) -> bool {
    match role {
        Role::User => kind == BlockKind::Text,
        Role::Tool => kind == BlockKind::ToolResult,
        Role::Assistant => kind != BlockKind::ToolResult,
    }
}

fn where_kind_belongs(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::ToolResult => "tool results go in a tool message right after the call",
        BlockKind::Text => "text goes in a user or assistant message",
        _ => "this kind belongs in an assistant message",
    }
}

/// Checks invariants 2 and 3: calls and results pair up across adjacent messages.
fn validate_pairing(turn: &Turn) -> Result<(), TranscriptError> {
    let t = turn.index;
    let last_assistant = turn
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant);
    for (m, message) in turn.messages.iter().enumerate() {
        let calls: Vec<(usize, &str)> = message
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(b, block)| match block {
                Block::ToolUse { id, .. } => Some((b, id.as_str())),
                _ => None,
            })
            .collect();
        for (b, block) in message.blocks.iter().enumerate() {
            if let Block::ApprovalRequest { call_id, .. } = block
                && !calls.iter().any(|(_, id)| id == call_id)
            {
                return Err(structure(
                    Location::block(t, m, b),
                    format!(
                        "approval request names call `{call_id}`, which this message does not make; put the request after the call it gates"
                    ),
                ));
            }
        }

        let next = turn.messages.get(m + 1).filter(|n| n.role == Role::Tool);
        let mut answers: HashMap<&str, usize> = HashMap::new();
        if let Some(next) = next {
            for (b, block) in next.blocks.iter().enumerate() {
                let Block::ToolResult { call_id, .. } = block else {
                    continue;
                };
                if !calls.iter().any(|(_, id)| id == call_id) {
                    return Err(broken(
                        Location::block(t, m + 1, b),
                        Invariant::ResultHasCall,
                        format!(
                            "tool result answers call `{call_id}`, which the message before it does not make; remove the result or add its call to that message"
                        ),
                    ));
                }
                let count = answers.entry(call_id.as_str()).or_default();
                *count += 1;
                if *count > 1 {
                    return Err(broken(
                        Location::block(t, m + 1, b),
                        Invariant::CallsAnswered,
                        format!(
                            "call `{call_id}` is answered twice; keep exactly one result per call"
                        ),
                    ));
                }
            }
        }
        if message.role == Role::Tool && (m == 0 || turn.messages[m - 1].role != Role::Assistant) {
            return Err(broken(
                Location::block(t, m, 0),
                Invariant::ResultHasCall,
                "tool message does not follow an assistant message; results follow the message with their calls"
                    .into(),
            ));
        }

        let may_stay_open = turn.status != TurnStatus::Completed && Some(m) == last_assistant;
        if may_stay_open {
            continue;
        }
        if let Some((b, id)) = calls.iter().find(|(_, id)| !answers.contains_key(id)) {
            return Err(broken(
                Location::block(t, m, *b),
                Invariant::CallsAnswered,
                format!(
                    "call `{id}` has no result in the next message; answer every call in the tool message that follows it"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks invariant 1: only a text block may be terminal.
fn validate_terminal(turn: &Turn) -> Result<(), TranscriptError> {
    if turn.status != TurnStatus::Completed {
        return Ok(());
    }
    let t = turn.index;
    let m = turn.messages.len() - 1;
    let last = &turn.messages[m];
    let b = last.blocks.len() - 1;
    let terminal = &last.blocks[b];
    let ends_well = last.role == Role::Assistant
        && match turn.kind {
            TurnKind::Chat => matches!(terminal, Block::Text { .. }),
            TurnKind::Compact => matches!(terminal, Block::Compaction { .. }),
        };
    if ends_well {
        return Ok(());
    }
    let wanted = match turn.kind {
        TurnKind::Chat => "a completed turn ends on the assistant's text block, its answer",
        TurnKind::Compact => "a completed /compact turn ends on the assistant's compaction block",
    };
    Err(broken(
        Location::block(t, m, b),
        Invariant::TerminalText,
        format!(
            "completed turn ends on a {} block in {} message; {wanted} (mark the turn cut_off or failed if it stopped early)",
            terminal.kind(),
            last.role.with_article()
        ),
    ))
}
