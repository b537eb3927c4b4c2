//! How the transcript's values become column values and back.

use portal_core::attachment::Attachment;
use portal_core::usage::{Price, Tokens, Usage};
use portal_core::{Block, TurnKind, TurnStatus};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Result, StorageError};
use crate::quota::{Limit, Spender};

/// Reads a turn status stored under its transcript-format name ([`TurnStatus::as_str`] writes
/// it).
pub fn parse_status(name: &str) -> Result<TurnStatus> {
    name.parse().map_err(|e| StorageError::Unreadable {
        what: "turn status",
        detail: format!("{e}"),
    })
}

/// The stored name of a turn kind, as the transcript format spells it.
pub fn kind_name(kind: TurnKind) -> &'static str {
    match kind {
        TurnKind::Chat => "chat",
        TurnKind::Compact => "compact",
    }
}

/// The stored name of an attachment's kind, fixed at upload (rule A1).
pub fn attachment_kind(attachment: &Attachment) -> &'static str {
    match attachment {
        Attachment::Document(_) => "document",
        Attachment::Picture(_) => "picture",
    }
}

/// Reads a value stored under its transcript-format name (a status, role, effort, …).
pub fn parse_name<T: DeserializeOwned>(what: &'static str, name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|e| {
        StorageError::Unreadable {
            what,
            detail: format!("`{name}`: {e}"),
        }
    })
}

/// Reads a value stored as JSON (a block, a trace entry, an attachment's metadata).
pub fn parse_json<T: DeserializeOwned>(what: &'static str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| StorageError::Unreadable {
        what,
        detail: e.to_string(),
    })
}

/// Writes a value as JSON.
pub fn to_json<T: Serialize>(what: &'static str, value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StorageError::Unreadable {
        what,
        detail: e.to_string(),
    })
}

/// A count or position as SQLite's integer.
pub fn integer(what: &'static str, value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| StorageError::TooLarge { what, value })
}

/// A message or block position as SQLite's integer.
pub fn position(what: &'static str, value: usize) -> Result<i64> {
    integer(what, value as u64)
}

/// Adds streamed text to the block's text (thinking, text) or content (tool result). Returns
/// false for a kind that takes no streamed text.
pub fn append_text(block: &mut Block, delta: &str) -> bool {
    match block {
        Block::Thinking { text } | Block::Text { text } => text.push_str(delta),
        Block::ToolResult { content, .. } => content.push_str(delta),
        _ => return false,
    }
    true
}

/// A usage row's values as both databases store them: its tokens, whether they were estimated,
/// and the price it was priced at with its cost, all `None` for an unpriced row.
#[derive(Debug)]
pub struct UsageColumns {
    pub purpose: String,
    pub tokens: [i64; 4],
    pub estimated: bool,
    pub currency: Option<String>,
    pub prices: [Option<i64>; 3],
    pub cost_nanos: Option<i64>,
}

impl UsageColumns {
    /// The columns of `usage`.
    pub fn of(usage: &Usage) -> Result<Self> {
        let t = &usage.tokens;
        let price = usage.price.as_ref();
        let rate = |r: fn(&Price) -> u64, what| price.map(|p| integer(what, r(p))).transpose();
        Ok(UsageColumns {
            purpose: usage.purpose.as_str().to_string(),
            tokens: [
                integer("input tokens", t.input)?,
                integer("cached input tokens", t.cached_input)?,
                integer("output tokens", t.output)?,
                integer("reasoning tokens", t.reasoning)?,
            ],
            estimated: t.estimated,
            currency: price.map(|p| p.currency.clone()),
            prices: [
                rate(|p| p.input_micros, "input price")?,
                rate(|p| p.cached_input_micros, "cached input price")?,
                rate(|p| p.output_micros, "output price")?,
            ],
            cost_nanos: usage.cost().map(|c| integer("cost", c.nanos)).transpose()?,
        })
    }

    /// The usage the columns hold, priced at the price stored with them.
    pub fn usage(self, model: String) -> Result<Usage> {
        let count = |what: &'static str, value: i64| {
            u64::try_from(value).map_err(|_| StorageError::Unreadable {
                what,
                detail: format!("{value} is below zero"),
            })
        };
        let [input, cached_input, output, reasoning] = self.tokens;
        let price = match (self.currency, self.prices) {
            (Some(currency), [Some(input), Some(cached), Some(output)]) => Some(Price {
                currency,
                input_micros: count("input price", input)?,
                cached_input_micros: count("cached input price", cached)?,
                output_micros: count("output price", output)?,
            }),
            _ => None,
        };
        Ok(Usage {
            purpose: parse_name("usage purpose", &self.purpose)?,
            model,
            tokens: Tokens {
                input: count("input tokens", input)?,
                cached_input: count("cached input tokens", cached_input)?,
                output: count("output tokens", output)?,
                reasoning: count("reasoning tokens", reasoning)?,
                estimated: self.estimated,
            },
            price,
        })
    }
}

/// A spender's organisation, and its user for a user's quota (`None` for the organisation's).
pub fn spender_ids(spender: &Spender) -> (&str, Option<&str>) {
    match spender {
        Spender::User { org_id, user_id } => (org_id, Some(user_id)),
        Spender::Organisation { org_id } => (org_id, None),
    }
}

/// The note a turn cut off because its server stopped keeps (rule M10): why, in words.
pub fn stopped_note() -> portal_core::TraceEntry {
    portal_core::TraceEntry::TurnCutOff {
        reason: portal_core::turn_run::STOPPED_REASON.to_string(),
    }
}

/// Text with its accents taken off, as search compares it (issue 32: "café" finds "cafe", and a
/// "café" written with a combining accent): decomposed (NFD), without the combining diacritical
/// marks (U+0300 to U+036F) that Latin, Greek and Cyrillic letters take. PostgreSQL's search
/// does the same in SQL (`postgres::conversations`).
pub fn without_accents(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfd()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .collect()
}

/// What a quota's `limit` sums over the usage rows, as an SQL expression, and the currency the
/// rows must be priced in: input and output tokens of every row for a quota in tokens, the cost
/// of the rows priced in its currency for one in money.
pub fn quota_measure(limit: &Limit) -> (&'static str, Option<&str>) {
    match limit {
        Limit::Tokens(_) => ("input_tokens + output_tokens", None),
        Limit::Cost(cost) => ("cost_nanos", Some(cost.currency.as_str())),
    }
}
