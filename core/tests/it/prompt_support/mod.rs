//! Builders for the prompt-stack tests: transcripts, models and fixtures in a few words.
#![allow(dead_code)]

use portal_core::attachment::{Attachment, Document, Picture, ReadingStatus};
use portal_core::memory::{CompactionHint, Memory, MemoryConfig, rebuild};
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::prompt::{Entry, Part};
use portal_core::{
    Block, CompactionTrigger, Message, Role, Transcript, Turn, TurnKind, TurnStatus, TurnsCovered,
    validate,
};
use serde_json::{Value, json};

pub fn text(s: &str) -> Block {
    Block::text(s)
}

pub fn thinking(s: &str) -> Block {
    Block::Thinking { text: s.into() }
}

pub fn call(id: &str, name: &str, input: Value) -> Block {
    Block::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

pub fn result(id: &str, content: &str) -> Block {
    Block::ToolResult {
        call_id: id.into(),
        content: content.into(),
        is_error: false,
        pictures: Vec::new(),
    }
}

pub fn failure(id: &str, content: &str) -> Block {
    Block::ToolResult {
        call_id: id.into(),
        content: content.into(),
        is_error: true,
        pictures: Vec::new(),
    }
}

pub fn compaction(summary: &str, last: u32, kept_messages: u32) -> Block {
    Block::Compaction {
        summary: summary.into(),
        trigger: CompactionTrigger::Auto,
        covers: TurnsCovered { first: 1, last },
        kept_messages,
    }
}

pub fn user(s: &str) -> Message {
    Message::new(Role::User, vec![text(s)])
}

pub fn user_with(s: &str, attachments: Vec<Attachment>) -> Message {
    Message {
        role: Role::User,
        blocks: vec![text(s)],
        attachments,
    }
}

pub fn assistant(blocks: Vec<Block>) -> Message {
    Message::new(Role::Assistant, blocks)
}

pub fn tool(blocks: Vec<Block>) -> Message {
    Message::new(Role::Tool, blocks)
}

pub fn turn(status: TurnStatus, messages: Vec<Message>) -> Turn {
    Turn {
        index: 0,
        kind: TurnKind::Chat,
        status,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages,
    }
}

/// A completed turn: the question and a plain answer.
pub fn chat(question: &str, answer: &str) -> Turn {
    turn(
        TurnStatus::Completed,
        vec![user(question), assistant(vec![text(answer)])],
    )
}

/// A completed turn with one call `id` whose result is `content`.
pub fn with_call(question: &str, id: &str, content: &str) -> Turn {
    turn(
        TurnStatus::Completed,
        vec![
            user(question),
            assistant(vec![
                text("Let me look."),
                call(id, "search", json!({"query": question})),
            ]),
            tool(vec![result(id, content)]),
            assistant(vec![text(&format!("Answer to {question}."))]),
        ],
    )
}

/// The turns numbered and checked by `validate`.
pub fn transcript(mut turns: Vec<Turn>) -> Transcript {
    for (i, turn) in turns.iter_mut().enumerate() {
        turn.index = i as u32 + 1;
    }
    let transcript = Transcript {
        version: portal_core::transcript::FORMAT_VERSION,
        turns,
    };
    if let Err(e) = validate(&transcript) {
        panic!("test transcript is invalid: {e}");
    }
    transcript
}

pub fn model() -> ModelCapabilities {
    ModelCapabilities {
        id: "test-model".into(),
        provider: Provider::Anthropic,
        context_window: 200_000,
        max_output_tokens: 32_000,
        can_reason: true,
        can_see: true,
        largest_picture: Some(PictureLimit {
            long_edge: 1_568,
            pixels: Some(1_150_000),
        }),
    }
}

pub fn blind_model() -> ModelCapabilities {
    ModelCapabilities {
        id: "blind-model".into(),
        can_see: false,
        can_reason: false,
        largest_picture: None,
        ..model()
    }
}

pub fn memory(transcript: &Transcript) -> Memory {
    rebuild(
        transcript,
        CompactionHint::Search,
        &model(),
        &MemoryConfig::default(),
    )
}

pub fn document(id: &str, text_chars: usize) -> Attachment {
    Attachment::Document(Document {
        id: id.into(),
        filename: format!("{id}.pdf"),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Finished,
        pages_read: 2,
        pages_total: 2,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: vec!["Introduction".into(), "Findings".into()],
        text: Some("d".repeat(text_chars)),
    })
}

pub fn picture(id: &str, width: u32, height: u32) -> Attachment {
    Attachment::Picture(Picture {
        id: id.into(),
        filename: format!("{id}.jpg"),
        media_type: "image/jpeg".into(),
        width,
        height,
    })
}

/// Every text part of the entries, joined by newlines.
pub fn all_text(entries: &[Entry]) -> String {
    entries
        .iter()
        .flat_map(|e| &e.parts)
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The ids of the calls the entries make, in order.
pub fn call_ids(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .flat_map(|e| e.calls())
        .map(|c| c.id.clone())
        .collect()
}

/// The answer content for `call_id`.
pub fn answer<'a>(entries: &'a [Entry], call_id: &str) -> &'a str {
    entries
        .iter()
        .flat_map(|e| e.answers())
        .find(|a| a.call_id == call_id)
        .map(|a| a.content.as_str())
        .unwrap_or_else(|| panic!("no answer for {call_id}"))
}

/// A request body with its prompt-caching marks taken out and its system blocks joined.
pub fn unmarked(mut body: Value) -> Value {
    let system: String = body["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    body["system"] = json!(system);
    for message in body["messages"].as_array_mut().unwrap() {
        for block in message["content"].as_array_mut().unwrap() {
            block.as_object_mut().unwrap().remove("cache_control");
        }
    }
    body
}
