//! Validation of the shared transcript fixtures (rules B1–B4). The WebAssembly binding runs the
//! same fixtures against the same golden verdicts in headless Chromium.

use crate::fixtures;

use expect_test::expect_file;
use portal_core::block::ToolPicture;
use portal_core::{
    Block, Invariant, Role, TranscriptError, TurnStatus, parse_transcript, transcript::Transcript,
};

/// One line per fixture: its name and what `parse_transcript` says of it.
fn verdicts() -> String {
    fixtures::TRANSCRIPTS
        .iter()
        .map(|(name, json)| match parse_transcript(json) {
            Ok(_) => format!("{name}: valid\n"),
            Err(e) => format!("{name}: {e}\n"),
        })
        .collect()
}

// B3, B4: every fixture gets the verdict recorded in the golden file, one per invariant at least.
#[test]
fn b4_fixture_verdicts_match_golden() {
    expect_file!["../../../tests/golden/transcripts/verdicts.txt"].assert_eq(&verdicts());
}

#[test]
fn every_fixture_file_is_listed() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/transcripts");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .expect("fixture folder exists")
        .map(|e| {
            let name = e.expect("readable entry").file_name();
            name.to_string_lossy().trim_end_matches(".json").to_string()
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = fixtures::TRANSCRIPTS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    listed.sort();
    assert_eq!(on_disk, listed, "regenerate tests/fixtures/transcripts.rs");
}

fn invariant_of(json: &str) -> Option<Invariant> {
    match parse_transcript(json) {
        Err(TranscriptError::Invariant { invariant, .. }) => Some(invariant),
        _ => None,
    }
}

// B4: each of the six invariants is broken by at least one fixture, and named in its error.
#[test]
fn b4_each_invariant_has_a_breaking_fixture() {
    let all = [
        Invariant::TerminalText,
        Invariant::CallsAnswered,
        Invariant::ResultHasCall,
        Invariant::UniqueCallIds,
        Invariant::KindInRole,
        Invariant::NoEmptyMessage,
    ];
    for invariant in all {
        let breaking = fixtures::TRANSCRIPTS
            .iter()
            .filter(|(_, json)| invariant_of(json) == Some(invariant))
            .count();
        assert!(breaking > 0, "no fixture breaks {invariant}");
    }
}

// B3: only a text block may be terminal in a completed turn.
#[test]
fn b3_completed_turn_must_end_on_text() {
    let (_, json) = fixtures::TRANSCRIPTS
        .iter()
        .find(|(n, _)| *n == "valid-simple-chat")
        .expect("fixture exists");
    let mut transcript = parse_transcript(json).expect("valid");
    let last = transcript.turns[0].messages.last_mut().expect("message");
    last.blocks.push(Block::Thinking {
        text: "after the answer".into(),
    });
    let err = portal_core::validate(&transcript).expect_err("thinking cannot be terminal");
    assert!(matches!(
        err,
        TranscriptError::Invariant {
            invariant: Invariant::TerminalText,
            ..
        }
    ));
    transcript.turns[0].status = TurnStatus::CutOff;
    portal_core::validate(&transcript).expect("a cut-off turn may end anywhere");
}

// B1: the seven block kinds round-trip through the transcript format unchanged.
#[test]
fn b1_seven_block_kinds_round_trip() {
    let mut seen = std::collections::HashSet::new();
    for (_, json) in fixtures::TRANSCRIPTS {
        let Ok(transcript) = parse_transcript(json) else {
            continue;
        };
        let again = serde_json::to_string(&transcript).expect("serialises");
        assert_eq!(parse_transcript(&again).expect("still valid"), transcript);
        for turn in &transcript.turns {
            for message in &turn.messages {
                seen.extend(message.blocks.iter().map(Block::kind));
            }
        }
    }
    assert_eq!(
        seen.len(),
        7,
        "valid fixtures cover all seven kinds: {seen:?}"
    );
}

// B2: a compaction block holds the summary, its trigger and the turns it covers, in an assistant
// message.
#[test]
fn b2_compaction_block_fields() {
    let (_, json) = fixtures::TRANSCRIPTS
        .iter()
        .find(|(n, _)| *n == "valid-compact-turn")
        .expect("fixture exists");
    let transcript: Transcript = parse_transcript(json).expect("valid");
    let message = &transcript.turns[1].messages[1];
    assert_eq!(message.role, Role::Assistant);
    let Block::Compaction {
        summary,
        trigger,
        covers,
        ..
    } = &message.blocks[0]
    else {
        panic!("expected a compaction block");
    };
    assert!(summary.starts_with("Turns 1–1"));
    assert_eq!(*trigger, portal_core::CompactionTrigger::Manual);
    assert_eq!((covers.first, covers.last), (1, 1));
    let moved = json.replace("\"role\": \"assistant\",\n          \"blocks\": [\n            {\n              \"type\": \"compaction\"", "\"role\": \"user\",\n          \"blocks\": [\n            {\n              \"type\": \"compaction\"");
    assert_ne!(moved, *json, "the replacement found the compaction message");
    assert_eq!(invariant_of(&moved), Some(Invariant::KindInRole));
}

// B4: hostile input gives an error, never a panic.
#[test]
fn b4_ten_megabyte_text_block_is_judged_without_panic() {
    let big = "é".repeat(5 * 1024 * 1024);
    let json = format!(
        r#"{{"version":1,"turns":[{{"index":1,"status":"completed","messages":[{{"role":"user","blocks":[{{"type":"text","text":"{big}"}}]}},{{"role":"assistant","blocks":[{{"type":"thinking","text":"{big}"}}]}}]}}]}}"#
    );
    assert!(json.len() > 20_000_000);
    assert_eq!(invariant_of(&json), Some(Invariant::TerminalText));
}

#[test]
fn b4_deeply_nested_arguments_are_an_error_not_a_crash() {
    let depth = 100_000;
    let json = format!(
        r#"{{"version":1,"turns":[{{"index":1,"status":"cut_off","messages":[{{"role":"user","blocks":[{{"type":"text","text":"x"}}]}},{{"role":"assistant","blocks":[{{"type":"tool_use","id":"c","name":"n","input":{}{}}}]}}]}}]}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert!(matches!(
        parse_transcript(&json),
        Err(TranscriptError::Json { .. })
    ));
}

#[test]
fn b4_garbage_never_panics() {
    for input in [
        "",
        "null",
        "[]",
        "{}",
        "{\"version\":1}",
        "\u{0}",
        "{\"version\":1,\"turns\":[{}]}",
    ] {
        assert!(parse_transcript(input).is_err(), "{input:?} is rejected");
    }
}

// B1: the complete example in docs/transcript-format.md is a valid transcript.
#[test]
fn b1_format_doc_example_is_valid() {
    let doc = include_str!("../../../docs/transcript-format.md");
    let start = doc.find("```json\n").expect("the doc has a JSON example") + "```json\n".len();
    let end = start + doc[start..].find("```").expect("the example ends");
    parse_transcript(&doc[start..end]).expect("the documented example is valid");
}

// B1: a tool result's pictures round-trip, and a result written before tools had pictures (no
// `pictures` field) reads as one without any and is written back without the field.
#[test]
fn b1_tool_result_pictures_round_trip_and_old_results_read_as_none() {
    let picture = ToolPicture {
        attachment_id: "att_7".into(),
        media_type: "image/png".into(),
        width: 32,
        height: 32,
    };
    for (json, pictures) in [
        (
            r#"{"type":"tool_result","call_id":"c","content":"3"}"#,
            vec![],
        ),
        (
            r#"{"type":"tool_result","call_id":"c","content":"[picture att_7: image/png, 32×32]","pictures":[{"attachment_id":"att_7","media_type":"image/png","width":32,"height":32}]}"#,
            vec![picture.clone()],
        ),
    ] {
        let block: Block = serde_json::from_str(json).expect("a tool result");
        let Block::ToolResult { pictures: read, .. } = &block else {
            panic!("{json} is a tool result");
        };
        assert_eq!(read, &pictures, "{json}");
        assert_eq!(serde_json::to_string(&block).expect("serialises"), json);
    }
    assert_eq!(picture.line(), "[picture att_7: image/png, 32×32]");
}
