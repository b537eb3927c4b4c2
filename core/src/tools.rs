//! The portal's own tools, which memory, attachments and the catalogue refer to: their names,
//! descriptions and JSON schemas. The host runs them; an agent's own tools come from its author.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use unicode_segmentation::UnicodeSegmentation;

use crate::block::ToolPicture;

/// A tool the model may call: its name, what it does and the JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Reads back the whole of an earlier tool result that memory replays cut (rule M5).
pub const READ_TOOL_RESULT: &str = "read_tool_result";
/// Reads a document attachment's text (rule A3).
pub const READ_DOCUMENT: &str = "read_document";
/// Searches the conversation's document attachments (rule A3).
pub const SEARCH_ATTACHMENTS: &str = "search_attachments";
/// Loads a catalogue skill's instructions (rule S7).
pub const LOAD_SKILL: &str = "load_skill";
/// Searches the organisation's knowledge collections an agent lists (docs/knowledge.md). Not one
/// of the portal's own tools: the server offers it to the agents whose file lists collections.
pub const SEARCH_KNOWLEDGE: &str = "search_knowledge";

/// The result a call gets when the person declined its approval request: it did not run. Written
/// for the model, which reads it; a front end shows the call as declined.
pub const DECLINED_RESULT: &str =
    "Not run: the user declined this call. Do not call it again unless they ask.";
/// The result a call gets when the same reply asked the person a question: it did not run.
/// Written for the model; a front end shows the call as not run.
pub const NOT_RUN_FOR_A_QUESTION: &str = "Not run: the assistant asked the user a question \
                                          first; call it again once they have answered.";

/// The `read_tool_result` tool.
pub fn read_tool_result() -> ToolDefinition {
    ToolDefinition {
        name: READ_TOOL_RESULT.into(),
        description: "Read the whole result of an earlier tool call. Earlier results are replayed \
            cut to a few hundred characters and end in a reference like [ref:call_123]; pass the \
            id inside it (call_123). Long results can be read in pieces with offset and length."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "call_id": {
                    "type": "string",
                    "description": "The id in the result's [ref:…] reference, which is the call's id."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Characters to skip from the start, counted as people see them (an emoji is one). Default 0."
                },
                "length": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Characters to read. Default: the rest, up to a limit the portal sets."
                }
            },
            "required": ["call_id"],
            "additionalProperties": false
        }),
    }
}

/// The `read_document` tool.
pub fn read_document() -> ToolDefinition {
    ToolDefinition {
        name: READ_DOCUMENT.into(),
        description: "Read the text of a document attachment by its id, in pieces. Use it for a \
            document whose text is not in the message (longer than the inline limit, or not \
            replayed)."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "document_id": {
                    "type": "string",
                    "description": "The id from the document's manifest."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Characters to skip from the start, counted as people see them (an emoji is one). Default 0."
                },
                "length": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Characters to read. Default: a piece of a size the portal sets."
                }
            },
            "required": ["document_id"],
            "additionalProperties": false
        }),
    }
}

/// The `search_attachments` tool.
pub fn search_attachments() -> ToolDefinition {
    ToolDefinition {
        name: SEARCH_ATTACHMENTS.into(),
        description: "Search the conversation's document attachments and return the passages \
            that match best, each with its document id and position."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What to look for, in words."
                },
                "document_ids": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Only these documents. Default: all of the conversation's documents."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Passages to return at most. Default 8."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    }
}

/// The `load_skill` tool.
pub fn load_skill() -> ToolDefinition {
    ToolDefinition {
        name: LOAD_SKILL.into(),
        description:
            "Load the instructions of a skill from the skill catalogue, by its name, when \
            the task needs it. Follow the instructions it returns."
                .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The skill's name as the catalogue lists it."
                }
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    }
}

/// What separates an MCP server's id from its tool's name in the name the tool is offered under
/// (`<server>__<tool>`). Server ids are slugs, which have no `_`, and no other tool's name has
/// `__`, so no two offered names are the same.
pub const SERVER_SEPARATOR: &str = "__";

/// The MCP server and the tool's own name that an offered name stands for; `None` for the
/// portal's and the agents' own tools.
pub fn server_tool(name: &str) -> Option<(&str, &str)> {
    name.split_once(SERVER_SEPARATOR)
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
}

/// Whether `name` is one of the portal's own tools.
pub fn is_portal_tool(name: &str) -> bool {
    [
        READ_TOOL_RESULT,
        READ_DOCUMENT,
        SEARCH_ATTACHMENTS,
        LOAD_SKILL,
    ]
    .contains(&name)
}

/// One piece of a long text. The portal's reading tools (`read_tool_result`, `read_document`)
/// hand texts out in pieces whose offsets and lengths count characters as people see them
/// (grapheme clusters), so no piece ends inside one (rule M5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page<'a> {
    /// The piece: whole grapheme clusters only.
    pub text: &'a str,
    /// Where the next piece starts, in characters from the text's start.
    pub next_offset: usize,
    /// The characters after the piece; 0 for the last piece.
    pub remaining: usize,
}

/// The `length` characters of `text` that start `offset` characters in. An offset past the end
/// gives an empty last piece.
pub fn page(text: &str, offset: usize, length: usize) -> Page<'_> {
    let starts: Vec<usize> = text.grapheme_indices(true).map(|(at, _)| at).collect();
    let total = starts.len();
    let first = offset.min(total);
    let last = offset.saturating_add(length).min(total);
    let byte = |cluster: usize| starts.get(cluster).copied().unwrap_or(text.len());
    Page {
        text: &text[byte(first)..byte(last)],
        next_offset: last,
        remaining: total - last,
    }
}

/// A tool's answer: its text, whether it reports an error to the model, and the pictures it
/// answered with, already kept by the host (each named in the text by [`ToolPicture::line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    pub pictures: Vec<ToolPicture>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            pictures: Vec::new(),
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            pictures: Vec::new(),
        }
    }
}
