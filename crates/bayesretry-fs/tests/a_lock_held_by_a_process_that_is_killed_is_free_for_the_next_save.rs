//! Saves of two processes exclude each other through the lock, and the lock
//! dies with its holder: while another process holds it, a save gives up
//! with `Error::LockTimeout` and writes nothing; once that process is killed
//! with SIGKILL, in the middle of whatever it was doing, the next save takes
//! the lock at its first try. A lock file left behind is never a stale lock.
//!
//! The test binary is its own child: run with the role variable set, it
//! takes the lock, says so, and waits to be killed. The timeouts are zero
//! (one try), so nothing in this test waits on a clock.

mod common;

use core::time::Duration;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::ExitCode;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig, WriterId};
use common::TestResult;
use fs4::FileExt;

const NAME: &str = "a_lock_held_by_a_process_that_is_killed_is_free_for_the_next_save";

fn main() -> ExitCode {
    common::main(NAME, test, holder)
}

/// The child: takes the lock a save takes, says `held`, and keeps it until
/// killed (or its standard input closes).
fn holder(_role: &str, path: &Path) -> TestResult {
    let file = FileStore::open(path)?;
    let lock = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(file.lock_path()?)?;
    FileExt::lock(&lock)?;
    println!("held");
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest)?;
    Ok(())
}

fn store(writer: u64, successes: u32) -> Result<MemoryStore, Box<dyn core::error::Error>> {
    let store = StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .build()?;
    for _ in 0..successes {
        store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    }
    Ok(store)
}

fn test() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let file = FileStore::open(&path)?.with_lock_timeout(Duration::ZERO);
    file.save_merged(&store(1, 1)?.snapshot(0))?;
    let before = file.load()?;

    let mut child = common::spawn("holder", &path)?;
    let stdout = child.stdout.take().ok_or("the holder has no stdout")?;
    let mut said = String::new();
    BufReader::new(stdout).read_line(&mut said)?;
    if said.trim() != "held" {
        child.kill()?;
        child.wait()?;
        return Err(format!("the holder did not take the lock: {said:?}").into());
    }

    // held by another process: refused, naming the lock file, nothing written
    let other = store(2, 3)?.snapshot(0);
    for result in [file.save_merged(&other).map(drop), file.save(&other)] {
        match result {
            Err(Error::LockTimeout { path, waited }) => {
                if path != file.lock_path()? || !waited.is_zero() {
                    return Err(
                        format!("the timeout names {}, after {waited:?}", path.display()).into(),
                    );
                }
            }
            other => {
                child.kill()?;
                child.wait()?;
                return Err(format!("a save went past another process's lock: {other:?}").into());
            }
        }
    }
    if file.load()? != before {
        return Err("a refused save changed the file".into());
    }

    child.kill()?; // SIGKILL on Unix
    child.wait()?;
    // the lock went with its holder: taken at the first try, the lock file
    // still there
    let merged = file.save_merged(&other)?;
    if !file.lock_path()?.exists() {
        return Err("the lock file is gone".into());
    }
    let restarted = MemoryStore::new();
    restarted.load(&file.load()?);
    let evidence = restarted.evidence(&Context::new("api", 1, ErrorClass::Timeout), 0);
    if (evidence.successes(), evidence.failures()) != (4.0, 0.0) || merged.snapshot().len() != 2 {
        return Err(format!("after the kill, the file holds {evidence:?}").into());
    }
    Ok(())
}
