//! Two processes, each with a writer id of its own, save their evidence to
//! one file with `save_merged` as fast as they can, and both are killed with
//! SIGKILL at random moments, 40 times; each starts again from the file, as a
//! restarted program would (loading it before it observes, since it keeps its
//! id). After every kill the file loads, and holds, for each process, at
//! least every round that process was told was saved: a save of one never
//! erases what the other saved, whether it was killed in the middle of its
//! own save or the other one was.
//!
//! The test binary is its own child: run with the role variable set, it
//! plays one of the processes, printing the round after each save returns.
//! The directory is on a RAM file system where there is one (`/dev/shm`).

mod common;

use core::time::Duration;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, ExitCode};
use std::thread;

use bayesretry_fs::FileStore;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, Snapshot, StoreConfig, WriterId};
use common::TestResult;

const NAME: &str = "two_savers_killed_at_random_moments_lose_no_evidence_they_saved";
/// How many times both savers are killed.
const KILLS: u32 = 40;
/// The longest wait before a kill, in microseconds.
const MAX_DELAY_US: u64 = 6_000;
/// A saver's cap on rounds (it is killed long before).
const MAX_ROUNDS: u64 = 1_000_000;
/// Contexts each saver observes in a round: a file of a few kilobytes.
const CONTEXTS: usize = 20;

fn main() -> ExitCode {
    common::main(NAME, test, saver)
}

fn writer_of(role: &str) -> Result<u64, String> {
    match role {
        "a" => Ok(1),
        "b" => Ok(2),
        other => Err(format!("unknown role {other}")),
    }
}

/// The endpoints of `writer`'s own contexts.
fn endpoints(writer: u64) -> Vec<String> {
    (0..CONTEXTS).map(|i| format!("w{writer}-{i}")).collect()
}

/// The child: continues from the file, then observes one success per
/// context per round (its own, and one both observe) and saves merged, printing the round once saved.
fn saver(role: &str, path: &Path) -> TestResult {
    let writer = writer_of(role)?;
    let file = FileStore::open(path)?;
    let store = StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .build()?;
    let mut round = 0;
    match file.load() {
        Ok(snapshot) => {
            store.load(&snapshot);
            round = saved_rounds(&snapshot, writer);
        }
        Err(error) if error.is_missing() => {}
        Err(error) => return Err(error.into()),
    }
    println!("ready");
    let endpoints = endpoints(writer);
    let shared = Context::new("shared", 1, ErrorClass::Http(503));
    for _ in 0..MAX_ROUNDS {
        round += 1;
        for endpoint in &endpoints {
            store.observe(&Context::new(endpoint, 1, ErrorClass::Timeout), true, 0);
        }
        store.observe(&shared, true, 0);
        let merged = file.save_merged(&store.snapshot(0))?;
        store.merge(merged.snapshot());
        println!("{round}");
    }
    Ok(())
}

/// The rounds of `writer` a snapshot holds: the successes of its entry for
/// each of its contexts, which must agree.
fn saved_rounds(snapshot: &Snapshot, writer: u64) -> u64 {
    let mut rounds = None;
    for entry in snapshot.entries() {
        if entry.writer() == WriterId::new(writer) {
            let successes = entry.evidence().successes() as u64;
            rounds = Some(rounds.map_or(successes, |r: u64| r.min(successes)));
        }
    }
    rounds.unwrap_or(0)
}

/// A saver and the lines it prints.
type Saver = (Child, BufReader<ChildStdout>);

/// Starts a saver and waits for it to be ready.
fn start(role: &str, path: &Path) -> Result<Saver, Box<dyn core::error::Error>> {
    let mut child = common::spawn(role, path)?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("the saver has no stdout")?);
    let mut ready = String::new();
    stdout.read_line(&mut ready)?;
    if ready.trim() != "ready" {
        child.kill()?;
        child.wait()?;
        return Err(format!("the saver {role} did not start: {ready:?}").into());
    }
    Ok((child, stdout))
}

/// Kills a saver and returns the last round it said was saved.
fn kill((mut child, mut stdout): Saver) -> Result<u64, Box<dyn core::error::Error>> {
    child.kill()?; // SIGKILL on Unix
    child.wait()?;
    let mut out = String::new();
    stdout.read_to_string(&mut out)?;
    // whole lines only: the kill may have cut the last
    let mut last = 0;
    for line in out.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        last = line.trim().parse()?;
    }
    Ok(last)
}

fn test() -> TestResult {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    };
    let path = dir.path().join("evidence.json");
    let file = FileStore::open(&path)?;
    let mut random = 0x5eed_2b0c_u64;
    let mut told = [0, 0];
    for kill_at in 0..KILLS {
        let a = start("a", &path)?;
        let b = start("b", &path)?;
        random = random
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        thread::sleep(Duration::from_micros((random >> 33) % (MAX_DELAY_US + 1)));
        // one killed a little before the other, in turn
        let (first, second) = if kill_at % 2 == 0 { (a, b) } else { (b, a) };
        let first_told = kill(first)?;
        let second_told = kill(second)?;
        let (a_told, b_told) = if kill_at % 2 == 0 {
            (first_told, second_told)
        } else {
            (second_told, first_told)
        };
        told = [told[0].max(a_told), told[1].max(b_told)];
        let snapshot = file
            .load()
            .map_err(|e| format!("kill {kill_at}: the file does not load: {e}"))?;
        for (writer, told) in [(1, told[0]), (2, told[1])] {
            let saved = saved_rounds(&snapshot, writer);
            if saved < told {
                return Err(format!(
                    "kill {kill_at}: the file holds {saved} rounds of writer {writer}, \
                     which was told {told} were saved"
                )
                .into());
            }
        }
    }
    println!(
        "{KILLS} kills; rounds saved: {} of writer 1, {} of writer 2",
        told[0], told[1]
    );
    if told[0] + told[1] < u64::from(KILLS) {
        return Err("the savers hardly ran".into());
    }
    Ok(())
}
