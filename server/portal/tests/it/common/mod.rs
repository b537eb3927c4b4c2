//! A real server for the integration tests: SQLite in a temporary folder, HTTP on a loopback
//! port picked by the system, and a reader for its server-sent events.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use portal_core::Transcript;
use portal_core::stream::TurnEvent;

pub struct Server {
    pub base: String,
    pub client: reqwest::Client,
}

/// Serves in this process with the demo model at `pace`, its data in `data`.
pub async fn start(data: &Path, pace: f64) -> Server {
    start_with(data, pace, None).await
}

/// Serves in this process with `models` (the demo model alone when `None`) at demo `pace`.
pub async fn start_with(
    data: &Path,
    pace: f64,
    models: Option<portal_model::ModelRegistry>,
) -> Server {
    start_limited(data, pace, models, portal_server::limits::Limits::DEFAULT).await
}

/// Serves in this process with `models` at demo `pace`, holding requests to `limits`.
pub async fn start_limited(
    data: &Path,
    pace: f64,
    models: Option<portal_model::ModelRegistry>,
    limits: portal_server::limits::Limits,
) -> Server {
    start_config(portal_server::Config {
        limits,
        ..config(data, pace, models)
    })
    .await
}

/// Local mode with `models` at demo `pace`, its data in `data`, no web app, the default limits,
/// PDFs read by the `portal` binary this package builds (this test binary is not one).
pub fn config(
    data: &Path,
    pace: f64,
    models: Option<portal_model::ModelRegistry>,
) -> portal_server::Config {
    portal_server::Config {
        demo_pace: pace,
        models,
        pdf_reader: Some(env!("CARGO_BIN_EXE_portal").into()),
        ..portal_server::Config::local(data)
    }
}

/// Serves `config` in this process on a loopback port, once it is ready (`/readyz`).
///
/// Requests sent while a server opens its database wait and are then let in together, in no
/// particular order; tests that count what arrives first start from a ready server.
pub async fn start_config(config: portal_server::Config) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        if let Err(error) = portal_server::serve(listener, config).await {
            panic!("server failed: {error:#}");
        }
    });
    let server = Server::at(base);
    let ready = server.url("/readyz");
    until("the server to be ready", Duration::from_secs(60), || {
        let answer = server.client.get(&ready).send();
        async move { answer.await.ok()?.status().is_success().then_some(()) }
    })
    .await;
    server
}

/// Where a spawned `portal serve` keeps its conversations.
#[derive(Debug, Clone, Copy)]
pub enum Store<'a> {
    /// A SQLite data folder (`--data`).
    Data(&'a Path),
    /// A database URL (`--database`), such as a PostgreSQL schema's.
    Database(&'a str),
}

/// `target/debug/portal serve` on a free loopback port (unless `more` names one) with its
/// conversations in `store`, the demo model at `pace`, and `more` flags.
fn portal_serve(store: Store<'_>, pace: &str, more: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_portal"));
    command.args(["serve", "--demo-pace", pace]);
    if !more.contains(&"--port") {
        command.args(["--port", "0"]);
    }
    command.args(more);
    match store {
        Store::Data(data) => command
            .arg("--data")
            .arg(data)
            .arg("--dist")
            .arg(data.join("no-dist")),
        Store::Database(url) => command
            .args(["--database", url])
            .args(["--dist", "no-web-app"]),
    };
    command
}

/// Every event of turn `turn` as this process's turn loop logs it, read to the turn's end (at
/// most 30 s).
pub async fn logged_events(
    turns: &portal_host::turn::Turns,
    id: &portal_store::ConversationId,
    turn: u32,
) -> Vec<TurnEvent> {
    let log = turns.log("local", id, turn).await.expect("its log");
    tokio::time::timeout(
        Duration::from_secs(30),
        log.read_from(0, Duration::from_secs(30))
            .map(|(_, e)| e)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("the stream ends")
}

/// Starts `portal serve` on `data`; returns the process and its address once it says it is
/// serving (after the log lines of its start).
pub fn spawn_portal(data: &Path) -> (Child, String) {
    spawn_portal_at(data, "1")
}

/// [`spawn_portal`] with the demo model at `pace`.
pub fn spawn_portal_at(data: &Path, pace: &str) -> (Child, String) {
    let spawned = spawn_portal_with(Store::Data(data), pace, &[])
        .unwrap_or_else(|output| panic!("portal serve did not start:\n{output}"));
    (spawned.child, spawned.base)
}

/// A `portal serve` started by [`spawn_portal_with`].
pub struct Spawned {
    pub child: Child,
    /// Where it serves, `http://127.0.0.1:PORT`.
    pub base: String,
    /// What it writes to standard output (its log) and standard error, the latest
    /// [`OUTPUT_KEPT`] bytes, read on threads of their own for as long as it runs.
    pub output: Output,
}

/// How much of a spawned server's output [`Output`] keeps.
pub const OUTPUT_KEPT: usize = 64 * 1024;

/// The latest output of a spawned server.
#[derive(Debug, Clone, Default)]
pub struct Output(Arc<Mutex<String>>);

impl Output {
    fn push(&self, line: &str) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.push_str(line);
        kept.push('\n');
        if kept.len() > OUTPUT_KEPT {
            let mut cut = kept.len() - OUTPUT_KEPT;
            while !kept.is_char_boundary(cut) {
                cut += 1;
            }
            kept.drain(..cut);
        }
    }

    /// What was kept so far.
    pub fn text(&self) -> String {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Starts `portal serve` on `store` with the demo model at `pace` and `more` flags; returns it
/// once it says where it serves, or what it wrote if it stopped before (or said nothing for
/// 60 s).
pub fn spawn_portal_with(store: Store<'_>, pace: &str, more: &[&str]) -> Result<Spawned, String> {
    spawn_portal_with_env(store, pace, more, &[])
}

/// [`spawn_portal_with`] with `env` added to its environment.
pub fn spawn_portal_with_env(
    store: Store<'_>,
    pace: &str,
    more: &[&str],
    env: &[(&str, &str)],
) -> Result<Spawned, String> {
    let mut child = portal_serve(store, pace, more)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("portal starts");
    let output = Output::default();
    let (serving, base) = mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let kept = output.clone();
    let out = std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("Portal is serving on ") {
                let _ = serving.send(url.trim().to_string());
            }
            kept.push(&line);
        }
    });
    let kept = output.clone();
    let err = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            kept.push(&line);
        }
    });
    match base.recv_timeout(Duration::from_secs(60)) {
        Ok(base) => Ok(Spawned {
            child,
            base,
            output,
        }),
        Err(_) => {
            let _ = child.kill();
            let status = child.wait().expect("reaped");
            // Its output ends with it: take all of it.
            let _ = (out.join(), err.join());
            Err(format!("{status}; its output:\n{}", output.text()))
        }
    }
}

/// Starts `portal serve` on `data` expecting it to refuse: how it exited and what it wrote to
/// standard error. Fails the test if it is still running after `limit`.
pub fn refused_portal(data: &Path, limit: Duration) -> (ExitStatus, String) {
    let mut child = portal_serve(Store::Data(data), "1", &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("portal starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the process can be waited on") {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().expect("stopped");
            child.wait().expect("reaped");
            panic!("portal serve was still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr is text");
    (status, stderr)
}

impl Server {
    pub fn at(base: String) -> Server {
        Server {
            base,
            client: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends `method` to `path`, with `body` as JSON when given; the answer's status and JSON
    /// (null when it has none).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let mut request = self.client.request(method, self.url(path));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("answered");
        let status = response.status();
        (
            status,
            response.json().await.unwrap_or(serde_json::Value::Null),
        )
    }

    pub async fn conversation(&self) -> String {
        let created: serde_json::Value = self
            .client
            .post(self.url("/api/conversations"))
            .send()
            .await
            .expect("created")
            .json()
            .await
            .expect("json");
        created["id"].as_str().expect("id").to_string()
    }

    /// The first page of the conversation list, as the API answers it.
    pub async fn conversation_page(&self) -> serde_json::Value {
        self.client
            .get(self.url("/api/conversations"))
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json")
    }

    /// The ids on the first page of the conversation list.
    pub async fn conversation_ids(&self) -> Vec<String> {
        let page = self.conversation_page().await;
        page["conversations"]
            .as_array()
            .expect("a page of conversations")
            .iter()
            .map(|c| c["id"].as_str().expect("an id").to_string())
            .collect()
    }

    /// Posts the message `text` and returns the answer's status and JSON body.
    pub async fn post_message(&self, id: &str, text: &str) -> (u16, serde_json::Value) {
        self.post_message_body(id, serde_json::json!({ "text": text }))
            .await
    }

    /// Posts `body` as a message and returns the answer's status and JSON body (`null` when
    /// it is not JSON).
    pub async fn post_message_body(
        &self,
        id: &str,
        body: serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let response = self
            .client
            .post(self.url(&format!("/api/conversations/{id}/messages")))
            .json(&body)
            .send()
            .await
            .expect("sent");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or_default())
    }

    pub async fn send(&self, id: &str, text: &str) -> u32 {
        let (status, sent) = self.post_message(id, text).await;
        assert_eq!(status, 202, "message accepted");
        sent["turn"].as_u64().expect("turn") as u32
    }

    /// Posts `body` to a turn's `action` and returns the status.
    pub async fn act(&self, id: &str, turn: u32, action: &str, body: serde_json::Value) -> u16 {
        self.client
            .post(self.url(&format!("/api/conversations/{id}/turns/{turn}/{action}")))
            .json(&body)
            .send()
            .await
            .expect("answered")
            .status()
            .as_u16()
    }

    pub async fn transcript(&self, id: &str) -> Transcript {
        self.client
            .get(self.url(&format!("/api/conversations/{id}")))
            .send()
            .await
            .expect("read")
            .json()
            .await
            .expect("transcript")
    }

    /// Opens the turn's event stream after `last_id`.
    pub async fn stream(&self, id: &str, turn: u32, last_id: Option<u64>) -> Events {
        let mut request = self
            .client
            .get(self.url(&format!("/api/conversations/{id}/turns/{turn}/events")));
        if let Some(last) = last_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.expect("stream");
        assert_eq!(response.status(), 200, "stream opened");
        Events {
            body: Box::pin(response.bytes_stream()),
            buffer: Vec::new(),
            reconnect: None,
        }
    }

    /// Reads the turn's events to the end of the stream, after `last_id`.
    pub async fn events(&self, id: &str, turn: u32, last_id: Option<u64>) -> Vec<(u64, TurnEvent)> {
        let mut events = self.stream(id, turn, last_id).await;
        let mut all = Vec::new();
        while let Some(event) = events.next().await {
            all.push(event);
        }
        all
    }
}

type Body =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// A turn's server-sent events, read one at a time as they arrive.
pub struct Events {
    body: Body,
    buffer: Vec<u8>,
    /// The `retry` of the `reconnect` event a stopping server ended the stream with, once read.
    pub reconnect: Option<Duration>,
}

impl Events {
    /// The next event, or `None` when the stream ends.
    pub async fn next(&mut self) -> Option<(u64, TurnEvent)> {
        self.try_next().await.expect("stream chunk")
    }

    /// The next event, `None` when the stream ends, or the error that broke the connection (its
    /// server was stopped).
    pub async fn try_next(&mut self) -> reqwest::Result<Option<(u64, TurnEvent)>> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let frame = String::from_utf8(frame).expect("utf-8 frames");
                if !frame.contains("data:") {
                    continue;
                }
                if frame.lines().any(|l| l == "event: reconnect") {
                    let retry = frame
                        .lines()
                        .find_map(|l| l.strip_prefix("retry:"))
                        .expect("a reconnect hint says when");
                    let millis = retry.trim().parse().expect("retry in milliseconds");
                    self.reconnect = Some(Duration::from_millis(millis));
                    continue;
                }
                return Ok(Some(parse(&frame)));
            }
            let Some(chunk) = self.body.next().await else {
                return Ok(None);
            };
            self.buffer.extend_from_slice(&chunk?);
        }
    }
}

fn parse(frame: &str) -> (u64, TurnEvent) {
    let field = |name: &str| {
        frame
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_else(|| panic!("{name} in {frame}"))
            .to_string()
    };
    let id = field("id:").parse().expect("numeric id");
    let event: TurnEvent = serde_json::from_str(&field("data:")).expect("event json");
    assert_eq!(field("event:"), event.name());
    (id, event)
}

/// The text of every delta for blocks of `message`, in order.
pub fn streamed_text(events: &[(u64, TurnEvent)], message: usize, block: usize) -> String {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            TurnEvent::Delta {
                message: m,
                block: b,
                text,
            } if *m == message && *b == block => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The same turn read twice: every event but the deltas with the same id, and the same text in
/// every block, however it was split into deltas.
pub fn assert_same_content(a: &[(u64, TurnEvent)], b: &[(u64, TurnEvent)]) {
    let structure = |events: &[(u64, TurnEvent)]| -> Vec<(u64, TurnEvent)> {
        events
            .iter()
            .filter(|(_, e)| !matches!(e, TurnEvent::Delta { .. }))
            .cloned()
            .collect()
    };
    assert_eq!(structure(a), structure(b));
    assert_eq!(texts(a), texts(b));
}

/// The text each block's deltas carry, by message and block.
pub fn texts(events: &[(u64, TurnEvent)]) -> std::collections::BTreeMap<(usize, usize), String> {
    let mut texts = std::collections::BTreeMap::<(usize, usize), String>::new();
    for (_, event) in events {
        if let TurnEvent::Delta {
            message,
            block,
            text,
        } = event
        {
            texts.entry((*message, *block)).or_default().push_str(text);
        }
    }
    texts
}

/// Asks `probe` every 50 ms until it answers something, and returns that and how long it took;
/// fails the test, naming `what`, if it has not after `limit`.
pub async fn until<T, F>(what: &str, limit: Duration, mut probe: impl FnMut() -> F) -> (T, Duration)
where
    F: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(found) = probe().await {
            return (found, started.elapsed());
        }
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The session id a response's `Set-Cookie` sets.
pub fn session_cookie(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix("portal_session="))
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
        .filter(|v| !v.is_empty())
}

/// Of sign-in guesses made at once, how many were checked (401) and how many refused (429).
pub fn checked_and_refused(answers: &[reqwest::StatusCode]) -> (usize, usize) {
    let count = |status| answers.iter().filter(|s| **s == status).count();
    (
        count(reqwest::StatusCode::UNAUTHORIZED),
        count(reqwest::StatusCode::TOO_MANY_REQUESTS),
    )
}
