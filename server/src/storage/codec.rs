//! How the transcript's values become column values and back.

use portal_core::attachment::Attachment;
use portal_core::{Block, TurnKind, TurnStatus};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Result, StorageError};

/// Reads a turn status stored under its transcript-format name ([`TurnStatus::as_str`] writes
/// it).
pub(super) fn parse_status(name: &str) -> Result<TurnStatus> {
    name.parse().map_err(|e| StorageError::Unreadable {
        what: "turn status",
        detail: format!("{e}"),
    })
}

/// The stored name of a turn kind, as the transcript format spells it.
pub(super) fn kind_name(kind: TurnKind) -> &'static str {
    match kind {
        TurnKind::Chat => "chat",
        TurnKind::Compact => "compact",
    }
}

/// The stored name of an attachment's kind, fixed at upload (rule A1).
pub(super) fn attachment_kind(attachment: &Attachment) -> &'static str {
    match attachment {
        Attachment::Document(_) => "document",
        Attachment::Picture(_) => "picture",
    }
}

/// Reads a value stored under its transcript-format name (a status, role, effort, …).
pub(super) fn parse_name<T: DeserializeOwned>(what: &'static str, name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|e| {
        StorageError::Unreadable {
            what,
            detail: format!("`{name}`: {e}"),
        }
    })
}

/// Reads a value stored as JSON (a block, a trace entry, an attachment's metadata).
pub(super) fn parse_json<T: DeserializeOwned>(what: &'static str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| StorageError::Unreadable {
        what,
        detail: e.to_string(),
    })
}

/// Writes a value as JSON.
pub(super) fn to_json<T: Serialize>(what: &'static str, value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StorageError::Unreadable {
        what,
        detail: e.to_string(),
    })
}

/// A count or position as SQLite's integer.
pub(super) fn integer(what: &'static str, value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| StorageError::TooLarge { what, value })
}

/// A message or block position as SQLite's integer.
pub(super) fn position(what: &'static str, value: usize) -> Result<i64> {
    integer(what, value as u64)
}

/// Adds streamed text to the block's text (thinking, text) or content (tool result). Returns
/// false for a kind that takes no streamed text.
pub(super) fn append_text(block: &mut Block, delta: &str) -> bool {
    match block {
        Block::Thinking { text } | Block::Text { text } => text.push_str(delta),
        Block::ToolResult { content, .. } => content.push_str(delta),
        _ => return false,
    }
    true
}
