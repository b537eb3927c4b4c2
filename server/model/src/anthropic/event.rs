//! Anthropic's stream events into [`ModelEvent`]s. A message opens (`message_start`, with the
//! input's usage), its content blocks stream one after another (`content_block_start`, deltas,
//! `content_block_stop`), the message says why it stopped (`message_delta`, with the final usage)
//! and closes (`message_stop`). Text and thinking pass through as they arrive; a tool call's input
//! comes as pieces of JSON text, and the calls end, in order, once the model has stopped.
//! Signatures are not kept (docs/decisions.md); `ping` events, and events and blocks of kinds this
//! reader does not know, are skipped, as Anthropic asks of clients.

use std::collections::BTreeMap;

use portal_core::usage::Tokens;
use serde::Deserialize;
use serde_json::Value;

use crate::endpoint::{
    AnswerLimits, AnswerReader, CallCaps, EndpointError, classify_stream_error, quote,
};
use crate::{FinishReason, ModelEvent, parse_arguments};

/// What the thinking says where Anthropic sent a `redacted_thinking` block: reasoning its safety
/// systems flagged, sent encrypted.
pub const REDACTED_THINKING: &str = "[Anthropic's safety systems hid this part of the reasoning.]";

/// What one message's events have said so far.
#[derive(Debug)]
pub struct MessageReader {
    /// The caps on the reply's calls, and what their input has written.
    caps: CallCaps,
    /// The reply's calls by the index of their content block.
    calls: BTreeMap<u32, PendingCall>,
    /// Whether the last content block was thinking, so the next one is set apart from it.
    after_thinking: bool,
    stop: Option<FinishReason>,
    usage: Usage,
    finished: bool,
}

#[derive(Debug)]
struct PendingCall {
    /// The call's place among the reply's calls, from 0.
    index: u32,
    id: Option<String>,
    name: String,
    /// The input's JSON text as it streamed.
    arguments: String,
    /// The input the block opened with, for a server that sends it whole there.
    opening: Option<Value>,
}

impl AnswerReader for MessageReader {
    fn new(limits: &AnswerLimits) -> MessageReader {
        MessageReader {
            caps: CallCaps::new(limits),
            calls: BTreeMap::new(),
            after_thinking: false,
            stop: None,
            usage: Usage::default(),
            finished: false,
        }
    }

    fn data(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        if self.finished {
            return Ok(());
        }
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let event: Event = serde_json::from_str(data).map_err(|e| EndpointError::BadChunk {
            reason: e.to_string(),
            start: quote(data),
        })?;
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.update(usage);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => self.block(index, content_block, out)?,
            Event::ContentBlockDelta { index, delta } => self.delta(index, delta, out)?,
            Event::MessageDelta { delta, usage } => {
                if let Some(usage) = usage {
                    self.usage.update(usage);
                }
                if let Some(reason) = delta.stop_reason.filter(|_| self.stop.is_none()) {
                    self.end_calls(out);
                    self.stop = Some(FinishReason::from_wire(&reason));
                }
            }
            Event::MessageStop {} => self.finish(out),
            Event::Error { error } => return Err(classify_stream_error(&error)),
            Event::ContentBlockStop {} | Event::Ping {} | Event::Other => {}
        }
        Ok(())
    }

    /// A stream that closes after the stop reason without `message_stop` still finishes.
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        if self.finished {
            return Ok(());
        }
        if self.stop.is_none() {
            return Err(EndpointError::Truncated);
        }
        self.finish(out);
        Ok(())
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

impl MessageReader {
    fn block(
        &mut self,
        index: u32,
        block: Block,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), EndpointError> {
        let thinking = matches!(block, Block::Thinking { .. } | Block::RedactedThinking {});
        if thinking && self.after_thinking {
            out.push(ModelEvent::ThinkingDelta("\n\n".into()));
        }
        self.after_thinking = thinking;
        match block {
            Block::Text { text } if !text.is_empty() => out.push(ModelEvent::TextDelta(text)),
            Block::Thinking { thinking } if !thinking.is_empty() => {
                out.push(ModelEvent::ThinkingDelta(thinking))
            }
            Block::RedactedThinking {} => {
                out.push(ModelEvent::ThinkingDelta(REDACTED_THINKING.into()))
            }
            Block::ToolUse { id, name, input } => {
                self.caps.admit_call(self.calls.len())?;
                let call = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
                let id = Some(id).filter(|id| !id.is_empty());
                out.push(ModelEvent::ToolCallStart {
                    index: call,
                    id: id.clone(),
                    name: name.clone(),
                });
                self.calls.insert(
                    index,
                    PendingCall {
                        index: call,
                        id,
                        name,
                        arguments: String::new(),
                        opening: input,
                    },
                );
            }
            Block::Text { .. } | Block::Thinking { .. } | Block::Other => {}
        }
        Ok(())
    }

    fn delta(
        &mut self,
        index: u32,
        delta: Delta,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), EndpointError> {
        match delta {
            Delta::Text { text } if !text.is_empty() => out.push(ModelEvent::TextDelta(text)),
            Delta::Thinking { thinking } if !thinking.is_empty() => {
                out.push(ModelEvent::ThinkingDelta(thinking))
            }
            Delta::InputJson { partial_json } => {
                let Some(call) = self.calls.get_mut(&index) else {
                    return Err(EndpointError::BadChunk {
                        reason: format!(
                            "tool input for content block {index}, which is no tool call"
                        ),
                        start: quote(&partial_json),
                    });
                };
                self.caps
                    .admit_arguments(call.index, call.arguments.len(), partial_json.len())?;
                call.arguments.push_str(&partial_json);
                if !partial_json.is_empty() {
                    out.push(ModelEvent::ToolCallArgumentsDelta {
                        index: call.index,
                        delta: partial_json,
                    });
                }
            }
            Delta::Text { .. } | Delta::Thinking { .. } | Delta::Signature {} | Delta::Other => {}
        }
        Ok(())
    }

    /// Each call whole, in the order the model made them.
    fn end_calls(&mut self, out: &mut Vec<ModelEvent>) {
        for call in std::mem::take(&mut self.calls).into_values() {
            let arguments = match call.opening {
                Some(Value::Object(input)) if call.arguments.is_empty() && !input.is_empty() => {
                    Ok(Value::Object(input))
                }
                _ => parse_arguments(&call.arguments),
            };
            out.push(ModelEvent::ToolCallEnd {
                index: call.index,
                id: call.id,
                name: call.name,
                arguments,
            });
        }
    }

    /// Ends the answer at `message_stop`, or at the end of a stream that gave its stop reason.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) {
        if self.finished {
            return;
        }
        self.end_calls(out);
        if let Some(tokens) = self.usage.totals() {
            out.push(ModelEvent::Usage(tokens));
        }
        out.push(ModelEvent::Finished {
            reason: self.stop.take().unwrap_or(FinishReason::Unstated),
        });
        self.finished = true;
    }
}

/// The usage a message reported, each count the latest sent (`message_delta`'s are cumulative).
#[derive(Debug, Default)]
struct Usage {
    seen: bool,
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

impl Usage {
    fn update(&mut self, usage: WireUsage) {
        self.seen = true;
        let counts = [
            (&mut self.input_tokens, usage.input_tokens),
            (
                &mut self.cache_creation_input_tokens,
                usage.cache_creation_input_tokens,
            ),
            (
                &mut self.cache_read_input_tokens,
                usage.cache_read_input_tokens,
            ),
            (&mut self.output_tokens, usage.output_tokens),
        ];
        for (count, sent) in counts {
            if let Some(sent) = sent {
                *count = sent;
            }
        }
    }

    /// The tokens read, cached or not (Anthropic's `input_tokens` leaves out what was written to
    /// or read from the cache, yet all of it fills the window), the part read from the cache, and
    /// the tokens written. What was written to the cache is priced as input.
    fn totals(&self) -> Option<Tokens> {
        self.seen.then(|| Tokens {
            input: self
                .input_tokens
                .saturating_add(self.cache_creation_input_tokens)
                .saturating_add(self.cache_read_input_tokens),
            cached_input: self.cache_read_input_tokens,
            output: self.output_tokens,
            reasoning: 0,
            estimated: false,
        })
    }
}

/// One stream event, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u32,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u32,
        delta: Delta,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// A content block as it opens.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    RedactedThinking {},
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

/// More of a content block.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature {},
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(other)]
    Other,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_inputs_of_a_replys_calls_together_are_held_to_their_cap() {
        let limits = AnswerLimits {
            max_arguments_bytes: 1024,
            max_total_arguments_bytes: 1024,
            ..AnswerLimits::for_output_tokens(1024)
        };
        let mut reader = MessageReader::new(&limits);
        let mut out = Vec::new();
        let piece = "a".repeat(700);
        let mut read = |index: u32| {
            let start = json!({"type": "content_block_start", "index": index, "content_block":
                {"type": "tool_use", "id": format!("t{index}"), "name": "count_characters", "input": {}}});
            reader.data(&start.to_string(), &mut out)?;
            let delta = json!({"type": "content_block_delta", "index": index, "delta":
                {"type": "input_json_delta", "partial_json": piece}});
            reader.data(&delta.to_string(), &mut out)
        };
        read(0).expect("700 bytes of one call's input are within both caps");
        let refused = read(1).expect_err("1,400 bytes of input together are over 1 KiB");
        assert!(
            matches!(refused, EndpointError::AllArgumentsTooLong { kib: 1 }),
            "{refused}"
        );
        assert_eq!(
            refused.to_string(),
            "the arguments of the answer's tool calls together are longer than 1 KiB (max_total_arguments_kib)"
        );
    }
}
