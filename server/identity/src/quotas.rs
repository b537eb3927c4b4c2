//! An organisation's usage quotas, as `organisation.toml` lists them (docs/usage.md):
//!
//! ```toml
//! [[quotas]]
//! applies_to = "each_user"   # each user's own spending; or "organisation": everyone's together
//! period = "day"             # or "month"; both in UTC
//! tokens = 200000            # input and output tokens; or cost = 5.00 with currency = "USD"
//!
//! [[quotas]]
//! applies_to = "each_user"
//! user = "alice"             # this user only
//! period = "month"
//! cost = 40.0
//! currency = "USD"
//! ```

use std::path::Path;

use portal_core::usage::Cost;
use serde::Deserialize;

use super::{Caller, ConfigError};
use portal_store::quota::{Limit, Period, Quota, Spender};

/// One `[[quotas]]` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QuotaEntry {
    applies_to: String,
    #[serde(default)]
    user: Option<String>,
    period: String,
    #[serde(default)]
    tokens: Option<u64>,
    #[serde(default)]
    cost: Option<f64>,
    #[serde(default)]
    currency: Option<String>,
}

/// A quota of the organisation, before it is applied to a caller.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaRule {
    /// Each user's own spending, or (`false`) everyone's together.
    each_user: bool,
    /// The one user it applies to, when it names one.
    user: Option<String>,
    period: Period,
    limit: Limit,
}

impl QuotaRule {
    /// The quota this rule holds `caller` to, if any.
    pub fn for_caller(&self, caller: &Caller) -> Option<Quota> {
        if self.user.as_ref().is_some_and(|user| *user != caller.user) {
            return None;
        }
        let spender = if self.each_user {
            Spender::User {
                org_id: caller.organisation.clone(),
                user_id: caller.user.clone(),
            }
        } else {
            Spender::Organisation {
                org_id: caller.organisation.clone(),
            }
        };
        Some(Quota {
            spender,
            period: self.period,
            limit: self.limit.clone(),
        })
    }
}

/// The most a cost quota may be, in units of its currency.
const MAX_COST: f64 = 1_000_000_000.0;

/// Reads the entries of `path`'s `quotas`, naming the entry and what to change when one is wrong.
pub(super) fn quota_rules(
    path: &Path,
    entries: Vec<QuotaEntry>,
) -> Result<Vec<QuotaRule>, ConfigError> {
    entries
        .into_iter()
        .enumerate()
        .map(|(at, entry)| {
            rule(entry).map_err(|problem| ConfigError::Field {
                path: path.to_path_buf(),
                field: "quotas",
                problem: format!("quota {}: {problem}", at + 1),
            })
        })
        .collect()
}

fn rule(entry: QuotaEntry) -> Result<QuotaRule, String> {
    let each_user = match entry.applies_to.as_str() {
        "each_user" => true,
        "organisation" => false,
        other => {
            return Err(format!(
                "`applies_to` is `{other}`; write `each_user` or `organisation`"
            ));
        }
    };
    if entry.user.is_some() && !each_user {
        return Err("`user` names one user of an `each_user` quota; remove it, or write `applies_to = \"each_user\"`".into());
    }
    let period = match entry.period.as_str() {
        "day" => Period::Day,
        "month" => Period::Month,
        other => return Err(format!("`period` is `{other}`; write `day` or `month`")),
    };
    let limit = match (entry.tokens, entry.cost, entry.currency) {
        (Some(tokens), None, None) => Limit::Tokens(tokens),
        (None, Some(cost), Some(currency)) => {
            if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(format!(
                    "`currency` is `{currency}`; write a three-letter code such as `USD`"
                ));
            }
            if !(cost.is_finite() && (0.0..=MAX_COST).contains(&cost)) {
                return Err(format!(
                    "`cost` is {cost}; write an amount of {currency} from 0 to 1,000,000,000"
                ));
            }
            Limit::Cost(Cost {
                currency,
                nanos: (cost * 1e9).round() as u64,
            })
        }
        _ => {
            return Err("give either `tokens`, or `cost` with its `currency`, and not both".into());
        }
    };
    Ok(QuotaRule {
        each_user,
        user: entry.user,
        period,
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads one `[[quotas]]` entry: its rule, or the problem in words.
    fn check(entry: &str) -> Result<QuotaRule, String> {
        let entry: QuotaEntry = toml::from_str(entry).map_err(|e| e.message().to_string())?;
        rule(entry)
    }

    #[test]
    fn malformed_quotas_are_refused_saying_what_to_write() {
        let cases = [
            (
                "applies_to = \"everyone\"\nperiod = \"day\"\ntokens = 5",
                "`applies_to` is `everyone`; write `each_user` or `organisation`",
            ),
            (
                "applies_to = \"each_user\"\nperiod = \"week\"\ntokens = 5",
                "`period` is `week`; write `day` or `month`",
            ),
            (
                "applies_to = \"each_user\"\nperiod = \"day\"\ntokens = 5\ncost = 1.0\ncurrency = \"USD\"",
                "give either `tokens`, or `cost` with its `currency`, and not both",
            ),
            (
                "applies_to = \"each_user\"\nperiod = \"day\"\ncost = 1.0",
                "give either `tokens`, or `cost` with its `currency`, and not both",
            ),
            (
                "applies_to = \"each_user\"\nperiod = \"day\"\ncost = -1.0\ncurrency = \"USD\"",
                "`cost` is -1; write an amount of USD from 0 to 1,000,000,000",
            ),
            (
                "applies_to = \"each_user\"\nperiod = \"day\"\ncost = nan\ncurrency = \"USD\"",
                "`cost` is NaN; write an amount of USD from 0 to 1,000,000,000",
            ),
            (
                "applies_to = \"each_user\"\nperiod = \"day\"\ncost = 1.0\ncurrency = \"usd\"",
                "`currency` is `usd`; write a three-letter code such as `USD`",
            ),
            (
                "applies_to = \"organisation\"\nuser = \"alice\"\nperiod = \"day\"\ntokens = 5",
                "`user` names one user of an `each_user` quota; remove it, or write `applies_to = \"each_user\"`",
            ),
        ];
        for (entry, problem) in cases {
            assert_eq!(check(entry), Err(problem.to_string()), "{entry}");
        }
        assert!(
            check("applies_to = \"each_user\"\nperiod = \"day\"\ntokens = -5")
                .is_err_and(|e| e.contains("invalid value")),
            "a negative number of tokens is not read"
        );
    }

    #[test]
    fn a_quota_for_one_user_holds_only_them() {
        let rule = check(
            "applies_to = \"each_user\"\nuser = \"alice\"\nperiod = \"month\"\ncost = 40.5\ncurrency = \"EUR\"",
        )
        .expect("a rule");
        let caller = |user: &str| Caller {
            organisation: "acme".into(),
            user: user.into(),
            admin: false,
        };
        let quota = rule.for_caller(&caller("alice")).expect("alice's");
        assert_eq!(
            quota.limit,
            Limit::Cost(Cost {
                currency: "EUR".into(),
                nanos: 40_500_000_000
            })
        );
        assert_eq!(rule.for_caller(&caller("bob")), None);
    }
}
