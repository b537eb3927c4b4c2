//! The usage report on PostgreSQL: [`report::statement`] with `$N` placeholders.

use postgres::types::ToSql;

use super::connection::Tx;
use portal_store::report::{self, Bound, GroupRow};
use portal_store::{Result, UsageLine, UsageQuery};

pub(super) fn report(t: &mut Tx<'_>, query: &UsageQuery) -> Result<Vec<UsageLine>> {
    let (sql, bound) = report::statement(query, |n| format!("${n}"));
    let values: Vec<&(dyn ToSql + Sync)> = bound
        .iter()
        .map(|value| match value {
            Bound::Text(text) => text as &(dyn ToSql + Sync),
            Bound::Time(ms) => ms as &(dyn ToSql + Sync),
        })
        .collect();
    let rows = t
        .query(&sql, &values)?
        .iter()
        .map(|row| GroupRow {
            key: row.get(0),
            currency: row.get(1),
            counts: [
                row.get(2),
                row.get(3),
                row.get(4),
                row.get(5),
                row.get(6),
                row.get(7),
            ],
            cost_nanos: row.get(8),
        })
        .collect();
    report::lines(query.by, rows)
}
