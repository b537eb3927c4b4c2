//! Tools from MCP servers (docs/tools.md): each organisation's servers (`portal_identity::mcp`), one shared,
//! restarted connection per server (`connection`, over `stdio`), its tools as offered
//! (`listing`), run as registry tools (`tool`) whose results become the model's text
//! (`result`).
//!
//! What a server says (its tools' descriptions, its results, its errors) is data for the model
//! and the person, never an instruction to the portal: it reaches the model as a tool's
//! description or result and nowhere else. A server reaches nothing of the portal's but the
//! calls its organisation's agents make to it.

mod connection;
pub mod listing;
mod result;
mod stdio;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

pub use connection::{CallError, Connection, Status};
pub use portal_identity::mcp::{Approval, ServerConfig};
pub use tool::McpTool;

use portal_identity::{Agent, Identity};

use crate::{Tool, ToolSource};

/// The limits an MCP server is held to (docs/security.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpLimits {
    /// The largest message read from a server; a larger one ends the connection.
    pub max_message_bytes: usize,
    /// The longest result the model reads, in characters; the rest is cut, saying so.
    pub max_result_chars: usize,
    /// The most tools offered of one server.
    pub max_tools: usize,
    /// The most `tools/list` pages read.
    pub max_list_pages: usize,
    /// The longest tool description offered, in characters; the rest is cut.
    pub max_description_chars: usize,
    /// The largest argument schema offered; a tool with a larger one is not offered.
    pub max_schema_bytes: usize,
    /// How long a server has to start, initialise and list its tools.
    pub start_timeout: Duration,
    /// The pause before the first restart; it doubles with each failure in a row.
    pub first_backoff: Duration,
    /// The longest pause between restarts.
    pub max_backoff: Duration,
}

impl Default for McpLimits {
    fn default() -> Self {
        McpLimits {
            max_message_bytes: 4 * 1024 * 1024,
            max_result_chars: 100_000,
            max_tools: 128,
            max_list_pages: 16,
            max_description_chars: 2_000,
            max_schema_bytes: 32 * 1024,
            start_timeout: Duration::from_secs(30),
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// Every organisation's MCP servers, connected.
#[derive(Debug, Default)]
pub struct McpServers {
    connections: Vec<Arc<Connection>>,
}

impl McpServers {
    /// Starts a connection to every server `identity` configures, each kept running in a task of
    /// its own. Needs a tokio runtime when any server is configured.
    pub fn start(identity: &Identity, limits: &McpLimits) -> McpServers {
        // The HTTP client takes TLS from the process's provider: the ring one the rest of the
        // portal uses. One installed before (by a test, say) is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let connections: Vec<Arc<Connection>> = identity
            .organisations()
            .flat_map(|o| &o.mcp_servers)
            .map(|config| Connection::new(config.clone(), limits.clone()))
            .collect();
        for connection in &connections {
            tokio::spawn(Arc::clone(connection).run());
        }
        McpServers { connections }
    }

    /// The connections to the servers `agent` is offered tools of, with the tools its `mcp`
    /// table allows.
    fn granted<'a>(
        &'a self,
        agent: &'a Agent,
    ) -> impl Iterator<Item = (&'a Arc<Connection>, &'a Vec<String>)> + 'a {
        self.connections.iter().filter_map(move |c| {
            if c.config.organisation != agent.organisation {
                return None;
            }
            agent.mcp.get(&c.config.id).map(|tools| (c, tools))
        })
    }

    /// The tools of `connection` an agent allowed `allowed` is offered now: those listed that
    /// its table names, or all of them for `*`.
    fn offered(connection: &Arc<Connection>, allowed: &[String]) -> Vec<McpTool> {
        connection
            .listing()
            .tools
            .iter()
            .filter(|listed| {
                allowed
                    .iter()
                    .any(|a| a == portal_identity::mcp::ALL_TOOLS || a == &listed.name)
            })
            .map(|listed| McpTool {
                connection: Arc::clone(connection),
                listed: listed.clone(),
            })
            .collect()
    }

    /// The tool `agent` is offered under the name `offered`, if any.
    pub fn tool(&self, agent: &Agent, offered: &str) -> Option<McpTool> {
        self.granted(agent)
            .flat_map(|(connection, allowed)| Self::offered(connection, allowed))
            .find(|tool| tool.listed.offered_as == offered)
    }

    /// What `agent`'s servers are doing and which of their tools it is offered.
    pub fn report(&self, agent: &Agent) -> Vec<ServerReport> {
        self.granted(agent)
            .map(|(connection, allowed)| {
                let listing = connection.listing();
                let (status, reason) = match connection.status() {
                    Status::Starting => ("starting", None),
                    Status::Connected => ("connected", None),
                    Status::Down { reason, .. } => ("failed", Some(reason)),
                };
                let tools = Self::offered(connection, allowed)
                    .into_iter()
                    .map(|tool| ToolReport {
                        asks: tool.asks(),
                        name: tool.listed.name,
                        offered_as: tool.listed.offered_as,
                        description: tool.listed.description,
                    })
                    .collect();
                let missing = allowed
                    .iter()
                    .filter(|a| {
                        *a != portal_identity::mcp::ALL_TOOLS
                            && status == "connected"
                            && !listing.tools.iter().any(|l| &l.name == *a)
                    })
                    .map(|a| format!("`{a}`: the server does not list it"))
                    .collect::<Vec<_>>();
                ServerReport {
                    id: connection.config.id.clone(),
                    status,
                    reason,
                    tools,
                    not_offered: listing.skipped.iter().cloned().chain(missing).collect(),
                }
            })
            .collect()
    }
}

/// One of an agent's servers, for the servers panel (`GET /api/agents/{id}/mcp`).
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    pub id: String,
    /// `starting`, `connected` or `failed`.
    pub status: &'static str,
    /// Why it failed.
    pub reason: Option<String>,
    /// The tools the agent is offered.
    pub tools: Vec<ToolReport>,
    /// Tools the agent is not offered although allowed, each with why.
    pub not_offered: Vec<String>,
}

impl ServerReport {
    /// The server in one line for the people talking to the agent: its status (with the reason
    /// it failed) and the tools the agent is offered.
    pub fn line(&self) -> String {
        let status = match &self.reason {
            Some(reason) => format!("failed: {reason}"),
            None => self.status.to_string(),
        };
        let tools: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        if tools.is_empty() {
            format!("{} ({status})", self.id)
        } else {
            format!("{} ({status}): {}", self.id, tools.join(", "))
        }
    }
}

/// One tool in a [`ServerReport`].
#[derive(Debug, Clone, Serialize)]
pub struct ToolReport {
    pub name: String,
    pub offered_as: String,
    pub description: String,
    /// Whether its calls ask the person's approval.
    pub asks: bool,
}

/// The tools `agent` is offered now: of each server its `mcp` table names, the listed tools it
/// allows.
impl ToolSource for McpServers {
    fn tools_for(&self, agent: &Agent) -> Vec<Arc<dyn Tool>> {
        self.granted(agent)
            .flat_map(|(connection, allowed)| Self::offered(connection, allowed))
            .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
            .collect()
    }
}
