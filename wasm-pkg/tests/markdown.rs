//! `renderMarkdown` and `StreamingMarkdown` in the browser: the typed tree, updates while a reply
//! streams, source ranges in UTF-16 code units, and hostile input.
#![cfg(target_arch = "wasm32")]

use portal_wasm::{StreamingMarkdown, render_markdown};
use serde_json::{Value, json};
use unicode_segmentation::UnicodeSegmentation;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A returned value as JavaScript sees it, through `JSON.stringify`.
fn json_of(value: Result<JsValue, JsValue>) -> Value {
    let value = value.expect("a value, not an error");
    let text = String::from(js_sys::JSON::stringify(&value).expect("plain data"));
    serde_json::from_str(&text).expect("JSON")
}

/// Every leaf with a source range in `tree`: (its text, its range).
fn leaves(tree: &Value, found: &mut Vec<(String, usize, usize)>) {
    match tree {
        Value::Array(items) => items.iter().for_each(|item| leaves(item, found)),
        Value::Object(fields) => {
            if let (Some(text), Some(source)) = (fields.get("text"), fields.get("source")) {
                let at = |end: &str| source[end].as_u64().expect("an offset") as usize;
                let text = text.as_str().expect("text").to_string();
                found.push((text, at("start"), at("end")));
            }
            fields.values().for_each(|value| leaves(value, found));
        }
        _ => {}
    }
}

/// Checks that every leaf of `tree` indexes `reply` as JavaScript would: its source range, in
/// UTF-16 code units, is its text, its text in backticks or dollar signs (code and math), or the
/// character reference it draws.
fn assert_utf16_ranges(tree: &Value, reply: &str) {
    let units: Vec<u16> = reply.encode_utf16().collect();
    let mut found = Vec::new();
    leaves(tree, &mut found);
    assert!(!found.is_empty(), "leaves in {tree}");
    for (text, start, end) in found {
        let source = String::from_utf16(&units[start..end]).expect("whole characters");
        assert!(
            source == text
                || source.trim_matches(['`', '$']).trim() == text
                || (source.starts_with('&') && source.ends_with(';')),
            "{start}..{end} of {reply:?} is {source:?}, not {text:?}"
        );
    }
}

#[wasm_bindgen_test]
fn a_document_renders_to_the_typed_tree() {
    let reply = "# Plan\n\nSome *emphasis*, **strong** and `code`.\n\n\
                 1. first\n2. [docs](https://example.com/docs)\n\n\
                 - [x] done\n- [ ] todo\n\n\
                 | a | b |\n|:--|--:|\n| 1 | 2 |\n\n\
                 > quoted\n\n---\n\n```rust\nfn main() {}\n```\n";
    let tree = json_of(render_markdown(reply));
    // An ASCII reply's UTF-16 offsets are its byte offsets: the tree is core's, serialised.
    let core = serde_json::to_value(portal_core::markdown::parse(reply)).expect("core's tree");
    assert_eq!(tree, core);

    let kinds: Vec<&str> = tree
        .as_array()
        .expect("blocks")
        .iter()
        .map(|block| block["kind"].as_str().expect("a kind"))
        .collect();
    assert_eq!(
        kinds,
        [
            "heading",
            "paragraph",
            "list",
            "list",
            "table",
            "quote",
            "rule",
            "code"
        ]
    );
    assert_eq!(
        tree[0],
        json!({"kind": "heading", "level": 1, "content": [
            {"kind": "text", "text": "Plan", "source": {"start": 2, "end": 6}}
        ]})
    );
    let paragraph = &tree[1]["content"];
    assert_eq!(paragraph[1]["kind"], "emphasis");
    assert_eq!(paragraph[3]["kind"], "strong");
    assert_eq!(
        paragraph[5],
        json!({"kind": "code", "text": "code", "source": {"start": 40, "end": 46}})
    );
    assert_eq!(tree[2]["start"], 1);
    assert_eq!(tree[2]["tight"], true);
    let link = &tree[2]["items"][1]["blocks"][0]["content"][0];
    assert_eq!(link["kind"], "link");
    assert_eq!(link["href"], "https://example.com/docs");
    assert_eq!(link["pending"], false);
    assert_eq!(link["image"], false);
    assert_eq!(tree[3]["start"], Value::Null);
    assert_eq!(tree[3]["items"][0]["task"], true);
    assert_eq!(tree[3]["items"][1]["task"], false);
    assert_eq!(tree[4]["alignments"], json!(["left", "right"]));
    assert_eq!(tree[4]["rows"][0][1][0]["text"], "2");
    assert_eq!(tree[5]["blocks"][0]["kind"], "paragraph");
    assert_eq!(tree[6], json!({"kind": "rule"}));
    assert_eq!(tree[7]["language"], "rust");
    assert_utf16_ranges(&tree, reply);
}

#[wasm_bindgen_test]
fn streaming_settles_blocks_and_reports_what_changed() {
    let mut markdown = StreamingMarkdown::new();
    let update = json_of(markdown.push("# Title\n\nThe **first"));
    assert_eq!(update, json!({"unchanged": 0, "redrawn": [], "settled": 1}));
    // The open strong run is drawn as strong, not as asterisks.
    let open = json_of(markdown.blocks(Some(1)));
    assert_eq!(open[0]["content"][1]["kind"], "strong");
    assert!(!open.to_string().contains("**"), "no raw syntax: {open}");

    let update = json_of(markdown.push(" words** go on.\n\nSee [the spec][1]"));
    assert_eq!(update, json!({"unchanged": 1, "redrawn": [], "settled": 2}));
    assert_eq!(
        json_of(markdown.blocks(None)).as_array().map(Vec::len),
        Some(3)
    );

    // Nothing revealed: nothing changed.
    let update = json_of(markdown.push(""));
    assert_eq!(update, json!({"unchanged": 3, "redrawn": [], "settled": 2}));

    // A definition arriving later turns the settled reference into a link.
    let update = json_of(markdown.push(".\n\nMore.\n\n"));
    assert_eq!(
        update["settled"], 3,
        "the reference's paragraph settled: {update}"
    );
    let update = json_of(markdown.push("[1]: https://example.com/spec\n\nDone."));
    assert_eq!(update["redrawn"], json!([2]));
    let redrawn = json_of(markdown.block(2));
    assert_eq!(redrawn["content"][1]["href"], "https://example.com/spec");
    assert_eq!(markdown.block(99).expect("a value"), JsValue::UNDEFINED);

    // Finished: the last block settles, and the blocks are the whole reply's.
    let update = json_of(markdown.finish());
    assert_eq!(update, json!({"unchanged": 4, "redrawn": [], "settled": 5}));
    let blocks = json_of(markdown.blocks(None));
    let reply = "# Title\n\nThe **first words** go on.\n\nSee [the spec][1].\n\nMore.\n\n\
                 [1]: https://example.com/spec\n\nDone.";
    assert_eq!(blocks, json_of(render_markdown(reply)));
    assert_eq!(json_of(markdown.blocks(Some(99))), json!([]));
}

#[wasm_bindgen_test]
fn ranges_are_utf16_offsets_at_every_prefix() {
    let reply = "# 東京 👨‍👩‍👧‍👦\n\n日本語の*強調*と **👋🏽 絵文字** と `コード 🎌`、$x^2$ ok\n\n\
                 - 🇯🇵 [リンク](https://例え.jp/パス) &amp; more\n\n\
                 | 列 | 🍣 |\n|---|---|\n| 寿司 | 🐟 |\n\n```\n한국어 🎉\n```\n";
    let tree = json_of(render_markdown(reply));
    assert_utf16_ranges(&tree, reply);
    let heading = &tree[0]["content"][0];
    assert_eq!(
        heading["source"],
        json!({"start": 2, "end": 2 + "東京 👨‍👩‍👧‍👦".encode_utf16().count()})
    );

    // Streamed cluster by cluster, every frame's blocks index the text pushed so far.
    let mut markdown = StreamingMarkdown::new();
    let mut pushed = String::new();
    for cluster in reply.graphemes(true) {
        pushed.push_str(cluster);
        let update = json_of(markdown.push(cluster));
        let from = update["unchanged"].as_u64().expect("an index") as u32;
        let open = json_of(markdown.blocks(Some(from)));
        let mut found = Vec::new();
        leaves(&open, &mut found);
        if !found.is_empty() {
            assert_utf16_ranges(&open, &pushed);
        }
    }
    json_of(markdown.finish());
    assert_eq!(json_of(markdown.blocks(None)), tree);
}

#[wasm_bindgen_test]
fn hostile_input_stays_text() {
    let reply = "[click](javascript:alert(1)) [ok](https://example.com) \
                 [shout](JaVaScRiPt:alert(2)) ![x](data:text/html,hi) <script>alert(3)</script>\n\n\
                 <div onclick=\"steal()\">hi</div>\n";
    let tree = json_of(render_markdown(reply));
    let content = &tree[0]["content"];
    let links: Vec<&Value> = content
        .as_array()
        .expect("inlines")
        .iter()
        .filter(|inline| inline["kind"] == "link")
        .collect();
    assert_eq!(links.len(), 4);
    assert_eq!(links[0]["href"], Value::Null);
    assert_eq!(links[0]["content"][0]["text"], "click");
    assert_eq!(links[1]["href"], "https://example.com");
    assert_eq!(links[2]["href"], Value::Null);
    assert_eq!(links[3]["href"], Value::Null);
    assert_eq!(links[3]["image"], true);
    // Inline HTML is text in its paragraph; an HTML block is plain text, never markup.
    let text: String = content
        .as_array()
        .expect("inlines")
        .iter()
        .filter(|inline| inline["kind"] == "text")
        .map(|inline| inline["text"].as_str().expect("text"))
        .collect();
    assert!(text.contains("<script>alert(3)</script>"), "{text}");
    assert_eq!(tree[1]["kind"], "html");
    let html: String = tree[1]["content"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|text| text["text"].as_str().expect("text"))
        .collect();
    assert_eq!(html, "<div onclick=\"steal()\">hi</div>\n");
    assert_utf16_ranges(&tree, reply);
}
