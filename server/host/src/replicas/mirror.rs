//! Following a turn another replica runs: its published changes replayed into a log of this
//! replica's, kept up to date as they are announced.

use std::sync::Arc;
use std::time::Duration;

use portal_core::TurnStatus;
use tokio::sync::Notify;

use super::Replica;
use crate::turn_log::TurnLog;
use portal_store::{StorageError, TurnRef};

/// How often a mirror looks for changes when no announcement came: what a lost notification
/// costs at most.
const POLL_EVERY: Duration = Duration::from_secs(2);

/// How long a mirror of a turn that is no longer running waits for the changes that end it
/// before it tells its readers nothing more comes.
const SETTLE_AFTER: Duration = Duration::from_secs(5);

impl Replica {
    /// A log of turn `at` (stored as `status`) that follows what the replica running it
    /// publishes, or `None` when nothing was published of it and it is not running (an old turn,
    /// read from storage instead).
    ///
    /// A turn stored running whose published log ends (paused, or ended) is running again only
    /// if it is still running in storage once its log was read: the run that paused or ended it
    /// recorded that in storage before publishing it. A turn resumed so is followed from its
    /// pause with its readers waiting, as a turn that published nothing yet is. The replica
    /// that resumed it claims it in storage and answers before its first change (`resume`)
    /// is published, so a reader that comes then, the browser that answered included, reads on
    /// from the pause, never the pause again. **Decision:** the published log stays the one
    /// home of a turn's events and the resuming replica waits for no write; only a read that
    /// finds storage and the published log disagreeing asks storage once more.
    pub async fn follow(
        self: &Arc<Self>,
        at: &TurnRef,
        status: TurnStatus,
    ) -> Result<Option<Arc<TurnLog>>, StorageError> {
        if let Some((log, _)) = self.mirrors().get(at) {
            return Ok(Some(Arc::clone(log)));
        }
        let changes = self.read_log(at, 0).await?;
        if changes.is_empty() && status != TurnStatus::Running {
            return Ok(None);
        }
        let next = changes.len() as u64;
        let log = TurnLog::replayed(changes);
        if !log.is_running() {
            let resumed = status == TurnStatus::Running && (next == 0 || self.runs(at).await?);
            if !resumed {
                return Ok(Some(log));
            }
            // Its readers wait for its first changes, which its run publishes in a moment.
            log.apply(crate::turn_log::LogChange::Resume);
        }
        let mut mirrors = self.mirrors();
        if let Some((log, _)) = mirrors.get(at) {
            return Ok(Some(Arc::clone(log)));
        }
        let wake = Arc::new(Notify::new());
        mirrors.insert(at.clone(), (Arc::clone(&log), Arc::clone(&wake)));
        drop(mirrors);
        tokio::spawn(keep_up(
            Arc::clone(self),
            at.clone(),
            Arc::clone(&log),
            wake,
            next,
        ));
        Ok(Some(log))
    }

    /// Whether turn `at` is running in storage now.
    async fn runs(&self, at: &TurnRef) -> Result<bool, StorageError> {
        let target = at.clone();
        let holder = self.blocking(move |s| s.lease_holder(&target)).await?;
        Ok(holder.is_some())
    }
}

/// Applies the turn's changes as they are announced, until its log ends or pauses.
async fn keep_up(
    replica: Arc<Replica>,
    at: TurnRef,
    log: Arc<TurnLog>,
    wake: Arc<Notify>,
    mut next: u64,
) {
    let mut quiet = Duration::ZERO;
    while log.is_running() {
        let waited = tokio::time::Instant::now();
        let _ = tokio::time::timeout(POLL_EVERY, wake.notified()).await;
        let changes = match replica.read_log(&at, next).await {
            Ok(changes) => changes,
            Err(error) => {
                tracing::warn!("a followed turn's log could not be read: {error}");
                Vec::new()
            }
        };
        if changes.is_empty() {
            quiet += waited.elapsed();
            if quiet >= SETTLE_AFTER && !replica.runs(&at).await.unwrap_or(true) {
                log.settle();
            }
            continue;
        }
        quiet = Duration::ZERO;
        next += changes.len() as u64;
        for change in changes {
            log.apply(change);
        }
    }
    replica.mirrors().remove(&at);
}
