//! Chat completion chunks into events: text and reasoning deltas pass through, tool call
//! fragments are gathered by index, and the ends, usage and finish come once the model stops.

use std::collections::BTreeMap;

use portal_core::usage::Tokens;
use serde::Deserialize;
use serde_json::Value;

use crate::endpoint::{
    AnswerLimits, AnswerReader, CallCaps, EndpointError, classify_stream_error, quote,
};
use crate::{FinishReason, ModelEvent, parse_arguments};

/// What one answer's chunks have said so far.
#[derive(Debug)]
pub struct ChunkReader {
    /// The caps on the reply's calls, and what they have written.
    caps: CallCaps,
    calls: BTreeMap<u32, PendingCall>,
    /// The index of the call the last fragment went to, for servers that leave out `index`.
    last_call: Option<u32>,
    finish: Option<FinishReason>,
    usage: Option<Tokens>,
    finished: bool,
}

#[derive(Debug, Default)]
struct PendingCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
    started: bool,
}

impl AnswerReader for ChunkReader {
    fn new(limits: &AnswerLimits) -> ChunkReader {
        ChunkReader {
            caps: CallCaps::new(limits),
            calls: BTreeMap::new(),
            last_call: None,
            finish: None,
            usage: None,
            finished: false,
        }
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    /// Reads one event's data: a chunk, an error, or `[DONE]`.
    fn data(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        if self.finished {
            return Ok(());
        }
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            return self.finish(out);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| EndpointError::BadChunk {
            reason: e.to_string(),
            start: quote(data),
        })?;
        if let Some(error) = chunk.error {
            return Err(classify_stream_error(&error));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.tokens());
        }
        if self.finish.is_some() {
            return Ok(());
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, out)?;
            }
            if let Some(reason) = choice.finish_reason {
                self.end_calls(out)?;
                self.finish = Some(FinishReason::from_wire(&reason));
            }
        }
        Ok(())
    }

    /// A stream that closes after the finish reason without `[DONE]` still finishes.
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        if self.finished {
            return Ok(());
        }
        if self.finish.is_none() {
            return Err(EndpointError::Truncated);
        }
        self.finish(out)
    }
}

impl ChunkReader {
    /// Ends the answer at `[DONE]` or at the end of the stream.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        if self.finished {
            return Ok(());
        }
        self.end_calls(out)?;
        if let Some(tokens) = self.usage {
            out.push(ModelEvent::Usage(tokens));
        }
        out.push(ModelEvent::Finished {
            reason: self.finish.take().unwrap_or(FinishReason::Unstated),
        });
        self.finished = true;
        Ok(())
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        let thinking = delta
            .reasoning_content
            .filter(|t| !t.is_empty())
            .or(delta.reasoning);
        if let Some(text) = thinking.filter(|t| !t.is_empty()) {
            out.push(ModelEvent::ThinkingDelta(text));
        }
        for text in [delta.content, delta.refusal].into_iter().flatten() {
            if !text.is_empty() {
                out.push(ModelEvent::TextDelta(text));
            }
        }
        for fragment in delta.tool_calls.unwrap_or_default() {
            self.fragment(fragment, out)?;
        }
        Ok(())
    }

    fn fragment(
        &mut self,
        fragment: ToolCallDelta,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), EndpointError> {
        let id = fragment.id.filter(|id| !id.is_empty());
        let index = match (fragment.index, &id, self.last_call) {
            (Some(index), _, _) => index,
            (None, Some(id), _) => self
                .calls
                .iter()
                .find(|(_, call)| call.id.as_deref() == Some(id))
                .map(|(index, _)| *index)
                .unwrap_or_else(|| {
                    self.calls
                        .keys()
                        .next_back()
                        .map_or(0, |last| last.saturating_add(1))
                }),
            (None, None, Some(last)) => last,
            (None, None, None) => 0,
        };
        self.last_call = Some(index);
        if !self.calls.contains_key(&index) {
            self.caps.admit_call(self.calls.len())?;
        }
        let call = self.calls.entry(index).or_default();
        if call.id.is_none() {
            call.id = id;
        }
        let (name, arguments) = match fragment.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        if call.name.is_none() {
            call.name = name.filter(|n| !n.is_empty());
        }
        let arguments = match arguments {
            Some(Value::String(text)) => text,
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        self.caps
            .admit_arguments(index, call.arguments.len(), arguments.len())?;
        call.arguments.push_str(&arguments);
        if call.started {
            if !arguments.is_empty() {
                out.push(ModelEvent::ToolCallArgumentsDelta {
                    index,
                    delta: arguments,
                });
            }
        } else if let Some(name) = &call.name {
            call.started = true;
            out.push(ModelEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: name.clone(),
            });
            if !call.arguments.is_empty() {
                out.push(ModelEvent::ToolCallArgumentsDelta {
                    index,
                    delta: call.arguments.clone(),
                });
            }
        }
        Ok(())
    }

    fn end_calls(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), EndpointError> {
        for (index, call) in std::mem::take(&mut self.calls) {
            let Some(name) = call.name else {
                return Err(EndpointError::BadChunk {
                    reason: format!("the tool call at index {index} never named its tool"),
                    start: quote(&call.arguments),
                });
            };
            out.push(ModelEvent::ToolCallEnd {
                index,
                id: call.id,
                name,
                arguments: parse_arguments(&call.arguments),
            });
        }
        Ok(())
    }
}

/// A chat completion chunk, every field optional: servers differ in what they leave out or
/// send as `null`.
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// DeepSeek, vLLM and llama.cpp.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// OpenRouter, Ollama and newer vLLM.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// A string of JSON text; a server that sends an object is read too.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

/// The cached part of the prompt (OpenAI's `prompt_tokens` counts it too).
#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// The reasoning part of the completion (OpenAI's `completion_tokens` counts it too).
#[derive(Debug, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl Usage {
    fn tokens(&self) -> Tokens {
        let input = self.prompt_tokens.unwrap_or(0);
        let output = self.completion_tokens.unwrap_or(0);
        Tokens {
            input,
            cached_input: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0)
                .min(input),
            output,
            reasoning: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0)
                .min(output),
            estimated: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_arguments_of_a_replys_calls_together_are_held_to_their_cap() {
        let limits = AnswerLimits {
            max_arguments_bytes: 1024,
            max_total_arguments_bytes: 1024,
            ..AnswerLimits::for_output_tokens(1024)
        };
        let mut reader = ChunkReader::new(&limits);
        let mut out = Vec::new();
        let piece = "a".repeat(700);
        let mut read = |index: u32| {
            let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index,
                "id": format!("c{index}"), "function": {"name": "count_characters", "arguments": piece}}]}}]});
            reader.data(&chunk.to_string(), &mut out)
        };
        read(0).expect("700 bytes of one call's arguments are within both caps");
        let refused = read(1).expect_err("1,400 bytes of arguments together are over 1 KiB");
        assert!(
            matches!(refused, EndpointError::AllArgumentsTooLong { kib: 1 }),
            "{refused}"
        );
    }
}
