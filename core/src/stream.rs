//! Events that carry a running turn's blocks from the server to the browser.

use serde::{Deserialize, Serialize};

use crate::block::{Block, BlockKind, CompactionTrigger, ToolPicture, TurnsCovered};
use crate::transcript::{Role, TurnStatus};

/// One event of a turn's stream. Each is sent as one server-sent event whose `event` field is the
/// variant's name and whose `data` is this value as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TurnEvent {
    /// A new message begins in the turn; `message` is its 0-based position.
    MessageStart { message: usize, role: Role },
    /// A new block begins in the current message; `block` is its 0-based position.
    BlockStart {
        message: usize,
        block: usize,
        kind: BlockKind,
        /// For tool use: the call id and tool name. For an approval request: the call it asks
        /// approval for, so a front end knows what the paused turn waits on. For a tool result:
        /// the call it answers (its id; the call names the tool).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<CallHeader>,
        /// For a tool result: whether it reports an error (the call failed, or did not run).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// For a tool result: the pictures it answered with.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pictures: Vec<ToolPicture>,
    },
    /// More text for the current thinking or text block, or the result of a tool call.
    Delta {
        message: usize,
        block: usize,
        text: String,
    },
    /// The current block is whole.
    BlockEnd { message: usize, block: usize },
    /// A compaction finished; the divider is drawn from this.
    Compacted {
        message: usize,
        block: usize,
        trigger: CompactionTrigger,
        covers: TurnsCovered,
        summary: String,
    },
    /// The model call writing into `message` from block `block` on reported a context overflow
    /// (rule C2): the blocks it wrote, the turn's last, are withdrawn, from storage too. The call
    /// is made again after a compaction, or the turn fails.
    Withdrawn { message: usize, block: usize },
    /// The turn stopped or paused; nothing follows until it resumes.
    TurnEnd {
        status: TurnStatus,
        /// For a failed turn: why, in words for the person who sent the message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// The identity of a tool call, sent with its block's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallHeader {
    pub id: String,
    /// The tool's name; left out for a tool result, whose call names it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

impl TurnEvent {
    /// Every event's server-sent event name, for a reader that listens to each.
    pub const NAMES: [&'static str; 7] = [
        "message_start",
        "block_start",
        "delta",
        "block_end",
        "compacted",
        "withdrawn",
        "turn_end",
    ];

    /// The server-sent event name.
    pub fn name(&self) -> &'static str {
        match self {
            TurnEvent::MessageStart { .. } => "message_start",
            TurnEvent::BlockStart { .. } => "block_start",
            TurnEvent::Delta { .. } => "delta",
            TurnEvent::BlockEnd { .. } => "block_end",
            TurnEvent::Compacted { .. } => "compacted",
            TurnEvent::Withdrawn { .. } => "withdrawn",
            TurnEvent::TurnEnd { .. } => "turn_end",
        }
    }
}

/// The events of a block written whole at `position` of `message`: its start, naming its call
/// (`siblings` is its message, where an approval request finds its call's tool name), its text
/// as one delta, as [`call_header`] and [`event_text`] define them, and its end. A compaction
/// block is its start and `compacted`.
pub fn block_events(
    message: usize,
    position: usize,
    block: &Block,
    siblings: &[Block],
) -> Vec<TurnEvent> {
    let start = TurnEvent::BlockStart {
        message,
        block: position,
        kind: block.kind(),
        call: call_header(block, siblings),
        is_error: matches!(block, Block::ToolResult { is_error: true, .. }),
        pictures: pictures(block).to_vec(),
    };
    if let Block::Compaction {
        summary,
        trigger,
        covers,
        ..
    } = block
    {
        return vec![
            start,
            TurnEvent::Compacted {
                message,
                block: position,
                trigger: *trigger,
                covers: *covers,
                summary: summary.clone(),
            },
        ];
    }
    let mut events = vec![start];
    if let Some(text) = event_text(block).filter(|t| !t.is_empty()) {
        events.push(TurnEvent::Delta {
            message,
            block: position,
            text,
        });
    }
    events.push(TurnEvent::BlockEnd {
        message,
        block: position,
    });
    events
}

/// The pictures a block's start carries: a tool result's.
pub fn pictures(block: &Block) -> &[ToolPicture] {
    match block {
        Block::ToolResult { pictures, .. } => pictures,
        _ => &[],
    }
}

/// The call a block's start names: a tool use's own, the one an approval request asks about (its
/// tool's name read from the call among `siblings`), or the one a result answers (by id alone).
pub fn call_header(block: &Block, siblings: &[Block]) -> Option<CallHeader> {
    match block {
        Block::ToolUse { id, name, .. } => Some(CallHeader {
            id: id.clone(),
            name: name.clone(),
        }),
        Block::ToolResult { call_id, .. } => Some(CallHeader {
            id: call_id.clone(),
            name: String::new(),
        }),
        Block::ApprovalRequest { call_id, .. } => Some(CallHeader {
            id: call_id.clone(),
            name: siblings
                .iter()
                .find_map(|b| match b {
                    Block::ToolUse { id, name, .. } if id == call_id => Some(name.clone()),
                    _ => None,
                })
                .unwrap_or_default(),
        }),
        _ => None,
    }
}

/// The text a block's events carry after its start: a call's arguments as JSON, a result's
/// content, a request's question or summary, prose; `None` for a compaction, whose summary comes
/// in its own event.
pub fn event_text(block: &Block) -> Option<String> {
    match block {
        Block::ToolUse { input, .. } => Some(input.to_string()),
        Block::ToolResult { content, .. } => Some(content.clone()),
        Block::ClarificationRequest { question, .. } => Some(question.clone()),
        Block::ApprovalRequest { summary, .. } => Some(summary.clone()),
        Block::Thinking { text } | Block::Text { text } => Some(text.clone()),
        Block::Compaction { .. } => None,
    }
}
