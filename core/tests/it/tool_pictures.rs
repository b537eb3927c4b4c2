//! Pictures a tool answered with, handed to a model that can see as attached pictures are:
//! reduced (rule A4), counted, words for a model that cannot see (A5), and within the resend
//! budget of picture-bearing messages (A8). Issue 48.

use std::collections::HashMap;

use portal_core::attachment::AttachmentConfig;
use portal_core::block::ToolPicture;
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::{CompactionHint, MemoryConfig, rebuild};
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::prompt::inspect::inspect;
use portal_core::prompt::{
    EncodedPicture, Entry, NoPictures, Part, Prompt, PromptConfig, PromptInput, anthropic,
    assemble, check_pairing, openai,
};
use portal_core::tokens::{CALL_OVERHEAD, EstimateCounter, block_tokens};
use portal_core::{Block, Transcript, Turn, TurnStatus};
use serde_json::json;

use crate::prompt_support::*;

fn tool_picture(id: &str, width: u32, height: u32) -> ToolPicture {
    ToolPicture {
        attachment_id: id.into(),
        media_type: "image/png".into(),
        width,
        height,
    }
}

/// A result whose text names its picture where it came, as the host writes it.
fn result_with(call_id: &str, picture: ToolPicture) -> Block {
    Block::ToolResult {
        call_id: call_id.into(),
        content: format!("A chart.\n{}", picture.line()),
        is_error: false,
        pictures: vec![picture],
    }
}

/// A turn whose one call `call_id` answered with `picture`; completed, or running with the
/// result in.
fn turn_with_picture(status: TurnStatus, call_id: &str, picture: ToolPicture) -> Turn {
    let mut messages = vec![
        user("draw it"),
        assistant(vec![call(call_id, "draw", json!({}))]),
        tool(vec![result_with(call_id, picture)]),
    ];
    if status == TurnStatus::Completed {
        messages.push(assistant(vec![text("Drawn.")]));
    }
    turn(status, messages)
}

/// The pictures each answer carries, by call: (call id, attachment id, width, height, reduced).
fn answer_pictures(entries: &[Entry]) -> Vec<(String, String, u32, u32, bool)> {
    entries
        .iter()
        .flat_map(|e| e.answers())
        .flat_map(|a| {
            a.pictures.iter().map(|p| {
                (
                    a.call_id.clone(),
                    p.attachment_id.clone(),
                    p.width,
                    p.height,
                    p.reduced,
                )
            })
        })
        .collect()
}

fn prompt(transcript: &Transcript, model: &ModelCapabilities) -> Prompt {
    assemble(
        &PromptInput {
            transcript,
            compaction_hint: CompactionHint::NoCompaction,
            model,
            instructions: "",
            project_instructions: "",
            selected_skills: &[],
            catalogue: &[],
            agent_tools: &[],
            effort: Effort::Low,
        },
        &PromptConfig::default(),
    )
    .prompt
}

fn encoded(id: &str) -> HashMap<String, EncodedPicture> {
    HashMap::from([(
        id.to_string(),
        EncodedPicture {
            media_type: "image/png".into(),
            base64: "iVBORw0KGgo=".into(),
        },
    )])
}

#[test]
fn a4_a_tools_picture_goes_to_a_seeing_model_in_its_answer_reduced() {
    let t = transcript(vec![turn_with_picture(
        TurnStatus::Running,
        "c1",
        tool_picture("shot", 4_032, 3_024),
    )]);
    let prompt = prompt(&t, &model());
    let [(call, id, w, h, reduced)] = &answer_pictures(&prompt.entries)[..] else {
        panic!("one picture in the answer");
    };
    assert_eq!((call.as_str(), id.as_str(), *reduced), ("c1", "shot", true));
    assert!(*w <= 1_568 && u64::from(*w) * u64::from(*h) <= 1_150_000);
    // The host encodes what the prompt sends: the tool's picture is among them.
    let sent: Vec<&str> = prompt
        .pictures()
        .map(|p| p.attachment_id.as_str())
        .collect();
    assert_eq!(sent, ["shot"]);
    assert!(
        answer(&prompt.entries, "c1").contains("[picture shot: image/png, 4032×3024]"),
        "the text still names it where it came"
    );
}

#[test]
fn a5_a_model_that_cannot_see_gets_words_for_a_tools_picture() {
    let t = transcript(vec![turn_with_picture(
        TurnStatus::Running,
        "c1",
        tool_picture("shot", 64, 64),
    )]);
    let prompt = prompt(&t, &blind_model());
    assert!(answer_pictures(&prompt.entries).is_empty());
    assert_eq!(prompt.pictures().count(), 0);
    assert!(answer(&prompt.entries, "c1").ends_with(
        "<picture id=\"shot\">This picture is not shown: the model cannot see pictures.</picture>"
    ));
}

#[test]
fn a8_tool_pictures_share_the_resend_budget_with_attached_pictures_newest_first() {
    let t = transcript(vec![
        turn(
            TurnStatus::Completed,
            vec![
                user_with("a photo", vec![picture("attached", 100, 100)]),
                assistant(vec![text("Nice.")]),
            ],
        ),
        turn_with_picture(TurnStatus::Completed, "c2", tool_picture("older", 50, 50)),
        turn_with_picture(TurnStatus::Completed, "c3", tool_picture("newest", 50, 50)),
        chat("thanks", "You are welcome."),
    ]);
    let one = MemoryConfig {
        attachments: AttachmentConfig {
            picture_resend_messages: 1,
            ..AttachmentConfig::default()
        },
        ..MemoryConfig::default()
    };
    let m = rebuild(&t, CompactionHint::Search, &model(), &one);
    let shown: Vec<String> = answer_pictures(&m.entries)
        .into_iter()
        .map(|p| p.1)
        .collect();
    assert_eq!(shown, ["newest"]);
    assert!(answer(&m.entries, "c2").ends_with(
        "<picture id=\"older\">This picture was shown in an earlier turn and is no longer sent.</picture>"
    ));
    assert!(all_text(&m.entries).contains(
        "<picture id=\"attached\" name=\"attached.jpg\">This picture was shown in an earlier turn and is no longer attached.</picture>"
    ));

    // A turn far enough back keeps only its results' outcomes (rule M7): no picture, no line,
    // and no share of the budget, which the attached picture then gets.
    let near = MemoryConfig {
        output_turns: 1,
        ..one
    };
    let m = rebuild(&t, CompactionHint::Search, &model(), &near);
    assert!(answer_pictures(&m.entries).is_empty());
    assert_eq!(answer(&m.entries, "c3"), "ok [ref:c3]");
    let attached: Vec<&str> = m
        .entries
        .iter()
        .flat_map(|e| &e.parts)
        .filter_map(|p| match p {
            Part::Picture { picture } => Some(picture.attachment_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(attached, ["attached"]);
}

#[test]
fn a_tools_picture_is_counted_in_its_result_and_in_the_prompt() {
    let picture = tool_picture("shot", 1_000, 750);
    let with = result_with("c1", picture.clone());
    let without = Block::ToolResult {
        call_id: "c1".into(),
        content: format!("A chart.\n{}", picture.line()),
        is_error: false,
        pictures: Vec::new(),
    };
    let counter = EstimateCounter;
    assert_eq!(
        block_tokens(&counter, &with) - block_tokens(&counter, &without),
        1_000
    );
    assert!(block_tokens(&counter, &without) > CALL_OVERHEAD);

    let t = transcript(vec![turn_with_picture(
        TurnStatus::Running,
        "c1",
        tool_picture("shot", 1_000, 750),
    )]);
    let seeing = prompt(&t, &model());
    let blind = prompt(&t, &blind_model());
    let tokens = |p: &Prompt| inspect(p, &EstimateCounter, false).total_tokens;
    assert!(
        tokens(&seeing) >= tokens(&blind) + 900,
        "the picture is counted"
    );
}

#[test]
fn openai_shows_a_tools_pictures_in_a_user_message_after_the_tool_messages() {
    let t = transcript(vec![turn_with_picture(
        TurnStatus::Running,
        "c1",
        tool_picture("shot", 64, 64),
    )]);
    let model = ModelCapabilities {
        provider: Provider::OpenAi,
        ..model()
    };
    let body = openai::request(&prompt(&t, &model), &model, &encoded("shot"));
    check_pairing(Provider::OpenAi, &body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 2..];
    assert_eq!(last[0]["role"], "tool");
    assert_eq!(
        last[1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "[The pictures call c1 answered with:]"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ]})
    );
    let unloaded = openai::request(&prompt(&t, &model), &model, &NoPictures);
    check_pairing(Provider::OpenAi, &unloaded).unwrap();
    let last = unloaded["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["content"][1],
        json!({"type": "text", "text": "[The picture shot could not be loaded.]"})
    );
}

#[test]
fn anthropic_shows_a_tools_pictures_inside_its_result() {
    let t = transcript(vec![turn_with_picture(
        TurnStatus::Running,
        "c1",
        tool_picture("shot", 64, 64),
    )]);
    let body = anthropic::request(
        &prompt(&t, &model()),
        &model(),
        &EffortConfig::default(),
        &encoded("shot"),
    );
    check_pairing(Provider::Anthropic, &body).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    let result = &last["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("A chart.")
    );
    assert!(
        body.get("thinking").is_none(),
        "a call carrying on after its results still goes without thinking"
    );
}
