//! The audit log's speed: appends in memory and to a JSON Lines destination,
//! verification of a file and of bytes in memory, and the overhead the
//! observer adds to a policy's `run`, with and without it in the same run.
//!
//! The policy runs with a manual clock, a sleeper that does not wait and a fixed
//! seed, as in `bayesretry-policy`'s own bench; the trail writes to a JSON Lines
//! writer over `io::sink()`, so the writer thread hashes and formats every entry
//! but no disk speed is measured in the overhead.

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]

use core::future::ready;
use core::hint::black_box;
use core::num::NonZeroUsize;
use core::time::Duration;
use std::io::{self, BufReader, Write};

use std::sync::mpsc;

use bayesretry_audit::{
    AuditLog, AuditTrail, Error, Event, Fsync, Hash, JsonlWriter, Record, Seal, Sink, UnixClock,
    Verifier,
};
use bayesretry_policy::{
    BlockingSleeper, Context, Decision, ErrorClass, HttpStatus, ManualClock, Observer, Reason,
    RetryPolicy,
};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

/// Entries appended per measured batch.
const BATCH: usize = 10_000;
/// Entries in the file that is verified.
const FILE_ENTRIES: u64 = 100_000;

/// A decision record like those the observer writes.
fn record(i: u64) -> Record {
    Record::new(
        1_764_000_000_000 + i,
        Event::Decision {
            endpoint: "api.example.com/v1/chat/completions".to_owned(),
            attempt: 1 + (i % 4) as u32,
            error_class: "http-503".to_owned(),
            retry: i % 3 != 0,
            probability: 0.4 + (i % 50) as f64 / 100.0,
            expected_value: 1.5 - (i % 7) as f64 / 3.0,
            reason: "positive_expected_value".to_owned(),
        },
    )
}

fn bench_append(c: &mut Criterion) {
    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("memory", |b| {
        b.iter_batched(
            || (0..BATCH as u64).map(record).collect::<Vec<_>>(),
            |records| {
                let mut log = AuditLog::new();
                for record in records {
                    black_box(log.append(record));
                }
                log
            },
            BatchSize::LargeInput,
        );
    });
    group.bench_function("jsonl_to_sink", |b| {
        let records: Vec<Record> = (0..BATCH as u64).map(record).collect();
        b.iter(|| {
            let mut writer = JsonlWriter::new(io::sink(), Fsync::Never);
            for record in &records {
                let _ = black_box(writer.append(record));
            }
            writer.seal()
        });
    });
    group.finish();
}

#[expect(
    clippy::panic,
    reason = "a bench whose setup fails has nothing to measure"
)]
fn bench_verify(c: &mut Criterion) {
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    for i in 0..FILE_ENTRIES {
        if writer.append(&record(i)).is_err() {
            panic!("the bench log is writable");
        }
    }
    let bytes = match writer.into_inner() {
        Ok(bytes) => bytes,
        Err(err) => panic!("the bench log is writable: {err}"),
    };
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("a temporary directory: {err}"),
    };
    let path = dir.path().join("bench.jsonl");
    let written = std::fs::File::create(&path).and_then(|mut file| file.write_all(&bytes));
    if let Err(err) = written {
        panic!("the bench file is writable: {err}");
    }

    let mut group = c.benchmark_group("verify");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("file", |b| {
        b.iter(|| black_box(Verifier::new().verify_file(&path).ok()));
    });
    group.bench_function("bytes_in_memory", |b| {
        b.iter(|| {
            black_box(
                Verifier::new()
                    .verify_reader(BufReader::new(bytes.as_slice()))
                    .ok(),
            )
        });
    });
    let mut log = AuditLog::new();
    for i in 0..FILE_ENTRIES {
        log.append(record(i));
    }
    group.throughput(Throughput::Elements(FILE_ENTRIES));
    group.bench_function("audit_log_in_memory", |b| {
        b.iter(|| black_box(log.verify().is_ok()));
    });
    group.finish();
}

/// A blocking sleeper that does not wait.
struct NoSleep;

impl BlockingSleeper for NoSleep {
    fn sleep_blocking(&self, _: Duration) {}
}

#[expect(
    clippy::panic,
    reason = "a bench whose setup is invalid has nothing to measure"
)]
fn policy(trail: Option<&AuditTrail<JsonlWriter<io::Sink>>>) -> RetryPolicy {
    let mut builder = RetryPolicy::builder()
        .with_clock(ManualClock::new(0))
        .with_sleeper(|_| ready(()))
        .with_blocking_sleeper(NoSleep)
        .with_seed(7);
    if let Some(trail) = trail {
        builder = builder.with_observer(trail.observer());
    }
    match builder.build() {
        Ok(policy) => policy,
        Err(err) => panic!("the bench policy is valid: {err}"),
    }
}

/// The attempt: fails with a 503 while `attempt <= failures`, then answers.
fn attempt(attempt: u32, failures: u32) -> Result<u32, HttpStatus> {
    if attempt <= failures {
        Err(HttpStatus(503))
    } else {
        Ok(attempt)
    }
}

#[expect(
    clippy::panic,
    reason = "a bench whose setup fails has nothing to measure"
)]
fn bench_observer(c: &mut Criterion) {
    let capacity = NonZeroUsize::new(64 * 1024).unwrap_or(NonZeroUsize::MIN);
    let trail = match AuditTrail::spawn_with(
        JsonlWriter::new(io::sink(), Fsync::Never),
        capacity,
        UnixClock,
    ) {
        Ok(trail) => trail,
        Err(err) => panic!("the writer thread starts: {err}"),
    };
    for (name, failures) in [("success_first", 0), ("one_failure_one_retry", 1)] {
        let mut group = c.benchmark_group(format!("run_blocking/{name}"));
        let plain = policy(None);
        let audited = policy(Some(&trail));
        // the value as a `u32` and the name borrowed from a `String`, as in
        // the run loop's bench: neither is written in halves and read back
        // whole, which would stall the measurement on the harness
        let name = String::from("provider");
        group.bench_function("without_audit", |b| {
            b.iter(|| {
                let out = plain.run_blocking(black_box(&name).as_str(), |n| {
                    attempt(n, black_box(failures))
                });
                black_box(out.map_or(0, |v| v))
            });
        });
        group.bench_function("with_audit", |b| {
            b.iter(|| {
                let out = audited.run_blocking(black_box(&name).as_str(), |n| {
                    attempt(n, black_box(failures))
                });
                black_box(out.map_or(0, |v| v))
            });
        });
        group.finish();
    }
    let seal = trail.sync();
    println!(
        "audit trail: {} entries written, {} records dropped (queue full), {} refused; seal {:?}",
        trail.written(),
        trail.dropped(),
        trail.failed(),
        seal.map(|seal| seal.entries()),
    );
}

/// A sink that keeps nothing: the writer only drains the queue.
struct Discard(u64);

impl Sink for Discard {
    fn append(&mut self, _: &Record) -> Result<(), Error> {
        self.0 += 1;
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn seal(&self) -> Seal {
        Seal::new(self.0, Hash::GENESIS)
    }
}

/// A sink whose first append waits until the bench ends: every record after
/// the queue fills is dropped.
struct Stuck(mpsc::Receiver<()>);

impl Sink for Stuck {
    fn append(&mut self, _: &Record) -> Result<(), Error> {
        let _ = self.0.recv();
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn seal(&self) -> Seal {
        Seal::new(0, Hash::GENESIS)
    }
}

/// The observer's own cost per decision, on the call's thread: the time read,
/// the endpoint copied, the message offered — taken by a writer that drains the
/// queue without hashing, or refused by a full queue (dropped and counted).
#[expect(
    clippy::panic,
    reason = "a bench whose setup fails has nothing to measure"
)]
fn bench_offer(c: &mut Criterion) {
    let ctx = Context::new(
        "api.example.com/v1/chat/completions",
        2,
        ErrorClass::Http(503),
    );
    let decision = Decision::stop(Reason::BudgetExhausted);
    let mut group = c.benchmark_group("observer_on_decision");
    let draining = match AuditTrail::spawn(Discard(0)) {
        Ok(trail) => trail,
        Err(err) => panic!("the writer thread starts: {err}"),
    };
    let observer = draining.observer();
    group.bench_function("queue_drained", |b| {
        b.iter(|| observer.on_decision(black_box(&decision), black_box(&ctx)));
    });
    let (release, gate) = mpsc::channel();
    let stuck = match AuditTrail::spawn(Stuck(gate)) {
        Ok(trail) => trail,
        Err(err) => panic!("the writer thread starts: {err}"),
    };
    let observer = stuck.observer();
    group.bench_function("queue_full", |b| {
        b.iter(|| observer.on_decision(black_box(&decision), black_box(&ctx)));
    });
    group.finish();
    println!(
        "queue_drained: {} dropped; queue_full: {} dropped",
        draining.dropped(),
        stuck.dropped()
    );
    let _ = release.send(());
}

criterion_group!(
    benches,
    bench_append,
    bench_verify,
    bench_observer,
    bench_offer
);
criterion_main!(benches);
