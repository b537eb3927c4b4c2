//! Quotas: how much a user, or an organisation together, may spend per day or per month, in
//! tokens or in a currency, and the sentence that refuses a message past one (docs/usage.md).
//!
//! A quota is checked when a message would start a turn, inside the transaction that opens it
//! (`storage::rules::open_turn`), under a lock on whoever's spending it counts, so two sends at
//! once cannot both pass its last part, on one server or across replicas. What is spent is
//! summed from the usage rows of the period. A turn still running will spend more than it has
//! recorded, so each one holds back one more model call ([`Hold`]): its first call's projected
//! input plus its model's output cap. What it spends is recorded call by call, so while it runs
//! it counts as what it spent and one call more. A message is refused when the spending plus the
//! holds of the turns running reaches the limit. A turn already running always finishes.
//!
//! So a burst of messages at once starts turns only while the holds leave room, and the spending
//! can pass the limit by at most what the turns that started spend beyond their holds: a turn
//! whose calls each cost less than its hold passes it by less than one call (docs/usage.md).

use portal_core::usage::{Cost, amount, thousands};
use time::{Date, Month, OffsetDateTime, Time};

/// Whose spending a quota counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Spender {
    /// One user's, in all their conversations.
    User { org_id: String, user_id: String },
    /// Everyone's in the organisation, together.
    Organisation { org_id: String },
}

impl Spender {
    /// The key that makes checks of this spender's quotas take turns.
    pub fn lock_key(&self) -> String {
        match self {
            Spender::User { org_id, user_id } => format!("quota user {org_id}/{user_id}"),
            Spender::Organisation { org_id } => format!("quota organisation {org_id}"),
        }
    }
}

/// How long a quota's spending adds up before it starts again, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// From 00:00 UTC to the next.
    Day,
    /// From the first of the month at 00:00 UTC to the next first.
    Month,
}

impl Period {
    /// The period that holds `now_ms`: when it started and when it resets, in milliseconds
    /// since the Unix epoch.
    pub fn around(self, now_ms: i64) -> (i64, i64) {
        let now = OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let today = now.date();
        let (start, next) = match self {
            Period::Day => (today, today.next_day().unwrap_or(today)),
            Period::Month => {
                let first = today.replace_day(1).unwrap_or(today);
                let next = match first.month() {
                    Month::December => {
                        Date::from_calendar_date(first.year() + 1, Month::January, 1)
                    }
                    month => Date::from_calendar_date(first.year(), month.next(), 1),
                }
                .unwrap_or(first);
                (first, next)
            }
        };
        let ms = |date: Date| {
            (date
                .with_time(Time::MIDNIGHT)
                .assume_utc()
                .unix_timestamp_nanos()
                / 1_000_000) as i64
        };
        (ms(start), ms(next))
    }

    fn words(self) -> &'static str {
        match self {
            Period::Day => "today",
            Period::Month => "this month",
        }
    }
}

/// What a quota counts, and up to how much.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Input and output tokens of every call, priced or not.
    Tokens(u64),
    /// What the calls priced in the limit's currency cost; other currencies and unpriced calls
    /// do not count (a tokens quota holds those).
    Cost(Cost),
}

impl Limit {
    fn words(&self, spent: u64) -> String {
        match self {
            Limit::Tokens(_) => format!("{} tokens", thousands(spent)),
            Limit::Cost(cost) => format!("{} {}", amount(spent), cost.currency),
        }
    }

    fn cap(&self) -> u64 {
        match self {
            Limit::Tokens(tokens) => *tokens,
            Limit::Cost(cost) => cost.nanos,
        }
    }
}

/// One limit on one spender's spending.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Quota {
    pub spender: Spender,
    pub period: Period,
    pub limit: Limit,
}

/// What a running turn holds back of its spender's quotas: one more model call, at most its
/// projected input and its model's output cap, in tokens and, for a priced model, in the price's
/// currency.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hold {
    pub tokens: u64,
    pub cost: Option<Cost>,
}

/// What storage found of a quota's spender in the current period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spending {
    /// Spent so far, in the limit's unit (tokens, or nano-units of its currency).
    pub spent: u64,
    /// The spender's turns running now, which will spend more.
    pub running: u64,
    /// What those turns hold back, in the limit's unit.
    pub held: u64,
}

/// Why a message was refused: the quota, what was spent and held, and when it resets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.sentence())]
pub struct QuotaRefusal {
    pub quota: Quota,
    pub spending: Spending,
    pub resets_at_ms: i64,
}

impl Quota {
    /// Whether another turn may start: `Err` when the spending, with what the turns still
    /// running hold back, reaches the limit.
    pub fn check(&self, spending: Spending, now_ms: i64) -> Result<(), QuotaRefusal> {
        if spending.spent.saturating_add(spending.held) < self.limit.cap() {
            return Ok(());
        }
        Err(QuotaRefusal {
            quota: self.clone(),
            spending,
            resets_at_ms: self.period.around(now_ms).1,
        })
    }
}

impl QuotaRefusal {
    fn sentence(&self) -> String {
        let Quota {
            spender,
            period,
            limit,
        } = &self.quota;
        let (who, whose) = match spender {
            Spender::User { .. } => ("You have", "your"),
            Spender::Organisation { .. } => ("Your organisation has", "its"),
        };
        let running = match self.spending.running {
            0 => String::new(),
            1 => ", and a reply still running is expected to spend the rest".into(),
            n => format!(", and {n} replies still running are expected to spend the rest"),
        };
        let resets =
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.resets_at_ms) * 1_000_000)
                .map(|at| {
                    format!(
                        "{}-{:02}-{:02} 00:00 UTC",
                        at.year(),
                        u8::from(at.month()),
                        at.day()
                    )
                })
                .unwrap_or_default();
        format!(
            "{who} used {} of {whose} {} for {}{running}, so this message was not sent. The limit \
             resets at {resets}; send it then, or ask an administrator to raise the limit.",
            limit.words(self.spending.spent),
            limit.words(limit.cap()),
            period.words(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-05 17:56 UTC.
    const NOW: i64 = 1_796_493_360_000;

    fn quota(limit: u64) -> Quota {
        Quota {
            spender: Spender::User {
                org_id: "acme".into(),
                user_id: "alice".into(),
            },
            period: Period::Day,
            limit: Limit::Tokens(limit),
        }
    }

    #[test]
    fn periods_start_and_reset_at_midnight_utc() {
        let day = 86_400_000;
        let midnight = NOW - NOW % day;
        assert_eq!(Period::Day.around(NOW), (midnight, midnight + day));
        // December's month resets on the first of January of the next year.
        let (start, reset) = Period::Month.around(NOW);
        assert_eq!(start, 1_796_083_200_000, "2026-12-01");
        assert_eq!(reset, 1_798_761_600_000, "2027-01-01");
        assert_eq!(Period::Month.around(start), (start, reset));
    }

    #[test]
    fn running_turns_hold_back_what_they_may_spend_so_a_burst_starts_only_what_fits() {
        // 10,000 of 13,000 spent: a turn starts while the holds of those running leave room.
        let spending = |running, held| Spending {
            spent: 10_000,
            running,
            held,
        };
        let q = quota(13_000);
        assert!(q.check(spending(0, 0), NOW).is_ok());
        assert!(q.check(spending(1, 2_999), NOW).is_ok());
        assert!(q.check(spending(1, 3_000), NOW).is_err());
        assert!(q.check(spending(2, 5_000), NOW).is_err());
    }

    #[test]
    fn a_spent_quota_refuses_with_what_was_spent_and_when_it_resets() {
        let refusal = quota(3_000)
            .check(
                Spending {
                    spent: 3_250,
                    running: 0,
                    held: 0,
                },
                NOW,
            )
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "You have used 3,250 tokens of your 3,000 tokens for today, so this message was not \
             sent. The limit resets at 2026-12-06 00:00 UTC; send it then, or ask an \
             administrator to raise the limit."
        );
    }

    #[test]
    fn an_organisation_quota_in_money_names_the_currency() {
        let q = Quota {
            spender: Spender::Organisation {
                org_id: "acme".into(),
            },
            period: Period::Month,
            limit: Limit::Cost(Cost {
                currency: "EUR".into(),
                nanos: 10_000_000_000,
            }),
        };
        let refusal = q
            .check(
                Spending {
                    spent: 9_500_000_000,
                    running: 1,
                    held: 600_000_000,
                },
                NOW,
            )
            .unwrap_err();
        assert!(
            refusal.to_string().starts_with(
                "Your organisation has used 9.50 EUR of its 10.00 EUR for this month, and a \
                 reply still running is expected to spend the rest"
            ),
            "{refusal}"
        );
    }
}
