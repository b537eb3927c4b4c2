//! The mixed soak: `PORTAL_SOAK_STREAMS` (default 500) workers against one fresh `portal serve`
//! for `PORTAL_SOAK_SECONDS` (default 300; 0 skips the soak), each holding a turn's event stream
//! open nearly all the time, on loopback only. A tenth of each hundred workers does one thing:
//!
//! - **conversers** (4 in 10) send a message and follow the reply to its end;
//! - **uploaders** (2 in 10) upload a small markdown document, a small PNG made here, or both,
//!   attach them to the message and follow the reply;
//! - **reconnecters** (2 in 10) follow the reply but drop the connection one to three times
//!   mid-stream, at points that vary from turn to turn, and reconnect with `Last-Event-ID`;
//! - **pinned readers** (2 in 10) ask the demo to publish a note, which pauses the turn for an
//!   approval: a second reader is pinned on the turn from its first event beside the follower;
//!   both must get the paused `turn_end` and see the stream close; the worker approves, both
//!   read on with `Last-Event-ID` to the completed end (and see the stream close again), and a
//!   third reader at the final id must get that `turn_end` once more and be closed within 5 s.
//!
//! Every followed turn (each pinned reader's too) must number its events without a gap or a
//! repeat and stream the text the server stored. A worker starts no new turn after the
//! deadline; every read has a time limit, so the soak stops by itself. Before the soak, the same
//! server answers 20 conversations started one at a time, 1.5 s apart: the unloaded time to
//! first event. `PORTAL_SOAK_LINGER_SECONDS` sets the server's `--stream-linger-seconds`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::{
    Server, WireEvent, check_numbering, parse_event, percentile, stored_text, streamed_text,
    text_problem,
};

/// The longest one connection may stay open before the soak calls it hung.
const READ_LIMIT: Duration = Duration::from_secs(120);
/// How soon a stream must close after its `turn_end`.
const CLOSE_LIMIT: Duration = Duration::from_secs(5);
/// Turns in one conversation before a worker opens a new one (keeps prompts small).
const TURNS_PER_CONVERSATION: u32 = 4;
/// Conversations started one at a time for the unloaded time to first event, one every
/// [`UNLOADED_GAP`]: each has read its first event long before the next starts (a turn's first
/// event comes after about 0.25 s at the demo's pace), while the earlier ones stream on at the
/// demo's pace (a dozen streams that mostly wait), so a turn to the end takes about 12 s.
const UNLOADED_TURNS: usize = 20;
const UNLOADED_GAP: Duration = Duration::from_millis(1500);

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[derive(Default)]
struct Tally {
    turns: AtomicU64,
    events: AtomicU64,
    uploads_markdown: AtomicU64,
    uploads_png: AtomicU64,
    attached_messages: AtomicU64,
    reconnects: AtomicU64,
    pinned_readers: AtomicU64,
    end_readers: AtomicU64,
    paused_turns: AtomicU64,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// What one connection to a turn's events read.
struct Read {
    events: Vec<WireEvent>,
    first: Option<Instant>,
    /// The `turn_end`'s status, if one came.
    end: Option<String>,
    /// Whether the server closed the stream within [`CLOSE_LIMIT`] of the `turn_end` (only
    /// waited for when asked).
    closed: bool,
}

/// Reads events after `last_seen`; drops the connection after `limit` events, or stops at a
/// `turn_end` (then, with `await_close`, waits for the server to close the stream).
async fn read(
    client: &reqwest::Client,
    url: &str,
    last_seen: u64,
    limit: Option<usize>,
    await_close: bool,
) -> Result<Read, String> {
    tokio::time::timeout(
        READ_LIMIT,
        read_inner(client, url, last_seen, limit, await_close),
    )
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "a stream from id {last_seen} was still open after {READ_LIMIT:?} (hung)"
        ))
    })
}

async fn read_inner(
    client: &reqwest::Client,
    url: &str,
    last_seen: u64,
    limit: Option<usize>,
    await_close: bool,
) -> Result<Read, String> {
    let mut request = client.get(url);
    if last_seen > 0 {
        request = request.header("Last-Event-ID", last_seen.to_string());
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        return Err(format!("events answered {status}: {body}"));
    }
    let mut body = response.bytes_stream();
    let mut buffer: Vec<u8> = Vec::new();
    let mut out = Read {
        events: Vec::new(),
        first: None,
        end: None,
        closed: false,
    };
    while let Some(chunk) = body.next().await {
        buffer.extend_from_slice(&chunk.map_err(|e| e.to_string())?);
        while let Some(at) = buffer.windows(2).position(|w| w == b"\n\n") {
            let raw: Vec<u8> = buffer.drain(..at + 2).collect();
            let raw = String::from_utf8(raw).map_err(|e| format!("an event is not UTF-8: {e}"))?;
            let Some(event) = parse_event(&raw) else {
                continue;
            };
            out.first.get_or_insert_with(Instant::now);
            if event.name == "turn_end" {
                let v: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
                out.end = Some(v["status"].as_str().unwrap_or("?").to_string());
            }
            out.events.push(event);
            if out.end.is_some() {
                if await_close {
                    // Anything but the stream's end (heartbeats are comments, not events) is a
                    // stream left open.
                    out.closed = matches!(
                        tokio::time::timeout(CLOSE_LIMIT, drain(&mut body)).await,
                        Ok(true)
                    );
                }
                return Ok(out);
            }
            if limit.is_some_and(|l| out.events.len() >= l) {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Reads the rest of a body; true if it ended with no further event.
async fn drain<S, E>(body: &mut S) -> bool
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
{
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(bytes) if bytes.windows(3).any(|w| w == b"id:") => return false,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    true
}

/// One reader following a turn to a `turn_end`, reconnecting with its last id when the
/// connection ends without one; `drops` are the event counts after which it drops on purpose.
struct Follower {
    url: String,
    seen: Vec<WireEvent>,
    first: Option<Instant>,
    reconnects: u64,
    await_close: bool,
}

impl Follower {
    fn new(url: String, await_close: bool) -> Follower {
        Follower {
            url,
            seen: Vec::new(),
            first: None,
            reconnects: 0,
            await_close,
        }
    }

    /// Reads to the next `turn_end`; returns its status.
    async fn follow(
        &mut self,
        client: &reqwest::Client,
        drops: &[usize],
        problems: &mut Vec<String>,
    ) -> Option<String> {
        let mut drops = drops.iter().copied();
        let mut next_drop = drops.next();
        for attempt in 0..12 {
            if attempt > 0 {
                self.reconnects += 1;
            }
            let last = self.seen.last().map_or(0, |e| e.id);
            let already = self.seen.len();
            let limit = next_drop.map(|d| d.saturating_sub(already).max(1));
            match read(client, &self.url, last, limit, self.await_close).await {
                Ok(read) => {
                    self.first = self.first.or(read.first);
                    self.seen.extend(read.events);
                    if let Some(end) = read.end {
                        if self.await_close && !read.closed {
                            problems.push(format!(
                                "{}: the stream stayed open more than {CLOSE_LIMIT:?} after its \
                                 {end} turn_end",
                                self.url
                            ));
                        }
                        return Some(end);
                    }
                    if limit.is_some() {
                        next_drop = drops.next();
                    }
                }
                Err(e) => problems.push(format!("{}: {e}", self.url)),
            }
        }
        problems.push(format!("{}: the turn never ended", self.url));
        None
    }
}

/// A small markdown document, different for every upload.
fn markdown(worker: usize, turn: u32) -> Vec<u8> {
    let mut text = format!("# Soak notes {worker}.{turn}\n\n");
    for section in 0..4 {
        text.push_str(&format!(
            "## Section {section}\n\nWorker {worker} writes turn {turn}: writing systems, \
             emoji 👩🏽‍💻 and accents (cafe\u{301}) in a small document.\n\n- one\n- two\n\n"
        ));
    }
    text.into_bytes()
}

/// A small PNG (48×32 pixels, a gradient), different for every upload.
fn png(worker: usize, turn: u32) -> Vec<u8> {
    let picture = image::RgbImage::from_fn(48, 32, |x, y| {
        image::Rgb([
            (x * 5) as u8,
            (y * 7) as u8,
            ((worker as u32 * 31 + turn * 17) % 256) as u8,
        ])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .expect("a PNG encodes");
    bytes.into_inner()
}

async fn upload(
    client: &reqwest::Client,
    base: &str,
    name: &str,
    bytes: Vec<u8>,
) -> Result<String, String> {
    let response = client
        .post(format!("{base}/api/attachments"))
        .query(&[("filename", name)])
        .body(bytes)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("upload {name} answered {status}: {body}"));
    }
    body["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("upload {name} answered no id: {body}"))
}

async fn new_conversation(client: &reqwest::Client, base: &str) -> Result<String, String> {
    let created: Value = client
        .post(format!("{base}/api/conversations"))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    created["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("create answered {created}"))
}

async fn send(
    client: &reqwest::Client,
    base: &str,
    id: &str,
    text: &str,
    attachments: &[String],
) -> Result<u64, String> {
    let response = client
        .post(format!("{base}/api/conversations/{id}/messages"))
        .json(&json!({ "text": text, "attachments": attachments }))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| e.to_string())?;
    body["turn"]
        .as_u64()
        .ok_or_else(|| format!("{id}: send answered {status}: {body}"))
}

/// The approval request's call id in turn `turn` of conversation `id`.
async fn pending_call(
    client: &reqwest::Client,
    base: &str,
    id: &str,
    turn: u64,
) -> Result<String, String> {
    let stored: Value = client
        .get(format!("{base}/api/conversations/{id}"))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    let transcript = stored.get("transcript").unwrap_or(&stored);
    transcript["turns"]
        .as_array()
        .and_then(|turns| turns.iter().find(|t| t["index"].as_u64() == Some(turn)))
        .and_then(|t| t["messages"].as_array())
        .into_iter()
        .flatten()
        .flat_map(|m| m["blocks"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "approval_request")
        .filter_map(|b| b["call_id"].as_str().map(str::to_string))
        .next_back()
        .ok_or_else(|| format!("{id}: turn {turn} paused without an approval request"))
}

/// Checks one followed turn: numbering and the text against the stored one.
async fn check_turn(
    client: &reqwest::Client,
    base: &str,
    id: &str,
    turn: u64,
    readers: &[&Follower],
    problems: &mut Vec<String>,
) {
    let stored = stored_text(client, base, id, turn).await;
    for reader in readers {
        problems.extend(check_numbering(&reader.url, &reader.seen));
        problems.extend(text_problem(
            &reader.url,
            &streamed_text(&reader.seen),
            &stored,
        ));
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Converser,
    Uploader,
    Reconnecter,
    Pinned,
}

fn role(worker: usize) -> Role {
    match worker % 10 {
        0..=3 => Role::Converser,
        4 | 5 => Role::Uploader,
        6 | 7 => Role::Reconnecter,
        _ => Role::Pinned,
    }
}

/// One turn of one worker: returns its time to first event.
async fn one_turn(
    client: &reqwest::Client,
    base: &str,
    conversation: &str,
    worker: usize,
    number: u32,
    tally: &Tally,
    problems: &mut Vec<String>,
) -> Result<Option<Duration>, String> {
    let role = role(worker);
    let mut attachments = Vec::new();
    if role == Role::Uploader {
        if !(number + 2).is_multiple_of(3) {
            let name = format!("notes-{worker}-{number}.md");
            attachments.push(upload(client, base, &name, markdown(worker, number)).await?);
            add(&tally.uploads_markdown, 1);
        }
        if !number.is_multiple_of(3) {
            let name = format!("picture-{worker}-{number}.png");
            attachments.push(upload(client, base, &name, png(worker, number)).await?);
            add(&tally.uploads_png, 1);
        }
        add(&tally.attached_messages, 1);
    }
    let text = match role {
        Role::Pinned => format!("Please publish a note on soak worker {worker}, turn {number}"),
        Role::Uploader => format!("Worker {worker}, turn {number}: read these attachments"),
        _ => format!("Worker {worker}, turn {number}: tell me about writing systems"),
    };
    let started = Instant::now();
    let turn = send(client, base, conversation, &text, &attachments).await?;
    let url = format!("{base}/api/conversations/{conversation}/turns/{turn}/events");
    let mut follower = Follower::new(url.clone(), role == Role::Pinned);
    let drops: Vec<usize> = if role == Role::Reconnecter {
        let seed = worker * 7 + number as usize * 13;
        (0..1 + seed % 3)
            .map(|k| 3 + (seed * (k + 3)) % 40 + k * 25)
            .collect()
    } else {
        Vec::new()
    };
    let first;
    if role == Role::Pinned {
        // The pinned reader opens beside the follower, from the turn's first event.
        let mut pinned = Follower::new(url.clone(), true);
        let (end, pinned_end, pinned_problems) = {
            let mut mine = Vec::new();
            let mut theirs = Vec::new();
            let (a, b) = tokio::join!(
                follower.follow(client, &[], &mut mine),
                pinned.follow(client, &[], &mut theirs)
            );
            mine.extend(theirs);
            (a, b, mine)
        };
        problems.extend(pinned_problems);
        add(&tally.pinned_readers, 1);
        first = follower.first;
        if end.as_deref() == Some("paused") && pinned_end.as_deref() == Some("paused") {
            add(&tally.paused_turns, 1);
            let call = pending_call(client, base, conversation, turn).await?;
            let response = client
                .post(format!(
                    "{base}/api/conversations/{conversation}/turns/{turn}/decision"
                ))
                .json(&json!({ "call_id": call, "approve": true }))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if response.status().as_u16() != 202 {
                return Err(format!(
                    "{conversation}: the approval answered {}",
                    response.status()
                ));
            }
            // Both read on from where the pause left them.
            let mut mine = Vec::new();
            let mut theirs = Vec::new();
            let (a, b) = tokio::join!(
                follower.follow(client, &[], &mut mine),
                pinned.follow(client, &[], &mut theirs)
            );
            problems.extend(mine);
            problems.extend(theirs);
            for end in [a, b] {
                if end.as_deref() != Some("completed") {
                    problems.push(format!("{url}: the approved turn ended {end:?}"));
                }
            }
        } else {
            problems.push(format!(
                "{url}: the publishing turn ended {end:?} / {pinned_end:?}, not paused"
            ));
        }
        // A reader at the final id gets that turn_end again and is closed.
        let last = follower.seen.last().map_or(0, |e| e.id);
        match read(client, &url, last, None, true).await {
            Ok(again) => {
                add(&tally.end_readers, 1);
                let ok = again.events.len() == 1
                    && again.events[0].id == last
                    && again.events[0].name == "turn_end"
                    && again.closed;
                if !ok {
                    problems.push(format!(
                        "{url}: a reader at the final id {last} read {:?} (closed: {})",
                        again
                            .events
                            .iter()
                            .map(|e| (e.id, e.name.clone()))
                            .collect::<Vec<_>>(),
                        again.closed
                    ));
                }
            }
            Err(e) => problems.push(format!("{url}: reader at the final id: {e}")),
        }
        add(
            &tally.events,
            (follower.seen.len() + pinned.seen.len()) as u64,
        );
        check_turn(
            client,
            base,
            conversation,
            turn,
            &[&follower, &pinned],
            problems,
        )
        .await;
        add(&tally.reconnects, follower.reconnects + pinned.reconnects);
    } else {
        let end = follower.follow(client, &drops, problems).await;
        if end.as_deref() != Some("completed") {
            problems.push(format!("{url}: the turn ended {end:?}"));
        }
        first = follower.first;
        add(&tally.events, follower.seen.len() as u64);
        add(&tally.reconnects, follower.reconnects);
        check_turn(client, base, conversation, turn, &[&follower], problems).await;
    }
    add(&tally.turns, 1);
    Ok(first.map(|at| at - started))
}

async fn worker(
    client: reqwest::Client,
    base: String,
    worker: usize,
    deadline: Instant,
    tally: Arc<Tally>,
) -> (Vec<Duration>, Vec<String>) {
    let mut firsts = Vec::new();
    let mut problems = Vec::new();
    let mut conversation = None;
    let mut number = 0u32;
    while Instant::now() < deadline {
        if conversation.is_none() || number.is_multiple_of(TURNS_PER_CONVERSATION) {
            match new_conversation(&client, &base).await {
                Ok(id) => conversation = Some(id),
                Err(e) => {
                    problems.push(e);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            }
        }
        number += 1;
        let id = conversation.clone().expect("a conversation");
        match one_turn(&client, &base, &id, worker, number, &tally, &mut problems).await {
            Ok(Some(first)) => firsts.push(first),
            Ok(None) => {}
            Err(e) => {
                problems.push(e);
                // A conversation left with a paused or failed turn takes no more messages.
                conversation = None;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    (firsts, problems)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs the soak; returns whether it saw no problem.
pub fn run(pace: f64) -> bool {
    let seconds = env_number("PORTAL_SOAK_SECONDS", 300);
    let streams = env_number("PORTAL_SOAK_STREAMS", 500) as usize;
    if seconds == 0 || streams == 0 {
        println!("soak: skipped (PORTAL_SOAK_SECONDS or PORTAL_SOAK_STREAMS is 0)");
        return true;
    }
    // Local mode: every worker is the one local user, so the per-user limits are raised to
    // room for every stream, its pinned reader and reconnections, and every upload at once.
    let uploads = streams.max(4).to_string();
    let quota = (64u64 << 30).to_string();
    let mut flags = vec![
        "--max-uploads-in-flight",
        &uploads,
        "--upload-quota-bytes",
        &quota,
    ];
    // How long ended turns' logs stay in memory (the server's default is 600 s, longer than
    // the soak, so by default every turn's log is still held at its end).
    let linger = std::env::var("PORTAL_SOAK_LINGER_SECONDS").ok();
    if let Some(linger) = &linger {
        flags.extend(["--stream-linger-seconds", linger.as_str()]);
    }
    let server = Server::start_with(pace, streams.saturating_mul(4).max(64), &flags);
    let (idle, _) = server.memory();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let tally = Arc::new(Tally::default());
    let base = server.url.clone();
    let pid = server.child.id();

    let (unloaded, unloaded_problems, after_unloaded) = runtime.block_on(async {
        let client = reqwest::Client::new();
        let tasks: Vec<_> = (0..UNLOADED_TURNS)
            .map(|n| {
                let (client, base, tally) = (client.clone(), base.clone(), Arc::clone(&tally));
                tokio::spawn(async move {
                    tokio::time::sleep(UNLOADED_GAP * n as u32).await;
                    let mut problems = Vec::new();
                    let first = match new_conversation(&client, &base).await {
                        Ok(id) => one_turn(&client, &base, &id, n * 10, 1, &tally, &mut problems)
                            .await
                            .unwrap_or_else(|e| {
                                problems.push(e);
                                None
                            }),
                        Err(e) => {
                            problems.push(e);
                            None
                        }
                    };
                    (first, problems)
                })
            })
            .collect();
        let mut firsts = Vec::new();
        let mut problems = Vec::new();
        for task in tasks {
            let (first, p) = task.await.expect("an unloaded turn");
            firsts.extend(first);
            problems.extend(p);
        }
        (firsts, problems, server.memory())
    });

    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let sampler_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (loaded, mut problems, rss_samples) = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(streams * 2)
            .build()
            .expect("an HTTP client");
        let stop = Arc::clone(&sampler_stop);
        let sampler = tokio::spawn(async move {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let status =
                    std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                let rss: u64 = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                    .unwrap_or(0);
                samples.push((started.elapsed(), rss));
                tokio::time::sleep(Duration::from_secs(10)).await;
            }
            samples
        });
        let tasks: Vec<_> = (0..streams)
            .map(|n| {
                tokio::spawn(worker(
                    client.clone(),
                    base.clone(),
                    n,
                    deadline,
                    Arc::clone(&tally),
                ))
            })
            .collect();
        let mut firsts = Vec::new();
        let mut problems = Vec::new();
        for task in tasks {
            let (f, p) = task.await.expect("a soak worker");
            firsts.extend(f);
            problems.extend(p);
        }
        sampler_stop.store(true, Ordering::Relaxed);
        (firsts, problems, sampler.await.expect("the sampler"))
    });
    let elapsed = started.elapsed();
    let (rss_end, peak) = server.memory();
    problems.extend(unloaded_problems);

    let mut unloaded = unloaded;
    let mut loaded = loaded;
    unloaded.sort();
    loaded.sort();
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    println!();
    println!(
        "soak: {streams} workers for {seconds} s on one server (demo pace {pace}, linger {} s), \
         loopback; stopped after {:.1} s",
        linger.as_deref().unwrap_or("600"),
        elapsed.as_secs_f64()
    );
    println!("| | |\n|---|---|");
    println!(
        "| turns followed (unloaded + soak) / events read | {} / {} |",
        get(&tally.turns),
        get(&tally.events)
    );
    println!(
        "| uploads: markdown / PNG (messages with attachments) | {} / {} ({}) |",
        get(&tally.uploads_markdown),
        get(&tally.uploads_png),
        get(&tally.attached_messages)
    );
    println!(
        "| reconnections with Last-Event-ID | {} |",
        get(&tally.reconnects)
    );
    println!(
        "| pinned readers (paused turns approved) / readers at the final id | {} ({}) / {} |",
        get(&tally.pinned_readers),
        get(&tally.paused_turns),
        get(&tally.end_readers)
    );
    if let (false, false) = (unloaded.is_empty(), loaded.is_empty()) {
        println!(
            "| time to first event, unloaded ({} turns one at a time) p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
            unloaded.len(),
            ms(percentile(&unloaded, 0.5)),
            ms(percentile(&unloaded, 0.99)),
            ms(*unloaded.last().expect("one"))
        );
        println!(
            "| time to first event, soak ({} turns) p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
            loaded.len(),
            ms(percentile(&loaded, 0.5)),
            ms(percentile(&loaded, 0.99)),
            ms(*loaded.last().expect("one"))
        );
    }
    println!(
        "| server memory idle / after unloaded / peak (VmHWM) / at the end | {:.1} / {:.1} / {:.1} / {:.1} MiB |",
        idle as f64 / 1024.0,
        after_unloaded.0 as f64 / 1024.0,
        peak as f64 / 1024.0,
        rss_end as f64 / 1024.0
    );
    println!(
        "| server memory every 10 s (MiB) | {} |",
        rss_samples
            .iter()
            .map(|(_, kib)| format!("{:.0}", *kib as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let numbering = problems
        .iter()
        .filter(|p| p.contains("lost or repeated"))
        .count();
    let text = problems.iter().filter(|p| p.contains("are stored")).count();
    println!(
        "| lost or repeated events / text mismatches / other problems | {numbering} / {text} / {} |",
        problems.len() - numbering - text
    );
    for problem in problems.iter().take(15) {
        println!("  {problem}");
    }
    problems.is_empty()
}
