//! A model's streamed answer as provider-neutral events, in the order the turn loop reads them.

use portal_core::reply::BadArguments;
use serde_json::Value;

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
    /// `input_tokens`).
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The model stopped.
    Finished { reason: FinishReason },
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
