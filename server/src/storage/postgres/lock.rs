//! [`ServerLock`]: one `portal serve` per PostgreSQL database, until replicas share one.
//!
//! Each server recovers the turns left running when it starts (rule M10), which would cut off
//! the turns of another server running on the same database. So a server holds a session-level
//! advisory lock on a connection of its own while it runs; PostgreSQL releases it when that
//! connection ends, however the process stopped.

use std::sync::mpsc;
use std::thread::JoinHandle;

use postgres::NoTls;

use super::super::{Result, StorageError};

/// The advisory lock a server holds: any number, the same in every build.
const SERVER_LOCK: i64 = 0x706f_7274_616d;

/// The database's lock; released when dropped, or when the process ends.
#[derive(Debug)]
pub struct ServerLock {
    release: Option<mpsc::Sender<()>>,
    holder: Option<JoinHandle<()>>,
}

impl ServerLock {
    /// Locks the database `config` connects to for this process, or says it is in use.
    ///
    /// The connection lives on a thread of its own: the blocking client runs its own runtime,
    /// which may be neither used nor dropped on tokio's threads.
    pub fn acquire(config: &postgres::Config, url: &str) -> Result<ServerLock> {
        let (locked_tx, locked_rx) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let config = config.clone();
        let holder = std::thread::spawn(move || {
            let locked = (|| -> Result<Option<postgres::Client>> {
                let mut client = config.connect(NoTls)?;
                let got: bool = client
                    .query_one("SELECT pg_try_advisory_lock($1)", &[&SERVER_LOCK])?
                    .get(0);
                Ok(got.then_some(client))
            })();
            match locked {
                Ok(Some(client)) => {
                    let _ = locked_tx.send(Ok(true));
                    let _ = released.recv();
                    drop(client);
                }
                Ok(None) => {
                    let _ = locked_tx.send(Ok(false));
                }
                Err(error) => {
                    let _ = locked_tx.send(Err(error));
                }
            }
        });
        let in_use = || StorageError::DatabaseInUse {
            url: super::super::location::redacted(url),
        };
        match locked_rx.recv() {
            Ok(Ok(true)) => Ok(ServerLock {
                release: Some(release),
                holder: Some(holder),
            }),
            Ok(Ok(false)) => Err(in_use()),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(StorageError::Interrupted {
                detail: "the thread taking the database's lock stopped".into(),
            }),
        }
    }
}

impl Drop for ServerLock {
    fn drop(&mut self) {
        drop(self.release.take());
        if let Some(holder) = self.holder.take() {
            let _ = holder.join();
        }
    }
}
