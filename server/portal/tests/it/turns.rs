//! Turns that pause, resume, are cancelled and are reconnected to, over real HTTP on loopback
//! with SQLite in a temporary folder.

use crate::common;

use common::{assert_same_content, start};
use portal_core::memory::{CompactionHint, MemoryConfig, rebuild};
use portal_core::new_turn::{NewMessage, open_turn};
use portal_core::prompt::{Layer, Part};
use portal_core::stream::{CallHeader, TurnEvent};
use portal_core::{Block, BlockKind, Role, TurnState, TurnStatus, validate};
use portal_model::demo::capabilities;
use serde_json::json;

/// The id of the last event read.
fn last_id(events: &[(u64, TurnEvent)]) -> Option<u64> {
    events.last().map(|(id, _)| *id)
}

fn last_status(events: &[(u64, TurnEvent)]) -> Option<TurnStatus> {
    match events.last() {
        Some((_, TurnEvent::TurnEnd { status, .. })) => Some(*status),
        _ => None,
    }
}

#[tokio::test]
async fn m10_cancelled_turn_is_recorded_cut_off_and_replayed_by_memory() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 1.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let mut stream = server.stream(&id, turn, None).await;
    let mut seen = Vec::new();
    let mut narration = String::new();
    while let Some(event) = stream.next().await {
        if let TurnEvent::Delta { block: 1, text, .. } = &event.1 {
            narration.push_str(text);
        }
        seen.push(event);
        if narration.chars().count() >= 10 {
            break;
        }
    }
    assert_eq!(server.act(&id, turn, "cancel", json!({})).await, 202);
    while let Some(event) = stream.next().await {
        seen.push(event);
    }
    assert_eq!(last_status(&seen), Some(TurnStatus::CutOff));

    let mut transcript = server.transcript(&id).await;
    validate(&transcript).expect("a cut-off turn keeps the invariants");
    let cut = &transcript.turns[0];
    assert_eq!(cut.status, TurnStatus::CutOff);
    let Block::Text { text: written } = cut.messages[1].blocks[1].clone() else {
        panic!("the narration was written: {:?}", cut.messages[1]);
    };
    assert!(written.starts_with(&narration), "what streamed was stored");
    assert_eq!(
        server.act(&id, turn, "cancel", json!({})).await,
        409,
        "an ended turn cannot be cancelled again"
    );

    // Memory replays what the cut-off turn wrote on the next call (M10).
    open_turn(
        &mut transcript,
        NewMessage {
            text: "go on".into(),
            attachments: Vec::new(),
            again: None,
        },
        portal_core::effort::Effort::Medium,
        &capabilities(),
    )
    .expect("a new turn opens after a cut-off one");
    let memory = rebuild(
        &transcript,
        CompactionHint::Search,
        &capabilities(),
        &MemoryConfig::default(),
    );
    let replayed: String = memory
        .entries
        .iter()
        .filter(|e| e.layer == Layer::Memory && e.role == Role::Assistant)
        .flat_map(|e| &e.parts)
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(replayed.contains(written.as_str()), "{replayed:?}");
}

#[tokio::test]
async fn approval_request_pauses_the_turn_until_the_user_approves() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Please publish a note on emoji").await;
    let first = server.events(&id, turn, None).await;
    assert_eq!(last_status(&first), Some(TurnStatus::Paused));
    let transcript = server.transcript(&id).await;
    validate(&transcript).expect("a paused turn keeps the invariants");
    assert_eq!(transcript.turns[0].status, TurnStatus::Paused);
    let Some(Block::ApprovalRequest { call_id, summary }) =
        transcript.turns[0].messages[1].blocks.last()
    else {
        panic!("an approval request: {:?}", transcript.turns[0].messages[1]);
    };
    assert!(summary.starts_with("Publish the note"));

    let refused = server
        .client
        .post(server.url(&format!("/api/conversations/{id}/messages")))
        .json(&json!({ "text": "another" }))
        .send()
        .await
        .expect("answered");
    assert_eq!(refused.status(), 409, "a paused turn is answered first");
    assert_eq!(
        server
            .act(&id, turn, "answer", json!({ "text": "yes" }))
            .await,
        409,
        "an approval is decided, not answered"
    );
    assert_eq!(
        server
            .act(
                &id,
                turn,
                "decision",
                json!({ "call_id": "nope", "approve": true })
            )
            .await,
        409
    );

    assert_eq!(
        server
            .act(
                &id,
                turn,
                "decision",
                json!({ "call_id": call_id, "approve": true })
            )
            .await,
        202
    );
    let rest = server.events(&id, turn, last_id(&first)).await;
    assert_eq!(last_status(&rest), Some(TurnStatus::Completed));
    assert_eq!(
        Some(rest[0].0),
        last_id(&first).map(|id| id + 1),
        "numbering goes on after the pause"
    );
    let transcript = server.transcript(&id).await;
    validate(&transcript).expect("the resumed turn keeps the invariants");
    let resumed = &transcript.turns[0];
    assert_eq!(resumed.status, TurnStatus::Completed);
    assert!(matches!(
        &resumed.messages[2].blocks[0],
        Block::ToolResult { call_id: answered, content, is_error: false, .. }
            if answered == call_id && content.starts_with("Published")
    ));
}

/// The call each approval request's `block_start` names.
fn approval_headers(events: &[(u64, TurnEvent)]) -> Vec<Option<CallHeader>> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            TurnEvent::BlockStart {
                kind: BlockKind::ApprovalRequest,
                call,
                ..
            } => Some(call.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_approvals_in_one_turn_are_decided_one_round_at_a_time() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let text = "Please publish two notes on the herons";
    let turn = server.send(&id, text).await;
    let publish = |call_id: &str| {
        Some(CallHeader {
            id: call_id.to_string(),
            name: "publish_note".into(),
        })
    };

    // Round one: the first note waits for its approval.
    let first = server.events(&id, turn, None).await;
    assert_eq!(last_status(&first), Some(TurnStatus::Paused));
    let awaited = server.transcript(&id).await.turns[0].awaiting();
    let [first_call] = awaited.approvals.as_slice() else {
        panic!("one approval awaited: {awaited:?}");
    };
    assert_eq!(approval_headers(&first), [publish(first_call)]);
    assert_eq!(
        server
            .act(
                &id,
                turn,
                "decision",
                json!({ "call_id": first_call, "approve": true })
            )
            .await,
        202
    );

    // Round two: the first note is published, the second waits for its own approval.
    let second = server.events(&id, turn, last_id(&first)).await;
    assert_eq!(last_status(&second), Some(TurnStatus::Paused));
    let awaited = server.transcript(&id).await.turns[0].awaiting();
    let [second_call] = awaited.approvals.as_slice() else {
        panic!("one approval awaited: {awaited:?}");
    };
    assert_ne!(second_call, first_call);
    assert_eq!(approval_headers(&second), [publish(second_call)]);
    assert_eq!(
        server
            .act(
                &id,
                turn,
                "decision",
                json!({ "call_id": first_call, "approve": true })
            )
            .await,
        409,
        "the first call was decided already and is no longer awaited"
    );
    assert_eq!(
        server
            .act(
                &id,
                turn,
                "decision",
                json!({ "call_id": second_call, "approve": true })
            )
            .await,
        202,
        "a decision on the second call alone resumes the turn"
    );

    let rest = server.events(&id, turn, last_id(&second)).await;
    assert_eq!(last_status(&rest), Some(TurnStatus::Completed));
    let transcript = server.transcript(&id).await;
    validate(&transcript).expect("the twice-resumed turn keeps the invariants");
    let done = &transcript.turns[0];
    assert_eq!(done.status, TurnStatus::Completed);
    let results: Vec<(&str, &str)> = done
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            Block::ToolResult {
                call_id,
                content,
                is_error: false,
                ..
            } => Some((call_id.as_str(), content.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].0, first_call);
    assert!(results[0].1.starts_with("Published") && results[0].1.contains("(1 of 2)"));
    assert_eq!(results[1].0, second_call);
    assert!(results[1].1.starts_with("Published") && results[1].1.contains("(2 of 2)"));

    // What streamed, folded by core, is the turn as stored.
    let mut streamed = TurnState::opened(turn, text);
    for (_, event) in first.iter().chain(&second).chain(&rest) {
        streamed.apply(event);
    }
    assert_eq!(streamed, TurnState::stored(done));
}

#[tokio::test]
async fn a_declined_call_is_answered_as_declined_and_the_turn_goes_on() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "publish this").await;
    let first = server.events(&id, turn, None).await;
    let transcript = server.transcript(&id).await;
    let Some(Block::ApprovalRequest { call_id, .. }) =
        transcript.turns[0].messages[1].blocks.last()
    else {
        panic!("an approval request");
    };
    assert_eq!(
        server
            .act(
                &id,
                turn,
                "decision",
                json!({ "call_id": call_id, "approve": false })
            )
            .await,
        202
    );
    let rest = server.events(&id, turn, last_id(&first)).await;
    assert_eq!(last_status(&rest), Some(TurnStatus::Completed));
    let transcript = server.transcript(&id).await;
    assert!(matches!(
        &transcript.turns[0].messages[2].blocks[0],
        Block::ToolResult { is_error: true, content, .. } if content.contains("declined")
    ));
    // The demo's answer says so in the person's words, not in the words written for the model.
    let answer = transcript.turns[0]
        .messages
        .last()
        .and_then(|m| m.blocks.last())
        .cloned();
    assert!(
        matches!(&answer, Some(Block::Text { text }) if text.starts_with("You declined the call, so it did not run.") && !text.contains("Not run:")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn clarification_pauses_the_turn_and_the_answer_resumes_it() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Could you clarify scripts for me").await;
    let first = server.events(&id, turn, None).await;
    assert_eq!(last_status(&first), Some(TurnStatus::Paused));
    assert!(first.iter().any(|(_, e)| matches!(
        e,
        TurnEvent::BlockStart {
            kind: BlockKind::ClarificationRequest,
            ..
        }
    )));
    assert_eq!(
        server
            .act(&id, turn, "answer", json!({ "text": "  " }))
            .await,
        422
    );
    assert_eq!(
        server
            .act(&id, turn, "answer", json!({ "text": "The emoji, please" }))
            .await,
        202
    );
    let rest = server.events(&id, turn, last_id(&first)).await;
    assert_eq!(last_status(&rest), Some(TurnStatus::Completed));
    let transcript = server.transcript(&id).await;
    validate(&transcript).expect("the answered turn keeps the invariants");
    let answered = &transcript.turns[0];
    let roles: Vec<Role> = answered.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
    assert_eq!(
        answered.messages[2].blocks,
        [Block::text("The emoji, please")]
    );
}

#[tokio::test]
async fn sse_reconnect_mid_stream_with_last_event_id_loses_and_duplicates_nothing() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.2).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let mut first = server.stream(&id, turn, None).await;
    let mut read = Vec::new();
    while read.len() < 12 {
        read.push(first.next().await.expect("the turn is still streaming"));
    }
    drop(first);
    assert!(
        !matches!(read.last(), Some((_, TurnEvent::TurnEnd { .. }))),
        "the connection dropped mid-stream"
    );
    let rest = server
        .events(&id, turn, read.last().map(|(id, _)| *id))
        .await;
    read.extend(rest);
    assert!(
        read.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "no repeat: {read:?}"
    );
    // A later reader reads each block's deltas joined, and the same turn.
    assert_same_content(&server.events(&id, turn, None).await, &read);
    assert_eq!(last_status(&read), Some(TurnStatus::Completed));
}

#[tokio::test]
async fn turn_zero_and_turns_past_the_end_are_not_found_for_every_action() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    // A paused turn 1, so a turn number that wrapped around would find a turn to act on.
    let turn = server.send(&id, "Please publish a note on emoji").await;
    let events = server.events(&id, turn, None).await;
    assert_eq!(last_status(&events), Some(TurnStatus::Paused));
    for missing in [0, turn + 1, u32::MAX] {
        for (action, body) in [
            ("cancel", json!({})),
            ("decision", json!({ "call_id": "call_1", "approve": true })),
            ("answer", json!({ "text": "yes" })),
        ] {
            assert_eq!(
                server.act(&id, missing, action, body).await,
                404,
                "{action} on turn {missing}"
            );
        }
    }
    assert_eq!(
        server.transcript(&id).await.turns[0].status,
        TurnStatus::Paused,
        "the paused turn was not touched"
    );
}
