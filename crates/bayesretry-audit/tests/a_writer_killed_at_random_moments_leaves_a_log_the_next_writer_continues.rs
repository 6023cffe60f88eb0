//! A process appending to a log is killed with SIGKILL at random moments, 90
//! times, each run by a new process that opens the log with
//! `open_after_crash`, as a restarted program would. After every kill: the
//! lock died with its holder (the next writer opens the file at once); the
//! file's whole lines verify, and still hold, unchanged, every entry the log
//! held before (the chain was continued, never rewritten); they hold every
//! entry the `Fsync` policy says a killed process cannot lose — with
//! `EveryEntry` each one whose `append` returned, with `Every(n)` all but the
//! last `n − 1`, and with any policy those under the writer's seal; and what
//! follows them, if anything, is a line the kill cut, which the next writer
//! cuts off and records as a loss.
//!
//! A kill does cut lines: Linux stops a write at a page boundary when its
//! process is killed, so a line that straddles one is left half-written
//! (`JsonlWriter::open` refuses such a file, as it refuses any damage).
//!
//! The test binary is its own child: run with the role variable set, it plays
//! the writer, and prints after each append how many entries had returned and
//! how many the seal covers. The directory is on a RAM file system where
//! there is one (`/dev/shm`), where an fsync costs nothing, so that kills land
//! in every step of an append and 90 of them take a few seconds.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use core::num::NonZeroU32;
use core::time::Duration;
use std::env;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::thread;
use std::time::Instant;

use bayesretry_audit::{Fsync, JsonlWriter, Seal, Verifier};
use common::record;

const NAME: &str = "a_writer_killed_at_random_moments_leaves_a_log_the_next_writer_continues";
/// The environment variable that makes the binary the writer, with its
/// policy: `every-entry`, `every-8` or `never`.
const ROLE: &str = "BAYESRETRY_AUDIT_TEST_WRITER";
/// The environment variable holding the log's path, for the writer.
const FILE: &str = "BAYESRETRY_AUDIT_TEST_FILE";
/// How many times a writer is killed.
const KILLS: u64 = 90;
/// How many writers are killed writing one log, before the next log.
const PER_LOG: u64 = 6;
/// The longest wait before a kill, in microseconds.
const MAX_DELAY_US: u64 = 2_500;
/// A writer's cap on appends (it is killed long before).
const MAX_APPENDS: u64 = 1_000_000;
/// `Every(n)`'s `n` here.
const EVERY: u32 = 8;

fn fsync_of(role: &str) -> Option<Fsync> {
    match role {
        "every-entry" => Some(Fsync::EveryEntry),
        "every-8" => NonZeroU32::new(EVERY).map(Fsync::Every),
        "never" => Some(Fsync::Never),
        _ => None,
    }
}

/// The writer: opens the log after a crash and appends until killed,
/// printing `ready <entries> <bytes cut>` and, after each append,
/// `<entries appended, in all> <entries under the seal>`.
fn writer(role: &str, path: &Path) -> Result<(), String> {
    let fsync = fsync_of(role).ok_or_else(|| format!("unknown role {role}"))?;
    let (mut log, cut) =
        JsonlWriter::open_after_crash(path, fsync).map_err(|e| format!("open: {e}"))?;
    let start = log.seal().entries();
    println!("ready {start} {cut}");
    for i in 0..MAX_APPENDS {
        log.append(&record(start + i))
            .map_err(|e| format!("append: {e}"))?;
        println!("{} {}", start + i + 1, log.seal().entries());
    }
    Ok(())
}

fn main() -> ExitCode {
    if let (Ok(role), Ok(file)) = (env::var(ROLE), env::var(FILE)) {
        return match writer(&role, Path::new(&file)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("writer {role}: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let args: Vec<String> = env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--list") {
        println!("{NAME}: test");
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|arg| !arg.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|filter| NAME.contains(filter.as_str())) {
        println!(
            "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out\n"
        );
        return ExitCode::SUCCESS;
    }
    println!("\nrunning 1 test");
    let started = Instant::now();
    let result = test();
    let seconds = started.elapsed().as_secs_f64();
    if let Err(error) = result {
        println!("test {NAME} ... FAILED\n\n{error}\n");
        println!(
            "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {seconds:.2}s\n"
        );
        return ExitCode::FAILURE;
    }
    println!("test {NAME} ... ok\n");
    println!(
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {seconds:.2}s\n"
    );
    ExitCode::SUCCESS
}

/// What a killed writer said: the bytes it cut when it opened the log, and
/// the entries appended and under its seal, after its last whole line.
struct Said {
    cut: u64,
    appended: u64,
    sealed: u64,
}

/// Starts a writer with `role`, kills it after `delay`, and returns what it
/// said.
fn run_and_kill(role: &str, path: &Path, delay: Duration) -> Result<Said, String> {
    let mut child = Command::new(env::current_exe().map_err(|e| e.to_string())?)
        .env(ROLE, role)
        .env(FILE, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("the writer has no stdout")?;
    let mut lines = BufReader::new(stdout);
    let mut ready = String::new();
    lines.read_line(&mut ready).map_err(|e| e.to_string())?;
    if !ready.starts_with("ready ") {
        let _ = child.kill();
        let _ = child.wait();
        let mut stderr = String::new();
        if let Some(mut err) = child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        return Err(format!(
            "the writer did not start: {ready:?}, {}",
            stderr.trim()
        ));
    }
    let mut numbers = ready["ready ".len()..]
        .split_whitespace()
        .map(str::parse::<u64>);
    let (Some(Ok(start)), Some(Ok(cut))) = (numbers.next(), numbers.next()) else {
        return Err(format!("the writer printed {ready:?}"));
    };
    thread::sleep(delay);
    child.kill().map_err(|e| e.to_string())?; // SIGKILL on Unix
    child.wait().map_err(|e| e.to_string())?;
    let mut rest = String::new();
    lines.read_to_string(&mut rest).map_err(|e| e.to_string())?;
    let mut said = Said {
        cut,
        appended: start,
        sealed: start,
    };
    // the last line may have been cut by the kill: whole lines only
    for line in rest.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let mut numbers = line.split_whitespace().map(str::parse::<u64>);
        match (numbers.next(), numbers.next()) {
            (Some(Ok(appended)), Some(Ok(sealed))) => {
                said = Said {
                    cut,
                    appended,
                    sealed,
                };
            }
            _ => return Err(format!("the writer printed {line:?}")),
        }
    }
    Ok(said)
}

/// The bytes of the log at `path` up to and after its last newline.
fn whole_lines_and_tail(path: &Path) -> Result<(Vec<u8>, u64), String> {
    let mut bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let whole = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let tail = (bytes.len() - whole) as u64;
    bytes.truncate(whole);
    Ok((bytes, tail))
}

fn test() -> Result<(), String> {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .map_err(|e| e.to_string())?;
    let mut path = dir.path().join("decisions.jsonl");
    let mut random = SplitMix(0xa0d1_7c4a_11ed);
    let mut before = Seal::new(0, bayesretry_audit::Hash::GENESIS);
    let mut left_cut = 0;
    let mut cuts = 0;
    let roles = ["every-entry", "every-8", "never"];
    let mut entries = 0;
    for kill in 0..KILLS {
        if kill % PER_LOG == 0 {
            // a new log now and then: each open verifies the whole file
            entries += before.entries();
            path = dir
                .path()
                .join(format!("decisions-{}.jsonl", kill / PER_LOG));
            before = Seal::new(0, bayesretry_audit::Hash::GENESIS);
            left_cut = 0;
        }
        let role = roles[usize::try_from(kill % 3).unwrap_or(0)];
        let delay = Duration::from_micros(random.below_or_at(MAX_DELAY_US));
        let said = run_and_kill(role, &path, delay).map_err(|e| format!("kill {kill}: {e}"))?;
        // what the kill before left after its whole lines, the writer cut
        if said.cut != left_cut {
            return Err(format!(
                "kill {kill}: the writer cut {} bytes, where {left_cut} followed the last whole line",
                said.cut
            ));
        }
        // the whole lines continue the chain as it was
        let (whole, tail) = whole_lines_and_tail(&path)?;
        let after = Verifier::new()
            .with_seal(before)
            .verify_reader(whole.as_slice())
            .map_err(|e| format!("kill {kill} ({role}): the log does not verify: {e}"))?;
        // and the rest of the file is one line the kill cut, no more
        match Verifier::new().verify_file(&path) {
            Ok(_) if tail == 0 => {}
            Err(bayesretry_audit::Error::IncompleteLine { line })
                if tail > 0 && line == after.entries() + 1 => {}
            other => {
                return Err(format!(
                    "kill {kill} ({role}): {tail} bytes after the whole lines, and the file \
                     verifies as {other:?}"
                ));
            }
        }
        let kept = after.entries();
        let must_keep = match role {
            "every-entry" => said.appended,
            "every-8" => said.appended.saturating_sub(u64::from(EVERY) - 1),
            _ => said.sealed,
        };
        if kept < must_keep.max(said.sealed) {
            return Err(format!(
                "kill {kill} ({role}): the log holds {kept} entries, but {} had been appended \
                 and {} sealed",
                said.appended, said.sealed
            ));
        }
        if tail > 0 {
            cuts += 1;
        }
        left_cut = tail;
        before = after;
    }
    // How many kills cut a line is printed, not asserted: it depends on
    // where the pages fall and on the machine's speed.
    entries += before.entries();
    println!("{KILLS} kills, {cuts} of them in the middle of a line; {entries} entries in all");
    if entries < KILLS {
        return Err(format!(
            "only {entries} entries in {KILLS} runs: the writers hardly ran"
        ));
    }
    Ok(())
}

/// A small deterministic generator (SplitMix64) for the kills' moments.
struct SplitMix(u64);

impl SplitMix {
    fn below_or_at(&mut self, max: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % (max + 1)
    }
}
