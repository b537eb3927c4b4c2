//! A chat completion request as OpenAI's wire format sends it, checked into what the portal runs
//! (docs/api.md, "What a request may carry"). Every refusal names the field it is about, so that
//! the SDKs' `BadRequestError` says where to look.

use portal_core::effort::Effort;
use serde_json::{Map, Value};

/// A request the portal can run: the agent, the new message, and how to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRequest {
    /// The agent named by `model`.
    pub agent: String,
    /// The new user message's text: the request's last message.
    pub text: String,
    /// The texts of the user messages before it, in order, as the client holds the conversation.
    pub earlier: Vec<String>,
    /// The portal conversation the request continues, if it names one.
    pub conversation: Option<String>,
    pub stream: bool,
    /// Whether a streamed answer ends with a chunk of usage (`stream_options.include_usage`).
    pub include_usage: bool,
    /// Whether the conversation is kept; `store: false` forgets it once answered.
    pub store: bool,
    /// `reasoning_effort`, which overrides the agent's effort for this message (rule E1).
    pub effort: Option<Effort>,
}

/// Why a request cannot run: a sentence, and the field it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub param: Option<String>,
    pub message: String,
}

/// Fields OpenAI defines that the portal takes and does not apply: the agent's author chose the
/// model and how it samples.
const NOT_APPLIED: &[&str] = &[
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "stop",
    "user",
    "metadata",
    "service_tier",
    "safety_identifier",
    "prompt_cache_key",
    "parallel_tool_calls",
];

/// Reads `body`, a chat completion request of at most `most_messages` messages.
pub fn parse(body: &[u8], most_messages: usize) -> Result<ChatRequest, Refusal> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        refusal(
            None,
            format!("the request body is not JSON ({e}); send a chat completion request as JSON"),
        )
    })?;
    let Value::Object(fields) = value else {
        return Err(refusal(
            None,
            "the request body must be a JSON object with `model` and `messages`".into(),
        ));
    };
    for (name, value) in &fields {
        check_field(name, value)?;
    }
    let agent = match fields.get("model") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.clone(),
        _ => {
            return Err(refusal(
                Some("model"),
                "`model` must name an agent; GET /v1/models lists those you may use".into(),
            ));
        }
    };
    let stream = flag(&fields, "stream", false)?;
    let include_usage = match fields.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(options) => stream_options(options, stream)?,
    };
    let (text, earlier) = messages(fields.get("messages"), most_messages)?;
    let conversation = match fields.get("conversation") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if !id.is_empty() => Some(id.clone()),
        Some(_) => {
            return Err(refusal(
                Some("conversation"),
                "`conversation` must be the id of a conversation an earlier answer named".into(),
            ));
        }
    };
    let store = flag(&fields, "store", true)?;
    if !store && conversation.is_some() {
        return Err(refusal(
            Some("store"),
            "`store: false` starts a conversation that is forgotten once answered; it cannot \
             continue one, so leave out `conversation` or `store`"
                .into(),
        ));
    }
    let effort = match fields.get("reasoning_effort") {
        None | Some(Value::Null) => None,
        Some(Value::String(level)) => Some(effort(level)?),
        Some(_) => return Err(effort_refusal()),
    };
    Ok(ChatRequest {
        agent,
        text,
        earlier,
        conversation,
        stream,
        include_usage,
        store,
        effort,
    })
}

/// Refuses a field the portal does not take, saying why, and one it does not know.
fn check_field(name: &str, value: &Value) -> Result<(), Refusal> {
    let refuse = |why: &str| Err(refusal(Some(name), why.to_string()));
    match name {
        "model" | "messages" | "stream" | "stream_options" | "store" | "reasoning_effort"
        | "conversation" => Ok(()),
        name if NOT_APPLIED.contains(&name) => Ok(()),
        "tools" | "tool_choice" | "functions" | "function_call" => refuse(
            "the portal runs the agent's own tools on the server and passes none of the \
             client's to the model; leave out `tools`, `tool_choice`, `functions` and \
             `function_call` (docs/api.md, \"Tools\")",
        ),
        "n" if value == &Value::from(1) => Ok(()),
        "n" => refuse("the portal writes one answer a request; leave out `n` or send 1"),
        "logprobs" if value == &Value::Bool(false) => Ok(()),
        "logprobs" | "top_logprobs" | "logit_bias" => refuse(
            "the portal does not pass log probabilities or token biases to or from the agent's \
             model; leave the field out",
        ),
        "response_format" if is_text_format(value) => Ok(()),
        "response_format" => refuse(
            "the portal answers text; ask for JSON in the message, and leave out \
             `response_format` or send {\"type\": \"text\"}",
        ),
        "modalities" if value == &serde_json::json!(["text"]) => Ok(()),
        "modalities" | "audio" | "prediction" | "web_search_options" => {
            refuse("the portal answers text only; leave the field out")
        }
        other => {
            let shown: String = other.chars().take(40).collect();
            Err(refusal(
                Some(other),
                format!(
                    "`{shown}` is not a field the portal takes; docs/api.md lists those it does"
                ),
            ))
        }
    }
}

fn is_text_format(value: &Value) -> bool {
    value == &serde_json::json!({ "type": "text" })
}

fn flag(fields: &Map<String, Value>, name: &str, default: bool) -> Result<bool, Refusal> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(on)) => Ok(*on),
        Some(_) => Err(refusal(
            Some(name),
            format!("`{name}` must be true or false"),
        )),
    }
}

fn stream_options(options: &Value, stream: bool) -> Result<bool, Refusal> {
    if !stream {
        return Err(refusal(
            Some("stream_options"),
            "`stream_options` applies to a streamed answer; send it with `stream: true`".into(),
        ));
    }
    let Value::Object(options) = options else {
        return Err(refusal(
            Some("stream_options"),
            "`stream_options` must be an object, such as {\"include_usage\": true}".into(),
        ));
    };
    if let Some(other) = options
        .keys()
        .find(|k| !["include_usage", "include_obfuscation"].contains(&k.as_str()))
    {
        let shown: String = other.chars().take(40).collect();
        return Err(refusal(
            Some("stream_options"),
            format!(
                "`stream_options.{shown}` is not an option the portal takes; it takes `include_usage`"
            ),
        ));
    }
    flag(options, "include_usage", false).map_err(|_| {
        refusal(
            Some("stream_options.include_usage"),
            "`stream_options.include_usage` must be true or false".into(),
        )
    })
}

/// The new message's text and the user texts before it. The messages alternate between the
/// user and the assistant, and end with the user's.
fn messages(messages: Option<&Value>, most: usize) -> Result<(String, Vec<String>), Refusal> {
    let Some(Value::Array(messages)) = messages else {
        return Err(refusal(
            Some("messages"),
            "`messages` must be a list of messages ending with the user's new one".into(),
        ));
    };
    if messages.len() > most {
        return Err(refusal(
            Some("messages"),
            format!(
                "the request carries {} messages, past the limit of {most}; continue the \
                 conversation with its new message alone and `conversation` (docs/api.md)",
                messages.len()
            ),
        ));
    }
    let mut users = Vec::new();
    let mut last_role = "";
    for (at, message) in messages.iter().enumerate() {
        let param = format!("messages[{at}]");
        let Value::Object(message) = message else {
            return Err(refusal(
                Some(&param),
                "each message must be an object with `role` and `content`".into(),
            ));
        };
        if let Some(other) = message
            .keys()
            .find(|k| !["role", "content", "name"].contains(&k.as_str()))
        {
            let shown: String = other.chars().take(40).collect();
            return Err(refusal(
                Some(&param),
                format!(
                    "a message's `{shown}` is not something the portal takes; a message has \
                     `role` and `content` (tool calls run on the server, docs/api.md)"
                ),
            ));
        }
        let role = match message.get("role") {
            Some(Value::String(role)) => role.as_str(),
            _ => "",
        };
        match role {
            "user" => {
                if last_role == "user" {
                    return Err(refusal(
                        Some(&param),
                        "two user messages follow each other; join them into one message".into(),
                    ));
                }
                users.push(text(message.get("content"), &param)?);
            }
            "assistant" => {
                if last_role != "user" {
                    return Err(refusal(
                        Some(&param),
                        "an assistant message must answer a user message before it".into(),
                    ));
                }
            }
            "system" | "developer" => {
                return Err(refusal(
                    Some(&param),
                    "the agent's instructions are its author's (the portal's layered prompt); \
                     a request cannot add a system or developer message, so say it in the \
                     user's message"
                        .into(),
                ));
            }
            "tool" | "function" => {
                return Err(refusal(
                    Some(&param),
                    "the portal runs the agent's tools on the server; a request cannot carry \
                     tool results (docs/api.md, \"Tools\")"
                        .into(),
                ));
            }
            _ => {
                return Err(refusal(
                    Some(&format!("{param}.role")),
                    "a message's `role` must be `user` or `assistant`".into(),
                ));
            }
        }
        last_role = role;
    }
    if last_role != "user" {
        return Err(refusal(
            Some("messages"),
            "the last message must be the user's new one".into(),
        ));
    }
    let text = users.pop().expect("the last message is the user's");
    if text.trim().is_empty() {
        return Err(refusal(
            Some("messages"),
            "the new message is empty; write something before sending".into(),
        ));
    }
    Ok((text, users))
}

/// A user message's text: a string, or a list of text parts joined.
fn text(content: Option<&Value>, param: &str) -> Result<String, Refusal> {
    match content {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for (at, part) in parts.iter().enumerate() {
                match (part.get("type"), part.get("text")) {
                    (Some(Value::String(kind)), Some(Value::String(part))) if kind == "text" => {
                        text.push_str(part)
                    }
                    _ => {
                        return Err(refusal(
                            Some(&format!("{param}.content[{at}]")),
                            "the portal takes text parts only over this API; send pictures and \
                             files in the page, or with POST /api/attachments"
                                .into(),
                        ));
                    }
                }
            }
            Ok(text)
        }
        _ => Err(refusal(
            Some(&format!("{param}.content")),
            "a user message's `content` must be text, or a list of text parts".into(),
        )),
    }
}

fn effort(level: &str) -> Result<Effort, Refusal> {
    match level {
        "low" => Ok(Effort::Low),
        "medium" => Ok(Effort::Medium),
        "high" => Ok(Effort::High),
        _ => Err(effort_refusal()),
    }
}

fn effort_refusal() -> Refusal {
    refusal(
        Some("reasoning_effort"),
        "`reasoning_effort` must be `low`, `medium` or `high` (the portal's efforts)".into(),
    )
}

fn refusal(param: Option<&str>, message: String) -> Refusal {
    Refusal {
        param: param.map(str::to_string),
        message,
    }
}

#[cfg(test)]
mod tests;
