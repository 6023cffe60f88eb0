//! BayesRetry against "retry 3 times" on a simulated LLM provider, on the same luck.
//!
//! The provider rate-limits (429) a third of first attempts — those clear on the next
//! attempt nine times in ten — and answers 500 to a few requests that are broken for
//! good (a bad prompt, a poisoned shard): every attempt at those fails. Halfway through,
//! the provider goes down for 200 calls (503 to everything), then recovers.
//!
//! Both policies see exactly the same outcome for attempt k of call i. The adaptive
//! policy learns per error class and attempt which failures clear; the classic one
//! retries everything up to its cap of 4 attempts (3 retries). Time is virtual: a call
//! arrives every 100 ms of it, and the backoff delays are recorded, not slept, so the
//! run takes milliseconds. The clock must move between calls as it would in a real
//! service: an open breaker waits out its cooldown on the policy's clock, and a
//! virtual clock moves only when someone advances it — the sleeper, for the delays it
//! is handed, and the caller, for the time between calls.
//!
//! Run: cargo run --release -p bayesretry-examples --example quickstart

use core::time::Duration;

use bayesretry::policy::{ManualClock, VirtualSleeper};
use bayesretry::{Context, CostModel, ErrorClass, HttpStatus, RetryErrorKind, RetryPolicy};

const CALLS: u64 = 1_000;
const OUTAGE: core::ops::Range<u64> = 500..700;
/// Time between two calls' arrivals.
const BETWEEN_CALLS: Duration = Duration::from_millis(100);

/// A deterministic draw in [0, 1) for (call, attempt, purpose): SplitMix64.
fn luck(call: u64, attempt: u32, purpose: u64) -> f64 {
    let mut z = call
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(u64::from(attempt).wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(purpose.wrapping_mul(0x94D0_49BB_1331_11EB));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// What the provider answers to attempt `attempt` of call `call`.
fn provider(call: u64, attempt: u32) -> Result<&'static str, HttpStatus> {
    if OUTAGE.contains(&call) {
        return Err(HttpStatus(503));
    }
    if luck(call, 0, 1) < 0.04 {
        return Err(HttpStatus(500)); // broken for good
    }
    let rate_limited = if attempt == 1 {
        luck(call, attempt, 2) < 0.33
    } else {
        luck(call, attempt, 2) < 0.10
    };
    if rate_limited {
        Err(HttpStatus(429))
    } else {
        Ok("completion")
    }
}

/// What one policy did with the calls.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// Calls that succeeded.
    pub(crate) ok: u64,
    /// Attempts made, first tries included.
    pub(crate) attempts: u64,
    /// Calls the breaker refused without an attempt.
    pub(crate) fast_failed: u64,
}

impl Tally {
    /// 10 per success, less 1 per attempt.
    pub(crate) fn net_value(&self) -> f64 {
        10.0 * self.ok as f64 - self.attempts as f64
    }

    fn print(&self, name: &str) {
        println!(
            "{name:<22} success {:>5.1} %   attempts {:>5}   retries {:>5}   failed fast {:>4}   net value {:>7.0}",
            100.0 * self.ok as f64 / CALLS as f64,
            self.attempts,
            self.attempts - (CALLS - self.fast_failed),
            self.fast_failed,
            self.net_value(),
        );
    }
}

/// Runs every call through `policy`, whose virtual time is `clock`.
fn run(policy: &RetryPolicy, clock: &ManualClock) -> Tally {
    let mut tally = Tally::default();
    for call in 0..CALLS {
        clock.advance(BETWEEN_CALLS);
        let mut made = 0;
        let result = policy.run_blocking("llm-provider", |attempt| {
            made += 1;
            provider(call, attempt)
        });
        tally.attempts += made;
        match result {
            Ok(_) => tally.ok += 1,
            // refused before its first attempt; a call the breaker stops
            // after a failed attempt made its attempts and counts as failed
            Err(err) if matches!(err.kind(), RetryErrorKind::CircuitOpen { attempts: 0, .. }) => {
                tally.fast_failed += 1;
            }
            Err(_) => {}
        }
    }
    tally
}

/// Both policies on the same calls, and the adaptive one as it ends.
#[derive(Debug)]
pub(crate) struct Comparison {
    /// "Retry 3 times": classic mode, 4 attempts in all.
    pub(crate) classic: Tally,
    /// The adaptive policy, with the example's cost model.
    pub(crate) adaptive: Tally,
    /// The adaptive policy after the calls, with what it learned.
    pub(crate) learned: RetryPolicy,
}

/// Builds both policies, each on a virtual clock of its own, and runs the calls
/// through each.
pub(crate) fn compare() -> Result<Comparison, Box<dyn core::error::Error>> {
    let (classic_time, adaptive_time) = (
        VirtualSleeper::new(ManualClock::new(0)),
        VirtualSleeper::new(ManualClock::new(0)),
    );
    let classic = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_virtual_time(classic_time.clone())
        .with_seed(1)
        .build()?;
    let adaptive = RetryPolicy::builder()
        .with_cost_model(CostModel::new(10.0, 1.0)?)
        .with_max_attempts(4)
        .with_virtual_time(adaptive_time.clone())
        .with_seed(1)
        .build()?;
    Ok(Comparison {
        classic: run(&classic, classic_time.clock()),
        adaptive: run(&adaptive, adaptive_time.clock()),
        learned: adaptive,
    })
}

fn main() -> Result<(), Box<dyn core::error::Error>> {
    println!(
        "{CALLS} calls to a rate-limited provider, one every {} ms, down for calls {}..{}; value 10 per success, cost 1 per attempt\n",
        BETWEEN_CALLS.as_millis(),
        OUTAGE.start,
        OUTAGE.end
    );
    let Comparison {
        classic,
        adaptive,
        learned,
    } = compare()?;
    classic.print("retry 3 times");
    adaptive.print("bayesretry (adaptive)");

    println!("\nWhat the adaptive policy learned about the attempt after a failure:");
    for (class, label) in [
        (429, "429 rate limited"),
        (500, "500 server error"),
        (503, "503 overloaded"),
    ] {
        let ctx = Context::new("llm-provider", 1, ErrorClass::from_status(class));
        let belief = learned.posterior(&ctx);
        let (lo, hi) = belief.credible_interval(0.95);
        let decision = learned.should_retry(&ctx);
        println!(
            "  {label:<18} P(next attempt succeeds) = {:.3}  95% CI [{lo:.3}, {hi:.3}]  ->  {} ({})",
            belief.mean(),
            if decision.retry() { "retry" } else { "stop" },
            decision.reason()
        );
    }
    Ok(())
}
