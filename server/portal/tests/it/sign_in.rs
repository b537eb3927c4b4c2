//! Signing in with a password, the session cookie, and conversations that belong to the user who
//! opened them (docs/identity.md, "Signing in"). A real server in users mode: alice and bob in
//! organisation acme, carol in globex.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};

use common::session_cookie;

const PASSWORD: &str = "correct horse battery";

struct Portal {
    base: String,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// A signed-in browser: its session cookie, sent with the page's own `Origin`.
struct Browser<'a> {
    portal: &'a Portal,
    cookie: String,
}

fn configure(config: &Path) {
    for (org, user) in [("acme", "alice"), ("acme", "bob"), ("globex", "carol")] {
        portal_identity::add_user(config, org, user, &user.to_uppercase(), PASSWORD)
            .expect("user added");
    }
    let private = config.join("organisations/acme/users/alice/skills/drafts");
    std::fs::create_dir_all(&private).expect("skill folder");
    std::fs::write(
        private.join("SKILL.md"),
        "---\nname: drafts\ndescription: Alice's drafting notes.\n---\nAlice's secret recipe.\n",
    )
    .expect("skill written");
    std::fs::create_dir_all(config.join("organisations/acme/agents")).expect("agents folder");
    std::fs::write(
        config.join("organisations/acme/agents/assistant.toml"),
        "name = \"Assistant\"\nskills = [\"drafts\"]\n",
    )
    .expect("agent written");
}

async fn start(sessions: portal_server::sessions::SessionConfig) -> Portal {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config");
    configure(&config);
    let server = common::start_config(portal_server::Config {
        identity: Some(portal_identity::Identity::load(&config).expect("identity")),
        sessions,
        ..common::config(&dir.path().join("data"), 0.0, None)
    })
    .await;
    Portal {
        base: server.base,
        client: server.client,
        _dir: dir,
    }
}

impl Portal {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn origin(&self) -> String {
        self.base.clone()
    }

    async fn sign_in_as(
        &self,
        organisation: &str,
        user: &str,
        password: &str,
    ) -> reqwest::Response {
        self.sign_in_request(organisation, user, password)
            .send()
            .await
            .expect("answer")
    }

    /// A sign-in as the portal's page sends it.
    fn sign_in_request(
        &self,
        organisation: &str,
        user: &str,
        password: &str,
    ) -> reqwest::RequestBuilder {
        self.client
            .post(self.url("/api/session"))
            .header(ORIGIN, self.origin())
            .json(&json!({ "organisation": organisation, "user": user, "password": password }))
    }

    async fn browser(&self, organisation: &str, user: &str) -> Browser<'_> {
        let response = self.sign_in_as(organisation, user, PASSWORD).await;
        assert_eq!(response.status(), StatusCode::OK);
        Browser {
            portal: self,
            cookie: session_cookie(response.headers()).expect("a session cookie"),
        }
    }
}

impl Browser<'_> {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self
            .portal
            .client
            .request(method, self.portal.url(path))
            .header(COOKIE, format!("portal_session={}", self.cookie))
            .header(ORIGIN, self.portal.origin());
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("answer");
        let status = response.status();
        let text = response.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn conversation(&self) -> String {
        let (status, body) = self.call("POST", "/api/conversations", None).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().expect("id").to_string()
    }

    /// Sends a message and waits for its turn to end.
    async fn send(&self, id: &str, text: &str) {
        let (status, body) = self
            .call(
                "POST",
                &format!("/api/conversations/{id}/messages"),
                Some(json!({ "text": text })),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        for _ in 0..200 {
            let (_, page) = self.call("GET", "/api/conversations", None).await;
            let running = page["conversations"]
                .as_array()
                .expect("a list")
                .iter()
                .any(|c| c["id"] == id && c["status"] == "running");
            if !running {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the turn did not end");
    }
}

fn set_cookie(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .expect("Set-Cookie")
        .to_string()
}

#[tokio::test]
async fn signing_in_sets_a_strict_http_only_cookie_and_the_session_names_the_user() {
    let portal = start(Default::default()).await;
    let response = portal.sign_in_as("acme", "alice", PASSWORD).await;
    assert_eq!(response.status(), StatusCode::OK);
    let cookie = set_cookie(&response);
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=1209600"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    let id = session_cookie(response.headers()).expect("id");
    assert!(id.len() >= 43, "256 bits: {id}");
    let body: Value = response.json().await.expect("json");
    assert_eq!(
        body,
        json!({ "mode": "users", "organisation": "acme", "user": "alice", "name": "ALICE" })
    );
    let browser = Browser {
        portal: &portal,
        cookie: id,
    };
    let (status, body) = browser.call("GET", "/api/session", None).await;
    assert_eq!(
        (status, body["user"].clone()),
        (StatusCode::OK, json!("alice"))
    );
    let (status, _) = browser.call("GET", "/api/agents", None).await;
    assert_eq!(status, StatusCode::OK, "the cookie signs API calls in");
}

#[tokio::test]
async fn served_over_https_the_cookie_is_secure_and_only_that_origin_may_change_things() {
    let portal = start(portal_server::sessions::SessionConfig {
        public_origin: Some("https://chat.example.com".into()),
        ..Default::default()
    })
    .await;
    let response = portal
        .client
        .post(portal.url("/api/session"))
        .header(ORIGIN, "https://chat.example.com")
        .json(&json!({ "organisation": "acme", "user": "alice", "password": PASSWORD }))
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(set_cookie(&response).contains("Secure"));
    let id = session_cookie(response.headers()).expect("id");
    let post = |origin: &'static str| {
        portal
            .client
            .post(portal.url("/api/conversations"))
            .header(COOKIE, format!("portal_session={id}"))
            .header(ORIGIN, origin)
            .send()
    };
    assert_eq!(
        post("https://chat.example.com")
            .await
            .expect("answer")
            .status(),
        StatusCode::CREATED
    );
    assert_eq!(
        post("http://chat.example.com")
            .await
            .expect("answer")
            .status(),
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_the_sixth_quick_failure_waits() {
    let portal = start(Default::default()).await;
    for attempt in 1..=5 {
        let response = portal.sign_in_as("acme", "alice", "wrong password").await;
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "attempt {attempt}"
        );
        assert!(session_cookie(response.headers()).is_none());
        let body: Value = response.json().await.expect("json");
        assert!(
            body["error"].as_str().expect("error").contains("wrong"),
            "{body}"
        );
    }
    let response = portal.sign_in_as("acme", "alice", PASSWORD).await;
    assert_eq!(
        response.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "even the right one waits"
    );
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["retry_after"], wait);
    assert!(
        body["error"]
            .as_str()
            .expect("error")
            .contains(&format!("try again in {wait} seconds"))
    );
    let unknown = portal.sign_in_as("acme", "nobody", PASSWORD).await;
    assert_eq!(
        unknown.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "the address waits too"
    );
}

#[tokio::test]
async fn an_unknown_user_is_refused_like_a_wrong_password_and_a_malformed_sign_in_is_422() {
    let portal = start(Default::default()).await;
    let unknown = portal.sign_in_as("acme", "mallory", PASSWORD).await;
    assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
    let unknown: Value = unknown.json().await.expect("json");
    let wrong: Value = portal
        .sign_in_as("acme", "alice", "nope")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(unknown, wrong, "the answer does not tell which was wrong");
    for malformed in [
        json!({}),
        json!({ "organisation": "acme", "user": "alice" }),
        json!("x"),
    ] {
        let response = portal
            .client
            .post(portal.url("/api/session"))
            .json(&malformed)
            .send()
            .await
            .expect("answer");
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{malformed}"
        );
    }
}

#[tokio::test]
async fn a_cookie_request_from_another_site_is_refused_and_a_signed_out_cookie_is_dead() {
    let portal = start(Default::default()).await;
    let alice = portal.browser("acme", "alice").await;
    let cookie = format!("portal_session={}", alice.cookie);
    for origin in [Some("http://evil.example"), None] {
        let mut request = portal
            .client
            .post(portal.url("/api/conversations"))
            .header(COOKIE, &cookie);
        if let Some(origin) = origin {
            request = request.header(ORIGIN, origin);
        }
        let response = request.send().await.expect("answer");
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{origin:?}");
    }
    let cross_site = portal
        .client
        .post(portal.url("/api/conversations"))
        .header(COOKIE, &cookie)
        .header("sec-fetch-site", "cross-site")
        .header(ORIGIN, portal.origin())
        .send()
        .await
        .expect("answer");
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    let forged_sign_in = portal
        .client
        .post(portal.url("/api/session"))
        .header(ORIGIN, "http://evil.example")
        .json(&json!({ "organisation": "acme", "user": "alice", "password": PASSWORD }))
        .send()
        .await
        .expect("answer");
    assert_eq!(
        forged_sign_in.status(),
        StatusCode::FORBIDDEN,
        "no sign-in from another site"
    );

    let (status, _) = alice.call("DELETE", "/api/session", None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = alice.call("GET", "/api/conversations", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(
        body["error"]
            .as_str()
            .expect("error")
            .contains("sign in again"),
        "{body}"
    );
    let (status, _) = alice.call("GET", "/api/session", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_session_survives_a_restart_and_expires_after_its_lifetime_without_use() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config");
    configure(&config);
    let data = dir.path().join("data");
    let lifetime = ["--session-lifetime", "3s"];
    let (mut first, base) = serve(&config, &data, &lifetime);
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{base}/api/session"))
        .json(&json!({ "organisation": "acme", "user": "bob", "password": PASSWORD }))
        .send()
        .await
        .expect("answer");
    let cookie = format!(
        "portal_session={}",
        session_cookie(response.headers()).expect("cookie")
    );
    first.kill().expect("stopped");
    first.wait().expect("reaped");

    let (mut second, base) = serve(&config, &data, &lifetime);
    let whoami = || {
        client
            .get(format!("{base}/api/session"))
            .header(COOKIE, &cookie)
            .send()
    };
    assert_eq!(
        whoami().await.expect("answer").status(),
        StatusCode::OK,
        "kept across a restart"
    );
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    assert_eq!(
        whoami().await.expect("answer").status(),
        StatusCode::OK,
        "use slides the expiry"
    );
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    assert_eq!(
        whoami().await.expect("answer").status(),
        StatusCode::UNAUTHORIZED,
        "expired"
    );
    second.kill().expect("stopped");
    second.wait().expect("reaped");
}

#[tokio::test]
async fn a_changed_password_ends_the_sessions_signed_in_with_the_old_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config");
    configure(&config);
    let data = dir.path().join("data");
    let (mut first, base) = serve(&config, &data, &[]);
    let client = reqwest::Client::new();
    let sign_in = |base: String, password: &'static str| {
        client
            .post(format!("{base}/api/session"))
            .json(&json!({ "organisation": "acme", "user": "alice", "password": password }))
            .send()
    };
    let response = sign_in(base.clone(), PASSWORD).await.expect("answer");
    let cookie = format!(
        "portal_session={}",
        session_cookie(response.headers()).expect("cookie")
    );
    first.kill().expect("stopped");
    first.wait().expect("reaped");

    portal_identity::set_password(&config, "acme", "alice", "a brand new password")
        .expect("password set");
    let file = std::fs::read_to_string(config.join("organisations/acme/users/alice/user.toml"))
        .expect("file");
    assert!(
        file.contains("name = \"ALICE\""),
        "the rest of the file is kept: {file}"
    );

    let (mut second, base) = serve(&config, &data, &[]);
    let whoami = client
        .get(format!("{base}/api/session"))
        .header(COOKIE, &cookie)
        .send();
    assert_eq!(
        whoami.await.expect("answer").status(),
        StatusCode::UNAUTHORIZED
    );
    let old = sign_in(base.clone(), PASSWORD).await.expect("answer");
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
    let new = sign_in(base, "a brand new password").await.expect("answer");
    assert_eq!(new.status(), StatusCode::OK);
    second.kill().expect("stopped");
    second.wait().expect("reaped");
}

/// Starts `portal serve` in users mode on `config` and `data`; returns it and its address.
fn serve(config: &Path, data: &Path, extra: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["serve", "--port", "0", "--demo-pace", "0"])
        .args(extra)
        .arg("--config")
        .arg(config)
        .arg("--data")
        .arg(data)
        .arg("--dist")
        .arg(data.join("no-dist"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("portal starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let base = loop {
        let line = lines.next().expect("a line").expect("text");
        if let Some(url) = line.strip_prefix("Portal is serving on ") {
            break url.trim().to_string();
        }
    };
    (child, base)
}

#[tokio::test]
async fn a_colleague_gets_404_for_a_conversation_and_everything_under_it() {
    let portal = start(Default::default()).await;
    let alice = portal.browser("acme", "alice").await;
    let bob = portal.browser("acme", "bob").await;
    let carol = portal.browser("globex", "carol").await;
    let id = alice.conversation().await;
    alice.send(&id, "ask me to publish two notes").await;

    let routes = [
        ("GET", format!("/api/conversations/{id}"), None),
        ("GET", format!("/api/conversations/{id}/agent"), None),
        (
            "PATCH",
            format!("/api/conversations/{id}"),
            Some(json!({ "title": "mine" })),
        ),
        ("DELETE", format!("/api/conversations/{id}"), None),
        (
            "POST",
            format!("/api/conversations/{id}/messages"),
            Some(json!({ "text": "/drafts tell me" })),
        ),
        (
            "GET",
            format!("/api/conversations/{id}/turns/1/events"),
            None,
        ),
        (
            "POST",
            format!("/api/conversations/{id}/turns/1/cancel"),
            Some(json!({})),
        ),
        (
            "POST",
            format!("/api/conversations/{id}/turns/1/decisions"),
            Some(json!({ "decisions": [] })),
        ),
        (
            "POST",
            format!("/api/conversations/{id}/turns/1/answer"),
            Some(json!({ "text": "yes" })),
        ),
    ];
    for colleague in [&bob, &carol] {
        for (method, path, body) in &routes {
            let (status, answer) = colleague.call(method, path, body.clone()).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {answer}");
        }
        let (_, page) = colleague.call("GET", "/api/conversations", None).await;
        assert_eq!(
            page["conversations"],
            json!([]),
            "nobody else's in the list"
        );
    }
    let (status, transcript) = alice
        .call("GET", &format!("/api/conversations/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        transcript["turns"].as_array().expect("turns").len(),
        1,
        "nothing recorded"
    );
    assert!(!transcript.to_string().contains("secret recipe"));

    let own = bob.conversation().await;
    let (status, body) = bob
        .call(
            "POST",
            &format!("/api/conversations/{own}/messages"),
            Some(json!({ "text": "/drafts tell me" })),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "alice's private skill: {body}"
    );
}

#[tokio::test]
async fn a_colleague_cannot_read_an_attachment_used_in_a_conversation() {
    let portal = start(Default::default()).await;
    let alice = portal.browser("acme", "alice").await;
    let bob = portal.browser("acme", "bob").await;
    let uploaded: Value = portal
        .client
        .post(portal.url("/api/attachments?filename=notes.txt"))
        .header(COOKIE, format!("portal_session={}", alice.cookie))
        .header(ORIGIN, portal.origin())
        .body("Quarterly numbers.")
        .send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("json");
    let attachment = uploaded["id"].as_str().expect("id");
    let (status, _) = alice
        .call("GET", &format!("/api/attachments/{attachment}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = bob
        .call("GET", &format!("/api/attachments/{attachment}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let own = bob.conversation().await;
    let (status, _) = bob
        .call(
            "POST",
            &format!("/api/conversations/{own}/messages"),
            Some(json!({ "text": "summarise", "attachments": [attachment] })),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nor send it as his");
}

#[tokio::test]
async fn user_add_then_sign_in_works_and_the_password_is_kept_only_as_a_hash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config");
    let add = |user: &str, password: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_portal"))
            .args(["user", "add", "--name", "Dana Example", "--config"])
            .arg(&config)
            .args(["initech", user])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("portal user add");
        writeln!(child.stdin.take().expect("stdin"), "{password}").expect("password sent");
        child.wait_with_output().expect("it ends")
    };
    let short = add("dana", "short");
    assert!(!short.status.success());
    assert!(
        String::from_utf8_lossy(&short.stderr).contains("shorter than 8"),
        "{short:?}"
    );
    let added = add("dana", "a long enough password");
    assert!(added.status.success(), "{added:?}");
    let again = add("dana", "a long enough password");
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("exists already"),
        "{again:?}"
    );

    let file = std::fs::read_to_string(config.join("organisations/initech/users/dana/user.toml"))
        .expect("user file");
    assert!(file.contains("password_argon2id = \"$argon2id$"), "{file}");
    assert!(!file.contains("a long enough password"));

    let data = dir.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["serve", "--port", "0", "--demo-pace", "0", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(&data)
        .arg("--dist")
        .arg(data.join("no-dist"))
        .env("RUST_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("portal serve");
    let stdout = child.stdout.take().expect("stdout");
    let (base_sender, base) = std::sync::mpsc::channel();
    let logs = std::thread::spawn(move || {
        use std::io::Read;
        let mut text = String::new();
        let mut reader = std::io::BufReader::new(stdout);
        let mut line = String::new();
        while std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) > 0 {
            if let Some(url) = line.strip_prefix("Portal is serving on ") {
                base_sender.send(url.trim().to_string()).expect("sent");
            }
            text.push_str(&line);
            line.clear();
        }
        reader.read_to_string(&mut text).ok();
        text
    });
    let base = base.recv_timeout(Duration::from_secs(20)).expect("serving");
    let client = reqwest::Client::new();
    for password in ["a wrong password", "a long enough password"] {
        let response = client
            .post(format!("{base}/api/session"))
            .json(&json!({ "organisation": "initech", "user": "dana", "password": password }))
            .send()
            .await
            .expect("answer");
        let expected = if password.contains("wrong") {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::OK
        };
        assert_eq!(response.status(), expected);
    }
    child.kill().expect("stopped");
    let stderr = {
        use std::io::Read;
        let mut text = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut text)
            .ok();
        text
    };
    child.wait().expect("reaped");
    let stdout = logs.join().expect("logs read");
    let logged = format!("{stdout}{stderr}");
    assert!(logged.contains("initech/dana signed in"), "{logged}");
    for password in ["a wrong password", "a long enough password"] {
        assert!(!logged.contains(password), "a password was logged");
        let database = std::fs::read(data.join(portal_store_sqlite::DATABASE_FILE)).expect("db");
        let wal = std::fs::read(data.join(format!("{}-wal", portal_store_sqlite::DATABASE_FILE)))
            .unwrap_or_default();
        for bytes in [database, wal] {
            assert!(
                !bytes
                    .windows(password.len())
                    .any(|w| w == password.as_bytes()),
                "a password was stored"
            );
        }
    }
}

// The server's handlers run on several threads, as in `portal serve`, so the guesses race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn guesses_sent_all_at_once_are_throttled_like_guesses_one_after_another() {
    let portal = start(Default::default()).await;
    let guesses = (0..40).map(|n| {
        let portal = &portal;
        async move {
            portal
                .sign_in_as("acme", "alice", &format!("guess {n}"))
                .await
                .status()
        }
    });
    let answers = futures_util::future::join_all(guesses).await;
    let (checked, refused) = common::checked_and_refused(&answers);
    assert_eq!(checked + refused, 40, "{answers:?}");
    // Each guess takes its place among the failures before it waits for its check, so exactly
    // as many are checked as one after another.
    assert_eq!(
        checked,
        portal_server::sessions::FAILURES,
        "{checked} guesses were checked: {answers:?}"
    );
}

/// Signs `user` of acme in with `password`, through a proxy that says the client is `client`.
async fn sign_in_forwarded_for(
    portal: &Portal,
    client: &str,
    user: &str,
    password: &str,
) -> StatusCode {
    portal
        .sign_in_request("acme", user, password)
        .header("X-Forwarded-For", client)
        .send()
        .await
        .expect("answer")
        .status()
}

// Behind a trusted proxy (`--trusted-proxy`), failed sign-ins count against the client the proxy
// names, so one guesser cannot lock out everyone else behind the same proxy; a connection that is
// not from a trusted proxy cannot name another address to escape its own count.
#[tokio::test]
async fn behind_a_trusted_proxy_failures_count_against_the_client_it_names() {
    let behind_proxy = start(portal_server::sessions::SessionConfig {
        trusted_proxies: vec![portal_server::sessions::parse_trusted_proxy("127.0.0.1").unwrap()],
        ..Default::default()
    })
    .await;
    for _ in 0..5 {
        let status = sign_in_forwarded_for(&behind_proxy, "198.51.100.1", "nobody", "guess").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        sign_in_forwarded_for(&behind_proxy, "198.51.100.1", "bob", PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS,
        "the guesser's address waits"
    );
    assert_eq!(
        sign_in_forwarded_for(&behind_proxy, "198.51.100.2", "bob", PASSWORD).await,
        StatusCode::OK,
        "another client behind the same proxy signs in"
    );
    assert_eq!(
        sign_in_forwarded_for(
            &behind_proxy,
            "198.51.100.2, 198.51.100.1",
            "alice",
            PASSWORD
        )
        .await,
        StatusCode::TOO_MANY_REQUESTS,
        "what a client writes into the header is left of the address the proxy adds"
    );

    let direct = start(Default::default()).await;
    for _ in 0..5 {
        let status = sign_in_forwarded_for(&direct, "198.51.100.1", "nobody", "guess").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        sign_in_forwarded_for(&direct, "198.51.100.2", "bob", PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS,
        "without trusted proxies the header names nobody"
    );
}

/// A portal whose configuration is `config`, keeping its data in `data`.
async fn portal_of(config: &Path, data: &Path) -> common::Server {
    common::start_config(portal_server::Config {
        identity: Some(portal_identity::Identity::load(config).expect("identity")),
        ..common::config(data, 0.0, None)
    })
    .await
}

/// The sign-in page's fragment for `asked` (`GET /sso/buttons?organisation=`).
async fn sign_in_fragment(server: &common::Server, asked: &str) -> String {
    server
        .client
        .get(server.url(&format!("/sso/buttons?organisation={asked}&return_to=/")))
        .send()
        .await
        .expect("asked")
        .text()
        .await
        .expect("text")
}

#[tokio::test]
async fn the_sign_in_page_is_given_a_portals_only_organisation_and_told_what_to_type_otherwise() {
    let dir = tempfile::tempdir().expect("tempdir");
    let one = dir.path().join("one");
    portal_identity::add_user(&one, "acme", "alice", "Alice", PASSWORD).expect("user added");
    let server = portal_of(&one, &dir.path().join("data-one")).await;
    let mark = "<span data-organisation=\"acme\" hidden></span>";
    for asked in ["", "acme"] {
        assert_eq!(
            sign_in_fragment(&server, asked).await,
            mark,
            "asked for `{asked}`"
        );
    }
    let several = dir.path().join("several");
    configure(&several);
    let server = portal_of(&several, &dir.path().join("data-several")).await;
    let fragment = sign_in_fragment(&server, "").await;
    assert!(
        fragment.contains("Type your organisation's id") && !fragment.contains("acme\""),
        "a portal of several names none: {fragment}"
    );
    assert_eq!(
        sign_in_fragment(&server, "acme").await,
        "",
        "an organisation of several, with passwords only"
    );
}
