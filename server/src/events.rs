//! The event log of a running turn: every event it produced, numbered, so that a browser that
//! reconnects with `Last-Event-ID` resumes where it left off, losing and duplicating nothing.

use std::sync::{Arc, Mutex};

use futures_util::Stream;
use portal_core::stream::TurnEvent;
use tokio::sync::watch;

/// A turn's events so far, shared between the turn loop and every stream that reads them.
#[derive(Debug)]
pub struct TurnLog {
    events: Mutex<Vec<TurnEvent>>,
    count: watch::Sender<usize>,
}

impl TurnLog {
    pub fn new() -> Arc<Self> {
        Arc::new(TurnLog {
            events: Mutex::new(Vec::new()),
            count: watch::Sender::new(0),
        })
    }

    /// Appends an event and wakes every reader.
    pub fn push(&self, event: TurnEvent) {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        events.push(event);
        self.count.send_replace(events.len());
    }

    /// The events from position `from` on (0-based), as `(id, event)` with 1-based ids, ending after
    /// a `turn_end` that is the log's last event when read. A paused turn's `turn_end` ends the
    /// stream; when the turn resumes, its events continue the same log and numbering, so a
    /// browser reconnecting with `Last-Event-ID` reads on.
    pub fn read_from(
        self: &Arc<Self>,
        from: usize,
    ) -> impl Stream<Item = (usize, TurnEvent)> + use<> {
        let log = Arc::clone(self);
        let count = self.count.subscribe();
        futures_util::stream::unfold(
            (log, count, from, false),
            |(log, mut count, next, ended)| async move {
                if ended {
                    return None;
                }
                loop {
                    let (event, last) = {
                        let events = log.events.lock().unwrap_or_else(|e| e.into_inner());
                        (events.get(next).cloned(), next + 1 == events.len())
                    };
                    if let Some(event) = event {
                        let ended = last && matches!(event, TurnEvent::TurnEnd { .. });
                        return Some(((next + 1, event), (log, count, next + 1, ended)));
                    }
                    if count.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
    }
}
