//! The event log of a turn: every event it produced, numbered so that a browser that reconnects
//! with `Last-Event-ID` resumes where it left off, losing and duplicating nothing, also after the
//! server restarted.
//!
//! An event's id is its place in the turn's stored content: the sum of the weights of the events
//! up to and including it. A delta weighs its text's length in bytes; a message start, a block
//! start, a block end, a compaction and a turn end weigh 1. So a streamed block's deltas end at
//! the same id however the model split its text, and a log rebuilt from the stored turn
//! ([`TurnLog::rebuilt`]), where each block is one delta, numbers every event the same way: the
//! numbering is a function of the stored blocks.
//!
//! The log keeps a block's consecutive deltas as one, which grows as they come: a reply written
//! a character at a time holds its text once, not an event per character. A reader that read
//! part of it reads the rest of its text next, as a reader resuming inside a delta does. A model
//! call's output opens blocks of its own (core's writer ends the open block first), so the place
//! a withdrawal goes back to never falls inside a grown delta. What storage does not keep weighs 0 and shares
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

use portal_store::TurnRef;

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

    /// Whether the event may still grow: a delta, which the block's next deltas join while it
    /// is the log's last event.
    fn grows(&self) -> bool {
        matches!(self.event, TurnEvent::Delta { .. })
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
            TurnEvent::Delta {
                message,
                block,
                text,
            } => {
                if text.is_empty() {
                    return;
                }
                let weight = u64::try_from(text.len()).unwrap_or(u64::MAX);
                if let Some(last) = self.entries.last_mut()
                    && let TurnEvent::Delta {
                        message: m,
                        block: b,
                        text: kept,
                    } = &mut last.event
                    && (*m, *b) == (*message, *block)
                {
                    kept.push_str(text);
                    last.end = last.end.saturating_add(weight);
                    self.end = last.end;
                    return;
                }
                weight
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
            let event = entry.rest(reader.after);
            // The reader stays on a delta, which grows while its block streams, for the rest.
            reader.cursor = Some(if entry.grows() { at } else { at + 1 });
            reader.after = reader.after.max(entry.end);
            reader.sent = true;
            let last = at + 1 == self.entries.len() && !self.running;
            return Next::Send {
                id: entry.end,
                event,
                last: last && matches!(entry.event, TurnEvent::TurnEnd { .. }),
            };
        }
        // Everything is read; the last delta may still grow.
        let growing = self.entries.last().is_some_and(Entry::grows);
        reader.cursor = Some(self.entries.len() - usize::from(growing));
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
    /// The id of the last event the reader has, or of the part of a delta it read.
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
mod tests;
