//! The shared transcript fixtures, judged in the browser exactly as core judges them natively.
#![cfg(target_arch = "wasm32")]

#[path = "../../tests/fixtures/transcripts.rs"]
mod fixtures;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn verdict(json: &str) -> String {
    match portal_wasm::validate_transcript(json) {
        Ok(_) => "valid".to_string(),
        Err(error) => {
            let error: js_sys::Error = error.dyn_into().expect("an Error is thrown");
            assert_eq!(String::from(error.name()), "TranscriptError");
            String::from(error.message())
        }
    }
}

// B4: the same verdicts as core/tests/it/transcripts.rs, from the same golden file.
#[wasm_bindgen_test]
fn b4_fixture_verdicts_match_native_golden() {
    let golden = include_str!("../../tests/golden/transcripts/verdicts.txt");
    let ours: String = fixtures::TRANSCRIPTS
        .iter()
        .map(|(name, json)| format!("{name}: {}\n", verdict(json)))
        .collect();
    assert_eq!(ours, golden);
    assert!(fixtures::TRANSCRIPTS.len() >= 12);
}

// B4: the thrown error names the invariant and where it broke.
#[wasm_bindgen_test]
fn b4_error_carries_invariant_and_location() {
    let (_, json) = fixtures::TRANSCRIPTS
        .iter()
        .find(|(n, _)| *n == "invalid-unique-call-ids")
        .expect("fixture");
    let error = portal_wasm::validate_transcript(json).expect_err("invalid");
    let get = |key: &str| js_sys::Reflect::get(&error, &JsValue::from_str(key)).expect("readable");
    assert_eq!(
        get("invariant").as_string().as_deref(),
        Some("unique-call-ids")
    );
    let location = get("location");
    let at =
        |key: &str| js_sys::Reflect::get(&location, &JsValue::from_str(key)).expect("readable");
    assert_eq!(at("turn").as_f64(), Some(2.0));
    assert_eq!(at("message").as_f64(), Some(2.0));
    assert_eq!(at("block").as_f64(), Some(1.0));
    assert!(
        get("message")
            .as_string()
            .expect("message")
            .contains("call_1")
    );
}

// B1: a valid transcript comes back as a plain object with its blocks.
#[wasm_bindgen_test]
fn b1_valid_transcript_is_a_plain_object() {
    let (_, json) = fixtures::TRANSCRIPTS
        .iter()
        .find(|(n, _)| *n == "valid-parallel-calls-out-of-order")
        .expect("fixture");
    let value = portal_wasm::validate_transcript(json).expect("valid");
    let parsed = js_sys::JSON::stringify(&value).expect("plain object");
    let back: serde_json::Value = serde_json::from_str(&String::from(parsed)).expect("json");
    let expected: serde_json::Value = serde_json::from_str(json).expect("json");
    assert_eq!(
        back["turns"][0]["messages"][1]["blocks"][2],
        expected["turns"][0]["messages"][1]["blocks"][2]
    );
}

// B4: a 10 MB text block and malformed JSON give errors, never a panic.
#[wasm_bindgen_test]
fn b4_ten_megabyte_block_and_garbage_do_not_panic() {
    let big = "é".repeat(5 * 1024 * 1024);
    let json = format!(
        r#"{{"version":1,"turns":[{{"index":1,"status":"completed","messages":[{{"role":"user","blocks":[{{"type":"text","text":"{big}"}}]}},{{"role":"assistant","blocks":[{{"type":"thinking","text":"x"}}]}}]}}]}}"#
    );
    assert!(verdict(&json).contains("invariant terminal-text"));
    for garbage in ["", "{", "[]", "{\"version\":1,\"turns\":[{}]}"] {
        assert!(verdict(garbage).contains("not valid transcript JSON"));
    }
}
