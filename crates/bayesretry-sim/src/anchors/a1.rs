//! Anchor A1: jitter under contention (AWS Architecture Blog, "Exponential
//! Backoff and Jitter", 2015), as fixed in the benchmark specification §7.
//!
//! One database row carries an integer version. Each of `N` clients reads it (a
//! network hop each way), then writes it conditionally on the version it read;
//! the write succeeds iff the version is unchanged, and bumps it. The server has
//! unlimited capacity and no service time, so contention is the only cost. A
//! client whose write fails counts `n` (1 after the first failure) and reads again
//! after the failure's return hop plus `backoff(n)`; it stops after its first
//! successful write. All clients start at `t = 0`.

use alloc::vec::Vec;
use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use serde::Serialize;

use crate::anchors::queue::EventQueue;
use crate::anchors::rng;

/// The backoff algorithms of the blog post.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// No wait at all.
    None,
    /// `expo(n) = min(cap, base · 2^n)`, no jitter.
    Exponential,
    /// `expo(n)/2 + U(0, expo(n)/2)`.
    Equal,
    /// `U(0, expo(n))`.
    Full,
    /// `sleep = min(cap, U(base, 3 · sleep))`, `sleep` starting at `base`.
    Decorrelated,
}

impl Algorithm {
    /// Every algorithm, in the order of the tables.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::None,
        Algorithm::Exponential,
        Algorithm::Equal,
        Algorithm::Full,
        Algorithm::Decorrelated,
    ];

    /// The name used in the JSON tables.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::None => "none",
            Algorithm::Exponential => "exponential",
            Algorithm::Equal => "equal",
            Algorithm::Full => "full",
            Algorithm::Decorrelated => "decorrelated",
        }
    }

    /// A stable number for the policy's random stream key.
    const fn id(self) -> u64 {
        match self {
            Algorithm::None => 0,
            Algorithm::Exponential => 1,
            Algorithm::Equal => 2,
            Algorithm::Full => 3,
            Algorithm::Decorrelated => 4,
        }
    }
}

/// The base delay of the backoffs, in milliseconds.
pub const BASE_MS: f64 = 5.0;
/// The cap of the backoffs, in milliseconds.
pub const CAP_MS: f64 = 2_000.0;
/// Mean of one network hop, in milliseconds.
pub const HOP_MEAN_MS: f64 = 10.0;
/// Standard deviation of one network hop, in milliseconds.
pub const HOP_SD_MS: f64 = 2.0;
/// A hard cap on the write attempts of one client in one run. No backoff of the
/// blog comes near it (without backoff, `N` clients need at most `N` rounds);
/// it only keeps the loop bounded.
pub const MAX_WRITES_PER_CLIENT: u32 = 100_000;

/// Key part naming this anchor in every random key.
const SCENARIO: u64 = 0xA1;
/// Key purposes of the environment's draws.
const HOP: u64 = 1;
/// Key purpose of the backoff's (policy's) draws.
const JITTER: u64 = 2;

/// The mean over the runs of one (N, algorithm) cell.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct A1Row {
    /// Clients `N`.
    pub clients: u32,
    /// The backoff algorithm.
    pub algorithm: Algorithm,
    /// Mean write attempts per run (every client, failed writes included).
    pub writes: f64,
    /// Mean completion time of the last client, in milliseconds: when its
    /// successful write's answer reached it.
    pub time_ms: f64,
}

/// The outcome of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct A1Run {
    /// Write attempts made.
    pub writes: u64,
    /// When the last client learned its write succeeded, in milliseconds.
    pub last_done_ms: f64,
    /// Whether every client finished within its write cap.
    pub complete: bool,
}

/// The backoff jitters that come from `bayesretry-backoff`: there, the delay
/// after failed attempt `a` is `min(cap, base · 2^(a-1))` jittered, so the
/// blog's `expo(n)` is the library's attempt `n + 1`.
#[derive(Clone, Copy, Debug)]
struct Backoffs {
    exponential: bayesretry_backoff::Backoff,
    equal: bayesretry_backoff::Backoff,
    full: bayesretry_backoff::Backoff,
}

impl Backoffs {
    #[expect(
        clippy::expect_used,
        reason = "base 5 ms <= cap 2 s, factor 2 and a built-in jitter form a valid config"
    )]
    fn new() -> Backoffs {
        let config = Config::new()
            .with_base_delay(Duration::from_millis(5))
            .with_max_delay(Duration::from_millis(2_000));
        let build = |jitter| {
            config
                .with_jitter(jitter)
                .build()
                .expect("a valid backoff config")
        };
        Backoffs {
            exponential: build(Jitter::None),
            equal: build(Jitter::Equal),
            full: build(Jitter::Full),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

/// What a client is waiting for.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The read request reaches the server.
    ReadAtServer { client: u32 },
    /// The write request, carrying the version read, reaches the server.
    WriteAtServer { client: u32, version: u64 },
    /// The answer to a failed write reaches the client.
    FailedAtClient { client: u32 },
    /// The answer to a successful write reaches the client.
    DoneAtClient,
}

/// One client's state.
#[derive(Clone, Copy, Debug)]
struct Client {
    /// Hops taken so far (the key of the next hop draw).
    hops: u64,
    /// Failed writes so far: the `n` of `backoff(n)`.
    failures: u32,
    /// Decorrelated jitter's previous sleep, in milliseconds.
    sleep_ms: f64,
    /// Writes made.
    writes: u32,
}

/// Runs one simulation of `clients` clients with `algorithm`. The hop delays are
/// a pure function of `(seed, run, client, hop number)`, so every algorithm sees
/// the same network for the same run; the jitter is keyed by
/// `(seed, algorithm, run, client, n)`.
pub fn run_once(seed: u64, run: u64, clients: u32, algorithm: Algorithm) -> A1Run {
    let backoffs = Backoffs::new();
    let mut state: Vec<Client> = (0..clients)
        .map(|_| Client {
            hops: 0,
            failures: 0,
            sleep_ms: BASE_MS,
            writes: 0,
        })
        .collect();
    let mut queue = EventQueue::new();
    let hop = |client: u32, c: &mut Client| {
        let n = c.hops;
        c.hops = c.hops.wrapping_add(1);
        let a = rng::key(&[seed, SCENARIO, run, u64::from(client), n, HOP, 0]);
        let b = rng::key(&[seed, SCENARIO, run, u64::from(client), n, HOP, 1]);
        (HOP_MEAN_MS + HOP_SD_MS * rng::normal(a, b)).abs()
    };
    for (client, c) in (0u32..).zip(state.iter_mut()) {
        let delay = hop(client, c);
        queue.push(delay, Event::ReadAtServer { client });
    }
    let mut version: u64 = 0;
    let mut writes: u64 = 0;
    let mut last_done_ms: f64 = 0.0;
    let mut complete = true;
    while let Some((now, event)) = queue.pop() {
        match event {
            Event::ReadAtServer { client } => {
                let Some(c) = state.get_mut(client as usize) else {
                    continue;
                };
                // the answer travels back, then the write travels out
                let back = hop(client, c);
                let out = hop(client, c);
                queue.push(now + back + out, Event::WriteAtServer { client, version });
            }
            Event::WriteAtServer {
                client,
                version: read,
            } => {
                let Some(c) = state.get_mut(client as usize) else {
                    continue;
                };
                writes += 1;
                c.writes = c.writes.saturating_add(1);
                let back = hop(client, c);
                if read == version {
                    version += 1;
                    queue.push(now + back, Event::DoneAtClient);
                } else if c.writes >= MAX_WRITES_PER_CLIENT {
                    complete = false;
                } else {
                    queue.push(now + back, Event::FailedAtClient { client });
                }
            }
            Event::FailedAtClient { client } => {
                let Some(c) = state.get_mut(client as usize) else {
                    continue;
                };
                c.failures = c.failures.saturating_add(1);
                let random = rng::key(&[
                    seed,
                    SCENARIO,
                    run,
                    u64::from(client),
                    u64::from(c.failures),
                    JITTER,
                    algorithm.id(),
                ]);
                let wait = backoff_ms(algorithm, &backoffs, c, random);
                let out = hop(client, c);
                queue.push(now + wait + out, Event::ReadAtServer { client });
            }
            Event::DoneAtClient => {
                last_done_ms = last_done_ms.max(now);
            }
        }
    }
    A1Run {
        writes,
        last_done_ms,
        complete,
    }
}

/// `backoff(n)` for the client's `n = failures`, in milliseconds.
fn backoff_ms(algorithm: Algorithm, backoffs: &Backoffs, c: &mut Client, random: u64) -> f64 {
    let attempt = c.failures.saturating_add(1);
    match algorithm {
        Algorithm::None => 0.0,
        Algorithm::Exponential => ms(backoffs.exponential.delay(attempt, random)),
        Algorithm::Equal => ms(backoffs.equal.delay(attempt, random)),
        Algorithm::Full => ms(backoffs.full.delay(attempt, random)),
        Algorithm::Decorrelated => {
            // The blog's form, `min(cap, U(base, 3 · sleep))`: the draw may exceed
            // the cap and is then clamped to it. `bayesretry-backoff` draws from
            // `[base, min(cap, 3 · sleep)]` instead, which never piles delays onto
            // the cap; the two differ once `3 · sleep > cap`, so the blog's form
            // is computed here.
            let draw = BASE_MS + (3.0 * c.sleep_ms - BASE_MS) * rng::unit(random);
            c.sleep_ms = draw.min(CAP_MS);
            c.sleep_ms
        }
    }
}

/// The mean of `runs` runs for each `(N, algorithm)`, `N` in `clients`; runs are
/// numbered `0..runs`.
pub fn table(seed: u64, clients: &[u32], runs: u64) -> Vec<A1Row> {
    let mut rows = Vec::new();
    for &n in clients {
        for algorithm in Algorithm::ALL {
            let (mut writes, mut time) = (0.0, 0.0);
            for run in 0..runs {
                let outcome = run_once(seed, run, n, algorithm);
                writes += outcome.writes as f64;
                time += outcome.last_done_ms;
            }
            let runs_f = runs.max(1) as f64;
            rows.push(A1Row {
                clients: n,
                algorithm,
                writes: writes / runs_f,
                time_ms: time / runs_f,
            });
        }
    }
    rows
}

/// The client counts of the published table: 10, 20, …, 190.
pub fn published_clients() -> Vec<u32> {
    (1..=19).map(|k| k * 10).collect()
}

/// Runs per cell in the published table.
pub const PUBLISHED_RUNS: u64 = 100;
