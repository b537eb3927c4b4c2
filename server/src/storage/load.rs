//! Assembling a transcript from its rows.

use portal_core::attachment::Attachment;
use portal_core::{Block, Message, Role, TraceEntry, Transcript, Turn, TurnKind};
use rusqlite::{Connection, params};

use super::codec::{append_text, parse_json, parse_name, parse_status};
use super::{ConversationId, Result, StorageError};

/// Which turns of a conversation to load: every turn from `from` on, and turn `also` when it lies
/// before them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Turns {
    pub from: u32,
    pub also: Option<u32>,
}

impl Turns {
    /// The whole conversation.
    pub const ALL: Turns = Turns {
        from: 1,
        also: None,
    };
}

/// The conversation's transcript, or the part of it `turns` selects. Messages without blocks are
/// left out: only a turn's last message can be one (see `Storage::append_message`), so no
/// position shifts.
pub(super) fn transcript(
    c: &Connection,
    conversation: &ConversationId,
    turns: Turns,
) -> Result<Transcript> {
    let mut transcript = match turns.also.filter(|&also| also < turns.from) {
        Some(also) => range(c, conversation, also, also)?,
        None => Transcript::new(),
    };
    let from = range(c, conversation, turns.from, u32::MAX)?;
    transcript.turns.extend(from.turns);
    Ok(transcript)
}

/// Turns `from` to `to` of the conversation, each query a range on the primary key.
fn range(c: &Connection, conversation: &ConversationId, from: u32, to: u32) -> Result<Transcript> {
    let id = conversation.as_str();
    let mut transcript = Transcript::new();

    let mut statement = c.prepare_cached(
        "SELECT turn, kind, status, effort, context_tokens FROM turns
         WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn",
    )?;
    let rows = statement.query_map(params![id, from, to], |row| {
        Ok((
            row.get::<_, u32>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<u64>>(4)?,
        ))
    })?;
    for (expected, row) in (from..).zip(rows) {
        let (index, kind, status, effort, context_tokens) = row?;
        if index != expected {
            return Err(gap("turn"));
        }
        transcript.turns.push(Turn {
            index,
            kind: parse_name::<TurnKind>("turn kind", &kind)?,
            status: parse_status(&status)?,
            effort: effort
                .map(|effort| parse_name("effort", &effort))
                .transpose()?,
            context_tokens,
            trace: Vec::new(),
            messages: Vec::new(),
        });
    }

    let mut statement = c.prepare_cached(
        "SELECT turn, entry FROM trace_entries
         WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn, position",
    )?;
    let rows = statement.query_map(params![id, from, to], |row| {
        Ok((row.get::<_, u32>(0)?, row.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (turn, entry) = row?;
        let entry: TraceEntry = parse_json("trace entry", &entry)?;
        turn_at(&mut transcript, turn)?.trace.push(entry);
    }

    let mut statement = c.prepare_cached(
        "SELECT turn, message, role FROM messages
         WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn, message",
    )?;
    let rows = statement.query_map(params![id, from, to], |row| {
        Ok((
            row.get::<_, u32>(0)?,
            row.get::<_, usize>(1)?,
            row.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (turn, message, role) = row?;
        let messages = &mut turn_at(&mut transcript, turn)?.messages;
        if message != messages.len() {
            return Err(gap("message"));
        }
        messages.push(Message::new(parse_name::<Role>("role", &role)?, Vec::new()));
    }

    let mut statement = c.prepare_cached(
        "SELECT turn, message, block, body FROM blocks
         WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3 ORDER BY turn, message, block",
    )?;
    let rows = statement.query_map(params![id, from, to], |row| {
        Ok((
            row.get::<_, u32>(0)?,
            row.get::<_, usize>(1)?,
            row.get::<_, usize>(2)?,
            row.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (turn, message, block, body) = row?;
        let blocks = &mut message_at(&mut transcript, turn, message)?.blocks;
        if block != blocks.len() {
            return Err(gap("block"));
        }
        blocks.push(parse_json("block", &body)?);
    }

    let mut statement = c.prepare_cached(
        "SELECT turn, message, block, text FROM block_chunks
         WHERE conversation_id = ?1 AND turn BETWEEN ?2 AND ?3
         ORDER BY turn, message, block, id",
    )?;
    let rows = statement.query_map(params![id, from, to], |row| {
        Ok((
            row.get::<_, u32>(0)?,
            row.get::<_, usize>(1)?,
            row.get::<_, usize>(2)?,
            row.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (turn, message, block, text) = row?;
        let content = message_at(&mut transcript, turn, message)?
            .blocks
            .get_mut(block)
            .ok_or_else(|| gap("block"))?;
        stream_into(content, &text)?;
    }

    let mut statement = c.prepare_cached(
        "SELECT ma.turn, ma.message, a.metadata FROM message_attachments ma
         JOIN attachments a ON a.org_id = ma.org_id AND a.id = ma.attachment_id
         WHERE ma.conversation_id = ?1 AND ma.turn BETWEEN ?2 AND ?3
         ORDER BY ma.turn, ma.message, ma.position",
    )?;
    let rows = statement.query_map(params![id, from, to], |row| {
        Ok((
            row.get::<_, u32>(0)?,
            row.get::<_, usize>(1)?,
            row.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (turn, message, metadata) = row?;
        let attachment: Attachment = parse_json("attachment", &metadata)?;
        message_at(&mut transcript, turn, message)?
            .attachments
            .push(attachment);
    }

    for turn in &mut transcript.turns {
        turn.messages.retain(|message| !message.blocks.is_empty());
    }
    Ok(transcript)
}

/// The streamed text of one turn not yet folded into its blocks, joined per block, in block
/// order.
pub(super) fn chunks(
    c: &Connection,
    conversation: &ConversationId,
    turn: u32,
) -> Result<Vec<((usize, usize), String)>> {
    let mut statement = c.prepare_cached(
        "SELECT message, block, text FROM block_chunks
         WHERE conversation_id = ?1 AND turn = ?2 ORDER BY message, block, id",
    )?;
    let rows = statement.query_map(params![conversation.as_str(), turn], |row| {
        Ok((
            (row.get::<_, usize>(0)?, row.get::<_, usize>(1)?),
            row.get::<_, String>(2)?,
        ))
    })?;
    let mut joined: Vec<((usize, usize), String)> = Vec::new();
    for row in rows {
        let (key, text) = row?;
        match joined.last_mut() {
            Some((last, whole)) if *last == key => whole.push_str(&text),
            _ => joined.push((key, text)),
        }
    }
    Ok(joined)
}

fn turn_at(transcript: &mut Transcript, turn: u32) -> Result<&mut Turn> {
    transcript.turn_mut(turn).ok_or_else(|| gap("turn"))
}

fn message_at(transcript: &mut Transcript, turn: u32, message: usize) -> Result<&mut Message> {
    turn_at(transcript, turn)?
        .messages
        .get_mut(message)
        .ok_or_else(|| gap("message"))
}

/// Adds streamed text to a block that takes it.
pub(super) fn stream_into(block: &mut Block, text: &str) -> Result<()> {
    if append_text(block, text) {
        Ok(())
    } else {
        Err(StorageError::Unreadable {
            what: "streamed text",
            detail: format!("it belongs to a {} block", block.kind()),
        })
    }
}

fn gap(what: &'static str) -> StorageError {
    StorageError::Unreadable {
        what,
        detail: "positions are not numbered 0, 1, 2, … (turns 1, 2, 3, …) in order".into(),
    }
}
