//! Anchor A2: retry strategies against the failure rate (Marc Brooker, "Fixing
//! retries with token buckets and circuit breakers", 2022), as fixed in the
//! benchmark specification §7, then BayesRetry in the same model.
//!
//! Each client is an open-loop Poisson source of calls; every attempt fails
//! independently with probability `f`; an attempt's answer comes back after a
//! round trip drawn from Exp(mean 10 ms); retries go out at once (no backoff).
//! Calls start during the horizon; work in flight at its end is drained.

use alloc::vec::Vec;

use bayesretry_store::ErrorClass;
use serde::Serialize;

use crate::anchors::bayes::{BayesConfig, BayesRetry, CallTrack};
use crate::anchors::queue::EventQueue;
use crate::anchors::rng;

/// The failure rates of the published table.
pub const FAILURE_RATES: [f64; 7] = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75];
/// The mean network round trip, in seconds.
pub const RTT_MEAN_S: f64 = 0.010;
/// Token bucket: capacity, and the balance it starts with.
pub const BUCKET_SIZE: f64 = 5.0;
/// Token bucket: the deposit on every call start.
pub const BUCKET_REFILL: f64 = 0.1;
/// Breaker: the largest failures / first tries ratio at which it still retries.
pub const BREAKER_RATIO: f64 = 0.1;
/// Retries of the `retries3` and `breaker` strategies.
pub const MAX_RETRIES: u32 = 3;
/// A hard cap on attempts per call. Only the token bucket has no retry cap of its
/// own, and its balance runs out long before this.
pub const MAX_ATTEMPTS_PER_CALL: u32 = 1_000;

/// Key part naming this anchor.
const SCENARIO: u64 = 0xA2;
/// Key purposes.
const ARRIVAL: u64 = 1;
const FAIL: u64 = 2;
const RTT: u64 = 3;
const POLICY: u64 = 4;

/// The four strategies of the published simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// No retries.
    None,
    /// Up to 3 retries.
    Retries3,
    /// Per-client token bucket: size 5, starts full, +0.1 per call start, a retry
    /// needs a balance above 1 and costs 1; no other cap on retries.
    TokenBucket,
    /// Per-client retry breaker: counts first tries and failed attempts since the
    /// start; after a failure (counted first) retries, up to 3 times, only while
    /// failures / first tries ≤ 0.1.
    Breaker,
}

impl Strategy {
    /// Every strategy, in the order of the tables.
    pub const ALL: [Strategy; 4] = [
        Strategy::None,
        Strategy::Retries3,
        Strategy::TokenBucket,
        Strategy::Breaker,
    ];
}

/// Where BayesRetry keeps its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// Each client has its own beliefs and breaker.
    PerClient,
    /// One state for all clients.
    Shared,
}

/// Who decides the retries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// One of the published strategies.
    Published(Strategy),
    /// BayesRetry's default configuration, state kept as said.
    BayesRetry(Sharing),
}

/// The model's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct A2Model {
    /// Clients.
    pub clients: u32,
    /// Calls per second of each client.
    pub rate_per_client: f64,
    /// Calls start in `[0, horizon_s)`.
    pub horizon_s: f64,
    /// Probability that an attempt fails.
    pub failure_rate: f64,
}

impl A2Model {
    /// The published model at failure rate `f`: 100 clients × 10 calls/s, 10 s.
    pub const fn published(failure_rate: f64) -> A2Model {
        A2Model {
            clients: 100,
            rate_per_client: 10.0,
            horizon_s: 10.0,
            failure_rate,
        }
    }
}

/// What one run counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct A2Counts {
    /// Calls started (first tries offered).
    pub calls: u64,
    /// Attempts sent to the server.
    pub attempts: u64,
    /// Calls that succeeded.
    pub successes: u64,
}

impl A2Counts {
    /// Successful calls / calls (1 when there were none).
    pub fn success_rate(&self) -> f64 {
        ratio(self.successes, self.calls)
    }

    /// Attempts / first tries (1 when there were none).
    pub fn load(&self) -> f64 {
        ratio(self.attempts, self.calls)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// One row of `a2.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct A2Row {
    /// `f`.
    pub failure_rate: f64,
    /// The strategy.
    pub strategy: Strategy,
    /// Mean success rate over the replications.
    pub success_rate: f64,
    /// Mean load over the replications.
    pub load: f64,
}

/// One row of `a2-bayesretry.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct A2BayesRow {
    /// `f`.
    pub failure_rate: f64,
    /// Always `"bayesretry"`: the default configuration.
    pub strategy: &'static str,
    /// Where its state lives.
    pub state: Sharing,
    /// Clients (the total rate stays 1000 calls/s).
    pub clients: u32,
    /// Mean success rate over the replications.
    pub success_rate: f64,
    /// Mean load over the replications.
    pub load: f64,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// Client `client` starts its `index`-th call.
    Start { client: u32, index: u64 },
    /// The answer to the current attempt of call `call` arrives.
    Answer { call: usize },
}

/// One call in flight.
#[derive(Clone, Copy, Debug)]
struct Call {
    client: u32,
    index: u64,
    attempts: u32,
    track: CallTrack,
}

/// A client's own retry state.
#[derive(Clone, Copy, Debug)]
struct ClientState {
    tokens: f64,
    first_tries: u64,
    failures: u64,
}

/// Runs the model once with `policy`. The environment's draws (arrivals, failures,
/// round trips) are pure functions of `(seed, client, call, attempt, purpose)`, so
/// every policy meets the same luck.
pub fn run(seed: u64, model: &A2Model, policy: Policy) -> A2Counts {
    let clients = model.clients;
    let mean_gap = 1.0 / model.rate_per_client.max(f64::MIN_POSITIVE);
    let mut states: Vec<ClientState> = (0..clients)
        .map(|_| ClientState {
            tokens: BUCKET_SIZE,
            first_tries: 0,
            failures: 0,
        })
        .collect();
    let config = BayesConfig::policy_default();
    let mut bayes: Vec<BayesRetry> = match policy {
        Policy::BayesRetry(Sharing::PerClient) => (0..clients)
            .map(|c| BayesRetry::new(&config, rng::key(&[seed, SCENARIO, POLICY, u64::from(c)])))
            .collect(),
        Policy::BayesRetry(Sharing::Shared) => {
            alloc::vec![BayesRetry::new(
                &config,
                rng::key(&[seed, SCENARIO, POLICY])
            )]
        }
        Policy::Published(_) => Vec::new(),
    };
    let arrival_gap = |client: u32, index: u64| {
        rng::exponential(
            rng::key(&[seed, SCENARIO, u64::from(client), index, ARRIVAL]),
            mean_gap,
        )
    };
    let rtt = |call: &Call| {
        let word = rng::key(&[
            seed,
            SCENARIO,
            u64::from(call.client),
            call.index,
            u64::from(call.attempts),
            RTT,
        ]);
        rng::exponential(word, RTT_MEAN_S)
    };
    let mut queue = EventQueue::new();
    for client in 0..clients {
        let first = arrival_gap(client, 0);
        if first < model.horizon_s {
            queue.push(first, Event::Start { client, index: 0 });
        }
    }
    let mut calls: Vec<Call> = Vec::new();
    let mut counts = A2Counts::default();
    while let Some((now, event)) = queue.pop() {
        let now_ms = (now * 1_000.0) as u64;
        match event {
            Event::Start { client, index } => {
                let next = now + arrival_gap(client, index + 1);
                if next < model.horizon_s {
                    queue.push(
                        next,
                        Event::Start {
                            client,
                            index: index + 1,
                        },
                    );
                }
                counts.calls += 1;
                if let Some(state) = states.get_mut(client as usize) {
                    state.first_tries += 1;
                    state.tokens = (state.tokens + BUCKET_REFILL).min(BUCKET_SIZE);
                }
                let mut call = Call {
                    client,
                    index,
                    attempts: 0,
                    track: CallTrack::default(),
                };
                if let Some(b) = bayes_of(&mut bayes, client) {
                    if !b.admit(&mut call.track, now_ms) {
                        continue;
                    }
                }
                call.attempts = 1;
                counts.attempts += 1;
                queue.push(now + rtt(&call), Event::Answer { call: calls.len() });
                calls.push(call);
            }
            Event::Answer { call: id } => {
                let Some(call) = calls.get_mut(id) else {
                    continue;
                };
                let word = rng::key(&[
                    seed,
                    SCENARIO,
                    u64::from(call.client),
                    call.index,
                    u64::from(call.attempts),
                    FAIL,
                ]);
                let failed = rng::unit(word) < model.failure_rate;
                if !failed {
                    counts.successes += 1;
                    if let Some(b) = bayes_of(&mut bayes, call.client) {
                        b.succeeded(&mut call.track, now_ms);
                    }
                    continue;
                }
                let retry = call.attempts < MAX_ATTEMPTS_PER_CALL
                    && match policy {
                        Policy::Published(strategy) => published_retry(
                            strategy,
                            states.get_mut(call.client as usize),
                            call.attempts,
                        ),
                        Policy::BayesRetry(_) => match bayes_of(&mut bayes, call.client) {
                            // the A2 model has no backoff: the decision is kept, the
                            // delay is not
                            Some(b) => {
                                b.failed(&mut call.track, ErrorClass::Http(500), now_ms)
                                    .is_some()
                                    && b.admit(&mut call.track, now_ms)
                            }
                            None => false,
                        },
                    };
                if retry {
                    call.attempts += 1;
                    counts.attempts += 1;
                    let answer = now + rtt(call);
                    queue.push(answer, Event::Answer { call: id });
                }
            }
        }
    }
    counts
}

/// The BayesRetry state a client uses: its own, or the only one.
fn bayes_of(bayes: &mut [BayesRetry], client: u32) -> Option<&mut BayesRetry> {
    match bayes.len() {
        0 => None,
        1 => bayes.first_mut(),
        _ => bayes.get_mut(client as usize),
    }
}

/// Whether a published strategy retries after failed attempt `attempts`.
fn published_retry(strategy: Strategy, state: Option<&mut ClientState>, attempts: u32) -> bool {
    let retries = attempts.saturating_sub(1);
    match (strategy, state) {
        (Strategy::None, _) | (_, None) => false,
        (Strategy::Retries3, _) => retries < MAX_RETRIES,
        (Strategy::TokenBucket, Some(state)) => {
            if state.tokens > 1.0 {
                state.tokens -= 1.0;
                true
            } else {
                false
            }
        }
        (Strategy::Breaker, Some(state)) => {
            state.failures += 1;
            retries < MAX_RETRIES
                && (state.failures as f64) <= BREAKER_RATIO * state.first_tries as f64
        }
    }
}

/// The mean of `replications` runs (seeds `seed`, `seed + 1`, …).
pub fn mean_of(seed: u64, replications: u64, model: &A2Model, policy: Policy) -> (f64, f64) {
    let (mut success, mut load) = (0.0, 0.0);
    for r in 0..replications {
        let counts = run(seed.wrapping_add(r), model, policy);
        success += counts.success_rate();
        load += counts.load();
    }
    let n = replications.max(1) as f64;
    (success / n, load / n)
}

/// The published table: every `f`, every strategy.
pub fn table(seed: u64, replications: u64) -> Vec<A2Row> {
    let mut rows = Vec::new();
    for f in FAILURE_RATES {
        for strategy in Strategy::ALL {
            let model = A2Model::published(f);
            let (success_rate, load) =
                mean_of(seed, replications, &model, Policy::Published(strategy));
            rows.push(A2Row {
                failure_rate: f,
                strategy,
                success_rate,
                load,
            });
        }
    }
    rows
}

/// Client counts of the BayesRetry extension; the total rate stays 1000 calls/s.
pub const BAYES_CLIENTS: [u32; 3] = [10, 100, 1_000];

/// The BayesRetry extension: every `f`, per-client and shared state, at 10, 100
/// and 1000 clients for the same total rate.
pub fn bayes_table(seed: u64, replications: u64) -> Vec<A2BayesRow> {
    let mut rows = Vec::new();
    for f in FAILURE_RATES {
        for clients in BAYES_CLIENTS {
            for state in [Sharing::PerClient, Sharing::Shared] {
                let model = A2Model {
                    clients,
                    rate_per_client: 1_000.0 / f64::from(clients),
                    horizon_s: 10.0,
                    failure_rate: f,
                };
                let (success_rate, load) =
                    mean_of(seed, replications, &model, Policy::BayesRetry(state));
                rows.push(A2BayesRow {
                    failure_rate: f,
                    strategy: "bayesretry",
                    state,
                    clients,
                    success_rate,
                    load,
                });
            }
        }
    }
    rows
}
