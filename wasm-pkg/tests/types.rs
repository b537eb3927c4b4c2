//! The hand-written TypeScript declarations agree with the serde formats they describe: every
//! object the package takes accepts exactly the fields its interface documents, and every object
//! it returns carries exactly the fields its type documents.
#![cfg(target_arch = "wasm32")]

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The sources whose `typescript_custom_section` make the package's .d.ts.
const SOURCES: [&str; 6] = [
    include_str!("../src/transcript.rs"),
    include_str!("../src/memory.rs"),
    include_str!("../src/prompt.rs"),
    include_str!("../src/command.rs"),
    include_str!("../src/markdown.rs"),
    include_str!("../src/streaming_markdown.rs"),
];

/// The TypeScript of every custom section, comments left out.
fn declarations() -> String {
    let mut ts = String::new();
    for source in SOURCES {
        let start = source.find("r#\"").expect("a TypeScript section") + 3;
        let end = start + source[start..].find("\"#;").expect("its end");
        ts.push_str(&source[start..end]);
    }
    let mut plain = String::new();
    let mut rest = ts.as_str();
    while let Some(at) = rest.find("/*") {
        plain.push_str(&rest[..at]);
        rest = &rest[at + rest[at..].find("*/").expect("a closed comment") + 2..];
    }
    plain + rest
}

/// The text between the `{` at the start of `text` and the `}` that closes it.
fn braced(text: &str) -> &str {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[1..i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces in {text:?}")
}

/// The members of an object type's body: (name, type), optional or not.
fn members(body: &str) -> Vec<(String, String)> {
    let mut members = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '{' | '(' | '[' | '<' => depth += 1,
            '}' | ')' | ']' | '>' => depth -= 1,
            ';' if depth == 0 => {
                members.push(member(&body[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !body[start..].trim().is_empty() {
        members.push(member(&body[start..]));
    }
    members
}

fn member(text: &str) -> (String, String) {
    let (name, ty) = text
        .split_once(':')
        .unwrap_or_else(|| panic!("name: type in {text:?}"));
    let name = name.trim().trim_end_matches('?').to_string();
    (name, ty.trim().to_string())
}

/// The field names of `interface name`, without those it inherits.
fn interface(name: &str) -> BTreeSet<String> {
    let ts = declarations();
    let at = ts
        .find(&format!("interface {name} "))
        .unwrap_or_else(|| panic!("interface {name} is declared"));
    let body = &ts[at + ts[at..].find('{').expect("a body")..];
    members(braced(body)).into_iter().map(|(n, _)| n).collect()
}

/// The object types of the union `type name`, each with the string literal that tells it apart
/// (`discriminant: "value"`) and its field names.
fn union(name: &str, discriminant: &str) -> Vec<(String, BTreeSet<String>)> {
    let ts = declarations();
    let at = ts
        .find(&format!("type {name} ="))
        .unwrap_or_else(|| panic!("type {name} is declared"));
    // The union runs to the next declaration.
    let text = &ts[at..];
    let end = ["\nexport ", "\ninterface "]
        .iter()
        .filter_map(|next| text.find(next))
        .min()
        .unwrap_or(text.len());
    let mut rest = &text[..end];
    let mut variants = Vec::new();
    while let Some(open) = rest.find('{') {
        let body = braced(&rest[open..]);
        let fields = members(body);
        let tag = fields
            .iter()
            .find(|(n, _)| n == discriminant)
            .map(|(_, ty)| ty.trim_matches('"').to_string())
            .unwrap_or_else(|| panic!("{name}: a variant without {discriminant}"));
        variants.push((tag, fields.into_iter().map(|(n, _)| n).collect()));
        rest = &rest[open + body.len() + 2..];
    }
    variants
}

/// The fields of the variant of `union` whose discriminant is `tag`.
fn variant(union: &[(String, BTreeSet<String>)], tag: &str) -> BTreeSet<String> {
    union
        .iter()
        .find(|(t, _)| t == tag)
        .unwrap_or_else(|| panic!("no variant {tag:?} is documented"))
        .1
        .clone()
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

fn js(value: &Value) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .expect("serialisable")
}

fn json_of(value: &JsValue) -> Value {
    serde_wasm_bindgen::from_value(value.clone()).expect("plain data")
}

fn message(error: JsValue) -> String {
    let error: js_sys::Error = error.dyn_into().expect("an Error is thrown");
    assert_eq!(String::from(error.name()), "InputError");
    error.message().into()
}

/// The fields serde expects, read from its refusal of the unknown field `zzz`.
fn expected_fields(message: &str) -> BTreeSet<String> {
    let expected = message
        .split_once("unknown field `zzz`, expected")
        .unwrap_or_else(|| panic!("an unknown-field error: {message}"))
        .1;
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn transcript() -> Value {
    json!({"version": 1, "turns": [{"index": 1, "status": "completed", "messages": [
        {"role": "user", "blocks": [{"type": "text", "text": "Hello"}]},
        {"role": "assistant", "blocks": [{"type": "text", "text": "Hi!"}]}
    ]}]})
}

/// A request with every field `PromptRequest` documents, each object in it with every field its
/// interface documents, none of them at its default.
fn every_field() -> Value {
    json!({
        "transcript": transcript(),
        "newMessage": {
            "text": "/fact-check Look at this.",
            "attachments": [{"kind": "picture", "id": "p1", "filename": "chart.png",
                "media_type": "image/png", "width": 4000, "height": 3000}],
            "again": 1
        },
        "model": {
            "id": "test-model", "provider": "anthropic", "contextWindow": 200_000,
            "maxOutputTokens": 32_000, "canReason": true, "canSee": true,
            "largestPicture": {"longEdge": 1_568, "pixels": 1_150_000}
        },
        "format": "anthropic",
        "floor": "FLOOR",
        "instructions": "AUTHOR",
        "projectInstructions": "PROJECT",
        "selectedSkills": [{
            "id": "sk-1", "organisation": "acme", "name": "fact-check",
            "description": "Use when a claim needs checking.",
            "instructions": "SKILL: find two sources.", "visible": true, "active": true
        }],
        "catalogue": [{"name": "summarise", "description": "Use for long documents."}],
        "agentTools": [{"name": "lookup", "description": "Looks up.", "parameters": {"type": "object"}}],
        "effort": "high",
        "compactionHint": "none",
        "memory": {
            "maxTurns": 5, "maxCallsPerTurn": 4, "outputTurns": 2, "resultChars": 100,
            "argumentChars": 50,
            "attachments": {
                "inlineDocumentChars": 1_000, "manifestHeadings": 5, "headingChars": 50,
                "inlineReplayBudget": 4_000, "pictureResendMessages": 1
            }
        },
        "thinkingBudgets": {"low": 1_024, "medium": 2_048, "high": 4_096},
        "pictures": {"p1": {"mediaType": "image/jpeg", "base64": "QUJD"}}
    })
}

// Every input interface is the set of fields its conversion takes: a request using each documented
// field is accepted, and the fields serde lists when it refuses an unknown one are the documented
// ones.
#[wasm_bindgen_test]
fn inputs_take_exactly_the_documented_fields() {
    let request = every_field();
    let model = &request["model"];
    let memory = &request["memory"];
    for (value, interface_name) in [
        (&request, "PromptRequest"),
        (&request["newMessage"], "NewMessage"),
        (model, "ModelCapabilities"),
        (&model["largestPicture"], "PictureLimit"),
        (memory, "MemoryOptions"),
        (&memory["attachments"], "AttachmentOptions"),
        (&request["thinkingBudgets"], "ThinkingBudgets"),
        (&request["pictures"]["p1"], "EncodedPicture"),
        (&request["selectedSkills"][0], "Skill"),
        (&request["catalogue"][0], "CatalogueEntry"),
        (&request["agentTools"][0], "ToolDefinition"),
    ] {
        assert_eq!(keys(value), interface(interface_name), "{interface_name}");
    }
    let built = json_of(&portal_wasm::build_prompt(js(&request)).expect("the request is taken"));
    assert_eq!(
        built["body"]["thinking"]["budget_tokens"], 4_096,
        "thinkingBudgets.high is read"
    );
    assert!(
        built["body"]["system"]
            .as_str()
            .expect("system")
            .contains("FLOOR")
    );
    assert!(
        built["body"]["system"]
            .as_str()
            .expect("system")
            .contains("PROJECT"),
        "projectInstructions is read"
    );
    assert!(
        built["body"].to_string().contains("QUJD"),
        "the picture's bytes"
    );

    // Objects whose derive refuses unknown fields list the fields they take.
    let with_zzz = |path: &[&str]| {
        let mut request = every_field();
        let mut object = &mut request;
        for key in path {
            object = &mut object[*key];
        }
        object["zzz"] = json!(1);
        message(portal_wasm::build_prompt(js(&request)).expect_err("zzz is refused"))
    };
    for (path, interface_name) in [
        (&[][..], "PromptRequest"),
        (&["newMessage"][..], "NewMessage"),
        (&["model"][..], "ModelCapabilities"),
        (&["model", "largestPicture"][..], "PictureLimit"),
        (&["memory"][..], "MemoryOptions"),
        (&["memory", "attachments"][..], "AttachmentOptions"),
        (&["thinkingBudgets"][..], "ThinkingBudgets"),
        (&["pictures", "p1"][..], "EncodedPicture"),
    ] {
        let message = with_zzz(path);
        assert_eq!(
            expected_fields(&message),
            interface(interface_name),
            "{interface_name}: {message}"
        );
    }

    // rebuildMemory's options are the memory bounds flat, plus their own.
    let options = json!({"maxTurns": 5, "compactionHint": {"newestInTurn": 1}, "model": model});
    let own = interface("RebuildMemoryOptions");
    assert_eq!(own, ["compactionHint", "model"].map(String::from).into());
    assert!(keys(&options).is_subset(&own.union(&interface("MemoryOptions")).cloned().collect()));
    portal_wasm::rebuild_memory(js(&transcript()), Some(js(&options))).expect("taken");
    let message = message(
        portal_wasm::rebuild_memory(js(&transcript()), Some(js(&json!({"zzz": 1}))))
            .expect_err("zzz is refused"),
    );
    assert_eq!(expected_fields(&message), interface("MemoryOptions"));
}

/// Transcripts with a call and its answer, and ones whose memory works around every oddity
/// `MemoryDiagnostic` documents but one (`pictureForBlindModel`, which `turn_with_picture`
/// brings), as (transcript, hint).
fn odd_transcripts() -> Vec<(Value, Value)> {
    let text =
        |role: &str, text: &str| json!({"role": role, "blocks": [{"type": "text", "text": text}]});
    let chat = |i: usize| {
        json!({"index": i, "status": "completed", "messages": [
            text("user", &format!("q{i}")), text("assistant", &format!("a{i}"))
        ]})
    };
    let compaction = |kept: u32| {
        json!({"role": "assistant", "blocks": [
            {"type": "compaction", "summary": "S", "trigger": "AUTO",
             "covers": {"first": 1, "last": 1}, "kept_messages": kept},
            {"type": "text", "text": "ok"}
        ]})
    };
    // A compaction far back, looked for with a hint that misses it.
    let mut far: Vec<Value> = vec![json!({"index": 1, "status": "completed", "messages": [
        text("user", "first"), compaction(0)
    ]})];
    far.extend((2..=31).map(chat));
    // A kept tail that opens on a tool's results, and one longer than what came before.
    let tail = |kept: u32| {
        json!([
            {"index": 1, "status": "completed", "messages": [
                text("user", "q1"),
                {"role": "assistant", "blocks": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
                {"role": "tool", "blocks": [{"type": "tool_result", "call_id": "c1", "content": "r1"}]},
                text("assistant", "a1")
            ]},
            {"index": 2, "status": "completed", "messages": [text("user", "q2"), compaction(kept)]}
        ])
    };
    let mut called = tail(0);
    called.as_array_mut().expect("turns").truncate(1);
    vec![
        (json!({"version": 1, "turns": called}), json!("none")),
        (
            json!({"version": 1, "turns": far}),
            json!({"newestInTurn": 3}),
        ),
        (json!({"version": 1, "turns": tail(3)}), json!("search")),
        (json!({"version": 1, "turns": tail(40)}), json!("search")),
    ]
}

/// A running turn whose message carries a picture.
fn turn_with_picture() -> Value {
    json!({"version": 1, "turns": [{"index": 1, "status": "running", "messages": [{
        "role": "user", "blocks": [{"type": "text", "text": "Look"}],
        "attachments": [{"kind": "picture", "id": "p1", "filename": "chart.png",
            "media_type": "image/png", "width": 800, "height": 600}]
    }]}]})
}

/// Checks a `PromptEntry` and its parts against their types, noting the part types seen.
fn check_entry(entry: &Value, seen: &mut BTreeSet<String>) {
    assert_eq!(keys(entry), interface("PromptEntry"), "{entry}");
    let parts = union("PromptPart", "type");
    for part in entry["parts"].as_array().expect("parts") {
        let tag = part["type"].as_str().expect("a type");
        let mut found = keys(part);
        // The one optional field of an output: an answer's `pictures`, there only when the tool
        // answered with pictures the model is shown (the blind model here is shown none).
        if tag == "answer" {
            assert!(found.insert("pictures".into()), "{part}");
        }
        assert_eq!(found, variant(&parts, tag), "{part}");
        seen.insert(tag.to_string());
    }
}

// Every object the package returns carries the fields its type documents, no more and no fewer,
// for every part and diagnostic kind.
#[wasm_bindgen_test]
fn outputs_give_exactly_the_documented_fields() {
    let mut parts_seen = BTreeSet::new();
    let mut kinds_seen = BTreeSet::new();
    let memory_diagnostics = union("MemoryDiagnostic", "kind");
    let mut check_diagnostics = |diagnostics: &Value, documented: &[(String, BTreeSet<String>)]| {
        for diagnostic in diagnostics.as_array().expect("diagnostics") {
            let kind = diagnostic["kind"].as_str().expect("a kind");
            assert_eq!(keys(diagnostic), variant(documented, kind), "{diagnostic}");
            kinds_seen.insert(kind.to_string());
        }
    };

    // rebuildMemory: calls, answers, a summary and the oddities.
    let mut odd = odd_transcripts();
    odd.push((turn_with_picture(), json!("search")));
    for (transcript, hint) in odd {
        let options = json!({"compactionHint": hint, "maxTurns": 20, "model": {
            "id": "blind", "provider": "openai", "contextWindow": 8_000, "maxOutputTokens": 1_000,
            "canReason": false, "canSee": false
        }});
        let memory = json_of(
            &portal_wasm::rebuild_memory(js(&transcript), Some(js(&options))).expect("rebuilds"),
        );
        assert_eq!(keys(&memory), interface("ShortTermMemory"));
        for entry in memory["entries"].as_array().expect("entries") {
            check_entry(entry, &mut parts_seen);
        }
        if !memory["summary"].is_null() {
            assert_eq!(keys(&memory["summary"]), interface("ReplayedSummary"));
            assert_eq!(
                keys(&memory["summary"]["covers"]),
                ["first", "last"].map(String::from).into()
            );
        }
        check_diagnostics(&memory["diagnostics"], &memory_diagnostics);
    }

    // buildPrompt, neutral: the layers, a picture part, and a tool whose name is the portal's.
    let mut request = every_field();
    request["format"] = json!("neutral");
    request["agentTools"][0]["name"] = json!("load_skill");
    let built = json_of(&portal_wasm::build_prompt(js(&request)).expect("builds"));
    let mut base = interface("BuiltPromptBase");
    base.extend(["format", "body"].map(String::from));
    assert_eq!(keys(&built), base);
    let body = &built["body"];
    assert_eq!(keys(body), interface("NeutralPrompt"));
    for layer in body["layers"].as_array().expect("layers") {
        assert_eq!(keys(layer), interface("SystemLayer"));
    }
    for entry in body["entries"].as_array().expect("entries") {
        check_entry(entry, &mut parts_seen);
    }
    for tool in body["tools"].as_array().expect("tools") {
        assert_eq!(keys(tool), interface("ToolDefinition"));
    }
    let mut prompt_diagnostics = union("PromptDiagnostic", "kind");
    prompt_diagnostics.extend(memory_diagnostics.iter().cloned());
    check_diagnostics(&built["diagnostics"], &prompt_diagnostics);

    let documented = |union: &[(String, BTreeSet<String>)]| -> BTreeSet<String> {
        union.iter().map(|(tag, _)| tag.clone()).collect()
    };
    assert_eq!(parts_seen, documented(&union("PromptPart", "type")));
    assert_eq!(kinds_seen, documented(&prompt_diagnostics));

    // parseCommand: both kinds.
    let commands = union("ParsedCommand", "kind");
    for text in ["/a go", "/compact keep figures"] {
        let parsed = json_of(&portal_wasm::parse_command(text).expect("parses"));
        let kind = parsed["kind"].as_str().expect("a kind");
        assert_eq!(keys(&parsed), variant(&commands, kind), "{parsed}");
    }
}

/// Checks markdown blocks against their types, noting the block and inline kinds seen.
fn check_blocks(blocks: &Value, seen: &mut BTreeSet<String>) {
    let documented = union("MarkdownBlock", "kind");
    for block in blocks.as_array().expect("blocks") {
        let kind = block["kind"].as_str().expect("a kind");
        assert_eq!(keys(block), variant(&documented, kind), "{block}");
        seen.insert(format!("block {kind}"));
        match kind {
            "paragraph" | "heading" => check_inlines(&block["content"], seen),
            "quote" => check_blocks(&block["blocks"], seen),
            "list" => {
                for item in block["items"].as_array().expect("items") {
                    assert_eq!(keys(item), interface("MarkdownListItem"), "{item}");
                    check_blocks(&item["blocks"], seen);
                }
            }
            "code" | "html" => {
                for text in block["content"].as_array().expect("texts") {
                    assert_eq!(keys(text), interface("MarkdownText"), "{text}");
                    assert_eq!(keys(&text["source"]), interface("SourceRange"));
                }
            }
            "table" => {
                let head = block["head"].as_array().expect("a head");
                let rows = block["rows"].as_array().expect("rows");
                for cell in head
                    .iter()
                    .chain(rows.iter().flat_map(|row| row.as_array().expect("a row")))
                {
                    check_inlines(cell, seen);
                }
            }
            _ => {}
        }
    }
}

fn check_inlines(inlines: &Value, seen: &mut BTreeSet<String>) {
    let documented = union("MarkdownInline", "kind");
    for inline in inlines.as_array().expect("inlines") {
        let kind = inline["kind"].as_str().expect("a kind");
        assert_eq!(keys(inline), variant(&documented, kind), "{inline}");
        seen.insert(format!("inline {kind}"));
        if let Some(source) = inline.get("source") {
            assert_eq!(keys(source), interface("SourceRange"));
        }
        if let Some(content) = inline.get("content") {
            check_inlines(content, seen);
        }
    }
}

// The markdown tree and the streaming updates carry the fields their types document, for every
// block and inline kind.
#[wasm_bindgen_test]
fn markdown_gives_exactly_the_documented_fields() {
    let reply = "# Title\n\nPlain *em* **strong** ~~gone~~ `code` $x$ [link](https://a.b) \
                 ![alt](https://a.b/p.png)  \nnext\nline\n\n> quoted\n\n1. one\n- [x] task\n\n\
                 | a |\n|---|\n| 1 |\n\n---\n\n```\ncode\n```\n\n<div>\n";
    let mut seen = BTreeSet::new();
    check_blocks(
        &json_of(&portal_wasm::render_markdown(reply).expect("renders")),
        &mut seen,
    );
    let documented: BTreeSet<String> = union("MarkdownBlock", "kind")
        .into_iter()
        .map(|(kind, _)| format!("block {kind}"))
        .chain(
            union("MarkdownInline", "kind")
                .into_iter()
                .map(|(kind, _)| format!("inline {kind}")),
        )
        .collect();
    assert_eq!(seen, documented);

    let mut markdown = portal_wasm::StreamingMarkdown::new();
    for update in [markdown.push(reply), markdown.finish()] {
        let update = json_of(&update.expect("an update"));
        assert_eq!(keys(&update), interface("MarkdownUpdate"));
    }
    check_blocks(&json_of(&markdown.blocks(None).expect("blocks")), &mut seen);
    check_blocks(
        &json!([json_of(&markdown.block(0).expect("a block"))]),
        &mut BTreeSet::new(),
    );
}
