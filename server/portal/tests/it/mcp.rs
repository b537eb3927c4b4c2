//! Tools from MCP servers, against real servers nobody here wrote (`server-everything` and
//! `server-filesystem` from npm, `mcp-server-time` from PyPI, installed by `cargo xtask setup`)
//! and hostile ones written for these tests (`mcp_support/hostile.mjs`), all started by the
//! portal from a configuration directory as an operator would write it. The memory a flood
//! takes is measured alone, in `mcp_memory.rs`.

use crate::common;
use crate::mcp_support;

use std::path::Path;
use std::time::Duration;

use common::until;
use mcp_support::{
    Fixture, KeepsNothing, config_dir, everything, hostile, installed, node, quick, quoted,
    recorded_cancellation, stdio,
};
use portal_core::block::ToolPicture;
use portal_core::stream::TurnEvent;
use portal_core::{Block, TurnStatus};
use portal_identity::Identity;
use portal_tools::mcp::McpLimits;
use serde_json::{Value, json};
#[tokio::test]
async fn real_servers_run_their_tools_and_say_what_they_answered() {
    let folder = tempfile::tempdir().expect("folder for the filesystem server");
    let shared = folder.path().canonicalize().expect("canonical folder");
    std::fs::write(shared.join("herons.txt"), "Grey herons wait.").expect("a file");
    let served = shared.display().to_string();
    let fixture = Fixture::start(
        |_| {
            vec![
                ("everything", everything("")),
                ("polite", hostile("polite", "")),
                (
                    "files",
                    stdio(
                        &node(),
                        &[
                            &installed(
                                "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
                            ),
                            &served,
                        ],
                        "",
                    ),
                ),
                (
                    "time",
                    stdio(
                        &installed("target/tools/venv/bin/mcp-server-time"),
                        &["--local-timezone=UTC"],
                        "",
                    ),
                ),
            ]
        },
        r#"{ everything = ["*"], polite = ["big", "fail"], files = ["*"], time = ["get_current_time"] }"#,
        quick(),
    )
    .await;
    for report in fixture.settled().await {
        assert_eq!(report.status, "connected", "{report:?}");
    }
    let herons = format!("{served}/herons.txt");
    let outside = "/etc/hostname";
    for (tool, arguments, expected, is_error) in [
        (
            "everything__echo",
            json!({"message": "heron"}),
            "heron",
            false,
        ),
        ("everything__get-sum", json!({"a": 1, "b": 2}), "3", false),
        ("everything__get-sum", json!({"a": "one"}), "", true),
        (
            "everything__get-tiny-image",
            json!({}),
            "[picture: image/png",
            false,
        ),
        (
            "everything__get-resource-links",
            json!({"count": 2}),
            "[resource link demo://resource/",
            false,
        ),
        (
            "everything__get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 1}),
            "[resource demo://resource/",
            false,
        ),
        (
            "everything__get-structured-content",
            json!({"location": "Chicago"}),
            "temperature",
            false,
        ),
        (
            "everything__trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            "completed",
            false,
        ),
        (
            "files__read_text_file",
            json!({"path": herons}),
            "Grey herons wait.",
            false,
        ),
        ("files__read_text_file", json!({"path": outside}), "", true),
        ("polite__fail", json!({}), "The heron flew away.", true),
        (
            "polite__big",
            json!({}),
            "… (cut: 300000 characters, the portal keeps 100000)",
            false,
        ),
        (
            "time__get_current_time",
            json!({"timezone": "Europe/Lisbon"}),
            "Europe/Lisbon",
            false,
        ),
    ] {
        let (text, error) = fixture.call(tool, arguments.clone()).await;
        assert_eq!(error, is_error, "{tool} {arguments}: {text}");
        assert!(text.contains(expected), "{tool} {arguments}: {text}");
    }
    // Only the tools the agent is allowed are offered.
    let time = fixture.report("time");
    let names: Vec<&str> = time.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_current_time"]);
    assert!(
        fixture
            .servers
            .tool(&fixture.agent, "time__convert_time")
            .is_none()
    );
}

#[tokio::test]
async fn a_stdio_server_sees_only_the_environment_its_file_configures() {
    let fixture = Fixture::start(
        |_| {
            vec![(
                "everything",
                everything("env = { PORTAL_TEST_GIVEN = \"given\" }"),
            )]
        },
        r#"{ everything = ["get-env"] }"#,
        quick(),
    )
    .await;
    let (text, error) = fixture.call("everything__get-env", json!({})).await;
    assert!(!error, "{text}");
    let names: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&text)
        .expect("the environment as JSON")
        .keys()
        .cloned()
        .collect();
    assert!(
        names.contains(&"PORTAL_TEST_GIVEN".to_string()),
        "{names:?}"
    );
    for inherited in ["PATH", "HOME", "CARGO_MANIFEST_DIR"] {
        assert!(
            !names.contains(&inherited.to_string()),
            "{inherited} leaked: {names:?}"
        );
    }
}

#[tokio::test]
async fn approvals_follow_the_file_else_the_annotations() {
    let fixture = Fixture::start(
        |_| {
            vec![
                ("everything", everything("approval = { echo = \"ask\" }")),
                ("annotated", hostile("polite", "")),
                ("trusted", hostile("polite", "approval = { \"*\" = \"never\" }")),
            ]
        },
        r#"{ everything = ["echo", "get-sum"], annotated = ["erase", "env"], trusted = ["erase"] }"#,
        quick(),
    )
    .await;
    for (server, tool, asks) in [
        ("everything", "echo", true), // the file says ask, though it only reads
        ("everything", "get-sum", false), // read-only by its annotations
        ("annotated", "erase", true), // no annotations: MCP's defaults say destructive
        ("annotated", "env", false),  // read-only by its annotations
        ("trusted", "erase", false),  // the file says never, for all its tools
    ] {
        let report = fixture.report(server);
        let found = report
            .tools
            .iter()
            .find(|t| t.name == tool)
            .unwrap_or_else(|| panic!("{server}/{tool} offered: {report:?}"));
        assert_eq!(found.asks, asks, "{server}/{tool}");
    }
}

#[tokio::test]
async fn hostile_servers_fail_their_calls_with_a_reason() {
    let fixture = Fixture::start(
        |dir| {
            let log = dir.join("cancelled.jsonl").display().to_string();
            vec![
                ("die", hostile("die", "")),
                ("garbage", hostile("malformed", "")),
                ("hang", hostile("hang", "")),
                (
                    "polite",
                    hostile(
                        "polite",
                        &format!("env = {{ CANCEL_LOG = {} }}", quoted(&log)),
                    ),
                ),
            ]
        },
        r#"{ die = ["die"], garbage = ["garbage"], hang = ["wait"], polite = ["wait"] }"#,
        quick(),
    )
    .await;
    let (text, error) = fixture.call("die__die", json!({})).await;
    assert!(
        error && text.contains("closed before it answered"),
        "{text}"
    );
    let down = until(
        "the dying server to be down",
        Duration::from_secs(10),
        || {
            let report = fixture.report("die");
            async move { report.reason }
        },
    )
    .await
    .0;
    assert!(down.contains("dying in the middle of a call"), "{down}");
    // A call while it is down says so; then it is started again.
    let (text, error) = fixture.call("die__die", json!({})).await;
    assert!(
        error && (text.contains("is not running") || text.contains("still starting")),
        "{text}"
    );
    until(
        "the dying server to be back",
        Duration::from_secs(20),
        || {
            let report = fixture.report("die");
            async move { (report.status == "connected").then_some(()) }
        },
    )
    .await;

    // A broken line and a server that never answers are cut off by the call's time limit
    // (the turn's tool deadline); the call's future is dropped, which cancels it at the server.
    for tool in ["garbage__garbage", "hang__wait", "polite__wait"] {
        let tool = fixture.servers.tool(&fixture.agent, tool).expect("offered");
        let answered = tokio::time::timeout(
            Duration::from_millis(500),
            tool.answer(json!({}), &KeepsNothing),
        )
        .await;
        assert!(answered.is_err(), "no answer in time");
    }
    let cancelled = recorded_cancellation(fixture.dir.path()).await;
    assert!(cancelled.contains("requestId"), "{cancelled}");
    // The connections are still up: a cut-off call ends only that call.
    for server in ["garbage", "hang", "polite"] {
        assert_eq!(fixture.report(server).status, "connected", "{server}");
    }
}

#[tokio::test]
async fn thousands_of_tools_and_a_huge_description_are_held_to_the_limits() {
    let fixture = Fixture::start(
        |_| vec![("many", hostile("tools", ""))],
        r#"{ many = ["*"] }"#,
        quick(),
    )
    .await;
    let report = fixture.report("many");
    assert_eq!(report.status, "connected");
    assert_eq!(report.tools.len(), McpLimits::default().max_tools);
    assert!(
        report
            .not_offered
            .iter()
            .any(|s| s.contains("at most 128 tools")),
        "{:?}",
        &report.not_offered[..3]
    );
    let huge = report
        .tools
        .iter()
        .find(|t| t.name == "tool-0")
        .expect("tool-0");
    assert!(huge.description.chars().count() < 2_100, "cut");
    assert!(
        huge.description.contains("(cut: 1048576 characters"),
        "says so"
    );
}

#[tokio::test]
async fn a_server_that_never_initialises_is_failed_with_the_reason() {
    let fixture = Fixture::start(
        |_| {
            vec![
                ("silent", hostile("silent", "")),
                ("missing", stdio("/nonexistent/mcp-server", &[], "")),
            ]
        },
        r#"{ silent = ["*"], missing = ["*"] }"#,
        McpLimits {
            start_timeout: Duration::from_secs(1),
            ..quick()
        },
    )
    .await;
    for (server, reason) in [
        ("silent", "did not initialise within 1 s"),
        ("missing", "cannot start `/nonexistent/mcp-server`"),
    ] {
        let report = fixture.report(server);
        assert_eq!(report.status, "failed", "{report:?}");
        assert!(
            report
                .reason
                .as_deref()
                .unwrap_or_default()
                .contains(reason),
            "{report:?}"
        );
    }
}

#[test]
fn an_agent_naming_a_server_its_organisation_lacks_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("folder");
    for (grants, problem) in [
        (r#"{ nowhere = ["*"] }"#, "names the MCP server `nowhere`"),
        (r#"{ everything = [] }"#, "lists no tool of `everything`"),
        (
            r#"{ everything = ["echo", "echo"] }"#,
            "lists `echo` of `everything` twice",
        ),
    ] {
        let config = config_dir(dir.path(), &[("everything", everything(""))], grants);
        let error = Identity::load(&config).expect_err(grants).to_string();
        assert!(error.contains("agents/worker.toml"), "{error}");
        assert!(error.contains(problem), "{error}");
    }
}

/// A portal in local mode for `acme` with the demo model, its agent `worker` granted `grants`
/// of `servers`, once every server has started; and the folder it keeps things in.
async fn serve(
    servers: impl FnOnce(&Path) -> Vec<(&'static str, String)>,
    grants: &str,
) -> (common::Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let files = servers(dir.path());
    let identity = Identity::load(&config_dir(dir.path(), &files, grants)).expect("config");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    let server = common::start_config(portal_server::Config {
        identity: Some(identity),
        mcp: quick(),
        ..common::config(&data, 0.0, None)
    })
    .await;
    until(
        "the MCP servers to connect",
        Duration::from_secs(60),
        || {
            let answer = server
                .client
                .get(server.url("/api/agents/worker/mcp"))
                .send();
            async move {
                let servers: Vec<Value> = answer.await.ok()?.json().await.ok()?;
                servers
                    .iter()
                    .all(|s| s["status"] == "connected")
                    .then_some(())
            }
        },
    )
    .await;
    (server, dir)
}

/// The blocks of the conversation's first turn.
async fn blocks(server: &common::Server, id: &str) -> Vec<Block> {
    server.transcript(id).await.turns[0]
        .messages
        .iter()
        .flat_map(|m| m.blocks.clone())
        .collect()
}

#[tokio::test]
async fn an_approved_call_runs_on_the_server_and_its_result_is_the_turns() {
    let (server, _dir) = serve(
        |_| vec![("annotated", hostile("polite", ""))],
        r#"{ annotated = ["erase"] }"#,
    )
    .await;
    // The agent list says which servers the agent has, how they are and which tools it has.
    let agents: Value = server
        .client
        .get(server.url("/api/agents"))
        .send()
        .await
        .expect("agents")
        .json()
        .await
        .expect("json");
    assert_eq!(
        agents[0]["servers"],
        json!(["annotated (connected): erase"])
    );
    let id = server.conversation().await;
    let turn = server.send(&id, "Please use erase").await;
    let paused = server.events(&id, turn, None).await;
    assert!(matches!(
        paused.last(),
        Some((
            _,
            TurnEvent::TurnEnd {
                status: TurnStatus::Paused,
                ..
            }
        ))
    ));
    let Some(Block::ApprovalRequest { call_id, summary }) = blocks(&server, &id).await.pop() else {
        panic!("an approval request");
    };
    assert_eq!(
        summary,
        "Run the tool erase of the MCP server annotated: Erases everything (it says)."
    );
    let decision = json!({ "call_id": call_id, "approve": true });
    assert_eq!(server.act(&id, turn, "decision", decision).await, 202);
    let ended = server
        .events(&id, turn, paused.last().map(|(n, _)| *n))
        .await;
    assert!(matches!(
        ended.last(),
        Some((
            _,
            TurnEvent::TurnEnd {
                status: TurnStatus::Completed,
                ..
            }
        ))
    ));
    let blocks = blocks(&server, &id).await;
    assert!(blocks.iter().any(|b| matches!(b,
        Block::ToolUse { name, .. } if name == "annotated__erase")));
    assert!(blocks.iter().any(|b| matches!(b,
        Block::ToolResult { content, is_error: false, .. }
            if content == "Erased nothing: this is a test.")));
}

// Issue 48: get-tiny-image's picture is kept as the owner's attachment, named in the result by
// its line, handed to the model (the demo can see) through the picture path, served back to the
// owner as the PNG it is, and deleted with the conversation.
#[tokio::test]
async fn a_tools_picture_is_kept_as_the_owners_attachment_and_deleted_with_the_conversation() {
    let (server, _dir) = serve(
        |_| vec![("everything", everything(""))],
        r#"{ everything = ["get-tiny-image"] }"#,
    )
    .await;
    let id = server.conversation().await;
    let turn = server
        .send(&id, "Please use everything__get-tiny-image")
        .await;
    let events = server.events(&id, turn, None).await;
    let pictures: Vec<ToolPicture> = events
        .iter()
        .find_map(|(_, e)| match e {
            TurnEvent::BlockStart { pictures, .. } if !pictures.is_empty() => {
                Some(pictures.clone())
            }
            _ => None,
        })
        .expect("the result's start carries its picture");
    let [picture] = &pictures[..] else {
        panic!("one picture: {pictures:?}");
    };
    assert_eq!(picture.media_type, "image/png");
    let stored = blocks(&server, &id).await;
    assert!(
        stored.iter().any(|b| matches!(b,
            Block::ToolResult { content, pictures: kept, .. }
                if kept == &pictures && content.contains(&picture.line()))),
        "{stored:?}"
    );
    // The model's next call was handed the picture: the host loaded it from storage by the
    // answer's reference, and the demo says what reached it.
    let reply: String = stored
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let looked = format!(
        "I looked at the picture “everything__get-tiny-image picture 1”: it reached me as \
         image/png of {}×{} pixels",
        picture.width, picture.height
    );
    assert!(reply.contains(&looked), "{reply}");
    let content = server.url(&format!(
        "/api/attachments/{}/content",
        picture.attachment_id
    ));
    let response = server.client.get(&content).send().await.expect("answered");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().expect("a type"),
        "image/png"
    );
    let bytes = response.bytes().await.expect("bytes");
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    let deleted = server
        .client
        .delete(server.url(&format!("/api/conversations/{id}")))
        .send()
        .await
        .expect("answered");
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let gone = server.client.get(&content).send().await.expect("answered");
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn a_stop_while_a_call_runs_cancels_it_at_the_server() {
    let (server, dir) = serve(
        |dir| {
            let log = dir.join("cancelled.jsonl").display().to_string();
            vec![(
                "slow",
                hostile(
                    "polite",
                    &format!("env = {{ CANCEL_LOG = {} }}", quoted(&log)),
                ),
            )]
        },
        r#"{ slow = ["wait"] }"#,
    )
    .await;
    let id = server.conversation().await;
    let turn = server.send(&id, "use wait").await;
    let mut events = server.stream(&id, turn, None).await;
    while let Some((_, event)) = events.next().await {
        if let TurnEvent::BlockEnd { .. } = event
            && blocks(&server, &id)
                .await
                .iter()
                .any(|b| matches!(b, Block::ToolUse { .. }))
        {
            break;
        }
    }
    // The call has been made; give it a moment to reach the server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.act(&id, turn, "cancel", json!({})).await, 202);
    let mut last = None;
    while let Some((_, event)) = events.next().await {
        last = Some(event);
    }
    assert!(
        matches!(
            last,
            Some(TurnEvent::TurnEnd {
                status: TurnStatus::CutOff,
                ..
            })
        ),
        "{last:?}"
    );
    // The stored turn answers the call it was cut off in, saying it was stopped.
    let blocks = blocks(&server, &id).await;
    assert!(
        matches!(blocks.last(), Some(Block::ToolResult { content, is_error: true, .. })
            if content.contains("stopped the turn while the tool `slow__wait` ran")),
        "{blocks:?}"
    );
    let cancelled = recorded_cancellation(dir.path()).await;
    assert!(cancelled.contains("requestId"), "{cancelled}");
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("its address")
        .port()
}

#[tokio::test]
async fn server_everything_over_streamable_http_runs_its_tools() {
    let port = free_port();
    let mut everything = tokio::process::Command::new(node())
        .arg(installed(
            "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("server-everything over HTTP");
    until(
        "server-everything to listen",
        Duration::from_secs(30),
        || async move {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .ok()
        },
    )
    .await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let fixture = Fixture::start(
        |dir| {
            std::fs::create_dir_all(dir.join("config/organisations/acme")).expect("folder");
            std::fs::write(
                dir.join("config/organisations/acme/token"),
                "a-token-from-a-file\n",
            )
            .expect("token file");
            vec![(
                "remote",
                format!(
                    "url = {}\nheaders = {{ X-Portal-Test = \"yes\" }}\nbearer_token_file = \"token\"\n",
                    quoted(&url)
                ),
            )]
        },
        r#"{ remote = ["*"] }"#,
        quick(),
    )
    .await;
    assert_eq!(fixture.report("remote").status, "connected");
    for (tool, arguments, expected, is_error) in [
        ("remote__echo", json!({"message": "heron"}), "heron", false),
        ("remote__get-sum", json!({"a": 2, "b": 3}), "5", false),
        ("remote__get-sum", json!({"a": "two"}), "", true),
        (
            "remote__get-resource-links",
            json!({"count": 1}),
            "[resource link demo://resource/",
            false,
        ),
        (
            "remote__get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 2}),
            "[resource demo://resource/",
            false,
        ),
        (
            "remote__get-tiny-image",
            json!({}),
            "[picture: image/png",
            false,
        ),
        (
            "remote__trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            "completed",
            false,
        ),
    ] {
        let (text, error) = fixture.call(tool, arguments.clone()).await;
        assert_eq!(error, is_error, "{tool} {arguments}: {text}");
        assert!(text.contains(expected), "{tool} {arguments}: {text}");
    }
    everything.kill().await.expect("stopped");
}

#[tokio::test]
async fn an_http_server_gets_the_configured_headers_and_bearer_token() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    // Records the first request's head, and refuses it.
    let head = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.expect("a request");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            socket.read_exact(&mut byte).await.expect("its head");
            head.push(byte[0]);
        }
        let _ = socket
            .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n")
            .await;
        String::from_utf8_lossy(&head).to_lowercase()
    });
    // A variable cargo sets for every test, since the workspace allows no `unsafe` to set one.
    let token = std::env::var("CARGO_PKG_NAME").expect("cargo sets CARGO_PKG_NAME");
    let fixture = Fixture::start(
        |_| {
            vec![
                (
                    "remote",
                    format!(
                        "url = {}\nheaders = {{ X-Portal-Test = \"yes\" }}\nbearer_token_env = \"CARGO_PKG_NAME\"\n",
                        quoted(&url)
                    ),
                ),
                (
                    "unset",
                    "url = \"http://127.0.0.1:9/mcp\"\nbearer_token_env = \"PORTAL_TEST_NOT_SET\"\n"
                        .to_string(),
                ),
            ]
        },
        r#"{ remote = ["*"], unset = ["*"] }"#,
        quick(),
    )
    .await;
    let head = head.await.expect("the request's head");
    assert!(
        head.contains(&format!("authorization: bearer {token}")),
        "{head}"
    );
    assert!(head.contains("x-portal-test: yes"), "{head}");
    assert_eq!(fixture.report("remote").status, "failed");
    let unset = fixture.report("unset");
    assert!(
        unset.reason.as_deref().unwrap_or_default().contains(
            "the environment variable `PORTAL_TEST_NOT_SET` that holds its bearer token is not set"
        ),
        "{unset:?}"
    );
}

#[test]
fn a_server_file_must_say_how_to_reach_it_and_keep_tokens_out() {
    let dir = tempfile::tempdir().expect("folder");
    for (file, field, problem) in [
        ("args = [\"x\"]\n", "command", "is missing, as is `url`"),
        (
            "command = \"x\"\nurl = \"http://a/mcp\"\n",
            "url",
            "are both given",
        ),
        (
            "url = \"http://a/mcp\"\nheaders = { Authorization = \"Bearer x\" }\n",
            "headers",
            "never in the file",
        ),
        (
            "url = \"ftp://a/mcp\"\n",
            "url",
            "not an http:// or https://",
        ),
        (
            "command = \"x\"\nbearer_token_env = \"T\"\n",
            "bearer_token_env",
            "is for a server reached by `url`",
        ),
        (
            "url = \"http://a/mcp\"\nenv = { A = \"b\" }\n",
            "env",
            "is for a server the portal starts",
        ),
        (
            "url = \"http://a/mcp\"\nbearer_token_env = \"T\"\nbearer_token_file = \"t\"\n",
            "bearer_token_file",
            "keep one",
        ),
        (
            "command = \"x\"\nbearer_token = \"inline\"\n",
            "",
            "unknown field",
        ),
    ] {
        let config = config_dir(
            dir.path(),
            &[("bad", file.to_string())],
            r#"{ bad = ["*"] }"#,
        );
        let error = Identity::load(&config).expect_err(file).to_string();
        assert!(error.contains("mcp/bad.toml"), "{error}");
        assert!(
            error.contains(&format!("field `{field}`")) || field.is_empty(),
            "{error}"
        );
        assert!(error.contains(problem), "{error}");
    }
}

#[tokio::test]
async fn a_server_saying_its_tools_changed_is_listed_again() {
    let fixture = Fixture::start(
        |_| vec![("growing", hostile("polite", ""))],
        r#"{ growing = ["*"] }"#,
        quick(),
    )
    .await;
    assert!(
        fixture
            .servers
            .tool(&fixture.agent, "growing__grown")
            .is_none()
    );
    let (text, error) = fixture.call("growing__grow", json!({})).await;
    assert!(!error, "{text}");
    until(
        "the new tool to be offered",
        Duration::from_secs(10),
        || {
            let offered = fixture.servers.tool(&fixture.agent, "growing__grown");
            async move { offered.map(|_| ()) }
        },
    )
    .await;
    assert_eq!(
        fixture.call("growing__grown", json!({})).await,
        ("I am new.".to_string(), false)
    );
}
