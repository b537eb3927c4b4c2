//! `buildPrompt`, `rebuildMemory` and `parseCommand` in the browser, judged against the native
//! golden prompts where there are some (rules L1–L3, A5, E3, M2, M9, S1, C6).
#![cfg(target_arch = "wasm32")]

use portal_core::model::Provider;
use portal_core::prompt::{PRECEDENCE, check_pairing};
use serde::Serialize;
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The prompt fixtures shared with core's golden test, by name.
const FIXTURES: [(&str, &str); 11] = [
    (
        "parallel-calls-out-of-order",
        include_str!("../../tests/fixtures/prompt/parallel-calls-out-of-order.json"),
    ),
    (
        "call-never-returned",
        include_str!("../../tests/fixtures/prompt/call-never-returned.json"),
    ),
    (
        "cut-off-turn",
        include_str!("../../tests/fixtures/prompt/cut-off-turn.json"),
    ),
    (
        "twelve-calls",
        include_str!("../../tests/fixtures/prompt/twelve-calls.json"),
    ),
    (
        "twenty-five-turns",
        include_str!("../../tests/fixtures/prompt/twenty-five-turns.json"),
    ),
    (
        "zwj-emoji-across-cut",
        include_str!("../../tests/fixtures/prompt/zwj-emoji-across-cut.json"),
    ),
    (
        "adjacent-users-after-cut-off",
        include_str!("../../tests/fixtures/prompt/adjacent-users-after-cut-off.json"),
    ),
    (
        "thinking-and-calls-only",
        include_str!("../../tests/fixtures/prompt/thinking-and-calls-only.json"),
    ),
    (
        "compaction-with-kept-tail",
        include_str!("../../tests/fixtures/prompt/compaction-with-kept-tail.json"),
    ),
    (
        "attachments",
        include_str!("../../tests/fixtures/prompt/attachments.json"),
    ),
    (
        "skills-and-approval",
        include_str!("../../tests/fixtures/prompt/skills-and-approval.json"),
    ),
];

/// The rendered golden prompt of each fixture.
const GOLDEN_TEXT: [&str; 11] = [
    include_str!("../../tests/golden/prompt/parallel-calls-out-of-order.txt"),
    include_str!("../../tests/golden/prompt/call-never-returned.txt"),
    include_str!("../../tests/golden/prompt/cut-off-turn.txt"),
    include_str!("../../tests/golden/prompt/twelve-calls.txt"),
    include_str!("../../tests/golden/prompt/twenty-five-turns.txt"),
    include_str!("../../tests/golden/prompt/zwj-emoji-across-cut.txt"),
    include_str!("../../tests/golden/prompt/adjacent-users-after-cut-off.txt"),
    include_str!("../../tests/golden/prompt/thinking-and-calls-only.txt"),
    include_str!("../../tests/golden/prompt/compaction-with-kept-tail.txt"),
    include_str!("../../tests/golden/prompt/attachments.txt"),
    include_str!("../../tests/golden/prompt/skills-and-approval.txt"),
];

/// The fixtures whose request bodies are golden too: (name, OpenAI body, Anthropic body).
const GOLDEN_BODIES: [(&str, &str, &str); 4] = [
    (
        "parallel-calls-out-of-order",
        include_str!("../../tests/golden/prompt/parallel-calls-out-of-order.openai.json"),
        include_str!("../../tests/golden/prompt/parallel-calls-out-of-order.anthropic.json"),
    ),
    (
        "compaction-with-kept-tail",
        include_str!("../../tests/golden/prompt/compaction-with-kept-tail.openai.json"),
        include_str!("../../tests/golden/prompt/compaction-with-kept-tail.anthropic.json"),
    ),
    (
        "attachments",
        include_str!("../../tests/golden/prompt/attachments.openai.json"),
        include_str!("../../tests/golden/prompt/attachments.anthropic.json"),
    ),
    (
        "skills-and-approval",
        include_str!("../../tests/golden/prompt/skills-and-approval.openai.json"),
        include_str!("../../tests/golden/prompt/skills-and-approval.anthropic.json"),
    ),
];

fn js(value: &Value) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .expect("serialisable")
}

fn json_of(value: &JsValue) -> Value {
    serde_wasm_bindgen::from_value(value.clone()).expect("plain data")
}

/// The model core's golden prompts are built for.
fn test_model() -> Value {
    json!({
        "id": "test-model",
        "provider": "anthropic",
        "contextWindow": 200_000,
        "maxOutputTokens": 32_000,
        "canReason": true,
        "canSee": true,
        "largestPicture": {"longEdge": 1_568, "pixels": 1_150_000},
    })
}

/// A `buildPrompt` request for a core fixture, in the given format.
fn fixture_request(json: &str, format: &str) -> Value {
    let fixture: Value = serde_json::from_str(json).expect("fixture JSON");
    json!({
        "transcript": fixture["transcript"],
        "model": test_model(),
        "format": format,
        "instructions": fixture.get("instructions").cloned().unwrap_or(json!("")),
        "projectInstructions": fixture.get("project_instructions").cloned().unwrap_or(json!("")),
        "selectedSkills": fixture.get("selected_skills").cloned().unwrap_or(json!([])),
        "catalogue": fixture.get("catalogue").cloned().unwrap_or(json!([])),
        "agentTools": fixture.get("agent_tools").cloned().unwrap_or(json!([])),
        "effort": fixture.get("effort").cloned().unwrap_or(json!("medium")),
        "compactionHint": fixture.get("compaction_hint").cloned().unwrap_or(json!("search")),
    })
}

fn build(request: &Value) -> Value {
    json_of(&portal_wasm::build_prompt(js(request)).expect("the prompt builds"))
}

/// The error a call threw, as (name, the whole error as JSON-ish fields, message).
fn thrown(error: JsValue) -> (String, JsValue, String) {
    let as_error: js_sys::Error = error.clone().dyn_into().expect("an Error is thrown");
    (as_error.name().into(), error, as_error.message().into())
}

fn property(error: &JsValue, key: &str) -> Option<String> {
    js_sys::Reflect::get(error, &JsValue::from_str(key))
        .ok()
        .and_then(|v| v.as_string())
}

// L1, L3: every fixture gives in the browser the very prompt core renders natively, text for
// text.
#[wasm_bindgen_test]
fn l1_prompts_match_native_golden_text() {
    for ((name, fixture), golden) in FIXTURES.iter().zip(GOLDEN_TEXT) {
        let built = build(&fixture_request(fixture, "neutral"));
        let description: Value =
            serde_json::from_str::<Value>(fixture).expect("json")["description"].clone();
        let golden: String = golden
            .lines()
            .filter(|line| !line.starts_with("=== diagnostics:"))
            .map(|line| format!("{line}\n"))
            .collect();
        let ours = format!(
            "# {}\n\n{}",
            description.as_str().expect("a description"),
            built["text"].as_str().expect("text")
        );
        assert_eq!(ours, golden, "{name}");
        let has_diagnostics = GOLDEN_TEXT
            .iter()
            .zip(FIXTURES)
            .any(|(g, (n, _))| n == *name && g.contains("=== diagnostics:"));
        assert_eq!(
            !built["diagnostics"]
                .as_array()
                .expect("diagnostics")
                .is_empty(),
            has_diagnostics,
            "{name}"
        );
    }
}

// L3: the OpenAI and Anthropic bodies equal core's golden bodies, pictures supplied by the host
// at the sizes the neutral prompt names, and both pass the providers' pairing rules.
#[wasm_bindgen_test]
fn l3_request_bodies_match_native_goldens() {
    for (name, openai, anthropic) in GOLDEN_BODIES {
        let (_, fixture) = FIXTURES.iter().find(|(n, _)| *n == name).expect("fixture");
        let neutral = build(&fixture_request(fixture, "neutral"));
        let mut pictures = serde_json::Map::new();
        for entry in neutral["body"]["entries"].as_array().expect("entries") {
            for part in entry["parts"].as_array().expect("parts") {
                if part["type"] == "picture" {
                    let id = part["attachmentId"].as_str().expect("id");
                    let base64 = format!("<{id} at {}×{}>", part["width"], part["height"]);
                    pictures.insert(
                        id.to_string(),
                        json!({"mediaType": part["mediaType"], "base64": base64}),
                    );
                }
            }
        }
        for (format, golden, provider) in [
            ("openai", openai, Provider::OpenAi),
            ("anthropic", anthropic, Provider::Anthropic),
        ] {
            let mut request = fixture_request(fixture, format);
            request["pictures"] = Value::Object(pictures.clone());
            let built = build(&request);
            assert_eq!(built["format"], format);
            let golden: Value = serde_json::from_str(golden).expect("golden JSON");
            assert_eq!(built["body"], golden, "{name} {format}");
            check_pairing(provider, &built["body"]).expect("pairing rules hold");
        }
    }
}

/// A conversation with one past turn and a new message, built from every layer's input.
fn every_layer(format: &str) -> Value {
    json!({
        "transcript": {
            "version": 1,
            "turns": [{
                "index": 1,
                "status": "completed",
                "messages": [
                    {"role": "user", "blocks": [{"type": "text", "text": "What is our churn?"}]},
                    {"role": "assistant", "blocks": [{"type": "text", "text": "Churn is 4 %."}]}
                ]
            }]
        },
        "newMessage": {"text": "/fact-check Is that right?"},
        "model": test_model(),
        "format": format,
        "floor": "FLOOR: you are the portal's assistant.",
        "instructions": "AUTHOR: you are Acme's analyst.",
        "projectInstructions": "PROJECT: the heron market.",
        "selectedSkills": [{
            "id": "sk-1", "organisation": "acme", "name": "fact-check",
            "description": "Use when a claim needs checking.",
            "instructions": "SKILL: find two sources.", "visible": true, "active": true
        }],
        "catalogue": [{"name": "summarise", "description": "Use for long documents."}],
        "effort": "high",
    })
}

// L1, L2: the layers come in the order floor, instructions, project, skills, catalogue, memory,
// new message; the system text states the precedence and labels each layer.
#[wasm_bindgen_test]
fn l1_layers_come_in_order() {
    let built = build(&every_layer("neutral"));
    let body = &built["body"];
    let layers: Vec<(&str, u64)> = body["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| {
            (
                l["layer"].as_str().expect("name"),
                l["number"].as_u64().expect("number"),
            )
        })
        .collect();
    assert_eq!(
        layers,
        [
            ("floor", 1),
            ("instructions", 2),
            ("project", 3),
            ("skills", 4),
            ("catalogue", 5)
        ]
    );
    let system = body["system"].as_str().expect("system");
    let at = |needle: &str| {
        system
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} in the system text"))
    };
    assert!(
        at("FLOOR") < at("AUTHOR")
            && at("AUTHOR") < at("PROJECT:")
            && at("PROJECT:") < at("SKILL:")
            && at("SKILL:") < at("- summarise")
    );
    for label in [
        "Portal floor",
        "Author instructions",
        "Project instructions",
        "Selected skills",
        "Skill catalogue",
    ] {
        at(&format!("name=\"{label}\""));
    }
    at(PRECEDENCE);
    let entries: Vec<(&str, &str)> = body["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["layer"].as_str().expect("layer"),
                e["role"].as_str().expect("role"),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("memory", "user"),
            ("memory", "assistant"),
            ("newMessage", "user")
        ]
    );
    assert_eq!(
        body["entries"][2]["parts"][0],
        json!({"type": "text", "text": "/fact-check Is that right?"})
    );
    assert_eq!(body["effort"], "high");
    assert_eq!(built["turns"], json!([1]));

    let openai = build(&every_layer("openai"))["body"].clone();
    assert_eq!(openai["messages"][0]["role"], "system");
    assert_eq!(openai["messages"][0]["content"].as_str(), Some(system));
    assert_eq!(
        openai["messages"][3]["content"],
        "/fact-check Is that right?"
    );
    assert_eq!(openai["reasoning_effort"], "high");
}

// E3: a model that cannot reason gets no effort parameter; one that can gets the level, and
// Anthropic the thinking budget the host configured.
#[wasm_bindgen_test]
fn e3_effort_only_for_a_model_that_can_reason() {
    let mut request = every_layer("openai");
    request["model"]["canReason"] = json!(false);
    let built = build(&request);
    assert!(built["body"].get("reasoning_effort").is_none());
    request["format"] = json!("anthropic");
    assert!(build(&request)["body"].get("thinking").is_none());
    request["model"]["canReason"] = json!(true);
    request["thinkingBudgets"] = json!({"high": 4_096});
    assert_eq!(
        build(&request)["body"]["thinking"],
        json!({"type": "enabled", "budget_tokens": 4_096})
    );
}

// A5: a new message with a picture for a model that cannot see is refused, naming the model.
#[wasm_bindgen_test]
fn a5_picture_for_a_blind_model_is_refused() {
    let mut request = every_layer("openai");
    request["model"]["canSee"] = json!(false);
    request["model"]["id"] = json!("text-only-1");
    request["newMessage"]["attachments"] = json!([{
        "kind": "picture", "id": "photo_1", "filename": "chart.png",
        "media_type": "image/png", "width": 800, "height": 600
    }]);
    let (name, error, message) =
        thrown(portal_wasm::build_prompt(js(&request)).expect_err("refused"));
    assert_eq!(name, "AttachmentError");
    assert!(
        message.contains("text-only-1") && message.contains("chart.png"),
        "{message}"
    );
    assert_eq!(property(&error, "model").as_deref(), Some("text-only-1"));
    assert_eq!(property(&error, "filename").as_deref(), Some("chart.png"));
    request["model"]["canSee"] = json!(true);
    assert!(portal_wasm::build_prompt(js(&request)).is_ok());
}

// L3: a malformed request throws an InputError naming the field; a broken transcript a
// TranscriptError.
#[wasm_bindgen_test]
fn l3_malformed_requests_name_the_field() {
    let base = every_layer("openai");
    let mut running = base.clone();
    running["transcript"]["turns"][0]["status"] = json!("running");
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"instrucions": "x"}),
            "request.instrucions",
            "unknown field",
        ),
        (json!({"model": null}), "request.model", "invalid type"),
        (json!({"format": "gemini"}), "request.format", "gemini"),
        (json!({"effort": "extreme"}), "request.effort", "extreme"),
        (
            json!({"memory": {"maxTurn": 3}}),
            "request.memory",
            "maxTurn",
        ),
        (
            json!({"compactionHint": {"newestInTurn": -1}}),
            "request.compactionHint",
            "-1",
        ),
        (running, "request.newMessage", "still running"),
    ];
    for (patch, field, says) in cases {
        let mut request = base.clone();
        for (key, value) in patch.as_object().expect("patch") {
            request[key] = value.clone();
        }
        let (name, error, message) =
            thrown(portal_wasm::build_prompt(js(&request)).expect_err("refused"));
        assert_eq!(name, "InputError", "{message}");
        assert_eq!(
            property(&error, "field").as_deref(),
            Some(field),
            "{message}"
        );
        assert!(message.contains(says), "{message:?} says {says:?}");
    }
    let mut model = base.clone();
    model["model"]
        .as_object_mut()
        .expect("model")
        .remove("canSee");
    let (_, error, message) = thrown(portal_wasm::build_prompt(js(&model)).expect_err("refused"));
    assert_eq!(property(&error, "field").as_deref(), Some("request.model"));
    assert!(message.contains("canSee"), "{message}");

    let mut broken = base.clone();
    broken["transcript"]["turns"][0]["messages"][1]["blocks"] =
        json!([{"type": "thinking", "text": "hm"}]);
    let (name, _, message) = thrown(portal_wasm::build_prompt(js(&broken)).expect_err("refused"));
    assert_eq!(name, "TranscriptError");
    assert!(message.contains("terminal-text"), "{message}");
}

/// A transcript of `n` completed turns, then a running one.
fn turns(n: u32) -> Value {
    let mut turns: Vec<Value> = (1..=n)
        .map(|i| {
            json!({"index": i, "status": "completed", "messages": [
                {"role": "user", "blocks": [{"type": "text", "text": format!("Question {i}")}]},
                {"role": "assistant", "blocks": [{"type": "text", "text": format!("Answer {i}")}]}
            ]})
        })
        .collect();
    turns.push(json!({"index": n + 1, "status": "running", "messages": [
        {"role": "user", "blocks": [{"type": "text", "text": "And now?"}]}
    ]}));
    json!({"version": 1, "turns": turns})
}

fn rebuild(transcript: &Value, options: Option<Value>) -> Value {
    json_of(
        &portal_wasm::rebuild_memory(js(transcript), options.as_ref().map(js))
            .expect("memory rebuilds"),
    )
}

// M9: a call that never returned is answered, saying so; every replayed call has its answer in
// the next entry.
#[wasm_bindgen_test]
fn m9_rebuild_memory_answers_a_call_that_never_returned() {
    let (_, fixture) = FIXTURES
        .iter()
        .find(|(n, _)| *n == "call-never-returned")
        .expect("fixture");
    let fixture: Value = serde_json::from_str(fixture).expect("json");
    let memory = rebuild(&fixture["transcript"], None);
    let entries = memory["entries"].as_array().expect("entries");
    let mut answered = 0;
    for (i, entry) in entries.iter().enumerate() {
        let calls: Vec<&Value> = entry["parts"]
            .as_array()
            .expect("parts")
            .iter()
            .filter(|p| p["type"] == "call")
            .collect();
        if calls.is_empty() {
            continue;
        }
        let next = &entries[i + 1];
        assert_eq!(next["role"], "tool");
        let answers: Vec<&Value> = next["parts"].as_array().expect("parts").iter().collect();
        assert_eq!(answers.len(), calls.len());
        for (call, answer) in calls.iter().zip(&answers) {
            assert_eq!(answer["type"], "answer");
            assert_eq!(answer["callId"], call["id"]);
            answered += 1;
        }
    }
    assert_eq!(answered, 2);
    let never = entries
        .iter()
        .flat_map(|e| e["parts"].as_array().expect("parts"))
        .find(|p| p["callId"] == "s2")
        .expect("s2 is answered");
    assert_eq!(never["isError"], true);
    assert!(
        never["content"]
            .as_str()
            .expect("content")
            .contains("never returned")
    );
    assert_eq!(
        memory["entries"]
            .as_array()
            .expect("entries")
            .last()
            .expect("entry")["layer"],
        "newMessage"
    );
}

// M2: at most `maxTurns` past turns are replayed, 20 by default; the option overrides it and an
// unknown option is refused by name. The transcript may also be given as JSON text.
#[wasm_bindgen_test]
fn m2_max_turns_bounds_the_replayed_turns() {
    let transcript = turns(25);
    let default = rebuild(&transcript, None);
    assert_eq!(default["turns"], json!((6..=25).collect::<Vec<u32>>()));
    let two = rebuild(
        &transcript,
        Some(json!({"maxTurns": 2, "compactionHint": "none"})),
    );
    assert_eq!(two["turns"], json!([24, 25]));
    assert_eq!(two["entries"].as_array().expect("entries").len(), 5);
    assert_eq!(two["summary"], Value::Null);
    assert_eq!(two["hasDocuments"], false);
    let text = JsValue::from_str(&transcript.to_string());
    let from_text = json_of(&portal_wasm::rebuild_memory(text, None).expect("rebuilds"));
    assert_eq!(from_text, default);

    let (name, error, message) = thrown(
        portal_wasm::rebuild_memory(js(&transcript), Some(js(&json!({"maxTurn": 2}))))
            .expect_err("refused"),
    );
    assert_eq!(name, "InputError");
    assert_eq!(property(&error, "field").as_deref(), Some("options"));
    assert!(message.contains("maxTurn"), "{message}");
    let (_, error, _) = thrown(
        portal_wasm::rebuild_memory(js(&transcript), Some(js(&json!({"maxTurns": -2}))))
            .expect_err("refused"),
    );
    assert_eq!(property(&error, "field").as_deref(), Some("options"));
}

fn parse(text: &str) -> Value {
    json_of(&portal_wasm::parse_command(text).expect("parses"))
}

// S1: leading slugs select skills, repeated ones once; parsing stops at the first token that is
// not a slug, and the rest is the message text.
#[wasm_bindgen_test]
fn s1_parse_command_reads_leading_slugs() {
    let cases = [
        (
            "/market-research /fact-check compare these",
            json!({"kind": "message", "skills": ["market-research", "fact-check"], "text": "compare these"}),
        ),
        (
            "  /a /b /a go",
            json!({"kind": "message", "skills": ["a", "b"], "text": "go"}),
        ),
        (
            "/fact-check /Not-A-Slug and /later",
            json!({"kind": "message", "skills": ["fact-check"], "text": "/Not-A-Slug and /later"}),
        ),
        (
            "no slugs /here",
            json!({"kind": "message", "skills": [], "text": "no slugs /here"}),
        ),
        (
            "/fact-check /compact now",
            json!({"kind": "message", "skills": ["fact-check"], "text": "/compact now"}),
        ),
        ("", json!({"kind": "message", "skills": [], "text": ""})),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text), expected, "{text:?}");
    }
}

// C6: `/compact [instructions]` is the compaction command, never a skill.
#[wasm_bindgen_test]
fn c6_parse_command_reads_compact() {
    assert_eq!(
        parse("/compact  keep every figure  "),
        json!({"kind": "compact", "instructions": "keep every figure"})
    );
    assert_eq!(
        parse("/compact"),
        json!({"kind": "compact", "instructions": null})
    );
    assert_eq!(
        parse("/compactly go"),
        json!({"kind": "message", "skills": ["compactly"], "text": "go"})
    );
}
