//! Reading a transcript's rows from PostgreSQL; `assemble` makes them a transcript.

use super::connection::Tx;
use portal_core::Transcript;

use super::{place_at, turn_number};
use portal_store::assemble::{self, TurnRows, Turns};
use portal_store::{ConversationId, Result, StorageError};

/// The conversation's transcript, or the part of it `turns` selects, its text documents with
/// their texts read from their bytes (organisation `org_id`'s).
pub(super) fn transcript(
    t: &mut Tx<'_>,
    org_id: &str,
    conversation: &ConversationId,
    turns: Turns,
) -> Result<Transcript> {
    let mut transcript = assemble::transcript(turns, |from, to| range(t, conversation, from, to))?;
    assemble::texts_from_bytes(&mut transcript, |id| attachment_bytes(t, org_id, id))?;
    Ok(transcript)
}

/// An attachment's uploaded bytes; another organisation's attachment is not found.
pub(super) fn attachment_bytes(
    t: &mut Tx<'_>,
    org_id: &str,
    attachment_id: &str,
) -> Result<Vec<u8>> {
    Ok(t.query_opt(
        "SELECT bytes FROM attachment_bytes WHERE org_id = $1 AND id = $2",
        &[&org_id, &attachment_id],
    )?
    .ok_or_else(|| StorageError::AttachmentNotFound {
        attachment: attachment_id.to_string(),
    })?
    .get(0))
}

/// The rows of turns `from` to `to` of the conversation, each query a range on the primary key.
fn range(t: &mut Tx<'_>, conversation: &ConversationId, from: u32, to: u32) -> Result<TurnRows> {
    let bounds: [&(dyn postgres::types::ToSql + Sync); 3] =
        [&conversation.as_str(), &i64::from(from), &i64::from(to)];
    let mut rows = TurnRows::default();
    for row in t.query(
        "SELECT turn, kind, status, effort, context_tokens FROM turns
         WHERE conversation_id = $1 AND turn BETWEEN $2 AND $3 ORDER BY turn",
        &bounds,
    )? {
        let tokens: Option<i64> = row.get(4);
        rows.turns.push((
            turn_number(row.get(0))?,
            row.get(1),
            row.get(2),
            row.get(3),
            tokens.map(super::count).transpose()?,
        ));
    }
    for row in t.query(
        "SELECT turn, entry FROM trace_entries
         WHERE conversation_id = $1 AND turn BETWEEN $2 AND $3 ORDER BY turn, position",
        &bounds,
    )? {
        rows.trace.push((turn_number(row.get(0))?, row.get(1)));
    }
    for row in t.query(
        "SELECT turn, message, role FROM messages
         WHERE conversation_id = $1 AND turn BETWEEN $2 AND $3 ORDER BY turn, message",
        &bounds,
    )? {
        rows.messages
            .push((turn_number(row.get(0))?, place_at(&row, 1)?, row.get(2)));
    }
    for row in t.query(
        "SELECT turn, message, block, body FROM blocks
         WHERE conversation_id = $1 AND turn BETWEEN $2 AND $3 ORDER BY turn, message, block",
        &bounds,
    )? {
        rows.blocks.push((
            turn_number(row.get(0))?,
            place_at(&row, 1)?,
            place_at(&row, 2)?,
            row.get(3),
        ));
    }
    for row in t.query(
        "SELECT turn, message, block, text FROM block_chunks
         WHERE conversation_id = $1 AND turn BETWEEN $2 AND $3
         ORDER BY turn, message, block, id",
        &bounds,
    )? {
        rows.chunks.push((
            turn_number(row.get(0))?,
            place_at(&row, 1)?,
            place_at(&row, 2)?,
            row.get(3),
        ));
    }
    for row in t.query(
        "SELECT ma.turn, ma.message, a.metadata FROM message_attachments ma
         JOIN attachments a ON a.org_id = ma.org_id AND a.id = ma.attachment_id
         WHERE ma.conversation_id = $1 AND ma.turn BETWEEN $2 AND $3
         ORDER BY ma.turn, ma.message, ma.position",
        &bounds,
    )? {
        rows.attachments
            .push((turn_number(row.get(0))?, place_at(&row, 1)?, row.get(2)));
    }
    Ok(rows)
}

/// The streamed text of one turn not yet folded into its blocks, joined per block, in block
/// order.
pub(super) fn chunks(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
) -> Result<Vec<((usize, usize), String)>> {
    let rows = t.query(
        "SELECT message, block, text FROM block_chunks
         WHERE conversation_id = $1 AND turn = $2 ORDER BY message, block, id",
        &[&conversation.as_str(), &i64::from(turn)],
    )?;
    let chunks = rows
        .iter()
        .map(|row| Ok(((place_at(row, 0)?, place_at(row, 1)?), row.get(2))))
        .collect::<Result<Vec<_>>>()?;
    Ok(assemble::join_chunks(chunks))
}
