//! An organisation's MCP servers, read from `organisations/<id>/mcp/<server>.toml`
//! (docs/tools.md), and what an agent file says about them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::identity::ConfigError;
use crate::identity::load::{Entry, entries, read_toml};

/// One MCP server an organisation runs, as its file configures it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The file's name: the first half of every tool name the server offers.
    pub id: String,
    pub organisation: String,
    pub transport: Transport,
    /// How each tool's calls are approved, by the tool's name on the server; a tool not listed
    /// is [`Approval::Auto`].
    pub approvals: BTreeMap<String, Approval>,
}

/// How the portal reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A program the portal starts, talking JSON-RPC on its standard input and output. It runs
    /// with a cleared environment plus `env`.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        /// The working folder; the organisation's folder unless the file says otherwise.
        cwd: PathBuf,
    },
}

/// Whether a tool's calls wait for the person's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Every call asks.
    Ask,
    /// No call asks.
    Never,
    /// The tool's annotations decide: a tool that says it only reads runs at once, a tool that
    /// says it changes nothing destructively too, and any other (MCP's defaults say
    /// destructive) asks.
    Auto,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerFile {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    approval: BTreeMap<String, Approval>,
}

/// The servers of the organisation whose folder is `dir`, in id order; none without an `mcp`
/// folder.
pub fn load(organisation: &str, dir: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let folder = dir.join("mcp");
    if !folder.is_dir() {
        return Ok(Vec::new());
    }
    let mut servers = Vec::new();
    for (id, path) in entries(&folder, Entry::Toml)? {
        let file: ServerFile = read_toml(&path)?;
        if file.command.trim().is_empty() {
            return Err(ConfigError::Field {
                path,
                field: "command",
                problem: "is empty; write the program that runs the server".into(),
            });
        }
        servers.push(ServerConfig {
            id,
            organisation: organisation.to_string(),
            transport: Transport::Stdio {
                command: file.command,
                args: file.args,
                env: file.env,
                cwd: file
                    .cwd
                    .map_or_else(|| dir.to_path_buf(), |cwd| dir.join(cwd)),
            },
            approvals: file.approval,
        });
    }
    Ok(servers)
}

/// Every tool of a server, in an agent's `mcp` table.
pub const ALL_TOOLS: &str = "*";

/// Checks an agent file's `mcp` table against its organisation's servers: each key names one,
/// and each list names tools (or `*`) without repeats.
pub fn check_agent_grants(
    path: &Path,
    grants: &BTreeMap<String, Vec<String>>,
    servers: &[ServerConfig],
) -> Result<(), ConfigError> {
    for (server, tools) in grants {
        if !servers.iter().any(|s| &s.id == server) {
            let known: Vec<&str> = servers.iter().map(|s| s.id.as_str()).collect();
            return Err(ConfigError::Field {
                path: path.to_path_buf(),
                field: "mcp",
                problem: format!(
                    "names the MCP server `{server}`, which the organisation has no file \
                     `mcp/{server}.toml` for; name one of: {}",
                    if known.is_empty() {
                        "(none configured)".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            });
        }
        if tools.is_empty() {
            return Err(ConfigError::Field {
                path: path.to_path_buf(),
                field: "mcp",
                problem: format!(
                    "lists no tool of `{server}`; list tool names, or \"*\" for all of them"
                ),
            });
        }
        for (at, tool) in tools.iter().enumerate() {
            if tools[..at].contains(tool) {
                return Err(ConfigError::Field {
                    path: path.to_path_buf(),
                    field: "mcp",
                    problem: format!("lists `{tool}` of `{server}` twice; keep one"),
                });
            }
        }
    }
    Ok(())
}
