//! The turns this process is running or ran lately: their event logs, how to cancel them, and
//! the approval decisions a paused turn has collected so far.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use crate::events::TurnLog;
use crate::storage::TurnRef;

/// How long an ended turn's event log is kept for browsers that reconnect. **Decision:** 10
/// minutes; after that (or a restart) the browser reads the conversation instead.
pub const LINGER: Duration = Duration::from_secs(600);

#[derive(Debug, Default)]
struct Live {
    log: Option<Arc<TurnLog>>,
    cancel: Option<watch::Sender<bool>>,
    /// The decisions taken on the pause the turn had with `decided_at` messages.
    decisions: HashMap<String, bool>,
    decided_at: usize,
    /// Bumped each time the turn runs, so a lingering removal spares a resumed turn.
    generation: u64,
}

/// Live turns by conversation and index.
#[derive(Debug, Default, Clone)]
pub(super) struct LiveTurns {
    turns: Arc<Mutex<HashMap<TurnRef, Live>>>,
}

impl LiveTurns {
    fn lock(&self) -> MutexGuard<'_, HashMap<TurnRef, Live>> {
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the turn running: its log (continued when it has one) and a fresh cancel signal.
    pub fn running(&self, at: &TurnRef) -> (Arc<TurnLog>, watch::Receiver<bool>) {
        let mut turns = self.lock();
        let live = turns.entry(at.clone()).or_default();
        let log = Arc::clone(live.log.get_or_insert_with(TurnLog::new));
        let (sender, receiver) = watch::channel(false);
        live.cancel = Some(sender);
        live.generation += 1;
        (log, receiver)
    }

    pub fn log(&self, at: &TurnRef) -> Option<Arc<TurnLog>> {
        self.lock().get(at).and_then(|l| l.log.clone())
    }

    /// The turn's log, opened now when it has none (a turn that ran before a restart).
    pub fn log_or_new(&self, at: &TurnRef) -> Arc<TurnLog> {
        let mut turns = self.lock();
        let live = turns.entry(at.clone()).or_default();
        Arc::clone(live.log.get_or_insert_with(TurnLog::new))
    }

    /// Signals the running turn to stop. False when no task of this process runs it.
    pub fn cancel(&self, at: &TurnRef) -> bool {
        self.lock()
            .get(at)
            .and_then(|l| l.cancel.as_ref())
            .is_some_and(|c| c.send(true).is_ok())
    }

    /// Records a decision on the pause the turn has with `messages` messages, and returns every
    /// decision taken on that pause so far. `None`, recording nothing, when the call was decided
    /// already on it, or the turn has moved past it: each decision is taken once.
    pub fn decide(
        &self,
        at: &TurnRef,
        messages: usize,
        call_id: &str,
        approve: bool,
    ) -> Option<HashMap<String, bool>> {
        let mut turns = self.lock();
        let live = turns.entry(at.clone()).or_default();
        match messages.cmp(&live.decided_at) {
            std::cmp::Ordering::Less => return None,
            std::cmp::Ordering::Greater => {
                live.decisions.clear();
                live.decided_at = messages;
            }
            std::cmp::Ordering::Equal => {}
        }
        if live.decisions.contains_key(call_id) {
            return None;
        }
        live.decisions.insert(call_id.to_string(), approve);
        Some(live.decisions.clone())
    }

    /// Takes back a decision whose turn could not be resumed, so the user can decide again.
    pub fn withdraw(&self, at: &TurnRef, messages: usize, call_id: &str) {
        if let Some(live) = self.lock().get_mut(at)
            && live.decided_at == messages
        {
            live.decisions.remove(call_id);
        }
    }

    /// The turn paused: it can no longer be signalled, its log stays.
    pub fn paused(&self, at: &TurnRef) {
        if let Some(live) = self.lock().get_mut(at) {
            live.cancel = None;
        }
    }

    /// The turn ended: its log is dropped after [`LINGER`] unless the turn runs again.
    pub fn ended(&self, at: &TurnRef) {
        let generation = {
            let mut turns = self.lock();
            let Some(live) = turns.get_mut(at) else {
                return;
            };
            live.cancel = None;
            live.generation
        };
        let turns = self.clone();
        let at = at.clone();
        tokio::spawn(async move {
            tokio::time::sleep(LINGER).await;
            let mut map = turns.lock();
            if map.get(&at).is_some_and(|l| l.generation == generation) {
                map.remove(&at);
            }
        });
    }
}
