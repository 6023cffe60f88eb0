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
///
/// A lock file goes with a name, and a file can have several: a hard link, or
/// the name a rotation renames the log to while its writer runs. A writer
/// given another name would lock another lock file and append to the same
/// file as the first, interleaving two chains. So on Unix the writer also
/// takes `flock(2)` on the log itself, through a handle of the file it
/// appends to: a lock on the file, whatever its name, that readers (which
/// take none) never notice. Not on Windows, where a lock on the log would
/// keep readers out.
#[derive(Debug)]
pub(crate) struct WriterLock {
    file: File,
    /// The log, locked too (Unix): a handle of its own on the writer's open
    /// file, so that the lock lasts until this is dropped, after the writer
    /// has written its buffer out, and goes when the writer gives its file up.
    #[cfg(unix)]
    log: File,
}

impl WriterLock {
    /// Takes the lock of the log file at `log`, which exists and is open as
    /// `opened`, without waiting: [`Error::Locked`] if another writer holds
    /// it.
    pub(crate) fn try_acquire(log: &Path, opened: &File) -> Result<WriterLock, Error> {
        let target = fs::canonicalize(log).map_err(|err| Error::io_at("resolve", log, err))?;
        let mut name = target.clone().into_os_string();
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
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    path: log.to_owned(),
                    lock,
                });
            }
            Err(TryLockError::Error(err)) => return Err(Error::io_at("lock", log, err)),
        }
        // the lock file's lock is released with `file` if this fails
        #[cfg(unix)]
        let log_lock = {
            let handle = opened
                .try_clone()
                .map_err(|err| Error::io_at("lock", log, err))?;
            match FileExt::try_lock(&handle) {
                Ok(()) => handle,
                // a writer that was given another name of the file
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::Locked {
                        path: log.to_owned(),
                        lock: target,
                    });
                }
                Err(TryLockError::Error(err)) => return Err(Error::io_at("lock", log, err)),
            }
        };
        #[cfg(not(unix))]
        let _ = (opened, target);
        Ok(WriterLock {
            file,
            #[cfg(unix)]
            log: log_lock,
        })
    }
}

impl WriterLock {
    /// After a rotation: the log at `log` is now the new file `opened`; on
    /// Unix, locks it and releases the old one, renamed away. The lock file
    /// stays, since the path is the same.
    pub(crate) fn move_to(&mut self, log: &Path, opened: &File) -> Result<(), Error> {
        #[cfg(unix)]
        {
            let handle = opened
                .try_clone()
                .map_err(|err| Error::io_at("lock", log, err))?;
            match FileExt::try_lock(&handle) {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::Locked {
                        path: log.to_owned(),
                        lock: log.to_owned(),
                    });
                }
                Err(TryLockError::Error(err)) => return Err(Error::io_at("lock", log, err)),
            }
            let old = core::mem::replace(&mut self.log, handle);
            let _unlocked = FileExt::unlock(&old);
        }
        #[cfg(not(unix))]
        let _ = (log, opened);
        Ok(())
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the
        // release explicit. The calls name the trait: the standard library's
        // own `File::try_lock` and `File::unlock` need Rust 1.89, above this
        // workspace's 1.85.
        let _unlocked = FileExt::unlock(&self.file);
        #[cfg(unix)]
        let _unlocked = FileExt::unlock(&self.log);
    }
}
