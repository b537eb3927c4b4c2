//! Builders for the compaction tests: short transcripts written as turns of messages.

#![allow(dead_code)]

use portal_core::compaction::{CompactionConfig, MessagePosition};
use portal_core::tokens::EstimateCounter;
use portal_core::{Block, Message, Role, Transcript, Turn, TurnKind, TurnStatus};
use serde_json::{Value, json};

pub const COUNTER: EstimateCounter = EstimateCounter;

pub fn config() -> CompactionConfig {
    CompactionConfig::default()
}

pub fn user(text: &str) -> Message {
    Message::new(Role::User, vec![Block::text(text)])
}

pub fn say(text: &str) -> Message {
    Message::new(Role::Assistant, vec![Block::text(text)])
}

pub fn call_block(id: &str, name: &str, input: Value) -> Block {
    Block::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

/// An assistant message making one call with a `path` argument.
pub fn call(id: &str, name: &str, path: &str) -> Message {
    Message::new(
        Role::Assistant,
        vec![call_block(id, name, json!({ "path": path }))],
    )
}

/// An assistant message making several calls at once.
pub fn calls(ids: &[&str]) -> Message {
    Message::new(
        Role::Assistant,
        ids.iter()
            .map(|id| {
                call_block(
                    id,
                    "read_document",
                    json!({ "path": format!("docs/{id}.md") }),
                )
            })
            .collect(),
    )
}

pub fn result_block(id: &str, content: &str) -> Block {
    Block::ToolResult {
        call_id: id.into(),
        content: content.into(),
        is_error: false,
        pictures: Vec::new(),
    }
}

pub fn result(id: &str, content: &str) -> Message {
    Message::new(Role::Tool, vec![result_block(id, content)])
}

pub fn results(ids: &[&str]) -> Message {
    Message::new(
        Role::Tool,
        ids.iter()
            .map(|id| result_block(id, &format!("Contents of {id}.")))
            .collect(),
    )
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

pub fn done(messages: Vec<Message>) -> Turn {
    turn(TurnStatus::Completed, messages)
}

pub fn running(messages: Vec<Message>) -> Turn {
    turn(TurnStatus::Running, messages)
}

/// A transcript of these turns, numbered 1, 2, 3, …
pub fn transcript(turns: Vec<Turn>) -> Transcript {
    let mut t = Transcript::new();
    for (i, mut turn) in turns.into_iter().enumerate() {
        turn.index = i as u32 + 1;
        t.turns.push(turn);
    }
    t
}

/// A completed chat turn of a request and its answer.
pub fn exchange(request: &str, answer: &str) -> Turn {
    done(vec![user(request), say(answer)])
}

pub fn at(turn: u32, message: usize) -> Option<MessagePosition> {
    Some(MessagePosition { turn, message })
}

/// The transcript's messages in flat order.
pub fn flat(transcript: &Transcript) -> Vec<&Message> {
    transcript
        .turns
        .iter()
        .flat_map(|t| t.messages.iter())
        .collect()
}
