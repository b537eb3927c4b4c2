//! Attacks on the HTTP layer and on local mode, against a real server on loopback: missing
//! security headers, slow headers and bodies, unauthenticated bodies, unknown API paths, DNS
//! rebinding and other sites' pages (docs/security.md, "HTTP and local mode").

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use common::{Server, config, start_config};
use portal_core::TurnStatus;
use portal_core::stream::TurnEvent;
use portal_identity::{Identity, Mode, TokenDigest};
use portal_server::front::{HttpConfig, RemoteWithoutSignIn, check_listen_address};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "alice-secret-token";

/// The page Trunk writes: one inline module script that loads the app.
const INDEX: &str = "<!DOCTYPE html><html><head>\n<script type=\"module\">\nimport init from '/app.js';\nawait init();\n</script>\n</head><body></body></html>\n";
const INLINE_SCRIPT: &str = "\nimport init from '/app.js';\nawait init();\n";

/// A web app in `dir`: the page and one script.
fn web_app(dir: &Path) -> std::path::PathBuf {
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).expect("mkdir");
    std::fs::write(dist.join("index.html"), INDEX).expect("write");
    std::fs::write(dist.join("app.js"), "export default function init() {}\n").expect("write");
    dist
}

/// A configuration directory with one organisation and its user alice, who signs in with TOKEN.
fn users(dir: &Path) -> Identity {
    let root = dir.join("config");
    let user = root.join("organisations/acme/users/alice");
    std::fs::create_dir_all(&user).expect("mkdir");
    std::fs::write(
        root.join("organisations/acme/organisation.toml"),
        "name = \"Acme\"\n",
    )
    .expect("write");
    std::fs::write(
        user.join("user.toml"),
        format!(
            "name = \"Alice\"\ntoken_sha256 = \"{}\"\n",
            TokenDigest::of(TOKEN).to_hex()
        ),
    )
    .expect("write");
    Identity::load(&root).expect("identity")
}

/// Local mode with a web app and `http`.
async fn local(dir: &Path, http: HttpConfig) -> Server {
    let mut config = config(&dir.join("data"), 0.0, None);
    config.dist = web_app(dir);
    config.http = http;
    start_config(config).await
}

/// Users mode (alice) with a web app and the default limits.
async fn signed(dir: &Path) -> Server {
    let mut config = config(&dir.join("data"), 0.0, None);
    config.dist = web_app(dir);
    config.identity = Some(users(dir));
    start_config(config).await
}

fn address(server: &Server) -> String {
    server.base.trim_start_matches("http://").to_string()
}

/// An answer read off the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// Reads one answer from `stream` up to the connection's end (or its reset, once the answer is
/// in).
async fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP answer, not {text:?}"));
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// Sends `request` as written (a head, maybe a body) on a new connection and reads the answer.
async fn raw(server: &Server, request: &str) -> Answer {
    let mut stream = TcpStream::connect(address(server)).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    read_answer(&mut stream).await
}

/// A request head with `Host` set to the server's own address and `Connection: close`, plus
/// `extra` header lines.
fn head(server: &Server, method: &str, path: &str, extra: &[&str]) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        address(server)
    );
    for line in extra {
        text.push_str(line);
        text.push_str("\r\n");
    }
    text.push_str("\r\n");
    text
}

fn assert_security_headers(what: &str, headers: &reqwest::header::HeaderMap) {
    let digest = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(INLINE_SCRIPT));
    let policy = headers
        .get("content-security-policy")
        .unwrap_or_else(|| panic!("{what}: a Content-Security-Policy"))
        .to_str()
        .expect("ascii");
    assert!(
        policy.contains(&format!(
            "script-src 'self' 'wasm-unsafe-eval' 'sha256-{digest}';"
        )),
        "{what}: only the app's scripts, its inline loader and wasm: {policy}"
    );
    for directive in [
        "default-src 'none'",
        "connect-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(
            policy.contains(directive),
            "{what}: {directive} in {policy}"
        );
    }
    assert_eq!(headers["x-content-type-options"], "nosniff", "{what}");
    assert_eq!(headers["referrer-policy"], "no-referrer", "{what}");
}

#[tokio::test]
async fn security_headers_are_on_api_static_error_refusal_and_event_stream_answers_and_api_ones_are_not_stored()
 {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = local(dir.path(), HttpConfig::default()).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "hello").await;
    let get = |path: &str| server.client.get(server.url(path)).send();

    let answers = [
        ("API", get("/api/info").await.expect("info"), 200),
        ("page", get("/").await.expect("page"), 200),
        ("script", get("/app.js").await.expect("script"), 200),
        (
            "client route",
            get("/c/anything").await.expect("route"),
            200,
        ),
        (
            "unknown API path",
            get("/api/nope").await.expect("nope"),
            404,
        ),
        (
            "API error",
            get("/api/conversations/nope").await.expect("missing"),
            404,
        ),
        (
            "event stream",
            get(&format!("/api/conversations/{id}/turns/{turn}/events"))
                .await
                .expect("events"),
            200,
        ),
        (
            "refusal",
            server
                .client
                .get(server.url("/api/info"))
                .header("Origin", "http://evil.example")
                .send()
                .await
                .expect("refused"),
            403,
        ),
        (
            "body refusal",
            server
                .client
                .post(server.url(&format!("/api/conversations/{id}/messages")))
                .header("content-type", "text/plain")
                .body("hi")
                .send()
                .await
                .expect("refused"),
            415,
        ),
    ];
    for (what, response, status) in answers {
        assert_eq!(response.status().as_u16(), status, "{what}");
        assert_security_headers(what, response.headers());
        // API answers, refusals and streams included, are for no cache; the app's files are.
        let api = !matches!(what, "page" | "script" | "client route");
        assert_eq!(
            response
                .headers()
                .get("cache-control")
                .map(|v| v.as_bytes()),
            api.then_some(b"no-store".as_slice()),
            "{what}"
        );
        // Only the event stream asks proxies not to buffer it (docs/deploy.md).
        assert_eq!(
            response
                .headers()
                .get("x-accel-buffering")
                .map(|v| v.as_bytes()),
            (what == "event stream").then_some(b"no".as_slice()),
            "{what}"
        );
    }
}

#[tokio::test]
async fn slow_headers_are_cut_off_at_the_header_read_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let timeout = Duration::from_millis(800);
    let server = local(
        dir.path(),
        HttpConfig {
            header_read_timeout: timeout,
            ..HttpConfig::default()
        },
    )
    .await;
    // Slowloris: a head that never ends, one header line every 100 ms.
    let mut stream = TcpStream::connect(address(&server)).await.expect("connect");
    let started = Instant::now();
    stream
        .write_all(head(&server, "GET", "/api/info", &[]).trim_end().as_bytes())
        .await
        .expect("write");
    let mut drip = tokio::time::interval(Duration::from_millis(100));
    let mut answered = Vec::new();
    let closed = loop {
        let mut byte = [0u8; 1024];
        tokio::select! {
            read = stream.read(&mut byte) => match read {
                Ok(0) | Err(_) => break started.elapsed(),
                Ok(n) => answered.extend_from_slice(&byte[..n]),
            },
            _ = drip.tick() => {
                if stream.write_all(b"\r\nX-Slow: 1").await.is_err() {
                    break started.elapsed();
                }
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the slow connection is still open after 5 s"
        );
    };
    eprintln!("slow-header connection closed after {closed:?} (header read timeout {timeout:?})");
    assert!(
        closed >= timeout && closed < timeout + Duration::from_millis(700),
        "closed after {closed:?}, expected just after {timeout:?}"
    );
    assert!(answered.is_empty(), "no answer to a head that never ended");

    // The same server answers a request that arrives in time.
    let answer = raw(&server, &head(&server, "GET", "/api/info", &[])).await;
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn slow_bodies_get_408_at_their_timeouts_but_an_event_stream_runs_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let timeout = Duration::from_millis(300);
    let upload_timeout = Duration::from_millis(600);
    let mut config = config(&dir.path().join("data"), 0.15, None);
    config.http.request_timeout = timeout;
    config.http.upload_timeout = upload_timeout;
    let server = start_config(config).await;
    let id = server.conversation().await;

    // An upload that stops after 10 of its 100 bytes has the upload timeout.
    let mut stream = TcpStream::connect(address(&server)).await.expect("connect");
    let started = Instant::now();
    let request = head(
        &server,
        "POST",
        "/api/attachments?filename=slow.txt",
        &["Content-Length: 100"],
    );
    stream
        .write_all(format!("{request}0123456789").as_bytes())
        .await
        .expect("write");
    let answer = read_answer(&mut stream).await;
    let took = started.elapsed();
    eprintln!("slow upload answered {} after {took:?}", answer.status);
    assert_eq!(answer.status, 408);
    assert!(answer.body.contains("--upload-timeout"), "{}", answer.body);
    assert!(took >= upload_timeout && took < upload_timeout + Duration::from_millis(700));

    // A body that stops after 10 of its 100 bytes.
    let mut stream = TcpStream::connect(address(&server)).await.expect("connect");
    let started = Instant::now();
    let request = head(
        &server,
        "POST",
        &format!("/api/conversations/{id}/messages"),
        &["Content-Type: application/json", "Content-Length: 100"],
    );
    stream
        .write_all(format!("{request}{{\"text\": ").as_bytes())
        .await
        .expect("write");
    let answer = read_answer(&mut stream).await;
    let took = started.elapsed();
    eprintln!("slow body answered {} after {took:?}", answer.status);
    assert_eq!(answer.status, 408);
    assert!(answer.body.contains("--request-timeout"), "{}", answer.body);
    assert!(took >= timeout && took < timeout + Duration::from_millis(700));
    assert!(
        server.transcript(&id).await.turns.is_empty(),
        "nothing sent"
    );

    // A demo turn at pace 0.15 streams for longer than the request timeout, to its end.
    let turn = server.send(&id, "hello").await;
    let started = Instant::now();
    let events = server.events(&id, turn, None).await;
    let streamed = started.elapsed();
    eprintln!("event stream ran {streamed:?} under a {timeout:?} request timeout");
    assert!(streamed > timeout * 2, "the turn streamed for {streamed:?}");
    assert_eq!(
        events.last().map(|(_, e)| e.clone()),
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::Completed,
            reason: None,
        })
    );
}

#[tokio::test]
async fn an_unauthenticated_50_mb_body_is_refused_401_before_it_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = signed(dir.path()).await;
    const SIZE: usize = 50 * 1024 * 1024;
    for (path, kind) in [
        ("/api/attachments?filename=big.txt", "text/plain"),
        ("/api/conversations/any/messages", "application/json"),
    ] {
        let mut stream = TcpStream::connect(address(&server)).await.expect("connect");
        let started = Instant::now();
        let request = head(
            &server,
            "POST",
            path,
            &[
                &format!("Content-Type: {kind}"),
                &format!("Content-Length: {SIZE}"),
            ],
        );
        stream.write_all(request.as_bytes()).await.expect("head");
        let (mut reader, mut writer) = stream.into_split();
        // The body goes out as fast as the server takes it, while the answer is read.
        let sender = tokio::spawn(async move {
            let chunk = vec![b'a'; 64 * 1024];
            let mut sent = 0;
            while sent < SIZE {
                if writer.write_all(&chunk).await.is_err() {
                    break;
                }
                sent += chunk.len();
            }
            sent
        });
        let mut bytes = Vec::new();
        let _ = reader.read_to_end(&mut bytes).await;
        let took = started.elapsed();
        let sent = sender.await.expect("sender");
        let text = String::from_utf8_lossy(&bytes);
        eprintln!(
            "{path}: answered after {took:?}; {} KiB of the 50 MiB body were sent before the server closed",
            sent / 1024
        );
        assert!(text.starts_with("HTTP/1.1 401"), "{path}: {text}");
        assert!(
            text.to_ascii_lowercase()
                .contains("www-authenticate: bearer"),
            "{path}: {text}"
        );
        assert!(took < Duration::from_secs(1), "{path}: took {took:?}");
        assert!(sent < SIZE / 2, "{path}: the server took {sent} bytes");
    }
}

#[tokio::test]
async fn malformed_requests_without_sign_in_are_401_not_400_413_415_or_422() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = signed(dir.path()).await;
    let json = "Content-Type: application/json";
    for (method, path, kind, body) in [
        ("POST", "/api/conversations", json, "{not json"),
        ("POST", "/api/conversations/any/messages", json, "{not json"),
        (
            "POST",
            "/api/conversations/any/messages",
            "Content-Type: text/plain",
            "hi",
        ),
        (
            "POST",
            "/api/conversations/any/turns/1/decision",
            json,
            "[]",
        ),
        (
            "POST",
            "/api/conversations/any/turns/1/answer",
            json,
            "{\"bad\": 1}",
        ),
        (
            "POST",
            "/api/conversations/any/turns/not-a-number/cancel",
            json,
            "",
        ),
        (
            "GET",
            "/api/conversations/any/turns/1/events?after=-1",
            json,
            "",
        ),
        (
            "POST",
            "/api/attachments?unknown=1",
            "Content-Type: image/png",
            "x",
        ),
        ("GET", "/api/nope", json, ""),
    ] {
        let length = format!("Content-Length: {}", body.len());
        let request = head(&server, method, path, &[kind, &length]) + body;
        let answer = raw(&server, &request).await;
        assert_eq!(answer.status, 401, "{method} {path}: {}", answer.body);
        assert_eq!(answer.header("www-authenticate"), Some("Bearer"), "{path}");
        let error: serde_json::Value = serde_json::from_str(&answer.body).expect("json");
        assert!(error["error"].is_string(), "{path}: {error}");
    }
}

#[tokio::test]
async fn bodies_refused_by_size_type_or_shape_are_answered_in_json_sentences() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = local(dir.path(), HttpConfig::default()).await;
    let id = server.conversation().await;
    let messages = format!("/api/conversations/{id}/messages");
    let big = format!("{{\"text\": \"{}\"}}", "a".repeat(3 * 1024 * 1024));
    let json = "application/json";
    for (path, kind, body, status, says) in [
        (
            messages.as_str(),
            json,
            big.clone(),
            413,
            "larger than the 2 MiB",
        ),
        (
            "/api/conversations",
            json,
            big,
            413,
            "larger than the 2 MiB",
        ),
        (
            messages.as_str(),
            json,
            "{not json".into(),
            400,
            "could not be read",
        ),
        (
            messages.as_str(),
            "text/plain",
            "{\"text\": \"hi\"}".into(),
            415,
            "must be JSON",
        ),
        (
            messages.as_str(),
            json,
            "{\"bad\": 1}".into(),
            422,
            "not what this request takes",
        ),
    ] {
        let response = server
            .client
            .post(server.url(path))
            .header("content-type", kind)
            .body(body)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status().as_u16(), status, "{path} {kind}");
        assert_eq!(
            response.headers()["content-type"],
            "application/json",
            "{path} {kind}"
        );
        let answer: serde_json::Value = response.json().await.expect("json");
        let error = answer["error"].as_str().expect("an error sentence");
        eprintln!("{status}: {error}");
        assert!(error.contains(says), "{path} {kind}: {error}");
        assert!(error.contains("; "), "what to do: {error}");
    }
    assert!(
        server.transcript(&id).await.turns.is_empty(),
        "nothing sent"
    );
}

#[tokio::test]
async fn api_info_needs_sign_in_in_users_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = signed(dir.path()).await;
    let response = server
        .client
        .get(server.url("/api/info"))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let wrong = server
        .client
        .get(server.url("/api/info"))
        .bearer_auth("not-the-token")
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
    let signed_in = server
        .client
        .get(server.url("/api/info"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("answered");
    assert_eq!(signed_in.status(), 200);
    let info: serde_json::Value = signed_in.json().await.expect("json");
    assert_eq!(info["demo"], true);
    // The web app itself needs no token: it is the same for everyone.
    let page = server
        .client
        .get(server.url("/"))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
}

#[tokio::test]
async fn unknown_api_paths_are_404_json_and_other_paths_serve_the_app() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = local(dir.path(), HttpConfig::default()).await;
    for path in ["/api/nope", "/api", "/api/conversations/x/y/z"] {
        let response = server
            .client
            .get(server.url(path))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 404, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let body: serde_json::Value = response.json().await.expect("json");
        assert!(
            body["error"].as_str().expect("error").contains(path),
            "{body}"
        );
    }
    let wrong = server
        .client
        .put(server.url("/api/info"))
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), 405);
    let body: serde_json::Value = wrong.json().await.expect("json");
    assert!(body["error"].as_str().expect("error").contains("PUT"));
    let route = server
        .client
        .get(server.url("/c/some-conversation"))
        .send()
        .await
        .expect("answered");
    assert_eq!(route.status(), 200);
    assert!(
        route
            .headers()
            .get("content-type")
            .is_some_and(|t| t.to_str().unwrap_or_default().starts_with("text/html"))
    );
    assert_eq!(route.text().await.expect("page"), INDEX);
}

#[tokio::test]
async fn a_foreign_host_is_refused_in_local_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = local(dir.path(), HttpConfig::default()).await;
    let port = address(&server)
        .rsplit_once(':')
        .expect("port")
        .1
        .to_string();
    for (method, path, host) in [
        ("GET", "/", "evil.example".to_string()),
        ("GET", "/api/conversations", format!("evil.example:{port}")),
        (
            "POST",
            "/api/conversations",
            format!("rebound.example:{port}"),
        ),
        ("GET", "/api/info", format!("192.168.1.5:{port}")),
    ] {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        );
        let answer = raw(&server, &request).await;
        assert_eq!(answer.status, 403, "{host}");
        assert!(
            answer
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/plain")),
            "{host}"
        );
        assert!(
            answer.body.contains("localhost, 127.0.0.1 or [::1]"),
            "{}",
            answer.body
        );
    }
    let conversations = server.conversation_ids().await;
    assert!(conversations.is_empty(), "nothing was created");
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let request =
            format!("GET /api/info HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        assert_eq!(raw(&server, &request).await.status, 200, "{host}");
    }
}

#[tokio::test]
async fn a_cross_origin_text_plain_post_is_refused_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = local(dir.path(), HttpConfig::default()).await;
    let id = server.conversation().await;
    // The portal's own address with the wrong scheme: a page served over https elsewhere.
    let https = format!("Origin: https://{}", address(&server));
    let attempts = [
        (
            "/api/conversations".to_string(),
            vec!["Origin: http://evil.example", "Sec-Fetch-Site: cross-site"],
        ),
        ("/api/conversations".to_string(), vec![https.as_str()]),
        (
            "/api/attachments?filename=note.txt".to_string(),
            vec!["Origin: http://evil.example"],
        ),
        (
            format!("/api/conversations/{id}/messages"),
            vec!["Origin: null"],
        ),
        (
            format!("/api/conversations/{id}/messages"),
            vec!["Sec-Fetch-Site: same-site"],
        ),
        (
            "/api/conversations".to_string(),
            vec!["Origin: http://localhost:1"],
        ),
    ];
    for (path, extra) in attempts {
        let body = "{\"text\": \"from another site\"}";
        let length = format!("Content-Length: {}", body.len());
        let mut lines = vec!["Content-Type: text/plain", length.as_str()];
        lines.extend(extra.iter().copied());
        let answer = raw(&server, &(head(&server, "POST", &path, &lines) + body)).await;
        assert_eq!(answer.status, 403, "{path} {extra:?}: {}", answer.body);
        assert!(
            answer.body.contains("answers only its own pages"),
            "{}",
            answer.body
        );
    }
    let conversations = server.conversation_ids().await;
    assert_eq!(conversations, [id.as_str()], "no conversation was created");
    assert!(server.transcript(&id).await.turns.is_empty(), "no message");
}

#[tokio::test]
async fn a_same_origin_request_from_the_apps_page_is_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = local(dir.path(), HttpConfig::default()).await;
    let origin = format!("Origin: {}", server.base);
    let body = "{}";
    let answer = raw(
        &server,
        &(head(
            &server,
            "POST",
            "/api/conversations",
            &[
                &origin,
                "Sec-Fetch-Site: same-origin",
                "Content-Type: application/json",
                "Content-Length: 2",
            ],
        ) + body),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    let created: serde_json::Value = serde_json::from_str(&answer.body).expect("json");
    let id = created["id"].as_str().expect("id");
    // A page the person opened themselves (Sec-Fetch-Site: none) and a command-line client
    // (no Origin at all) are served too.
    let typed = raw(
        &server,
        &head(
            &server,
            "GET",
            "/api/conversations",
            &["Sec-Fetch-Site: none"],
        ),
    )
    .await;
    assert_eq!(typed.status, 200);
    assert!(typed.body.contains(id), "{}", typed.body);
    let turn = server.send(id, "hello").await;
    assert_eq!(turn, 1);
}

#[test]
fn a_non_loopback_address_without_users_is_refused_at_start_unless_allowed() {
    let any = "0.0.0.0".parse().expect("ip");
    assert_eq!(
        check_listen_address(any, Mode::Local, false),
        Err(RemoteWithoutSignIn { address: any })
    );
    let warning = check_listen_address(any, Mode::Local, true).expect("allowed");
    assert!(warning.is_some_and(|w| w.contains("no sign-in")));
    assert_eq!(check_listen_address(any, Mode::Users, false), Ok(None));

    // The binary refuses before it listens, and says what to do.
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--data"])
        .arg(dir.path().join("data"))
        .arg("--dist")
        .arg(dir.path().join("dist"))
        .env("RUST_BACKTRACE", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("refused in {:?}: {stderr}", started.elapsed());
    assert!(!output.status.success());
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("serving"),
        "it never served"
    );
    assert!(
        stderr.contains("--host 0.0.0.0 is not a loopback address"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--allow-remote-without-sign-in"),
        "{stderr}"
    );
    assert!(stderr.contains("--config"), "{stderr}");
}

#[test]
fn allowed_on_a_non_loopback_address_without_users_the_binary_warns_on_standard_error() {
    use std::io::BufRead;

    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_portal"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .arg("--allow-remote-without-sign-in")
        .arg("--data")
        .arg(dir.path().join("data"))
        .arg("--dist")
        .arg(dir.path().join("dist"))
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("portal starts");
    let stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let (lines, read) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut seen = Vec::new();
    let warning = loop {
        match read.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.contains("no sign-in") => break Some(line),
            Ok(line) => seen.push(line),
            Err(_) => break None,
        }
    };
    child.kill().expect("stopped");
    child.wait().expect("reaped");
    let warning = warning.unwrap_or_else(|| panic!("no warning on standard error: {seen:?}"));
    assert!(
        warning.contains("anyone who can reach this address can read and write every conversation"),
        "{warning}"
    );
}
