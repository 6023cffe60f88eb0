//! The shared environment (§2): the stream of calls, the outcome of every
//! attempt, the server token bucket of S3, and the truths the oracles read.

use alloc::sync::Arc;
use core::cell::RefCell;

use crate::luck::{Luck, Purpose};
use crate::scenario::{Profile, SECOND, Scenario};

/// Per-call deadline: no attempt may start after it.
pub const DEADLINE_US: u64 = 10 * SECOND;
/// What a timed-out attempt costs in time.
pub const TIMEOUT_US: u64 = SECOND;
/// S3's token bucket: tokens per second.
const BUCKET_RATE: f64 = 1.0;
/// S3's token bucket: burst.
const BUCKET_BURST: f64 = 5.0;
/// Attempts per call whose draws [`Draws`] works out up front: the cap of the
/// specification's longer pass. A later attempt's are worked out when it is made,
/// by the same function.
const TABULATED_ATTEMPTS: usize = 6;

/// One call of the stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallSpec {
    /// Index in the stream, the key of its luck.
    pub id: u64,
    /// Arrival time, microseconds.
    pub arrival_us: u64,
    /// Index of its endpoint in [`Scenario::endpoints`].
    pub endpoint: u8,
    /// Its shard (S8; 0 elsewhere).
    pub shard: u8,
    /// Whether it fails every attempt (drawn with d at arrival).
    pub doomed: bool,
}

/// How a failed attempt failed: the error classes of §2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// A 5xx with its status (500, or 503 in an outage).
    Transient5xx(u16),
    /// The attempt timed out (it took 1 s).
    Timeout,
    /// The connection was refused.
    ConnRefused,
    /// 429, with the server's Retry-After in whole seconds when it sent one.
    RateLimited429 {
        /// Retry-After, seconds.
        retry_after_s: Option<u64>,
    },
}

/// What one attempt did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptOutcome {
    /// `None` on success.
    pub failure: Option<Failure>,
    /// How long the attempt took, microseconds.
    pub latency_us: u64,
}

/// What a (scenario, seed) draws before any policy acts: the stream of calls,
/// and the draws of each call's first attempts (their latencies and the
/// uniforms of their outcomes). Every policy of the pair meets the same draws
/// (paired luck), so the suite works them out once per pair and shares them
/// among the pair's runs instead of once per run: a latency is a logarithm, a
/// cosine and an exponential, a uniform three rounds of hashing, and each of
/// S0's 53 runs makes some 7 000 attempts.
#[derive(Debug)]
pub struct Draws {
    scenario: Scenario,
    seed: u64,
    luck: Luck,
    calls: Vec<CallSpec>,
    /// `attempts[call · TABULATED_ATTEMPTS + attempt − 1]`.
    attempts: Vec<AttemptDraws>,
}

/// The draws of one attempt of one call: a pure function of the pair's luck,
/// the call and the attempt ([`AttemptDraws::of`]).
#[derive(Clone, Copy, Debug, PartialEq)]
struct AttemptDraws {
    /// Its latency, microseconds.
    latency_us: u64,
    /// The uniform its success is decided by ([`Purpose::Success`]).
    success: f64,
    /// The uniform its error class is decided by ([`Purpose::Class`]).
    class: f64,
}

impl AttemptDraws {
    /// The draws of attempt `attempt` of call `id`.
    fn of(luck: &Luck, id: u64, attempt: u32) -> AttemptDraws {
        AttemptDraws {
            latency_us: latency_of(luck, id, attempt),
            success: luck.unit(id, attempt, Purpose::Success),
            class: luck.unit(id, attempt, Purpose::Class),
        }
    }
}

/// The environment of one (scenario, seed) for one run: the pair's
/// [`Draws`], and the state the run's attempts change (S3's token bucket).
#[derive(Debug)]
pub struct Environment {
    draws: Arc<Draws>,
    buckets: RefCell<Vec<Bucket>>,
}

/// A server token bucket.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at_us: u64,
}

impl Bucket {
    fn refill(&mut self, now_us: u64) {
        if now_us > self.at_us {
            let dt = (now_us - self.at_us) as f64 / 1e6;
            self.tokens = (self.tokens + dt * BUCKET_RATE).min(BUCKET_BURST);
            self.at_us = now_us;
        }
    }
}

impl Draws {
    /// The draws of `scenario` under `seed`.
    pub fn new(scenario: Scenario, seed: u64) -> Draws {
        let luck = Luck::new(seed, scenario.code());
        let endpoints = scenario.endpoints().len().max(1);
        let rate = scenario.rate();
        let mut t = 0.0_f64;
        let mut calls = Vec::new();
        for id in 0..scenario.calls() {
            let u = luck.unit(id, 0, Purpose::Arrival);
            t += -(1.0 - u).ln() / rate;
            let endpoint = (id % endpoints as u64) as u8;
            let profile = scenario
                .endpoints()
                .get(usize::from(endpoint))
                .map_or(Profile::Healthy, |e| e.1);
            let arrival_us = (t * 1e6) as u64;
            let shard = if matches!(profile, Profile::Sharded) {
                let s = (luck.unit(id, 0, Purpose::Shard) * 3.0) as u8;
                s.min(2)
            } else {
                0
            };
            let doomed =
                luck.unit(id, 0, Purpose::Doom) < profile.doom(arrival_us, scenario.horizon_us());
            calls.push(CallSpec {
                id,
                arrival_us,
                endpoint,
                shard,
                doomed,
            });
        }
        let mut attempts = Vec::with_capacity(calls.len().saturating_mul(TABULATED_ATTEMPTS));
        for call in &calls {
            for attempt in 1..=TABULATED_ATTEMPTS as u32 {
                attempts.push(AttemptDraws::of(&luck, call.id, attempt));
            }
        }
        Draws {
            scenario,
            seed,
            luck,
            calls,
            attempts,
        }
    }

    /// The scenario.
    pub const fn scenario(&self) -> Scenario {
        self.scenario
    }

    /// The seed.
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The draws of attempt `attempt` (1-based) of `call`.
    #[inline]
    fn attempt(&self, call: &CallSpec, attempt: u32) -> AttemptDraws {
        let at = usize::try_from(call.id)
            .ok()
            .and_then(|id| id.checked_mul(TABULATED_ATTEMPTS))
            .zip(usize::try_from(attempt).ok())
            .filter(|&(_, a)| (1..=TABULATED_ATTEMPTS).contains(&a))
            .and_then(|(base, a)| self.attempts.get(base + a - 1));
        match at {
            Some(&draws) => draws,
            None => AttemptDraws::of(&self.luck, call.id, attempt),
        }
    }
}

impl Environment {
    /// The environment of `scenario` under `seed`: its calls drawn up front.
    pub fn new(scenario: Scenario, seed: u64) -> Environment {
        Environment::of(Arc::new(Draws::new(scenario, seed)))
    }

    /// A run's environment on draws shared with the pair's other runs.
    pub fn of(draws: Arc<Draws>) -> Environment {
        let endpoints = draws.scenario.endpoints().len().max(1);
        Environment {
            draws,
            buckets: RefCell::new(vec![
                Bucket {
                    tokens: BUCKET_BURST,
                    at_us: 0
                };
                endpoints
            ]),
        }
    }

    /// The scenario.
    pub fn scenario(&self) -> Scenario {
        self.draws.scenario
    }

    /// The calls, in arrival order.
    pub fn calls(&self) -> &[CallSpec] {
        &self.draws.calls
    }

    /// The profile of an endpoint.
    pub fn profile(&self, endpoint: u8) -> Profile {
        self.draws
            .scenario
            .endpoints()
            .get(usize::from(endpoint))
            .map_or(Profile::Healthy, |e| e.1)
    }

    /// The name of an endpoint.
    pub fn endpoint_name(&self, endpoint: u8) -> &'static str {
        self.draws
            .scenario
            .endpoints()
            .get(usize::from(endpoint))
            .map_or("?", |e| e.0)
    }

    /// Makes attempt `attempt` (1-based) of `call`, starting at `now_us`.
    pub fn attempt(&self, call: &CallSpec, attempt: u32, now_us: u64) -> AttemptOutcome {
        let profile = self.profile(call.endpoint);
        let draws = self.draws.attempt(call, attempt);
        let failure = match profile {
            Profile::RateLimited { header } => {
                let mut buckets = self.buckets.borrow_mut();
                match buckets.get_mut(usize::from(call.endpoint)) {
                    Some(bucket) => {
                        bucket.refill(now_us);
                        if bucket.tokens >= 1.0 {
                            bucket.tokens -= 1.0;
                            (draws.success >= profile.success(now_us, 0))
                                .then_some(Failure::Transient5xx(500))
                        } else {
                            let wait = (1.0 - bucket.tokens) / BUCKET_RATE;
                            let secs = (wait.ceil() as u64).max(1);
                            Some(Failure::RateLimited429 {
                                retry_after_s: header.then_some(secs),
                            })
                        }
                    }
                    None => Some(Failure::Transient5xx(500)),
                }
            }
            _ => self.doom_mixture(call, &draws, now_us, profile),
        };
        let latency_us = match failure {
            Some(Failure::Timeout) => TIMEOUT_US,
            _ => draws.latency_us,
        };
        AttemptOutcome {
            failure,
            latency_us,
        }
    }

    /// The doomed-mixture outcome: a pure function of the call, the attempt's
    /// draws and the time.
    fn doom_mixture(
        &self,
        call: &CallSpec,
        draws: &AttemptDraws,
        now_us: u64,
        profile: Profile,
    ) -> Option<Failure> {
        if profile.in_outage(now_us, call.shard) {
            return Some(Failure::Transient5xx(503));
        }
        let horizon = self.draws.scenario.horizon_us();
        if !call.doomed && draws.success < profile.success(now_us, horizon) {
            return None;
        }
        if matches!(profile, Profile::HardDown) {
            return Some(Failure::ConnRefused);
        }
        if draws.class < profile.share_5xx() {
            Some(Failure::Transient5xx(500))
        } else {
            Some(Failure::Timeout)
        }
    }

    /// The true probability that the next attempt of `call`, made at `t_us`,
    /// succeeds, given `fail_weight` = the product of `1 − s(t_j)` over the
    /// informative failures so far (those outside any outage), and the class of
    /// the last failure. What the oracles know: d(t), s(t), the outage windows
    /// and the class-to-q map, not the draws.
    pub fn true_q(
        &self,
        call: &CallSpec,
        fail_weight: f64,
        last: Option<Failure>,
        t_us: u64,
    ) -> f64 {
        let profile = self.profile(call.endpoint);
        let horizon = self.draws.scenario.horizon_us();
        match profile {
            Profile::RateLimited { .. } => {
                // a retry competes for the next token with the first tries that
                // arrive meanwhile: it wins about rate / (rate + arrivals) of them
                let per_endpoint = self.draws.scenario.rate()
                    / self.draws.scenario.endpoints().len().max(1) as f64;
                0.95 * BUCKET_RATE / (BUCKET_RATE + per_endpoint)
            }
            Profile::HardDown => 0.0,
            _ => {
                if profile.in_outage(t_us, call.shard) {
                    return 0.0;
                }
                let _ = last;
                let d = profile.doom(call.arrival_us, horizon);
                let s = profile.success(t_us, horizon);
                let alive = (1.0 - d) * fail_weight;
                let denom = d + alive;
                if denom > 0.0 { alive * s / denom } else { 0.0 }
            }
        }
    }

    /// `1 − s(t)` if a failure at `t_us` of `call` is informative (outside an
    /// outage), else 1: the factor a failure multiplies the oracle's weight by.
    pub fn failure_factor(&self, call: &CallSpec, t_us: u64) -> f64 {
        let profile = self.profile(call.endpoint);
        match profile {
            Profile::RateLimited { .. } | Profile::HardDown => 1.0,
            _ if profile.in_outage(t_us, call.shard) => 1.0,
            _ => 1.0 - profile.success(t_us, self.draws.scenario.horizon_us()),
        }
    }

    /// Whether attempt `attempt` of `call`, made at `t_us`, would succeed: what
    /// the clairvoyant bound reads. In S3 the bucket is projected to `t_us`
    /// without the other calls' draws.
    pub fn would_succeed(&self, call: &CallSpec, attempt: u32, t_us: u64) -> bool {
        let profile = self.profile(call.endpoint);
        match profile {
            Profile::RateLimited { .. } => {
                let mut bucket = self
                    .buckets
                    .borrow()
                    .get(usize::from(call.endpoint))
                    .copied()
                    .unwrap_or(Bucket {
                        tokens: 0.0,
                        at_us: 0,
                    });
                bucket.refill(t_us);
                bucket.tokens >= 1.0
                    && self.draws.attempt(call, attempt).success < profile.success(t_us, 0)
            }
            _ => {
                let draws = self.draws.attempt(call, attempt);
                self.doom_mixture(call, &draws, t_us, profile).is_none()
            }
        }
    }
}

/// Log-normal latency, median 20 ms, sigma 0.5 (Box–Muller on two keyed
/// uniforms), of attempt `attempt` of call `id`, microseconds.
fn latency_of(luck: &Luck, id: u64, attempt: u32) -> u64 {
    let u1 = 1.0 - luck.unit(id, attempt, Purpose::Latency);
    let u2 = luck.unit(id, attempt, Purpose::LatencyPair);
    let z = (-2.0 * u1.ln()).sqrt() * (core::f64::consts::TAU * u2).cos();
    let secs = 0.020 * (0.5 * z).exp();
    let us = (secs * 1e6).round() as u64;
    us.max(1)
}

#[cfg(test)]
mod tests {
    use super::{Draws, TABULATED_ATTEMPTS, latency_of};
    use crate::luck::Purpose;
    use crate::scenario::Scenario;

    #[test]
    fn tabulated_draws_are_the_ones_worked_out_when_the_attempt_is_made() {
        let draws = Draws::new(Scenario::S0, 3);
        let luck = &draws.luck;
        let last = TABULATED_ATTEMPTS as u32 + 2;
        for call in draws.calls.iter().step_by(97) {
            for attempt in 0..=last {
                let drawn = draws.attempt(call, attempt);
                let what = format!("call {} attempt {attempt}", call.id);
                assert_eq!(
                    drawn.latency_us,
                    latency_of(luck, call.id, attempt),
                    "{what}"
                );
                let success = luck.unit(call.id, attempt, Purpose::Success);
                assert_eq!(drawn.success.to_bits(), success.to_bits(), "{what}");
                let class = luck.unit(call.id, attempt, Purpose::Class);
                assert_eq!(drawn.class.to_bits(), class.to_bits(), "{what}");
            }
            // each attempt has its own draws
            assert_ne!(draws.attempt(call, 1), draws.attempt(call, 2));
        }
    }
}
