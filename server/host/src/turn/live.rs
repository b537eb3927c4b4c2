//! The turns this process is running or ran lately: their event logs, how to cancel them, and
//! the approval decisions a paused turn has collected so far.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use portal_core::Turn;
use portal_core::turn_run::CutOff;
use tokio::sync::watch;

use crate::turn_log::TurnLog;
use portal_store::TurnRef;

/// What a run watches for being cut off: `None` while it may go on.
pub(super) type CutOffSignal = watch::Receiver<Option<CutOff>>;

#[derive(Debug, Default)]
struct Live {
    log: Option<Arc<TurnLog>>,
    cancel: Option<watch::Sender<Option<CutOff>>>,
    /// The decisions taken on the pause the turn had with `decided_at` messages.
    decisions: HashMap<String, bool>,
    decided_at: usize,
    /// Bumped each time the turn runs, so a lingering release spares a resumed turn.
    generation: u64,
    /// Requests between their claim on the turn in storage and its run being marked running
    /// here ([`LiveTurns::starting`]).
    starting: usize,
    /// A cut-off that arrived while a run was starting: the run starts cut off.
    cancelled_early: Option<CutOff>,
}

impl Live {
    /// Signals its run to stop, or the run about to start to start cut off; false when none
    /// runs or is starting.
    fn cut_off(&mut self, by: CutOff) -> bool {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.send(Some(by)).is_ok())
        {
            return true;
        }
        if self.starting > 0 {
            self.cancelled_early = Some(by);
            return true;
        }
        false
    }
}

/// Live turns by conversation and index.
#[derive(Debug, Clone)]
pub(super) struct LiveTurns {
    turns: Arc<Mutex<HashMap<TurnRef, Live>>>,
    /// How long the log of a turn that ended or paused is kept.
    linger: Duration,
    /// Set once the server has cut off every run ([`LiveTurns::cut_off_all`]): a run that starts
    /// after starts cut off.
    shut_down: Arc<AtomicBool>,
}

impl LiveTurns {
    pub fn new(linger: Duration) -> Self {
        LiveTurns {
            turns: Arc::default(),
            linger,
            shut_down: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TurnRef, Live>> {
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the turn running: its log (`given`, for a replica's; else continued when this
    /// process keeps it, rebuilt from `stored` when the turn ran before, a new one for a fresh
    /// turn) and a fresh cancel signal.
    pub fn running(
        &self,
        at: &TurnRef,
        given: Option<Arc<TurnLog>>,
        stored: Option<&Turn>,
    ) -> (Arc<TurnLog>, CutOffSignal) {
        let mut turns = self.lock();
        let live = turns.entry(at.clone()).or_default();
        if given.is_some() {
            live.log = given;
        }
        let log = Arc::clone(
            live.log
                .get_or_insert_with(|| stored.map_or_else(TurnLog::new, TurnLog::rebuilt)),
        );
        log.resume();
        let early = live.cancelled_early.take();
        let cut_off = if self.shut_down.load(Ordering::SeqCst) {
            Some(CutOff::Shutdown)
        } else {
            early
        };
        let (sender, receiver) = watch::channel(cut_off);
        live.cancel = Some(sender);
        live.generation += 1;
        (log, receiver)
    }

    pub fn log(&self, at: &TurnRef) -> Option<Arc<TurnLog>> {
        self.lock().get(at).and_then(|l| l.log.clone())
    }

    /// The turn's log, rebuilt from `stored` when this process keeps none (a turn that ran
    /// before a restart, or whose log was released).
    pub fn log_or_rebuilt(&self, at: &TurnRef, stored: &Turn) -> Arc<TurnLog> {
        let mut turns = self.lock();
        let live = turns.entry(at.clone()).or_default();
        Arc::clone(live.log.get_or_insert_with(|| TurnLog::rebuilt(stored)))
    }

    /// Marks a run of the turn about to start, from before its claim in storage to the end of
    /// the returned guard, so that a cancel which finds the turn running in storage in between
    /// reaches the run ([`LiveTurns::cancel`]) instead of taking the turn as one no task runs.
    pub fn starting(&self, at: &TurnRef) -> Starting {
        self.lock().entry(at.clone()).or_default().starting += 1;
        Starting {
            live: self.clone(),
            at: at.clone(),
        }
    }

    /// Signals the running turn to stop, or the run about to start to start cancelled. False
    /// when no task of this process runs it or is starting it.
    pub fn cancel(&self, at: &TurnRef) -> bool {
        let mut turns = self.lock();
        turns
            .get_mut(at)
            .is_some_and(|live| live.cut_off(CutOff::User))
    }

    /// Cuts off every run of this process, and those about to start or started later: the
    /// server is stopping. Returns how many runs were signalled.
    pub fn cut_off_all(&self) -> usize {
        self.shut_down.store(true, Ordering::SeqCst);
        let mut turns = self.lock();
        turns
            .values_mut()
            .map(|live| live.cut_off(CutOff::Shutdown))
            .filter(|&signalled| signalled)
            .count()
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

    /// The turn stopped, ended or paused: it can no longer be signalled, and its log is released
    /// after the linger unless the turn runs again. A paused turn's decisions so far are kept.
    pub fn stopped(&self, at: &TurnRef) {
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
            tokio::time::sleep(turns.linger).await;
            let mut map = turns.lock();
            if let Some(live) = map.get_mut(&at).filter(|l| l.generation == generation) {
                live.log = None;
                if live.decisions.is_empty() && live.starting == 0 {
                    map.remove(&at);
                }
            }
        });
    }
}

/// A run about to start ([`LiveTurns::starting`]), until dropped.
#[derive(Debug)]
pub(super) struct Starting {
    live: LiveTurns,
    at: TurnRef,
}

impl Drop for Starting {
    fn drop(&mut self) {
        if let Some(live) = self.live.lock().get_mut(&self.at) {
            live.starting -= 1;
            // No run took the cancel: the claims failed, and the turn was moved on by another.
            if live.starting == 0 {
                live.cancelled_early = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use portal_core::TurnStatus;
    use portal_core::stream::TurnEvent;

    use super::*;
    use portal_store::ConversationId;

    fn at() -> TurnRef {
        TurnRef {
            conversation: ConversationId::new("c"),
            turn: 1,
        }
    }

    fn pause(log: &TurnLog) {
        log.push(TurnEvent::TurnEnd {
            status: TurnStatus::Paused,
            reason: None,
        });
    }

    #[tokio::test]
    async fn the_log_of_a_paused_turn_is_released_after_the_linger_and_its_decisions_kept() {
        let live = LiveTurns::new(Duration::from_millis(50));
        let (log, _cancel) = live.running(&at(), None, None);
        pause(&log);
        live.stopped(&at());
        live.decide(&at(), 3, "call_1", true);
        assert!(live.log(&at()).is_some(), "kept while it lingers");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(live.log(&at()).is_none(), "released");
        assert!(
            live.decide(&at(), 3, "call_1", false).is_none(),
            "the decision is kept, so the call cannot be decided again"
        );
    }

    #[tokio::test]
    async fn a_turn_that_runs_again_within_the_linger_keeps_its_log() {
        let live = LiveTurns::new(Duration::from_millis(50));
        let (log, _cancel) = live.running(&at(), None, None);
        pause(&log);
        live.stopped(&at());
        let (again, _cancel) = live.running(&at(), None, None);
        assert!(Arc::ptr_eq(&log, &again), "the same log goes on");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(live.log(&at()).is_some(), "still running");
    }
}
