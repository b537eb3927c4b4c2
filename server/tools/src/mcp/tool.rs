//! A server's tool as one of the registry's tools: offered under its `<server>__<tool>` name,
//! gated by its approval, run on the server's shared session.

use std::sync::Arc;

use portal_core::tools::{ToolDefinition, ToolOutput};

use super::connection::Connection;
use super::listing::Listed;
use super::result::output;
use crate::{Gate, PictureKeeper, Tool, ToolCall, ToolContext, ToolFuture};
use portal_identity::mcp::Approval;

/// The most of a tool's description an approval request shows, in characters.
const SUMMARY_DESCRIPTION: usize = 300;

/// One tool of an MCP server.
#[derive(Debug)]
pub struct McpTool {
    pub connection: Arc<Connection>,
    pub listed: Listed,
}

impl McpTool {
    /// How the tool's calls are approved: as its server's file says, else by its annotations.
    pub fn approval(&self) -> Approval {
        let approvals = &self.connection.config.approvals;
        approvals
            .get(&self.listed.name)
            .or_else(|| approvals.get(portal_identity::mcp::ALL_TOOLS))
            .copied()
            .unwrap_or(Approval::Auto)
    }

    /// Calls the tool on its server with `arguments`: its result, or why there is none, as the
    /// model reads it, its pictures kept by `pictures`.
    pub async fn answer(
        &self,
        arguments: serde_json::Value,
        pictures: &dyn PictureKeeper,
    ) -> ToolOutput {
        match self.connection.call(&self.listed.name, arguments).await {
            Ok(result) => {
                output(
                    result,
                    self.connection.limits(),
                    pictures,
                    &self.listed.offered_as,
                )
                .await
            }
            Err(error) => ToolOutput::error(format!("{error}.")),
        }
    }

    /// Whether a call asks the person first.
    pub fn asks(&self) -> bool {
        match self.approval() {
            Approval::Ask => true,
            Approval::Never => false,
            Approval::Auto => !self.listed.safe,
        }
    }
}

impl Tool for McpTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.listed.offered_as.clone(),
            description: self.listed.description.clone(),
            parameters: self.listed.parameters.clone(),
        }
    }

    fn gate(&self, _call: &ToolCall<'_>) -> Gate {
        if !self.asks() {
            return Gate::Run;
        }
        let description = self.listed.description.trim();
        let description = match description.char_indices().nth(SUMMARY_DESCRIPTION) {
            Some((at, _)) => format!("{}…", &description[..at]),
            None => description.to_string(),
        };
        Gate::Approval {
            summary: format!(
                "Run the tool {} of the MCP server {}: {description}",
                self.listed.name, self.connection.config.id
            ),
        }
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(self.answer(call.arguments.clone(), context.pictures.as_ref()))
    }
}
