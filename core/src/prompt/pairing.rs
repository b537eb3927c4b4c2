//! The providers' pairing rules, checked on a request body: the one checker the property test
//! and the fuzz target share.
//!
//! Both providers: every call is answered exactly once in the next message (OpenAI: the run of
//! `tool` messages right after), no answer without its call there, no empty message, call
//! arguments an object. Anthropic also wants roles alternating, opening on the user, and the
//! answers first in their message.

use std::collections::HashSet;

use serde_json::Value;
use thiserror::Error;

use crate::model::Provider;

/// A request body that breaks its provider's pairing rules.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{provider:?} request, message {message}: {problem}")]
pub struct PairingError {
    pub provider: Provider,
    /// The 0-based place of the message in `messages`.
    pub message: usize,
    pub problem: String,
}

/// Checks `body` against `provider`'s pairing rules.
pub fn check_pairing(provider: Provider, body: &Value) -> Result<(), PairingError> {
    let fail = |message: usize, problem: String| PairingError {
        provider,
        message,
        problem,
    };
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(fail(0, "the body has no messages array".into()));
    };
    match provider {
        Provider::OpenAi => openai(messages).map_err(|(m, p)| fail(m, p)),
        Provider::Anthropic => anthropic(messages).map_err(|(m, p)| fail(m, p)),
    }
}

type Failure = (usize, String);

fn openai(messages: &[Value]) -> Result<(), Failure> {
    let mut open: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "tool" && !open.is_empty() {
            return Err((
                i,
                format!("calls {open:?} have no tool message before this {role} message"),
            ));
        }
        match role {
            "system" | "user" => {
                if is_empty_content(&message["content"]) {
                    return Err((i, format!("{role} message is empty")));
                }
            }
            "assistant" => {
                let calls = message["tool_calls"].as_array();
                let has_calls = calls.is_some_and(|c| !c.is_empty());
                if !has_calls && is_empty_content(&message["content"]) {
                    return Err((i, "assistant message has neither content nor calls".into()));
                }
                let mut seen = HashSet::new();
                for call in calls.into_iter().flatten() {
                    let id = call["id"].as_str().unwrap_or_default();
                    if id.is_empty() || !seen.insert(id) {
                        return Err((i, format!("call id {id:?} is empty or repeated")));
                    }
                    let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
                    if !serde_json::from_str::<Value>(arguments).is_ok_and(|v| v.is_object()) {
                        return Err((i, format!("call {id} arguments are not a JSON object")));
                    }
                    open.push(id.to_string());
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or_default();
                let Some(at) = open.iter().position(|c| c == id) else {
                    return Err((
                        i,
                        format!(
                            "tool message answers {id:?}, which is not an open call of the assistant message before"
                        ),
                    ));
                };
                open.remove(at);
                if message["content"]
                    .as_str()
                    .is_none_or(|c| c.trim().is_empty())
                {
                    return Err((i, format!("tool message for {id} is empty")));
                }
                if !matches!(messages[i - 1]["role"].as_str(), Some("assistant" | "tool")) {
                    return Err((i, "tool message does not follow the calls".into()));
                }
            }
            other => return Err((i, format!("unknown role {other:?}"))),
        }
    }
    if !open.is_empty() {
        return Err((messages.len(), format!("calls {open:?} are never answered")));
    }
    Ok(())
}

fn anthropic(messages: &[Value]) -> Result<(), Failure> {
    if messages.is_empty() {
        return Err((0, "no messages".into()));
    }
    let mut open: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        let expected = if i % 2 == 0 { "user" } else { "assistant" };
        if role != expected {
            return Err((
                i,
                format!(
                    "{role} message where the {expected} is due; roles must alternate, opening on the user"
                ),
            ));
        }
        let Some(blocks) = message["content"].as_array().filter(|b| !b.is_empty()) else {
            return Err((i, "message has no content blocks".into()));
        };
        let mut answered_prefix = true;
        for block in blocks {
            let kind = block["type"].as_str().unwrap_or_default();
            match (role, kind) {
                (_, "text") => {
                    if block["text"].as_str().is_none_or(|t| t.trim().is_empty()) {
                        return Err((i, "empty text block".into()));
                    }
                }
                ("user", "image") => {}
                ("assistant", "tool_use") => {
                    let id = block["id"].as_str().unwrap_or_default();
                    if id.is_empty() || open.iter().any(|c| c == id) {
                        return Err((i, format!("call id {id:?} is empty or repeated")));
                    }
                    if !block["input"].is_object() {
                        return Err((i, format!("call {id} input is not an object")));
                    }
                    open.push(id.to_string());
                }
                ("user", "tool_result") => {
                    if !answered_prefix {
                        return Err((i, "a tool result comes after other content".into()));
                    }
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    let Some(at) = open.iter().position(|c| c == id) else {
                        return Err((
                            i,
                            format!(
                                "tool result answers {id:?}, which the message before does not call (or is answered twice)"
                            ),
                        ));
                    };
                    open.remove(at);
                    if !is_result_content(&block["content"]) {
                        return Err((i, format!("tool result for {id} is empty")));
                    }
                }
                (role, kind) => {
                    return Err((i, format!("{role} message may not carry a {kind:?} block")));
                }
            }
            if kind != "tool_result" {
                answered_prefix = false;
            }
        }
        if role == "user" && !open.is_empty() {
            return Err((
                i,
                format!("calls {open:?} are not answered in this message"),
            ));
        }
    }
    if !open.is_empty() {
        return Err((messages.len(), format!("calls {open:?} are never answered")));
    }
    Ok(())
}

/// A tool result's content: non-empty text, or text and image blocks opening on non-empty text.
fn is_result_content(content: &Value) -> bool {
    let text = |t: &Value| t.as_str().is_some_and(|t| !t.trim().is_empty());
    match content {
        Value::String(_) => text(content),
        Value::Array(blocks) => {
            blocks.first().is_some_and(|b| text(&b["text"]))
                && blocks.iter().all(|b| match b["type"].as_str() {
                    Some("text") => text(&b["text"]),
                    Some("image") => true,
                    _ => false,
                })
        }
        _ => false,
    }
}

fn is_empty_content(content: &Value) -> bool {
    match content {
        Value::String(s) => s.trim().is_empty(),
        Value::Array(parts) => parts.is_empty(),
        _ => true,
    }
}
