//! What a turn about to start may cost in one model call: the hold it keeps on its spender's
//! quotas while it runs (docs/usage.md). Its input is projected from the transcript, the newest
//! context size a call reported (rule C11) and an estimate of what came after it; its output is
//! the model's cap.

use crate::model::ModelCapabilities;
use crate::tokens::{EstimateCounter, messages_tokens};
use crate::transcript::Transcript;
use crate::usage::{Cost, Price, Tokens};

/// The most one call of `transcript`'s newest turn may cost on `model`: its projected input
/// and the model's output cap, and their price when the model has one.
pub fn next_call(
    transcript: &Transcript,
    model: &ModelCapabilities,
    price: Option<&Price>,
) -> (Tokens, Option<Cost>) {
    let reported = transcript
        .turns
        .iter()
        .rposition(|turn| turn.context_tokens.is_some());
    let (known, after) = match reported {
        Some(at) => (
            transcript.turns[at].context_tokens.unwrap_or(0),
            &transcript.turns[at + 1..],
        ),
        None => (0, &transcript.turns[..]),
    };
    let estimated: usize = after
        .iter()
        .map(|turn| messages_tokens(&EstimateCounter, &turn.messages))
        .sum();
    let input = known
        .saturating_add(estimated as u64)
        .min(model.context_window);
    let tokens = Tokens::estimated(input, u64::from(model.max_output_tokens));
    let cost = price.map(|price| price.cost(&tokens));
    (tokens, cost)
}
