//! The Anthropic Messages request body (rule L3): the system text as `system`, calls as
//! `tool_use` blocks, answers as `tool_result` blocks in the next user message, pictures as
//! base64 `image` blocks (a tool's inside its result), and a `thinking` budget only for a model that can reason (rule E3).
//!
//! Roles alternate strictly: answers and the user text after them share one user message, the
//! answers first, as the API wants; a message list that would be empty or open on the assistant
//! opens with [`CONTINUES`] instead.
//!
//! The prompt keeps no thinking, so no thinking block with its signature is sent back. Anthropic
//! wants a signed thinking block at the head of the last assistant message when that message
//! makes calls and thinking is on; such a call (one that carries on after tool results) is
//! therefore made without `thinking`.
//!
//! [`cached_request`] is the body with prompt-caching marks, as the server sends it.

use serde_json::{Map, Value, json};

use crate::attachment::PictureRef;
use crate::effort::EffortConfig;
use crate::model::ModelCapabilities;
use crate::transcript::Role;

use super::entry::{Layer, Part};
use super::layers::system_pieces;
use super::neutral::Prompt;
use super::openai::arguments;
use super::pictures::{PictureSource, unavailable};

/// The user message that opens a list whose first entry is the assistant's.
pub const CONTINUES: &str = "[The conversation continues from earlier turns.]";

/// Anthropic's smallest thinking budget; a model whose output limit leaves less gets none.
pub const MIN_THINKING_BUDGET: u32 = 1_024;

/// The request body for `prompt` on `model`.
pub fn request(
    prompt: &Prompt,
    model: &ModelCapabilities,
    effort: &EffortConfig,
    pictures: &dyn PictureSource,
) -> Value {
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for entry in &prompt.entries {
        let side = match entry.role {
            Role::Assistant => "assistant",
            Role::User | Role::Tool => "user",
        };
        let blocks: Vec<Value> = entry
            .parts
            .iter()
            .map(|part| match part {
                Part::Text { text } => json!({"type": "text", "text": text}),
                Part::Picture { picture } => image(picture, pictures),
                Part::Call(call) => json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": arguments(&call.arguments),
                }),
                Part::Answer(answer) => {
                    // A tool's pictures go inside its result, after its text.
                    let content = if answer.pictures.is_empty() {
                        json!(answer.content)
                    } else {
                        let text = json!({"type": "text", "text": answer.content});
                        let images = answer.pictures.iter().map(|p| image(p, pictures));
                        Value::Array(std::iter::once(text).chain(images).collect())
                    };
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": answer.call_id,
                        "content": content,
                    });
                    if answer.is_error {
                        block["is_error"] = json!(true);
                    }
                    block
                }
            })
            .collect();
        match messages.last_mut() {
            Some((last, content)) if *last == side => content.extend(blocks),
            _ => messages.push((side, blocks)),
        }
    }
    if messages
        .first()
        .is_none_or(|(side, _)| *side == "assistant")
    {
        messages.insert(
            0,
            ("user", vec![json!({"type": "text", "text": CONTINUES})]),
        );
    }
    // The call carries on after calls when the last assistant message makes calls and only
    // their results follow it; a new message from the person starts afresh.
    let carries_on_after_calls = messages
        .iter()
        .rposition(|(side, _)| *side == "assistant")
        .is_some_and(|at| {
            messages[at]
                .1
                .iter()
                .any(|block| block["type"] == "tool_use")
                && messages[at + 1..]
                    .iter()
                    .all(|(_, content)| content.iter().all(|block| block["type"] == "tool_result"))
        });
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("max_tokens".into(), json!(model.max_output_tokens));
    body.insert("system".into(), json!(prompt.system_text()));
    body.insert("messages".into(), Value::Array(messages));
    if !prompt.tools.is_empty() {
        let tools: Vec<Value> = prompt
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(level) = prompt
        .effort
        .filter(|_| model.can_reason && !carries_on_after_calls)
    {
        let budget = effort
            .budget(level)
            .min(model.max_output_tokens.saturating_sub(1));
        if budget >= MIN_THINKING_BUDGET {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
    }
    Value::Object(body)
}

/// A picture as an `image` block, or the line saying it could not be loaded.
fn image(picture: &PictureRef, pictures: &dyn PictureSource) -> Value {
    match pictures.picture(picture) {
        Some(encoded) => json!({
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": encoded.media_type,
                "data": encoded.base64,
            }
        }),
        None => json!({"type": "text", "text": unavailable(picture)}),
    }
}

/// What a prompt-caching mark asks for: Anthropic's default five-minute cache.
const CACHE_MARK: &str = "ephemeral";

/// The request body for `prompt` on `model` with prompt-caching marks, which the server sends.
/// A mark caches everything up to it (tools, system, messages, in that order), so a later call
/// that starts the same way reads that part from the cache:
///
/// - after the conversation's own layers (floor, author instructions and the project's), when
///   selected skills follow, so a message choosing other skills still reads them from the cache;
/// - at the end of the system text (the layers the turn keeps);
/// - on the last block of the last message, so the turn's next call, after its tool results,
///   reads the conversation so far from the cache.
///
/// The marks change nothing the model reads: the system text comes as text blocks that join to
/// [`Prompt::system_text`], and the messages are [`request`]'s.
pub fn cached_request(
    prompt: &Prompt,
    model: &ModelCapabilities,
    effort: &EffortConfig,
    pictures: &dyn PictureSource,
) -> Value {
    let mut body = request(prompt, model, effort, pictures);
    let mut blocks = Vec::new();
    let mut text = String::new();
    // The first piece opens the text; piece `i` after it is layer `i - 1`.
    for (i, piece) in system_pieces(&prompt.layers).into_iter().enumerate() {
        let layer = i.checked_sub(1).and_then(|at| prompt.layers.get(at));
        if layer.is_some_and(|layer| layer.layer == Layer::Skills) {
            blocks.push(cached_text(std::mem::take(&mut text)));
        }
        text.push_str(&piece);
    }
    blocks.push(cached_text(text));
    body["system"] = Value::Array(blocks);
    let last_block = body["messages"]
        .as_array_mut()
        .and_then(|messages| messages.last_mut())
        .and_then(|message| message["content"].as_array_mut())
        .and_then(|content| content.last_mut());
    if let Some(block) = last_block {
        block["cache_control"] = json!({"type": CACHE_MARK});
    }
    body
}

fn cached_text(text: String) -> Value {
    json!({"type": "text", "text": text, "cache_control": {"type": CACHE_MARK}})
}
