//! The server under load: many conversations streaming from the demo model at once, over real HTTP
//! on loopback, against the real `portal` binary with its own data directory.
//!
//! Each conversation gets one message; its turn's events are read as server-sent events. A third
//! of the streams drop their connection midway and reconnect with `Last-Event-ID`. Every stream
//! must see each event id exactly once, in order (each id the one before plus the event's weight,
//! `server/src/events.rs`), ending with the turn's end, and the text it assembled must equal the
//! answer the server stored. Printed: time to the first event (post sent
//! → first event read), the run's length, and the server's memory per open stream.
//!
//! Then the mixed soak (`soak/mod.rs`): 500 workers for five minutes against a fresh server,
//! with uploads, reconnections and pinned readers, and the time to first event against an
//! unloaded start on the same server (`PORTAL_SOAK_STREAMS`, `PORTAL_SOAK_SECONDS`; 0 skips it).
//!
//! `cargo bench -p portal-server --bench load [-- --conversations N --pace F]`; run by
//! `cargo xtask bench`, never by CI.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;

mod soak;

struct Options {
    conversations: usize,
    pace: f64,
}

fn options() -> Options {
    let mut options = Options {
        conversations: 200,
        pace: 1.0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--conversations" => {
                options.conversations = args.next().and_then(|v| v.parse().ok()).unwrap_or(200)
            }
            "--pace" => options.pace = args.next().and_then(|v| v.parse().ok()).unwrap_or(1.0),
            // cargo bench passes `--bench`; nothing else is ours.
            _ => {}
        }
    }
    options
}

/// The running `portal serve`, stopped when dropped.
struct Server {
    child: Child,
    url: String,
    _data: tempfile::TempDir,
}

impl Server {
    /// Serves in local mode, where every stream is the one local user's: the per-user stream
    /// limit is raised to `streams`, room for every conversation's stream and its reconnection
    /// (a dropped stream is given back once the server notices it is gone).
    fn start(pace: f64, streams: usize) -> Server {
        Server::start_with(pace, streams, &[])
    }

    /// As [`Server::start`], with more `portal serve` flags.
    fn start_with(pace: f64, streams: usize, more: &[&str]) -> Server {
        let data = tempfile::tempdir().expect("a temporary data directory");
        let mut child = Command::new(env!("CARGO_BIN_EXE_portal"))
            .args(["serve", "--port", "0", "--dist", "no-web-app"])
            .args(["--demo-pace", &pace.to_string()])
            .args(["--max-streams-per-user", &streams.to_string()])
            .args(more)
            .arg("--data")
            .arg(data.path())
            .env("RUST_LOG", "portal_server=warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("target's portal binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("portal prints where it serves")
                .expect("stdout is text");
            if let Some(url) = line.strip_prefix("Portal is serving on ") {
                break url.trim().to_string();
            }
        };
        Server {
            child,
            url,
            _data: data,
        }
    }

    /// The server's resident memory now and at its peak so far, in KiB.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one conversation's stream saw.
struct Outcome {
    first_event: Duration,
    reconnected: bool,
    problems: Vec<String>,
}

/// One server-sent event as read from the wire.
struct WireEvent {
    id: u64,
    name: String,
    data: String,
}

fn parse_event(raw: &str) -> Option<WireEvent> {
    let (mut id, mut name, mut data) = (None, String::new(), String::new());
    for line in raw.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            id = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("event:") {
            name = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    Some(WireEvent {
        id: id?,
        name,
        data,
    })
}

/// What one connection to a turn's events read.
struct Read {
    events: Vec<WireEvent>,
    /// When the first of them arrived.
    first: Option<Instant>,
    /// Whether the turn's end was among them.
    ended: bool,
}

/// Reads events from `last_seen` on; stops after `limit` events (to drop the connection) or at
/// the turn's end.
async fn read_events(
    client: &reqwest::Client,
    url: &str,
    last_seen: u64,
    limit: Option<usize>,
) -> Result<Read, String> {
    let mut request = client.get(url);
    if last_seen > 0 {
        request = request.header("Last-Event-ID", last_seen.to_string());
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("events answered {}", response.status()));
    }
    let mut body = response.bytes_stream();
    // Bytes, not text: a chunk may end inside a character; an event's end is always whole.
    let mut buffer: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let mut first = None;
    while let Some(chunk) = body.next().await {
        buffer.extend_from_slice(&chunk.map_err(|e| e.to_string())?);
        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
            let raw: Vec<u8> = buffer.drain(..end + 2).collect();
            let raw = String::from_utf8(raw).map_err(|e| format!("an event is not UTF-8: {e}"))?;
            let Some(event) = parse_event(&raw) else {
                continue;
            };
            first.get_or_insert_with(Instant::now);
            let ended = event.name == "turn_end";
            events.push(event);
            if ended || limit.is_some_and(|l| events.len() >= l) {
                return Ok(Read {
                    events,
                    first,
                    ended,
                });
            }
        }
    }
    Ok(Read {
        events,
        first,
        ended: false,
    })
}

async fn converse(client: reqwest::Client, base: String, number: usize) -> Outcome {
    let mut problems = Vec::new();
    let created: Value = client
        .post(format!("{base}/api/conversations"))
        .send()
        .await
        .expect("create answers")
        .json()
        .await
        .expect("create answers JSON");
    let id = created["id"]
        .as_str()
        .expect("a conversation id")
        .to_string();
    let started = Instant::now();
    let sent: Value = client
        .post(format!("{base}/api/conversations/{id}/messages"))
        .json(&serde_json::json!({ "text": format!("Conversation {number}: tell me about writing systems") }))
        .send()
        .await
        .expect("send answers")
        .json()
        .await
        .expect("send answers JSON");
    let turn = sent["turn"].as_u64().expect("the turn's number");
    let url = format!("{base}/api/conversations/{id}/turns/{turn}/events");

    let reconnected = number.is_multiple_of(3);
    let mut seen: Vec<WireEvent> = Vec::new();
    let mut first_event = None;
    let mut ended = false;
    let mut attempts = 0;
    while !ended && attempts < 10 {
        attempts += 1;
        let last = seen.last().map_or(0, |e| e.id);
        let limit = (reconnected && attempts == 1).then_some(12);
        match read_events(&client, &url, last, limit).await {
            Ok(read) => {
                if first_event.is_none() {
                    first_event = read.first.map(|at| at - started);
                }
                seen.extend(read.events);
                ended = read.ended;
            }
            Err(e) => problems.push(e),
        }
    }
    if !ended {
        problems.push(format!("{id}: the turn never ended"));
    }
    problems.extend(check_numbering(&id, &seen));
    let stored_text = stored_text(&client, &base, &id, turn).await;
    problems.extend(text_problem(&id, &streamed_text(&seen), &stored_text));
    Outcome {
        first_event: first_event.unwrap_or(Duration::MAX),
        reconnected,
        problems,
    }
}

/// Where a stream's event ids go wrong, if they do. An event's id is the previous one plus its
/// weight, as `server/src/events.rs` numbers them: a delta's text in bytes, a `message_start` 1
/// for a message not announced before and 0 for one announced again, a compaction block's start
/// and end 0, every other event 1. So a gap or a repeat shows; an event that weighs nothing and
/// sits right at a reconnection's `Last-Event-ID` may come again (it is idempotent).
fn check_numbering(label: &str, seen: &[WireEvent]) -> Option<String> {
    let mut due = 0u64;
    let mut announced = None;
    let mut compaction = None;
    for event in seen {
        let v: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
        let at = (v["message"].as_u64(), v["block"].as_u64());
        due += match event.name.as_str() {
            "delta" => v["text"].as_str().map_or(0, |t| t.len() as u64),
            "message_start" => u64::from(announced.replace(at.0) != Some(at.0)),
            "block_start" if v["kind"] == "compaction" => {
                compaction = Some(at);
                0
            }
            "block_end" if compaction == Some(at) => {
                compaction = None;
                0
            }
            _ => 1,
        };
        if event.id != due {
            return Some(format!(
                "{label}: event {} ({}) came where {due} was due (lost or repeated)",
                event.id, event.name
            ));
        }
    }
    None
}

/// The text of the thinking and text blocks as streamed; a tool call's arguments stream as
/// deltas too, but are stored as the call's input, not as text.
fn streamed_text(seen: &[WireEvent]) -> String {
    let mut kinds: HashMap<(u64, u64), String> = HashMap::new();
    let mut streamed = String::new();
    for event in seen {
        let Ok(v) = serde_json::from_str::<Value>(&event.data) else {
            continue;
        };
        let at = (
            v["message"].as_u64().unwrap_or(0),
            v["block"].as_u64().unwrap_or(0),
        );
        match event.name.as_str() {
            "block_start" => {
                kinds.insert(at, v["kind"].as_str().unwrap_or_default().to_string());
            }
            "delta"
                if matches!(
                    kinds.get(&at).map(String::as_str),
                    Some("text" | "thinking")
                ) =>
            {
                streamed.push_str(v["text"].as_str().unwrap_or_default());
            }
            _ => {}
        }
    }
    streamed
}

/// The text of turn `turn`'s thinking and text blocks as the server stored them.
async fn stored_text(client: &reqwest::Client, base: &str, id: &str, turn: u64) -> String {
    let stored: Value = client
        .get(format!("{base}/api/conversations/{id}"))
        .send()
        .await
        .expect("show answers")
        .json()
        .await
        .expect("show answers JSON");
    stored_blocks(&stored, turn)
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

/// Where the streamed text parts from the stored one, if it does.
fn text_problem(label: &str, streamed: &str, stored_text: &str) -> Option<String> {
    if streamed == stored_text {
        return None;
    }
    let same = streamed
        .chars()
        .zip(stored_text.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let around = |text: &str| {
        text.chars()
            .skip(same.saturating_sub(20))
            .take(40)
            .collect::<String>()
    };
    Some(format!(
        "{label}: streamed {} characters but {} are stored; they part after {same}: streamed {:?}, stored {:?}",
        streamed.chars().count(),
        stored_text.chars().count(),
        around(streamed),
        around(stored_text),
    ))
}

/// The thinking and text blocks of the turn's answers, in order, from the stored transcript.
fn stored_blocks(conversation: &Value, turn: u64) -> Vec<Value> {
    let transcript = conversation.get("transcript").unwrap_or(conversation);
    transcript["turns"]
        .as_array()
        .and_then(|turns| turns.iter().find(|t| t["index"].as_u64() == Some(turn)))
        .and_then(|t| t["messages"].as_array())
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "assistant")
                .flat_map(|m| m["blocks"].as_array().cloned().unwrap_or_default())
                .filter(|b| b["type"] == "text" || b["type"] == "thinking")
                .collect()
        })
        .unwrap_or_default()
}

fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let at = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at]
}

fn main() {
    let options = options();
    let server = Server::start(options.pace, options.conversations.saturating_mul(2).max(1));
    let (idle, _) = server.memory();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let started = Instant::now();
    let (outcomes, peak) = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(options.conversations)
            .build()
            .expect("an HTTP client");
        let tasks: Vec<_> = (0..options.conversations)
            .map(|n| tokio::spawn(converse(client.clone(), server.url.clone(), n)))
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.expect("a conversation task"));
        }
        (outcomes, server.memory().1)
    });
    let elapsed = started.elapsed();

    let mut firsts: Vec<Duration> = outcomes.iter().map(|o| o.first_event).collect();
    firsts.sort();
    let problems: Vec<&String> = outcomes.iter().flat_map(|o| &o.problems).collect();
    let reconnected = outcomes.iter().filter(|o| o.reconnected).count();
    println!(
        "load: {} conversations streaming at once from the demo model (pace {}), {} of them \
         reconnecting midway with Last-Event-ID",
        options.conversations, options.pace, reconnected
    );
    println!("| | |\n|---|---|");
    println!("| run | {:.1} s |", elapsed.as_secs_f64());
    println!(
        "| time to first event p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
        percentile(&firsts, 0.5).as_secs_f64() * 1e3,
        percentile(&firsts, 0.99).as_secs_f64() * 1e3,
        firsts.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
    );
    println!(
        "| server memory idle / peak | {:.1} / {:.1} MiB |",
        idle as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    println!(
        "| memory per stream ((peak - idle) / conversations) | {:.1} KiB |",
        peak.saturating_sub(idle) as f64 / options.conversations as f64
    );
    println!(
        "| lost or duplicated events, text mismatches | {} |",
        problems.len()
    );
    for problem in problems.iter().take(10) {
        println!("  {problem}");
    }
    drop(server);
    let soaked = soak::run(options.pace);
    if !problems.is_empty() || !soaked {
        std::process::exit(1);
    }
}
