//! One `portal serve` per data folder: [`DataLock`] holds an advisory lock on `portal.lock`
//! inside it for as long as the server runs.
//!
//! The operating system releases the lock when the file is closed, which it does for a process
//! that stops in any way (SIGKILL and power cuts included), so a lock is never left stale. Only
//! `portal serve` takes it; opening the database for a look (`SqliteStorage::open`) does not.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use portal_store::{Result, StorageError};

/// The lock file's name inside the data folder. It holds the process id of the server holding
/// it, for the message a second server gives.
pub const LOCK_FILE: &str = "portal.lock";

/// The data folder's lock; released when dropped, or when the process ends.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
}

impl DataLock {
    /// Locks the data folder `dir` (created when missing) for this process, or says which
    /// process holds it.
    pub fn acquire(dir: &Path) -> Result<DataLock> {
        std::fs::create_dir_all(dir).map_err(|source| StorageError::DataDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(LOCK_FILE);
        let failed = |source| StorageError::Lock {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(failed)?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(fs4::TryLockError::WouldBlock) => {
                return Err(StorageError::InUse {
                    path: dir.to_path_buf(),
                    process: holder(&mut file),
                });
            }
            Err(fs4::TryLockError::Error(source)) => return Err(failed(source)),
        }
        file.set_len(0).map_err(failed)?;
        writeln!(file, "{}", std::process::id()).map_err(failed)?;
        Ok(DataLock { _file: file })
    }
}

/// The process id the holder wrote, when it can be read.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
