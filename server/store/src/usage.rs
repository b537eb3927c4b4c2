//! What the operator's usage report (`portal usage`, `GET /api/usage`) reads from a person: days
//! written `YYYY-MM-DD` in UTC and the grouping's name, and the table the command prints.

use portal_core::usage::{Cost, Tally};
use serde::Serialize;
use thiserror::Error;

use crate::days::{DAY_MS, civil_from_days, days_from_civil};
use crate::{UsageGrouping, UsageLine};

/// Why a report's question was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReportError {
    #[error(
        "`{field}` is `{value}`, which is not a day; write it as YYYY-MM-DD, such as 2026-12-05"
    )]
    Day { field: &'static str, value: String },
    #[error("`by` is `{0}`; group by day, user, model or agent")]
    Grouping(String),
    #[error("`since` ({since}) is after `until` ({until}); give the earlier day first")]
    Backwards { since: String, until: String },
}

/// The day `text` (`YYYY-MM-DD`) names, as days since 1970-01-01.
pub fn parse_day(field: &'static str, text: &str) -> Result<i64, ReportError> {
    let refused = || ReportError::Day {
        field,
        value: text.to_string(),
    };
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shaped {
        return Err(refused());
    }
    let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().map_err(|_| refused());
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    if !(1..=12).contains(&month) || day == 0 {
        return Err(refused());
    }
    let days = days_from_civil(i64::from(year), month, day);
    // A day past the month's end (2026-02-30) comes back as another date.
    if civil_from_days(days) != (i64::from(year), month, day) {
        return Err(refused());
    }
    Ok(days)
}

/// The days `since` and `until` (both included, either left out) as the times a report counts
/// from and up to (excluded), in milliseconds since the epoch.
pub fn period(
    since: Option<&str>,
    until: Option<&str>,
) -> Result<(Option<i64>, Option<i64>), ReportError> {
    let since_day = since.map(|s| parse_day("since", s)).transpose()?;
    let until_day = until.map(|u| parse_day("until", u)).transpose()?;
    if let (Some(from), Some(to)) = (since_day, until_day)
        && from > to
    {
        return Err(ReportError::Backwards {
            since: since.unwrap_or_default().to_string(),
            until: until.unwrap_or_default().to_string(),
        });
    }
    Ok((
        since_day.map(|d| d * DAY_MS),
        until_day.map(|d| (d + 1) * DAY_MS),
    ))
}

/// The grouping `name` (`day`, `user`, `model` or `agent`) names.
pub fn parse_grouping(name: &str) -> Result<UsageGrouping, ReportError> {
    match name {
        "day" => Ok(UsageGrouping::Day),
        "user" => Ok(UsageGrouping::User),
        "model" => Ok(UsageGrouping::Model),
        "agent" => Ok(UsageGrouping::Agent),
        other => Err(ReportError::Grouping(other.to_string())),
    }
}

/// A usage report as `portal usage --json` prints it and `GET /api/usage` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub by: UsageGrouping,
    pub lines: Vec<UsageLine>,
    /// What every line spent together, keyed `total`.
    pub total: UsageLine,
}

impl Report {
    /// The report of `lines`, with their total.
    pub fn new(by: UsageGrouping, lines: Vec<UsageLine>) -> Self {
        let mut total = UsageLine {
            key: "total".into(),
            spent: Tally::default(),
            estimated_calls: 0,
        };
        for line in &lines {
            total.absorb(&line.spent, line.estimated_calls);
        }
        total
            .spent
            .costs
            .sort_by(|a, b| a.currency.cmp(&b.currency));
        Report { by, lines, total }
    }
}

/// The report as the command prints it: a line per key, aligned, then the total. Counts with
/// estimated calls among them are marked `~`; a line none of whose calls was priced says
/// `unpriced`, one with some unpriced calls adds how many.
pub fn table(report: &Report) -> String {
    let lines = &report.lines;
    let header = [
        report.by.as_str(),
        "calls",
        "input",
        "cached",
        "output",
        "reasoning",
        "cost",
    ]
    .map(String::from);
    let mut rows = vec![header];
    rows.extend(lines.iter().map(row));
    rows.push(row(&report.total));
    let widths: Vec<usize> = (0..7)
        .map(|column| {
            rows.iter()
                .map(|r| r[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for (i, row) in rows.iter().enumerate() {
        if i == rows.len() - 1 {
            text.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * 6));
            text.push('\n');
        }
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            let pad = widths[column] - cell.chars().count();
            if column == 0 || column == 6 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    if lines.iter().any(|l| l.estimated_calls > 0) {
        text.push_str("~ counts include the portal's estimate for calls the provider reported no tokens for\n");
    }
    text
}

fn row(line: &UsageLine) -> [String; 7] {
    let spent = &line.spent;
    let mark = if line.estimated_calls > 0 { "~" } else { "" };
    let tokens = |n: u64| format!("{mark}{}", grouped(n));
    let costs: Vec<String> = spent.costs.iter().map(Cost::display).collect();
    let cost = match (costs.is_empty(), spent.unpriced_calls) {
        (true, _) => "unpriced".to_string(),
        (false, 0) => costs.join(" + "),
        (false, n) => format!("{} (+{n} unpriced)", costs.join(" + ")),
    };
    [
        line.key.clone(),
        grouped(spent.calls),
        tokens(spent.tokens.input),
        tokens(spent.tokens.cached_input),
        tokens(spent.tokens.output),
        tokens(spent.tokens.reasoning),
        cost,
    ]
}

/// A count with thousands separated by commas: `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut text = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::days::day_text;

    #[test]
    fn days_read_and_write_as_utc_dates() {
        assert_eq!(parse_day("since", "1970-01-01"), Ok(0));
        assert_eq!(parse_day("since", "2000-03-01"), Ok(11_017));
        assert_eq!(day_text(11_017), "2000-03-01");
        assert_eq!(day_text(20_427), "2025-12-05");
        assert_eq!(
            parse_day("since", "2024-02-29").map(day_text).as_deref(),
            Ok("2024-02-29")
        );
        for bad in [
            "2026-02-30",
            "2025-02-29",
            "2026-13-01",
            "2026-1-01",
            "26-01-01",
            "yesterday",
            "2026-00-10",
        ] {
            assert!(parse_day("since", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_period_counts_both_days_whole() {
        assert_eq!(
            period(Some("1970-01-02"), Some("1970-01-02")),
            Ok((Some(DAY_MS), Some(2 * DAY_MS)))
        );
        assert!(matches!(
            period(Some("1970-01-03"), Some("1970-01-02")),
            Err(ReportError::Backwards { .. })
        ));
    }

    #[test]
    fn counts_are_grouped_in_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }
}
