//! Effort (E1, E2; E3 is checked on the request bodies in `prompt.rs`).

use portal_core::effort::{Effort, effort_on_reopen, effort_parameter, winning_effort};
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::{
    Message, Role, Transcript, Turn, TurnKind, TurnStatus, transcript::FORMAT_VERSION,
};

fn turn(index: u32, effort: Option<Effort>) -> Turn {
    Turn {
        index,
        kind: TurnKind::Chat,
        status: TurnStatus::Completed,
        effort,
        context_tokens: None,
        trace: Vec::new(),
        messages: vec![
            Message::new(Role::User, vec![portal_core::Block::text("q")]),
            Message::new(Role::Assistant, vec![portal_core::Block::text("a")]),
        ],
    }
}

#[test]
fn e1_a_message_overrides_the_agents_default_for_itself_only() {
    assert_eq!(winning_effort(Effort::Medium, None), Effort::Medium);
    assert_eq!(
        winning_effort(Effort::Medium, Some(Effort::High)),
        Effort::High
    );
    // The next message without an override is back to the default.
    assert_eq!(winning_effort(Effort::Medium, None), Effort::Medium);
}

#[test]
fn e2_the_recorded_level_is_kept_on_resume_and_shown_on_reopen() {
    let transcript = Transcript {
        version: FORMAT_VERSION,
        turns: vec![turn(1, Some(Effort::Low)), turn(2, Some(Effort::High))],
    };
    assert_eq!(effort_on_reopen(&transcript, Effort::Medium), Effort::High);
    let unrecorded = Transcript {
        version: FORMAT_VERSION,
        turns: vec![turn(1, None)],
    };
    assert_eq!(
        effort_on_reopen(&unrecorded, Effort::Medium),
        Effort::Medium
    );
    assert_eq!(
        effort_on_reopen(&Transcript::new(), Effort::Low),
        Effort::Low
    );
    // The level round-trips through the transcript format, so a resumed turn reads it back.
    let json = serde_json::to_string(&transcript).unwrap();
    let back: Transcript = serde_json::from_str(&json).unwrap();
    assert_eq!(back.turns[1].effort, Some(Effort::High));
}

#[test]
fn e3_no_effort_parameter_for_a_model_that_cannot_reason() {
    let model = |can_reason| ModelCapabilities {
        id: "m".into(),
        provider: Provider::OpenAi,
        context_window: 128_000,
        max_output_tokens: 16_000,
        can_reason,
        can_see: false,
        largest_picture: None,
    };
    assert_eq!(
        effort_parameter(Effort::High, &model(true)),
        Some(Effort::High)
    );
    assert_eq!(effort_parameter(Effort::High, &model(false)), None);
}
