//! `read_tool_result`: the whole of an earlier tool result that memory replays cut (rule M5).

use portal_core::Block;
use portal_core::tools::{READ_TOOL_RESULT, ToolDefinition, read_tool_result};
use serde_json::Value;

use super::{Tool, ToolCall, ToolContext, ToolFuture, ToolOutput, string_argument};

/// The most characters one read returns. **Decision:** 20,000.
pub const READ_LIMIT: usize = 20_000;

/// Reads an earlier result from the transcript by its call id, in pieces.
#[derive(Debug, Clone, Copy)]
pub struct ReadToolResult;

impl Tool for ReadToolResult {
    fn definition(&self) -> ToolDefinition {
        read_tool_result()
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { read(call, context) })
    }
}

fn read(call: ToolCall<'_>, context: &ToolContext) -> ToolOutput {
    let call_id = match string_argument(&call, "call_id") {
        Ok(id) => id.trim_start_matches("[ref:").trim_end_matches(']'),
        Err(error) => return error,
    };
    let number = |name: &str| call.arguments.get(name).and_then(Value::as_u64);
    let offset = number("offset").unwrap_or(0) as usize;
    let length = number("length").map_or(READ_LIMIT, |l| (l as usize).min(READ_LIMIT));
    let found = context
        .transcript
        .turns
        .iter()
        .flat_map(|t| &t.messages)
        .flat_map(|m| &m.blocks)
        .find_map(|b| match b {
            Block::ToolResult {
                call_id: id,
                content,
                ..
            } if id == call_id => Some(content),
            _ => None,
        });
    let Some(content) = found else {
        return ToolOutput::error(format!(
            "{READ_TOOL_RESULT}: no earlier result answers call `{call_id}`; pass the id inside a [ref:…] reference."
        ));
    };
    let total = content.chars().count();
    let piece: String = content.chars().skip(offset).take(length).collect();
    let end = offset + piece.chars().count();
    if end < total {
        ToolOutput::ok(format!(
            "{piece}\n[{} more characters; read on with offset {end}]",
            total - end
        ))
    } else {
        ToolOutput::ok(piece)
    }
}
