//! The API over real HTTP on loopback, answered by the demo model, stored in SQLite in a
//! temporary folder.

use crate::common;

use common::{Server, assert_same_content, spawn_portal, start, streamed_text};
use portal_core::stream::TurnEvent;
use portal_core::{Block, Role, TurnStatus, validate};

#[tokio::test]
async fn b3_full_turn_with_a_tool_call_streams_and_is_recorded_as_streamed() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let events = server.events(&id, turn, None).await;
    assert_eq!(
        events.last().map(|(_, e)| e.clone()),
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::Completed,
            reason: None,
        })
    );
    let transcript = server.transcript(&id).await;
    validate(&transcript).expect("the recorded turn keeps the invariants (B3, B4)");
    let recorded = &transcript.turns[0];
    assert_eq!(recorded.status, TurnStatus::Completed);
    let roles: Vec<Role> = recorded.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    let Block::ToolUse { id: call, name, .. } = recorded.messages[1].blocks.last().unwrap() else {
        panic!(
            "the first answer ends on a call: {:?}",
            recorded.messages[1]
        );
    };
    assert_eq!(name, "count_characters");
    assert!(matches!(
        &recorded.messages[2].blocks[0],
        Block::ToolResult { call_id, content, is_error: false, .. } if call_id == call && content.contains("characters")
    ));
    let answer = recorded.messages[3].blocks.last().unwrap();
    let streamed = streamed_text(&events, 3, recorded.messages[3].blocks.len() - 1);
    assert!(streamed.contains("👨‍👩‍👧‍👦"));
    assert_eq!(
        answer,
        &Block::text(streamed),
        "what streamed is what was stored"
    );
    let usage_turns = recorded
        .context_tokens
        .expect("context size recorded (C11)");
    assert!(usage_turns > 0);
}

#[tokio::test]
async fn sse_reconnect_after_the_turn_ended_loses_and_duplicates_nothing() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "hello").await;
    let all = server.events(&id, turn, None).await;
    let cut = all.len() / 2;
    let rest = server.events(&id, turn, Some(all[cut - 1].0)).await;
    // The log joins a block's deltas, so the rest may come in fewer deltas than streamed live.
    let mut resumed = all[..cut].to_vec();
    resumed.extend(rest);
    assert_same_content(&resumed, &all);
    assert!(
        all.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "ids grow: {all:?}"
    );
}

#[tokio::test]
async fn unknown_conversation_is_404_with_advice() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let response = server
        .client
        .post(server.url("/api/conversations/nope/messages"))
        .json(&serde_json::json!({ "text": "hi" }))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .expect("message")
            .contains("POST /api/conversations")
    );
}

#[tokio::test]
async fn conversations_survive_a_restart_on_the_same_data_folder() {
    let data = tempfile::tempdir().expect("tempdir");
    let (mut process, base) = spawn_portal(data.path());
    let first = Server::at(base);
    let id = first.conversation().await;
    let turn = first.send(&id, "remember me").await;
    first.events(&id, turn, None).await;
    let before = first.transcript(&id).await;
    process.kill().expect("stopped");
    process.wait().expect("reaped");
    let second = start(data.path(), 0.0).await;
    assert_eq!(second.transcript(&id).await, before);
}
