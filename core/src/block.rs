//! The seven block kinds a message is made of (rule B1).

use serde::{Deserialize, Serialize};

/// One block of a message. Serialised with a `type` tag in snake case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Block {
    /// The model's private reasoning. Never replayed, never opened for the reader.
    Thinking { text: String },
    /// Prose the assistant (or the user) wrote. Only a text block can be the answer.
    Text { text: String },
    /// A call to a tool, answered by a `tool_result` in the next message.
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: serde_json::Value,
    },
    /// The answer to the `tool_use` whose id is `call_id`.
    ToolResult {
        call_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// The pictures the tool answered with, kept as the conversation's attachments; absent
        /// when none, so a transcript written before tools had pictures reads as before.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pictures: Vec<ToolPicture>,
    },
    /// A question the agent asks the user; the turn pauses until it is answered.
    ClarificationRequest { id: String, question: String },
    /// A request to run the call `call_id`; the turn pauses until the user decides.
    ApprovalRequest { call_id: String, summary: String },
    /// A summary that replaces everything before it (rule B2). It opens the assistant message of
    /// the model call it was made for; the `kept_messages` messages just before that message are
    /// the tail kept verbatim after the summary (rules C3, C4).
    Compaction {
        summary: String,
        trigger: CompactionTrigger,
        covers: TurnsCovered,
        #[serde(default)]
        kept_messages: u32,
    },
}

/// A picture a tool answered with, kept by the host as a picture attachment of the
/// conversation's owner: which attachment, its type and its stored size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolPicture {
    pub attachment_id: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
}

impl ToolPicture {
    /// The line a result's text holds for the picture, where the tool's answer placed it.
    pub fn line(&self) -> String {
        format!(
            "[picture {}: {}, {}×{}]",
            self.attachment_id, self.media_type, self.width, self.height
        )
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CompactionTrigger {
    /// The agent compacted on its own (85 % of the window, or an overflow).
    Auto,
    /// The user typed `/compact`.
    Manual,
}

/// The turns a summary covers: always from turn 1 (rule C9) to `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnsCovered {
    pub first: u32,
    pub last: u32,
}

/// The kind of a block without its content, for errors and rendering decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    Thinking,
    Text,
    ToolUse,
    ToolResult,
    ClarificationRequest,
    ApprovalRequest,
    Compaction,
}

impl Block {
    /// The block's kind.
    pub fn kind(&self) -> BlockKind {
        match self {
            Block::Thinking { .. } => BlockKind::Thinking,
            Block::Text { .. } => BlockKind::Text,
            Block::ToolUse { .. } => BlockKind::ToolUse,
            Block::ToolResult { .. } => BlockKind::ToolResult,
            Block::ClarificationRequest { .. } => BlockKind::ClarificationRequest,
            Block::ApprovalRequest { .. } => BlockKind::ApprovalRequest,
            Block::Compaction { .. } => BlockKind::Compaction,
        }
    }

    /// Shorthand for a text block.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text { text: text.into() }
    }
}

impl BlockKind {
    /// The name used in the transcript format.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::Thinking => "thinking",
            BlockKind::Text => "text",
            BlockKind::ToolUse => "tool_use",
            BlockKind::ToolResult => "tool_result",
            BlockKind::ClarificationRequest => "clarification_request",
            BlockKind::ApprovalRequest => "approval_request",
            BlockKind::Compaction => "compaction",
        }
    }
}

impl std::fmt::Display for BlockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
