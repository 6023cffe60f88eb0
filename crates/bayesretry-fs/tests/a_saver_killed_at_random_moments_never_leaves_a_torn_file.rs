//! A process that saves in a loop is killed with SIGKILL at random moments,
//! 200 times; after every kill the file and its backup load, each holding one
//! complete round of saves — old or new, never torn, never going backwards.
//!
//! The test binary is its own child: run with the role variable set, it plays
//! the saver. Each saver starts from the file the last one left, as a
//! restarted program would, then alternates `save` and `save_merged`.
//!
//! A killed process loses nothing it wrote to the page cache, so what this
//! tests is the write protocol (temporary file, rename, backup link), not the
//! fsyncs, which guard against power loss. The directory is therefore on a RAM
//! file system where there is one (`/dev/shm`), where an fsync costs nothing:
//! a save then takes a few milliseconds instead of tens, so kills land in
//! every step of it and 200 of them take seconds. Elsewhere the system's
//! temporary directory is used.

mod common;

use core::time::Duration;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::ExitCode;
use std::thread;

use bayesretry_fs::FileStore;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, Snapshot, StoreConfig, WriterId};
use common::TestResult;

const NAME: &str = "a_saver_killed_at_random_moments_never_leaves_a_torn_file";
/// How many times a saver is killed.
const KILLS: u32 = 200;
/// Contexts per snapshot: a file of about 50 kB, a save of a few milliseconds.
const CONTEXTS: usize = 300;
/// The longest wait before a kill, in microseconds: about two rounds of saves.
const MAX_DELAY_US: u64 = 6_000;
/// A saver's round cap (it is killed long before).
const MAX_ROUNDS: u64 = 1_000_000;

fn main() -> ExitCode {
    common::main(NAME, test, saver)
}

fn endpoints() -> Vec<String> {
    (0..CONTEXTS).map(|i| format!("endpoint-{i}")).collect()
}

/// Observes one success for every context, `round` times over.
fn observe_round(store: &impl PosteriorStore, endpoints: &[String], now: u64) {
    for endpoint in endpoints {
        store.observe(&Context::new(endpoint, 1, ErrorClass::Timeout), true, now);
    }
}

/// The child: continues from the file, then saves rounds until killed.
fn saver(_role: &str, path: &Path) -> TestResult {
    let file = FileStore::open(path)?;
    let store = StoreConfig::new().with_writer(WriterId::new(1)).build()?;
    store.load(&file.load()?);
    let endpoints = endpoints();
    println!("ready");
    for round in 0..MAX_ROUNDS {
        observe_round(&store, &endpoints, round);
        let snapshot = store.snapshot(round);
        if round % 2 == 0 {
            file.save(&snapshot)?;
        } else {
            file.save_merged(&snapshot)?;
        }
    }
    Ok(())
}

/// The round a snapshot holds: every context has seen the same number of
/// successes, or the file mixes two saves.
fn round_of(snapshot: &Snapshot, what: &str) -> Result<f64, String> {
    if snapshot.len() != CONTEXTS {
        return Err(format!(
            "{what} has {} entries, not {CONTEXTS}",
            snapshot.len()
        ));
    }
    let first = snapshot.entries()[0].evidence().successes();
    for entry in snapshot.entries() {
        let evidence = entry.evidence();
        if evidence.successes() != first || evidence.failures() != 0.0 {
            return Err(format!(
                "{what} mixes rounds: {} has {evidence:?}, {} has {first} successes",
                entry.endpoint(),
                snapshot.entries()[0].endpoint()
            ));
        }
    }
    Ok(first)
}

fn test() -> TestResult {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    };
    let path = dir.path().join("evidence.json");
    let temp = dir.path().join("evidence.json.tmp");
    let file = FileStore::open(&path)?;
    let store = StoreConfig::new().with_writer(WriterId::new(1)).build()?;
    observe_round(&store, &endpoints(), 0);
    file.save(&store.snapshot(0))?;

    let mut random = SplitMix(0x5eed_f00d_c4a5);
    let mut last_round = 1.0;
    let mut mid_write = 0;
    for kill in 0..KILLS {
        let mut child = common::spawn("saver", &path)?;
        let stdout = child.stdout.take().ok_or("the saver has no stdout")?;
        let mut ready = String::new();
        BufReader::new(stdout).read_line(&mut ready)?;
        if ready.trim() != "ready" {
            child.kill()?;
            let status = child.wait()?;
            return Err(format!("kill {kill}: the saver did not start ({status})").into());
        }
        thread::sleep(Duration::from_micros(random.below_or_at(MAX_DELAY_US)));
        child.kill()?; // SIGKILL on Unix
        child.wait()?;

        if temp.exists() {
            mid_write += 1;
        }
        let snapshot = file
            .load()
            .map_err(|e| format!("kill {kill}: the file does not load: {e}"))?;
        let round = round_of(&snapshot, &format!("kill {kill}: the file"))?;
        if round < last_round {
            return Err(format!(
                "kill {kill}: the file went back from round {last_round} to {round}"
            )
            .into());
        }
        last_round = round;
        if let Ok(backup) = file.load_backup() {
            let backup_round = round_of(&backup, &format!("kill {kill}: the backup"))?;
            if backup_round > round {
                return Err(format!("kill {kill}: the backup (round {backup_round}) is newer than the file (round {round})").into());
            }
        } else if round > 1.0 {
            return Err(
                format!("kill {kill}: the backup does not load after {round} rounds").into(),
            );
        }
    }
    // How many kills left a temporary file (killed between creating it and
    // renaming it) is printed, not asserted: it depends on the machine's speed.
    println!(
        "{KILLS} kills, {mid_write} of them between writing the temporary file and renaming it; \
         {} saves completed",
        last_round - 1.0
    );
    if last_round < f64::from(KILLS / 10) {
        return Err(format!(
            "only {} saves completed in {KILLS} runs: the savers hardly ran",
            last_round - 1.0
        )
        .into());
    }
    Ok(())
}

/// A small deterministic generator (SplitMix64) for the tests' random choices.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..=max`.
    fn below_or_at(&mut self, max: u64) -> u64 {
        self.next_u64() % (max + 1)
    }
}
