//! The connection a replica listens on: announcements of new log changes and of cancels. It
//! reconnects when lost, and wakes every mirror then, for what it may have missed.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

use super::{CONTROL_CHANNEL, Replica};

/// How long a replica waits before connecting again after losing its listening connection.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

pub(super) async fn listen(replica: Arc<Replica>) {
    let (config, tls) = replica.storage.listen_config();
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let (sender, mut notifications) = mpsc::unbounded_channel();
                let driver = tokio::spawn(async move {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(Ok(message)) = messages.next().await {
                        if let AsyncMessage::Notification(notification) = message
                            && sender.send(notification).is_err()
                        {
                            break;
                        }
                    }
                });
                let listening = client
                    .batch_execute(&format!(
                        "LISTEN {}; LISTEN {CONTROL_CHANNEL}",
                        portal_store_postgres::LOG_CHANNEL
                    ))
                    .await;
                match listening {
                    Ok(()) => {
                        replica.wake_all();
                        while let Some(notification) = notifications.recv().await {
                            replica.notified(notification.channel(), notification.payload());
                        }
                        tracing::warn!("the replica's listening connection closed; reconnecting");
                    }
                    Err(error) => tracing::warn!("the replica cannot listen: {error}"),
                }
                driver.abort();
            }
            Err(error) => tracing::warn!("the replica cannot connect to listen: {error}"),
        }
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}
