//! [`SaveLock`]: the advisory lock that makes saves take turns.

use core::time::Duration;
use std::fs::File;
use std::path::Path;
use std::time::Instant;

use fs4::{FileExt, TryLockError};

use crate::atomic::create_options;
use crate::error::Error;

/// How long a save waits for another save's lock before it gives up, unless
/// the store says otherwise ([`FileStore::with_lock_timeout`](crate::FileStore::with_lock_timeout)).
///
/// A save holds the lock for milliseconds: for as long as it reads, merges and
/// writes one snapshot. Ten seconds is hundreds of saves of other processes,
/// so only a holder that has stopped (a process suspended, or hung on a
/// failing disk) makes a save wait that long.
pub(crate) const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The first pause between two tries of a held lock.
const FIRST_PAUSE: Duration = Duration::from_millis(1);
/// The longest pause between two tries: the pauses double up to it, so a lock
/// released after a long wait is taken within this much.
const LAST_PAUSE: Duration = Duration::from_millis(50);
/// The most pauses of one wait that end sooner than asked: a bound on the loop
/// should the pauses not advance. It counts only those: a bound on every try
/// would cut a long timeout short (2²⁰ pauses of 50 ms are under 15 hours, so
/// `Duration::MAX` would give up then), while a sleep that lasts its time
/// brings the timeout nearer on each try (ten seconds take about 210).
const MAX_SHORT_PAUSES: u32 = 1 << 20;

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
/// the middle of a save never blocks the next one. A process that is stopped
/// but alive keeps it, which is why a wait has a limit. Each lock opens the
/// file anew, so two `FileStore`s of one process (or two threads) exclude each
/// other too.
#[derive(Debug)]
pub(crate) struct SaveLock {
    file: File,
}

impl SaveLock {
    /// Takes the lock on `path`, creating the file if needed, waiting up to
    /// `timeout` while another holds it (as long as it takes if `None`).
    pub(crate) fn acquire(path: &Path, timeout: Option<Duration>) -> Result<SaveLock, Error> {
        let file = create_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io("open the lock file", path, e))?;
        match timeout {
            // The calls name the trait: the standard library's own
            // `File::lock` and `File::unlock` need Rust 1.89, above this
            // workspace's 1.85.
            None => FileExt::lock(&file)
                .map(|()| SaveLock { file })
                .map_err(|e| Error::io("lock", path, e)),
            Some(timeout) => acquire_within(file, path, timeout, pause),
        }
    }
}

/// Sleeps for `pause` and says how long the sleep took: the wait's clock is
/// the time it spent sleeping, measured, so that a sleep that overran counts
/// in full.
fn pause(pause: Duration) -> Duration {
    let start = Instant::now();
    std::thread::sleep(pause);
    start.elapsed()
}

/// Tries the lock on `file` until it is free or the pauses between tries add up
/// to `timeout`. `pause` waits (up to) the time it is given and returns the
/// time it took: the seam a test drives without sleeping.
fn acquire_within(
    file: File,
    path: &Path,
    timeout: Duration,
    mut pause: impl FnMut(Duration) -> Duration,
) -> Result<SaveLock, Error> {
    let mut waited = Duration::ZERO;
    let mut next = FIRST_PAUSE;
    let mut short: u32 = 0;
    loop {
        match FileExt::try_lock(&file) {
            Ok(()) => return Ok(SaveLock { file }),
            Err(TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
            Err(TryLockError::WouldBlock) => {}
        }
        let left = timeout.saturating_sub(waited);
        if left.is_zero() || short >= MAX_SHORT_PAUSES {
            break;
        }
        let asked = next.min(left);
        let took = pause(asked);
        if took < asked {
            short += 1;
        }
        waited = waited.saturating_add(took);
        next = next.saturating_mul(2).min(LAST_PAUSE);
    }
    Err(Error::LockTimeout {
        path: path.into(),
        waited,
    })
}

impl Drop for SaveLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the
        // release explicit and independent of when the handle is closed.
        let _unlocked = FileExt::unlock(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
        dir.path().join("evidence.json.lock")
    }

    fn open(path: &Path) -> File {
        match create_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
        {
            Ok(file) => file,
            Err(e) => panic!("cannot open {}: {e}", path.display()),
        }
    }

    #[test]
    fn a_held_lock_is_waited_for_up_to_the_timeout_then_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_file(&dir);
        let _held = SaveLock::acquire(&path, None).unwrap();
        let mut pauses = Vec::new();
        let err = acquire_within(open(&path), &path, Duration::from_millis(300), |d| {
            pauses.push(d);
            d
        })
        .unwrap_err();
        match err {
            Error::LockTimeout {
                path: named,
                waited,
            } => {
                assert_eq!(named, path);
                assert_eq!(waited, Duration::from_millis(300));
            }
            other => panic!("expected a lock timeout, got {other:?}"),
        }
        // doubling from 1 ms to the 50 ms ceiling, the last one cut to the rest
        let ms: Vec<u128> = pauses.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [1, 2, 4, 8, 16, 32, 50, 50, 50, 50, 37]);
    }

    #[test]
    fn a_lock_released_during_the_wait_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_file(&dir);
        let mut held = Some(SaveLock::acquire(&path, None).unwrap());
        let mut tries = 0;
        let lock = acquire_within(open(&path), &path, Duration::from_secs(10), |d| {
            tries += 1;
            if tries == 3 {
                held = None;
            }
            d
        });
        assert!(lock.is_ok(), "{lock:?}");
        assert_eq!(tries, 3);
        assert!(held.is_none());
    }

    #[test]
    fn a_zero_timeout_tries_once_and_a_free_lock_needs_no_pause() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_file(&dir);
        let free = acquire_within(open(&path), &path, Duration::ZERO, |_| {
            panic!("a free lock is taken without a pause")
        });
        let held = free.unwrap();
        let err = acquire_within(open(&path), &path, Duration::ZERO, |_| {
            panic!("a zero timeout does not pause")
        })
        .unwrap_err();
        assert!(matches!(err, Error::LockTimeout { waited, .. } if waited.is_zero()));
        drop(held);
    }

    #[test]
    fn a_timeout_longer_than_the_cap_on_short_pauses_is_waited_in_full() {
        // Duration::MAX, or any wait past the cap's 14 hours of 50 ms pauses:
        // the cap bounds pauses that do not advance, not a wait that does
        let dir = tempfile::tempdir().unwrap();
        let path = lock_file(&dir);
        let mut held = Some(SaveLock::acquire(&path, None).unwrap());
        let mut pauses: u32 = 0;
        let lock = acquire_within(open(&path), &path, Duration::MAX, |d| {
            pauses += 1;
            if pauses > MAX_SHORT_PAUSES {
                held = None;
            }
            d
        });
        assert!(lock.is_ok(), "{lock:?}");
        assert_eq!(pauses, MAX_SHORT_PAUSES + 1);
        assert!(held.is_none());
    }

    #[test]
    fn pauses_that_do_not_advance_end_at_the_cap_on_tries() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_file(&dir);
        let _held = SaveLock::acquire(&path, None).unwrap();
        let mut calls: u32 = 0;
        let err = acquire_within(open(&path), &path, Duration::from_secs(1), |_| {
            calls += 1;
            Duration::ZERO
        })
        .unwrap_err();
        assert!(matches!(err, Error::LockTimeout { waited, .. } if waited.is_zero()));
        assert_eq!(calls, MAX_SHORT_PAUSES);
    }
}
