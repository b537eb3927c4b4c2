//! The OpenAI-compatible adapter against recorded wire-format streams under
//! `tests/fixtures/openai/`: text, reasoning, tool calls split across chunks, parallel calls with
//! interleaved indices, usage, `[DONE]`, and the errors servers send, context overflow above all.
//! Then the same over real HTTP on loopback, checking the request body the adapter sends.

use crate::stream_support;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use expect_test::{Expect, expect};
use futures_util::StreamExt;
use portal_core::Transcript;
use portal_core::attachment::PictureRef;
use portal_core::effort::Effort;
use portal_core::memory::CompactionHint;
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::prompt::{EncodedPicture, PictureSource, Prompt, PromptConfig, PromptInput};
use portal_core::tools::ToolDefinition;
use portal_core::usage::Tokens;
use portal_model::anthropic::AnthropicConfig;
use portal_model::endpoint::{AnswerLimits, ApiKey, EndpointError, EventStream, classify, redact};
use portal_model::openai::{OpenAiConfig, OpenAiModel, StreamDecoder, events};
use portal_model::{FinishReason, ModelError, ModelEvent};
use proptest::prelude::*;
use serde_json::{Value, json};
use stream_support::Decoded;

const STREAMS: [&str; 8] = [
    "openai-text.sse",
    "openai-parallel-tool-calls.sse",
    "openai-length-cut-arguments.sse",
    "vllm-interleaved-tool-calls.sse",
    "llamacpp-reasoning.sse",
    "ollama-tool-call.sse",
    "openrouter-keepalive.sse",
    "openrouter-midstream-error.sse",
];

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/openai/{name}",
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

/// The recording `name` decoded whole, at every two-way cut and a byte at a time.
fn check(name: &str, expected: Expect) {
    stream_support::check_cuts(name, &fixture(name), decode, expected);
}

#[test]
fn openai_text_with_multibyte_characters_and_usage_in_its_own_chunk() {
    check(
        "openai-text.sse",
        expect![[r#"
            text "Guten"
            text " Tag! Grüße"
            text " aus Köln "
            text "👋🏽. Ich"
            text " helfe dir gern 👩\u{200d}💻"
            text " — \"日本語\" auch."
            usage: 1873 in (1664 cached), 24 out (0 reasoning)
            finished: Stop
        "#]],
    );
}

#[test]
fn openai_parallel_tool_calls_with_arguments_split_mid_string() {
    check(
        "openai-parallel-tool-calls.sse",
        expect![[r#"
            call 0 starts: get_weather Some("call_Vq3kY8zN1mWcR5tB0xLdHs2J")
            call 0 arguments "{\"ci"
            call 0 arguments "ty\": \"S"
            call 0 arguments "ão P"
            call 0 arguments "aulo\", \"unit\": \"c"
            call 0 arguments "elsius\"}"
            call 1 starts: get_weather Some("call_Hn7pW2xQ9sLbT4kZ1cVeMr6D")
            call 1 arguments "{\"city\": \"Zü"
            call 1 arguments "rich\", \"unit\": \"celsius\"}"
            call 0 ends: get_weather Some("call_Vq3kY8zN1mWcR5tB0xLdHs2J") {"city":"São Paulo","unit":"celsius"}
            call 1 ends: get_weather Some("call_Hn7pW2xQ9sLbT4kZ1cVeMr6D") {"city":"Zürich","unit":"celsius"}
            usage: 312 in (0 cached), 58 out (0 reasoning)
            finished: ToolCalls
        "#]],
    );
}

#[test]
fn arguments_cut_by_the_output_limit_become_an_error_answer_not_a_panic() {
    check(
        "openai-length-cut-arguments.sse",
        expect![[r##"
            call 0 starts: write_file Some("call_Rk8sN2vX5qLmB9tY1wZcPe3D")
            call 0 arguments "{\"path\": \"notes.md\", \"text\": \"# Notes\\n\\nThe meeting"
            call 0 arguments " covered the bud"
            call 0 ends: write_file Some("call_Rk8sN2vX5qLmB9tY1wZcPe3D") refused: The arguments of this call are not a JSON object (EOF while parsing a string at line 1 column 68), so the tool was not run. Call it again with its arguments as one JSON object.
            usage: 96 in (0 cached), 32 out (0 reasoning)
            finished: Length
        "##]],
    );
}

#[test]
fn vllm_reasoning_then_parallel_calls_with_interleaved_indices() {
    check(
        "vllm-interleaved-tool-calls.sse",
        expect![[r#"
            thinking "The user wants flights"
            thinking " and a hotel; both lookups are independent."
            call 0 starts: search_flights Some("chatcmpl-tool-5b1d0c7e2f8a4a39")
            call 0 arguments "{\"from\": \"BER\", \"to"
            call 1 starts: search_hotels Some("chatcmpl-tool-9e4a7b3c1d2f4e08")
            call 1 arguments "{\"city\": \"Lis"
            call 0 arguments "\": \"LIS\", \"date\": \"2025-07-"
            call 1 arguments "boa\", \"nights\": 3}"
            call 0 arguments "14\"}"
            call 0 ends: search_flights Some("chatcmpl-tool-5b1d0c7e2f8a4a39") {"date":"2025-07-14","from":"BER","to":"LIS"}
            call 1 ends: search_hotels Some("chatcmpl-tool-9e4a7b3c1d2f4e08") {"city":"Lisboa","nights":3}
            usage: 587 in (0 cached), 115 out (0 reasoning)
            finished: ToolCalls
        "#]],
    );
}

#[test]
fn llamacpp_reasoning_content_and_usage_in_the_finishing_chunk() {
    check(
        "llamacpp-reasoning.sse",
        expect![[r#"
            thinking "Twelve"
            thinking " times seven: 70 + 14 = 84."
            text "12 × 7"
            text " = **84**."
            usage: 22 in (0 cached), 31 out (0 reasoning)
            finished: Stop
        "#]],
    );
}

#[test]
fn ollama_reasoning_field_and_a_whole_call_in_one_chunk() {
    check(
        "ollama-tool-call.sse",
        expect![[r#"
            thinking "I should check"
            thinking " the weather in Tokyo."
            call 0 starts: get_weather Some("call_x3m9tq2e")
            call 0 arguments "{\"city\":\"東京\"}"
            call 0 ends: get_weather Some("call_x3m9tq2e") {"city":"東京"}
            usage: 164 in (0 cached), 41 out (0 reasoning)
            finished: ToolCalls
        "#]],
    );
}

#[test]
fn openrouter_keepalive_comments_are_skipped() {
    check(
        "openrouter-keepalive.sse",
        expect![[r#"
            thinking "Paris is"
            thinking " the capital."
            text "The capital of France is Paris."
            usage: 11 in (0 cached), 96 out (88 reasoning)
            finished: Stop
        "#]],
    );
}

// The reply cap counts characters (not bytes) of reasoning and text together: a model of one
// output token may stream 16. The delta that passes the cap is not passed on, and the answer
// ends with the cap named; what came before it stays.
#[test]
fn a_reply_past_its_cap_of_text_and_reasoning_ends_the_answer_at_the_cap() {
    let chunk = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta}]})
        )
    };
    let stream = [
        chunk(json!({"reasoning_content": "Ich denke"})),
        chunk(json!({"content": "Grüße"})),
        chunk(json!({"content": "!!"})),
        chunk(json!({"content": "x"})),
        chunk(json!({"content": "never read"})),
    ]
    .concat();
    let limits = AnswerLimits::for_output_tokens(1);
    assert_eq!(limits.max_reply_chars, 16);
    let mut decoder = StreamDecoder::with_limits(&limits);
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
    assert!(error.to_string().contains("max_reply_chars"), "{error}");
    assert!(
        error
            .reason()
            .contains("more than 16 characters in one reply"),
        "{}",
        error.reason()
    );
}

#[test]
fn an_error_inside_the_stream_ends_it_after_what_came_before() {
    check(
        "openrouter-midstream-error.sse",
        expect![[r##"
            text "Here is the first"
            error: the model failed while answering: Provider disconnected
        "##]],
    );
}

#[test]
fn fixtures_are_all_checked() {
    let dir = format!("{}/../../tests/fixtures/openai", env!("CARGO_MANIFEST_DIR"));
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
fn crlf_and_cr_line_endings_read_as_lf_at_every_cut() {
    let lf = fixture("openai-parallel-tool-calls.sse");
    let whole = decode(&[&lf]);
    let text = String::from_utf8(lf).expect("utf-8");
    for ending in ["\r\n", "\r"] {
        let bytes = text.replace('\n', ending).into_bytes();
        for at in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(at);
            assert_eq!(decode(&[head, tail]), whole, "{ending:?} cut at byte {at}");
        }
    }
}

#[test]
fn a_stream_cut_before_the_model_finished_is_truncated() {
    let bytes = fixture("openai-text.sse");
    let text = String::from_utf8(bytes).expect("utf-8");
    let finish = text
        .find("\"finish_reason\":\"stop\"")
        .expect("finish chunk");
    let cut = &text[..text[..finish].rfind("data:").expect("its line")];
    let (events, error) = decode(&[cut.as_bytes()]);
    assert_eq!(
        events.len(),
        6,
        "the six text deltas still come: {events:?}"
    );
    assert_eq!(error, Some(EndpointError::Truncated));

    let inside_an_event = &text[..finish];
    let (events, error) = decode(&[inside_an_event.as_bytes()]);
    assert_eq!(events.len(), 6);
    assert_eq!(error, Some(EndpointError::Truncated));
}

#[test]
fn a_last_line_without_its_line_break_still_counts() {
    let text = String::from_utf8(fixture("openai-text.sse")).expect("utf-8");
    let (events, error) = decode(&[text.trim_end().as_bytes()]);
    assert_eq!(error, None);
    assert_eq!(events, decode(&[text.as_bytes()]).0);
}

/// Issue 29: cached input is priced at its own rate. openai-text.sse read 1,664 of its 1,873
/// prompt tokens from the cache and wrote 24.
#[test]
fn cached_input_tokens_are_priced_apart() {
    let text = fixture("openai-text.sse");
    let decoded = decode(&[&text]);
    assert_eq!(
        stream_support::cost_at_list_prices(&decoded),
        209 * 3_000 + 1_664 * 300 + 24 * 15_000
    );
}

#[test]
fn a_stream_that_closes_after_its_finish_reason_without_done_still_finishes() {
    let text = String::from_utf8(fixture("openai-text.sse")).expect("utf-8");
    let cut = &text[..text.find("data: [DONE]").expect("done")];
    let (events, error) = decode(&[cut.as_bytes()]);
    assert_eq!(error, None);
    assert_eq!(
        &events[events.len() - 2..],
        [
            ModelEvent::Usage(Tokens {
                cached_input: 1664,
                ..Tokens::reported(1873, 24)
            }),
            ModelEvent::Finished {
                reason: FinishReason::Stop
            }
        ]
    );
}

#[test]
fn a_stream_of_something_else_says_what_it_got() {
    let (_, error) = decode(&[b"data: <html>Bad Gateway</html>\n\n"]);
    let error = error.expect("an error");
    assert!(matches!(error, EndpointError::BadChunk { .. }), "{error:?}");
    assert!(
        error.to_string().contains("<html>Bad Gateway</html>"),
        "{error}"
    );
}

proptest! {
    /// Any cutting of any recorded stream into pieces gives the events of the whole.
    #[test]
    fn any_cutting_gives_the_events_of_the_whole(
        which in 0..STREAMS.len(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let bytes = fixture(STREAMS[which]);
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        at.push(0);
        at.push(bytes.len());
        at.sort_unstable();
        let pieces: Vec<&[u8]> = at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
        prop_assert_eq!(decode(&pieces), decode(&[&bytes]));
    }
}

// Rule C2: every server's way of saying the input is too long is one error kind, which the turn
// loop answers by compacting and retrying.
#[test]
fn c2_every_overflow_body_maps_to_context_overflow() {
    for name in [
        "openai-context-overflow.json",
        "vllm-context-overflow.json",
        "llamacpp-context-overflow.json",
        "litellm-prompt-too-long.json",
        "mistral-context-overflow.json",
    ] {
        let body = String::from_utf8(fixture(name)).expect("utf-8");
        let error = classify(400, &body);
        assert!(
            matches!(error, EndpointError::ContextOverflow { .. }),
            "{name}: {error:?}"
        );
        assert!(matches!(
            ModelError::from(error),
            ModelError::ContextOverflow { .. }
        ));
    }
    let overflow = classify(413, "Request Entity Too Large: prompt is too long");
    assert!(matches!(overflow, EndpointError::ContextOverflow { .. }));
}

#[test]
fn c2_an_overflow_inside_the_stream_is_context_overflow_too() {
    let body = String::from_utf8(fixture("llamacpp-context-overflow.json")).expect("utf-8");
    let line: Value = serde_json::from_str(&body).expect("json");
    let stream = format!("data: {line}\n\n");
    let (events, error) = decode(&[stream.as_bytes()]);
    assert!(events.is_empty());
    assert!(
        matches!(error, Some(EndpointError::ContextOverflow { ref message }) if message.contains("context size")),
        "{error:?}"
    );
}

#[test]
fn other_failures_keep_their_own_kinds_and_say_what_to_do() {
    let body = |name| String::from_utf8(fixture(name)).expect("utf-8");
    let cases = [
        (
            400,
            body("openai-string-too-long.json"),
            "rejected the request",
        ),
        (
            401,
            body("openai-invalid-key.json"),
            "check the model's api_key",
        ),
        (
            403,
            "{\"error\":\"forbidden\"}".to_string(),
            "check the model's api_key",
        ),
        (429, body("openai-rate-limit.json"), "wait and try again"),
        (
            404,
            body("openai-model-not-found.json"),
            "check the base_url and the model name",
        ),
        (
            502,
            "<html><body>Bad Gateway</body></html>".to_string(),
            "try again later",
        ),
        (500, String::new(), "HTTP 500 without a message"),
    ];
    for (status, body, says) in cases {
        let error = classify(status, &body);
        assert!(
            !matches!(error, EndpointError::ContextOverflow { .. }),
            "{status}: {error:?}"
        );
        assert!(error.to_string().contains(says), "{status}: {error}");
    }
    assert!(matches!(
        classify(401, &body("openai-invalid-key.json")),
        EndpointError::Unauthorized { status: 401, .. }
    ));
    assert!(matches!(
        classify(429, &body("openai-rate-limit.json")),
        EndpointError::RateLimited { .. }
    ));
}

#[test]
fn a_key_the_endpoint_echoes_is_redacted_even_from_the_log() {
    let error = classify(
        401,
        &String::from_utf8(fixture("openai-invalid-key.json")).expect("utf-8"),
    );
    assert_eq!(
        error.to_string(),
        "the endpoint refused the API key (HTTP 401): Incorrect API key provided: [redacted]; \
         check the model's api_key"
    );
    for (text, redacted) in [
        (
            "Authorization: Bearer abc.def-123",
            "Authorization: Bearer [redacted]",
        ),
        (
            "bad key sk_live_51Habcdef, retry",
            "bad key [redacted], retry",
        ),
        (
            r#"{"api_key": "hunter2-secret"}"#,
            r#"{"api_key": "[redacted]"}"#,
        ),
        ("token=abcdef&x=1", "token=[redacted]&x=1"),
        ("the key is invalid", "the key is invalid"),
        (
            "maximum context length is 8192 tokens",
            "maximum context length is 8192 tokens",
        ),
    ] {
        assert_eq!(redact(text, None), redacted);
    }
    assert_eq!(
        redact("you sent my-own-key-42!", Some("my-own-key-42")),
        "you sent [redacted]!"
    );
}

#[test]
fn a_failed_call_tells_the_person_what_to_do_without_quoting_the_endpoint() {
    let body = |name| String::from_utf8(fixture(name)).expect("utf-8");
    // (the error, what the person is told, what the endpoint sent that must not be repeated)
    let cases = [
        (
            classify(401, &body("openai-invalid-key.json")),
            "ask an administrator to check the model's api_key",
            "Incorrect API key provided",
        ),
        (
            classify(429, &body("openai-rate-limit.json")),
            "wait and send the message again",
            "org-7c2QkVx9",
        ),
        (
            classify(404, &body("openai-model-not-found.json")),
            "check its base_url and model name",
            "does not exist",
        ),
        (
            classify(502, "<html><body>Bad Gateway</body></html>"),
            "(HTTP 502); send the message again later",
            "Bad Gateway",
        ),
        (
            classify(400, &body("openai-string-too-long.json")),
            "rejected the request (HTTP 400)",
            "string too long",
        ),
        (
            EndpointError::BadChunk {
                reason: "expected value".into(),
                start: "<html>secret page</html>".into(),
            },
            "ask an administrator to check its base_url",
            "secret page",
        ),
        (
            EndpointError::StreamFailed {
                message: "upstream said sk-live-1234".into(),
            },
            "send the message again",
            "sk-live",
        ),
    ];
    for (error, says, not) in cases {
        assert!(
            error
                .to_string()
                .to_lowercase()
                .contains(&not.to_lowercase()),
            "the log keeps the detail: {error}"
        );
        let reason = ModelError::from(error).reason();
        assert!(reason.contains(says), "{reason}");
        assert!(
            !reason.to_lowercase().contains(&not.to_lowercase()),
            "{reason}"
        );
    }
}

#[test]
fn a_long_error_message_is_quoted_whole_characters_only() {
    let message = "👩‍💻".repeat(400);
    let error = classify(400, &json!({"error": {"message": message}}).to_string());
    let EndpointError::Rejected {
        message: quoted, ..
    } = error
    else {
        panic!("rejected: {error:?}");
    };
    assert_eq!(quoted, format!("{}…", "👩‍💻".repeat(300)));
}

fn capabilities(can_reason: bool, can_see: bool) -> ModelCapabilities {
    ModelCapabilities {
        id: "test-model".into(),
        provider: Provider::OpenAi,
        context_window: 128_000,
        max_output_tokens: 4_096,
        can_reason,
        can_see,
        largest_picture: Some(PictureLimit {
            long_edge: 1_024,
            pixels: None,
        }),
    }
}

/// Every TOML example in `docs/models.md` is a models file the server reads, or a configuration
/// the adapter of its section reads (the Anthropic sections' examples Anthropic's, the others'
/// the OpenAI-compatible adapter's).
#[test]
fn the_documented_configurations_parse() {
    let doc = std::fs::read_to_string(format!(
        "{}/../../docs/models.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("docs/models.md");
    let mut read = 0;
    for section in doc.split("\n## ") {
        let anthropic = section
            .lines()
            .next()
            .unwrap_or_default()
            .contains("Anthropic");
        for example in section
            .split("```toml\n")
            .skip(1)
            .filter_map(|rest| rest.split("```").next())
        {
            read += 1;
            if example.contains("[[models]]") {
                portal_model::ModelRegistry::from_toml(example, 0.0, |_| Some("key".into()))
                    .unwrap_or_else(|e| panic!("{e}\nin\n{example}"));
            } else if anthropic {
                let config: AnthropicConfig =
                    toml::from_str(example).unwrap_or_else(|e| panic!("{e}\nin\n{example}"));
                assert!(
                    config.messages_url().ends_with("/v1/messages"),
                    "{config:?}"
                );
            } else {
                let config: OpenAiConfig =
                    toml::from_str(example).unwrap_or_else(|e| panic!("{e}\nin\n{example}"));
                assert!(!config.completions_url().contains("//chat"), "{config:?}");
            }
        }
    }
    assert!(read >= 4, "{read} examples");
}

#[test]
fn a_configuration_names_the_model_once_and_keeps_the_key_out_of_debug_output() {
    let config: OpenAiConfig = toml::from_str(
        r#"
        base_url = "http://127.0.0.1:8000/v1/"
        api_key = "sk-secret-123"
        model = "Qwen/Qwen3-32B"
        connect_timeout_seconds = 3

        [capabilities]
        context_window = 32768
        max_output_tokens = 8192
        can_reason = true
        can_see = false
        "#,
    )
    .expect("config");
    assert_eq!(config.model(), "Qwen/Qwen3-32B");
    assert_eq!(config.capabilities.provider, Provider::OpenAi);
    assert_eq!(config.capabilities.largest_picture, None);
    assert_eq!(
        config.completions_url(),
        "http://127.0.0.1:8000/v1/chat/completions"
    );
    assert_eq!(config.endpoint.connect_timeout.as_secs(), 3);
    assert!(!format!("{config:?}").contains("sk-secret-123"));
    let model = OpenAiModel::new(config).expect("model");
    assert!(!format!("{model:?}").contains("sk-secret-123"));
}

// The reply cap is 16 characters for each of the model's output tokens unless the table sets
// `max_reply_chars`, and it cannot be 0.
#[test]
fn the_reply_cap_follows_max_output_tokens_unless_configured() {
    let table = |extra: &str| {
        format!(
            "base_url = \"http://h/v1\"\nmodel = \"m\"\n{extra}\n[capabilities]\n\
             context_window = 32768\nmax_output_tokens = 8192\ncan_reason = false\ncan_see = false\n"
        )
    };
    let config: OpenAiConfig = toml::from_str(&table("")).expect("config");
    assert_eq!(config.endpoint.limits.max_reply_chars, 8192 * 16);
    let config: OpenAiConfig = toml::from_str(&table("max_reply_chars = 500")).expect("config");
    assert_eq!(config.endpoint.limits.max_reply_chars, 500);
    let made = OpenAiConfig::new("http://h/v1", ApiKey::None, capabilities(false, false));
    assert_eq!(
        made.endpoint.limits.max_reply_chars,
        made.capabilities.max_output_tokens as usize * 16
    );
    let refused = toml::from_str::<OpenAiConfig>(&table("max_reply_chars = 0"))
        .expect_err("refused")
        .to_string();
    assert!(
        refused.contains("`max_reply_chars` must be at least 1"),
        "{refused}"
    );
}

#[test]
fn a_configuration_with_mistakes_is_refused_with_the_reason() {
    let refused = |text: &str| {
        toml::from_str::<OpenAiConfig>(text)
            .expect_err("refused")
            .to_string()
    };
    let caps = "[capabilities]\ncontext_window = 8192\nmax_output_tokens = 1024\ncan_reason = false\ncan_see = false\n";
    assert!(
        refused(&format!(
            "base_url = \"localhost:8080\"\nmodel = \"m\"\n{caps}"
        ))
        .contains("http://")
    );
    assert!(refused(&format!("base_url = \"http://h\"\nmodel = \" \"\n{caps}")).contains("model"));
    assert!(
        refused(&format!(
            "base_url = \"http://h\"\nmodel = \"m\"\n{caps}id = \"other\"\n"
        ))
        .contains("capabilities take no `id`")
    );
    assert!(
        refused("base_url = \"http://h\"\nmodel = \"m\"\n[capabilities]\ncontext_window = 8192\n")
            .contains("max_output_tokens")
    );
    // A model that may write nothing would get a reply cap of nothing: every answer refused.
    assert!(
        refused(&format!(
            "base_url = \"http://h\"\nmodel = \"m\"\n{}",
            caps.replace("max_output_tokens = 1024", "max_output_tokens = 0")
        ))
        .contains("`capabilities.max_output_tokens` must be at least 1")
    );
    assert!(
        refused(&format!(
            "base_url = \"http://h\"\nmodel = \"m\"\nmax_total_arguments_kib = 0\n{caps}"
        ))
        .contains("`max_total_arguments_kib` must be at least 1")
    );
}

#[test]
fn a_key_from_the_environment_is_read_once_and_its_absence_named() {
    let config = OpenAiConfig::new(
        "http://127.0.0.1:9/v1",
        ApiKey::Env {
            env: "PORTAL_TEST_KEY".into(),
        },
        capabilities(false, false),
    );
    let missing = OpenAiModel::with_env(config.clone(), |_| None).expect_err("missing");
    assert_eq!(
        missing,
        EndpointError::MissingKey {
            var: "PORTAL_TEST_KEY".into()
        }
    );
    assert!(missing.to_string().contains("PORTAL_TEST_KEY"));
    let found = OpenAiModel::with_env(config, |var| {
        (var == "PORTAL_TEST_KEY").then(|| "sk-env".to_string())
    });
    assert!(found.is_ok());
}

/// A tiny OpenAI-compatible endpoint on loopback that answers one way and keeps what it was sent.
struct Endpoint {
    base_url: String,
    seen: Arc<Mutex<Vec<Sent>>>,
}

/// A request the endpoint was sent: its `Authorization` header and its body.
type Sent = (Option<String>, Value);

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

    fn error(status: StatusCode, body: Vec<u8>) -> Answer {
        Answer {
            status,
            headers: vec![(header::CONTENT_TYPE, "application/json")],
            body,
        }
    }
}

async fn endpoint(answer: Answer) -> Endpoint {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |headers: HeaderMap, body: axum::Json<Value>| {
            let kept = Arc::clone(&kept);
            let answer = answer.clone();
            async move {
                let authorization = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                kept.lock().expect("lock").push((authorization, body.0));
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
    /// A model on this endpoint that makes each call once: a refused call is not retried here
    /// (`server/portal/tests/attack_streams.rs` checks retries).
    fn model(&self, capabilities: ModelCapabilities) -> OpenAiModel {
        let mut config = OpenAiConfig::new(
            &self.base_url,
            ApiKey::Value("sk-test".into()),
            capabilities,
        );
        config.endpoint.retry.retries = 0;
        OpenAiModel::new(config).expect("model")
    }

    fn sent(&self) -> Sent {
        let seen = self.seen.lock().expect("lock");
        assert_eq!(seen.len(), 1, "one request");
        seen[0].clone()
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
                    "width": 2048,
                    "height": 1024
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

fn picture_urls(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|part| part["type"] == "image_url")
        .filter_map(|part| part["image_url"]["url"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn over_http_the_request_is_cores_body_streamed_with_usage_and_the_answer_decodes() {
    let bytes = fixture("vllm-interleaved-tool-calls.sse");
    let server = endpoint(Answer::stream(bytes.clone())).await;
    let capabilities = capabilities(true, true);
    let model = server.model(capabilities.clone());
    let prompt = prompt_with_picture(&capabilities);
    let got = collect(model.stream(&prompt, &OnePicture)).await;
    assert_eq!(got, decode(&[&bytes]));

    let (authorization, body) = server.sent();
    assert_eq!(authorization.as_deref(), Some("Bearer sk-test"));
    let mut expected = portal_core::prompt::openai::request(&prompt, &capabilities, &OnePicture);
    expected["stream"] = json!(true);
    expected["stream_options"] = json!({"include_usage": true});
    assert_eq!(body, expected);
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["tools"][0]["function"]["name"], "lookup_price");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

// Rule E3: a model that reasons gets the turn's effort; one that does not gets no effort field.
#[tokio::test]
async fn e3_reasoning_effort_is_sent_only_to_a_model_that_reasons() {
    for (can_reason, effort) in [(true, Some("high")), (false, None)] {
        let server = endpoint(Answer::stream(fixture("openai-text.sse"))).await;
        let capabilities = capabilities(can_reason, true);
        let model = server.model(capabilities.clone());
        let (_, error) =
            collect(model.stream(&prompt_with_picture(&capabilities), &OnePicture)).await;
        assert_eq!(error, None);
        let (_, body) = server.sent();
        assert_eq!(
            body.get("reasoning_effort").and_then(Value::as_str),
            effort,
            "can_reason = {can_reason}"
        );
    }
}

// Rule A5 (with A4): a model that sees gets the picture, reduced to its largest size; a model
// that cannot see gets no picture at all.
#[tokio::test]
async fn a5_pictures_are_sent_only_to_a_model_that_sees() {
    for can_see in [true, false] {
        let server = endpoint(Answer::stream(fixture("openai-text.sse"))).await;
        let capabilities = capabilities(false, can_see);
        let model = server.model(capabilities.clone());
        let (_, error) =
            collect(model.stream(&prompt_with_picture(&capabilities), &OnePicture)).await;
        assert_eq!(error, None);
        let (_, body) = server.sent();
        let urls = picture_urls(&body);
        if can_see {
            assert_eq!(urls, ["data:image/png;base64,iVBORw0KGgo="]);
            assert!(
                body.to_string().contains("1024"),
                "the reduced size is named"
            );
        } else {
            assert!(urls.is_empty(), "{body}");
        }
    }
}

// Rule C2: an overflow over HTTP arrives as the one ContextOverflow kind.
#[tokio::test]
async fn c2_an_overflow_over_http_is_context_overflow() {
    let server = endpoint(Answer::error(
        StatusCode::BAD_REQUEST,
        fixture("openai-context-overflow.json"),
    ))
    .await;
    let capabilities = capabilities(false, false);
    let model = server.model(capabilities.clone());
    let (events, error) =
        collect(model.stream(&prompt_with_picture(&capabilities), &OnePicture)).await;
    assert!(events.is_empty());
    assert!(
        matches!(error, Some(EndpointError::ContextOverflow { ref message }) if message.contains("131407 tokens")),
        "{error:?}"
    );
}

#[tokio::test]
async fn over_http_a_refused_key_and_a_rate_limit_say_what_to_do() {
    let server = endpoint(Answer::error(
        StatusCode::UNAUTHORIZED,
        fixture("openai-invalid-key.json"),
    ))
    .await;
    let model = server.model(capabilities(false, false));
    let (_, error) = collect(model.send(json!({"model": "test-model", "messages": []}))).await;
    let error = error.expect("refused");
    assert!(matches!(
        error,
        EndpointError::Unauthorized { status: 401, .. }
    ));
    assert!(
        error.to_string().contains("check the model's api_key"),
        "{error}"
    );

    let mut limited = Answer::error(
        StatusCode::TOO_MANY_REQUESTS,
        fixture("openai-rate-limit.json"),
    );
    limited.headers.push((header::RETRY_AFTER, "7"));
    let server = endpoint(limited).await;
    let model = server.model(capabilities(false, false));
    let (_, error) = collect(model.send(json!({"model": "test-model", "messages": []}))).await;
    let error = error.expect("limited");
    assert!(
        matches!(
            error,
            EndpointError::RateLimited {
                retry_after_seconds: Some(7),
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("wait 7 s and try again"),
        "{error}"
    );
}

#[tokio::test]
async fn over_http_a_closed_port_says_to_check_the_base_url() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let address = listener.local_addr().expect("address");
    drop(listener);
    let config = OpenAiConfig::new(
        &format!("http://{address}/v1"),
        ApiKey::None,
        capabilities(false, false),
    );
    let model = OpenAiModel::new(config).expect("model");
    let (_, error) = collect(model.send(json!({"model": "test-model", "messages": []}))).await;
    let error = error.expect("unreachable");
    assert!(
        matches!(error, EndpointError::Unreachable { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("check the base_url"), "{error}");
}

#[tokio::test]
async fn over_http_a_stream_that_stops_early_is_truncated() {
    let bytes = fixture("openai-parallel-tool-calls.sse");
    let server = endpoint(Answer::stream(bytes[..bytes.len() / 2].to_vec())).await;
    let model = server.model(capabilities(false, false));
    let (events, error) = collect(model.send(json!({"model": "test-model", "messages": []}))).await;
    assert!(!events.is_empty());
    assert_eq!(error, Some(EndpointError::Truncated));
}

#[tokio::test]
async fn the_stream_function_reads_any_byte_stream() {
    let bytes = fixture("ollama-tool-call.sse");
    let pieces: Vec<Result<Bytes, Infallible>> = bytes
        .chunks(3)
        .map(|piece| Ok(Bytes::copy_from_slice(piece)))
        .collect();
    let items: Vec<_> = events(
        futures_util::stream::iter(pieces),
        &AnswerLimits::for_output_tokens(8_192),
    )
    .collect()
    .await;
    let got: Vec<ModelEvent> = items.into_iter().map(|item| item.expect("event")).collect();
    assert_eq!((got, None), decode(&[&bytes]));

    let broken: Vec<Result<Bytes, String>> = vec![
        Ok(Bytes::copy_from_slice(&bytes[..200])),
        Err("connection reset by peer".into()),
    ];
    let items: Vec<_> = events(
        futures_util::stream::iter(broken),
        &AnswerLimits::for_output_tokens(8_192),
    )
    .collect()
    .await;
    assert_eq!(
        items.last(),
        Some(&Err(EndpointError::Interrupted {
            reason: "connection reset by peer".into()
        }))
    );
}
