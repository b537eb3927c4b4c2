//! Reading a transcript's rows from SQLite; `assemble` makes them a transcript.

use rusqlite::{Connection, params};

use portal_core::Transcript;
use portal_store::assemble::{self, TurnRows, Turns};
use portal_store::{ConversationId, Result};

/// The conversation's transcript, or the part of it `turns` selects.
pub(super) fn transcript(
    c: &Connection,
    conversation: &ConversationId,
    turns: Turns,
) -> Result<Transcript> {
    assemble::transcript(turns, |from, to| range(c, conversation, from, to))
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
