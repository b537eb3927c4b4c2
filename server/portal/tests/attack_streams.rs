//! Attacks on event streams and on the upstream model adapter (issue 14), each with its exact
//! expected outcome, against a real server on loopback with SQLite in a temporary folder, and
//! fake OpenAI-compatible endpoints on loopback that misbehave on purpose.
//!
//! Where the issue asks for bounded memory, a test measures the process's peak resident memory
//! (`VmHWM`, reset through `/proc/self/clear_refs` first) against its resident memory before,
//! and states the bound. Those tests take [`MEMORY`] so that they run one at a time.

#[path = "it/common/mod.rs"]
mod common;

use std::convert::Infallible;
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use common::{Server, assert_same_content, start, texts};
use futures_util::{StreamExt, stream};
use portal_core::stream::TurnEvent;
use portal_core::{Block, TurnStatus};
use portal_host::turn_log::StreamLimits;
use portal_model::ModelRegistry;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Event streams
// ---------------------------------------------------------------------------------------------

/// How long a stream that has nothing more to send may take to close.
const CLOSES_WITHIN: Duration = Duration::from_secs(1);

// The tests below that find no panic prove something only if overflow panics: it does in the
// test profile (Cargo's default for `dev`, which `test` inherits; keep it so).
#[test]
fn overflow_checks_are_on_in_tests() {
    let overflowed =
        std::panic::catch_unwind(|| std::hint::black_box(u64::MAX) + std::hint::black_box(1u64));
    assert!(
        overflowed.is_err(),
        "overflow-checks is off in this profile"
    );
}

/// A completed demo turn and its events, read whole.
async fn completed_turn(server: &Server) -> (String, u32, Vec<(u64, TurnEvent)>) {
    let id = server.conversation().await;
    let turn = server.send(&id, "hello").await;
    let events = server.events(&id, turn, None).await;
    assert!(
        matches!(
            events.last(),
            Some((
                _,
                TurnEvent::TurnEnd {
                    status: TurnStatus::Completed,
                    ..
                }
            ))
        ),
        "{events:?}"
    );
    (id, turn, events)
}

/// Opens the turn's stream with `Last-Event-ID: last_event_id` and reads it to its end; returns
/// the events and how long the stream took to close.
async fn resume_raw(
    server: &Server,
    id: &str,
    turn: u32,
    last_event_id: &str,
) -> (Vec<(u64, TurnEvent)>, Duration) {
    let started = Instant::now();
    let response = server
        .client
        .get(server.url(&format!("/api/conversations/{id}/turns/{turn}/events")))
        .header("Last-Event-ID", last_event_id)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200, "Last-Event-ID {last_event_id}");
    let body = tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .unwrap_or_else(|_| panic!("Last-Event-ID {last_event_id}: the stream hangs"))
        .expect("body");
    let events = body
        .split("\n\n")
        .filter(|frame| frame.contains("data:"))
        .map(|frame| {
            let field = |name: &str| {
                frame
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::trim)
                    .expect("field")
                    .to_string()
            };
            let event: TurnEvent = serde_json::from_str(&field("data:")).expect("event");
            (field("id:").parse().expect("id"), event)
        })
        .collect();
    (events, started.elapsed())
}

// The issue: `Last-Event-ID` equal to the final event's id (what a browser sends when it
// reconnects on its own after the turn's end) hung for ever, as did any id past the end.
#[tokio::test]
async fn the_final_event_id_as_last_event_id_gets_the_end_again_and_closes_within_a_second() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let (id, turn, events) = completed_turn(&server).await;
    let end = events.last().cloned().expect("the end");
    for after in [end.0, end.0 + 1, end.0 + 1_000_000] {
        let (got, took) = resume_raw(&server, &id, turn, &after.to_string()).await;
        println!(
            "Last-Event-ID {after} (the end is {}): closed after {took:?}",
            end.0
        );
        assert_eq!(got, std::slice::from_ref(&end), "Last-Event-ID {after}");
        assert!(took < CLOSES_WITHIN, "Last-Event-ID {after}: {took:?}");
    }

    // A paused turn's end, likewise: the browser's stream reconnecting after the pause.
    let turn = server.send(&id, "Please publish a note on emoji").await;
    let paused = server.events(&id, turn, None).await;
    let end = paused.last().cloned().expect("the pause");
    assert!(matches!(
        end.1,
        TurnEvent::TurnEnd {
            status: TurnStatus::Paused,
            ..
        }
    ));
    let (got, took) = resume_raw(&server, &id, turn, &end.0.to_string()).await;
    assert_eq!(got, [end]);
    assert!(took < CLOSES_WITHIN, "{took:?}");
}

// The issue: `Last-Event-ID: 18446744073709551615` panicked (add with overflow) in debug builds.
#[tokio::test]
async fn the_largest_event_id_neither_panics_nor_hangs() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let (id, turn, events) = completed_turn(&server).await;
    let end = events.last().cloned().expect("the end");
    let (got, took) = resume_raw(&server, &id, turn, "18446744073709551615").await;
    println!("Last-Event-ID 18446744073709551615: closed after {took:?}");
    assert_eq!(got, std::slice::from_ref(&end));
    assert!(took < CLOSES_WITHIN, "{took:?}");

    let response = server
        .client
        .get(server.url(&format!(
            "/api/conversations/{id}/turns/{turn}/events?after=18446744073709551615"
        )))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    assert!(response.text().await.expect("body").contains("turn_end"));
    // The server still answers: nothing panicked. (A later reader reads a block's deltas
    // joined.)
    assert_same_content(&server.events(&id, turn, None).await, &events);
}

#[tokio::test]
async fn an_event_id_that_is_not_a_number_is_400_with_a_sentence() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let (id, turn, _) = completed_turn(&server).await;
    let url = server.url(&format!("/api/conversations/{id}/turns/{turn}/events"));
    let header = |value: &[u8]| {
        server.client.get(&url).header(
            "Last-Event-ID",
            reqwest::header::HeaderValue::from_bytes(value).expect("header value"),
        )
    };
    let requests = [
        ("Last-Event-ID: abc", header(b"abc")),
        ("Last-Event-ID: -1", header(b"-1")),
        ("Last-Event-ID: 1.5", header(b"1.5")),
        ("Last-Event-ID: 2^64", header(b"18446744073709551616")),
        ("Last-Event-ID: not UTF-8", header(b"\xff\xfe")),
        ("?after=abc", server.client.get(format!("{url}?after=abc"))),
        (
            "?after=2^64",
            server
                .client
                .get(format!("{url}?after=18446744073709551616")),
        ),
    ];
    for (what, request) in requests {
        let response = request.send().await.expect("answered");
        assert_eq!(response.status(), 400, "{what}");
        let body: serde_json::Value = response.json().await.expect("json");
        let error = body["error"].as_str().expect("error");
        assert!(
            error.contains("is not an event id; send the id of the last event read"),
            "{what}: {error}"
        );
    }
}

// Heartbeats keep a quiet stream open; a stream of a turn that makes no progress closes after
// the idle limit (the browser then reconnects on its own).
#[tokio::test]
async fn a_quiet_stream_gets_heartbeats_and_closes_after_the_idle_limit() {
    let upstream = silent_upstream().await;
    let data = tempfile::tempdir().expect("tempdir");
    let mut config = common::config(data.path(), 0.0, None);
    config.models = Some(models(&upstream, "first_byte_timeout_seconds = 60"));
    config.streams = StreamLimits {
        heartbeat: Duration::from_millis(200),
        idle: Duration::from_secs(1),
        ..StreamLimits::default()
    };
    let server = common::start_config(config).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Hello?").await;
    let started = Instant::now();
    let body = server
        .client
        .get(server.url(&format!("/api/conversations/{id}/turns/{turn}/events")))
        .send()
        .await
        .expect("stream")
        .text()
        .await
        .expect("body");
    let took = started.elapsed();
    let heartbeats = body.lines().filter(|l| l.starts_with(':')).count();
    println!("a quiet stream: {heartbeats} heartbeats, closed after {took:?}");
    assert!(heartbeats >= 3, "{heartbeats} heartbeats in {body:?}");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(3),
        "closed after {took:?}"
    );
    assert!(!body.contains("turn_end"), "the turn still runs: {body:?}");
    assert_eq!(server.act(&id, turn, "cancel", json!({})).await, 202);
}

// The logs of paused turns are released after the linger like ended ones; read after that, the
// log is rebuilt from storage with the same numbering, and the resumed turn goes on from it.
#[tokio::test]
async fn a_paused_turn_read_after_its_linger_is_rebuilt_with_the_same_numbering() {
    let data = tempfile::tempdir().expect("tempdir");
    let mut config = common::config(data.path(), 0.0, None);
    config.streams.linger = Duration::from_millis(100);
    let server = common::start_config(config).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Please publish a note on emoji").await;
    let live = server.events(&id, turn, None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rebuilt = server.events(&id, turn, None).await;
    assert_same_content(&live, &rebuilt);
    assert_eq!(live.last(), rebuilt.last());

    let transcript = server.transcript(&id).await;
    let Some(Block::ApprovalRequest { call_id, .. }) =
        transcript.turns[0].messages[1].blocks.last()
    else {
        panic!("an approval request");
    };
    let decision = json!({ "call_id": call_id, "approve": true });
    assert_eq!(server.act(&id, turn, "decision", decision).await, 202);
    let paused_at = live.last().map(|(id, _)| *id);
    let rest = server.events(&id, turn, paused_at).await;
    assert_eq!(Some(rest[0].0), paused_at.map(|id| id + 1), "{rest:?}");
    assert!(matches!(
        rest.last(),
        Some((
            _,
            TurnEvent::TurnEnd {
                status: TurnStatus::Completed,
                ..
            }
        ))
    ));
}

// ---------------------------------------------------------------------------------------------
// A restart
// ---------------------------------------------------------------------------------------------

/// `target/debug/portal serve` on a free loopback port with the demo model at `pace`; the
/// process and where it serves, once it says so.
fn spawn_portal(data: &Path, pace: &str) -> (Child, Server) {
    let (child, base) = common::spawn_portal_at(data, pace);
    (child, Server::at(base))
}

fn stop(mut child: Child) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
}

// Event numbering survives a restart: a `Last-Event-ID` from before it resumes on the log the
// new process rebuilds from storage, for every id the old one sent; nothing is lost or repeated.
// A turn paused before the restart and resumed after it goes on with the same numbering.
#[tokio::test]
async fn after_a_restart_every_last_event_id_resumes_losing_and_repeating_nothing() {
    let data = tempfile::tempdir().expect("tempdir");
    let (first, before) = spawn_portal(data.path(), "0");
    let id = before.conversation().await;
    let ended = before.send(&id, "Tell me about scripts").await;
    let live = before.events(&id, ended, None).await;
    let paused = before.send(&id, "Please publish a note on emoji").await;
    let live_paused = before.events(&id, paused, None).await;
    stop(first);

    let (second, after) = spawn_portal(data.path(), "0");
    for (at, (seen, _)) in live.iter().enumerate() {
        let rest = after.events(&id, ended, Some(*seen)).await;
        if at + 1 == live.len() {
            assert_eq!(rest, live[at..], "the end again");
            continue;
        }
        assert!(
            rest.iter().all(|(id, _)| id > seen),
            "after {seen}: nothing repeated: {rest:?}"
        );
        let mut joined = live[..=at].to_vec();
        joined.extend(rest);
        assert_same_content(&joined, &live);
    }
    assert_same_content(&after.events(&id, paused, None).await, &live_paused);

    let transcript = after.transcript(&id).await;
    let Some(Block::ApprovalRequest { call_id, .. }) =
        transcript.turns[1].messages[1].blocks.last()
    else {
        panic!("an approval request");
    };
    let decision = json!({ "call_id": call_id, "approve": true });
    assert_eq!(after.act(&id, paused, "decision", decision).await, 202);
    let paused_at = live_paused.last().map(|(id, _)| *id);
    let rest = after.events(&id, paused, paused_at).await;
    stop(second);
    assert_eq!(Some(rest[0].0), paused_at.map(|id| id + 1), "{rest:?}");
    assert!(matches!(
        rest.last(),
        Some((
            _,
            TurnEvent::TurnEnd {
                status: TurnStatus::Completed,
                ..
            }
        ))
    ));
}

// A turn cut off by a crash mid-stream: the `Last-Event-ID` the browser had resumes on the
// rebuilt log with the rest of the block it was reading, then the cut-off end.
#[tokio::test]
async fn after_a_crash_mid_stream_the_last_event_id_resumes_with_the_rest_of_the_text() {
    let data = tempfile::tempdir().expect("tempdir");
    let (first, before) = spawn_portal(data.path(), "1");
    let id = before.conversation().await;
    let turn = before.send(&id, "Tell me about scripts").await;
    let mut stream = before.stream(&id, turn, None).await;
    let mut read = Vec::new();
    while texts(&read).get(&(1, 1)).map_or(0, |t| t.chars().count()) < 12 {
        read.push(stream.next().await.expect("still streaming"));
    }
    stop(first);

    let (second, after) = spawn_portal(data.path(), "1");
    let rest = after
        .events(&id, turn, read.last().map(|(id, _)| *id))
        .await;
    let transcript = after.transcript(&id).await;
    stop(second);
    let Block::Text { text: stored } = &transcript.turns[0].messages[1].blocks[1] else {
        panic!("the narration: {:?}", transcript.turns[0].messages[1]);
    };
    let mut joined = read.clone();
    joined.extend(rest.iter().cloned());
    assert_eq!(texts(&joined).get(&(1, 1)), Some(stored), "nothing lost");
    assert!(
        rest.iter()
            .all(|(id, _)| Some(*id) > read.last().map(|(id, _)| *id)),
        "nothing repeated"
    );
    assert!(matches!(
        rest.last(),
        Some((
            _,
            TurnEvent::TurnEnd {
                status: TurnStatus::CutOff,
                ..
            }
        ))
    ));
}

// ---------------------------------------------------------------------------------------------
// The upstream model
// ---------------------------------------------------------------------------------------------

/// The API key the fake endpoints are called with: not `sk-`-shaped, so only the configured key's
/// own redaction keeps it out of the log.
const KEY: &str = "portal-attack-key-7f3c9b2e1d";

/// Every line the server logged in this process.
static LOG: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        LOG.lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the server has logged so far, once logging is captured (the first call starts it).
fn logged() -> String {
    static CAPTURE: std::sync::Once = std::sync::Once::new();
    CAPTURE.call_once(|| {
        tracing_subscriber::fmt()
            .with_writer(|| LogWriter)
            .with_ansi(false)
            .with_env_filter("portal=debug")
            .init();
    });
    String::from_utf8_lossy(&LOG.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
}

/// The models file offering one OpenAI-compatible model at `base_url`, called with [`KEY`],
/// with one-second timeouts and `extra` lines (which may override them).
fn models(base_url: &str, extra: &str) -> ModelRegistry {
    ModelRegistry::from_toml(&models_file(base_url, extra), 0.0, |_| None).expect("models file")
}

/// The text of [`models`]'s file: the model writes at most 1,024 tokens.
fn models_file(base_url: &str, extra: &str) -> String {
    let mut fields = vec![
        ("connect_timeout_seconds", "1"),
        ("first_byte_timeout_seconds", "1"),
        ("idle_timeout_seconds", "1"),
    ];
    let extra: Vec<(&str, &str)> = extra
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    fields.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    fields.extend(extra);
    let fields: String = fields.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    format!(
        r#"default = "upstream"

[[models]]
name = "upstream"
kind = "openai"
base_url = "{base_url}"
api_key = "{KEY}"
model = "fake-model"
{fields}
[models.capabilities]
context_window = 32768
max_output_tokens = 1024
can_reason = false
can_see = false
"#
    )
}

/// A fake endpoint answering its `n`-th request (from 0) with `answer(n, headers)`; its base
/// URL and how many requests it got.
async fn upstream(
    answer: impl Fn(usize, &HeaderMap) -> Response + Clone + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |headers: HeaderMap| {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            async move { answer(n, &headers) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base_url, requests)
}

/// An endpoint that accepts connections and never answers, nor reads.
async fn silent_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    base_url
}

fn event_stream(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(body)
        .expect("response")
}

/// A whole answer: "Hello after waiting." and its finish.
fn hello() -> Response {
    event_stream(Body::from(concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" after waiting.\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    )))
}

/// `first` and then `piece` over and over, `every` apart (at once when zero), for ever.
fn endless(first: &'static str, piece: Bytes, every: Duration) -> Body {
    let pieces = stream::iter(std::iter::once(Bytes::from_static(first.as_bytes())))
        .chain(stream::repeat(piece).then(move |piece| async move {
            if !every.is_zero() {
                tokio::time::sleep(every).await;
            }
            piece
        }))
        .map(Ok::<_, Infallible>);
    Body::from_stream(pieces)
}

/// How a turn on the fake endpoint ended: its `turn_end`, how long it took from the message,
/// and the turn as stored.
struct Outcome {
    status: TurnStatus,
    reason: Option<String>,
    took: Duration,
    transcript: String,
}

async fn run_turn(models: ModelRegistry) -> Outcome {
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start_with(data.path(), 0.0, Some(models)).await;
    let id = server.conversation().await;
    let started = Instant::now();
    let turn = server.send(&id, "Hello?").await;
    let events = tokio::time::timeout(Duration::from_secs(30), server.events(&id, turn, None))
        .await
        .expect("the turn ends");
    let took = started.elapsed();
    let Some((_, TurnEvent::TurnEnd { status, reason })) = events.last().cloned() else {
        panic!("no end: {events:?}");
    };
    let transcript = serde_json::to_string(&server.transcript(&id).await).expect("json");
    Outcome {
        status,
        reason,
        took,
        transcript,
    }
}

/// The turn failed with `reason`, after `at_least` and within `timeout` plus a second and a
/// half (a debug build's turn around the call).
fn failed(outcome: &Outcome, reason: &str, at_least: Duration, timeout: Duration) {
    println!("failed after {:?}: {:?}", outcome.took, outcome.reason);
    assert_eq!(outcome.status, TurnStatus::Failed);
    assert_eq!(outcome.reason.as_deref(), Some(reason));
    let transcript: portal_core::Transcript =
        serde_json::from_str(&outcome.transcript).expect("a transcript");
    let stored = transcript.turns.last().expect("the turn");
    assert_eq!(
        stored.end_reason(),
        Some(reason),
        "the reason is kept for a reload"
    );
    assert!(
        outcome.took >= at_least && outcome.took < timeout + Duration::from_millis(1500),
        "failed after {:?}",
        outcome.took
    );
}

const NO_ANSWER: &str = "The model did not start answering within 1 s; send the message again \
                         later, and tell an administrator if it keeps happening.";

// An endpoint that accepts the connection and never answers fails the turn at the first-byte
// timeout (1 s here; 300 s by default).
#[tokio::test]
async fn an_endpoint_that_never_answers_fails_the_turn_at_the_first_byte_timeout() {
    let base_url = silent_upstream().await;
    let outcome = run_turn(models(&base_url, "")).await;
    failed(
        &outcome,
        NO_ANSWER,
        Duration::from_secs(1),
        Duration::from_secs(1),
    );
}

// Headers, then nothing: the first-byte timeout still applies, since headers are not an answer.
#[tokio::test]
async fn an_endpoint_that_sends_headers_then_hangs_fails_the_turn_at_the_first_byte_timeout() {
    let (base_url, _) = upstream(|_, _| {
        event_stream(Body::from_stream(stream::pending::<
            Result<Bytes, Infallible>,
        >()))
    })
    .await;
    let outcome = run_turn(models(&base_url, "")).await;
    failed(
        &outcome,
        NO_ANSWER,
        Duration::from_secs(1),
        Duration::from_secs(1),
    );
}

// Keep-alives (comment lines and empty lines) for ever are not an answer: before the first
// piece they run into the first-byte timeout, after it into the idle timeout.
#[tokio::test]
async fn an_endpoint_that_sends_only_keep_alives_fails_the_turn_at_its_timeouts() {
    let keep_alive = Bytes::from_static(b": keep-alive\n\n\n");
    let every = Duration::from_millis(100);
    let (base_url, _) =
        upstream(move |_, _| event_stream(endless("", keep_alive.clone(), every))).await;
    let outcome = run_turn(models(&base_url, "")).await;
    failed(
        &outcome,
        NO_ANSWER,
        Duration::from_secs(1),
        Duration::from_secs(1),
    );

    let keep_alive = Bytes::from_static(b": keep-alive\n\n");
    let (base_url, _) = upstream(move |_, _| {
        event_stream(endless(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me\"}}]}\n\n",
            keep_alive.clone(),
            every,
        ))
    })
    .await;
    let outcome = run_turn(models(&base_url, "idle_timeout_seconds = 2")).await;
    failed(
        &outcome,
        "The model stopped answering for 2 s before it finished; send the message again.",
        Duration::from_secs(2),
        Duration::from_secs(2),
    );
    assert!(
        outcome.transcript.contains("Let me"),
        "what streamed is kept"
    );
}

/// Held by each test that measures memory for all it does, its setup too, so that they run one
/// at a time: the peak is the whole process's.
static MEMORY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs `scenario` with the process's peak resident memory reset first; returns its output and
/// how far the peak rose above the resident memory before, in MiB. The caller holds [`MEMORY`].
async fn peak_growth_mib<T>(scenario: impl std::future::Future<Output = T>) -> (T, u64) {
    let status = |field: &str| -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .expect("/proc/self/status")
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
    };
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak is reset");
    let before = status("VmRSS:");
    let output = scenario.await;
    let peak = status("VmHWM:");
    (output, peak.saturating_sub(before) / 1024)
}

/// How far the peak may rise while a misbehaving endpoint is read: the caps are 4 MiB (a line)
/// and 64 KiB (an error body); the rest is the server, the endpoint and the test at work.
const MEMORY_BOUND_MIB: u64 = 48;

// 64 tool calls of 960 KiB of arguments each, every one under the cap of one call (1 MiB):
// refused once the calls together pass their cap (4 MiB by default), memory bounded. Before
// that cap one reply could hold 64 MiB of arguments (issue 42).
#[tokio::test]
async fn sixty_four_calls_of_960_kib_fail_the_turn_at_the_calls_total_cap_with_bounded_memory() {
    let _alone = MEMORY.lock().await;
    let (base_url, _) = upstream(|_, _| {
        let letters = "a".repeat(64 * 1024);
        let chunks = (0..64u32).flat_map(move |call| {
            let start = format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{call},\"id\":\"c{call}\",\"function\":{{\"name\":\"count_characters\",\"arguments\":\"\"}}}}]}}}}]}}\n\n"
            );
            let letters = letters.clone();
            std::iter::once(start).chain((0..15).map(move |_| {
                format!(
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{call},\"function\":{{\"arguments\":\"{letters}\"}}}}]}}}}]}}\n\n"
                )
            }))
        });
        event_stream(Body::from_stream(
            stream::iter(chunks).map(|chunk| Ok::<_, Infallible>(Bytes::from(chunk))),
        ))
    })
    .await;
    let (outcome, growth) = peak_growth_mib(run_turn(models(&base_url, ""))).await;
    println!("64 calls of 960 KiB of arguments: the peak rose {growth} MiB");
    failed(
        &outcome,
        "The model wrote more than 4096 KiB of arguments for its tool calls in one reply; send the \
         message again, perhaps asking for less at once.",
        Duration::ZERO,
        Duration::from_secs(10),
    );
    assert!(
        growth < MEMORY_BOUND_MIB,
        "the peak rose {growth} MiB, over {MEMORY_BOUND_MIB} MiB"
    );
}

// One endless line: refused at the line cap (4 MiB by default), memory bounded. Before the cap
// the server grew to 2 GB.
#[tokio::test]
async fn an_endless_line_fails_the_turn_at_the_line_cap_with_bounded_memory() {
    let _alone = MEMORY.lock().await;
    let piece = Bytes::from(vec![b'a'; 64 * 1024]);
    let (base_url, _) = upstream(move |_, _| {
        event_stream(endless(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"",
            piece.clone(),
            Duration::ZERO,
        ))
    })
    .await;
    let (outcome, growth) = peak_growth_mib(run_turn(models(&base_url, ""))).await;
    println!("an endless line: the peak rose {growth} MiB");
    failed(
        &outcome,
        "The model's endpoint sent a line longer than 4096 KiB, more than the server accepts; \
         send the message again, and tell an administrator if it keeps happening.",
        Duration::ZERO,
        Duration::from_secs(3),
    );
    assert!(growth < MEMORY_BOUND_MIB, "grew {growth} MiB");
}

// A 600 MiB error body (streamed by the endpoint, never held by the test): only its first
// 64 KiB are read, and the log quotes it cut short. Before the cap it peaked at 2.35 GB.
#[tokio::test]
async fn a_600_mib_error_body_is_read_only_to_its_cap_with_bounded_memory() {
    let _alone = MEMORY.lock().await;
    const MIB: usize = 1024 * 1024;
    const OPENING: &[u8] = b"{\"error\":{\"message\":\"";
    let (base_url, _) = upstream(|_, _| {
        let piece = Bytes::from(vec![b'x'; MIB]);
        let body = stream::iter(std::iter::once(Bytes::from_static(OPENING)))
            .chain(stream::iter(std::iter::repeat_n(piece, 600)))
            .map(Ok::<_, Infallible>);
        Response::builder()
            .status(StatusCode::BAD_REQUEST)
            .header(header::CONTENT_TYPE, "application/json")
            .header(
                header::CONTENT_LENGTH,
                (600 * MIB + OPENING.len()).to_string(),
            )
            .body(Body::from_stream(body))
            .expect("response")
    })
    .await;
    logged();
    let (outcome, growth) = peak_growth_mib(run_turn(models(&base_url, ""))).await;
    println!(
        "a 600 MiB error body: the peak rose {growth} MiB in {:?}",
        outcome.took
    );
    failed(
        &outcome,
        "The model's endpoint rejected the request (HTTP 400); the server's log says why.",
        Duration::ZERO,
        Duration::from_secs(3),
    );
    assert!(growth < MEMORY_BOUND_MIB, "grew {growth} MiB");
    let log = logged();
    let line = log
        .lines()
        .find(|l| l.contains("(HTTP 400)") && l.contains("xxxx"))
        .expect("the failure is logged");
    assert!(
        line.matches('x').count() <= 310,
        "the body is quoted cut short: {} characters",
        line.len()
    );
}

// HTTP 429 with `Retry-After: 1` twice, then an answer: the call is made again after the wait the
// endpoint asked for, and the turn completes. Retries are bounded in count (2 by default) and in
// total wait (30 s by default), and only a refused call is retried.
#[tokio::test]
async fn rate_limits_are_retried_after_retry_after_a_bounded_number_of_times() {
    let limited = || {
        Response::builder()
            .status(StatusCode::TOO_MANY_REQUESTS)
            .header(header::RETRY_AFTER, "1")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
            ))
            .expect("response")
    };
    let (base_url, requests) = upstream(move |n, _| if n < 2 { limited() } else { hello() }).await;
    let outcome = run_turn(models(&base_url, "")).await;
    assert_eq!(
        outcome.status,
        TurnStatus::Completed,
        "{:?}",
        outcome.reason
    );
    assert!(outcome.transcript.contains("Hello after waiting."));
    assert_eq!(requests.load(Ordering::SeqCst), 3);
    assert!(
        outcome.took >= Duration::from_secs(2) && outcome.took < Duration::from_secs(4),
        "{:?}",
        outcome.took
    );

    // Refused for ever: the first call and two retries, then the turn fails.
    let (base_url, requests) = upstream(move |_, _| limited()).await;
    let outcome = run_turn(models(&base_url, "")).await;
    failed(
        &outcome,
        "The model's endpoint is rate limiting requests; wait 1 s and send the message again.",
        Duration::from_secs(2),
        Duration::from_secs(3),
    );
    assert_eq!(requests.load(Ordering::SeqCst), 3);

    // A wait past the total allowed is not made.
    let (base_url, requests) = upstream(move |_, _| limited()).await;
    let outcome = run_turn(models(&base_url, "retry_wait_seconds = 0")).await;
    assert_eq!(outcome.status, TurnStatus::Failed);
    assert_eq!(requests.load(Ordering::SeqCst), 1);

    // A server error without `Retry-After` is retried after 1 s.
    let (base_url, requests) = upstream(move |n, _| {
        if n == 0 {
            Response::builder()
                .status(StatusCode::SERVICE_UNAVAILABLE)
                .body(Body::from("overloaded"))
                .expect("response")
        } else {
            hello()
        }
    })
    .await;
    let outcome = run_turn(models(&base_url, "")).await;
    assert_eq!(outcome.status, TurnStatus::Completed);
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    assert!(outcome.took >= Duration::from_secs(1), "{:?}", outcome.took);
}

// HTTP 401 with a body echoing the API key (and the `Authorization` header it was sent): the turn
// fails saying to check the key, and neither the log, nor the turn's end, nor the stored turn
// holds the key.
#[tokio::test]
async fn a_401_echoing_the_api_key_fails_the_turn_and_the_key_is_logged_nowhere() {
    let (base_url, _) = upstream(|_, headers| {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let key = sent.trim_start_matches("Bearer ");
        let body = json!({"error": {
            "message": format!("Incorrect API key provided: {key}. You sent `Authorization: {sent}`."),
            "type": "invalid_request_error",
            "code": "invalid_api_key"
        }});
        Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .expect("response")
    })
    .await;
    logged();
    let outcome = run_turn(models(&base_url, "")).await;
    failed(
        &outcome,
        "The model's endpoint refused its API key (HTTP 401); ask an administrator to check the \
         model's api_key.",
        Duration::ZERO,
        Duration::from_secs(1),
    );
    let log = logged();
    assert!(
        log.contains("Incorrect API key provided: [redacted]"),
        "the failure is logged: {log}"
    );
    assert!(!log.contains(KEY), "the key is in the log");
    assert!(!log.contains(&KEY[..12]), "part of the key is in the log");
    assert!(!outcome.transcript.contains(KEY));
    assert!(!outcome.reason.unwrap_or_default().contains(KEY));
}

// More tool calls than the cap in one reply, and one call's arguments over the cap: each fails
// the call with its reason.
#[tokio::test]
async fn too_many_tool_calls_or_too_long_arguments_fail_the_turn_with_the_cap() {
    let calls: String = (0..3)
        .map(|i| {
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"c{i}\",\"function\":{{\"name\":\"count_characters\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n"
            )
        })
        .collect();
    let (base_url, _) = upstream(move |_, _| event_stream(Body::from(calls.clone()))).await;
    let outcome = run_turn(models(&base_url, "max_tool_calls = 2")).await;
    failed(
        &outcome,
        "The model made more than 2 tool calls in one reply; send the message again, perhaps \
         asking for less at once.",
        Duration::ZERO,
        Duration::from_secs(1),
    );

    let piece = Bytes::from_static(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}]}}]}\n\n");
    let (base_url, _) = upstream(move |_, _| {
        event_stream(endless(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c0\",\"function\":{\"name\":\"count_characters\",\"arguments\":\"\"}}]}}]}\n\n",
            piece.clone(),
            Duration::ZERO,
        ))
    })
    .await;
    let outcome = run_turn(models(&base_url, "max_arguments_kib = 1")).await;
    failed(
        &outcome,
        "The model wrote more than 1 KiB of arguments for one tool call; send the message again, \
         perhaps asking for less at once.",
        Duration::ZERO,
        Duration::from_secs(1),
    );
}

/// The CPU time this process has used so far, user and system, in seconds (Linux counts it in
/// hundredths).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let after = stat.rsplit_once(')').expect("a command").1;
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|t| t.parse::<u64>().expect("ticks"))
        .sum();
    ticks as f64 / 100.0
}

/// Ordinary text deltas: one word each, as models stream them.
const WORDS: [&str; 8] = [
    "The ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dogs. ",
];

/// A server on SQLite in a temporary folder, kept while the folder is held, whose one model is
/// the endpoint at `base_url` writing at most 8,192 tokens: a reply cap of 131,072 characters.
async fn serve_long_replies(base_url: &str) -> (tempfile::TempDir, Server) {
    let file =
        models_file(base_url, "").replace("max_output_tokens = 1024", "max_output_tokens = 8192");
    let models = ModelRegistry::from_toml(&file, 0.0, |_| None).expect("models file");
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start_with(data.path(), 0.0, Some(models)).await;
    (data, server)
}

/// How far the peak may rise while a 64 MiB reply is refused at a reply cap of 131,072
/// characters: the reply up to the cap as deltas in the turn's log, in storage and in the test's
/// own reader, and the server, the endpoint and the test at work.
const REPLY_BOUND_MIB: u64 = 64;

/// How far the peak may rise while a conversation whose reply was cut at the cap is searched.
const SEARCH_BOUND_MIB: u64 = 16;

// A reply of 64 MiB of ordinary text deltas (a word each) from a model of 8,192 output tokens:
// the call fails at the reply cap, 16 characters a token (131,072 characters), with the reason;
// what came before the cap stays in the turn, and memory is bounded. A search by that user
// afterwards, which reads the stored reply, is bounded too. Before the cap such a reply completed
// at +569 MB and 12 s of CPU, and every later search by that user cost +320 MB.
#[tokio::test]
async fn a_64_mib_reply_fails_the_turn_at_the_reply_cap_and_later_searches_stay_bounded() {
    let _alone = MEMORY.lock().await;
    const MIB: usize = 1024 * 1024;
    let events: String = WORDS
        .iter()
        .cycle()
        .take(64)
        .map(|word| {
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{word}\"}}}}]}}\n\n"
            )
        })
        .collect();
    let piece_chars: usize = WORDS.iter().map(|w| w.len()).sum::<usize>() * 8;
    let pieces = 64 * MIB / piece_chars;
    let piece = Bytes::from(events);
    let (base_url, _) = upstream(move |_, _| {
        let finish = Bytes::from_static(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        );
        let body = stream::iter(std::iter::repeat_n(piece.clone(), pieces))
            .chain(stream::iter([finish]))
            .map(Ok::<_, Infallible>);
        event_stream(Body::from_stream(body))
    })
    .await;
    let (_data, server) = serve_long_replies(&base_url).await;
    let id = server.conversation().await;

    let cpu = cpu_seconds();
    let (events, growth) = peak_growth_mib(async {
        let turn = server.send(&id, "Hello?").await;
        tokio::time::timeout(Duration::from_secs(60), server.events(&id, turn, None))
            .await
            .expect("the turn ends within a minute")
    })
    .await;
    let cpu = cpu_seconds() - cpu;
    eprintln!("a 64 MiB reply: the peak rose {growth} MiB, {cpu:.2} s of CPU");
    let Some((_, TurnEvent::TurnEnd { status, reason })) = events.last().cloned() else {
        panic!("no end: {:?}", events.last());
    };
    assert_eq!(status, TurnStatus::Failed);
    assert_eq!(
        reason.as_deref(),
        Some(
            "The model wrote more than 131072 characters in one reply, more than the server \
             accepts from it; send the message again, perhaps asking for a shorter answer, and \
             tell an administrator if it keeps happening."
        )
    );
    let transcript = server.transcript(&id).await;
    let stored = transcript.turns.last().expect("the turn");
    let text: usize = stored
        .messages
        .iter()
        .filter(|m| m.role == portal_core::Role::Assistant)
        .flat_map(|m| &m.blocks)
        .map(|b| match b {
            Block::Text { text } => text.chars().count(),
            _ => 0,
        })
        .sum();
    assert!(
        text > 131_000 && text <= 131_072,
        "what came before the cap stays, and nothing past it: {text} characters"
    );
    assert!(growth < REPLY_BOUND_MIB, "grew {growth} MiB");

    for q in ["lazy%20dogs", "zebra"] {
        let (found, growth) = peak_growth_mib(async {
            let page: serde_json::Value = server
                .client
                .get(server.url(&format!("/api/conversations?q={q}")))
                .send()
                .await
                .expect("searched")
                .json()
                .await
                .expect("json");
            page["conversations"].as_array().expect("a page").len()
        })
        .await;
        eprintln!("a search for {q}: the peak rose {growth} MiB");
        assert_eq!(found, usize::from(q != "zebra"), "{q}");
        assert!(growth < SEARCH_BOUND_MIB, "{q}: grew {growth} MiB");
    }
}

/// How far the peak may rise while a conversation with a 64 MiB reply stored is searched: SQLite
/// reads the reply's row whole (64 MiB); the search itself makes nothing of the reply's size.
const STORED_SEARCH_BOUND_MIB: u64 = 96;

// A reply of 64 MiB stored (as one streamed before the reply cap could be): a search by its owner
// through all of it holds SQLite's row and no copy of the text. Before, the text was extracted
// from the row, copied, folded whole and copied back, and such a search cost +326 MiB.
#[tokio::test]
async fn a_search_through_a_64_mib_stored_reply_holds_no_copy_of_it() {
    use portal_core::{Message, Role};
    use portal_store::{ConversationQuery, NewTurn, Owner, Storage};
    use portal_store_sqlite::SqliteStorage;
    const MIB: usize = 1024 * 1024;
    let _alone = MEMORY.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let storage = SqliteStorage::open(data.path()).expect("the database opens");
    let owner = Owner::new("acme", "alice");
    let id = storage
        .create_conversation(&owner, "assistant")
        .expect("opens");
    let question = Message::new(Role::User, vec![Block::text("Hello?")]);
    let turn = storage
        .open_turn(&id, NewTurn::chat(question))
        .expect("turn");
    let message = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    let block = storage
        .append_block(&id, turn, message, &Block::text(""))
        .expect("block");
    let lines = "A line of the reply, \"quoted\", as models write them.\n".repeat(16 * 1024);
    for _ in 0..64 * MIB / lines.len() {
        storage
            .append_block_text(&id, turn, message, block, &lines)
            .expect("text");
    }
    storage
        .set_turn_status(&id, turn, TurnStatus::Failed)
        .expect("ends");
    for q in ["as models write them", "zebra"] {
        let query = ConversationQuery {
            search: Some(q.into()),
            limit: 50,
            ..Default::default()
        };
        let cpu = cpu_seconds();
        let (found, growth) = peak_growth_mib(async {
            storage
                .list_conversations(&owner, &query)
                .expect("searched")
                .conversations
                .len()
        })
        .await;
        let cpu = cpu_seconds() - cpu;
        eprintln!(
            "a search for {q} through a 64 MiB reply: the peak rose {growth} MiB, {cpu:.2} s of CPU"
        );
        assert_eq!(found, usize::from(q != "zebra"), "{q}");
        assert!(growth < STORED_SEARCH_BOUND_MIB, "{q}: grew {growth} MiB");
    }
}

/// How far the peak may rise while a reply of 131,000 one-character deltas plays: the text is
/// 128 KiB, held merged in the turn's log, in storage's writes and in the test's reader; the rest
/// is the server, the endpoint and the test at work.
const ONE_CHARACTER_BOUND_MIB: u64 = 16;

// A reply up to the reply cap written one character a delta (131,000 deltas of a model of 8,192
// output tokens): the turn's log merges each delta into the one before it in the same block, so
// memory is a small multiple of the text, and a reader that comes after the end reads the block
// in one delta, not 131,000 events. Before the merging such a reply cost +43 MiB, and a late
// reader read 131,000 events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_of_one_character_deltas_is_held_merged_with_bounded_memory() {
    let _alone = MEMORY.lock().await;
    const CHARACTERS: usize = 131_000;
    let (base_url, _) = upstream(|_, _| {
        let delta = Bytes::from_static(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n");
        let finish = Bytes::from_static(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        );
        let body = stream::iter(std::iter::repeat_n(delta, CHARACTERS))
            .chain(stream::iter([finish]))
            .map(Ok::<_, Infallible>);
        event_stream(Body::from_stream(body))
    })
    .await;
    let (_data, server) = serve_long_replies(&base_url).await;
    let id = server.conversation().await;

    let started = Instant::now();
    let ((turn, live), growth) = peak_growth_mib(async {
        let turn = server.send(&id, "Hello?").await;
        let mut events = server.stream(&id, turn, None).await;
        let mut text = 0;
        let mut last = None;
        while let Some((_, event)) = events.next().await {
            if let TurnEvent::Delta { text: piece, .. } = &event {
                text += piece.len();
            }
            last = Some(event);
        }
        assert!(
            matches!(
                last,
                Some(TurnEvent::TurnEnd {
                    status: TurnStatus::Completed,
                    ..
                })
            ),
            "{last:?}"
        );
        (turn, text)
    })
    .await;
    println!(
        "{CHARACTERS} one-character deltas: the peak rose {growth} MiB, the turn took {:?}",
        started.elapsed()
    );
    assert_eq!(live, CHARACTERS, "the live reader read the whole text");
    assert!(
        growth < ONE_CHARACTER_BOUND_MIB,
        "the peak rose {growth} MiB, over {ONE_CHARACTER_BOUND_MIB} MiB"
    );

    let late = server.events(&id, turn, None).await;
    let deltas = late
        .iter()
        .filter(|(_, event)| matches!(event, TurnEvent::Delta { .. }))
        .count();
    assert_eq!(deltas, 1, "a late reader reads the block in one delta");
    assert_eq!(common::streamed_text(&late, 1, 0).len(), CHARACTERS);
    let (middle, _) = late
        .iter()
        .find(|(_, event)| matches!(event, TurnEvent::Delta { .. }))
        .expect("the delta");
    let resumed = server.events(&id, turn, Some(middle - 1000)).await;
    assert_eq!(
        common::streamed_text(&resumed, 1, 0),
        "a".repeat(1000),
        "a reader resuming inside the merged delta reads the rest of its text"
    );
}
