//! The baseline retry policies of §4, each a [`Rule`] implemented exactly as
//! specified; every one but B1 and B1b waits with B2's full jitter.

use alloc::collections::VecDeque;

use crate::environment::{CallSpec, Environment, Failure};
use crate::luck::PolicyStream;
use crate::rule::{CallState, Rule};
use crate::scenario::SECOND;

/// The baselines, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Baseline {
    /// No retries.
    B0,
    /// Fixed retries, immediate.
    B1,
    /// Naive library default: 10 retries, delay 1 s · 2^n, no jitter.
    B1b,
    /// Exponential backoff with full jitter, retry every retryable class.
    B2,
    /// B2 honouring Retry-After.
    B2r,
    /// AWS SDK standard retry quota.
    B3,
    /// gRPC retry throttling.
    B4,
    /// SRE adaptive throttling with a 10 % retry ratio.
    B5,
    /// Finagle / tower retry budget.
    B6,
    /// resilience4j-style breaker (defaults) with B2.
    B7,
    /// resilience4j-style breaker, scaled, with B2.
    B7s,
    /// Brooker's retry token bucket.
    B9,
}

impl Baseline {
    /// Every baseline, in report order.
    pub const ALL: [Baseline; 12] = [
        Baseline::B0,
        Baseline::B1,
        Baseline::B1b,
        Baseline::B2,
        Baseline::B2r,
        Baseline::B3,
        Baseline::B4,
        Baseline::B5,
        Baseline::B6,
        Baseline::B7,
        Baseline::B7s,
        Baseline::B9,
    ];

    /// The id.
    pub const fn id(self) -> &'static str {
        match self {
            Baseline::B0 => "B0",
            Baseline::B1 => "B1",
            Baseline::B1b => "B1b",
            Baseline::B2 => "B2",
            Baseline::B2r => "B2r",
            Baseline::B3 => "B3",
            Baseline::B4 => "B4",
            Baseline::B5 => "B5",
            Baseline::B6 => "B6",
            Baseline::B7 => "B7",
            Baseline::B7s => "B7s",
            Baseline::B9 => "B9",
        }
    }

    /// Whether the baseline refuses calls with a breaker or a throttle (S8's
    /// collateral failures).
    pub const fn refuses_calls(self) -> bool {
        matches!(self, Baseline::B5 | Baseline::B7 | Baseline::B7s)
    }

    /// The rule, for a run with `endpoints` endpoints and this attempt cap.
    pub fn rule(self, seed: u64, endpoints: usize, max_attempts: u32) -> BaselineRule {
        let kind = match self {
            Baseline::B0 => Kind::None,
            Baseline::B1 => Kind::Immediate,
            Baseline::B1b => Kind::Naive,
            Baseline::B2 => Kind::Jitter,
            Baseline::B2r => Kind::JitterRetryAfter,
            Baseline::B3 => Kind::Aws {
                bucket: AWS_CAPACITY,
            },
            Baseline::B4 => Kind::Grpc {
                tokens: vec![GRPC_MAX_TOKENS; endpoints],
            },
            Baseline::B5 => Kind::Sre {
                windows: vec![SreWindow::default(); endpoints],
            },
            Baseline::B6 => Kind::Finagle {
                deposits: VecDeque::new(),
                withdrawals: VecDeque::new(),
            },
            Baseline::B7 => Kind::Breaker {
                config: BreakerConfig::DEFAULT,
                breakers: vec![CountBreaker::default(); endpoints],
            },
            Baseline::B7s => Kind::Breaker {
                config: BreakerConfig::SCALED,
                breakers: vec![CountBreaker::default(); endpoints],
            },
            Baseline::B9 => Kind::TokenBucket { tokens: 5.0 },
        };
        let max_attempts = match self {
            Baseline::B0 => 1,
            Baseline::B1b => 11,
            _ => max_attempts,
        };
        BaselineRule {
            id: self,
            max_attempts,
            stream: PolicyStream::new(seed, self.id()),
            kind,
        }
    }
}

/// B3: the quota's capacity.
const AWS_CAPACITY: f64 = 500.0;
/// B3: cost of a retry.
const AWS_RETRY_COST: f64 = 5.0;
/// B3: cost of a retry after a timeout.
const AWS_TIMEOUT_COST: f64 = 10.0;
/// B4: max tokens.
const GRPC_MAX_TOKENS: f64 = 10.0;
/// B4: token ratio.
const GRPC_TOKEN_RATIO: f64 = 0.1;
/// B5: the window.
const SRE_WINDOW_US: u64 = 120 * SECOND;
/// B5: K.
const SRE_K: f64 = 2.0;
/// B5: the retry ratio.
const SRE_RETRY_RATIO: f64 = 0.1;
/// B6: ttl.
const FINAGLE_TTL_US: u64 = 10 * SECOND;
/// B6: minimum retries per second.
const FINAGLE_MIN_PER_SEC: f64 = 10.0;
/// B6: percent of requests that may be retried.
const FINAGLE_PERCENT: f64 = 0.2;

/// A baseline, ready to run.
#[derive(Debug)]
pub struct BaselineRule {
    id: Baseline,
    max_attempts: u32,
    stream: PolicyStream,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    None,
    Immediate,
    Naive,
    Jitter,
    JitterRetryAfter,
    Aws {
        bucket: f64,
    },
    Grpc {
        tokens: Vec<f64>,
    },
    Sre {
        windows: Vec<SreWindow>,
    },
    Finagle {
        deposits: VecDeque<u64>,
        withdrawals: VecDeque<u64>,
    },
    Breaker {
        config: BreakerConfig,
        breakers: Vec<CountBreaker>,
    },
    TokenBucket {
        tokens: f64,
    },
}

/// B5's per-endpoint sliding window: requests (time, is a retry) and accepts.
#[derive(Clone, Debug, Default)]
struct SreWindow {
    requests: VecDeque<(u64, bool)>,
    retries: usize,
    accepts: VecDeque<u64>,
}

impl SreWindow {
    fn expire(&mut self, now_us: u64) {
        let cutoff = now_us.saturating_sub(SRE_WINDOW_US);
        while let Some(&(t, retry)) = self.requests.front() {
            if t >= cutoff {
                break;
            }
            self.requests.pop_front();
            if retry {
                self.retries = self.retries.saturating_sub(1);
            }
        }
        while let Some(&t) = self.accepts.front() {
            if t >= cutoff {
                break;
            }
            self.accepts.pop_front();
        }
    }
}

/// B7's settings.
#[derive(Clone, Copy, Debug)]
struct BreakerConfig {
    window: usize,
    min_calls: usize,
    open_us: u64,
    half_open: u32,
}

impl BreakerConfig {
    const DEFAULT: BreakerConfig = BreakerConfig {
        window: 100,
        min_calls: 100,
        open_us: 60 * SECOND,
        half_open: 10,
    };
    const SCALED: BreakerConfig = BreakerConfig {
        window: 20,
        min_calls: 10,
        open_us: 10 * SECOND,
        half_open: 3,
    };
}

/// A count-window breaker: closed (the last `window` outcomes), open until a
/// time, half-open with a number of trial calls.
#[derive(Clone, Debug, Default)]
struct CountBreaker {
    outcomes: VecDeque<bool>,
    failures: usize,
    open_until: Option<u64>,
    half_open: Option<HalfOpen>,
}

#[derive(Clone, Copy, Debug, Default)]
struct HalfOpen {
    permitted: u32,
    done: u32,
    failed: u32,
}

impl CountBreaker {
    fn admit(&mut self, config: BreakerConfig, now_us: u64) -> bool {
        if let Some(until) = self.open_until {
            if now_us < until {
                return false;
            }
            self.open_until = None;
            self.half_open = Some(HalfOpen::default());
        }
        if let Some(h) = self.half_open.as_mut() {
            if h.permitted >= config.half_open {
                return false;
            }
            h.permitted += 1;
        }
        true
    }

    fn record(&mut self, config: BreakerConfig, ok: bool, now_us: u64) {
        if self.open_until.is_some() {
            return;
        }
        if let Some(h) = self.half_open.as_mut() {
            h.done += 1;
            if !ok {
                h.failed += 1;
            }
            if h.done >= config.half_open {
                let open = 2 * h.failed >= h.done;
                self.half_open = None;
                self.outcomes.clear();
                self.failures = 0;
                if open {
                    self.open_until = Some(now_us.saturating_add(config.open_us));
                }
            }
            return;
        }
        self.outcomes.push_back(ok);
        if !ok {
            self.failures += 1;
        }
        if self.outcomes.len() > config.window {
            if let Some(false) = self.outcomes.pop_front() {
                self.failures = self.failures.saturating_sub(1);
            }
        }
        if self.outcomes.len() >= config.min_calls && 2 * self.failures >= self.outcomes.len() {
            self.open_until = Some(now_us.saturating_add(config.open_us));
            self.outcomes.clear();
            self.failures = 0;
        }
    }
}

/// B2's full jitter before retry `n` (1-based): U(0, min(0.1 s · 2^(n−1), 1 s)).
pub(crate) fn full_jitter_us(stream: &mut PolicyStream, retry: u32) -> u64 {
    let exp = retry.saturating_sub(1).min(20);
    let cap = (100_000_u64 << exp).min(SECOND);
    let cap_f = cap as f64;
    (stream.unit() * cap_f) as u64
}

/// B2r's wait: max(jitter, min(Retry-After, jitter + 5 s)).
pub(crate) fn honour_retry_after(jitter_us: u64, failure: Failure) -> u64 {
    match failure {
        Failure::RateLimited429 {
            retry_after_s: Some(s),
        } => {
            let ra = s.saturating_mul(SECOND);
            jitter_us.max(ra.min(jitter_us.saturating_add(5 * SECOND)))
        }
        _ => jitter_us,
    }
}

impl Rule for BaselineRule {
    fn name(&self) -> &str {
        self.id.id()
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn admit(&mut self, call: &CallSpec, attempt: u32, now_us: u64) -> bool {
        let ep = usize::from(call.endpoint);
        match &mut self.kind {
            Kind::Sre { windows } => {
                let Some(w) = windows.get_mut(ep) else {
                    return true;
                };
                w.expire(now_us);
                let (req, acc) = (w.requests.len() as f64, w.accepts.len() as f64);
                let p = ((req - SRE_K * acc) / (req + 1.0)).max(0.0);
                w.requests.push_back((now_us, attempt > 1));
                if attempt > 1 {
                    w.retries += 1;
                }
                self.stream.unit() >= p
            }
            Kind::Breaker { config, breakers } => {
                let config = *config;
                breakers.get_mut(ep).is_none_or(|b| b.admit(config, now_us))
            }
            Kind::Finagle { deposits, .. } => {
                if attempt == 1 {
                    deposits.push_back(now_us);
                }
                true
            }
            Kind::TokenBucket { tokens } => {
                if attempt == 1 {
                    *tokens = (*tokens + 0.1).min(5.0);
                }
                true
            }
            _ => true,
        }
    }

    fn breaker_open(&self, endpoint: u8) -> bool {
        match &self.kind {
            Kind::Breaker { breakers, .. } => breakers
                .get(usize::from(endpoint))
                .is_some_and(|b| b.open_until.is_some()),
            _ => false,
        }
    }

    fn record(&mut self, state: &mut CallState, success: bool, now_us: u64) {
        let ep = usize::from(state.call.endpoint);
        match &mut self.kind {
            Kind::Aws { bucket } if success => {
                if state.attempts <= 1 {
                    *bucket = (*bucket + 1.0).min(AWS_CAPACITY);
                } else {
                    *bucket = (*bucket + state.scratch).min(AWS_CAPACITY);
                }
            }
            Kind::Grpc { tokens } => {
                if let Some(t) = tokens.get_mut(ep) {
                    *t = if success {
                        (*t + GRPC_TOKEN_RATIO).min(GRPC_MAX_TOKENS)
                    } else {
                        (*t - 1.0).max(0.0)
                    };
                }
            }
            Kind::Sre { windows } if success => {
                if let Some(w) = windows.get_mut(ep) {
                    w.accepts.push_back(now_us);
                }
            }
            Kind::Breaker { config, breakers } => {
                let config = *config;
                if let Some(b) = breakers.get_mut(ep) {
                    b.record(config, success, now_us);
                }
            }
            _ => {}
        }
    }

    fn retry(&mut self, _env: &Environment, state: &mut CallState) -> Option<u64> {
        let retry = state.attempts;
        let now_us = state.now_us;
        let ep = usize::from(state.call.endpoint);
        match &mut self.kind {
            Kind::None => None,
            Kind::Immediate => Some(0),
            Kind::Naive => {
                let exp = retry.saturating_sub(1).min(30);
                Some(SECOND.saturating_mul(1_u64 << exp))
            }
            Kind::Jitter => Some(full_jitter_us(&mut self.stream, retry)),
            Kind::JitterRetryAfter => {
                let j = full_jitter_us(&mut self.stream, retry);
                Some(honour_retry_after(j, state.last))
            }
            Kind::Aws { bucket } => {
                let cost = if matches!(state.last, Failure::Timeout) {
                    AWS_TIMEOUT_COST
                } else {
                    AWS_RETRY_COST
                };
                if *bucket < cost {
                    return None;
                }
                *bucket -= cost;
                state.scratch = cost;
                Some(full_jitter_us(&mut self.stream, retry))
            }
            Kind::Grpc { tokens } => {
                let t = tokens.get(ep).copied().unwrap_or(0.0);
                (t > GRPC_MAX_TOKENS / 2.0).then(|| full_jitter_us(&mut self.stream, retry))
            }
            Kind::Sre { windows } => {
                let w = windows.get_mut(ep)?;
                w.expire(now_us);
                let ratio = (w.retries + 1) as f64 / (w.requests.len() + 1) as f64;
                (ratio < SRE_RETRY_RATIO).then(|| full_jitter_us(&mut self.stream, retry))
            }
            Kind::Finagle {
                deposits,
                withdrawals,
            } => {
                let cutoff = now_us.saturating_sub(FINAGLE_TTL_US);
                while deposits.front().is_some_and(|&t| t < cutoff) {
                    deposits.pop_front();
                }
                while withdrawals.front().is_some_and(|&t| t < cutoff) {
                    withdrawals.pop_front();
                }
                let balance =
                    (FINAGLE_MIN_PER_SEC * 10.0 + FINAGLE_PERCENT * deposits.len() as f64).floor()
                        - withdrawals.len() as f64;
                if balance < 1.0 {
                    return None;
                }
                withdrawals.push_back(now_us);
                Some(full_jitter_us(&mut self.stream, retry))
            }
            Kind::Breaker { .. } => Some(full_jitter_us(&mut self.stream, retry)),
            Kind::TokenBucket { tokens } => {
                if *tokens > 1.0 {
                    *tokens -= 1.0;
                    Some(full_jitter_us(&mut self.stream, retry))
                } else {
                    None
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic, reason = "a test fails by panicking")]
mod tests {
    use super::*;

    #[test]
    fn the_count_breaker_opens_probes_and_closes() {
        let config = BreakerConfig::SCALED;
        let mut b = CountBreaker::default();
        // 9 failures: below the minimum of 10 calls, still closed
        for t in 0..9 {
            assert!(b.admit(config, t));
            b.record(config, false, t);
        }
        assert!(b.admit(config, 9));
        b.record(config, false, 9);
        // 10 of 10 failed: open for 10 s
        assert!(!b.admit(config, 10));
        assert!(!b.admit(config, 10 * SECOND + 8));
        // half-open: 3 trial calls, the 4th refused
        let t = 10 * SECOND + 10;
        assert!(b.admit(config, t) && b.admit(config, t) && b.admit(config, t));
        assert!(!b.admit(config, t));
        for _ in 0..3 {
            b.record(config, true, t);
        }
        assert!(b.admit(config, t + 1) && b.admit(config, t + 1));
    }

    #[test]
    fn the_aws_quota_charges_timeouts_double_and_refunds_on_success() {
        let mut rule = Baseline::B3.rule(1, 1, 4);
        let env = Environment::new(crate::Scenario::S1, 1);
        let call = env.calls()[0];
        let mut state = CallState {
            call,
            attempts: 1,
            last: Failure::Timeout,
            now_us: 0,
            fail_weight: 1.0,
            scratch: 0.0,
        };
        assert!(rule.retry(&env, &mut state).is_some());
        let Kind::Aws { bucket } = rule.kind else {
            panic!("not the quota");
        };
        assert_eq!(bucket, 490.0);
        state.attempts = 2;
        rule.record(&mut state, true, 1);
        let Kind::Aws { bucket } = rule.kind else {
            panic!("not the quota");
        };
        assert_eq!(bucket, 500.0);
    }

    #[test]
    fn full_jitter_stays_under_its_cap() {
        let mut s = PolicyStream::new(1, "B2");
        for n in 1..10 {
            let cap = (100_000_u64 << (n - 1)).min(SECOND);
            for _ in 0..100 {
                assert!(full_jitter_us(&mut s, n) <= cap);
            }
        }
        let ra = Failure::RateLimited429 {
            retry_after_s: Some(3),
        };
        assert_eq!(honour_retry_after(100, ra), 3 * SECOND);
        let far = Failure::RateLimited429 {
            retry_after_s: Some(60),
        };
        assert_eq!(honour_retry_after(100, far), 100 + 5 * SECOND);
    }
}
