//! The event log of a turn: every event it produced, numbered so that a browser that reconnects
//! with `Last-Event-ID` resumes where it left off, losing and duplicating nothing, also after the
//! server restarted.
//!
//! An event's id is its place in the turn's stored content: the sum of the weights of the events
//! up to and including it. A delta weighs its text's length in bytes; a message start, a block
//! start, a block end, a compaction and a turn end weigh 1. So a streamed block's deltas end at
//! the same id however the model split its text, and a log rebuilt from the stored turn
//! ([`TurnLog::rebuilt`]), where each block is one delta, numbers every event the same way: the
//! numbering is a function of the stored blocks. What storage does not keep weighs 0 and shares
//! the id before it: a compaction's start (its block is written only when the summary is,
//! rule C5), the end of a compaction that failed, and a message announced again after a failed
//! compaction left it empty.
//!
//! A model call's output withdrawn after a context overflow (rule C2) leaves the log
//! ([`TurnLog::withdraw`]): a reader that comes later never reads it, and one that read part of
//! it reads `withdrawn` next. Ids go on from where the withdrawn events left them, so an id a
//! reader holds names one place only; after a withdrawal they run ahead of the places in the
//! stored turn by the weight withdrawn.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::Stream;
use portal_core::stream::TurnEvent;
use portal_core::turn_run::replay;
use portal_core::{BlockKind, Turn};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use crate::storage::TurnRef;

/// How event streams are kept: heartbeats while a turn is quiet, how long a stream waits for a
/// turn that makes no progress, and how long a turn's log stays in memory once it ended or paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// A comment line is sent after this long without an event, so proxies and browsers keep the
    /// connection and a reader that left is noticed. **Decision:** 15 s.
    pub heartbeat: Duration,
    /// A stream that sent nothing new for this long closes; a browser reconnects on its own with
    /// `Last-Event-ID`. **Decision:** 5 minutes.
    pub idle: Duration,
    /// How long the log of a turn that ended or paused is kept in memory; after that it is
    /// rebuilt from storage when read. **Decision:** 10 minutes.
    pub linger: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            heartbeat: Duration::from_secs(15),
            idle: Duration::from_secs(300),
            linger: Duration::from_secs(600),
        }
    }
}

/// A turn's events so far, shared between the turn loop and every stream that reads them.
#[derive(Debug)]
pub struct TurnLog {
    state: Mutex<State>,
    changed: watch::Sender<()>,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<Entry>,
    /// The id of the last event: the weight of everything so far.
    end: u64,
    /// Whether a run is writing to the log: readers at its end wait for more.
    running: bool,
    /// The message the last `message_start` announced.
    announced: Option<usize>,
    /// The compaction block being written, whose end without `compacted` means it failed.
    compaction: Option<(usize, usize)>,
    /// For each withdrawal, the place in `entries` from which its events were dropped.
    withdrawals: Vec<usize>,
    /// Where the log's changes go for other replicas, when it has readers there.
    publisher: Option<Publisher>,
}

/// A change to a log, as replicas pass it on: replaying a log's changes in order on an empty
/// log gives the same events with the same ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogChange {
    Push(TurnEvent),
    Withdraw { mark: usize, event: TurnEvent },
    Resume,
}

/// One change of one turn's log, numbered from 0 in the order it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub at: TurnRef,
    pub seq: u64,
    pub change: LogChange,
}

/// Sends a log's changes, numbered, to a replica's outbox.
#[derive(Debug)]
struct Publisher {
    at: TurnRef,
    next: u64,
    outbox: mpsc::UnboundedSender<Published>,
}

impl Publisher {
    fn send(&mut self, change: LogChange) {
        let published = Published {
            at: self.at.clone(),
            seq: self.next,
            change,
        };
        self.next += 1;
        // A closed outbox means the server is stopping: nobody is left to read the change.
        let _ = self.outbox.send(published);
    }
}

/// Where a log stood before a model call published anything, for [`TurnLog::withdraw`].
#[derive(Debug, Clone, Copy)]
pub struct Mark(usize);

#[derive(Debug)]
struct Entry {
    /// The id of the event before it.
    start: u64,
    /// The event's id.
    end: u64,
    event: TurnEvent,
}

impl Entry {
    /// Whether a reader that read up to id `after` still has to read this event: it ends after
    /// `after`, or weighs nothing and sits right at `after` (the reader may not have seen it; an
    /// event that weighs nothing is idempotent for a front end).
    fn unread(&self, after: u64) -> bool {
        self.end > after || (self.end == after && self.start == self.end)
    }

    /// The event for a reader that read up to `after`: a delta it read part of comes as the rest
    /// of its text (after a restart, the streamed deltas of a block are one delta).
    fn rest(&self, after: u64) -> TurnEvent {
        match &self.event {
            TurnEvent::Delta {
                message,
                block,
                text,
            } if self.start < after => {
                // `after - start` is below the delta's weight, its text's length.
                let mut at = usize::try_from(after - self.start).unwrap_or(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                TurnEvent::Delta {
                    message: *message,
                    block: *block,
                    text: text[at..].to_string(),
                }
            }
            other => other.clone(),
        }
    }
}

impl State {
    fn push(&mut self, event: TurnEvent) {
        let weight = match &event {
            TurnEvent::MessageStart { message, .. } => {
                u64::from(self.announced.replace(*message) != Some(*message))
            }
            TurnEvent::BlockStart {
                message,
                block,
                kind: BlockKind::Compaction,
                ..
            } => {
                self.compaction = Some((*message, *block));
                0
            }
            TurnEvent::BlockEnd { message, block }
                if self.compaction == Some((*message, *block)) =>
            {
                self.compaction = None;
                0
            }
            TurnEvent::Delta { text, .. } => {
                if text.is_empty() {
                    return;
                }
                u64::try_from(text.len()).unwrap_or(u64::MAX)
            }
            TurnEvent::Compacted { .. } => {
                self.compaction = None;
                1
            }
            TurnEvent::TurnEnd { .. } => {
                self.running = false;
                1
            }
            TurnEvent::BlockStart { .. }
            | TurnEvent::BlockEnd { .. }
            | TurnEvent::Withdrawn { .. } => 1,
        };
        let start = self.end;
        self.end = start.saturating_add(weight);
        self.entries.push(Entry {
            start,
            end: self.end,
            event,
        });
    }

    /// Drops the events from `mark` on and appends `withdrawn`.
    fn withdraw(&mut self, mark: Mark, withdrawn: TurnEvent) {
        let from = mark.0.min(self.entries.len());
        self.entries.truncate(from);
        self.withdrawals.push(from);
        self.announced = self
            .entries
            .iter()
            .rev()
            .find_map(|entry| match entry.event {
                TurnEvent::MessageStart { message, .. } => Some(message),
                _ => None,
            });
        self.push(withdrawn);
    }

    /// What a reader at `cursor` that read up to `after` gets next.
    fn next(&self, reader: &mut Reader) -> Next {
        // A reader that read events since withdrawn goes back to where they were: the
        // withdrawal is its next event.
        for &from in &self.withdrawals[reader.withdrawals..] {
            if let Some(cursor) = &mut reader.cursor {
                *cursor = (*cursor).min(from);
            }
        }
        reader.withdrawals = self.withdrawals.len();
        let cursor = *reader.cursor.get_or_insert_with(|| {
            self.entries
                .partition_point(|entry| !entry.unread(reader.after))
        });
        let unread = self.entries[cursor.min(self.entries.len())..]
            .iter()
            .position(|entry| entry.unread(reader.after))
            .map(|skipped| cursor + skipped);
        if let Some(at) = unread {
            let entry = &self.entries[at];
            reader.cursor = Some(at + 1);
            reader.sent = true;
            let last = at + 1 == self.entries.len() && !self.running;
            return Next::Send {
                id: entry.end,
                event: entry.rest(reader.after),
                last: last && matches!(entry.event, TurnEvent::TurnEnd { .. }),
            };
        }
        reader.cursor = Some(self.entries.len());
        if self.running {
            return Next::Wait;
        }
        // Nothing after `after` and nothing more to come: a reader at or past the end (a browser
        // reconnecting on its own after the turn's end) gets the end again.
        match self.entries.last() {
            Some(entry) if !reader.sent && matches!(entry.event, TurnEvent::TurnEnd { .. }) => {
                reader.sent = true;
                Next::Send {
                    id: entry.end,
                    event: entry.event.clone(),
                    last: true,
                }
            }
            _ => Next::End,
        }
    }
}

/// Where one stream is in a log.
#[derive(Debug)]
struct Reader {
    /// The id of the last event the reader has.
    after: u64,
    /// The next entry to look at, once placed.
    cursor: Option<usize>,
    /// Whether the stream sent anything yet.
    sent: bool,
    /// How many of the log's withdrawals the cursor has been moved back for.
    withdrawals: usize,
}

enum Next {
    Send {
        id: u64,
        event: TurnEvent,
        /// The turn's end, with nothing more to come: the stream closes after it.
        last: bool,
    },
    Wait,
    End,
}

impl TurnLog {
    /// An empty log, for a turn that has published nothing yet.
    pub fn new() -> Arc<Self> {
        Arc::new(TurnLog {
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(()),
        })
    }

    /// The log a stored turn's runs published, numbered alike: each message after the one that
    /// opened the turn, each block whole, a `turn_end` where the turn paused, and its end once it
    /// ended, with the reason its note kept (a failed turn without one says so).
    pub fn rebuilt(turn: &Turn) -> Arc<Self> {
        let log = TurnLog::new();
        {
            let mut state = log.lock();
            for event in replay(turn) {
                state.push(event);
            }
            state.running = false;
        }
        log
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends an event and wakes every reader. An empty delta carries nothing and is left out.
    pub fn push(&self, event: TurnEvent) {
        self.change(LogChange::Push(event), true);
    }

    /// From now on, every change is also sent to `outbox` for other replicas, numbered on from
    /// `next` (the number of changes this log was replayed from).
    pub fn publish(&self, at: TurnRef, next: u64, outbox: mpsc::UnboundedSender<Published>) {
        self.lock().publisher = Some(Publisher { at, next, outbox });
    }

    /// Publishes the log as it is, each event a change numbered from 0, then every change from
    /// now on: for a log rebuilt from storage, whose changes were never published.
    pub fn publish_all(&self, at: TurnRef, outbox: mpsc::UnboundedSender<Published>) {
        let mut state = self.lock();
        let mut publisher = Publisher {
            at,
            next: 0,
            outbox,
        };
        for entry in &state.entries {
            publisher.send(LogChange::Push(entry.event.clone()));
        }
        state.publisher = Some(publisher);
    }

    /// A log made of the changes another replica published, in order, from the first.
    pub fn replayed(changes: Vec<LogChange>) -> Arc<Self> {
        let log = TurnLog::new();
        for change in changes {
            log.apply(change);
        }
        log
    }

    /// Makes a change another replica published, without publishing it again.
    pub fn apply(&self, change: LogChange) {
        self.change(change, false);
    }

    /// Makes `change`, publishes it first when `publish` and the log is published, and wakes
    /// every reader.
    fn change(&self, change: LogChange, publish: bool) {
        let mut state = self.lock();
        if publish && let Some(publisher) = &mut state.publisher {
            publisher.send(change.clone());
        }
        match change {
            LogChange::Push(event) => state.push(event),
            LogChange::Withdraw { mark, event } => state.withdraw(Mark(mark), event),
            LogChange::Resume => state.running = true,
        }
        drop(state);
        self.changed.send_replace(());
    }

    /// Readers at the end stop waiting: nothing more will come (the run writing it is gone).
    pub fn settle(&self) {
        self.lock().running = false;
        self.changed.send_replace(());
    }

    /// Whether a run still writes to the log, or is expected to.
    pub fn is_running(&self) -> bool {
        self.lock().running
    }

    /// Where the log stands now: a model call's events start after it.
    pub fn mark(&self) -> Mark {
        Mark(self.lock().entries.len())
    }

    /// Withdraws the events published since `mark`, a model call's output that storage no
    /// longer holds (rule C2), and publishes `withdrawn` in their place.
    pub fn withdraw(&self, mark: Mark, withdrawn: TurnEvent) {
        let change = LogChange::Withdraw {
            mark: mark.0,
            event: withdrawn,
        };
        self.change(change, true);
    }

    /// A run starts writing to the log: readers at its end wait for its events. The `turn_end`
    /// the run pushes when it stops or pauses ends that.
    pub fn resume(&self) {
        self.change(LogChange::Resume, true);
    }

    /// The events after id `after`, as `(id, event)`. A delta read in part comes as the rest of
    /// its text. The stream ends after a `turn_end` that is the log's last event with no run
    /// writing; a reader at or past such an end gets that `turn_end` again, then the stream ends.
    /// While a run writes, the stream waits for its events, and ends after `idle` without one. A
    /// paused turn's `turn_end` ends the stream; when the turn resumes, its events continue the
    /// same numbering, so a browser reconnecting with `Last-Event-ID` reads on.
    pub fn read_from(
        self: &Arc<Self>,
        after: u64,
        idle: Duration,
    ) -> impl Stream<Item = (u64, TurnEvent)> + use<> {
        let log = Arc::clone(self);
        let changed = self.changed.subscribe();
        let reader = Reader {
            after,
            cursor: None,
            sent: false,
            withdrawals: 0,
        };
        futures_util::stream::unfold(
            (log, changed, reader, false),
            move |(log, mut changed, mut reader, ended)| async move {
                if ended {
                    return None;
                }
                loop {
                    let next = log.lock().next(&mut reader);
                    match next {
                        Next::Send { id, event, last } => {
                            return Some(((id, event), (log, changed, reader, last)));
                        }
                        Next::End => return None,
                        Next::Wait => match tokio::time::timeout(idle, changed.changed()).await {
                            Ok(Ok(())) => {}
                            Ok(Err(_)) | Err(_) => return None,
                        },
                    }
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use portal_core::block::{CompactionTrigger, TurnsCovered};
    use portal_core::stream::block_events;
    use portal_core::{Block, Message, Role, TurnKind, TurnStatus};
    use serde_json::json;

    use super::*;

    fn message(role: Role, blocks: Vec<Block>) -> Message {
        Message::new(role, blocks)
    }

    fn text_block(text: &str) -> Block {
        Block::text(text)
    }

    /// A turn that compacted, asked a question with another call answered "not run", was
    /// answered, asked approval for a call, was approved, and ended with thinking and text.
    fn turn(status: TurnStatus) -> Turn {
        let compaction = Block::Compaction {
            summary: "Earlier: scripts.".into(),
            trigger: CompactionTrigger::Auto,
            covers: TurnsCovered { first: 1, last: 2 },
            kept_messages: 0,
        };
        let call = |id: &str, name: &str| Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input: json!({"text": "héllo"}),
        };
        Turn {
            index: 3,
            kind: TurnKind::Chat,
            status,
            effort: None,
            context_tokens: None,
            trace: Vec::new(),
            messages: vec![
                message(Role::User, vec![text_block("Tell me")]),
                message(
                    Role::Assistant,
                    vec![
                        compaction,
                        Block::Thinking {
                            text: "Let me ask 🤔".into(),
                        },
                        call("c1", "count_characters"),
                        Block::ClarificationRequest {
                            id: "c2".into(),
                            question: "Which script?".into(),
                        },
                    ],
                ),
                message(
                    Role::Tool,
                    vec![Block::ToolResult {
                        call_id: "c1".into(),
                        content: "Not run".into(),
                        is_error: true,
                    }],
                ),
                message(Role::User, vec![text_block("Latin")]),
                message(
                    Role::Assistant,
                    vec![
                        call("c3", "publish_note"),
                        Block::ApprovalRequest {
                            call_id: "c3".into(),
                            summary: "Publish?".into(),
                        },
                    ],
                ),
                message(
                    Role::Tool,
                    vec![Block::ToolResult {
                        call_id: "c3".into(),
                        content: "Published".into(),
                        is_error: false,
                    }],
                ),
                message(
                    Role::Assistant,
                    vec![
                        Block::Thinking {
                            text: "Done".into(),
                        },
                        text_block("Here it is: 日本語 👩‍💻."),
                    ],
                ),
            ],
        }
    }

    /// What the turn loop publishes for [`turn`], the model's text split into pieces of
    /// `piece` characters, with a failed compaction attempt before the last reply.
    fn live(turn: &Turn, piece: usize) -> Arc<TurnLog> {
        let log = TurnLog::new();
        log.resume();
        let streamed = |log: &TurnLog, m: usize, b: usize, kind: BlockKind, text: &str| {
            log.push(TurnEvent::BlockStart {
                message: m,
                block: b,
                kind,
                call: None,
                is_error: false,
            });
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(piece) {
                log.push(TurnEvent::Delta {
                    message: m,
                    block: b,
                    text: chunk.iter().collect(),
                });
            }
            log.push(TurnEvent::BlockEnd {
                message: m,
                block: b,
            });
        };
        let whole = |log: &TurnLog, m: usize, b: usize| {
            let blocks = &turn.messages[m].blocks;
            for event in block_events(m, b, &blocks[b], blocks) {
                log.push(event);
            }
        };
        let start = |log: &TurnLog, m: usize| {
            log.push(TurnEvent::MessageStart {
                message: m,
                role: turn.messages[m].role,
            })
        };
        let pause = |log: &TurnLog| {
            log.push(TurnEvent::TurnEnd {
                status: TurnStatus::Paused,
                reason: None,
            });
            log.resume();
        };
        start(&log, 1);
        whole(&log, 1, 0);
        streamed(&log, 1, 1, BlockKind::Thinking, "Let me ask 🤔");
        whole(&log, 1, 2);
        whole(&log, 1, 3);
        start(&log, 2);
        whole(&log, 2, 0);
        pause(&log);
        start(&log, 3);
        whole(&log, 3, 0);
        start(&log, 4);
        whole(&log, 4, 0);
        whole(&log, 4, 1);
        pause(&log);
        start(&log, 5);
        whole(&log, 5, 0);
        // A compaction that failed: nothing stored, and the message is announced again.
        start(&log, 6);
        log.push(TurnEvent::BlockStart {
            message: 6,
            block: 0,
            kind: BlockKind::Compaction,
            call: None,
            is_error: false,
        });
        log.push(TurnEvent::BlockEnd {
            message: 6,
            block: 0,
        });
        start(&log, 6);
        streamed(&log, 6, 0, BlockKind::Thinking, "Done");
        streamed(&log, 6, 1, BlockKind::Text, "Here it is: 日本語 👩‍💻.");
        log.push(TurnEvent::TurnEnd {
            status: turn.status,
            reason: None,
        });
        log
    }

    fn entries(log: &TurnLog) -> Vec<(u64, TurnEvent)> {
        log.lock()
            .entries
            .iter()
            .map(|e| (e.end, e.event.clone()))
            .collect()
    }

    async fn read(log: &Arc<TurnLog>, after: u64) -> Vec<(u64, TurnEvent)> {
        use futures_util::StreamExt;
        log.read_from(after, Duration::from_secs(5)).collect().await
    }

    #[test]
    fn a_rebuilt_log_numbers_every_stored_event_as_the_live_log_did_however_text_was_split() {
        let stored = turn(TurnStatus::Completed);
        let rebuilt = entries(&TurnLog::rebuilt(&stored));
        for piece in [1, 2, 5, 100] {
            let live = entries(&live(&stored, piece));
            let weighted = |events: &[(u64, TurnEvent)]| -> Vec<(u64, TurnEvent)> {
                let mut kept: Vec<(u64, TurnEvent)> = Vec::new();
                for (id, event) in events {
                    if matches!(event, TurnEvent::Delta { .. }) {
                        continue;
                    }
                    if kept.last().is_some_and(|(last, _)| last == id) {
                        continue; // weighs nothing: not stored
                    }
                    kept.push((*id, event.clone()));
                }
                kept
            };
            assert_eq!(weighted(&live), weighted(&rebuilt), "pieces of {piece}");
            assert_eq!(live.last(), rebuilt.last());
        }
        assert_eq!(
            rebuilt
                .iter()
                .filter(|(_, e)| matches!(
                    e,
                    TurnEvent::TurnEnd {
                        status: TurnStatus::Paused,
                        ..
                    }
                ))
                .count(),
            2,
            "both pauses"
        );
    }

    #[tokio::test]
    async fn a_reader_resumes_from_any_id_of_the_live_log_on_the_rebuilt_one_losing_nothing() {
        let stored = turn(TurnStatus::Completed);
        let live = live(&stored, 3);
        let rebuilt = TurnLog::rebuilt(&stored);
        let all = read(&live, 0).await;
        let text = |events: &[(u64, TurnEvent)]| -> String {
            events
                .iter()
                .filter_map(|(_, e)| match e {
                    TurnEvent::Delta { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect()
        };
        for at in 0..all.len() {
            let (seen, _) = all[at];
            let rest = read(&rebuilt, seen).await;
            let mut joined = all[..=at].to_vec();
            joined.extend(rest.iter().cloned());
            assert_eq!(text(&joined), text(&all), "resumed after {seen}");
            assert!(rest.iter().all(|(id, _)| *id >= seen), "after {seen}");
            assert_eq!(rest.last(), all.last(), "after {seen}");
        }
    }

    #[tokio::test]
    async fn a_rebuilt_failed_turn_ends_with_the_reason_its_note_kept() {
        let mut stored = turn(TurnStatus::Failed);
        stored.trace.push(portal_core::TraceEntry::TurnFailed {
            reason: "The model's endpoint is overloaded; send the message again in a minute."
                .into(),
        });
        let log = TurnLog::rebuilt(&stored);
        let (_, last) = read(&log, 0).await.pop().expect("an end");
        assert_eq!(
            last,
            TurnEvent::TurnEnd {
                status: TurnStatus::Failed,
                reason: Some(
                    "The model's endpoint is overloaded; send the message again in a minute."
                        .into()
                ),
            }
        );
    }

    #[tokio::test]
    async fn a_reader_at_or_past_the_end_gets_the_end_again_and_the_stream_closes() {
        let log = TurnLog::rebuilt(&turn(TurnStatus::Failed));
        let last = log.lock().end;
        let end = (
            last,
            TurnEvent::TurnEnd {
                status: TurnStatus::Failed,
                reason: Some(portal_core::turn_run::UNNOTED_FAILURE.into()),
            },
        );
        for after in [last, last + 1, u64::MAX] {
            assert_eq!(
                read(&log, after).await,
                std::slice::from_ref(&end),
                "after {after}"
            );
        }
        assert_eq!(read(&log, last - 1).await, [end]);
    }

    #[tokio::test]
    async fn a_reader_waits_while_a_run_writes_and_leaves_after_the_idle_limit() {
        use futures_util::StreamExt;
        let log = TurnLog::rebuilt(&turn(TurnStatus::Paused));
        let paused = log.lock().end;
        log.resume();
        let mut stream = Box::pin(log.read_from(paused, Duration::from_millis(200)));
        let writer = Arc::clone(&log);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            writer.push(TurnEvent::MessageStart {
                message: 5,
                role: Role::Tool,
            });
        });
        let next = stream.next().await;
        assert_eq!(
            next,
            Some((
                paused + 1,
                TurnEvent::MessageStart {
                    message: 5,
                    role: Role::Tool
                }
            ))
        );
        let started = std::time::Instant::now();
        assert_eq!(stream.next().await, None, "idle");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    // C2: a call's output withdrawn from the log is read by no reader that comes later; a
    // follower that read it, and a reader resuming inside it, read the withdrawal next; one that
    // read the withdrawal reads on. Every one of them folds to the same turn.
    #[tokio::test]
    async fn c2_withdrawn_events_are_read_only_as_their_withdrawal() {
        use futures_util::StreamExt;
        use portal_core::TurnState;
        let log = TurnLog::new();
        log.resume();
        let mark = log.mark();
        let partial = [
            TurnEvent::MessageStart {
                message: 1,
                role: Role::Assistant,
            },
            TurnEvent::BlockStart {
                message: 1,
                block: 0,
                kind: BlockKind::Text,
                call: None,
                is_error: false,
            },
            TurnEvent::Delta {
                message: 1,
                block: 0,
                text: "Here is".into(),
            },
        ];
        for event in &partial {
            log.push(event.clone());
        }
        let idle = Duration::from_secs(5);
        let mut follower = Box::pin(log.read_from(0, idle));
        let mut followed = Vec::new();
        for _ in &partial {
            followed.push(follower.next().await.expect("an event"));
        }
        let withdrawn_at = log.lock().end;
        log.withdraw(
            mark,
            TurnEvent::Withdrawn {
                message: 1,
                block: 0,
            },
        );
        let summary = "## Requests\n- Plan the budget".to_string();
        let retry = [
            TurnEvent::MessageStart {
                message: 1,
                role: Role::Assistant,
            },
            TurnEvent::BlockStart {
                message: 1,
                block: 0,
                kind: BlockKind::Compaction,
                call: None,
                is_error: false,
            },
            TurnEvent::Compacted {
                message: 1,
                block: 0,
                trigger: CompactionTrigger::Auto,
                covers: TurnsCovered { first: 1, last: 2 },
                summary,
            },
            TurnEvent::BlockStart {
                message: 1,
                block: 1,
                kind: BlockKind::Text,
                call: None,
                is_error: false,
            },
            TurnEvent::Delta {
                message: 1,
                block: 1,
                text: "Done.".into(),
            },
            TurnEvent::BlockEnd {
                message: 1,
                block: 1,
            },
            TurnEvent::TurnEnd {
                status: TurnStatus::Completed,
                reason: None,
            },
        ];
        for event in &retry {
            log.push(event.clone());
        }
        followed.extend(follower.collect::<Vec<_>>().await);
        let ids: Vec<u64> = followed.iter().map(|(id, _)| *id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] <= w[1]),
            "ids never go back: {ids:?}"
        );
        assert!(
            matches!(followed[3], (id, TurnEvent::Withdrawn { .. }) if id > withdrawn_at),
            "{followed:?}"
        );

        let read = |after: u64| {
            let log = Arc::clone(&log);
            async move {
                log.read_from(after, idle)
                    .map(|(_, event)| event)
                    .collect::<Vec<_>>()
                    .await
            }
        };
        let fold = |events: &[TurnEvent]| {
            let mut state = TurnState::opened(1, "Hello");
            for event in events {
                state.apply(event);
            }
            state
        };
        let whole = fold(&followed.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>());
        assert_eq!(whole.blocks.len(), 2, "{whole:?}");
        assert_eq!(whole.blocks[1].text, "Done.");
        let later = read(0).await;
        assert!(
            later.iter().all(|e| !matches!(
                e,
                TurnEvent::Delta { text, .. } if text == "Here is"
            )),
            "a later reader never reads what was withdrawn: {later:?}"
        );
        assert_eq!(fold(&later), whole, "a later reader");
        // Read up to id 4: the message, the block and "He".
        let mut inside = fold(&[
            partial[0].clone(),
            partial[1].clone(),
            TurnEvent::Delta {
                message: 1,
                block: 0,
                text: "He".into(),
            },
        ]);
        let resumed = read(4).await;
        assert!(
            matches!(resumed[0], TurnEvent::Withdrawn { .. }),
            "{resumed:?}"
        );
        for event in &resumed {
            inside.apply(event);
        }
        assert_eq!(inside, whole, "a reader resuming inside the withdrawn text");
        let withdrawal = ids[3];
        let mut past = fold(
            &followed[..4]
                .iter()
                .map(|(_, e)| e.clone())
                .collect::<Vec<_>>(),
        );
        let rest = read(withdrawal).await;
        assert!(
            !rest
                .iter()
                .any(|e| matches!(e, TurnEvent::Withdrawn { .. }))
        );
        for event in &rest {
            past.apply(event);
        }
        assert_eq!(past, whole, "a reader that read the withdrawal");
    }
}
