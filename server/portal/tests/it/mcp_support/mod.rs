//! What the MCP tests share: a configuration directory with MCP servers as an operator writes
//! it, the real servers `cargo xtask setup` installs and the hostile one beside this file
//! (`hostile.mjs`), and the servers started for one agent.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use portal_identity::{Agent, Identity};
use portal_tools::mcp::{McpLimits, McpServers, ServerReport};
use serde_json::Value;

use crate::common::until;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace")
}

/// An installed program or script, or a failure saying how to install it.
pub fn installed(relative: &str) -> String {
    let path = root().join(relative);
    assert!(
        path.exists(),
        "{} is missing; run `cargo xtask setup`",
        path.display()
    );
    path.display().to_string()
}

/// The `node` program on this process's PATH.
pub fn node() -> String {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("node"))
                .find(|p| p.is_file())
        })
        .expect("node on PATH; run `cargo xtask setup`")
        .display()
        .to_string()
}

/// `text` as a TOML string (a JSON string is one).
pub fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string")
}

/// A configuration directory with organisation `acme`, the MCP servers `servers` (id, file
/// text) and one agent `worker` whose `mcp` table is `grants`.
pub fn config_dir(dir: &Path, servers: &[(&str, String)], grants: &str) -> PathBuf {
    let org = dir.join("config/organisations/acme");
    std::fs::create_dir_all(org.join("mcp")).expect("mcp folder");
    std::fs::create_dir_all(org.join("agents")).expect("agents folder");
    std::fs::write(org.join("organisation.toml"), "name = \"Acme\"\n").expect("org");
    for (id, text) in servers {
        std::fs::write(org.join("mcp").join(format!("{id}.toml")), text).expect("server");
    }
    std::fs::write(
        org.join("agents/worker.toml"),
        format!("name = \"Worker\"\nmodel = \"demo\"\nmcp = {grants}\n"),
    )
    .expect("agent");
    dir.join("config")
}

/// A stdio server file: `command` with `args`, and `more` lines.
pub fn stdio(command: &str, args: &[&str], more: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| quoted(a)).collect();
    format!(
        "command = {}\nargs = [{}]\n{more}\n",
        quoted(command),
        args.join(", ")
    )
}

pub fn everything(more: &str) -> String {
    stdio(
        &node(),
        &[
            &installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            "stdio",
        ],
        more,
    )
}

pub fn hostile(mode: &str, more: &str) -> String {
    stdio(
        &node(),
        &[
            &installed("server/portal/tests/it/mcp_support/hostile.mjs"),
            mode,
        ],
        more,
    )
}

/// Limits that let the tests see failures and restarts quickly.
pub fn quick() -> McpLimits {
    McpLimits {
        start_timeout: Duration::from_secs(20),
        first_backoff: Duration::from_millis(200),
        max_backoff: Duration::from_secs(2),
        ..McpLimits::default()
    }
}

pub struct Fixture {
    pub servers: Arc<McpServers>,
    pub agent: Agent,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    /// Starts `servers` for an agent granted `grants`, and waits until none is starting.
    pub async fn start(
        servers: impl FnOnce(&Path) -> Vec<(&'static str, String)>,
        grants: &str,
        limits: McpLimits,
    ) -> Fixture {
        let dir = tempfile::tempdir().expect("temporary folder");
        let files = servers(dir.path());
        let config = config_dir(dir.path(), &files, grants);
        let identity = Identity::load(&config).expect("a valid configuration");
        let agent = identity
            .organisation("acme")
            .expect("acme")
            .agents
            .iter()
            .find(|a| a.id == "worker")
            .expect("worker")
            .clone();
        let servers = Arc::new(McpServers::start(&identity, &limits));
        let fixture = Fixture {
            servers,
            agent,
            dir,
        };
        fixture.settled().await;
        fixture
    }

    /// The servers' reports once none is starting.
    pub async fn settled(&self) -> Vec<ServerReport> {
        until("the MCP servers to start", Duration::from_secs(60), || {
            let report = self.servers.report(&self.agent);
            async move {
                report
                    .iter()
                    .all(|r| r.status != "starting")
                    .then_some(report)
            }
        })
        .await
        .0
    }

    pub fn report(&self, server: &str) -> ServerReport {
        self.servers
            .report(&self.agent)
            .into_iter()
            .find(|r| r.id == server)
            .expect("the server's report")
    }

    /// Calls the tool offered as `offered` and returns its text and whether it is an error.
    pub async fn call(&self, offered: &str, arguments: Value) -> (String, bool) {
        let tool = self
            .servers
            .tool(&self.agent, offered)
            .unwrap_or_else(|| panic!("{offered} is offered"));
        let output = tool.answer(arguments, &KeepsNothing).await;
        (output.content, output.is_error)
    }
}

/// What the hostile server logged of the cancellations it received in `dir`'s
/// `cancelled.jsonl`, once it logged any (within 10 s).
pub async fn recorded_cancellation(dir: &Path) -> String {
    let log = dir.join("cancelled.jsonl");
    until(
        "the server to record the cancellation",
        Duration::from_secs(10),
        || {
            let text = std::fs::read_to_string(&log).ok();
            async move { text.filter(|t| !t.is_empty()) }
        },
    )
    .await
    .0
}

/// A keeper for calls made outside a turn, which have no conversation to keep a picture in.
#[derive(Debug)]
pub struct KeepsNothing;

impl portal_tools::PictureKeeper for KeepsNothing {
    fn keep(&self, _: String, _: Vec<u8>) -> portal_tools::KeepFuture<'_> {
        Box::pin(async { Err("called outside a conversation".to_string()) })
    }
}
