//! A conversation's transcript: turns of messages of blocks, as stored and exchanged.
//!
//! The JSON format is documented in `docs/transcript-format.md`.

use serde::{Deserialize, Serialize};

use crate::attachment::Attachment;
use crate::block::Block;
use crate::effort::level::Effort;

/// The transcript format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A whole conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    pub version: u32,
    pub turns: Vec<Turn>,
}

/// One turn: the user's message and everything the agent did until it answered, paused or stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// 1-based position in the conversation.
    pub index: u32,
    #[serde(default, skip_serializing_if = "TurnKind::is_chat")]
    pub kind: TurnKind,
    pub status: TurnStatus,
    /// The effort level that won for this turn (rule E2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// Input tokens of the latest call on the turn's own model (rule C11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<TraceEntry>,
    pub messages: Vec<Message>,
}

/// Whether a turn ran the agent loop or only summarised the history (`/compact`, rule C6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    #[default]
    Chat,
    Compact,
}

impl TurnKind {
    fn is_chat(&self) -> bool {
        *self == TurnKind::Chat
    }
}

/// Where a turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    Running,
    /// Waiting for the user to answer an approval or a clarification request.
    Paused,
    Completed,
    /// Stopped before it finished: cancelled, or the server went down mid-stream.
    CutOff,
    Failed,
}

impl TurnStatus {
    /// Every status, in the order a turn can reach them.
    pub const ALL: [TurnStatus; 5] = [
        TurnStatus::Running,
        TurnStatus::Paused,
        TurnStatus::Completed,
        TurnStatus::CutOff,
        TurnStatus::Failed,
    ];

    /// Whether the turn can still produce blocks.
    pub fn is_open(self) -> bool {
        matches!(self, TurnStatus::Running | TurnStatus::Paused)
    }

    /// The status's name in the transcript format, in storage and in the page (`cut_off`).
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Running => "running",
            TurnStatus::Paused => "paused",
            TurnStatus::Completed => "completed",
            TurnStatus::CutOff => "cut_off",
            TurnStatus::Failed => "failed",
        }
    }

    /// The status in words, for messages to people and to models (`cut off`).
    pub fn in_words(self) -> &'static str {
        match self {
            TurnStatus::CutOff => "cut off",
            other => other.as_str(),
        }
    }
}

/// Prints the status in words (`cut off`); [`TurnStatus::as_str`] gives the format's name.
impl std::fmt::Display for TurnStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.in_words())
    }
}

/// A name that is not a turn status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a turn status; expected running, paused, completed, cut_off or failed")]
pub struct UnknownStatus(pub String);

/// Reads a status by its format name (`cut_off`).
impl std::str::FromStr for TurnStatus {
    type Err = UnknownStatus;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        TurnStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| UnknownStatus(name.to_string()))
    }
}

/// A note the runtime keeps on a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE", deny_unknown_fields)]
pub enum TraceEntry {
    /// The skills a message selected with `/slug` (rule S4).
    SkillSelect { skill_ids: Vec<String> },
    /// A compaction that failed; the turn went on or failed as rule C5 says.
    CompactionFailed { reason: String },
    /// Why the turn failed, in words for the person who sent its message.
    TurnFailed { reason: String },
    /// Why the runtime cut the turn off, in words for the person who sent its message: the
    /// server stopped while it ran. A turn the user cancelled has no such note.
    TurnCutOff { reason: String },
    /// The turn answers turn `turn`'s message again (Regenerate, or the latest message edited):
    /// the page shows the two as versions of one turn, while both stay in the transcript
    /// (`display::versions`).
    AnswersAgain { turn: u32 },
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// The runtime, carrying tool results back to the model.
    Tool,
}

impl Role {
    /// The name used in the transcript format.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role's name after "a" or "an", for messages to people.
    pub fn with_article(self) -> &'static str {
        match self {
            Role::User => "a user",
            Role::Assistant => "an assistant",
            Role::Tool => "a tool",
        }
    }
}

/// An ordered list of blocks from one author (rule B1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub role: Role,
    pub blocks: Vec<Block>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

impl Message {
    /// The message's words: its text blocks, one after another, a blank line between them.
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// A message with the given blocks and no attachments.
    pub fn new(role: Role, blocks: Vec<Block>) -> Self {
        Message {
            role,
            blocks,
            attachments: Vec::new(),
        }
    }
}

impl Transcript {
    /// An empty conversation.
    pub fn new() -> Self {
        Transcript {
            version: FORMAT_VERSION,
            turns: Vec::new(),
        }
    }

    /// Turn `index` (1-based, as turns are numbered everywhere); `None` when the transcript does
    /// not hold it. A whole conversation holds turns 1, 2, 3, …; a part of one that storage loaded
    /// for a model call (rule M1) holds its turns in order, with gaps.
    pub fn turn(&self, index: u32) -> Option<&Turn> {
        self.place_of(index).map(|at| &self.turns[at])
    }

    /// Turn `index` (1-based) to change; `None` when the transcript does not hold it.
    pub fn turn_mut(&mut self, index: u32) -> Option<&mut Turn> {
        self.place_of(index).map(|at| &mut self.turns[at])
    }

    /// Where turn `index` sits in [`Transcript::turns`]: found at once in a whole conversation, by
    /// binary search in a part of one.
    pub(crate) fn place_of(&self, index: u32) -> Option<usize> {
        let first = self.turns.first()?.index;
        let at = usize::try_from(index.checked_sub(first)?).ok()?;
        if self.turns.get(at).is_some_and(|turn| turn.index == index) {
            return Some(at);
        }
        self.turns
            .binary_search_by_key(&index, |turn| turn.index)
            .ok()
    }
}

/// What a paused turn waits for: the requests of its last assistant message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Awaiting {
    /// The call ids whose approval the turn asks for, in order.
    pub approvals: Vec<String>,
    /// Whether the turn asked the user a question (a clarification request).
    pub question: bool,
}

impl Awaiting {
    /// Whether the turn waits for nothing.
    pub fn is_empty(&self) -> bool {
        self.approvals.is_empty() && !self.question
    }

    /// What the requests among `blocks` ask for.
    pub fn of_blocks<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> Self {
        let mut awaiting = Awaiting::default();
        for block in blocks {
            match block {
                Block::ApprovalRequest { call_id, .. } => awaiting.approvals.push(call_id.clone()),
                Block::ClarificationRequest { .. } => awaiting.question = true,
                _ => {}
            }
        }
        awaiting
    }
}

impl Turn {
    /// The turn whose message this one answers again, if it does.
    pub fn answers_again(&self) -> Option<u32> {
        self.trace.iter().find_map(|entry| match entry {
            TraceEntry::AnswersAgain { turn } => Some(*turn),
            _ => None,
        })
    }

    /// Why the turn failed or was cut off, as its `TURN_FAILED` or `TURN_CUT_OFF` note says;
    /// `None` for a turn that did neither, one cancelled by its user, or one that ended before
    /// the note was kept.
    pub fn end_reason(&self) -> Option<&str> {
        self.trace
            .iter()
            .rev()
            .find_map(|entry| match (entry, self.status) {
                (TraceEntry::TurnFailed { reason }, TurnStatus::Failed)
                | (TraceEntry::TurnCutOff { reason }, TurnStatus::CutOff) => Some(reason.as_str()),
                _ => None,
            })
    }

    /// What the turn waits for once paused: the approvals and the question of its last assistant
    /// message. Only that message's requests can be answered; earlier ones were answered already.
    pub fn awaiting(&self) -> Awaiting {
        self.last_assistant_message()
            .map(|m| Awaiting::of_blocks(&m.blocks))
            .unwrap_or_default()
    }

    /// The turn's last assistant message: the one a paused turn's requests and calls are in.
    pub fn last_assistant_message(&self) -> Option<&Message> {
        self.messages.iter().rfind(|m| m.role == Role::Assistant)
    }
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}
