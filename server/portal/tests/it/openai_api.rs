//! The OpenAI-compatible API (issue 46, docs/api.md), with clients nobody here wrote: the
//! official `openai` packages for Python (PyPI) and Node (npm), installed by `cargo xtask setup`,
//! list the agents a key may use, complete through them whole and streamed, continue a
//! conversation, run a tool of the MCP reference server, and raise their own exception classes
//! for the portal's refusals. Hostile callers are refused in words, and a stream its caller
//! abandons cuts its turn off.

use crate::common;
use crate::mcp_support;

use std::path::Path;
use std::time::Duration;

use common::{Server, until};
use mcp_support::{everything, installed, node, quick};
use portal_identity::{Identity, TokenDigest};
use serde_json::{Value, json};

/// Organisations `acme` (users `alice` and `bob`; agents `helper` and `worker`, which may run
/// `get-sum` of the MCP reference server without asking), `globex` (user `gina`; agent
/// `helper`) and `tiny` (user `tina`, who may spend 10 tokens a day; agent `helper`). Each user
/// signs in to `/api` with the token that is their name.
fn organisations(root: &Path) -> Identity {
    let write = |path: &str, text: String| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    let user = |org: &str, name: &str| {
        write(
            &format!("organisations/{org}/users/{name}/user.toml"),
            format!(
                "name = \"{name}\"\ntoken_sha256 = \"{}\"\n",
                TokenDigest::of(name).to_hex()
            ),
        );
    };
    let helper = |org: &str| {
        write(
            &format!("organisations/{org}/agents/helper.toml"),
            "name = \"Helper\"\nmodel = \"demo\"\n".into(),
        );
    };
    write(
        "organisations/acme/organisation.toml",
        "name = \"Acme\"\n".into(),
    );
    user("acme", "alice");
    user("acme", "bob");
    helper("acme");
    write(
        "organisations/acme/mcp/everything.toml",
        everything("approval = { \"*\" = \"never\" }"),
    );
    write(
        "organisations/acme/agents/worker.toml",
        "name = \"Worker\"\nmodel = \"demo\"\nmcp = { everything = [\"get-sum\"] }\n".into(),
    );
    write(
        "organisations/globex/organisation.toml",
        "name = \"Globex\"\n".into(),
    );
    user("globex", "gina");
    helper("globex");
    write(
        "organisations/tiny/organisation.toml",
        "name = \"Tiny\"\n\n[[quotas]]\napplies_to = \"each_user\"\nperiod = \"day\"\ntokens = 10\n"
            .into(),
    );
    user("tiny", "tina");
    helper("tiny");
    Identity::load(root).expect("identity")
}

/// A portal serving [`organisations`] with the demo model at `pace`, once the MCP server has
/// connected; and the folder it keeps things in.
async fn serve(pace: f64) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let identity = organisations(&dir.path().join("config"));
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    let server = common::start_config(portal_server::Config {
        identity: Some(identity),
        mcp: quick(),
        ..common::config(&data, pace, None)
    })
    .await;
    until("the MCP server to connect", Duration::from_secs(60), || {
        let answer = server
            .client
            .get(server.url("/api/agents/worker/mcp"))
            .bearer_auth("alice")
            .send();
        async move {
            let servers: Vec<Value> = answer.await.ok()?.json().await.ok()?;
            servers
                .iter()
                .all(|s| s["status"] == "connected")
                .then_some(())
        }
    })
    .await;
    (server, dir)
}

/// `POST /api/keys` as `user` with `body`: the status and the answer.
async fn make_key(server: &Server, user: &str, body: Value) -> (u16, Value) {
    let response = server
        .client
        .post(server.url("/api/keys"))
        .bearer_auth(user)
        .json(&body)
        .send()
        .await
        .expect("sent");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

/// A new key of `user`'s with `body`: its secret and its id.
async fn key(server: &Server, user: &str, body: Value) -> (String, String) {
    let (status, made) = make_key(server, user, body).await;
    assert_eq!(status, 201, "{made}");
    (
        made["secret"].as_str().expect("a secret").to_string(),
        made["key"]["id"].as_str().expect("an id").to_string(),
    )
}

/// Runs `program` with `args` and the keys in its environment, and reads the JSON it prints.
async fn observe(program: String, args: Vec<String>, env: Vec<(&'static str, String)>) -> Value {
    let output = tokio::process::Command::new(&program)
        .args(&args)
        .envs(env)
        .output()
        .await
        .expect("the SDK's script runs");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{program} {args:?} failed:\n{said}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(said.trim()).unwrap_or_else(|e| panic!("{e}: {said}"))
}

/// What both SDKs must have seen.
fn check(seen: &Value, sdk: &str) {
    println!("{sdk} saw: {seen:#}");
    assert_eq!(seen["models"], json!(["helper", "worker"]), "{sdk}");
    assert_eq!(seen["scoped_models"], json!(["helper"]), "{sdk}");
    let whole = &seen["whole"];
    let content = whole["content"].as_str().expect("content");
    assert!(!content.is_empty(), "{sdk}: {whole}");
    assert_eq!(whole["role"], "assistant", "{sdk}");
    assert_eq!(whole["finish"], "stop", "{sdk}");
    assert_eq!(whole["status"], "completed", "{sdk}");
    for tokens in ["prompt_tokens", "completion_tokens"] {
        assert!(whole[tokens].as_u64() > Some(0), "{sdk}: {whole}");
    }
    assert_eq!(
        whole["total_tokens"].as_u64(),
        Some(
            whole["prompt_tokens"].as_u64().unwrap() + whole["completion_tokens"].as_u64().unwrap()
        ),
    );
    let continued = &seen["continued"];
    assert_eq!(continued["conversation"], whole["conversation"], "{sdk}");
    assert_eq!(continued["turn"], 2, "{sdk}");
    assert!(continued["content"].as_str().is_some_and(|c| !c.is_empty()));
    let streamed = &seen["streamed"];
    assert_eq!(
        streamed["content"], whole["content"],
        "{sdk}: the same message, the same reply"
    );
    assert_eq!(streamed["finish"], "stop", "{sdk}");
    assert!(streamed["chunks"].as_u64() > Some(3), "{sdk}: {streamed}");
    assert!(
        streamed["total_tokens"].as_u64() > Some(0),
        "{sdk}: {streamed}"
    );
    let tool = seen["tool"].as_str().expect("the tool's reply");
    assert!(
        tool.contains('5'),
        "{sdk}: get-sum of 2 and 3 answered: {tool}"
    );
    let errors = &seen["errors"];
    for (case, class, status) in [
        ("wrong_key", "AuthenticationError", 401),
        ("revoked", "AuthenticationError", 401),
        ("other_organisation", "NotFoundError", 404),
        ("outside_the_key", "NotFoundError", 404),
        ("quota", "RateLimitError", 429),
        ("client_tools", "BadRequestError", 400),
    ] {
        assert_eq!(errors[case][0], class, "{sdk} {case}: {}", errors[case]);
        assert_eq!(errors[case][1], status, "{sdk} {case}: {}", errors[case]);
    }
    let quota = errors["quota"][2].as_str().expect("a message");
    assert!(
        quota.contains("tokens for today"),
        "{sdk}: the page's sentence: {quota}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_sdks_use_agents_through_a_key_and_raise_their_own_errors() {
    let (server, _dir) = serve(0.0).await;
    let (alice, _) = key(&server, "alice", json!({ "name": "scripts" })).await;
    let (scoped, _) = key(
        &server,
        "alice",
        json!({ "name": "helper only", "agents": ["helper"], "expires_in_days": 30 }),
    )
    .await;
    let (revoked, revoked_id) = key(&server, "alice", json!({ "name": "old" })).await;
    let gone = server
        .client
        .delete(server.url(&format!("/api/keys/{revoked_id}")))
        .bearer_auth("alice")
        .send()
        .await
        .expect("sent");
    assert_eq!(gone.status(), 204);
    let (globex, _) = key(&server, "gina", json!({ "name": "hers" })).await;
    let (tiny, _) = key(&server, "tina", json!({ "name": "small" })).await;
    let env = vec![
        ("PORTAL_V1", server.url("/v1")),
        ("ALICE_KEY", alice),
        ("SCOPED_KEY", scoped),
        ("REVOKED_KEY", revoked),
        ("GLOBEX_KEY", globex),
        ("TINY_KEY", tiny),
    ];
    let here = "server/portal/tests/it/openai_sdks";
    let python = observe(
        installed("target/tools/venv/bin/python"),
        vec![installed(&format!("{here}/check.py"))],
        env.clone(),
    )
    .await;
    check(&python, "python");
    let node = observe(node(), vec![installed(&format!("{here}/check.mjs"))], env).await;
    check(&node, "node");
    // The conversations the SDKs made are Alice's, listed in the page like any other.
    let listed: Value = server
        .client
        .get(server.url("/api/conversations"))
        .bearer_auth("alice")
        .send()
        .await
        .expect("listed")
        .json()
        .await
        .expect("json");
    let listed = listed["conversations"].as_array().expect("a list");
    for seen in [&python, &node] {
        let id = &seen["whole"]["conversation"];
        assert!(listed.iter().any(|c| &c["id"] == id), "{id} in {listed:?}");
    }
}

/// `POST /v1/chat/completions` with `key` and `body`: the status and the answer.
async fn complete(server: &Server, key: &str, body: &Value) -> (u16, Value) {
    let response = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .expect("sent");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

/// A chat completion of a `length`-byte message, its answer read while the body is still being
/// written: a server refusing the body past its limit answers and closes before taking it all,
/// and an answer read only once the body is sent could be lost to the connection's reset.
async fn oversized(server: &Server, key: &str, length: usize) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = server.base.trim_start_matches("http://").to_string();
    let stream = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    let (mut reading, mut writing) = stream.into_split();
    let body = format!(
        r#"{{"model": "helper", "messages": [{{"role": "user", "content": "{}"}}]}}"#,
        "x".repeat(length)
    );
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Authorization: Bearer {key}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let writer = tokio::spawn(async move {
        writing.write_all(head.as_bytes()).await.expect("the head");
        for piece in body.as_bytes().chunks(64 * 1024) {
            if writing.write_all(piece).await.is_err() {
                break;
            }
        }
    });
    let mut answer = Vec::new();
    let mut chunk = [0u8; 8192];
    let read = async {
        while let Ok(n) = reading.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("an answer");
    writer.abort();
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (status, serde_json::from_str(body).expect("json"))
}

/// The `error` of an answer in OpenAI's shape: its message, type and param.
fn error(answer: &Value) -> (&str, &str, Option<&str>) {
    let error = &answer["error"];
    (
        error["message"].as_str().expect("a message"),
        error["type"].as_str().expect("a type"),
        error["param"].as_str(),
    )
}

/// Alice's conversation ids, as the page lists them.
async fn alices_conversations(server: &Server) -> Vec<String> {
    let listed: Value = server
        .client
        .get(server.url("/api/conversations"))
        .bearer_auth("alice")
        .send()
        .await
        .expect("listed")
        .json()
        .await
        .expect("json");
    listed["conversations"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| c["id"].as_str().expect("an id").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_callers_are_refused_in_words_and_an_abandoned_stream_cuts_its_turn_off() {
    // A slow demo, so that a stream can be abandoned while its turn runs.
    let (server, _dir) = serve(1.0).await;
    let (alice, _) = key(&server, "alice", json!({ "name": "scripts" })).await;
    let (gina, _) = key(&server, "gina", json!({ "name": "hers" })).await;
    let hi = json!([{ "role": "user", "content": "hi" }]);

    // A key in the URL is refused, even beside a right header: URLs are logged.
    for query in [
        format!("api_key={alice}"),
        format!("x={alice}"),
        "key=1".into(),
    ] {
        let answer = server
            .client
            .get(server.url(&format!("/v1/models?{query}")))
            .bearer_auth(&alice)
            .send()
            .await
            .expect("sent");
        assert_eq!(answer.status(), 401, "{query}");
        let body: Value = answer.json().await.expect("json");
        assert!(
            error(&body).0.contains("never be sent in the URL"),
            "{body}"
        );
    }
    // A bearer token of user.toml signs in to /v1 too, with every agent of its user.
    let models: Value = server
        .client
        .get(server.url("/v1/models"))
        .bearer_auth("alice")
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    let ids: Vec<&str> = models["data"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["helper", "worker"], "{models}");
    // No key, a session-less cookie, or a key on the page's API: 401, in each API's shape.
    let bare = server
        .client
        .get(server.url("/v1/models"))
        .send()
        .await
        .expect("sent");
    assert_eq!(bare.status(), 401);
    let body: Value = bare.json().await.expect("json");
    assert_eq!(error(&body).1, "authentication_error", "{body}");
    let on_api = server
        .client
        .get(server.url("/api/conversations"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("sent");
    assert_eq!(on_api.status(), 401, "an API key signs in to /v1 only");
    let nowhere = server
        .client
        .get(server.url("/v1/files"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("sent");
    assert_eq!(nowhere.status(), 404);
    let body: Value = nowhere.json().await.expect("json");
    assert!(
        error(&body).0.contains("POST /v1/chat/completions"),
        "{body}"
    );

    let wrong = server
        .client
        .get(server.url("/v1/chat/completions"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("sent");
    assert_eq!(wrong.status(), 405);
    let body: Value = wrong.json().await.expect("json");
    assert_eq!(error(&body).1, "invalid_request_error", "{body}");

    // A 10 MB message, and a request of 1,000 messages.
    let (status, body) = oversized(&server, &alice, 10 * 1024 * 1024).await;
    assert_eq!(status, 413, "{body}");
    assert!(error(&body).0.contains("larger than the 2 MiB"), "{body}");
    let many: Vec<Value> = (0..1000)
        .map(|n| {
            let role = if n % 2 == 0 { "user" } else { "assistant" };
            json!({ "role": role, "content": "x" })
        })
        .chain([json!({ "role": "user", "content": "last" })])
        .collect();
    let (status, body) = complete(
        &server,
        &alice,
        &json!({ "model": "helper", "messages": many }),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(error(&body).2, Some("messages"), "{body}");
    assert!(error(&body).0.contains("past the limit of 500"), "{body}");
    // A message past the page's limit is refused with the page's sentence.
    let (status, body) = complete(
        &server,
        &alice,
        &json!({ "model": "helper", "messages": [{ "role": "user", "content": "y".repeat(100_001) }] }),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error(&body).0.contains("past the limit of 100000"),
        "{body}"
    );
    assert!(
        alices_conversations(&server).await.is_empty(),
        "refusals keep nothing"
    );

    // Another organisation's conversation is not found, and its agent is none of gina's.
    let (status, body) = complete(
        &server,
        &alice,
        &json!({ "model": "helper", "messages": hi, "store": true }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let hers = body["portal"]["conversation"]
        .as_str()
        .expect("a conversation");
    let (status, body) = complete(
        &server,
        &gina,
        &json!({ "model": "helper", "messages": hi, "conversation": hers }),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(error(&body).2, Some("conversation"), "{body}");
    let (status, _) = complete(
        &server,
        &gina,
        &json!({ "model": "worker", "messages": hi }),
    )
    .await;
    assert_eq!(status, 404);
    // A history the portal did not hold is refused, and one that is not the conversation's.
    let told = json!([
        { "role": "user", "content": "made up" },
        { "role": "assistant", "content": "never said" },
        { "role": "user", "content": "go on" }
    ]);
    let (status, body) = complete(
        &server,
        &alice,
        &json!({ "model": "helper", "messages": told }),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error(&body).0.contains("which the portal did not hold"),
        "{body}"
    );
    let (status, body) = complete(
        &server,
        &alice,
        &json!({ "model": "helper", "messages": told, "conversation": hers }),
    )
    .await;
    assert_eq!(status, 409, "{body}");

    // `store: false` answers, then forgets the conversation.
    let before = alices_conversations(&server).await;
    let (status, body) = complete(
        &server,
        &alice,
        &json!({ "model": "helper", "messages": hi, "store": false }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let forgotten = body["portal"]["conversation"]
        .as_str()
        .expect("an id")
        .to_string();
    until(
        "the conversation to be forgotten",
        Duration::from_secs(30),
        || {
            let server = &server;
            let forgotten = forgotten.clone();
            async move { (!alices_conversations(server).await.contains(&forgotten)).then_some(()) }
        },
    )
    .await;
    assert_eq!(alices_conversations(&server).await, before);

    // A stream abandoned after its first words: the turn is cut off and recorded so.
    let mut response = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&alice)
        .json(&json!({
            "model": "helper",
            "stream": true,
            "messages": [{ "role": "user", "content": "Tell me a long story about herons" }]
        }))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
    let mut read = String::new();
    while !read.contains("\"content\":\"") || read.matches("data:").count() < 3 {
        let chunk = response.chunk().await.expect("read").expect("more");
        read.push_str(&String::from_utf8_lossy(&chunk));
    }
    let id = read
        .split("chatcmpl-")
        .nth(1)
        .and_then(|rest| rest.rsplit_once('-').map(|(id, _)| id.to_string()))
        .expect("the answer's id names the conversation");
    drop(response);
    let (status, _) = until(
        "the abandoned turn to be cut off",
        Duration::from_secs(30),
        || {
            let answer = server
                .client
                .get(server.url(&format!("/api/conversations/{id}")))
                .bearer_auth("alice")
                .send();
            async move {
                let body: Value = answer.await.ok()?.json().await.ok()?;
                let status = body["turns"][0]["status"].as_str()?.to_string();
                (status != "running").then_some(status)
            }
        },
    )
    .await;
    assert_eq!(status, "cut_off");
}

#[tokio::test]
async fn keys_are_made_within_limits_seen_once_and_revoked_only_by_their_owner() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let identity = organisations(&dir.path().join("config"));
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    let server = common::start_config(portal_server::Config {
        identity: Some(identity),
        limits: portal_server::limits::Limits {
            api_keys_per_user: 2,
            ..portal_server::limits::Limits::DEFAULT
        },
        ..common::config(&data, 0.0, None)
    })
    .await;
    for (body, said) in [
        (json!({ "name": "  " }), "1 to 80 characters"),
        (json!({ "name": "x".repeat(81) }), "1 to 80 characters"),
        (
            json!({ "name": "k", "agents": ["nobody"] }),
            "no agent `nobody`",
        ),
        (
            json!({ "name": "k", "expires_in_days": 0 }),
            "1 to 365 days",
        ),
        (
            json!({ "name": "k", "expires_in_days": 366 }),
            "1 to 365 days",
        ),
    ] {
        let (status, answer) = make_key(&server, "alice", body.clone()).await;
        assert_eq!(status, 422, "{body}: {answer}");
        assert!(
            answer["error"].as_str().expect("error").contains(said),
            "{answer}"
        );
    }
    // Globex's agent list is globex's: acme's `worker` is none of gina's.
    let (status, _) = make_key(
        &server,
        "gina",
        json!({ "name": "k", "agents": ["worker"] }),
    )
    .await;
    assert_eq!(status, 422);
    let (_, first) = key(&server, "alice", json!({ "name": "one" })).await;
    key(&server, "alice", json!({ "name": "two" })).await;
    let (status, answer) = make_key(&server, "alice", json!({ "name": "three" })).await;
    assert_eq!(status, 409, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .expect("error")
            .contains("the most one person may have")
    );
    // The list shows no secret, and another user cannot revoke a key that is not theirs.
    let listed = server
        .client
        .get(server.url("/api/keys"))
        .bearer_auth("alice")
        .send()
        .await
        .expect("listed")
        .text()
        .await
        .expect("text");
    assert!(
        !listed.contains("secret") && !listed.contains("sha256"),
        "{listed}"
    );
    for user in ["bob", "gina"] {
        let answer = server
            .client
            .delete(server.url(&format!("/api/keys/{first}")))
            .bearer_auth(user)
            .send()
            .await
            .expect("sent");
        assert_eq!(answer.status(), 404, "{user}");
    }
    let answer = server
        .client
        .delete(server.url(&format!("/api/keys/{first}")))
        .bearer_auth("alice")
        .send()
        .await
        .expect("sent");
    assert_eq!(answer.status(), 204);
    key(&server, "alice", json!({ "name": "three" })).await;
}
