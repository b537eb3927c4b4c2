//! Replicas for the tests of issue 18: real `portal serve` processes (`target/debug/portal`)
//! sharing one PostgreSQL schema ([`crate::databases::Database::postgres`]), each on a loopback
//! port of its own, with a short turn lease; and what the tests ask of them: a turn's events read
//! with the time each arrived, and the text a stored turn holds.
//!
//! Each replica's output (its log) is kept; when a test fails, every replica it started prints
//! the end of its log.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::process::Child;
use std::time::{Duration, Instant};

use portal_core::stream::TurnEvent;
use portal_core::{Block, Transcript, TurnStatus};

use crate::common::{Events, Output, Server, Store, spawn_portal_with};
use crate::databases::Database;

/// The turn lease the replicas are started with (`--turn-lease-seconds`): a replica that stops
/// leaves its running turns to be cut off by another after about this long.
pub const LEASE: Duration = Duration::from_secs(2);

/// How long a read that should end may take in a debug build on a busy machine before the test
/// calls it hung: far longer than any turn here takes.
pub const HUNG: Duration = Duration::from_secs(90);

/// One `portal serve` of a replica set, stopped with SIGKILL when dropped.
pub struct Replica {
    pub name: &'static str,
    pub server: Server,
    child: Option<Child>,
    output: Output,
    /// The logs of the processes it replaced ([`Replica::restart`]).
    earlier: String,
    url: String,
    pace: String,
    /// The flags it was started with beyond the lease.
    more: Vec<String>,
}

impl Replica {
    /// Starts a replica named `name` (for messages) on the database at `url`, with the demo
    /// model at `pace` and the lease [`LEASE`]; fails the test, with its output, if it does not
    /// start serving.
    pub fn start(name: &'static str, url: &str, pace: &str) -> Replica {
        Replica::start_with(name, url, pace, &[])
    }

    /// [`Replica::start`] with `more` flags, such as `--config DIR`.
    pub fn start_with(name: &'static str, url: &str, pace: &str, more: &[&str]) -> Replica {
        let lease = LEASE.as_secs().to_string();
        let flags: Vec<&str> = ["--turn-lease-seconds", &lease]
            .into_iter()
            .chain(more.iter().copied())
            .collect();
        let spawned =
            spawn_portal_with(Store::Database(url), pace, &flags).unwrap_or_else(|output| {
                panic!("replica {name} did not start on the shared database: {output}")
            });
        Replica {
            name,
            server: Server::at(spawned.base),
            child: Some(spawned.child),
            output: spawned.output,
            earlier: String::new(),
            url: url.to_string(),
            pace: pace.to_string(),
            more: more.iter().map(|flag| flag.to_string()).collect(),
        }
    }

    /// Its process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops it with SIGKILL (`Child::kill`), as a crash or an out-of-memory kill would, and
    /// waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reaped");
        }
    }

    /// Kills it and starts it again on the same database, with the same flags, on a new port.
    pub fn restart(&mut self) {
        self.kill();
        let more = self.more.clone();
        let more: Vec<&str> = more.iter().map(String::as_str).collect();
        self.start_again(&more);
    }

    /// Asks it to stop with SIGTERM, as systemd, Docker and Kubernetes do.
    pub fn ask_to_stop(&self) {
        let child = self.child.as_ref().expect("running");
        let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a process id");
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    }

    /// Waits (on a blocking thread) until it has stopped, for at most `limit`, and returns how
    /// it exited; fails the test if it has not.
    pub async fn stopped(&mut self, limit: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        let name = self.name;
        tokio::task::spawn_blocking(move || {
            let asked = Instant::now();
            loop {
                if let Some(status) = child.try_wait().expect("waited on") {
                    return status;
                }
                if asked.elapsed() > limit {
                    let _ = child.kill();
                    panic!("replica {name} did not stop within {limit:?}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
        .await
        .expect("waited")
    }

    /// Starts it again after it stopped, on the same database with the same flags and on the
    /// same port, as a deploy does.
    pub fn start_on_same_port(&mut self) {
        let mut more = self.more.clone();
        if !more.iter().any(|flag| flag == "--port") {
            more.extend(["--port".to_string(), self.port().to_string()]);
        }
        let more: Vec<&str> = more.iter().map(String::as_str).collect();
        self.start_again(&more);
    }

    /// The port it serves on.
    pub fn port(&self) -> u16 {
        self.server
            .base
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .expect("an http://host:port address")
    }

    /// A new process in its place, with `more` flags, its output kept after the old one's.
    fn start_again(&mut self, more: &[&str]) {
        let earlier = format!("{}{}--- restarted ---\n", self.earlier, self.output.text());
        let mut restarted = Replica::start_with(self.name, &self.url, &self.pace, more);
        restarted.earlier = earlier;
        *self = restarted;
    }

    /// The end of its output so far, after its earlier processes' if it was restarted.
    pub fn log(&self) -> String {
        format!("{}{}", self.earlier, self.output.text())
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "===== replica {} (pid {:?}) log =====\n{}",
                self.name,
                self.pid(),
                self.log()
            );
        }
        self.kill();
    }
}

/// Two replicas, `a` and `b`, on one fresh PostgreSQL schema, dropped (schema included) at the
/// end of the test.
pub struct Pair {
    pub a: Replica,
    pub b: Replica,
    // Dropped last: the schema goes once the replicas are gone.
    pub database: Database,
}

impl Pair {
    /// Starts both with the demo model at `pace`; `None` (with a note) when the tests have no
    /// PostgreSQL (`PORTAL_TEST_POSTGRES`), unless `PORTAL_REQUIRE_POSTGRES` is set, which fails.
    pub fn start(pace: &str) -> Option<Pair> {
        Pair::start_with(pace, &[])
    }

    /// [`Pair::start`] with `more` flags for both replicas.
    pub fn start_with(pace: &str, more: &[&str]) -> Option<Pair> {
        let database = Database::postgres()?;
        let url = database.url();
        let a = Replica::start_with("A", &url, pace, more);
        let b = Replica::start_with("B", &url, pace, more);
        Some(Pair { a, b, database })
    }
}

/// One event as a reader got it: its id, the event, and when it arrived.
pub type Timed = (u64, TurnEvent, Instant);

/// The events without their times.
pub fn untimed(events: &[Timed]) -> Vec<(u64, TurnEvent)> {
    events.iter().map(|(id, e, _)| (*id, e.clone())).collect()
}

/// The status a read ended with; fails the test if it did not end with a `turn_end`.
pub fn end_status(events: &[(u64, TurnEvent)]) -> TurnStatus {
    match events.last() {
        Some((_, TurnEvent::TurnEnd { status, .. })) => *status,
        other => panic!("the read did not end with a turn_end but with {other:?}"),
    }
}

/// Reads turn `turn`'s events through `server` after `after` to the end of the stream (at most
/// [`HUNG`]), each with the time it arrived.
pub async fn read_to_end(server: &Server, id: &str, turn: u32, after: Option<u64>) -> Vec<Timed> {
    let mut stream = server.stream(id, turn, after).await;
    let mut read = Vec::new();
    tokio::time::timeout(HUNG, read_rest(&mut stream, &mut read))
        .await
        .unwrap_or_else(|_| {
            panic!("the stream of turn {turn} did not end within {HUNG:?}: {read:?}")
        });
    read
}

/// [`read_to_end`] without the times.
pub async fn read_events(
    server: &Server,
    id: &str,
    turn: u32,
    after: Option<u64>,
) -> Vec<(u64, TurnEvent)> {
    untimed(&read_to_end(server, id, turn, after).await)
}

/// Reads the rest of `stream` into `read`, each event with the time it arrived (no time limit:
/// the caller sets one).
pub async fn read_rest(stream: &mut Events, read: &mut Vec<Timed>) {
    while let Some((at, event)) = stream.next().await {
        read.push((at, event, Instant::now()));
    }
}

/// Reads from `stream` into `read` until the text of text blocks read so far (the narration, at
/// first) has at least `chars` characters: the turn is well under way. Fails the test if the
/// stream ends first or takes longer than [`HUNG`].
pub async fn read_until_text(stream: &mut Events, read: &mut Vec<Timed>, chars: usize) {
    tokio::time::timeout(HUNG, async {
        while streamed_text_chars(read) < chars {
            let (at, event) = stream
                .next()
                .await
                .unwrap_or_else(|| panic!("the stream ended early: {read:?}"));
            if matches!(event, TurnEvent::TurnEnd { .. }) {
                panic!("the turn ended ({event:?}) before {chars} characters of text streamed");
            }
            read.push((at, event, Instant::now()));
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{chars} characters did not stream within {HUNG:?}"));
}

fn streamed_text_chars(read: &[Timed]) -> usize {
    text_blocks(&untimed(read))
        .values()
        .map(|t| t.chars().count())
        .sum()
}

/// The text streamed into each thinking and text block, by message and block (a tool call's
/// arguments and a tool's result stream as deltas too, and are left out).
pub fn text_blocks(events: &[(u64, TurnEvent)]) -> BTreeMap<(usize, usize), String> {
    let mut kinds = BTreeMap::new();
    for (_, event) in events {
        if let TurnEvent::BlockStart {
            message,
            block,
            kind,
            ..
        } = event
        {
            kinds.insert((*message, *block), *kind);
        }
    }
    crate::common::texts(events)
        .into_iter()
        .filter(|(at, _)| {
            matches!(
                kinds.get(at),
                Some(portal_core::BlockKind::Text | portal_core::BlockKind::Thinking)
            )
        })
        .collect()
}

/// The text of each thinking and text block of turn `turn`'s answer as stored, by message and
/// block, as [`text_blocks`] keys them.
pub fn stored_text_blocks(transcript: &Transcript, turn: u32) -> BTreeMap<(usize, usize), String> {
    let stored = transcript
        .turn(turn)
        .unwrap_or_else(|| panic!("turn {turn} is stored"));
    let mut texts = BTreeMap::new();
    for (m, message) in stored.messages.iter().enumerate().skip(1) {
        for (b, block) in message.blocks.iter().enumerate() {
            if let Block::Text { text } | Block::Thinking { text } = block {
                texts.insert((m, b), text.clone());
            }
        }
    }
    texts
}

/// The status of turn `turn` as stored.
pub fn stored_status(transcript: &Transcript, turn: u32) -> TurnStatus {
    transcript
        .turn(turn)
        .unwrap_or_else(|| panic!("turn {turn} is stored"))
        .status
}

/// The gap between when `a` and `b` got each event id both got, in milliseconds: `b`'s time
/// minus `a`'s, sorted.
pub fn lags_ms(a: &[Timed], b: &[Timed]) -> Vec<f64> {
    let at_a: BTreeMap<u64, Instant> = a.iter().map(|(id, _, at)| (*id, *at)).collect();
    let mut lags: Vec<f64> = b
        .iter()
        .filter_map(|(id, _, at)| {
            at_a.get(id).map(|then| {
                if at >= then {
                    at.duration_since(*then).as_secs_f64() * 1e3
                } else {
                    -(then.duration_since(*at).as_secs_f64() * 1e3)
                }
            })
        })
        .collect();
    lags.sort_by(f64::total_cmp);
    lags
}

/// The `share` percentile of sorted `values` (0 when there are none).
pub fn percentile(values: &[f64], share: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let at = ((values.len() as f64 * share).ceil() as usize).clamp(1, values.len()) - 1;
    values[at]
}
