//! The document tools behind the turn loop's tool seam: [`register`] adds `read_document` and
//! `search_attachments` to a registry, each reading the transcript the call was made on.

use std::sync::Arc;

use portal_core::tools;

use super::tools::{DocumentToolConfig, read_document, search_attachments};
use portal_tools::{Tool, ToolCall, ToolContext, ToolFuture, ToolOutput, ToolRegistry};

/// Adds `read_document` and `search_attachments` to `registry`.
pub fn register(registry: &mut ToolRegistry, config: DocumentToolConfig) {
    registry.register(Arc::new(ReadDocument(config.clone())));
    registry.register(Arc::new(SearchAttachments(config)));
}

/// `read_document` (rule A3).
#[derive(Debug, Clone)]
pub struct ReadDocument(pub DocumentToolConfig);

impl Tool for ReadDocument {
    fn definition(&self) -> tools::ToolDefinition {
        tools::read_document()
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { answer(read_document(&context.transcript, call.arguments, &self.0)) })
    }
}

/// `search_attachments` (rule A3).
#[derive(Debug, Clone)]
pub struct SearchAttachments(pub DocumentToolConfig);

impl Tool for SearchAttachments {
    fn definition(&self) -> tools::ToolDefinition {
        tools::search_attachments()
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            answer(search_attachments(
                &context.transcript,
                call.arguments,
                &self.0,
            ))
        })
    }
}

fn answer(result: Result<String, super::ToolError>) -> ToolOutput {
    match result {
        Ok(text) => ToolOutput::ok(text),
        Err(error) => ToolOutput::error(error.to_string()),
    }
}
