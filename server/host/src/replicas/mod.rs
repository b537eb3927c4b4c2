//! Replicas: any number of `portal serve` on one PostgreSQL database, any of which serves any
//! request (docs/deploy.md).
//!
//! What one process kept for itself now goes through the database:
//! - **Leases.** The replica running a turn holds its lease and renews it; every replica sweeps
//!   for leases that ran out and records their turns cut off (rule M10), as a single server does
//!   for the turns a stopped process left running.
//! - **Event logs.** The replica running a turn publishes each change of its log, numbered, to
//!   the table `turn_log` and announces it with `NOTIFY`; a replica with readers of that turn
//!   replays the changes into a log of its own ([`Replica::follow`]), so ids are the same
//!   everywhere and `Last-Event-ID` resumes on any replica.
//! - **Cancels** are announced to the replica holding the turn's lease; **decisions** on a paused
//!   turn are kept in the database until every call is decided, and the replica that takes the
//!   last one resumes the turn.

mod listen;
mod mirror;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use portal_core::stream::TurnEvent;
use portal_core::{Turn, TurnStatus};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::turn_log::{LogChange, Published, TurnLog};
use portal_store::{StorageError, TurnRef};
use portal_store_postgres::PostgresStorage;

/// How long a turn's lease lasts unless its replica renews it. **Decision:** 10 s: a stopped
/// replica's turns are cut off within about 13 s, and a replica renews every 3.3 s, so it would
/// have to miss three renewals in a row to lose a turn it still runs.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// The channel cancels are announced on; the payload is `cancel <conversation> <turn>`.
const CONTROL_CHANNEL: &str = "portal_control";

/// How long a replica that resumes a paused turn waits for the log of the replica that paused
/// it to show the pause, which it publishes a moment after recording it.
const PAUSE_PUBLISHED_WAIT: Duration = Duration::from_secs(3);

/// The logs a replica follows, each with what wakes it when its turn's changes are announced.
type Mirrors = HashMap<TurnRef, (Arc<TurnLog>, Arc<Notify>)>;

/// This server as one of the replicas on a PostgreSQL database.
#[derive(Debug)]
pub struct Replica {
    /// This replica's name in leases: random, new at each start.
    id: String,
    storage: Arc<PostgresStorage>,
    /// How long a lease lasts unless renewed.
    lease: Duration,
    /// How long the log of an ended turn stays in the database for readers.
    linger: Duration,
    outbox: mpsc::UnboundedSender<Published>,
    /// Asks the publisher to answer once every change sent before is in the database.
    flushes: mpsc::UnboundedSender<oneshot::Sender<()>>,
    /// The logs this replica follows for turns others run, with what wakes each.
    mirrors: Mutex<Mirrors>,
    /// Turns another replica asked this one to cancel.
    cancels: mpsc::UnboundedSender<TurnRef>,
}

impl Replica {
    /// Starts this replica's work in the background (publishing, leases and the sweep,
    /// listening), and returns it with the cancels other replicas ask of it. Needs a tokio
    /// runtime.
    pub fn start(
        storage: Arc<PostgresStorage>,
        lease: Duration,
        linger: Duration,
    ) -> Result<(Arc<Replica>, mpsc::UnboundedReceiver<TurnRef>), StorageError> {
        let (outbox, published) = mpsc::unbounded_channel();
        let (flushes, flush_requests) = mpsc::unbounded_channel();
        let (cancels, cancel_requests) = mpsc::unbounded_channel();
        let replica = Arc::new(Replica {
            id: random_id()?,
            storage,
            lease,
            linger,
            outbox,
            flushes,
            mirrors: Mutex::default(),
            cancels,
        });
        tokio::spawn(publish(Arc::clone(&replica), published, flush_requests));
        tokio::spawn(keep_leases(Arc::clone(&replica)));
        tokio::spawn(listen::listen(Arc::clone(&replica)));
        Ok((replica, cancel_requests))
    }

    /// Records every running turn whose lease ran out cut off: the turns of replicas that
    /// stopped. Run once at start, before serving, and then by the sweep.
    pub fn cut_off_expired(storage: &PostgresStorage) -> Result<Vec<TurnRef>, StorageError> {
        storage.cut_off_expired(&end_change(TurnStatus::CutOff))
    }

    /// Takes the lease of a turn this replica is about to run.
    pub async fn hold(&self, at: &TurnRef) -> Result<(), StorageError> {
        let (at, id, lease) = (at.clone(), self.id.clone(), millis(self.lease));
        self.blocking(move |s| s.take_lease(&at, &id, lease)).await
    }

    /// A new log for a fresh turn this replica runs, published from its first change.
    pub fn fresh_log(&self, at: &TurnRef) -> Arc<TurnLog> {
        let log = TurnLog::new();
        log.publish(at.clone(), 0, self.outbox.clone());
        log
    }

    /// The log of a turn this replica is about to change (resume, or record cut off): what was
    /// published of it replayed, or rebuilt from `stored` when nothing was, and published on.
    pub async fn own_log(&self, at: &TurnRef, stored: &Turn) -> Result<Arc<TurnLog>, StorageError> {
        let mut changes = self.read_log(at, 0).await?;
        if stored.status == TurnStatus::Paused {
            let deadline = tokio::time::Instant::now() + PAUSE_PUBLISHED_WAIT;
            while !changes.is_empty()
                && !ends_paused(&changes)
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
                changes = self.read_log(at, 0).await?;
            }
        }
        if changes.is_empty() {
            let log = TurnLog::rebuilt(stored);
            log.publish_all(at.clone(), self.outbox.clone());
            return Ok(log);
        }
        let next = changes.len() as u64;
        let log = TurnLog::replayed(changes);
        log.publish(at.clone(), next, self.outbox.clone());
        Ok(log)
    }

    /// Waits until every log change this replica published so far is in the database (or
    /// failed to be written, which is logged), so that a replica about to stop leaves nothing
    /// unpublished.
    pub async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.flushes.send(done).is_ok() {
            let _ = flushed.await;
        }
    }

    /// Asks the replica holding a running turn's lease to cancel it. False when no live lease is
    /// held by another replica (it stopped), so the caller records the turn cut off itself.
    pub async fn ask_to_cancel(&self, at: &TurnRef) -> Result<bool, StorageError> {
        let target = at.clone();
        let holder = self.blocking(move |s| s.lease_holder(&target)).await?;
        let held_elsewhere =
            holder.is_some_and(|h| h.live && h.replica.as_deref() != Some(&self.id));
        if held_elsewhere {
            let payload = format!("cancel {} {}", at.conversation, at.turn);
            self.blocking(move |s| s.announce(CONTROL_CHANNEL, &payload))
                .await?;
        }
        Ok(held_elsewhere)
    }

    /// Records a decision on the pause turn `at` has with `messages` messages, and returns every
    /// decision taken on it so far by any replica; `None` when the call was decided already.
    pub async fn decide(
        &self,
        at: &TurnRef,
        messages: usize,
        call_id: &str,
        approve: bool,
    ) -> Result<Option<HashMap<String, bool>>, StorageError> {
        let (at, call_id) = (at.clone(), call_id.to_string());
        self.blocking(move |s| s.decide(&at, messages, &call_id, approve))
            .await
    }

    /// Takes back a decision whose turn could not be resumed.
    pub async fn withdraw_decision(
        &self,
        at: &TurnRef,
        messages: usize,
        call_id: &str,
    ) -> Result<(), StorageError> {
        let (at, call_id) = (at.clone(), call_id.to_string());
        self.blocking(move |s| s.withdraw_decision(&at, messages, &call_id))
            .await
    }

    async fn read_log(&self, at: &TurnRef, from: u64) -> Result<Vec<LogChange>, StorageError> {
        let target = at.clone();
        let ops = self.blocking(move |s| s.read_log(&target, from)).await?;
        let mut changes = Vec::with_capacity(ops.len());
        for (expected, op) in (from..).zip(ops) {
            if op.seq != expected {
                break;
            }
            changes.push(
                serde_json::from_str(&op.op).map_err(|e| StorageError::Unreadable {
                    what: "turn log entry",
                    detail: e.to_string(),
                })?,
            );
        }
        Ok(changes)
    }

    /// Runs a storage call on tokio's blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&PostgresStorage) -> Result<T, StorageError> + Send + 'static,
    ) -> Result<T, StorageError> {
        let storage = Arc::clone(&self.storage);
        tokio::task::spawn_blocking(move || call(&storage))
            .await
            .map_err(|error| StorageError::Interrupted {
                detail: error.to_string(),
            })?
    }

    fn mirrors(&self) -> MutexGuard<'_, Mirrors> {
        self.mirrors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A notification arrived on `channel`.
    fn notified(&self, channel: &str, payload: &str) {
        let mut words = payload.split(' ');
        match (channel, words.next(), words.next(), words.next()) {
            (portal_store_postgres::LOG_CHANNEL, Some(conversation), Some(turn), None) => {
                if let Some(at) = turn_ref(conversation, turn)
                    && let Some((_, wake)) = self.mirrors().get(&at)
                {
                    wake.notify_one();
                }
            }
            (CONTROL_CHANNEL, Some("cancel"), Some(conversation), Some(turn)) => {
                if let Some(at) = turn_ref(conversation, turn) {
                    let _ = self.cancels.send(at);
                }
            }
            _ => tracing::debug!("an unknown notification on {channel}: {payload}"),
        }
    }

    /// Wakes every mirror, after notifications may have been missed.
    fn wake_all(&self) {
        for (_, wake) in self.mirrors().values() {
            wake.notify_one();
        }
    }
}

/// Sends published changes to the database in batches, each announced once it is stored, and
/// answers a flush once the changes sent before it are written.
async fn publish(
    replica: Arc<Replica>,
    mut published: mpsc::UnboundedReceiver<Published>,
    mut flushes: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
) {
    let mut batch = Vec::new();
    loop {
        tokio::select! {
            biased;
            received = published.recv_many(&mut batch, 512) => {
                if received == 0 {
                    return;
                }
                write_batch(&replica, &mut batch).await;
            }
            Some(done) = flushes.recv() => {
                // Every change sent before the flush was asked for is queued by now.
                while let Ok(change) = published.try_recv() {
                    batch.push(change);
                }
                write_batch(&replica, &mut batch).await;
                let _ = done.send(());
            }
        }
    }
}

/// Writes `batch` to the database, emptying it.
async fn write_batch(replica: &Replica, batch: &mut Vec<Published>) {
    if batch.is_empty() {
        return;
    }
    let mut entries = Vec::with_capacity(batch.len());
    for change in batch.drain(..) {
        match serde_json::to_string(&change.change) {
            Ok(op) => entries.push((change.at, change.seq, op)),
            Err(error) => tracing::error!("a log change cannot be written: {error}"),
        }
    }
    if let Err(error) = replica.blocking(move |s| s.append_log(&entries)).await {
        tracing::warn!(
            "log changes could not be published to other replicas: {error}; their readers \
             there get them when they reconnect"
        );
    }
}

/// Renews this replica's leases and sweeps for expired ones, three times a lease.
async fn keep_leases(replica: Arc<Replica>) {
    let mut every = tokio::time::interval(replica.lease / 3);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let (id, lease, linger) = (
            replica.id.clone(),
            millis(replica.lease),
            millis(replica.linger),
        );
        let swept = replica
            .blocking(move |s| {
                s.renew_leases(&id, lease)?;
                let cut_off = Replica::cut_off_expired(s)?;
                s.forget_ended_logs(linger)?;
                Ok(cut_off)
            })
            .await;
        match swept {
            Ok(cut_off) => {
                for at in cut_off {
                    tracing::info!(
                        "turn {} of conversation {} is cut off: the replica running it stopped renewing its lease",
                        at.turn,
                        at.conversation
                    );
                }
            }
            Err(error) => tracing::warn!("leases could not be renewed or swept: {error}"),
        }
    }
}

/// The change that ends a log with `status`, as stored.
fn end_change(status: TurnStatus) -> String {
    serde_json::to_string(&LogChange::Push(TurnEvent::TurnEnd {
        status,
        reason: (status == TurnStatus::CutOff)
            .then(|| portal_core::turn_run::STOPPED_REASON.to_string()),
    }))
    .unwrap_or_default()
}

fn ends_paused(changes: &[LogChange]) -> bool {
    matches!(
        changes.last(),
        Some(LogChange::Push(TurnEvent::TurnEnd {
            status: TurnStatus::Paused,
            ..
        }))
    )
}

fn turn_ref(conversation: &str, turn: &str) -> Option<TurnRef> {
    Some(TurnRef {
        conversation: portal_store::ConversationId::new(conversation),
        turn: turn.parse().ok()?,
    })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn random_id() -> Result<String, StorageError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|error| StorageError::Interrupted {
        detail: format!("no randomness for the replica's name: {error}"),
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
