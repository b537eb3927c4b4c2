//! What a turn about to start holds back of its quotas: one call's projected input and the
//! model's output cap (docs/usage.md).

use portal_core::hold::next_call;
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::tokens::{EstimateCounter, messages_tokens};
use portal_core::usage::Price;
use portal_core::{Block, Message, Role, Transcript, Turn, TurnKind, TurnStatus};

fn turn(index: u32, status: TurnStatus, context_tokens: Option<u64>, text: &str) -> Turn {
    Turn {
        index,
        kind: TurnKind::Chat,
        status,
        effort: None,
        context_tokens,
        trace: Vec::new(),
        messages: vec![Message::new(Role::User, vec![Block::text(text)])],
    }
}

fn model(context_window: u64) -> ModelCapabilities {
    ModelCapabilities {
        id: "m".into(),
        provider: Provider::OpenAi,
        context_window,
        max_output_tokens: 4_000,
        can_reason: false,
        can_see: false,
        largest_picture: None,
    }
}

#[test]
fn a_turn_holds_the_newest_reported_context_what_came_after_it_and_the_output_cap() {
    let question = "What does the budget say about travel this quarter?";
    let newest = turn(3, TurnStatus::Running, None, question);
    let transcript = Transcript {
        version: portal_core::transcript::FORMAT_VERSION,
        turns: vec![
            turn(1, TurnStatus::Completed, Some(900), "first"),
            turn(2, TurnStatus::Completed, Some(2_500), "second"),
            newest.clone(),
        ],
    };
    let after = messages_tokens(&EstimateCounter, &newest.messages) as u64;
    let price = Price {
        currency: "EUR".into(),
        input_micros: 2_000_000,
        cached_input_micros: 0,
        output_micros: 8_000_000,
    };
    let (tokens, cost) = next_call(&transcript, &model(128_000), Some(&price));
    assert_eq!((tokens.input, tokens.output), (2_500 + after, 4_000));
    assert!(tokens.estimated);
    let cost = cost.expect("a priced model's hold has a cost");
    assert_eq!(cost.currency, "EUR");
    // 2 EUR a million input tokens and 8 a million output, in nano-units.
    assert_eq!(cost.nanos, (2_500 + after) * 2_000 + 4_000 * 8_000);

    let first = Transcript {
        version: portal_core::transcript::FORMAT_VERSION,
        turns: vec![newest.clone()],
    };
    let (tokens, cost) = next_call(&first, &model(128_000), None);
    assert_eq!(
        (tokens.input, tokens.output),
        (after, 4_000),
        "a first turn"
    );
    assert_eq!(cost, None, "an unpriced model's hold is in tokens only");

    let (tokens, _) = next_call(&transcript, &model(1_000), None);
    assert_eq!(
        tokens.input, 1_000,
        "never more input than the context window"
    );
}
