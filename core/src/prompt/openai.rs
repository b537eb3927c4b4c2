//! The OpenAI Chat Completions request body (rule L3): the system text as a `system` message,
//! calls as `tool_calls` on assistant messages, each answer as a `tool` message with its
//! `tool_call_id`, pictures as `image_url` data URLs (a tool's in a user message after the tool
//! messages, which carry text alone), and `reasoning_effort` only for a model
//! that can reason (rule E3).
//!
//! OpenAI has no error flag on a tool message; an error's content opens with [`ERROR_PREFIX`].

use serde_json::{Map, Value, json};

use crate::attachment::PictureRef;
use crate::model::ModelCapabilities;

use super::entry::{Entry, Part};
use super::neutral::Prompt;
use super::pictures::{PictureSource, unavailable};
use crate::transcript::Role;

/// How a failed call's answer opens, since OpenAI tool messages carry no error flag.
pub const ERROR_PREFIX: &str = "Error: ";

/// The request body for `prompt` on `model`.
pub fn request(prompt: &Prompt, model: &ModelCapabilities, pictures: &dyn PictureSource) -> Value {
    let mut messages = vec![json!({"role": "system", "content": prompt.system_text()})];
    for entry in &prompt.entries {
        match entry.role {
            Role::User => {
                messages.push(json!({"role": "user", "content": user_content(entry, pictures)}))
            }
            Role::Assistant => messages.push(assistant(entry)),
            Role::Tool => {
                for answer in entry.answers() {
                    let content = if answer.is_error {
                        format!("{ERROR_PREFIX}{}", answer.content)
                    } else {
                        answer.content.clone()
                    };
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": answer.call_id,
                        "content": content,
                    }));
                }
                if let Some(shown) = tool_pictures(entry, pictures) {
                    messages.push(json!({"role": "user", "content": shown}));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(messages));
    if !prompt.tools.is_empty() {
        let tools: Vec<Value> = prompt
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(effort) = prompt.effort.filter(|_| model.can_reason) {
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    Value::Object(body)
}

/// A user message's content: a string when it is one text, else an array of parts.
fn user_content(entry: &Entry, pictures: &dyn PictureSource) -> Value {
    if let [Part::Text { text }] = entry.parts.as_slice() {
        return json!(text);
    }
    let parts: Vec<Value> = entry
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(json!({"type": "text", "text": text})),
            Part::Picture { picture } => Some(image_url(picture, pictures)),
            Part::Call(_) | Part::Answer(_) => None,
        })
        .collect();
    Value::Array(parts)
}

/// The pictures a tool entry's answers carry, as the content of a user message after the tool
/// messages (a tool message holds text alone), each run of pictures under a line naming its call.
fn tool_pictures(entry: &Entry, pictures: &dyn PictureSource) -> Option<Value> {
    let mut parts = Vec::new();
    for answer in entry.answers().filter(|a| !a.pictures.is_empty()) {
        let call = &answer.call_id;
        parts.push(
            json!({"type": "text", "text": format!("[The pictures call {call} answered with:]")}),
        );
        parts.extend(answer.pictures.iter().map(|p| image_url(p, pictures)));
    }
    (!parts.is_empty()).then_some(Value::Array(parts))
}

/// A picture as an `image_url` part with a data URL, or the line saying it could not be loaded.
fn image_url(picture: &PictureRef, pictures: &dyn PictureSource) -> Value {
    match pictures.picture(picture) {
        Some(encoded) => json!({
            "type": "image_url",
            "image_url": {
                "url": format!("data:{};base64,{}", encoded.media_type, encoded.base64)
            }
        }),
        None => json!({"type": "text", "text": unavailable(picture)}),
    }
}

fn assistant(entry: &Entry) -> Value {
    let texts: Vec<&str> = entry
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert(
        "content".into(),
        if texts.is_empty() {
            Value::Null
        } else {
            json!(texts.join("\n\n"))
        },
    );
    let calls: Vec<Value> = entry
        .calls()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": arguments(&call.arguments).to_string(),
                }
            })
        })
        .collect();
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(message)
}

/// Call arguments as both providers take them: an object. A missing input is an empty one; any
/// other input that is not an object (arguments the model wrote that were not valid JSON, kept as
/// their text) is replayed as `{"unparsed_arguments": …}`, so the request stays valid and the
/// model still sees what it sent.
pub(crate) fn arguments(value: &Value) -> Value {
    match value {
        Value::Null => Value::Object(Map::new()),
        Value::Object(_) => value.clone(),
        other => {
            let mut wrapped = Map::new();
            wrapped.insert("unparsed_arguments".to_string(), other.clone());
            Value::Object(wrapped)
        }
    }
}
