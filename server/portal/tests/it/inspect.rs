//! What the model saw (issue 31, docs/inspector.md): every model call of a turn is kept with its
//! prompt and the request body as sent, and read back through
//! `GET /api/conversations/{id}/turns/{turn}/calls[/{n}]` by the conversation's owner alone, the
//! instructions layer's text only by an administrator.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::Response;
use common::Server;
use portal_core::{Block, Transcript};
use portal_identity::{Identity, TokenDigest};
use portal_model::ModelRegistry;
use serde_json::{Value, json};

/// The demo model with a window small enough for a few long messages to compact.
const SMALL_DEMO: &str = r#"
[[models]]
name = "demo"
kind = "demo"
[models.capabilities]
context_window = 6000
"#;

fn long_message(i: usize) -> String {
    format!(
        "Message {i}: please review the budget. {}",
        "The Lisbon office needs its budget for desks, screens, rent and travel checked line by line. "
            .repeat(14)
    )
}

fn compacted(t: &Transcript) -> bool {
    t.turns
        .iter()
        .flat_map(|turn| &turn.messages)
        .flat_map(|m| &m.blocks)
        .any(|b| matches!(b, Block::Compaction { .. }))
}

async fn get(server: &Server, path: &str) -> (u16, Value) {
    let response = server
        .client
        .get(server.url(path))
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn layer<'a>(call: &'a Value, name: &str) -> Option<&'a Value> {
    call["inspection"]["layers"]
        .as_array()?
        .iter()
        .find(|l| l["layer"] == name)
}

#[tokio::test]
async fn every_call_of_a_turn_is_kept_and_taken_apart_into_layers_counted_to_the_total() {
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = common::start(data.path(), 0.0).await;
    let id = server.conversation().await;
    // The demo answers this with a tool call (`count_characters`), then its reply: two calls.
    let turn = server.send(&id, "Tell me about scripts").await;
    server.events(&id, turn, None).await;

    let (status, calls) = get(
        &server,
        &format!("/api/conversations/{id}/turns/{turn}/calls"),
    )
    .await;
    assert_eq!(status, 200, "{calls}");
    let numbers: Vec<_> = calls
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| (c["call"].as_u64(), c["purpose"].as_str()))
        .collect();
    assert_eq!(numbers, [(Some(1), Some("turn")), (Some(2), Some("turn"))]);

    let path = format!("/api/conversations/{id}/turns/{turn}/calls/2");
    let (status, call) = get(&server, &path).await;
    assert_eq!(status, 200, "{call}");
    let labels: Vec<_> = call["inspection"]["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["label"].as_str().expect("a label"))
        .collect();
    assert_eq!(labels, ["Portal floor", "New message"], "{call}");
    let new_message = layer(&call, "newMessage").expect("the new message");
    assert!(
        new_message["text"]
            .as_str()
            .is_some_and(|t| t.contains("count_characters")),
        "the second call reads the first call's tool call back: {new_message}"
    );
    let inspection = &call["inspection"];
    let summed = inspection["framingTokens"].as_u64().expect("framing")
        + inspection["layers"]
            .as_array()
            .expect("layers")
            .iter()
            .map(|l| l["tokens"].as_u64().expect("tokens"))
            .sum::<u64>()
        + inspection["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["tokens"].as_u64().expect("tokens"))
            .sum::<u64>();
    assert_eq!(Some(summed), inspection["totalTokens"].as_u64(), "{call}");
    assert_eq!(
        inspection["exact"], false,
        "the demo's counts are estimated"
    );
    assert_eq!(call["body"], Value::Null, "the demo sends no body");
    assert!(
        call["note"].as_str().is_some_and(|n| n.contains("demo")),
        "{call}"
    );
    assert_eq!(call["instructionsWithheld"], false);
    assert_eq!(call["diagnostics"], json!([]), "nothing to work around");

    let (status, missing) = get(
        &server,
        &format!("/api/conversations/{id}/turns/{turn}/calls/3"),
    )
    .await;
    assert_eq!(status, 404, "{missing}");
    assert!(
        missing["error"]
            .as_str()
            .is_some_and(|e| e.contains("list its calls")),
        "{missing}"
    );
    let (status, _) = get(&server, "/api/conversations/nobody/turns/1/calls").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn m4_c3_memory_says_what_each_past_call_kept_and_a_summary_call_is_kept_with_the_turns_it_covers()
 {
    let data = tempfile::tempdir().expect("a temporary folder");
    let models = ModelRegistry::from_toml(SMALL_DEMO, 0.0, |_| None).expect("the models file");
    let server = common::start_with(data.path(), 0.0, Some(models)).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    server.events(&id, turn, None).await;
    let next = server.send(&id, "Thanks").await;
    server.events(&id, next, None).await;
    let (_, call) = get(
        &server,
        &format!("/api/conversations/{id}/turns/{next}/calls/1"),
    )
    .await;
    let kept = call["inspection"]["memoryCalls"]
        .as_array()
        .expect("memory's calls");
    assert_eq!(kept.len(), 1, "{call}");
    assert_eq!(kept[0]["name"], "count_characters");
    assert_eq!(kept[0]["kept"], "whole");
    assert_eq!(kept[0]["rules"], json!(["M4"]));

    let mut turn = next;
    for i in 1..=8 {
        turn = server.send(&id, &long_message(i)).await;
        server.events(&id, turn, None).await;
        if compacted(&server.transcript(&id).await) {
            break;
        }
    }
    assert!(
        compacted(&server.transcript(&id).await),
        "the long messages compact"
    );
    let (_, calls) = get(
        &server,
        &format!("/api/conversations/{id}/turns/{turn}/calls"),
    )
    .await;
    let purposes: Vec<_> = calls
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| c["purpose"].as_str().expect("a purpose"))
        .collect();
    assert_eq!(purposes[0], "compaction", "{calls}");
    assert!(purposes[1..].iter().all(|p| *p == "turn"), "{calls}");
    let (_, after) = get(
        &server,
        &format!("/api/conversations/{id}/turns/{turn}/calls/2"),
    )
    .await;
    let covers = &after["inspection"]["summary"];
    assert_eq!(covers["first"], 1, "{after}");
    assert!(
        covers["last"]
            .as_u64()
            .is_some_and(|last| last < u64::from(turn)),
        "{after}"
    );
}

const ALICE: &str = "alice-token";
const BOB: &str = "bob-token";
const INSTRUCTIONS: &str = "Answer as the Acme helpdesk; never quote prices.";

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Acme: alice, a member, and bob, an administrator; agent `helpdesk` with instructions.
async fn acme(dir: &Path) -> Server {
    let config = dir.join("config");
    write(
        &config,
        "organisations/acme/organisation.toml",
        "name = \"Acme\"\n",
    );
    for (user, token, role) in [("alice", ALICE, "member"), ("bob", BOB, "admin")] {
        write(
            &config,
            &format!("organisations/acme/users/{user}/user.toml"),
            &format!(
                "name = \"{user}\"\nrole = \"{role}\"\ntoken_sha256 = \"{}\"\n",
                TokenDigest::of(token).to_hex()
            ),
        );
    }
    write(
        &config,
        "organisations/acme/agents/helpdesk.toml",
        &format!("name = \"Helpdesk\"\nmodel = \"demo\"\ninstructions = \"{INSTRUCTIONS}\"\n"),
    );
    common::start_config(portal_server::Config {
        identity: Some(Identity::load(&config).expect("identity")),
        ..common::config(&dir.join("data"), 0.0, None)
    })
    .await
}

async fn as_user(
    server: &Server,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .client
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("answered");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A conversation of `token`'s with the helpdesk, one turn sent and ended; its id and turn.
async fn helpdesk_turn(server: &Server, token: &str) -> (String, u32) {
    let (status, created) = as_user(
        server,
        token,
        reqwest::Method::POST,
        "/api/conversations",
        Some(json!({"agent": "helpdesk"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_string();
    let (status, sent) = as_user(
        server,
        token,
        reqwest::Method::POST,
        &format!("/api/conversations/{id}/messages"),
        Some(json!({"text": "Hello"})),
    )
    .await;
    assert_eq!(status, 202, "{sent}");
    let turn = sent["turn"].as_u64().expect("turn") as u32;
    let transcript = format!("/api/conversations/{id}");
    common::until(
        "the turn to end",
        std::time::Duration::from_secs(30),
        || async {
            let (_, read) = as_user(server, token, reqwest::Method::GET, &transcript, None).await;
            let status = read["turns"][turn as usize - 1]["status"]
                .as_str()?
                .to_string();
            (status != "running").then_some(())
        },
    )
    .await;
    (id, turn)
}

#[tokio::test]
async fn a_colleague_gets_not_found_and_a_member_sees_the_instructions_layer_named_and_sized_only()
{
    let dir = tempfile::tempdir().expect("a temporary folder");
    let server = acme(dir.path()).await;
    let (alices, turn) = helpdesk_turn(&server, ALICE).await;
    let path = format!("/api/conversations/{alices}/turns/{turn}/calls/1");

    let (status, call) = as_user(&server, ALICE, reqwest::Method::GET, &path, None).await;
    assert_eq!(status, 200, "{call}");
    let instructions = layer(&call, "instructions").expect("the instructions layer");
    assert_eq!(instructions["label"], "Author instructions");
    assert_eq!(
        instructions["text"],
        Value::Null,
        "withheld from a member: {call}"
    );
    assert!(
        instructions["tokens"].as_u64().is_some_and(|t| t > 0),
        "sized: {call}"
    );
    assert_eq!(call["instructionsWithheld"], true);
    assert!(
        !call.to_string().contains(INSTRUCTIONS),
        "nowhere in the answer: {call}"
    );

    for path in [
        path.clone(),
        format!("/api/conversations/{alices}/turns/{turn}/calls"),
    ] {
        let (status, refused) = as_user(&server, BOB, reqwest::Method::GET, &path, None).await;
        assert_eq!(status, 404, "a colleague, even an administrator: {refused}");
    }

    let (bobs, turn) = helpdesk_turn(&server, BOB).await;
    let path = format!("/api/conversations/{bobs}/turns/{turn}/calls/1");
    let (status, call) = as_user(&server, BOB, reqwest::Method::GET, &path, None).await;
    assert_eq!(status, 200, "{call}");
    let instructions = layer(&call, "instructions").expect("the instructions layer");
    assert_eq!(
        instructions["text"], INSTRUCTIONS,
        "an administrator reads it"
    );
    assert_eq!(call["instructionsWithheld"], false);
}

/// A fake endpoint that answers every call with `answer` (an event stream) and keeps each request
/// body's bytes as they arrived.
async fn upstream(route: &'static str, answer: &'static [u8]) -> (String, Arc<Mutex<Vec<Bytes>>>) {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&bodies);
    let app = axum::Router::new().route(
        route,
        axum::routing::post(move |body: Bytes| {
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().expect("lock").push(body);
                Response::builder()
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, "text/event-stream")
                    .body(axum::body::Body::from(answer))
                    .expect("response")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base_url, bodies)
}

async fn body_kept_as_sent(kind: &str, route: &'static str, answer: &'static [u8]) {
    let (base_url, bodies) = upstream(route, answer).await;
    let models = format!(
        r#"
[[models]]
name = "upstream"
kind = "{kind}"
base_url = "{base_url}"
api_key = "sk-test"
model = "fake-model"
[models.capabilities]
context_window = 32768
max_output_tokens = 1024
can_reason = false
can_see = false
"#
    );
    let registry = ModelRegistry::from_toml(&models, 0.0, |_| None).expect("models file");
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = common::start_with(data.path(), 0.0, Some(registry)).await;
    let id = server.conversation().await;
    let turn = server
        .send(&id, "Say «hello» in three scripts: 你好, שלום, 👋🏽")
        .await;
    server.events(&id, turn, None).await;

    let (status, call) = get(
        &server,
        &format!("/api/conversations/{id}/turns/{turn}/calls/1"),
    )
    .await;
    assert_eq!(status, 200, "{call}");
    let sent = bodies
        .lock()
        .expect("lock")
        .first()
        .cloned()
        .expect("a call was made");
    let kept = call["body"].as_str().expect("the body is kept");
    assert_eq!(
        kept.as_bytes(),
        &sent[..],
        "{kind}: the kept body is the one sent"
    );
    assert_eq!(call["bodyBytes"].as_u64(), Some(sent.len() as u64));
}

#[tokio::test]
async fn the_request_body_kept_is_byte_for_byte_what_an_openai_endpoint_received() {
    body_kept_as_sent(
        "openai",
        "/v1/chat/completions",
        include_bytes!("../../../../tests/fixtures/openai/openai-text.sse"),
    )
    .await;
}

#[tokio::test]
async fn the_request_body_kept_is_byte_for_byte_what_an_anthropic_endpoint_received() {
    body_kept_as_sent(
        "anthropic",
        "/v1/messages",
        include_bytes!("../../../../tests/fixtures/anthropic/text.sse"),
    )
    .await;
}
