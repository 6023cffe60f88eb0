//! A log path that names a FIFO (a named pipe made to ship the log, or
//! `/dev/stdout` when standard output is a pipe) or a socket is refused by
//! every way a writer opens a file, with `Error::Io` naming it, instead of
//! hanging: a writer reads its log back to verify it before appending, and
//! reading a pipe waits for a writer that never comes. A device such as
//! `/dev/null` is refused too, before its lock file is made beside it in
//! `/dev` (which only root could do; anyone else was refused, saying the
//! lock file could not be opened).

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed step must fail the test"
)]

use core::time::Duration;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::thread;

use bayesretry_audit::{Error, Fsync, Hash, JsonlWriter, Seal};

/// What `open` returned for `path`, on another thread; `None` if it had not
/// returned within 10 seconds. A writer that waits on the FIFO holds it open
/// for writing itself, so nothing makes its read end: the thread is left
/// behind, and ends with the test's process.
fn opened_within<T: Send + 'static>(
    fifo: &Path,
    open: impl FnOnce(PathBuf) -> Result<T, Error> + Send + 'static,
) -> Option<Result<T, Error>> {
    let (done, returned) = mpsc::channel();
    let path = fifo.to_path_buf();
    let _worker = thread::spawn(move || {
        let _ = done.send(open(path));
    });
    returned.recv_timeout(Duration::from_secs(10)).ok()
}

fn assert_refused<T: core::fmt::Debug>(result: Option<Result<T, Error>>, fifo: &Path) {
    match result {
        None => panic!("waited on the FIFO"),
        Some(Err(Error::Io {
            path: Some(path),
            source,
            ..
        })) => {
            assert_eq!(path, fifo);
            assert_eq!(source.kind(), io::ErrorKind::InvalidInput, "{source}");
            assert!(
                source.to_string().contains("not a regular file"),
                "{source}"
            );
        }
        Some(other) => panic!("expected the FIFO refused, got {other:?}"),
    }
}

#[test]
fn every_way_of_opening_a_log_refuses_a_fifo_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("decisions.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed: {made}");

    assert_refused(
        opened_within(&fifo, |path| JsonlWriter::open(path, Fsync::EveryEntry)),
        &fifo,
    );
    assert_refused(
        opened_within(&fifo, |path| {
            JsonlWriter::open_after_crash(path, Fsync::EveryEntry)
        }),
        &fifo,
    );
    assert_refused(
        opened_within(&fifo, |path| {
            JsonlWriter::open_continuing(path, Seal::new(0, Hash::GENESIS), Fsync::EveryEntry)
        }),
        &fifo,
    );
}

#[test]
fn a_device_is_refused_and_no_lock_file_is_made_beside_it() {
    let refused = JsonlWriter::open("/dev/null", Fsync::EveryEntry);
    match refused {
        Err(Error::Io {
            path: Some(path),
            source,
            ..
        }) => {
            assert_eq!(path, Path::new("/dev/null"));
            assert_eq!(source.kind(), io::ErrorKind::InvalidInput, "{source}");
        }
        other => panic!("expected /dev/null refused, got {other:?}"),
    }
    assert!(!Path::new("/dev/null.lock").exists());
}
