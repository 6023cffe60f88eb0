//! [`WriterLock`]: the advisory lock that keeps a log file to one writer.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use fs4::{FileExt, TryLockError};

use crate::error::Error;

/// An exclusive advisory lock on `<log file>.lock`, held until dropped.
///
/// The lock is on a file of its own beside the log, not on the log itself:
/// on Windows a lock is mandatory (`LockFileEx`), and one on the log would
/// keep readers — the verifier, `bayesretry audit verify`, a `tail` — from
/// reading it while a writer runs; a lock file also leaves the log's own
/// handle free for the writer and works as the file store's does. The log is
/// found by following symbolic links first, so that writers given a link and
/// the file itself lock one lock file. The lock file is empty, created once
/// and never removed, since removing it while another process waits on it
/// would let a third lock a new file at the same path.
///
/// It is `flock(2)` on Unix and `LockFileEx` on Windows (through `fs4`): the
/// operating system releases it when the process dies, so a killed writer
/// never keeps the next one out. Each lock opens the file anew, so two writers
/// of one process exclude each other too.
#[derive(Debug)]
pub(crate) struct WriterLock {
    file: File,
}

impl WriterLock {
    /// Takes the lock of the log file at `log`, which exists, without waiting:
    /// [`Error::Locked`] if another writer holds it.
    pub(crate) fn try_acquire(log: &Path) -> Result<WriterLock, Error> {
        let target = fs::canonicalize(log).map_err(|err| Error::io_at("resolve", log, err))?;
        let mut name = target.into_os_string();
        name.push(".lock");
        let lock = PathBuf::from(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .map_err(|err| Error::io_at("open the lock file of", log, err))?;
        match FileExt::try_lock(&file) {
            Ok(()) => Ok(WriterLock { file }),
            Err(TryLockError::WouldBlock) => Err(Error::Locked {
                path: log.to_owned(),
                lock,
            }),
            Err(TryLockError::Error(err)) => Err(Error::io_at("lock", log, err)),
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the
        // release explicit. The calls name the trait: the standard library's
        // own `File::try_lock` and `File::unlock` need Rust 1.89, above this
        // workspace's 1.85.
        let _unlocked = FileExt::unlock(&self.file);
    }
}
