//! [`World`]: the endpoint `simulate` calls — a benchmark scenario with its
//! clock stretched or shrunk to the number of calls asked for.
//!
//! The profiles are those of the benchmark specification (§3 of
//! `BENCHMARK-SPEC.md`, as `bayesretry-sim` implements them): the doomed mixture
//! (a call is doomed with probability `d` and fails every attempt; otherwise each
//! attempt succeeds with probability `s`), the error classes, the log-normal
//! latency, the one-second timeouts, the ten-second deadline, S3's token bucket.
//! Every draw comes from `bayesretry-sim`'s [`Luck`], keyed by the scenario's
//! code, so every policy meets the same luck.
//!
//! What differs is time. The simulator's scenarios are 6 000 calls over 600 s,
//! with S5's outage at [150 s, 300 s); `simulate` takes the number of calls on
//! its command line, so its scenarios are written in fractions of the run: the
//! outage is the second quarter of the run however long the run is, and S6's
//! degradation spans the whole run. Calls still arrive at 10 per second.

use core::cell::Cell;

use bayesretry_sim::{Failure, Luck, Purpose, SECOND, Scenario, TIMEOUT_US};
use clap::ValueEnum;

/// Calls per second.
pub(crate) const RATE: f64 = 10.0;

/// The outage, as fractions of the run: S5's [150 s, 300 s) of 600 s.
const OUTAGE: (f64, f64) = (0.25, 0.5);

/// S3's token bucket: tokens per second, and burst.
const BUCKET_RATE: f64 = 1.0;
const BUCKET_BURST: f64 = 5.0;

/// The scenarios `simulate` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Kind {
    /// S5: healthy (d = 0.01, s = 0.95), then every attempt fails with 503
    /// through the second quarter of the run, then healthy again.
    Outage,
    /// S2: transient-flaky (d = 0.05, s = 0.55), 60% 5xx and 40% timeouts.
    Flaky,
    /// S3: a server token bucket (1/s, burst 5): 429 with Retry-After.
    RateLimited,
    /// S4: every attempt refused, the whole run.
    HardDown,
    /// S6: d from 0.01 to 0.40 and s from 0.95 to 0.30 over the run.
    Degrading,
}

impl Kind {
    /// The benchmark scenario this one scales, whose code keys the luck.
    pub(crate) const fn scenario(self) -> Scenario {
        match self {
            Kind::Outage => Scenario::S5,
            Kind::Flaky => Scenario::S2,
            Kind::RateLimited => Scenario::S3,
            Kind::HardDown => Scenario::S4,
            Kind::Degrading => Scenario::S6,
        }
    }

    /// The name on the command line.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Kind::Outage => "outage",
            Kind::Flaky => "flaky",
            Kind::RateLimited => "rate-limited",
            Kind::HardDown => "hard-down",
            Kind::Degrading => "degrading",
        }
    }

    /// One line on what the endpoint does.
    pub(crate) const fn describe(self) -> &'static str {
        match self {
            Kind::Outage => {
                "healthy, then down (every attempt fails with 503) for the second \
                 quarter of the run, then recovered"
            }
            Kind::Flaky => {
                "55% of attempts succeed, the rest fail with 5xx or time out; \
                 5% of calls never do"
            }
            Kind::RateLimited => {
                "a server token bucket lets 1 call/s through (burst 5) while 10 arrive: \
                 429 with Retry-After"
            }
            Kind::HardDown => "every attempt is refused, the whole run",
            Kind::Degrading => "attempts succeed 95% of the time at the start, 30% at the end",
        }
    }
}

/// One call of the stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Call {
    /// Its index, the key of its luck.
    pub(crate) id: u64,
    /// When it arrives, in microseconds.
    pub(crate) arrival_us: u64,
    /// Whether it fails every attempt.
    pub(crate) doomed: bool,
}

/// What one attempt did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Outcome {
    /// `None` on success.
    pub(crate) failure: Option<Failure>,
    /// How long the attempt took, in microseconds.
    pub(crate) latency_us: u64,
}

/// The stream of calls of one (scenario, seed, length): the same for every
/// policy.
#[derive(Debug)]
pub(crate) struct World {
    kind: Kind,
    luck: Luck,
    horizon_us: u64,
    calls: Vec<Call>,
}

impl World {
    /// `n` calls of `kind` under `seed`, drawn up front.
    pub(crate) fn new(kind: Kind, seed: u64, n: u64) -> World {
        let luck = Luck::new(seed, kind.scenario().code());
        let horizon_us = (n as f64 / RATE * SECOND as f64) as u64;
        let mut world = World {
            kind,
            luck,
            horizon_us,
            calls: Vec::with_capacity(usize::try_from(n).unwrap_or(0)),
        };
        let mut t = 0.0_f64;
        // bounded by n
        for id in 0..n {
            let u = world.luck.unit(id, 0, Purpose::Arrival);
            t += -(1.0 - u).ln() / RATE;
            let arrival_us = (t * 1e6) as u64;
            let doomed = world.luck.unit(id, 0, Purpose::Doom) < world.doom(arrival_us);
            world.calls.push(Call {
                id,
                arrival_us,
                doomed,
            });
        }
        world
    }

    /// The scenario.
    pub(crate) const fn kind(&self) -> Kind {
        self.kind
    }

    /// The calls, in arrival order.
    pub(crate) fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The nominal length of the run (calls / rate), in microseconds: the clock
    /// the profiles are written on.
    pub(crate) const fn horizon_us(&self) -> u64 {
        self.horizon_us
    }

    /// The outage window, in microseconds, if the scenario has one.
    pub(crate) fn outage_us(&self) -> Option<(u64, u64)> {
        match self.kind {
            Kind::Outage => Some((self.at(OUTAGE.0), self.at(OUTAGE.1))),
            Kind::HardDown => Some((0, self.horizon_us)),
            _ => None,
        }
    }

    /// Whether an attempt's outcome depends only on its call, its number and its
    /// time — not on other calls' attempts, as S3's shared token bucket makes it.
    pub(crate) const fn calls_are_independent(&self) -> bool {
        !matches!(self.kind, Kind::RateLimited)
    }

    /// A server for one policy's run: the state the attempts change (S3's
    /// bucket) starts afresh for each policy.
    pub(crate) fn server(&self) -> Server<'_> {
        Server {
            world: self,
            bucket: Cell::new((BUCKET_BURST, 0)),
        }
    }

    /// The true probability that the retry after a call's first failure, made at
    /// `t_us`, succeeds — what a perfectly informed policy would believe. The
    /// doomed mixture makes it `(1 − d)(1 − s) s / (d + (1 − d)(1 − s))`; 0 in
    /// an outage; `None` for S3, whose answer depends on the other calls.
    pub(crate) fn true_retry_probability(&self, t_us: u64) -> Option<f64> {
        if matches!(self.kind, Kind::RateLimited) {
            return None;
        }
        if self.in_outage(t_us) {
            return Some(0.0);
        }
        let d = self.doom(t_us);
        let s = self.success(t_us);
        let alive = (1.0 - d) * (1.0 - s);
        let denom = d + alive;
        Some(if denom > 0.0 { alive * s / denom } else { 0.0 })
    }

    /// `fraction` of the run, in microseconds.
    fn at(&self, fraction: f64) -> u64 {
        (self.horizon_us as f64 * fraction) as u64
    }

    /// How far into the run `t_us` is, in [0, 1].
    fn fraction(&self, t_us: u64) -> f64 {
        if self.horizon_us == 0 {
            return 0.0;
        }
        (t_us as f64 / self.horizon_us as f64).clamp(0.0, 1.0)
    }

    fn in_outage(&self, t_us: u64) -> bool {
        match self.kind {
            Kind::Outage => (self.at(OUTAGE.0)..self.at(OUTAGE.1)).contains(&t_us),
            _ => false,
        }
    }

    /// d(t): the chance that a call arriving at `t_us` is doomed.
    fn doom(&self, t_us: u64) -> f64 {
        match self.kind {
            Kind::Outage => 0.01,
            Kind::Flaky => 0.05,
            Kind::RateLimited => 0.0,
            Kind::HardDown => 1.0,
            Kind::Degrading => 0.01 + 0.39 * self.fraction(t_us),
        }
    }

    /// s(t): the chance that an attempt of a call that is not doomed succeeds.
    fn success(&self, t_us: u64) -> f64 {
        match self.kind {
            Kind::Outage | Kind::RateLimited => 0.95,
            Kind::Flaky => 0.55,
            Kind::HardDown => 0.0,
            Kind::Degrading => 0.95 - 0.65 * self.fraction(t_us),
        }
    }

    /// The share of failures that are 5xx; the rest are timeouts.
    const fn share_5xx(&self) -> f64 {
        match self.kind {
            Kind::Flaky => 0.6,
            Kind::Degrading => 0.7,
            Kind::Outage | Kind::RateLimited | Kind::HardDown => 1.0,
        }
    }

    /// Log-normal latency, median 20 ms, sigma 0.5 (Box–Muller on two keyed
    /// uniforms), as the simulator draws it.
    fn latency_us(&self, call: &Call, attempt: u32) -> u64 {
        let u1 = 1.0 - self.luck.unit(call.id, attempt, Purpose::Latency);
        let u2 = self.luck.unit(call.id, attempt, Purpose::LatencyPair);
        let z = (-2.0 * u1.ln()).sqrt() * (core::f64::consts::TAU * u2).cos();
        let secs = 0.020 * (0.5 * z).exp();
        ((secs * 1e6).round() as u64).max(1)
    }
}

/// The endpoint as one policy's run sees it.
#[derive(Debug)]
pub(crate) struct Server<'w> {
    world: &'w World,
    /// S3's bucket: tokens, and when it was last filled (microseconds).
    bucket: Cell<(f64, u64)>,
}

impl Server<'_> {
    /// Makes attempt `attempt` (1-based) of `call`, starting at `now_us`.
    pub(crate) fn attempt(&self, call: &Call, attempt: u32, now_us: u64) -> Outcome {
        let world = self.world;
        let failure = match world.kind {
            Kind::RateLimited => self.rate_limited(call, attempt, now_us),
            _ if world.in_outage(now_us) => Some(Failure::Transient5xx(503)),
            _ => {
                let u = world.luck.unit(call.id, attempt, Purpose::Success);
                if !call.doomed && u < world.success(now_us) {
                    None
                } else if matches!(world.kind, Kind::HardDown) {
                    Some(Failure::ConnRefused)
                } else if world.luck.unit(call.id, attempt, Purpose::Class) < world.share_5xx() {
                    Some(Failure::Transient5xx(500))
                } else {
                    Some(Failure::Timeout)
                }
            }
        };
        let latency_us = match failure {
            Some(Failure::Timeout) => TIMEOUT_US,
            _ => world.latency_us(call, attempt),
        };
        Outcome {
            failure,
            latency_us,
        }
    }

    /// S3: an attempt that finds a token succeeds with probability 0.95; one
    /// that finds none gets a 429 saying when the next token comes.
    fn rate_limited(&self, call: &Call, attempt: u32, now_us: u64) -> Option<Failure> {
        let (mut tokens, at_us) = self.bucket.get();
        if now_us > at_us {
            let dt = (now_us - at_us) as f64 / 1e6;
            tokens = (tokens + dt * BUCKET_RATE).min(BUCKET_BURST);
        }
        let at_us = at_us.max(now_us);
        if tokens >= 1.0 {
            self.bucket.set((tokens - 1.0, at_us));
            let u = self.world.luck.unit(call.id, attempt, Purpose::Success);
            (u >= self.world.success(now_us)).then_some(Failure::Transient5xx(500))
        } else {
            self.bucket.set((tokens, at_us));
            let wait = (1.0 - tokens) / BUCKET_RATE;
            Some(Failure::RateLimited429 {
                retry_after_s: Some((wait.ceil() as u64).max(1)),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use bayesretry_sim::Failure;

    use super::{Kind, World};

    #[test]
    fn the_same_seed_draws_the_same_calls_and_another_seed_does_not() {
        let a = World::new(Kind::Outage, 1, 1_000);
        let b = World::new(Kind::Outage, 1, 1_000);
        let c = World::new(Kind::Outage, 2, 1_000);
        assert_eq!(a.calls(), b.calls());
        assert_ne!(a.calls(), c.calls());
    }

    #[test]
    fn the_outage_is_the_second_quarter_of_the_run_at_any_length() {
        for n in [400, 40_000] {
            let world = World::new(Kind::Outage, 3, n);
            let (from, to) = world.outage_us().unwrap();
            let horizon = world.horizon_us();
            assert_eq!((from, to), (horizon / 4, horizon / 2));
            let server = world.server();
            for call in world.calls() {
                let outcome = server.attempt(call, 1, call.arrival_us);
                if (from..to).contains(&call.arrival_us) {
                    assert_eq!(outcome.failure, Some(Failure::Transient5xx(503)));
                }
            }
        }
    }

    #[test]
    fn outside_the_outage_success_matches_the_doomed_mixture() {
        let world = World::new(Kind::Outage, 5, 40_000);
        let server = world.server();
        let (from, to) = world.outage_us().unwrap();
        let healthy: Vec<_> = world
            .calls()
            .iter()
            .filter(|c| !(from..to).contains(&c.arrival_us))
            .collect();
        let ok = healthy
            .iter()
            .filter(|c| server.attempt(c, 1, c.arrival_us).failure.is_none())
            .count();
        let rate = ok as f64 / healthy.len() as f64;
        // (1 - d) s = 0.99 * 0.95 = 0.9405; sd of the rate about 0.0014
        assert!((rate - 0.9405).abs() < 0.006, "{rate}");
    }

    #[test]
    fn a_rate_limited_server_grants_its_burst_then_asks_to_wait() {
        let world = World::new(Kind::RateLimited, 1, 100);
        let server = world.server();
        let call = world.calls()[0];
        let refused: Vec<bool> = (1..=7)
            .map(|attempt| {
                matches!(
                    server.attempt(&call, attempt, 0).failure,
                    Some(Failure::RateLimited429 {
                        retry_after_s: Some(1)
                    })
                )
            })
            .collect();
        assert_eq!(refused, [false, false, false, false, false, true, true]);
    }

    #[test]
    fn the_true_retry_probability_falls_to_zero_in_the_outage() {
        let world = World::new(Kind::Outage, 1, 1_000);
        let (from, _) = world.outage_us().unwrap();
        let healthy = world.true_retry_probability(0).unwrap();
        // 0.99 * 0.05 * 0.95 / (0.01 + 0.99 * 0.05)
        assert!((healthy - 0.7904).abs() < 1e-3, "{healthy}");
        assert_eq!(world.true_retry_probability(from), Some(0.0));
        assert_eq!(
            World::new(Kind::RateLimited, 1, 10).true_retry_probability(0),
            None
        );
    }
}
