//! What a model call cost: the usage row every call leaves, compaction included, priced at the
//! turn's model (rule C11).
//!
//! Tokens are kept as the provider reported them, the cached part of the input and the reasoning
//! part of the output apart; a call the provider reported nothing for is counted with the
//! portal's estimate and marked so. A price is stored with the row it priced, so a row keeps its
//! cost when the models file changes. Amounts are whole nano-units of their currency
//! (10⁻⁹), so sums are exact.

use serde::{Deserialize, Serialize};

/// What a model call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPurpose {
    /// A call of the agent loop on the turn's own model; it sets the turn's context size.
    Turn,
    /// A compaction summary, made on a separate instance of the turn's model (rule C11).
    Compaction,
    /// A summary other than compaction, such as a conversation title.
    Summary,
    /// A review of the turn's output, such as a guardrail check.
    Review,
}

impl CallPurpose {
    /// The name stored in usage rows.
    pub fn as_str(self) -> &'static str {
        match self {
            CallPurpose::Turn => "turn",
            CallPurpose::Compaction => "compaction",
            CallPurpose::Summary => "summary",
            CallPurpose::Review => "review",
        }
    }
}

/// The tokens one model call read and wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Every token the call read, cached ones included.
    pub input: u64,
    /// Of `input`, the tokens read from the provider's prompt cache (0 where not reported).
    pub cached_input: u64,
    /// Every token the call wrote, reasoning included.
    pub output: u64,
    /// Of `output`, the model's reasoning (0 where not reported).
    pub reasoning: u64,
    /// Whether the portal counted these with its estimate because the provider reported none.
    pub estimated: bool,
}

impl Tokens {
    /// Tokens as a provider reported them, without the parts it did not break down.
    pub fn reported(input: u64, output: u64) -> Self {
        Tokens {
            input,
            output,
            ..Tokens::default()
        }
    }

    /// Tokens the portal estimated.
    pub fn estimated(input: u64, output: u64) -> Self {
        Tokens {
            estimated: true,
            ..Tokens::reported(input, output)
        }
    }

    /// Adds another call's or set of calls' tokens; estimated when either was.
    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.cached_input = self.cached_input.saturating_add(other.cached_input);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.estimated |= other.estimated;
    }

    /// Input and output together: what a quota in tokens counts.
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// One model call's usage. `model` is the model it is priced at: the turn's model for a
/// compaction call (rule C11), whose `price` it carries, `None` where the models file gives none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub purpose: CallPurpose,
    pub model: String,
    pub tokens: Tokens,
    pub price: Option<Price>,
}

impl Usage {
    /// What the call cost at its price, `None` when it has none.
    pub fn cost(&self) -> Option<Cost> {
        self.price.as_ref().map(|price| price.cost(&self.tokens))
    }
}

/// A model's price per million tokens, each rate in micro-units of `currency` (10⁻⁶).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Price {
    /// An ISO 4217 code, such as `USD`.
    pub currency: String,
    pub input_micros: u64,
    pub cached_input_micros: u64,
    pub output_micros: u64,
}

/// Why a price was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    #[error(
        "the price's `{field}` is {value}; give a number of {currency} per million tokens from 0 to 1,000,000"
    )]
    Rate {
        field: &'static str,
        value: String,
        currency: String,
    },
    #[error("the price's currency is `{0}`; give a three-letter code such as `USD` or `EUR`")]
    Currency(String),
}

/// The most a price may ask per million tokens, in units of its currency.
pub const MAX_RATE: f64 = 1_000_000.0;

impl Price {
    /// A price from rates in units of `currency` per million tokens, as a models file writes
    /// them (`input = 2.50`); a cached input rate left out is the input rate.
    pub fn per_million(
        currency: &str,
        input: f64,
        cached_input: Option<f64>,
        output: f64,
    ) -> Result<Price, PriceError> {
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(PriceError::Currency(currency.to_string()));
        }
        let micros = |field: &'static str, rate: f64| {
            if rate.is_finite() && (0.0..=MAX_RATE).contains(&rate) {
                Ok((rate * 1e6).round() as u64)
            } else {
                Err(PriceError::Rate {
                    field,
                    value: rate.to_string(),
                    currency: currency.to_string(),
                })
            }
        };
        Ok(Price {
            currency: currency.to_string(),
            input_micros: micros("input", input)?,
            cached_input_micros: micros("cached_input", cached_input.unwrap_or(input))?,
            output_micros: micros("output", output)?,
        })
    }

    /// What `tokens` cost at this price: cached input at the cached rate, the rest of the input
    /// at the input rate, all output (reasoning included) at the output rate, rounded to the
    /// nearest nano-unit.
    pub fn cost(&self, tokens: &Tokens) -> Cost {
        let cached = tokens.cached_input.min(tokens.input);
        let micro_tokens = u128::from(tokens.input - cached) * u128::from(self.input_micros)
            + u128::from(cached) * u128::from(self.cached_input_micros)
            + u128::from(tokens.output) * u128::from(self.output_micros);
        // Micro-units per million tokens are nano-units per thousand tokens.
        let nanos = (micro_tokens + 500) / 1_000;
        Cost {
            currency: self.currency.clone(),
            nanos: u64::try_from(nanos).unwrap_or(u64::MAX),
        }
    }
}

/// An amount of money in nano-units of its currency.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cost {
    pub currency: String,
    pub nanos: u64,
}

impl Cost {
    /// The amount in words a person reads: two decimals from one unit up, otherwise two
    /// significant digits (at most six decimals), with the currency after it, e.g.
    /// `12.50 USD`, `0.0034 USD`, `0 USD`.
    pub fn display(&self) -> String {
        format!("{} {}", amount(self.nanos), self.currency)
    }
}

/// What a set of calls spent together: a turn's, a conversation's, a report line's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub calls: u64,
    /// The calls' tokens summed; `estimated` when any call's were.
    pub tokens: Tokens,
    /// What the priced calls cost, one amount per currency in the order first met.
    pub costs: Vec<Cost>,
    /// Calls without a price, whose tokens count but whose cost is unknown.
    pub unpriced_calls: u64,
}

impl Tally {
    /// Adds one call.
    pub fn add(&mut self, usage: &Usage) {
        self.calls += 1;
        self.tokens.add(&usage.tokens);
        match usage.cost() {
            Some(cost) => self.add_cost(&cost),
            None => self.unpriced_calls += 1,
        }
    }

    /// Adds what another set of calls spent.
    pub fn merge(&mut self, other: &Tally) {
        self.calls = self.calls.saturating_add(other.calls);
        self.tokens.add(&other.tokens);
        for cost in &other.costs {
            self.add_cost(cost);
        }
        self.unpriced_calls = self.unpriced_calls.saturating_add(other.unpriced_calls);
    }

    fn add_cost(&mut self, cost: &Cost) {
        match self.costs.iter_mut().find(|c| c.currency == cost.currency) {
            Some(total) => total.nanos = total.nanos.saturating_add(cost.nanos),
            None => self.costs.push(cost.clone()),
        }
    }

    /// What it cost in words, or its tokens when no call was priced: `0.0034 USD`, amounts in
    /// several currencies joined with ` + `, or `1,234 tokens`; a `~` before it when some
    /// tokens were estimated.
    pub fn short(&self) -> String {
        let estimated = if self.tokens.estimated { "~" } else { "" };
        match self.cost_text() {
            Some(cost) => format!("{estimated}{cost}"),
            None => format!("{estimated}{} tokens", thousands(self.tokens.total())),
        }
    }

    /// The calls and their tokens in words: `2 calls · 1,200 tokens in (400 cached) · 80 out
    /// (12 reasoning)`, then ` · estimated` when some were, and ` · 1 call unpriced` when some
    /// cost is unknown.
    pub fn details(&self) -> String {
        let t = &self.tokens;
        let mut parts = vec![
            match self.calls {
                1 => "1 call".to_string(),
                n => format!("{} calls", thousands(n)),
            },
            format!("{} tokens in", thousands(t.input)),
            format!("{} out", thousands(t.output)),
        ];
        if t.cached_input > 0 {
            parts[1].push_str(&format!(" ({} cached)", thousands(t.cached_input)));
        }
        if t.reasoning > 0 {
            parts[2].push_str(&format!(" ({} reasoning)", thousands(t.reasoning)));
        }
        if t.estimated {
            parts.push("estimated".into());
        }
        if self.unpriced_calls > 0 && !self.costs.is_empty() {
            parts.push(match self.unpriced_calls {
                1 => "1 call unpriced".into(),
                n => format!("{} calls unpriced", thousands(n)),
            });
        }
        parts.join(" · ")
    }

    /// The cost in words (`0.0034 USD`, amounts in several currencies joined with ` + `), `None`
    /// when no call was priced.
    pub fn cost_text(&self) -> Option<String> {
        (!self.costs.is_empty()).then(|| {
            self.costs
                .iter()
                .map(Cost::display)
                .collect::<Vec<_>>()
                .join(" + ")
        })
    }
}

/// What a conversation spent, as `GET /api/conversations/{id}/usage` answers it: each turn's
/// calls together, and all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationUsage {
    /// Turns that made calls, in order.
    pub turns: Vec<TurnUsage>,
    pub total: Tally,
}

/// One turn's calls together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnUsage {
    pub turn: u32,
    pub tally: Tally,
}

impl ConversationUsage {
    /// Sums `calls`, each the usage row of a turn, in any order.
    pub fn of<'a>(calls: impl IntoIterator<Item = (u32, &'a Usage)>) -> Self {
        let mut spent = ConversationUsage::default();
        for (turn, usage) in calls {
            spent.total.add(usage);
            let at = match spent.turns.binary_search_by_key(&turn, |t| t.turn) {
                Ok(at) => at,
                Err(at) => {
                    spent.turns.insert(
                        at,
                        TurnUsage {
                            turn,
                            tally: Tally::default(),
                        },
                    );
                    at
                }
            };
            spent.turns[at].tally.add(usage);
        }
        spent
    }

    /// Turn `turn`'s calls, if it made any.
    pub fn turn(&self, turn: u32) -> Option<&Tally> {
        self.turns
            .binary_search_by_key(&turn, |t| t.turn)
            .ok()
            .map(|at| &self.turns[at].tally)
    }
}

/// A whole number with its thousands set apart by commas: `1,250,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Nano-units written as a decimal amount, as [`Cost::display`] describes.
pub fn amount(nanos: u64) -> String {
    const UNIT: u64 = 1_000_000_000;
    if nanos == 0 {
        return "0".into();
    }
    if nanos >= UNIT - 5_000_000 {
        let cents = (u128::from(nanos) + 5_000_000) / 10_000_000;
        return format!("{}.{:02}", cents / 100, cents % 100);
    }
    let mut decimals = 2;
    while decimals < 6 && nanos < 10 * 10u64.pow(9 - decimals) {
        decimals += 1;
    }
    let step = 10u64.pow(9 - decimals);
    let rounded = (nanos + step / 2) / step;
    let text = format!("0.{:0width$}", rounded, width = decimals as usize);
    if rounded == 0 {
        return format!("<0.{}1", "0".repeat(decimals as usize - 1));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd(input: f64, cached: Option<f64>, output: f64) -> Price {
        Price::per_million("USD", input, cached, output).unwrap()
    }

    #[test]
    fn cached_input_is_priced_apart_from_the_rest_of_the_input() {
        let price = usd(2.5, Some(1.25), 10.0);
        let tokens = Tokens {
            input: 1_000_000,
            cached_input: 400_000,
            output: 100_000,
            reasoning: 50_000,
            estimated: false,
        };
        // 600k at 2.50, 400k at 1.25, 100k at 10.
        assert_eq!(
            price.cost(&tokens).nanos,
            1_500_000_000 + 500_000_000 + 1_000_000_000
        );
    }

    #[test]
    fn a_cached_rate_left_out_is_the_input_rate() {
        assert_eq!(usd(3.0, None, 15.0).cached_input_micros, 3_000_000);
    }

    #[test]
    fn one_token_at_a_small_rate_still_costs_its_share() {
        // 0.15 per million is 150 nano-units a token.
        assert_eq!(
            usd(0.15, None, 0.6).cost(&Tokens::reported(1, 0)).nanos,
            150
        );
    }

    #[test]
    fn malformed_prices_are_refused_with_the_field_named() {
        for bad in [f64::NAN, f64::INFINITY, -1.0, 2e6] {
            let error = Price::per_million("USD", bad, None, 1.0).unwrap_err();
            assert!(error.to_string().contains("`input`"), "{error}");
        }
        assert!(matches!(
            Price::per_million("dollars", 1.0, None, 1.0),
            Err(PriceError::Currency(_))
        ));
    }

    #[test]
    fn a_tally_sums_tokens_and_keeps_each_currency_apart() {
        let call = |price: Option<Price>, estimated| Usage {
            purpose: CallPurpose::Turn,
            model: "m".into(),
            tokens: Tokens {
                estimated,
                ..Tokens::reported(1_000_000, 0)
            },
            price,
        };
        let mut tally = Tally::default();
        tally.add(&call(Some(usd(1.0, None, 0.0)), false));
        tally.add(&call(Some(usd(2.0, None, 0.0)), true));
        tally.add(&call(None, false));
        tally.add(&call(
            Some(Price::per_million("EUR", 0.5, None, 0.0).unwrap()),
            false,
        ));
        assert_eq!(tally.calls, 4);
        assert_eq!(tally.tokens.input, 4_000_000);
        assert!(tally.tokens.estimated);
        assert_eq!(tally.unpriced_calls, 1);
        assert_eq!(tally.cost_text().as_deref(), Some("3.00 USD + 0.50 EUR"));
        assert_eq!(tally.short(), "~3.00 USD + 0.50 EUR");
        assert_eq!(
            tally.details(),
            "4 calls · 4,000,000 tokens in · 0 out · estimated · 1 call unpriced"
        );
    }

    #[test]
    fn a_conversation_sums_its_turns_apart_and_together() {
        let call = |input| Usage {
            purpose: CallPurpose::Turn,
            model: "m".into(),
            tokens: Tokens::reported(input, 5),
            price: None,
        };
        let (a, b, c) = (call(100), call(2_000), call(30));
        let spent = ConversationUsage::of([(2, &a), (1, &b), (2, &c)]);
        assert_eq!(
            spent.turns.iter().map(|t| t.turn).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(spent.turn(2).map(|t| t.tokens.input), Some(130));
        assert_eq!(spent.turn(3), None);
        assert_eq!(spent.total.short(), "2,145 tokens");
        assert_eq!(spent.total.details(), "3 calls · 2,130 tokens in · 15 out");
    }

    #[test]
    fn amounts_read_as_a_person_reads_money() {
        let cases = [
            (0, "0"),
            (1, "<0.000001"),
            (3_400_000, "0.0034"),
            (12_000_000, "0.012"),
            (123_456_789, "0.12"),
            (999_999_999, "1.00"),
            (12_500_000_000, "12.50"),
        ];
        for (nanos, text) in cases {
            assert_eq!(amount(nanos), text, "{nanos}");
        }
    }
}
