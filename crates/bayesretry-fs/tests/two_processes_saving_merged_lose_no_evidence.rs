//! Two processes, each observing different outcomes, save with `save_merged`
//! to one file: the file ends up holding all the evidence of both, each
//! outcome counted once — whether they take turns or race.
//!
//! The test binary is its own child: run with the role variable set, it plays
//! one of the processes, driven by lines on its standard input.

mod common;

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, ExitCode};

use bayesretry_fs::FileStore;
use bayesretry_store::{
    Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};
use common::TestResult;

const NAME: &str = "two_processes_saving_merged_lose_no_evidence";
/// Rounds each process plays when taking turns.
const TURNS: u32 = 12;
/// Rounds each process plays when racing.
const RACE_ROUNDS: u32 = 25;

fn main() -> ExitCode {
    common::main(NAME, test, process)
}

/// One round of a process's outcomes. Process `a` sees the shared contexts
/// succeed twice and its own once; process `b` sees the shared contexts fail
/// once and its own three times.
fn observe_round(store: &MemoryStore, who: &str, now: u64) {
    let shared = ["chat", "embed"].map(|endpoint| Context::new(endpoint, 1, ErrorClass::Http(429)));
    if who == "a" {
        for ctx in &shared {
            store.observe(ctx, true, now);
            store.observe(ctx, true, now);
        }
        store.observe(&Context::new("a-only", 2, ErrorClass::Timeout), true, now);
    } else {
        for ctx in &shared {
            store.observe(ctx, false, now);
        }
        for _ in 0..3 {
            store.observe(
                &Context::new("b-only", 1, ErrorClass::Http(503)),
                false,
                now,
            );
        }
    }
}

/// The child: role `a` or `b` (taking turns: a round per `round` line, until
/// `quit`) or `race-a` / `race-b` (all rounds at once, after `go`).
fn process(role: &str, path: &Path) -> TestResult {
    let (who, racing) = match role {
        "a" | "b" => (role, false),
        "race-a" => ("a", true),
        "race-b" => ("b", true),
        other => return Err(format!("unknown role {other}").into()),
    };
    let writer = if who == "a" { 1 } else { 2 };
    let store = StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .build()?;
    let file = FileStore::open(path)?;
    let stdin = std::io::stdin();
    let mut now = 0;
    for line in stdin.lock().lines() {
        match line?.as_str() {
            "round" if !racing => {
                now += 1;
                observe_round(&store, who, now);
                let merged = file.save_merged(&store.snapshot(now))?;
                // Learn what the other process saved, as a real one would:
                // merging it in counts nothing twice.
                store.merge(merged.snapshot());
                println!("saved");
            }
            "go" if racing => {
                for round in 1..=u64::from(RACE_ROUNDS) {
                    observe_round(&store, who, round);
                    let merged = file.save_merged(&store.snapshot(round))?;
                    store.merge(merged.snapshot());
                }
                println!("saved");
            }
            "quit" => return Ok(()),
            other => return Err(format!("unexpected command {other:?}").into()),
        }
    }
    Ok(())
}

/// (endpoint, successes, failures) for each context of the test.
type Totals = Vec<(String, f64, f64)>;

/// The evidence the file holds for every context, as (successes, failures).
fn totals(file: &FileStore) -> Result<Totals, Box<dyn core::error::Error>> {
    let snapshot = file.load()?;
    let store = MemoryStore::new();
    store.load(&snapshot);
    let mut totals = Vec::new();
    for (endpoint, attempt, class) in [
        ("chat", 1, ErrorClass::Http(429)),
        ("embed", 1, ErrorClass::Http(429)),
        ("a-only", 2, ErrorClass::Timeout),
        ("b-only", 1, ErrorClass::Http(503)),
    ] {
        let evidence = store.evidence(&Context::new(endpoint, attempt, class), 0);
        totals.push((
            endpoint.to_owned(),
            evidence.successes(),
            evidence.failures(),
        ));
    }
    Ok(totals)
}

/// What the file must hold after `rounds` rounds of each process.
fn expected(rounds: u32) -> Totals {
    let r = f64::from(rounds);
    vec![
        ("chat".to_owned(), 2.0 * r, r),
        ("embed".to_owned(), 2.0 * r, r),
        ("a-only".to_owned(), r, 0.0),
        ("b-only".to_owned(), 0.0, 3.0 * r),
    ]
}

/// A child and the lines it prints.
struct Process {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Process {
    fn start(role: &str, path: &Path) -> Result<Process, Box<dyn core::error::Error>> {
        let mut child = common::spawn(role, path)?;
        let stdout = child.stdout.take().ok_or("the child has no stdout")?;
        Ok(Process {
            child,
            lines: BufReader::new(stdout).lines(),
        })
    }

    fn ask(&mut self, command: &str) -> TestResult {
        self.send(command)?;
        self.wait_saved()
    }

    fn send(&mut self, command: &str) -> TestResult {
        let stdin = self.child.stdin.as_mut().ok_or("the child has no stdin")?;
        writeln!(stdin, "{command}")?;
        stdin.flush()?;
        Ok(())
    }

    fn wait_saved(&mut self) -> TestResult {
        match self.lines.next() {
            Some(Ok(line)) if line == "saved" => Ok(()),
            other => Err(format!("expected `saved`, got {other:?}").into()),
        }
    }

    fn quit(mut self) -> TestResult {
        self.send("quit")?;
        let status = self.child.wait()?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("the child ended with {status}").into())
        }
    }
}

fn taking_turns(dir: &Path) -> TestResult {
    let path = dir.join("turns.json");
    let mut a = Process::start("a", &path)?;
    let mut b = Process::start("b", &path)?;
    let file = FileStore::open(&path)?;
    for round in 1..=TURNS {
        a.ask("round")?;
        b.ask("round")?;
        let got = totals(&file)?;
        if got != expected(round) {
            return Err(format!("taking turns, after round {round}: {got:?}").into());
        }
    }
    a.quit()?;
    b.quit()?;
    // One entry per (context, writer): six, however often each was saved.
    let snapshot: Snapshot = file.load()?;
    if snapshot.len() != 6 {
        return Err(format!("taking turns: {} entries, not 6", snapshot.len()).into());
    }
    Ok(())
}

fn racing(dir: &Path) -> TestResult {
    let path = dir.join("race.json");
    let mut a = Process::start("race-a", &path)?;
    let mut b = Process::start("race-b", &path)?;
    a.send("go")?;
    b.send("go")?;
    a.wait_saved()?;
    b.wait_saved()?;
    a.quit()?;
    b.quit()?;
    let got = totals(&FileStore::open(&path)?)?;
    if got != expected(RACE_ROUNDS) {
        return Err(format!("racing: {got:?}, expected {:?}", expected(RACE_ROUNDS)).into());
    }
    Ok(())
}

fn test() -> TestResult {
    let dir = tempfile::tempdir()?;
    taking_turns(dir.path())?;
    racing(dir.path())?;
    Ok(())
}
