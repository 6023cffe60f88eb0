//! The retry policies of the storm: the baselines of the specification §4 that
//! apply to a server that only ever times out (no Retry-After, so no B2r), and
//! BayesRetry.
//!
//! Each simulated client (a process) holds its own instance of its policy's
//! state: quota, tokens, breaker, budget, beliefs.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use bayesretry_budget::{RatioConfig, RatioLedger};
use bayesretry_store::ErrorClass;
use serde::Serialize;

use crate::anchors::bayes::{BayesConfig, BayesRetry, CallTrack};
use crate::anchors::rng::{self, SplitMix64};

/// Which policy a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyId {
    /// B0: no retries.
    B0,
    /// B1: fixed retries, immediate.
    B1,
    /// B1b: 10 retries, delay 1 s · 2^n, no jitter.
    B1b,
    /// B2: exponential with full jitter, `U(0, min(0.1 s · 2^(n-1), 1 s))`.
    B2,
    /// B3: the AWS SDK's standard retry quota, with B2's timing.
    B3,
    /// B4: gRPC retry throttling, with B2's timing.
    B4,
    /// B5: SRE adaptive throttling with a 10 % retry ratio, with B2's timing.
    B5,
    /// B6: the Finagle / tower retry budget, with B2's timing.
    B6,
    /// B7: resilience4j-style breaker with its default settings, and B2.
    B7,
    /// B7 with the scaled settings (window 20, min 10, open 10 s, 3 half-open).
    B7s,
    /// B9: Brooker's retry token bucket, with B2's timing.
    B9,
    /// BayesRetry's default configuration (`RetryPolicy::new()`'s settings).
    BayesRetry,
    /// BayesRetry's previous default: the same, but with the breaker crate's own
    /// settings (opens below 0.05, evidence kept forever) in place of the
    /// policy's default breaker (see `previous_config`).
    BayesRetryPrevious,
}

impl PolicyId {
    /// Every policy the storm runs, baselines first.
    pub const ALL: [PolicyId; 13] = [
        PolicyId::B0,
        PolicyId::B1,
        PolicyId::B1b,
        PolicyId::B2,
        PolicyId::B3,
        PolicyId::B4,
        PolicyId::B5,
        PolicyId::B6,
        PolicyId::B7,
        PolicyId::B7s,
        PolicyId::B9,
        PolicyId::BayesRetry,
        PolicyId::BayesRetryPrevious,
    ];

    /// Whether this is one of the baselines of §4.
    pub const fn is_baseline(self) -> bool {
        !matches!(self, PolicyId::BayesRetry | PolicyId::BayesRetryPrevious)
    }

    /// Attempts in all that the policy allows when the scenario sets no cap.
    const fn default_max_attempts(self) -> u32 {
        match self {
            PolicyId::B1b => 11,
            _ => 4,
        }
    }

    const fn id(self) -> u64 {
        self as u64
    }
}

/// BayesRetry's previous default, kept to show what the policy's default
/// breaker changed: the breaker crate's own `Config::new()`, which opens below
/// 0.05 and keeps every outcome forever.
///
/// After minutes of healthy traffic thousands of successes stand behind that
/// breaker's posterior, and an overload cannot move the upper bound of the
/// success rate below 5 % for a long time: it never opens, first tries keep
/// arriving at a server whose queue is already longer than the timeout, and the
/// backlog of abandoned work outlives the drop. The policy's default breaker
/// (evidence half-life 10 s, opening below the break-even 0.1) opens within
/// seconds of timeouts taking over, sheds the load for its cooldown, and the
/// queue drains.
pub(crate) fn previous_config() -> BayesConfig {
    BayesConfig {
        breaker: Some(bayesretry_breaker::Config::new()),
        ..BayesConfig::policy_default()
    }
}

/// The resilience4j-style count-window breaker.
#[derive(Clone, Debug)]
struct CountBreaker {
    window: usize,
    min_calls: usize,
    open_s: f64,
    half_open_calls: u32,
    outcomes: VecDeque<bool>,
    failures: usize,
    state: BreakerState,
}

#[derive(Clone, Copy, Debug)]
enum BreakerState {
    Closed,
    Open {
        until: f64,
    },
    HalfOpen {
        admitted: u32,
        done: u32,
        failed: u32,
    },
}

impl CountBreaker {
    fn new(window: usize, min_calls: usize, open_s: f64, half_open_calls: u32) -> CountBreaker {
        CountBreaker {
            window,
            min_calls,
            open_s,
            half_open_calls,
            outcomes: VecDeque::new(),
            failures: 0,
            state: BreakerState::Closed,
        }
    }

    fn admit(&mut self, now: f64) -> bool {
        match self.state {
            BreakerState::Closed => true,
            BreakerState::Open { until } if now < until => false,
            BreakerState::Open { .. } => {
                self.state = BreakerState::HalfOpen {
                    admitted: 1,
                    done: 0,
                    failed: 0,
                };
                true
            }
            BreakerState::HalfOpen {
                admitted,
                done,
                failed,
            } => {
                if admitted < self.half_open_calls {
                    self.state = BreakerState::HalfOpen {
                        admitted: admitted + 1,
                        done,
                        failed,
                    };
                    true
                } else {
                    false
                }
            }
        }
    }

    fn record(&mut self, now: f64, success: bool) {
        match self.state {
            BreakerState::Closed => {
                self.outcomes.push_back(success);
                if !success {
                    self.failures += 1;
                }
                if self.outcomes.len() > self.window {
                    if let Some(false) = self.outcomes.pop_front() {
                        self.failures -= 1;
                    }
                }
                let n = self.outcomes.len();
                if n >= self.min_calls && 2 * self.failures >= n {
                    self.trip(now);
                }
            }
            // an attempt admitted before the breaker opened: its outcome is ignored
            BreakerState::Open { .. } => {}
            BreakerState::HalfOpen {
                admitted,
                done,
                failed,
            } => {
                let done = done + 1;
                let failed = failed + u32::from(!success);
                if done >= self.half_open_calls {
                    if 2 * failed >= done {
                        self.trip(now);
                    } else {
                        self.state = BreakerState::Closed;
                        self.outcomes.clear();
                        self.failures = 0;
                    }
                } else {
                    self.state = BreakerState::HalfOpen {
                        admitted,
                        done,
                        failed,
                    };
                }
            }
        }
    }

    fn trip(&mut self, now: f64) {
        self.state = BreakerState::Open {
            until: now + self.open_s,
        };
        self.outcomes.clear();
        self.failures = 0;
    }
}

/// Counts per second over a sliding window, for SRE adaptive throttling.
#[derive(Clone, Debug)]
struct Window {
    /// `(second, requests, accepts, retries)` per second, oldest first.
    buckets: VecDeque<(u64, u64, u64, u64)>,
    span_s: u64,
}

impl Window {
    fn new(span_s: u64) -> Window {
        Window {
            buckets: VecDeque::new(),
            span_s,
        }
    }

    fn bucket(&mut self, now: f64) -> &mut (u64, u64, u64, u64) {
        let second = now.max(0.0) as u64;
        while self
            .buckets
            .front()
            .is_some_and(|b| b.0 + self.span_s <= second)
        {
            self.buckets.pop_front();
        }
        if self.buckets.back().is_none_or(|b| b.0 != second) {
            self.buckets.push_back((second, 0, 0, 0));
        }
        // just pushed or present
        let last = self.buckets.len() - 1;
        &mut self.buckets[last]
    }

    fn totals(&mut self, now: f64) -> (u64, u64, u64) {
        let _ = self.bucket(now);
        self.buckets
            .iter()
            .fold((0, 0, 0), |acc, b| (acc.0 + b.1, acc.1 + b.2, acc.2 + b.3))
    }
}

/// One client's policy state.
#[derive(Debug)]
enum State {
    Stateless,
    /// B3: the quota's balance.
    Quota(f64),
    /// B4: gRPC's token count.
    Grpc(f64),
    /// B5: the throttling window.
    Sre(Window),
    /// B6: the ratio budget.
    Budget(RatioLedger),
    /// B7: the breaker.
    Breaker(CountBreaker),
    /// B9: the retry tokens.
    Bucket(f64),
    /// BayesRetry (boxed: its store is far larger than the other states).
    Bayes(alloc::boxed::Box<BayesRetry>),
}

/// The per-call part a policy keeps.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallPolicy {
    /// Failed attempts so far (the `n` of the backoffs).
    failures: u32,
    /// B3: the cost of the last retry, refunded on a later success.
    last_cost: f64,
    /// BayesRetry's loop state.
    track: CallTrack,
}

/// One client's policy.
#[derive(Debug)]
pub(crate) struct ClientPolicy {
    id: PolicyId,
    max_attempts: u32,
    state: State,
    rng: SplitMix64,
}

/// B2's delay before retry `n` (1-based), in seconds.
fn full_jitter(n: u32, u: f64) -> f64 {
    let top = (0.1 * 2f64.powi(n.saturating_sub(1).min(30) as i32)).min(1.0);
    top * u
}

impl ClientPolicy {
    /// Client `client`'s instance of `id`, with `max_attempts` attempts in all if
    /// the scenario fixes them.
    pub(crate) fn new(id: PolicyId, client: u32, seed: u64, max_attempts: Option<u32>) -> Self {
        let policy_seed = rng::key(&[seed, 0x57, id.id(), u64::from(client)]);
        let max_attempts = max_attempts.unwrap_or(id.default_max_attempts());
        let bayes = |config: BayesConfig| {
            State::Bayes(alloc::boxed::Box::new(BayesRetry::new(
                &BayesConfig {
                    max_attempts,
                    ..config
                },
                policy_seed,
            )))
        };
        let state = match id {
            PolicyId::B0 | PolicyId::B1 | PolicyId::B1b | PolicyId::B2 => State::Stateless,
            PolicyId::B3 => State::Quota(500.0),
            PolicyId::B4 => State::Grpc(10.0),
            PolicyId::B5 => State::Sre(Window::new(120)),
            PolicyId::B6 => match RatioConfig::new().build() {
                Ok(rules) => State::Budget(RatioLedger::new(rules)),
                Err(_) => State::Stateless,
            },
            PolicyId::B7 => State::Breaker(CountBreaker::new(100, 100, 60.0, 10)),
            PolicyId::B7s => State::Breaker(CountBreaker::new(20, 10, 10.0, 3)),
            PolicyId::B9 => State::Bucket(5.0),
            PolicyId::BayesRetry => bayes(BayesConfig::policy_default()),
            PolicyId::BayesRetryPrevious => bayes(previous_config()),
        };
        ClientPolicy {
            id,
            max_attempts,
            state,
            rng: SplitMix64::new(policy_seed),
        }
    }

    /// A call starts (its first try is about to be asked for).
    pub(crate) fn on_call_start(&mut self) {
        if let State::Bucket(tokens) = &mut self.state {
            *tokens = (*tokens + 0.1).min(5.0);
        }
    }

    /// May the call's next attempt go out at `now`?
    pub(crate) fn admit(&mut self, call: &mut CallPolicy, now: f64) -> bool {
        let now_ms = ms(now);
        let first = call.failures == 0;
        match &mut self.state {
            State::Sre(window) => {
                let (requests, accepts, _) = window.totals(now);
                let p =
                    ((requests as f64 - 2.0 * accepts as f64) / (requests as f64 + 1.0)).max(0.0);
                window.bucket(now).1 += 1;
                if !first {
                    window.bucket(now).3 += 1;
                }
                self.rng.next_unit() >= p
            }
            State::Budget(ledger) => {
                if first {
                    ledger.deposit(now_ms);
                }
                true
            }
            State::Breaker(breaker) => breaker.admit(now),
            State::Bayes(bayes) => bayes.admit(&mut call.track, now_ms),
            _ => true,
        }
    }

    /// The attempt succeeded at `now`.
    pub(crate) fn on_success(&mut self, call: &mut CallPolicy, now: f64) {
        match &mut self.state {
            State::Quota(balance) => {
                let refund = if call.failures == 0 {
                    1.0
                } else {
                    call.last_cost
                };
                *balance = (*balance + refund).min(500.0);
            }
            State::Grpc(tokens) => *tokens = (*tokens + 0.1).min(10.0),
            State::Sre(window) => window.bucket(now).2 += 1,
            State::Breaker(breaker) => breaker.record(now, true),
            State::Bayes(bayes) => bayes.succeeded(&mut call.track, ms(now)),
            _ => {}
        }
    }

    /// The attempt failed at `now` with `class`: the delay before the next
    /// attempt, in seconds, or `None` if the call stops.
    pub(crate) fn on_failure(
        &mut self,
        call: &mut CallPolicy,
        class: ErrorClass,
        now: f64,
    ) -> Option<f64> {
        call.failures = call.failures.saturating_add(1);
        let n = call.failures;
        let capped = n >= self.max_attempts;
        let jitter = full_jitter(n, self.rng.next_unit());
        let timeout = matches!(class, ErrorClass::Timeout);
        match &mut self.state {
            State::Bayes(bayes) => {
                return bayes
                    .failed(&mut call.track, class, ms(now))
                    .map(|d| d.as_secs_f64());
            }
            State::Breaker(breaker) => breaker.record(now, false),
            State::Grpc(tokens) => *tokens = (*tokens - 1.0).max(0.0),
            _ => {}
        }
        if capped {
            return None;
        }
        match (&mut self.state, self.id) {
            (_, PolicyId::B0) => None,
            (_, PolicyId::B1) => Some(0.0),
            (_, PolicyId::B1b) => Some(2f64.powi(n.min(30) as i32 - 1)),
            (State::Quota(balance), _) => {
                let cost = if timeout { 10.0 } else { 5.0 };
                (*balance >= cost).then(|| {
                    *balance -= cost;
                    call.last_cost = cost;
                    jitter
                })
            }
            (State::Grpc(tokens), _) => (*tokens > 5.0).then_some(jitter),
            (State::Sre(window), _) => {
                let (requests, _, retries) = window.totals(now);
                // the retry itself would count as one more of each
                ((retries + 1) as f64 <= 0.1 * (requests + 1) as f64).then_some(jitter)
            }
            (State::Budget(ledger), _) => ledger.try_spend(ms(now), 1).is_ok().then_some(jitter),
            (State::Bucket(tokens), _) => (*tokens > 1.0).then(|| {
                *tokens -= 1.0;
                jitter
            }),
            _ => Some(jitter),
        }
    }
}

/// Seconds to whole milliseconds.
fn ms(now: f64) -> u64 {
    (now.max(0.0) * 1_000.0) as u64
}

/// Per-call state for a new call.
pub(crate) fn new_call() -> CallPolicy {
    CallPolicy::default()
}

/// Instances of `id` for `clients` clients.
pub(crate) fn clients(
    id: PolicyId,
    clients: u32,
    seed: u64,
    cap: Option<u32>,
) -> Vec<ClientPolicy> {
    (0..clients)
        .map(|c| ClientPolicy::new(id, c, seed, cap))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_breaker_opens_at_half_failures_once_it_has_enough_calls_then_probes() {
        let mut breaker = CountBreaker::new(20, 10, 10.0, 3);
        for i in 0..9 {
            assert!(breaker.admit(0.0));
            breaker.record(0.0, i % 2 == 0);
        }
        // 9 calls: below the minimum, still closed
        assert!(breaker.admit(0.0));
        // the 10th call, a failure: 5 of 10 failed
        breaker.record(1.0, false);
        assert!(!breaker.admit(5.0));
        // after the open time: three probes, no fourth
        assert!(breaker.admit(11.0));
        assert!(breaker.admit(11.0));
        assert!(breaker.admit(11.0));
        assert!(!breaker.admit(11.0));
        breaker.record(11.5, true);
        breaker.record(11.5, true);
        breaker.record(11.5, false);
        // 1 failure in 3 probes closes it
        assert!(breaker.admit(12.0));
    }

    #[test]
    fn bucket_and_quota_stop_retries_when_spent() {
        let mut b9 = ClientPolicy::new(PolicyId::B9, 0, 1, None);
        let mut granted = 0;
        for _ in 0..10 {
            let mut call = new_call();
            if b9.on_failure(&mut call, ErrorClass::Timeout, 0.0).is_some() {
                granted += 1;
            }
        }
        // 5 tokens, a retry needs more than 1 and costs 1: 4 retries
        assert_eq!(granted, 4);
        let mut b3 = ClientPolicy::new(PolicyId::B3, 0, 1, None);
        let mut granted = 0;
        for _ in 0..100 {
            let mut call = new_call();
            if b3.on_failure(&mut call, ErrorClass::Timeout, 0.0).is_some() {
                granted += 1;
            }
        }
        // 500 / 10 per timeout retry
        assert_eq!(granted, 50);
    }
}
