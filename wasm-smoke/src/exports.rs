//! The functions the wasm host calls. Numbers in, numbers out: the wasm ABI carries
//! nothing else. Each one makes a real computation with the core crates; none can
//! panic, whatever the host passes.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use core::time::Duration;

use bayesretry::backoff::{Config as BackoffConfig, Jitter};
use bayesretry::beta::{inc_beta, inc_beta_inv};
use bayesretry::breaker::{Admission, Config as BreakerConfig, State};
use bayesretry::budget::{FixedWindowConfig, FixedWindowLedger};
use bayesretry::cost::CostModel;
use bayesretry::decay::{Decay, HalfLife};
use bayesretry::decision::{Config as DecisionConfig, Reason, Situation};
use bayesretry::store::{Context, ErrorClass};

use crate::table::TableStore;

/// The endpoint every decision of the smoke test is about.
const ENDPOINT: &str = "provider";

static STORE: TableStore = TableStore::new();
static LAST_PROBABILITY: AtomicU64 = AtomicU64::new(0);
static LAST_REASON: AtomicU32 = AtomicU32::new(0);

/// The regularised incomplete beta function `I_x(a, b)`; NaN outside the domain.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_inc_beta(x: f64, a: f64, b: f64) -> f64 {
    inc_beta(a, b, x)
}

/// The inverse of [`smoke_inc_beta`] in `x`: the `p`-quantile of Beta(a, b).
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_quantile(a: f64, b: f64, p: f64) -> f64 {
    inc_beta_inv(a, b, p)
}

/// Forgets every observation.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_reset() {
    STORE.clear();
}

/// Records the outcome of the attempt after failure number `attempt` with HTTP
/// `status` (`success` non-zero for a success).
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_observe(status: u32, attempt: u32, success: i32) {
    let ctx = context(status, attempt);
    bayesretry::store::PosteriorStore::observe(&STORE, &ctx, success != 0, 0);
}

/// Whether to retry after failure number `attempt` with HTTP `status`, when a
/// success is worth `value` and an attempt costs `cost`: 1 retry, 0 stop, -1 a cost
/// model that is not valid. The probability and the reason are kept for
/// [`smoke_last_probability`] and [`smoke_last_reason`].
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_decide(status: u32, attempt: u32, value: f64, cost: f64) -> i32 {
    let Ok(model) = CostModel::new(value, cost) else {
        return -1;
    };
    let Ok(engine) = DecisionConfig::new(model).with_max_attempts(4).build() else {
        return -1;
    };
    let ctx = context(status, attempt);
    let decision = engine.decide(&STORE, &ctx, &Situation::new(), 0);
    LAST_PROBABILITY.store(decision.probability().to_bits(), Ordering::Relaxed);
    LAST_REASON.store(reason_code(decision.reason()), Ordering::Relaxed);
    i32::from(decision.retry())
}

/// The probability of success behind the last [`smoke_decide`].
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_last_probability() -> f64 {
    f64::from_bits(LAST_PROBABILITY.load(Ordering::Relaxed))
}

/// The reason of the last [`smoke_decide`]: 1 positive expected value, 2 negative
/// expected value, 3 attempt cap, 9 anything else.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_last_reason() -> u32 {
    LAST_REASON.load(Ordering::Relaxed)
}

/// How many consecutive failures, one every 100 ms, a default breaker takes to
/// open; `limit + 1` if it is still closed after `limit` of them.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_breaker_failures_to_open(limit: u32) -> u32 {
    let Ok(mut breaker) = BreakerConfig::new().build() else {
        return 0;
    };
    for n in 1..=limit.min(10_000) {
        let now_ms = u64::from(n) * 100;
        if !breaker.check(now_ms).is_allowed() {
            return n;
        }
        breaker.record(now_ms, false);
        if matches!(breaker.state(), State::Open { .. }) {
            return n;
        }
    }
    limit.saturating_add(1)
}

/// Opens a default breaker, waits out its cooldown, and reports what a probe's
/// success does: 1 if the breaker refused calls while open, admitted a probe after
/// the cooldown, and closed on the probe's success; 0 otherwise.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_breaker_recovers() -> i32 {
    let Ok(mut breaker) = BreakerConfig::new().build() else {
        return 0;
    };
    let mut now_ms = 0;
    for _ in 0..1_000 {
        if matches!(breaker.state(), State::Open { .. }) {
            break;
        }
        now_ms += 100;
        breaker.record(now_ms, false);
    }
    let State::Open { until_ms } = breaker.state() else {
        return 0;
    };
    let refused = !breaker.check(now_ms).is_allowed();
    let probe = matches!(breaker.check(until_ms), Admission::Probe { .. });
    breaker.record(until_ms, true);
    i32::from(refused && probe && breaker.state() == State::Closed)
}

/// How many of `tries` retries a fixed-window budget of `cap` per second lets
/// through within one window.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_budget_spent(cap: u32, tries: u32) -> u32 {
    let Ok(rules) = FixedWindowConfig::new()
        .with_max_cost_per_window(cap)
        .with_window_ms(1_000)
        .build()
    else {
        return 0;
    };
    let mut ledger = FixedWindowLedger::new(rules);
    (0..tries.min(100_000))
        .filter(|&i| ledger.try_spend(u64::from(i % 1_000), 1).is_ok())
        .fold(0, |spent, _| spent + 1)
}

/// The delay in milliseconds before retry `attempt` of an exponential backoff from
/// 200 ms doubling up to 10 s, without jitter; -1 if the schedule is not valid.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_backoff_ms(attempt: u32) -> f64 {
    let backoff = BackoffConfig::new()
        .with_base_delay(Duration::from_millis(200))
        .with_factor(2.0)
        .with_max_delay(Duration::from_secs(10))
        .with_jitter(Jitter::None)
        .build();
    match backoff {
        Ok(backoff) => backoff.delay(attempt, 0).as_secs_f64() * 1_000.0,
        Err(_) => -1.0,
    }
}

/// The share of evidence left after `elapsed_ms` with a half-life of
/// `half_life_ms`; NaN for a half-life that is not valid.
#[allow(unsafe_code, reason = "the symbol is exported to the wasm host")]
#[unsafe(no_mangle)]
pub extern "C" fn smoke_decay_factor(elapsed_ms: f64, half_life_ms: f64) -> f64 {
    match HalfLife::new(half_life_ms) {
        Ok(half_life) => Decay::new(half_life).factor(elapsed_ms as u64),
        Err(_) => f64::NAN,
    }
}

fn context(status: u32, attempt: u32) -> Context<'static> {
    let status = u16::try_from(status).unwrap_or(0);
    Context::new(ENDPOINT, attempt, ErrorClass::from_status(status))
}

fn reason_code(reason: Reason) -> u32 {
    match reason {
        Reason::PositiveExpectedValue => 1,
        Reason::NegativeExpectedValue => 2,
        Reason::MaxAttempts => 3,
        _ => 9,
    }
}
