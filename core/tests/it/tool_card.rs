//! Tool cards and a running turn's activity, folded from turn events: each call's state as the
//! person sees it, its one-line arguments and its result's opening, and when the pending
//! indicator and the "still waiting" note show.

use portal_core::activity::{Activity, ActivityConfig, activity};
use portal_core::stream::TurnEvent;
use portal_core::tool_card::{ToolCardConfig, ToolState, tool_card};
use portal_core::tools::{DECLINED_RESULT, NOT_RUN_FOR_A_QUESTION};
use portal_core::{TurnState, TurnStatus};
use serde_json::json;

/// Folds events written as JSON values into a turn opened by "Hello".
fn fold(events: &[serde_json::Value]) -> TurnState {
    let mut state = TurnState::opened(1, "Hello");
    for event in events {
        let event: TurnEvent = serde_json::from_value(event.clone()).expect("a turn event");
        state.apply(&event);
    }
    state
}

fn call(message: usize, block: usize, id: &str, arguments: &str) -> Vec<serde_json::Value> {
    vec![
        json!({"event": "block_start", "message": message, "block": block, "kind": "tool_use",
               "call": {"id": id, "name": "count_characters"}}),
        json!({"event": "delta", "message": message, "block": block, "text": arguments}),
        json!({"event": "block_end", "message": message, "block": block}),
    ]
}

fn result(
    message: usize,
    block: usize,
    id: &str,
    text: &str,
    error: bool,
) -> Vec<serde_json::Value> {
    vec![
        json!({"event": "block_start", "message": message, "block": block, "kind": "tool_result",
               "call": {"id": id}, "is_error": error}),
        json!({"event": "delta", "message": message, "block": block, "text": text}),
        json!({"event": "block_end", "message": message, "block": block}),
    ]
}

fn start(message: usize, role: &str) -> serde_json::Value {
    json!({"event": "message_start", "message": message, "role": role})
}

fn end(status: &str) -> serde_json::Value {
    json!({"event": "turn_end", "status": status})
}

fn state_of(state: &TurnState, at: usize) -> ToolState {
    tool_card(state, at, &ToolCardConfig::default())
        .expect("a tool use")
        .state
}

#[test]
fn a_call_runs_then_is_done_or_failed() {
    let mut events = vec![start(1, "assistant")];
    events.extend(call(1, 0, "a", r#"{"text":"herons"}"#));
    events.extend(call(1, 1, "b", r#"{"text":"egrets"}"#));
    let running = fold(&events);
    assert_eq!(state_of(&running, 0), ToolState::Running);
    assert_eq!(state_of(&running, 1), ToolState::Running);
    assert!(
        tool_card(&running, 0, &ToolCardConfig::default())
            .unwrap()
            .result
            .is_none()
    );

    events.push(start(2, "tool"));
    events.extend(result(2, 0, "a", "6 characters", false));
    events.extend(result(2, 1, "b", "the tool broke", true));
    let answered = fold(&events);
    let done = tool_card(&answered, 0, &ToolCardConfig::default()).unwrap();
    assert_eq!(done.state, ToolState::Done);
    assert_eq!(done.name, "count_characters");
    assert_eq!(done.summary, "herons");
    assert_eq!(done.result.unwrap().text, "6 characters");
    assert_eq!(state_of(&answered, 1), ToolState::Failed);
    // A result is no card of its own.
    assert!(tool_card(&answered, 2, &ToolCardConfig::default()).is_none());
}

#[test]
fn a_server_tools_card_names_the_server_and_the_tool() {
    for (offered, server, name) in [
        ("files__read_text_file", Some("files"), "read_text_file"),
        ("everything__get-sum", Some("everything"), "get-sum"),
        ("count_characters", None, "count_characters"),
        ("__odd", None, "__odd"),
    ] {
        let events = vec![
            start(1, "assistant"),
            json!({"event": "block_start", "message": 1, "block": 0, "kind": "tool_use",
                   "call": {"id": "a", "name": offered}}),
            json!({"event": "delta", "message": 1, "block": 0, "text": "{}"}),
            json!({"event": "block_end", "message": 1, "block": 0}),
        ];
        let card = tool_card(&fold(&events), 0, &ToolCardConfig::default()).expect("a card");
        assert_eq!(card.server.as_deref(), server, "{offered}");
        assert_eq!(card.name, name, "{offered}");
    }
}

#[test]
fn a_call_awaiting_approval_is_then_declined() {
    let mut events = vec![start(1, "assistant")];
    events.extend(call(1, 0, "a", r#"{"title":"Herons"}"#));
    events.push(json!({"event": "block_start", "message": 1, "block": 1,
                       "kind": "approval_request", "call": {"id": "a", "name": "publish_note"}}));
    events.push(
        json!({"event": "delta", "message": 1, "block": 1, "text": "Publish the note Herons"}),
    );
    events.push(json!({"event": "block_end", "message": 1, "block": 1}));
    // Before the pause arrives the call is still running; paused, it waits for the person.
    assert_eq!(state_of(&fold(&events), 0), ToolState::Running);
    events.push(end("paused"));
    assert_eq!(state_of(&fold(&events), 0), ToolState::AwaitingApproval);
    events.push(start(2, "tool"));
    events.extend(result(2, 0, "a", DECLINED_RESULT, true));
    let declined = tool_card(&fold(&events), 0, &ToolCardConfig::default()).unwrap();
    assert_eq!(declined.state, ToolState::Declined);
    assert_eq!(
        declined.result, None,
        "the words for the model are not shown"
    );
}

#[test]
fn a_call_that_never_ran_is_not_run() {
    let mut events = vec![start(1, "assistant")];
    events.extend(call(1, 0, "a", "{}"));
    events.push(start(2, "tool"));
    events.extend(result(2, 0, "a", NOT_RUN_FOR_A_QUESTION, true));
    let not_run = tool_card(&fold(&events), 0, &ToolCardConfig::default()).unwrap();
    assert_eq!(not_run.state, ToolState::NotRun);
    assert_eq!(not_run.result, None);

    let mut stopped = vec![start(1, "assistant")];
    stopped.extend(call(1, 0, "a", "{}"));
    stopped.push(end("cut_off"));
    assert_eq!(state_of(&fold(&stopped), 0), ToolState::NotRun);
}

#[test]
fn the_pending_indicator_shows_while_the_model_is_asked() {
    let config = ActivityConfig::default();
    let mut events = vec![];
    assert_eq!(
        activity(&fold(&events), 0.0, &config),
        Some(Activity::Pending)
    );
    events.push(start(1, "assistant"));
    events.push(json!({"event": "block_start", "message": 1, "block": 0, "kind": "text"}));
    events.push(json!({"event": "delta", "message": 1, "block": 0, "text": "Let me count."}));
    // A streaming block shows its caret instead.
    assert_eq!(activity(&fold(&events), 0.0, &config), None);
    events.push(json!({"event": "block_end", "message": 1, "block": 0}));
    events.extend(call(1, 1, "a", "{}"));
    // A running tool shows on its card.
    assert_eq!(activity(&fold(&events), 0.0, &config), None);
    assert_eq!(activity(&fold(&events), 60_000.0, &config), None);
    events.push(start(2, "tool"));
    events.extend(result(2, 0, "a", "3", false));
    // The model is asked again with the result.
    assert_eq!(
        activity(&fold(&events), 0.0, &config),
        Some(Activity::Pending)
    );
    events.push(end("completed"));
    assert_eq!(activity(&fold(&events), 60_000.0, &config), None);
}

#[test]
fn a_silent_model_is_still_awaited_after_twenty_seconds() {
    let config = ActivityConfig::default();
    let events = vec![
        start(1, "assistant"),
        json!({"event": "block_start", "message": 1, "block": 0, "kind": "text"}),
        json!({"event": "delta", "message": 1, "block": 0, "text": "Four"}),
    ];
    let state = fold(&events);
    assert_eq!(activity(&state, 19_999.0, &config), None);
    assert_eq!(
        activity(&state, 20_000.0, &config),
        Some(Activity::StillWaiting)
    );
    assert_eq!(
        activity(&fold(&[]), 20_000.0, &config),
        Some(Activity::StillWaiting)
    );
    // A summary being written has its own clock (R11).
    let summarising = fold(&[
        start(1, "assistant"),
        json!({"event": "block_start", "message": 1, "block": 0, "kind": "compaction"}),
    ]);
    assert_eq!(activity(&summarising, 0.0, &config), None);
    assert_eq!(activity(&summarising, 60_000.0, &config), None);
    assert_eq!(summarising.status, TurnStatus::Running);
}

// A tool's pictures come with its result's start and show in its card once the result is whole;
// a result without pictures shows none.
#[test]
fn a_cards_pictures_are_its_results() {
    let picture =
        json!({"attachment_id": "att_7", "media_type": "image/png", "width": 32, "height": 32});
    for (pictures, ended, shown) in [
        (json!([]), true, 0),
        (json!([picture.clone()]), false, 0),
        (json!([picture.clone()]), true, 1),
    ] {
        let mut events = vec![start(1, "assistant")];
        events.extend(call(1, 0, "a", "{}"));
        events.push(start(2, "tool"));
        events.push(json!({"event": "block_start", "message": 2, "block": 0,
            "kind": "tool_result", "call": {"id": "a"}, "pictures": pictures}));
        events.push(json!({"event": "delta", "message": 2, "block": 0,
            "text": "[picture att_7: image/png, 32×32]"}));
        if ended {
            events.push(json!({"event": "block_end", "message": 2, "block": 0}));
        }
        let card = tool_card(&fold(&events), 0, &ToolCardConfig::default()).unwrap();
        assert_eq!(card.pictures.len(), shown, "{pictures} ended {ended}");
        if let Some(shown) = card.pictures.first() {
            assert_eq!((shown.attachment_id.as_str(), shown.width), ("att_7", 32));
        }
    }
}
