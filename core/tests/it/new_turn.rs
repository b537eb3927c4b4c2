//! Opening a turn for a sent message: what is checked before anything is recorded.

use crate::prompt_support;

use portal_core::effort::Effort;
use portal_core::new_turn::{NewMessage, NewTurnError, open_turn};
use portal_core::{Role, TurnStatus, validate};
use prompt_support::*;

fn message(text: &str, attachments: Vec<portal_core::attachment::Attachment>) -> NewMessage {
    NewMessage {
        text: text.to_string(),
        attachments,
        again: None,
    }
}

#[test]
fn e2_a_new_turn_is_running_and_records_its_effort() {
    let mut conversation = transcript(vec![chat("Hola", "¡Hola!")]);
    let index = open_turn(
        &mut conversation,
        message("/fact-check Is it true?", vec![]),
        Effort::High,
        &model(),
    )
    .unwrap();
    assert_eq!(index, 2);
    let turn = &conversation.turns[1];
    assert_eq!(
        (turn.index, turn.status, turn.effort),
        (2, TurnStatus::Running, Some(Effort::High))
    );
    assert_eq!(turn.messages.len(), 1);
    assert_eq!(turn.messages[0].role, Role::User);
    assert_eq!(
        turn.messages[0].blocks,
        vec![text("/fact-check Is it true?")]
    );
    assert_eq!(validate(&conversation), Ok(()));
}

#[test]
fn a5_a_picture_for_a_blind_model_is_refused_and_nothing_is_recorded() {
    let mut conversation = transcript(vec![chat("Hola", "¡Hola!")]);
    let before = conversation.clone();
    let refused = open_turn(
        &mut conversation,
        message(
            "What is this?",
            vec![document("d", 5), picture("cat", 10, 10)],
        ),
        Effort::Medium,
        &blind_model(),
    );
    assert!(
        matches!(refused, Err(NewTurnError::Attachment(_))),
        "{refused:?}"
    );
    assert_eq!(conversation, before);
}

#[test]
fn a_message_waits_while_the_last_turn_is_running_or_paused() {
    for (status, word) in [
        (TurnStatus::Running, "running"),
        (TurnStatus::Paused, "paused"),
    ] {
        let mut conversation = transcript(vec![turn(status, vec![user("First")])]);
        let before = conversation.clone();
        let refused = open_turn(
            &mut conversation,
            message("Second", vec![]),
            Effort::Medium,
            &model(),
        )
        .unwrap_err();
        assert_eq!(
            refused,
            NewTurnError::TurnInProgress {
                turn: 1,
                paused: status == TurnStatus::Paused
            }
        );
        assert!(
            refused
                .to_string()
                .contains(&format!("turn 1 is still {word}"))
        );
        assert_eq!(conversation, before);
    }
}

#[test]
fn c6_c7_compact_opens_a_compact_turn_once_its_refusals_are_checked() {
    use portal_core::TurnKind;
    use portal_core::compaction::CompactRefusal;
    let mut conversation = transcript(vec![chat("Hola", "¡Hola!")]);
    open_turn(
        &mut conversation,
        message("/compact keep the names", vec![]),
        Effort::Medium,
        &model(),
    )
    .expect("allowed");
    assert_eq!(conversation.turns[1].kind, TurnKind::Compact);
    assert_eq!(
        conversation.turns[1].messages[0].blocks,
        vec![text("/compact keep the names")]
    );

    let cases = [
        (
            "C7 running",
            conversation.clone(),
            vec![],
            CompactRefusal::TurnRunning,
        ),
        (
            "C7 attachment",
            transcript(vec![chat("Hola", "¡Hola!")]),
            vec![document("d", 5)],
            CompactRefusal::Attachments,
        ),
        (
            "C7 empty",
            transcript(vec![]),
            vec![],
            CompactRefusal::EmptyConversation,
        ),
    ];
    for (name, mut t, attachments, refusal) in cases {
        let before = t.clone();
        let refused = open_turn(
            &mut t,
            message("/compact", attachments),
            Effort::Medium,
            &model(),
        );
        assert_eq!(refused, Err(NewTurnError::Compact(refusal)), "{name}");
        assert_eq!(t, before, "{name}: nothing recorded");
    }
}

#[test]
fn again_names_the_latest_chat_turn_and_is_recorded() {
    let mut transcript = transcript(vec![chat("Hola", "¡Hola!"), chat("Adiós", "¡Adiós!")]);
    let mut again = message("Tell me again", Vec::new());
    again.again = Some(1);
    assert_eq!(
        open_turn(&mut transcript, again.clone(), Effort::Medium, &model()),
        Err(NewTurnError::NotLatest { turn: 1 }),
        "only the latest turn can be answered again"
    );
    again.again = Some(2);
    let index = open_turn(&mut transcript, again, Effort::Medium, &model()).expect("opened");
    assert_eq!(
        transcript.turn(index).and_then(|t| t.answers_again()),
        Some(2)
    );
    assert_eq!(validate(&transcript), Ok(()));
}
