//! The usage report ([`Storage::usage_report`](super::Storage::usage_report)), one statement
//! for both databases: the database sums the rows of each key and currency, and this module
//! folds a key's currencies into one line.

use std::collections::BTreeMap;

use portal_core::usage::{Cost, Tally};
use serde::Serialize;

use super::{Result, StorageError};
use crate::days::{DAY_MS, day_text};

/// Which usage rows a report counts, and what it groups them by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageQuery {
    /// The organisation whose rows count; `None` for every organisation (the command line only).
    pub org_id: Option<String>,
    /// Only this user's rows.
    pub user_id: Option<String>,
    /// Rows recorded at or after this time, in milliseconds since the Unix epoch.
    pub since_ms: Option<i64>,
    /// Rows recorded before this time.
    pub until_ms: Option<i64>,
    pub by: UsageGrouping,
}

/// What a report's lines are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageGrouping {
    /// A line per day, `YYYY-MM-DD` in UTC, of the time each row was recorded.
    #[default]
    Day,
    /// A line per user: `org/user` when the report spans organisations.
    User,
    /// A line per model the calls were priced at.
    Model,
    /// A line per agent.
    Agent,
}

impl UsageGrouping {
    /// The grouping's name, as `--by` and `by=` take it.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageGrouping::Day => "day",
            UsageGrouping::User => "user",
            UsageGrouping::Model => "model",
            UsageGrouping::Agent => "agent",
        }
    }
}

/// One line of a report: what the calls of one day, user, model or agent spent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageLine {
    pub key: String,
    /// Calls, tokens, the cost in each currency, and how many calls had no price (a line whose
    /// calls were all unpriced has no cost at all, never a cost of 0).
    #[serde(flatten)]
    pub spent: Tally,
    /// Of the calls, those whose tokens are the portal's estimate.
    pub estimated_calls: u64,
}

impl UsageLine {
    /// Adds what another set of calls spent.
    pub fn absorb(&mut self, spent: &Tally, estimated_calls: u64) {
        self.spent.merge(spent);
        self.estimated_calls = self.estimated_calls.saturating_add(estimated_calls);
    }
}

/// A value the report's statement binds.
#[derive(Debug)]
pub enum Bound<'q> {
    Text(&'q str),
    Time(i64),
}

/// The report's statement, its placeholders written by `placeholder` (`?1` or `$1`), and the
/// values they bind. Each row is one key and currency: the key as text, the currency (null for
/// unpriced calls), then the calls, the four token sums, the estimated calls and the cost.
pub fn statement(query: &UsageQuery, placeholder: fn(usize) -> String) -> (String, Vec<Bound<'_>>) {
    let (key, group) = match query.by {
        UsageGrouping::Day => (
            format!("CAST(recorded_at / {DAY_MS} AS TEXT)"),
            format!("recorded_at / {DAY_MS}"),
        ),
        UsageGrouping::User if query.org_id.is_none() => {
            ("org_id || '/' || user_id".into(), "org_id, user_id".into())
        }
        UsageGrouping::User => ("user_id".into(), "user_id".into()),
        UsageGrouping::Model => ("model".into(), "model".into()),
        UsageGrouping::Agent => ("agent_id".into(), "agent_id".into()),
    };
    let wanted = [
        ("org_id =", query.org_id.as_deref().map(Bound::Text)),
        ("user_id =", query.user_id.as_deref().map(Bound::Text)),
        ("recorded_at >=", query.since_ms.map(Bound::Time)),
        ("recorded_at <", query.until_ms.map(Bound::Time)),
    ];
    let mut conditions = Vec::new();
    let mut bound = Vec::new();
    for (column, value) in wanted {
        if let Some(value) = value {
            bound.push(value);
            conditions.push(format!("{column} {}", placeholder(bound.len())));
        }
    }
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    };
    let sql = format!(
        "SELECT {key}, currency, COUNT(*),
                CAST(SUM(input_tokens) AS BIGINT), CAST(SUM(cached_input_tokens) AS BIGINT),
                CAST(SUM(output_tokens) AS BIGINT), CAST(SUM(reasoning_tokens) AS BIGINT),
                CAST(SUM(CASE WHEN estimated THEN 1 ELSE 0 END) AS BIGINT),
                CAST(SUM(cost_nanos) AS BIGINT)
         FROM usage {filter}
         GROUP BY {group}, currency"
    );
    (sql, bound)
}

/// One row of the report's statement: a key's calls in one currency.
#[derive(Debug)]
pub struct GroupRow {
    pub key: String,
    pub currency: Option<String>,
    /// Calls, input, cached input, output and reasoning tokens, estimated calls.
    pub counts: [i64; 6],
    pub cost_nanos: Option<i64>,
}

/// The report's lines from its statement's rows, in key order (days oldest first).
pub fn lines(by: UsageGrouping, rows: Vec<GroupRow>) -> Result<Vec<UsageLine>> {
    let count = |value: i64| {
        u64::try_from(value).map_err(|_| StorageError::Unreadable {
            what: "usage report",
            detail: format!("a sum of {value}, below zero"),
        })
    };
    let mut lines: BTreeMap<String, UsageLine> = BTreeMap::new();
    for row in rows {
        let key = match by {
            UsageGrouping::Day => {
                let day: i64 = row.key.parse().map_err(|_| StorageError::Unreadable {
                    what: "usage report",
                    detail: format!("`{}` is not a day number", row.key),
                })?;
                day_text(day)
            }
            _ => row.key,
        };
        let [calls, input, cached_input, output, reasoning, estimated] = row.counts;
        let calls = count(calls)?;
        let estimated = count(estimated)?;
        let mut spent = Tally {
            calls,
            ..Tally::default()
        };
        spent.tokens.input = count(input)?;
        spent.tokens.cached_input = count(cached_input)?;
        spent.tokens.output = count(output)?;
        spent.tokens.reasoning = count(reasoning)?;
        spent.tokens.estimated = estimated > 0;
        match (row.currency, row.cost_nanos) {
            (Some(currency), Some(nanos)) => spent.costs.push(Cost {
                currency,
                nanos: count(nanos)?,
            }),
            _ => spent.unpriced_calls = calls,
        }
        lines
            .entry(key.clone())
            .or_insert_with(|| UsageLine {
                key,
                spent: Tally::default(),
                estimated_calls: 0,
            })
            .absorb(&spent, estimated);
    }
    let mut lines: Vec<UsageLine> = lines.into_values().collect();
    for line in &mut lines {
        line.spent.costs.sort_by(|a, b| a.currency.cmp(&b.currency));
    }
    Ok(lines)
}
