//! Where a server is in its life (docs/deploy.md, "Stopping"): starting (opening and migrating
//! its database), ready, stopping (its running turns get a grace to end) or closing (its event
//! streams are ended with a hint to reconnect, and its connections are closed). The probes read
//! it, and event streams end on it.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use tokio::sync::watch;

/// How long a stopping server's event-stream readers wait before they reconnect (the SSE
/// `retry` it sends them). **Decision:** 500 ms: another replica takes them at once, and a
/// single server being restarted is asked about twice a second until it is back.
pub const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// How long `portal serve` lets running turns end after SIGTERM or Ctrl-C before it cuts them
/// off (`--shutdown-grace-seconds`). **Decision:** 30 s. Docker's `stop` waits 10 s and
/// Kubernetes 30 s before they kill the process: set theirs above it (docs/deploy.md).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// A server's phase, in the order it goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Opening its database: locking a SQLite folder, or migrating PostgreSQL's schema and
    /// recovering turns. Requests other than the probes wait.
    Starting,
    /// Serving.
    Ready,
    /// Stopping: no turn starts here any more; the running ones have the grace to end.
    Stopping,
    /// Its turns have ended or were cut off: event streams end, asking readers to reconnect,
    /// and connections close.
    Closing,
}

/// A server's phase, shared by the front, the probes and every event stream.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    phase: Arc<watch::Sender<Phase>>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle::new()
    }
}

impl Lifecycle {
    /// A server starting.
    pub fn new() -> Self {
        Lifecycle {
            phase: Arc::new(watch::Sender::new(Phase::Starting)),
        }
    }

    pub fn phase(&self) -> Phase {
        *self.phase.borrow()
    }

    /// Moves on to `phase`; a phase already passed is never returned to.
    pub fn enter(&self, phase: Phase) {
        self.phase.send_if_modified(|now| {
            let later = phase > *now;
            if later {
                *now = phase;
            }
            later
        });
    }

    /// Waits until the server has reached `phase` or passed it.
    pub async fn reached(&self, phase: Phase) {
        let mut watching = self.phase.subscribe();
        // The sender lives as long as `self`, so the wait ends only by reaching the phase.
        let _ = watching.wait_for(|now| *now >= phase).await;
    }

    /// `items` until they end, or until the server closes, when `hint` (asking the reader to
    /// reconnect) comes last instead, once the items ready then are sent: a turn's end published
    /// just before the server closed reaches its readers, who would otherwise reconnect to a
    /// server that is gone and never read it.
    pub fn until_closing<T, S>(&self, items: S, hint: T) -> impl Stream<Item = T> + use<T, S>
    where
        T: Send + 'static,
        S: Stream<Item = T> + Send + 'static,
    {
        struct Reading<T, S, C> {
            items: std::pin::Pin<Box<S>>,
            /// Until the server closes; `None` once the hint was given.
            closing: Option<std::pin::Pin<Box<C>>>,
            hint: Option<T>,
        }
        let lifecycle = self.clone();
        let closing = async move { lifecycle.reached(Phase::Closing).await };
        let reading = Reading {
            items: Box::pin(items),
            closing: Some(Box::pin(closing)),
            hint: Some(hint),
        };
        stream::unfold(reading, |mut reading| async move {
            let closing = reading.closing.as_mut()?;
            tokio::select! {
                biased;
                item = reading.items.next() => item.map(|item| (item, reading)),
                () = closing => {
                    reading.closing = None;
                    let hint = reading.hint.take()?;
                    Some((hint, reading))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn d3_a_stream_ends_with_the_hint_once_the_server_closes_and_not_before() {
        let lifecycle = Lifecycle::new();
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let items = tokio_stream::wrappers::UnboundedReceiverStream::new(receiver);
        let mut read = Box::pin(lifecycle.until_closing(items, 0));
        sender.send(1).unwrap();
        assert_eq!(read.next().await, Some(1));
        lifecycle.enter(Phase::Stopping);
        sender.send(2).unwrap();
        assert_eq!(
            read.next().await,
            Some(2),
            "a stopping server still streams"
        );
        lifecycle.enter(Phase::Closing);
        assert_eq!(read.next().await, Some(0), "the hint");
        assert_eq!(read.next().await, None);
    }

    #[tokio::test]
    async fn d3_what_was_published_before_the_server_closed_is_read_before_the_hint() {
        let lifecycle = Lifecycle::new();
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let items = tokio_stream::wrappers::UnboundedReceiverStream::new(receiver);
        let mut read = Box::pin(lifecycle.until_closing(items, 0));
        lifecycle.enter(Phase::Stopping);
        sender.send(1).unwrap();
        sender.send(2).unwrap();
        lifecycle.enter(Phase::Closing);
        assert_eq!(read.next().await, Some(1));
        assert_eq!(read.next().await, Some(2), "the turn's end, say");
        assert_eq!(read.next().await, Some(0), "then the hint");
        assert_eq!(read.next().await, None);
    }

    #[tokio::test]
    async fn a_stream_that_ends_by_itself_gets_no_hint() {
        let lifecycle = Lifecycle::new();
        let read: Vec<u32> = lifecycle
            .until_closing(stream::iter([1, 2]), 0)
            .collect()
            .await;
        assert_eq!(read, [1, 2]);
    }

    #[test]
    fn a_phase_passed_is_never_returned_to() {
        let lifecycle = Lifecycle::new();
        lifecycle.enter(Phase::Stopping);
        lifecycle.enter(Phase::Ready);
        assert_eq!(lifecycle.phase(), Phase::Stopping);
    }
}
