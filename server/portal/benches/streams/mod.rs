//! What the load benches share (`load`, `replicas`): a `portal serve` process on a data folder
//! or a database, reading a turn's server-sent events off the wire, and the checks every read
//! stream gets: its event ids without a gap or a repeat, and its text equal to the stored turn's.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;

mod conversation;

pub use conversation::{Route, converse_all, first_events};

/// The running `portal serve`, stopped when dropped.
pub struct Server {
    pub child: Child,
    pub url: String,
    _data: Option<tempfile::TempDir>,
}

impl Server {
    /// Serves in local mode, where every stream is the one local user's: the per-user stream
    /// limit is raised to `streams`, room for every conversation's stream and its reconnection
    /// (a dropped stream is given back once the server notices it is gone).
    pub fn start(pace: f64, streams: usize) -> Server {
        Server::start_with(pace, streams, &[])
    }

    /// As [`Server::start`], with more `portal serve` flags, on a temporary data folder.
    pub fn start_with(pace: f64, streams: usize, more: &[&str]) -> Server {
        let data = tempfile::tempdir().expect("a temporary data directory");
        let folder = data
            .path()
            .to_str()
            .expect("a UTF-8 temporary path")
            .to_string();
        let mut server = Server::spawn(&["--data", &folder], pace, streams, more)
            .unwrap_or_else(|error| panic!("{error}"));
        server._data = Some(data);
        server
    }

    /// As [`Server::start_with`], on the database at `url` (`--database`); an error when the
    /// process stops before it serves (what it wrote to standard error is above).
    pub fn start_on_database(
        url: &str,
        pace: f64,
        streams: usize,
        more: &[&str],
    ) -> Result<Server, String> {
        Server::spawn(&["--database", url], pace, streams, more)
    }

    fn spawn(store: &[&str], pace: f64, streams: usize, more: &[&str]) -> Result<Server, String> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_portal"))
            .args(["serve", "--port", "0", "--dist", "no-web-app"])
            .args(["--demo-pace", &pace.to_string()])
            .args(["--max-streams-per-user", &streams.to_string()])
            .args(more)
            .args(store)
            .env("RUST_LOG", "portal=warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("target's portal binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let Some(Ok(line)) = lines.next() else {
                let status = child.wait().expect("reaped");
                return Err(format!(
                    "portal serve {} stopped before it served ({status}); its error is above",
                    store.join(" ")
                ));
            };
            if let Some(url) = line.strip_prefix("Portal is serving on ") {
                break url.trim().to_string();
            }
        };
        Ok(Server {
            child,
            url,
            _data: None,
        })
    }

    /// The server's resident memory now and at its peak so far, in KiB.
    pub fn memory(&self) -> (u64, u64) {
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

impl Server {
    /// The CPU time the server has used so far (user and system), from `/proc`.
    pub fn cpu(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's name, which ends with the last `)`, start with the
        // state (field 3); utime and stime are fields 14 and 15, in clock ticks (100 a second).
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
        let ticks = field(14).unwrap_or(0) + field(15).unwrap_or(0);
        Duration::from_millis(ticks * 10)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One server-sent event as read from the wire.
pub struct WireEvent {
    pub id: u64,
    pub name: String,
    pub data: String,
}

pub fn parse_event(raw: &str) -> Option<WireEvent> {
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
pub struct Read {
    pub events: Vec<WireEvent>,
    /// When the first of them arrived.
    pub first: Option<Instant>,
    /// Whether the turn's end was among them.
    pub ended: bool,
}

/// Reads events from `last_seen` on; stops after `limit` events (to drop the connection) or at
/// the turn's end.
pub async fn read_events(
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

/// Where a stream's event ids go wrong, if they do. An event's id is the previous one plus its
/// weight, as `server/host/src/turn_log/mod.rs` numbers them: a delta's text in bytes, a `message_start` 1
/// for a message not announced before and 0 for one announced again, a compaction block's start
/// and end 0, every other event 1. So a gap or a repeat shows; an event that weighs nothing and
/// sits right at a reconnection's `Last-Event-ID` may come again (it is idempotent).
pub fn check_numbering(label: &str, seen: &[WireEvent]) -> Option<String> {
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
pub fn streamed_text(seen: &[WireEvent]) -> String {
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
pub async fn stored_text(client: &reqwest::Client, base: &str, id: &str, turn: u64) -> String {
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
pub fn text_problem(label: &str, streamed: &str, stored_text: &str) -> Option<String> {
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
pub fn stored_blocks(conversation: &Value, turn: u64) -> Vec<Value> {
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

pub fn percentile(sorted: &[Duration], share: f64) -> Duration {
    let at = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at]
}
