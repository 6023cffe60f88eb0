//! Helpers shared by the integration tests: a log of varied records, a
//! destination whose writes fail and a disk that a crash can cut.

#![allow(
    dead_code,
    reason = "each test file uses its own subset of the helpers"
)]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use std::io;
use std::sync::Mutex;

use bayesretry_audit::{AuditLog, Durable, Event, Fsync, JsonlWriter, Record};

/// A record of each kind in turn: mostly decisions, every 5th an outcome, every
/// 97th a `dropped` entry; fields vary with `i`.
pub(crate) fn record(i: u64) -> Record {
    let endpoint = format!("svc-{}", i % 7);
    let attempt = 1 + (i % 4) as u32;
    let class = ["http-429", "http-503", "timeout", "quota \"x\"\n"][(i % 4) as usize].to_owned();
    let event = if i % 97 == 96 {
        Event::Dropped { count: i }
    } else if i % 5 == 4 {
        Event::Outcome {
            endpoint,
            attempt,
            error_class: class,
            success: i % 2 == 0,
        }
    } else {
        Event::Decision {
            endpoint,
            attempt,
            error_class: class,
            retry: i % 3 != 0,
            probability: (i % 100) as f64 / 99.0,
            expected_value: 2.0 - (i % 13) as f64 / 3.0,
            reason: if i % 3 != 0 {
                "positive_expected_value"
            } else {
                "negative_expected_value"
            }
            .to_owned(),
        }
    };
    Record::new(1_764_460_800_000 + 250 * i, event)
}

/// A log of `n` records in memory.
pub(crate) fn memory_log(n: u64) -> AuditLog {
    let mut log = AuditLog::new();
    for i in 0..n {
        log.append(record(i));
    }
    log
}

/// The same log as JSON Lines, split into lines (each with its newline).
pub(crate) fn file_lines(n: u64) -> Vec<Vec<u8>> {
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    for i in 0..n {
        writer.append(&record(i)).unwrap();
    }
    let bytes = writer.into_inner().unwrap();
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// The lines joined back into a file.
pub(crate) fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    lines.concat()
}

/// A destination whose writes fail.
pub(crate) struct Full;

impl io::Write for Full {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::other("disk full"))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Durable for Full {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A disk as a crash sees it: what is written stays in the operating system's
/// memory until a sync puts it on disk. Clones share one disk, so a test keeps
/// one to look at what a writer left on it.
#[derive(Clone, Default)]
pub(crate) struct Disk(Arc<Mutex<Platters>>);

#[derive(Default)]
pub(crate) struct Platters {
    /// Every byte written, in order.
    written: Vec<u8>,
    /// How many of them a sync made durable.
    durable: usize,
    /// Whether the power is going: syncs from now on never complete.
    failing: bool,
}

impl Disk {
    /// The bytes written to it so far: what a crash of the process leaves.
    pub(crate) fn written(&self) -> Vec<u8> {
        self.0.lock().unwrap().written.clone()
    }

    /// How many bytes are durable.
    pub(crate) fn durable(&self) -> usize {
        self.0.lock().unwrap().durable
    }

    /// From now on, a sync makes nothing durable: the power is going, and
    /// the syncs still to come are cut by it (the process does not live to
    /// see them end, so what they return does not matter).
    pub(crate) fn lose_power(&self) {
        self.0.lock().unwrap().failing = true;
    }

    /// What a power cut leaves: the durable bytes, and the first `torn` bytes
    /// of the rest (at most all of them), as a disk that was writing them
    /// when the power went.
    pub(crate) fn after_power_cut(&self, torn: usize) -> Vec<u8> {
        let platters = self.0.lock().unwrap();
        let end = (platters.durable + torn).min(platters.written.len());
        platters.written[..end].to_vec()
    }
}

impl io::Write for Disk {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().written.extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Durable for Disk {
    fn sync(&mut self) -> io::Result<()> {
        let mut platters = self.0.lock().unwrap();
        if !platters.failing {
            platters.durable = platters.written.len();
        }
        Ok(())
    }
}
