//! The tools a turn runs, behind one seam: a [`Tool`] answers a call, a [`ToolRegistry`] holds
//! them by name.
//!
//! Core decides which of the portal's own tools a prompt offers (`read_tool_result`,
//! `read_document`, `search_attachments`, `load_skill`); the registry must hold an implementation
//! for each so that a call to it runs. Every other registered tool is an agent tool, offered to
//! the agents whose configuration lists it ([`ToolRegistry::for_agent`]) on every call; a call to
//! a tool the agent is not offered is answered as unknown. A tool may gate a call: ask the user
//! to approve it first, or turn it into a clarification question; either pauses the turn.
//!
//! Tools that change while the server runs come from a [`ToolSource`]: the MCP servers' tools
//! ([`mcp`]) are one. [`skills`] reads the organisations' skills and answers `load_skill`.

pub mod demo;
pub mod mcp;
mod read_tool_result;
pub mod skills;

pub use portal_core::reply::Gate;
pub use read_tool_result::ReadToolResult;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use portal_core::Transcript;
use portal_core::block::ToolPicture;
use portal_core::tools::{ToolDefinition, is_portal_tool};
use serde_json::Value;

use portal_identity::Agent;
use portal_store::{AsyncStorage, ConversationId};

/// One call the model made, its arguments parsed.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub arguments: &'a Value,
}

/// What a running tool may read: the conversation it runs in, as stored when the call was made.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub storage: AsyncStorage,
    pub org_id: String,
    pub conversation: ConversationId,
    /// The transcript as it stood when the model was called.
    pub transcript: Arc<Transcript>,
    /// Where a picture the tool answers with is kept.
    pub pictures: Arc<dyn PictureKeeper>,
}

/// A picture being kept.
pub type KeepFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolPicture, String>> + Send + 'a>>;

/// Where a tool keeps a picture it answered with: the host keeps its `bytes` as a picture
/// attachment of the conversation's owner, named `filename`, and answers how the result names
/// it, or why it was not kept (not a raster picture, past the limits or the owner's quota).
pub trait PictureKeeper: Send + Sync + fmt::Debug {
    fn keep(&self, filename: String, bytes: Vec<u8>) -> KeepFuture<'_>;
}

pub use portal_core::tools::ToolOutput;

/// A tool answer being worked out.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// A tool the turn loop can run.
pub trait Tool: Send + Sync + fmt::Debug {
    /// Its name, description and argument schema, as the model sees them.
    fn definition(&self) -> ToolDefinition;

    /// Whether the call runs at once, waits for approval, or becomes a question.
    fn gate(&self, _call: &ToolCall<'_>) -> Gate {
        Gate::Run
    }

    /// Runs the call.
    fn run<'a>(&'a self, call: ToolCall<'a>, context: &'a ToolContext) -> ToolFuture<'a>;
}

/// Where tools come from besides those registered one by one: tools that change while the
/// server runs, such as an MCP server's, offered to the agents their source allows.
pub trait ToolSource: Send + Sync + fmt::Debug {
    /// The tools `agent` is offered from this source now.
    fn tools_for(&self, agent: &Agent) -> Vec<Arc<dyn Tool>>;
}

/// The tools a server runs, by name.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    /// The sources whose tools agents are offered besides these (the MCP servers).
    sources: Vec<Arc<dyn ToolSource>>,
}

impl ToolRegistry {
    /// The portal's `read_tool_result` and the demo tools.
    pub fn standard() -> Self {
        let mut registry = ToolRegistry::default();
        registry.register(Arc::new(ReadToolResult));
        demo::register(&mut registry);
        registry
    }

    /// Offers agents the tools of `source` too, as the source allows.
    pub fn with_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// Adds a tool, replacing one of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.definition().name;
        self.tools.retain(|t| t.definition().name != name);
        self.tools.push(tool);
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.definition().name == name)
    }

    /// The agent tools offered on every call: every registered tool but the portal's own, which
    /// core offers when the prompt refers to them.
    pub fn agent_tools(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| t.definition())
            .filter(|d| !is_portal_tool(&d.name))
            .collect()
    }

    /// The tools `agent` runs with: the portal's own, the agent tools its configuration lists,
    /// and the tools its sources offer it now (its MCP servers', as its `mcp` table allows).
    pub fn for_agent(&self, agent: &Agent) -> ToolRegistry {
        let mut tools: Vec<Arc<dyn Tool>> = self
            .tools
            .iter()
            .filter(|t| {
                let name = t.definition().name;
                is_portal_tool(&name) || agent.tools.contains(&name)
            })
            .cloned()
            .collect();
        for source in &self.sources {
            tools.extend(source.tools_for(agent));
        }
        ToolRegistry {
            tools,
            sources: Vec::new(),
        }
    }

    /// Checks that every tool `agent` lists is one of this registry's agent tools.
    pub fn check_agent(&self, agent: &Agent) -> Result<(), AgentToolError> {
        let known: Vec<String> = self.agent_tools().into_iter().map(|d| d.name).collect();
        for tool in &agent.tools {
            let problem = if is_portal_tool(tool) {
                AgentToolProblem::Portal
            } else if !known.contains(tool) {
                AgentToolProblem::Unknown {
                    known: known.join(", "),
                }
            } else {
                continue;
            };
            return Err(AgentToolError {
                file: format!(
                    "organisations/{}/agents/{}.toml",
                    agent.organisation, agent.id
                ),
                tool: tool.clone(),
                problem,
            });
        }
        Ok(())
    }
}

/// An agent's configuration lists a tool it cannot be offered.
#[derive(Debug, thiserror::Error)]
#[error("{file} lists the tool `{tool}` in `tools`, but {problem}")]
pub struct AgentToolError {
    /// The agent's file, within the configuration directory.
    pub file: String,
    pub tool: String,
    pub problem: AgentToolProblem,
}

/// Why a listed tool cannot be offered.
#[derive(Debug, thiserror::Error)]
pub enum AgentToolProblem {
    #[error("this server has no such tool; list only some of: {known}")]
    Unknown { known: String },
    #[error(
        "it is one of the portal's own tools, which every agent has when a conversation needs it; remove it from the list"
    )]
    Portal,
}

/// The answer to a call of a tool nobody registered.
pub fn unknown_tool(name: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "There is no tool named `{name}` here; call one of the tools this prompt lists."
    ))
}

/// An argument that must be a string.
pub fn string_argument<'a>(call: &ToolCall<'a>, name: &str) -> Result<&'a str, ToolOutput> {
    call.arguments
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ToolOutput::error(format!(
                "`{}` needs the string argument `{name}`; call it again with it.",
                call.name
            ))
        })
}
