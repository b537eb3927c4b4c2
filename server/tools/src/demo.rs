//! The demo tools the demo model calls, under the names the demo gives them
//! (`portal_model::demo::tools`): one that runs at once, one that needs the user's approval, and
//! one that asks the user a question.

use std::sync::Arc;

use portal_core::tools::ToolDefinition;
use portal_model::demo::tools::{ASK_USER, COUNT_CHARACTERS, PUBLISH_NOTE};
use serde_json::json;
use unicode_segmentation::UnicodeSegmentation;

use crate::{
    Gate, Tool, ToolCall, ToolContext, ToolFuture, ToolOutput, ToolRegistry, string_argument,
};

/// Adds the demo tools to `registry`.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(Arc::new(CountCharacters));
    registry.register(Arc::new(PublishNote));
    registry.register(Arc::new(AskUser));
}

#[derive(Debug, Clone, Copy)]
struct CountCharacters;

impl Tool for CountCharacters {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: COUNT_CHARACTERS.into(),
            description:
                "Count the characters (grapheme clusters), words and UTF-8 bytes of a text.".into(),
            parameters: json!({
                "type": "object",
                "properties": { "text": { "type": "string", "description": "The text to count." } },
                "required": ["text"],
                "additionalProperties": false
            }),
        }
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, _context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match string_argument(&call, "text") {
                Ok(text) => ToolOutput::ok(format!(
                    "{} characters, {} words, {} bytes",
                    text.graphemes(true).count(),
                    text.unicode_words().count(),
                    text.len()
                )),
                Err(error) => error,
            }
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct PublishNote;

impl Tool for PublishNote {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: PUBLISH_NOTE.into(),
            description: "Publish a short note under a title. The user approves each note first."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": { "type": "string" },
                    "text": { "type": "string" }
                },
                "required": ["title", "text"],
                "additionalProperties": false
            }),
        }
    }

    fn gate(&self, call: &ToolCall<'_>) -> Gate {
        let title = call
            .arguments
            .get("title")
            .and_then(|t| t.as_str())
            .unwrap_or("untitled");
        Gate::Approval {
            summary: format!("Publish the note {title}"),
        }
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, _context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match string_argument(&call, "title") {
                Ok(title) => ToolOutput::ok(format!("Published the note {title} (demo: nowhere).")),
                Err(error) => error,
            }
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct AskUser;

impl Tool for AskUser {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: ASK_USER.into(),
            description:
                "Ask the user a question when the task cannot go on without their answer; \
                the turn waits for it."
                    .into(),
            parameters: json!({
                "type": "object",
                "properties": { "question": { "type": "string" } },
                "required": ["question"],
                "additionalProperties": false
            }),
        }
    }

    fn gate(&self, call: &ToolCall<'_>) -> Gate {
        let question = call
            .arguments
            .get("question")
            .and_then(|q| q.as_str())
            .unwrap_or("Could you say more about what you need?");
        Gate::Clarification {
            question: question.to_string(),
        }
    }

    fn run<'a>(&'a self, _call: ToolCall<'a>, _context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { ToolOutput::error("ask_user is answered by the user, not run.") })
    }
}
