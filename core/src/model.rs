//! What a model can do, as data the host fills in from its model registry, and what it answers:
//! its streamed reply as provider-neutral events, in the order a turn reads them, each call's
//! arguments read the same way for every host.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::usage::Tokens;

/// The request shape a model is called with (rule L3). Written `"openai"` or `"anthropic"`, as the
/// models file names the adapter (`kind = "openai"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// A model's capabilities: the facts the prompt is built around. Its serde format is the models
/// file's, in snake_case (docs/models.md); the JavaScript package takes the same fields in
/// camelCase, converting the keys by rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCapabilities {
    /// The provider's model id, sent as `model`.
    pub id: String,
    pub provider: Provider,
    /// Input tokens the model reads at most.
    pub context_window: u64,
    /// Output tokens the model writes at most (Anthropic's required `max_tokens`).
    pub max_output_tokens: u32,
    /// Whether the model reasons at depth, so that an effort level means something (rule E3).
    pub can_reason: bool,
    /// Whether the model looks at pictures (rule A5).
    pub can_see: bool,
    /// The largest picture the model looks at; a larger one is reduced first (rule A4). `None`
    /// when the provider takes any size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_picture: Option<PictureLimit>,
}

/// The largest picture a provider looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PictureLimit {
    /// The longer side, in pixels.
    pub long_edge: u32,
    /// Width times height, in pixels, when the provider also bounds the area.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<u64>,
}

/// One piece of a model's streamed answer.
///
/// A stream carries deltas as they arrive, then, once the model has stopped, a
/// [`ModelEvent::ToolCallEnd`] for each call in index order, at most one [`ModelEvent::Usage`],
/// and [`ModelEvent::Finished`] last.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// More of the model's reasoning, shown as thinking.
    ThinkingDelta(String),
    /// More of the answer's text.
    TextDelta(String),
    /// A tool call begins. `index` tells a turn's parallel calls apart; `id` is `None` when the
    /// server sent none, and the turn loop then gives the call one of its own.
    ToolCallStart {
        index: u32,
        id: Option<String>,
        name: String,
    },
    /// More of a call's arguments, as the raw JSON text the model writes.
    ToolCallArgumentsDelta { index: u32, delta: String },
    /// A tool call is whole. Arguments that are not a JSON object come as [`BadArguments`], whose
    /// text is the error answer the call gets instead of running.
    ToolCallEnd {
        index: u32,
        id: Option<String>,
        name: String,
        arguments: Result<Value, BadArguments>,
    },
    /// The tokens the call read and wrote, as the provider counted them (rule C1 projects from
    /// the input).
    Usage(Tokens),
    /// The model stopped.
    Finished { reason: FinishReason },
}

/// A call whose arguments are not a JSON object. Its text is the error answer for the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "The arguments of this call are not a JSON object ({reason}), so the tool was not run. \
     Call it again with its arguments as one JSON object."
)]
pub struct BadArguments {
    /// The arguments as the model wrote them.
    pub raw: String,
    /// What is wrong with them.
    pub reason: String,
}

/// Parses a call's arguments: a JSON object, or nothing at all (an empty object).
pub fn parse_arguments(raw: &str) -> Result<Value, BadArguments> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(object)) => Ok(Value::Object(object)),
        Ok(Value::Null) => Ok(Value::Object(serde_json::Map::new())),
        Ok(other) => Err(BadArguments {
            raw: raw.to_string(),
            reason: format!("they are a JSON {}", kind(&other)),
        }),
        Err(error) => Err(BadArguments {
            raw: raw.to_string(),
            reason: error.to_string(),
        }),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It reached its output limit; the last text or call may be cut short.
    Length,
    /// It wants its tool calls run.
    ToolCalls,
    /// The provider's filter stopped it.
    ContentFilter,
    /// A reason this adapter does not know, as the server named it.
    Other(String),
    /// The stream ended without naming a reason.
    Unstated,
}

impl FinishReason {
    /// The reason for an OpenAI `finish_reason` or an Anthropic `stop_reason`.
    pub fn from_wire(reason: &str) -> FinishReason {
        match reason {
            "stop" | "end_turn" | "eos" | "stop_sequence" => FinishReason::Stop,
            "length" | "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}
