//! Rule C2 when the gateway reports the context overflow after the call wrote some of its answer:
//! a real server on loopback with SQLite in a temporary folder, and a fake OpenAI-compatible
//! endpoint that streams part of an answer, then the overflow. What the call wrote is withdrawn
//! from storage and from every reader of the turn's events, the turn compacts once, and the call
//! is made again.

use crate::common;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use common::{Events, Server};
use futures_util::{StreamExt, stream};
use portal_core::compaction::SUMMARY_NOTE;
use portal_core::stream::TurnEvent;
use portal_core::{Block, CompactionTrigger, Transcript, TurnState, TurnStatus, validate};
use portal_model::ModelRegistry;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// What the call streams before the overflow: thinking, then the start of an answer.
const PARTIAL_THINKING: &str = "The budget has four lines";
const PARTIAL_TEXT: &str = "Here is the first part of";
/// What the retried call streams.
const ANSWER: [&str; 2] = ["The whole ", "answer."];
/// What the retried call streams before it overflows too, when it does.
const PARTIAL_RETRY: &str = "Still too long";
const SUMMARY: &str = "## Requests\n- Questions 1 to 3 about the budget of the Lisbon office.\n\
                       ## Work done\n- Each was noted.\n## Open work\n- None.\n\
                       ## Facts\n- The office is in Lisbon.\n";

/// A fake OpenAI-compatible endpoint. A summary call gets [`SUMMARY`]; a call whose last message
/// asks to overflow streams [`PARTIAL_THINKING`] and [`PARTIAL_TEXT`], waits for a permit of
/// `overflow`, and reports a context overflow; once the prompt replays a summary, the call
/// answers [`ANSWER`], waiting for a permit of `answer` between its two pieces (or, when
/// `overflows_again`, streams [`PARTIAL_RETRY`] and overflows again). Any other call is answered
/// "Noted.".
struct Upstream {
    base_url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
    overflow: Arc<Semaphore>,
    answer: Arc<Semaphore>,
}

impl Upstream {
    async fn start(overflows_again: bool) -> Upstream {
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let overflow = Arc::new(Semaphore::new(0));
        let answer = Arc::new(Semaphore::new(0));
        let (kept, overflow_gate, answer_gate) = (
            Arc::clone(&bodies),
            Arc::clone(&overflow),
            Arc::clone(&answer),
        );
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move |body: axum::Json<Value>| {
                let (kept, overflow, answer) = (
                    Arc::clone(&kept),
                    Arc::clone(&overflow_gate),
                    Arc::clone(&answer_gate),
                );
                async move {
                    let text = body.0.to_string();
                    let last_message = body.0["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .map(Value::to_string)
                        .unwrap_or_default();
                    kept.lock().expect("lock").push(body.0);
                    let body = if text.contains("You write the compaction summary") {
                        finished(vec![content(SUMMARY)])
                    } else if text.contains(SUMMARY_NOTE) && overflows_again {
                        overflowing(vec![content(PARTIAL_RETRY)], None)
                    } else if text.contains(SUMMARY_NOTE) {
                        gated(content(ANSWER[0]), answer, content(ANSWER[1]))
                    } else if last_message.contains("overflow") {
                        overflowing(
                            vec![reasoning(PARTIAL_THINKING), content(PARTIAL_TEXT)],
                            Some(overflow),
                        )
                    } else {
                        finished(vec![content("Noted.")])
                    };
                    Response::builder()
                        .status(StatusCode::OK)
                        .header(header::CONTENT_TYPE, "text/event-stream")
                        .body(body)
                        .expect("response")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("loopback port");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Upstream {
            base_url,
            bodies,
            overflow,
            answer,
        }
    }

    /// The models file offering this endpoint's one model.
    fn models(&self) -> ModelRegistry {
        let text = format!(
            r#"default = "upstream"

[[models]]
name = "upstream"
kind = "openai"
base_url = "{}"
api_key = "sk-test"
model = "fake-model"

[models.capabilities]
context_window = 32768
max_output_tokens = 1024
can_reason = false
can_see = false
"#,
            self.base_url
        );
        ModelRegistry::from_toml(&text, 0.0, |_| None).expect("models file")
    }

    fn calls(&self) -> usize {
        self.bodies.lock().expect("lock").len()
    }
}

fn chunk(delta: Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": delta}]})
    )
}

fn content(text: &str) -> String {
    chunk(json!({ "content": text }))
}

fn reasoning(text: &str) -> String {
    chunk(json!({ "reasoning_content": text }))
}

fn finish() -> String {
    format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    )
}

fn finished(mut lines: Vec<String>) -> Body {
    lines.push(finish());
    Body::from(lines.concat())
}

/// `lines`, then, once `gate` gives a permit (at once without one), llama.cpp's overflow inside
/// the stream.
fn overflowing(lines: Vec<String>, gate: Option<Arc<Semaphore>>) -> Body {
    let overflow = json!({"error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 9210,
        "n_ctx": 8192,
    }});
    let last = stream::once(async move {
        if let Some(gate) = gate {
            gate.acquire().await.expect("open").forget();
        }
        format!("data: {overflow}\n\n")
    });
    Body::from_stream(
        stream::iter(lines)
            .chain(last)
            .map(|line| Ok::<_, Infallible>(Bytes::from(line))),
    )
}

/// `first`, then, once `gate` gives a permit, `rest` and the finish.
fn gated(first: String, gate: Arc<Semaphore>, rest: String) -> Body {
    let rest = stream::once(async move {
        gate.acquire().await.expect("open").forget();
        rest + &finish()
    });
    Body::from_stream(
        stream::iter([first])
            .chain(rest)
            .map(|line| Ok::<_, Infallible>(Bytes::from(line))),
    )
}

/// A conversation on `upstream` with three answered turns, enough history for a summary.
async fn conversation(upstream: &Upstream) -> (tempfile::TempDir, Server, String) {
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = common::start_with(data.path(), 0.0, Some(upstream.models())).await;
    let id = server.conversation().await;
    for i in 1..=3 {
        let turn = server
            .send(&id, &format!("Question {i} about the budget"))
            .await;
        server.events(&id, turn, None).await;
    }
    (data, server, id)
}

/// Reads `events` until one matches `wanted`, and returns everything read.
async fn read_until(
    events: &mut Events,
    wanted: impl Fn(&TurnEvent) -> bool,
) -> Vec<(u64, TurnEvent)> {
    let mut read = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(30), events.next())
            .await
            .expect("an event within 30 s")
            .unwrap_or_else(|| panic!("the stream ended first: {read:?}"));
        let done = wanted(&next.1);
        read.push(next);
        if done {
            return read;
        }
    }
}

async fn read_to_end(events: &mut Events, read: &mut Vec<(u64, TurnEvent)>) {
    while let Some(event) = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("the stream ends within 30 s")
    {
        read.push(event);
    }
}

fn delta_of(text: &'static str) -> impl Fn(&TurnEvent) -> bool {
    move |event| matches!(event, TurnEvent::Delta { text: t, .. } if t == text)
}

/// `events` folded onto `state`.
fn folded<'a>(
    mut state: TurnState,
    events: impl IntoIterator<Item = &'a (u64, TurnEvent)>,
) -> TurnState {
    for (_, event) in events {
        state.apply(event);
    }
    state
}

// C2, C5: the gateway reports the overflow after the call streamed thinking and text. What it
// wrote is withdrawn from storage; the turn compacts once and the call is made again, and
// completes. The stored transcript has no trace of the withdrawn text, and a follower of the
// whole stream, a reader resuming with Last-Event-ID inside the withdrawn text, and pages opened
// before the withdrawal and during the retry all end with the blocks storage holds.
#[tokio::test]
async fn c2_an_overflow_after_some_output_withdraws_it_compacts_and_retries_once() {
    let upstream = Upstream::start(false).await;
    let (_data, server, id) = conversation(&upstream).await;
    let earlier = server.transcript(&id).await;
    let calls_before = upstream.calls();
    let turn = server.send(&id, "Now pretend this overflows").await;

    let mut follower = server.stream(&id, turn, None).await;
    let mut followed = read_until(&mut follower, delta_of(PARTIAL_TEXT)).await;
    let inside = followed.last().expect("the partial text").0 - 4;
    let opened_before = server.transcript(&id).await;
    let stored_partial = serde_json::to_string(&opened_before).expect("json");
    assert!(
        stored_partial.contains(PARTIAL_TEXT) && stored_partial.contains(PARTIAL_THINKING),
        "the partial output is written as it streams (M10)"
    );
    upstream.overflow.add_permits(1);
    followed.extend(read_until(&mut follower, delta_of(ANSWER[0])).await);
    let opened_during = server.transcript(&id).await;
    upstream.answer.add_permits(1);
    read_to_end(&mut follower, &mut followed).await;

    let t: Transcript = server.transcript(&id).await;
    validate(&t).expect("valid");
    let stored = t.turn(turn).expect("the turn");
    assert_eq!(stored.status, TurnStatus::Completed, "{followed:?}");
    assert_eq!(
        t.turns[..3],
        earlier.turns[..],
        "nothing earlier is rewritten"
    );
    let blocks: Vec<&Block> = stored.messages[1..]
        .iter()
        .flat_map(|m| &m.blocks)
        .collect();
    assert!(
        matches!(
            blocks.as_slice(),
            [Block::Compaction { trigger: CompactionTrigger::Auto, .. }, Block::Text { text }]
                if text == &ANSWER.concat()
        ),
        "{blocks:?}"
    );
    let json = serde_json::to_string(&t).expect("json");
    assert!(
        !json.contains(PARTIAL_TEXT) && !json.contains(PARTIAL_THINKING),
        "no trace of the withdrawn output: {json}"
    );
    assert_eq!(
        upstream.calls() - calls_before,
        3,
        "the call, one summary, one retry"
    );
    let bodies = upstream.bodies.lock().expect("lock").clone();
    assert!(
        !bodies
            .last()
            .expect("the retry")
            .to_string()
            .contains(PARTIAL_TEXT),
        "the retry's prompt does not replay the withdrawn text"
    );

    let whole = TurnState::stored(stored);
    let opened = || TurnState::opened(turn, "Now pretend this overflows");
    assert!(
        followed
            .iter()
            .any(|(_, e)| matches!(e, TurnEvent::Withdrawn { .. }))
    );
    assert_eq!(folded(opened(), &followed), whole, "the follower");

    let mut read_inside = opened();
    for (id, event) in &followed {
        if *id > inside {
            break;
        }
        read_inside.apply(event);
    }
    let resumed = server.events(&id, turn, Some(inside)).await;
    assert!(
        matches!(resumed.first(), Some((_, TurnEvent::Withdrawn { .. }))),
        "a reader inside the withdrawn text reads the withdrawal next: {resumed:?}"
    );
    assert_eq!(
        folded(read_inside, &resumed),
        whole,
        "a reader resuming with Last-Event-ID inside the withdrawn text"
    );

    let from_start = server.events(&id, turn, None).await;
    assert!(
        from_start.iter().all(|(_, e)| !matches!(
            e,
            TurnEvent::Delta { text, .. } if text == PARTIAL_TEXT || text == PARTIAL_THINKING
        )),
        "a later reader never reads the withdrawn output: {from_start:?}"
    );
    for (when, transcript) in [
        ("before the withdrawal", &opened_before),
        ("during the retry", &opened_during),
    ] {
        let part = transcript.turn(turn).expect("the turn");
        assert_eq!(part.status, TurnStatus::Running);
        assert_eq!(
            folded(TurnState::resumed(part), &from_start),
            whole,
            "a page opened {when}, following the stream from its start"
        );
    }
}

// C2, C5: the retried call overflows too, after some output: that output is withdrawn as well,
// and the turn fails with the clear error, after one summary and one retry, never looping.
#[tokio::test]
async fn c2_a_second_overflow_mid_stream_after_the_compaction_fails_the_turn_clearly() {
    let upstream = Upstream::start(true).await;
    upstream.overflow.add_permits(1);
    let (_data, server, id) = conversation(&upstream).await;
    let earlier = server.transcript(&id).await;
    let calls_before = upstream.calls();
    let turn = server.send(&id, "Now pretend this overflows").await;
    let events = tokio::time::timeout(Duration::from_secs(30), server.events(&id, turn, None))
        .await
        .expect("the turn ends");
    let Some((_, TurnEvent::TurnEnd { status, reason })) = events.last() else {
        panic!("the turn ends: {events:?}");
    };
    assert_eq!(*status, TurnStatus::Failed);
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.contains("context window") && r.ends_with('.')),
        "the person is told why, in a sentence: {reason:?}"
    );
    assert_eq!(
        upstream.calls() - calls_before,
        3,
        "the call, one summary, one retry: never a loop"
    );
    let withdrawals = events
        .iter()
        .filter(|(_, e)| matches!(e, TurnEvent::Withdrawn { .. }))
        .count();
    assert_eq!(withdrawals, 2, "{events:?}");

    let t = server.transcript(&id).await;
    let stored = t.turn(turn).expect("the turn");
    assert_eq!(stored.status, TurnStatus::Failed);
    assert_eq!(
        t.turns[..3],
        earlier.turns[..],
        "nothing earlier is rewritten"
    );
    let json = serde_json::to_string(stored).expect("json");
    for partial in [PARTIAL_THINKING, PARTIAL_TEXT, PARTIAL_RETRY] {
        assert!(!json.contains(partial), "{partial} withdrawn: {json}");
    }
    assert_eq!(
        folded(
            TurnState::opened(turn, "Now pretend this overflows"),
            &events
        ),
        TurnState::stored(stored),
        "the stream ends with the blocks storage holds"
    );
}
