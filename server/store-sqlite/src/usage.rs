//! The usage report on SQLite: [`report::statement`] with `?N` placeholders.

use rusqlite::{Connection, ToSql};

use portal_store::report::{self, Bound, GroupRow};
use portal_store::{Result, UsageLine, UsageQuery};

pub(super) fn report(c: &Connection, query: &UsageQuery) -> Result<Vec<UsageLine>> {
    let (sql, bound) = report::statement(query, |n| format!("?{n}"));
    let values: Vec<&dyn ToSql> = bound
        .iter()
        .map(|value| match value {
            Bound::Text(text) => text as &dyn ToSql,
            Bound::Time(ms) => ms as &dyn ToSql,
        })
        .collect();
    let mut statement = c.prepare_cached(&sql)?;
    let rows = statement
        .query_map(&values[..], |row| {
            Ok(GroupRow {
                key: row.get(0)?,
                currency: row.get(1)?,
                counts: [
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                    row.get(7)?,
                ],
                cost_nanos: row.get(8)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    report::lines(query.by, rows)
}
