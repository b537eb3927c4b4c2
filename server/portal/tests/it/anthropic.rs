//! The Anthropic adapter against recorded wire-format streams under `tests/fixtures/anthropic/`,
//! written by hand from Anthropic's documented event format: text, thinking and redacted
//! thinking, tool calls whose input is split across events, an output limit cutting a call's
//! input short, and an overloaded error mid-stream; then the error bodies Anthropic sends, a
//! prompt too long above all. Then the same over real HTTP on loopback: the request the adapter
//! sends (headers, caching marks, thinking budget, a picture), its retries, and a whole turn
//! through the real server.

use crate::common;
use crate::stream_support;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use expect_test::{Expect, expect};
use futures_util::StreamExt;
use portal_core::attachment::PictureRef;
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::CompactionHint;
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::prompt::{EncodedPicture, PictureSource, Prompt, PromptConfig, PromptInput};
use portal_core::stream::TurnEvent;
use portal_core::tools::ToolDefinition;
use portal_core::{Transcript, TurnStatus};
use portal_model::anthropic::{AnthropicConfig, AnthropicModel, StreamDecoder};
use portal_model::endpoint::{AnswerLimits, ApiKey, EndpointError, EventStream, classify};
use portal_model::{Model, ModelError, ModelEvent, ModelRegistry};
use serde_json::{Value, json};
use stream_support::{Decoded, render};

const STREAMS: [&str; 6] = [
    "text.sse",
    "thinking.sse",
    "redacted-thinking.sse",
    "tool-use.sse",
    "max-tokens-cut-input.sse",
    "overloaded-midstream.sse",
];

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/anthropic/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {path}: {e}"))
}

/// The events of `pieces` fed in order, and the error that ended them, if any.
fn decode(pieces: &[&[u8]]) -> Decoded {
    let mut decoder = StreamDecoder::new();
    let mut out = Vec::new();
    for piece in pieces {
        if let Err(error) = decoder.push(piece, &mut out) {
            return (out, Some(error));
        }
    }
    let error = decoder.finish(&mut out).err();
    (out, error)
}

/// The recording `name` decoded whole, at every two-way cut, a byte at a time, and with `\r\n`
/// line endings.
fn check(name: &str, expected: Expect) {
    let bytes = fixture(name);
    let whole = stream_support::check_cuts(name, &bytes, decode, expected);
    let crlf = String::from_utf8(bytes)
        .expect("utf-8")
        .replace('\n', "\r\n");
    assert_eq!(decode(&[crlf.as_bytes()]), whole, "{name} with \\r\\n");
}

#[test]
fn text_with_multibyte_characters_and_usage_counting_the_cache() {
    check(
        "text.sse",
        expect![[r#"
            text "Grüße aus"
            text " Zürich 👋🏽! 日本語"
            text "も少し — and a family: 👨\u{200d}👩\u{200d}👧."
            usage: 1522 in (0 cached), 21 out (0 reasoning)
            finished: Stop
        "#]],
    );
}

/// Issue 29: cached input is priced at its own rate. thinking.sse read 1,510 of its 1,595
/// input tokens from the cache and wrote 96.
#[test]
fn cached_input_tokens_are_priced_apart() {
    let decoded = decode(&[&fixture("thinking.sse")]);
    assert_eq!(
        stream_support::cost_at_list_prices(&decoded),
        85 * 3_000 + 1_510 * 300 + 96 * 15_000
    );
}

#[test]
fn thinking_streams_as_thinking_and_its_signature_is_not_kept() {
    check(
        "thinking.sse",
        expect![[r#"
            thinking "27 × 453: 27 × 400 = 10,800"
            thinking " and 27 × 53 = 1,431, so 12,231."
            text "27 × 453 = **12,231**."
            usage: 1595 in (1510 cached), 96 out (0 reasoning)
            finished: Stop
        "#]],
    );
}

#[test]
fn redacted_thinking_is_named_in_the_thinking_and_set_apart() {
    check(
        "redacted-thinking.sse",
        expect![[r#"
            thinking "The question is about lock mechanisms."
            thinking "\n\n"
            thinking "[Anthropic's safety systems hid this part of the reasoning.]"
            text "A pin tumbler lock has spring-loaded pins of different lengths."
            usage: 230 in (0 cached), 154 out (0 reasoning)
            finished: Stop
        "#]],
    );
}

#[test]
fn tool_calls_with_input_split_across_events_end_in_order_once_the_model_stops() {
    check(
        "tool-use.sse",
        expect![[r#"
            thinking "Both texts can be counted at once."
            text "Let me count both."
            call 0 starts: count_characters Some("toolu_01T1x1fJ34qAmk2tNTrN7Up6")
            call 0 arguments "{\"text\": \"Grü"
            call 0 arguments "ße aus Zü"
            call 0 arguments "rich 👋"
            call 0 arguments "🏽\"}"
            call 1 starts: count_characters Some("toolu_01Hn7pW2xQ9sLbT4kZ1cVeMr")
            call 1 arguments "{\"te"
            call 1 arguments "xt\": \"日本語\"}"
            call 0 ends: count_characters Some("toolu_01T1x1fJ34qAmk2tNTrN7Up6") {"text":"Grüße aus Zürich 👋🏽"}
            call 1 ends: count_characters Some("toolu_01Hn7pW2xQ9sLbT4kZ1cVeMr") {"text":"日本語"}
            usage: 472 in (0 cached), 89 out (0 reasoning)
            finished: ToolCalls
        "#]],
    );
}

#[test]
fn input_cut_by_the_output_limit_becomes_an_error_answer_not_a_panic() {
    check(
        "max-tokens-cut-input.sse",
        expect![[r##"
            call 0 starts: write_file Some("toolu_01Rk8sN2vX5qLmB9tY1wZcPe")
            call 0 arguments "{\"path\": \"notes.md\", \"text\": \"# Notes\\n\\nThe meeting"
            call 0 arguments " covered the bud"
            call 0 ends: write_file Some("toolu_01Rk8sN2vX5qLmB9tY1wZcPe") refused: The arguments of this call are not a JSON object (EOF while parsing a string at line 1 column 68), so the tool was not run. Call it again with its arguments as one JSON object.
            usage: 96 in (0 cached), 32 out (0 reasoning)
            finished: Length
        "##]],
    );
}

#[test]
fn an_overloaded_error_mid_stream_ends_it_after_what_came_before() {
    check(
        "overloaded-midstream.sse",
        expect![[r#"
        text "Here is the first"
        error: the endpoint is overloaded: Overloaded; try again later
    "#]],
    );
}

#[test]
fn fixtures_are_all_checked() {
    let dir = format!(
        "{}/../../tests/fixtures/anthropic",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".sse"))
        .collect();
    found.sort();
    let mut listed = STREAMS.map(String::from).to_vec();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn a_stream_cut_before_the_stop_reason_is_truncated_and_one_cut_after_it_finishes() {
    let text = String::from_utf8(fixture("tool-use.sse")).expect("utf-8");
    let stop = text.find("event: message_delta").expect("the stop reason");
    let (events, error) = decode(&[&text.as_bytes()[..stop]]);
    assert_eq!(error, Some(EndpointError::Truncated));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ModelEvent::ToolCallEnd { .. })),
        "no call ends before the model stopped: {events:?}"
    );
    let inside = text
        .find("\"stop_reason\":\"tool_use\"")
        .expect("inside the event");
    let (_, error) = decode(&[&text.as_bytes()[..inside]]);
    assert_eq!(error, Some(EndpointError::Truncated));

    let without_stop = &text[..text.find("event: message_stop").expect("message_stop")];
    let (events, error) = decode(&[without_stop.as_bytes()]);
    assert_eq!(error, None);
    assert_eq!(events, decode(&[text.as_bytes()]).0);
}

// The reply cap counts characters of thinking and text together, whichever block they come in
// (a block's opening text too): a model of one output token may stream 16. The delta that passes
// the cap is not passed on, and the answer ends with the cap named.
#[test]
fn a_reply_past_its_cap_of_thinking_and_text_ends_the_answer_at_the_cap() {
    let event = |data: Value| {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or("")
        )
    };
    let stream = [
        event(json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}})),
        event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": ""}})),
        event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Ich denke"}})),
        event(json!({"type": "content_block_stop", "index": 0})),
        event(json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "text", "text": "Grüße"}})),
        event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "!!"}})),
        event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "x"}})),
        event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "never read"}})),
    ]
    .concat();
    let mut decoder = StreamDecoder::with_limits(&AnswerLimits::for_output_tokens(1));
    let mut out = Vec::new();
    let error = decoder.push(stream.as_bytes(), &mut out).unwrap_err();
    assert_eq!(
        out,
        [
            ModelEvent::ThinkingDelta("Ich denke".into()),
            ModelEvent::TextDelta("Grüße".into()),
            ModelEvent::TextDelta("!!".into()),
        ]
    );
    assert_eq!(error, EndpointError::ReplyTooLong { max: 16 });
}

#[test]
fn events_and_blocks_of_unknown_kinds_are_skipped() {
    let stream = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":",
        "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":",
        "{\"type\":\"citations_delta\",\"citation\":{}}}\n\n",
        "event: future_event\n",
        "data: {\"type\":\"future_event\",\"anything\":[1,2]}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":",
        "{\"type\":\"text\",\"text\":\"Hi\"}}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},",
        "\"usage\":{\"output_tokens\":2}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{}}\n\n",
    );
    let decoded = decode(&[stream.as_bytes()]);
    expect![[r#"
        text "Hi"
        usage: 5 in (0 cached), 2 out (0 reasoning)
        finished: Stop
    "#]]
    .assert_eq(&render(&decoded));
}

// Rule C2: Anthropic's ways of saying the input is too long are the one overflow kind, which the
// turn loop answers by compacting and retrying; its other error bodies keep their own kinds.
#[test]
fn c2_a_prompt_too_long_is_context_overflow_and_other_bodies_keep_their_kinds() {
    // (body, status, the kind, whether a refusal is retried, what the log says)
    let cases: [(&str, u16, &str, bool, &str); 5] = [
        (
            "prompt-too-long.json",
            400,
            "ContextOverflow",
            false,
            "208310 tokens > 200000",
        ),
        (
            "input-and-max-tokens-exceed-context.json",
            400,
            "ContextOverflow",
            false,
            "exceed context limit",
        ),
        (
            "overloaded.json",
            529,
            "Overloaded",
            true,
            "try again later",
        ),
        (
            "rate-limit.json",
            429,
            "RateLimited",
            true,
            "wait and try again",
        ),
        (
            "invalid-key.json",
            401,
            "Unauthorized",
            false,
            "check the model's api_key",
        ),
    ];
    for (name, status, kind, retried, says) in cases {
        let body = String::from_utf8(fixture(name)).expect("utf-8");
        let error = classify(status, &body);
        assert!(format!("{error:?}").starts_with(kind), "{name}: {error:?}");
        assert_eq!(error.is_retryable(), retried, "{name}");
        assert!(error.to_string().contains(says), "{name}: {error}");
        let overflow = matches!(ModelError::from(error), ModelError::ContextOverflow { .. });
        assert_eq!(overflow, kind == "ContextOverflow", "{name}");
    }
    // Inside the stream too.
    let body: Value = serde_json::from_slice(&fixture("prompt-too-long.json")).expect("json");
    let stream = format!("event: error\ndata: {body}\n\n");
    let (events, error) = decode(&[stream.as_bytes()]);
    assert!(events.is_empty());
    assert!(
        matches!(error, Some(EndpointError::ContextOverflow { .. })),
        "{error:?}"
    );
}

#[test]
fn a_configuration_defaults_to_anthropics_api_and_keeps_the_key_out_of_debug_output() {
    let config: AnthropicConfig = toml::from_str(
        r#"
        api_key = "sk-ant-secret-123"
        model = "claude-sonnet-4-5"
        thinking_budget = { high = 16000 }

        [capabilities]
        context_window = 200000
        max_output_tokens = 64000
        can_reason = true
        can_see = true
        "#,
    )
    .expect("config");
    assert_eq!(
        config.messages_url(),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(config.capabilities.provider, Provider::Anthropic);
    assert_eq!(config.thinking_budget.high_budget, 16_000);
    assert_eq!(config.thinking_budget.low_budget, 2_048, "the default");
    assert!(!format!("{config:?}").contains("sk-ant-secret-123"));
    let model = AnthropicModel::new(config).expect("model");
    assert!(!format!("{model:?}").contains("sk-ant-secret-123"));

    let refused = toml::from_str::<AnthropicConfig>(
        "model = \"m\"\nthinking_budget = { medium = 100 }\n[capabilities]\n\
         context_window = 8192\nmax_output_tokens = 1024\ncan_reason = true\ncan_see = false\n",
    )
    .expect_err("refused")
    .to_string();
    assert!(
        refused.contains("thinking_budget.medium is 100 tokens"),
        "{refused}"
    );
}

fn capabilities(can_reason: bool) -> ModelCapabilities {
    ModelCapabilities {
        id: "claude-test".into(),
        provider: Provider::Anthropic,
        context_window: 200_000,
        max_output_tokens: 32_000,
        can_reason,
        can_see: true,
        largest_picture: Some(PictureLimit {
            long_edge: 1_568,
            pixels: Some(1_150_000),
        }),
    }
}

/// A tiny Anthropic endpoint on loopback that answers its `n`-th request with `answers[n]` (the
/// last answer once they run out) and keeps what it was sent.
struct Endpoint {
    base_url: String,
    seen: Arc<Mutex<Vec<Sent>>>,
}

/// A request the endpoint was sent.
#[derive(Clone)]
struct Sent {
    headers: HeaderMap,
    body: Value,
}

impl Sent {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Clone)]
struct Answer {
    status: StatusCode,
    headers: Vec<(header::HeaderName, &'static str)>,
    body: Vec<u8>,
}

impl Answer {
    fn stream(body: Vec<u8>) -> Answer {
        Answer {
            status: StatusCode::OK,
            headers: vec![(header::CONTENT_TYPE, "text/event-stream")],
            body,
        }
    }

    fn error(status: u16, body: Vec<u8>) -> Answer {
        Answer {
            status: StatusCode::from_u16(status).expect("status"),
            headers: vec![(header::CONTENT_TYPE, "application/json")],
            body,
        }
    }

    fn with_retry_after(mut self, seconds: &'static str) -> Answer {
        self.headers.push((header::RETRY_AFTER, seconds));
        self
    }
}

async fn endpoint(answers: Vec<Answer>) -> Endpoint {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move |headers: HeaderMap, body: axum::Json<Value>| {
            let kept = Arc::clone(&kept);
            let answers = answers.clone();
            async move {
                let answer = {
                    let mut kept = kept.lock().expect("lock");
                    kept.push(Sent {
                        headers,
                        body: body.0,
                    });
                    answers[(kept.len() - 1).min(answers.len() - 1)].clone()
                };
                // Seven-byte pieces, so the client meets lines and characters split across reads.
                let pieces: Vec<Result<Bytes, Infallible>> = answer
                    .body
                    .chunks(7)
                    .map(|piece| Ok(Bytes::copy_from_slice(piece)))
                    .collect();
                let mut response = Response::builder().status(answer.status);
                for (name, value) in &answer.headers {
                    response = response.header(name, *value);
                }
                response
                    .body(Body::from_stream(futures_util::stream::iter(pieces)))
                    .expect("response")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Endpoint { base_url, seen }
}

impl Endpoint {
    /// A model on this endpoint with `budget` as its thinking budgets, making each refused call
    /// again at most `retries` times.
    fn model(
        &self,
        capabilities: ModelCapabilities,
        budget: EffortConfig,
        retries: u32,
    ) -> AnthropicModel {
        let mut config = AnthropicConfig::new(
            &self.base_url,
            ApiKey::Value("sk-ant-test".into()),
            capabilities,
        );
        config.thinking_budget = budget;
        config.endpoint.retry.retries = retries;
        AnthropicModel::new(config).expect("model")
    }

    fn sent(&self) -> Vec<Sent> {
        self.seen.lock().expect("lock").clone()
    }
}

struct OnePicture;

impl PictureSource for OnePicture {
    fn picture(&self, picture: &PictureRef) -> Option<EncodedPicture> {
        Some(EncodedPicture {
            media_type: picture.media_type.clone(),
            base64: "iVBORw0KGgo=".into(),
        })
    }
}

/// The prompt core assembles for a running turn whose message carries a picture.
fn prompt_with_picture(model: &ModelCapabilities) -> Prompt {
    let transcript: Transcript = serde_json::from_value(json!({
        "version": 1,
        "turns": [{
            "index": 1,
            "status": "running",
            "effort": "high",
            "messages": [{
                "role": "user",
                "blocks": [{"type": "text", "text": "What is on this receipt?"}],
                "attachments": [{
                    "kind": "picture",
                    "id": "receipt",
                    "filename": "receipt.png",
                    "media_type": "image/png",
                    "width": 3136,
                    "height": 1568
                }]
            }]
        }]
    }))
    .expect("transcript");
    let tools = [ToolDefinition {
        name: "lookup_price".into(),
        description: "Looks a product's price up.".into(),
        parameters: json!({"type": "object", "properties": {"product": {"type": "string"}}}),
    }];
    let input = PromptInput {
        transcript: &transcript,
        compaction_hint: CompactionHint::NoCompaction,
        model,
        instructions: "Answer briefly.",
        project_instructions: "",
        selected_skills: &[],
        catalogue: &[],
        agent_tools: &tools,
        effort: Effort::High,
    };
    portal_core::prompt::assemble(&input, &PromptConfig::default()).prompt
}

async fn collect(stream: EventStream) -> (Vec<ModelEvent>, Option<EndpointError>) {
    let mut events = Vec::new();
    let items: Vec<_> = stream.collect().await;
    for item in items {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

// Rule L3: the body is core's conversion with caching marks, the picture a base64 image
// block at its reduced size; the key goes as `x-api-key` with Anthropic's version header.
#[tokio::test]
async fn l3_over_http_the_request_is_cores_cached_body_with_anthropics_headers() {
    let bytes = fixture("thinking.sse");
    let server = endpoint(vec![Answer::stream(bytes.clone())]).await;
    let capabilities = capabilities(true);
    let model = server.model(capabilities.clone(), EffortConfig::default(), 0);
    let prompt = prompt_with_picture(&capabilities);
    let got = collect(model.stream(&prompt, &OnePicture)).await;
    assert_eq!(got, decode(&[&bytes]));

    let sent = server.sent();
    assert_eq!(sent.len(), 1);
    let sent = &sent[0];
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    let body = &sent.body;
    let mut expected = portal_core::prompt::anthropic::cached_request(
        &prompt,
        &capabilities,
        &EffortConfig::default(),
        &OnePicture,
    );
    expected["stream"] = json!(true);
    assert_eq!(*body, expected);
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 32_000);
    assert_eq!(body["tools"][0]["name"], "lookup_price");
    let system = body["system"].as_array().expect("system blocks");
    assert_eq!(system.len(), 1, "no selected skills: one block");
    assert_eq!(system[0]["cache_control"], json!({"type": "ephemeral"}));
    assert!(
        system[0]["text"]
            .as_str()
            .expect("text")
            .contains("Answer briefly.")
    );
    let content = body["messages"][0]["content"].as_array().expect("blocks");
    let image = content
        .iter()
        .find(|block| block["type"] == "image")
        .expect("the picture");
    assert_eq!(
        image["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
    );
    assert!(
        body.to_string().contains("1568"),
        "the reduced size is named"
    );
    let last = content.last().expect("a last block");
    assert_eq!(last["cache_control"], json!({"type": "ephemeral"}));
}

// Rule E3: a model that reasons gets the turn's effort as its thinking budget, the one its
// configuration sets for the level; a model that does not gets no thinking at all.
#[tokio::test]
async fn e3_the_thinking_budget_is_the_efforts_and_only_for_a_model_that_reasons() {
    let configured = EffortConfig {
        high_budget: 16_000,
        ..EffortConfig::default()
    };
    let cases = [
        (true, EffortConfig::default(), Some(24_576)),
        (true, configured, Some(16_000)),
        (false, configured, None),
    ];
    for (can_reason, budget, expected) in cases {
        let server = endpoint(vec![Answer::stream(fixture("text.sse"))]).await;
        let capabilities = capabilities(can_reason);
        let model = server.model(capabilities.clone(), budget, 0);
        let (_, error) =
            collect(model.stream(&prompt_with_picture(&capabilities), &OnePicture)).await;
        assert_eq!(error, None);
        let body = &server.sent()[0].body;
        match expected {
            Some(tokens) => assert_eq!(
                body["thinking"],
                json!({"type": "enabled", "budget_tokens": tokens})
            ),
            None => assert!(body.get("thinking").is_none(), "{body}"),
        }
    }
}

// Rule C2: a prompt too long over HTTP reaches the turn loop as the one overflow kind.
#[tokio::test]
async fn c2_a_prompt_too_long_over_http_is_context_overflow() {
    let server = endpoint(vec![Answer::error(400, fixture("prompt-too-long.json"))]).await;
    let capabilities = capabilities(true);
    let model = server.model(capabilities.clone(), EffortConfig::default(), 2);
    let prompt = prompt_with_picture(&capabilities);
    let items: Vec<_> = Model::stream(&model, &prompt, &OnePicture).collect().await;
    assert!(
        matches!(
            items.as_slice(),
            [Err(ModelError::ContextOverflow { message })] if message.contains("208310 tokens")
        ),
        "{items:?}"
    );
    assert_eq!(server.sent().len(), 1, "an overflow is not retried");
}

/// A stream whose first event after the message opens is an overloaded error.
fn overloaded_at_once() -> Vec<u8> {
    let text = String::from_utf8(fixture("overloaded-midstream.sse")).expect("utf-8");
    let opening = text.find("event: content_block_start").expect("a block");
    let error = text.find("event: error").expect("the error");
    format!(
        "{}event: ping\ndata: {{\"type\": \"ping\"}}\n\n{}",
        &text[..opening],
        &text[error..]
    )
    .into_bytes()
}

/// How a call with `answers` and `retries` ends: its events and error, and how many requests.
async fn called(
    answers: Vec<Answer>,
    retries: u32,
) -> ((Vec<ModelEvent>, Option<EndpointError>), usize) {
    let server = endpoint(answers).await;
    let capabilities = capabilities(false);
    let model = server.model(capabilities.clone(), EffortConfig::default(), retries);
    let got = collect(model.stream(&prompt_with_picture(&capabilities), &OnePicture)).await;
    (got, server.sent().len())
}

// A refusal (HTTP 429 with its Retry-After, 529 overloaded, an overloaded error opening the
// stream) is made again while the policy allows; an error after part of the answer is not.
#[tokio::test]
async fn refusals_are_retried_as_the_policy_allows_and_a_broken_answer_is_not() {
    let text = || Answer::stream(fixture("text.sse"));
    let answered = decode(&[&fixture("text.sse")]);
    let limited = || Answer::error(429, fixture("rate-limit.json")).with_retry_after("1");
    let overloaded = || Answer::error(529, fixture("overloaded.json"));

    assert_eq!(
        called(vec![limited(), text()], 1).await,
        (answered.clone(), 2)
    );
    assert_eq!(
        called(vec![overloaded(), text()], 1).await,
        (answered.clone(), 2)
    );
    assert_eq!(
        called(vec![Answer::stream(overloaded_at_once()), text()], 1).await,
        (answered.clone(), 2)
    );

    let ((events, error), requests) = called(vec![limited(), text()], 0).await;
    assert_eq!(requests, 1);
    assert!(events.is_empty());
    let error = error.expect("limited");
    assert!(
        matches!(
            error,
            EndpointError::RateLimited {
                retry_after_seconds: Some(1),
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("wait 1 s and try again"),
        "{error}"
    );

    let ((_, error), requests) = called(vec![overloaded(), text()], 0).await;
    assert_eq!(requests, 1);
    let reason = ModelError::from(error.expect("overloaded")).reason();
    assert!(reason.contains("overloaded"), "{reason}");
    assert!(reason.contains("send the message again"), "{reason}");

    let midstream = Answer::stream(fixture("overloaded-midstream.sse"));
    let (got, requests) = called(vec![midstream, text()], 2).await;
    assert_eq!(got, decode(&[&fixture("overloaded-midstream.sse")]));
    assert_eq!(requests, 1, "part of the answer was read: not made again");
}

// Rules L3 and E3 through the real server: the turn's first call thinks and calls the tool twice;
// the call after the tool results carries them, without thinking, and the answer streams.
#[tokio::test]
async fn l3_e3_a_whole_turn_through_the_server_runs_the_calls_and_streams_the_answer() {
    let upstream = endpoint(vec![
        Answer::stream(fixture("tool-use.sse")),
        Answer::stream(fixture("text.sse")),
    ])
    .await;
    let models = format!(
        r#"
[[models]]
name = "claude"
kind = "anthropic"
label = "Claude"
base_url = "{}"
api_key = {{ env = "ANTHROPIC_API_KEY" }}
model = "claude-sonnet-4-5"
[models.capabilities]
context_window = 200000
max_output_tokens = 32000
can_reason = true
can_see = true
"#,
        upstream.base_url
    );
    let registry = ModelRegistry::from_toml(&models, 0.0, |var| {
        (var == "ANTHROPIC_API_KEY").then(|| "sk-ant-test".to_string())
    })
    .expect("models file");
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start_with(data.path(), 0.0, Some(registry)).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Count these two texts for me.").await;
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
    let streamed: String = events
        .iter()
        .filter_map(|(_, event)| match event {
            TurnEvent::Delta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        streamed.contains("Both texts can be counted at once."),
        "{streamed}"
    );
    assert!(
        streamed.contains("Grüße aus Zürich 👋🏽! 日本語も少し"),
        "{streamed}"
    );

    let sent = upstream.sent();
    assert_eq!(
        sent.len(),
        2,
        "a call, then the call after the tool results"
    );
    for request in &sent {
        assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
        assert_eq!(request.body["model"], "claude-sonnet-4-5");
        assert_eq!(request.body["stream"], true);
    }
    assert_eq!(sent[0].body["thinking"]["type"], "enabled");
    let carrying_on = &sent[1].body;
    assert!(carrying_on.get("thinking").is_none(), "{carrying_on}");
    let messages = carrying_on["messages"].as_array().expect("messages");
    let calls: Vec<&Value> = messages[1]["content"]
        .as_array()
        .expect("the assistant's blocks")
        .iter()
        .filter(|block| block["type"] == "tool_use")
        .collect();
    assert_eq!(calls.len(), 2);
    // The turn loop stores calls under its own ids (turn, message, place), and the call and its
    // result carry the same one back.
    assert_eq!(calls[0]["id"], "call_1_1_0");
    assert_eq!(calls[0]["input"], json!({"text": "Grüße aus Zürich 👋🏽"}));
    let results = messages[2]["content"].as_array().expect("the results");
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "call_1_1_0");
    assert_eq!(results[0]["content"], "18 characters, 3 words, 28 bytes");
    assert_eq!(results[1]["tool_use_id"], "call_1_1_1");
    assert_eq!(
        results.last().expect("a last block")["cache_control"],
        json!({"type": "ephemeral"})
    );
}
