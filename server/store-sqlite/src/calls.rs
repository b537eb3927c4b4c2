//! The model calls kept for the prompt inspector, on SQLite.

use rusqlite::{Connection, params};

use portal_store::codec::parse_name;
use portal_store::{ConversationId, Result};
use portal_store::{KeptText, NewCall, RecordedCall};

pub(super) fn record(
    c: &Connection,
    conversation: &ConversationId,
    turn: u32,
    call: &NewCall,
) -> Result<u32> {
    let number: u32 = c
        .prepare_cached(
            "INSERT INTO model_calls (conversation_id, turn, call, purpose, model, prompt,
                                      prompt_bytes, body, body_bytes, diagnostics)
             SELECT ?1, ?2, COALESCE(MAX(call), 0) + 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9
             FROM model_calls WHERE conversation_id = ?1 AND turn = ?2
             RETURNING call",
        )?
        .query_row(
            params![
                conversation.as_str(),
                turn,
                call.purpose.as_str(),
                call.model,
                call.prompt.text,
                call.prompt.bytes,
                call.body.as_ref().and_then(|b| b.text.as_deref()),
                call.body.as_ref().map(|b| b.bytes),
                call.diagnostics,
            ],
            |row| row.get(0),
        )?;
    Ok(number)
}

pub(super) fn list(
    c: &Connection,
    conversation: &ConversationId,
    turn: u32,
) -> Result<Vec<RecordedCall>> {
    let mut statement = c.prepare_cached(
        "SELECT call, purpose, model, prompt, prompt_bytes, body, body_bytes, recorded_at,
                diagnostics
         FROM model_calls WHERE conversation_id = ?1 AND turn = ?2 ORDER BY call",
    )?;
    let rows = statement.query_map(params![conversation.as_str(), turn], |row| {
        Ok((
            row.get::<_, u32>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            KeptText {
                text: row.get(3)?,
                bytes: row.get(4)?,
            },
            row.get::<_, Option<String>>(5)?,
            row.get::<_, Option<u64>>(6)?,
            row.get::<_, i64>(7)?,
            row.get::<_, String>(8)?,
        ))
    })?;
    let mut calls = Vec::new();
    for row in rows {
        let (call, purpose, model, prompt, body, body_bytes, recorded_at_ms, diagnostics) = row?;
        calls.push(RecordedCall {
            call,
            purpose: parse_name("model call purpose", &purpose)?,
            model,
            prompt,
            body: body_bytes.map(|bytes| KeptText { text: body, bytes }),
            diagnostics,
            recorded_at_ms,
        });
    }
    Ok(calls)
}
