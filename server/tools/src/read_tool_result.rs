//! `read_tool_result`: the whole of an earlier tool result that memory replays cut (rule M5).

use portal_core::Block;
use portal_core::tools::{READ_TOOL_RESULT, ToolDefinition, page, read_tool_result};
use serde_json::Value;

use super::{Tool, ToolCall, ToolContext, ToolFuture, ToolOutput, string_argument};

/// The most characters (grapheme clusters, rule M5) one read returns. **Decision:** 20,000.
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
    let offset = number("offset").map_or(0, |o| usize::try_from(o).unwrap_or(usize::MAX));
    let length = number("length").map_or(READ_LIMIT, |l| {
        usize::try_from(l).map_or(READ_LIMIT, |l| l.min(READ_LIMIT))
    });
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
    let piece = page(content, offset, length);
    if piece.remaining > 0 {
        ToolOutput::ok(format!(
            "{}\n[{} more characters; read on with offset {}]",
            piece.text, piece.remaining, piece.next_offset
        ))
    } else {
        ToolOutput::ok(piece.text.to_string())
    }
}
