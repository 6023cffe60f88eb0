//! [`SaveLock`]: the advisory lock that makes saves take turns.

use std::fs::File;
use std::path::Path;

use fs4::fs_std::FileExt;

use crate::atomic::create_options;
use crate::error::Error;

/// An exclusive advisory lock on the lock file, held until dropped.
///
/// The lock is on a file of its own (`<file>.lock`), never on the snapshot:
/// every save replaces the snapshot by renaming a new file over it, and a lock
/// on the old file would not exclude a process that opened the new one. The
/// lock file is created once (mode 0600 on Unix) and never removed, since
/// removing it while another process waits on it would let a third lock a new
/// file at the same path.
///
/// It is `flock(2)` on Unix and `LockFileEx` on Windows (through `fs4`): the
/// operating system releases it when the process dies, so a process killed in
/// the middle of a save never blocks the next one. Each lock opens the file
/// anew, so two `FileStore`s of one process (or two threads) exclude each other
/// too.
#[derive(Debug)]
pub(crate) struct SaveLock {
    file: File,
}

impl SaveLock {
    /// Waits for the lock on `path`, creating the file if needed.
    pub(crate) fn acquire(path: &Path) -> Result<SaveLock, Error> {
        let file = create_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io("open the lock file", path, e))?;
        FileExt::lock_exclusive(&file).map_err(|e| Error::io("lock", path, e))?;
        Ok(SaveLock { file })
    }
}

impl Drop for SaveLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the
        // release explicit and independent of when the handle is closed.
        let _unlocked = FileExt::unlock(&self.file);
    }
}
