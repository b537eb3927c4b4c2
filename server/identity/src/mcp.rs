//! An organisation's MCP servers, read from `organisations/<id>/mcp/<server>.toml`
//! (docs/tools.md), and what an agent file says about them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ConfigError;
use crate::files::{Entry, entries, read_toml};

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
    /// A server reached over streamable HTTP at `url`, with `headers` on every request and the
    /// bearer token `token` gives, read each time the portal connects.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        token: Option<TokenSource>,
    },
}

/// Where a server's bearer token is read from: never the configuration file itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// The portal's environment variable of this name.
    Env(String),
    /// This file (relative to the organisation's folder), its content trimmed.
    File(PathBuf),
}

impl TokenSource {
    /// The token, or why it cannot be read.
    pub fn read(&self) -> Result<String, String> {
        let token = match self {
            TokenSource::Env(name) => std::env::var(name).map_err(|_| {
                format!("the environment variable `{name}` that holds its bearer token is not set")
            })?,
            TokenSource::File(path) => std::fs::read_to_string(path).map_err(|error| {
                format!(
                    "cannot read its bearer token from `{}`: {error}",
                    path.display()
                )
            })?,
        };
        let token = token.trim().to_string();
        if token.is_empty() {
            return Err("its bearer token is empty".into());
        }
        Ok(token)
    }
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
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    bearer_token_env: Option<String>,
    #[serde(default)]
    bearer_token_file: Option<PathBuf>,
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
        let approvals = file.approval.clone();
        let transport = transport(file, dir).map_err(|(field, problem)| ConfigError::Field {
            path: path.clone(),
            field,
            problem,
        })?;
        servers.push(ServerConfig {
            id,
            organisation: organisation.to_string(),
            transport,
            approvals,
        });
    }
    Ok(servers)
}

/// The transport a server file describes, or the field at fault and what to change.
fn transport(file: ServerFile, dir: &Path) -> Result<Transport, (&'static str, String)> {
    match (file.command, file.url) {
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err((
                    "command",
                    "is empty; write the program that runs the server".into(),
                ));
            }
            let http_only = [
                ("headers", !file.headers.is_empty()),
                ("bearer_token_env", file.bearer_token_env.is_some()),
                ("bearer_token_file", file.bearer_token_file.is_some()),
            ];
            if let Some((field, _)) = http_only.iter().find(|(_, set)| *set) {
                return Err((
                    field,
                    "is for a server reached by `url`; remove it from a `command` server".into(),
                ));
            }
            Ok(Transport::Stdio {
                command,
                args: file.args,
                env: file.env,
                cwd: file.cwd.map_or_else(|| dir.to_path_buf(), |cwd| dir.join(cwd)),
            })
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(("url", format!("`{url}` is not an http:// or https:// address")));
            }
            let stdio_only = [
                ("args", !file.args.is_empty()),
                ("env", !file.env.is_empty()),
                ("cwd", file.cwd.is_some()),
            ];
            if let Some((field, _)) = stdio_only.iter().find(|(_, set)| *set) {
                return Err((
                    field,
                    "is for a server the portal starts with `command`; remove it from a `url` server"
                        .into(),
                ));
            }
            for (name, value) in &file.headers {
                if name.eq_ignore_ascii_case("authorization") {
                    return Err((
                        "headers",
                        "holds `Authorization`; give the token by `bearer_token_env` or                          `bearer_token_file`, never in the file"
                            .into(),
                    ));
                }
                if ::http::HeaderName::from_bytes(name.as_bytes()).is_err()
                    || ::http::HeaderValue::from_str(value).is_err()
                {
                    return Err((
                        "headers",
                        format!("`{name}` is not a valid header name and value"),
                    ));
                }
            }
            let token = match (file.bearer_token_env, file.bearer_token_file) {
                (Some(_), Some(_)) => {
                    return Err((
                        "bearer_token_file",
                        "and `bearer_token_env` are both given; keep one".into(),
                    ));
                }
                (Some(name), None) => Some(TokenSource::Env(name)),
                (None, Some(file)) => Some(TokenSource::File(dir.join(file))),
                (None, None) => None,
            };
            Ok(Transport::Http {
                url,
                headers: file.headers,
                token,
            })
        }
        (Some(_), Some(_)) => Err((
            "url",
            "and `command` are both given; a server is either started (`command`) or reached              (`url`)"
                .into(),
        )),
        (None, None) => Err((
            "command",
            "is missing, as is `url`; write the program that runs the server, or its address"
                .into(),
        )),
    }
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
