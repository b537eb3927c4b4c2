//! The model calls kept for the prompt inspector, on PostgreSQL.

use super::connection::Tx;
use super::turn_number;
use portal_store::codec::parse_name;
use portal_store::{ConversationId, Result};
use portal_store::{KeptText, NewCall, RecordedCall};

pub(super) fn record(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
    call: &NewCall,
) -> Result<u32> {
    let bytes = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let row = t.query_one(
        "INSERT INTO model_calls (conversation_id, turn, call, purpose, model, prompt,
                                  prompt_bytes, body, body_bytes, diagnostics)
         SELECT $1, $2, COALESCE(MAX(call), 0) + 1, $3, $4, $5, $6, $7, $8, $9
         FROM model_calls WHERE conversation_id = $1 AND turn = $2
         RETURNING call",
        &[
            &conversation.as_str(),
            &i64::from(turn),
            &call.purpose.as_str(),
            &call.model,
            &call.prompt.text,
            &bytes(call.prompt.bytes),
            &call.body.as_ref().and_then(|b| b.text.as_deref()),
            &call.body.as_ref().map(|b| bytes(b.bytes)),
            &call.diagnostics,
        ],
    )?;
    turn_number(row.get(0))
}

pub(super) fn list(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
) -> Result<Vec<RecordedCall>> {
    let rows = t.query(
        "SELECT call, purpose, model, prompt, prompt_bytes, body, body_bytes, recorded_at,
                diagnostics
         FROM model_calls WHERE conversation_id = $1 AND turn = $2 ORDER BY call",
        &[&conversation.as_str(), &i64::from(turn)],
    )?;
    let size = |n: i64| u64::try_from(n).unwrap_or(0);
    rows.iter()
        .map(|row| {
            let purpose: String = row.get(1);
            Ok(RecordedCall {
                call: turn_number(row.get(0))?,
                purpose: parse_name("model call purpose", &purpose)?,
                model: row.get(2),
                prompt: KeptText {
                    text: row.get(3),
                    bytes: size(row.get(4)),
                },
                body: row.get::<_, Option<i64>>(6).map(|bytes| KeptText {
                    text: row.get(5),
                    bytes: size(bytes),
                }),
                diagnostics: row.get(8),
                recorded_at_ms: row.get(7),
            })
        })
        .collect()
}
