//! Reading a transcript's rows from SQLite; `assemble` makes them a transcript.

use rusqlite::{Connection, OptionalExtension, params};

use portal_core::Transcript;
use portal_store::assemble::{self, TurnRows, Turns};
use portal_store::{ConversationId, Result, StorageError};

/// The conversation's transcript, or the part of it `turns` selects, its text documents with
/// their texts read from their bytes (organisation `org_id`'s).
pub(super) fn transcript(
    c: &Connection,
    org_id: &str,
    conversation: &ConversationId,
    turns: Turns,
) -> Result<Transcript> {
    let mut transcript = assemble::transcript(turns, |from, to| range(c, conversation, from, to))?;
    assemble::texts_from_bytes(&mut transcript, |id| attachment_bytes(c, org_id, id))?;
    Ok(transcript)
}

/// An attachment's uploaded bytes; another organisation's attachment is not found.
pub(super) fn attachment_bytes(
    c: &Connection,
    org_id: &str,
    attachment_id: &str,
) -> Result<Vec<u8>> {
    c.prepare_cached("SELECT bytes FROM attachment_bytes WHERE org_id = ?1 AND id = ?2")?
        .query_row(params![org_id, attachment_id], |row| row.get(0))
        .optional()?
        .ok_or_else(|| StorageError::AttachmentNotFound {
            attachment: attachment_id.to_string(),
        })
}

/// The rows of turns `from` to `to` of the conversation, each query a range on the primary key.
fn range(c: &Connection, conversation: &ConversationId, from: u32, to: u32) -> Result<TurnRows> {
    let id = conversation.as_str();
    let mut rows = TurnRows::default();
    let bounds = params![id, from, to];
    rows.turns = c
        .prepare_cached(
            "SELECT turn, kind, status, effort, context_tokens FROM turns
             WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn",
        )?
        .query_map(bounds, |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.trace = c
        .prepare_cached(
            "SELECT turn, entry FROM trace_entries
             WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn, position",
        )?
        .query_map(bounds, |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    rows.messages = c
        .prepare_cached(
            "SELECT turn, message, role FROM messages
             WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn, message",
        )?
        .query_map(bounds, |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    rows.blocks = c
        .prepare_cached(
            "SELECT turn, message, block, body FROM blocks
             WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3
             ORDER BY turn, message, block",
        )?
        .query_map(bounds, |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.chunks = c
        .prepare_cached(
            "SELECT turn, message, block, text FROM block_chunks
             WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3
             ORDER BY turn, message, block, id",
        )?
        .query_map(bounds, |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.attachments = c
        .prepare_cached(
            "SELECT ma.turn, ma.message, a.metadata FROM message_attachments ma
             JOIN attachments a ON a.org_id = ma.org_id AND a.id = ma.attachment_id
             WHERE ma.conversation_id = ?1 AND ma.turn BETWEEN ?2 AND ?3
             ORDER BY ma.turn, ma.message, ma.position",
        )?
        .query_map(bounds, |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// The streamed text of one turn not yet folded into its blocks, joined per block, in block
/// order.
pub(super) fn chunks(
    c: &Connection,
    conversation: &ConversationId,
    turn: u32,
) -> Result<Vec<((usize, usize), String)>> {
    let rows = c
        .prepare_cached(
            "SELECT message, block, text FROM block_chunks
             WHERE conversation_id = ?1 AND turn = ?2 ORDER BY message, block, id",
        )?
        .query_map(params![conversation.as_str(), turn], |row| {
            Ok(((row.get(0)?, row.get(1)?), row.get(2)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(assemble::join_chunks(rows))
}
