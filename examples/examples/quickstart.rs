//! BayesRetry against "retry 4 times" on a simulated LLM provider, on the same luck.
//!
//! The provider rate-limits (429) a third of first attempts — those clear on the next
//! attempt nine times in ten — and answers 500 to a few requests that are broken for
//! good (a bad prompt, a poisoned shard): every attempt at those fails. Halfway through,
//! the provider goes down for 200 calls (503 to everything), then recovers.
//!
//! Both policies see exactly the same outcome for attempt k of call i. The adaptive
//! policy learns per error class and attempt which failures clear; the classic one
//! retries everything up to its cap. Time is virtual: the backoff delays are recorded,
//! not slept, so the run takes milliseconds.
//!
//! Run: cargo run --release -p bayesretry-examples --example quickstart

use bayesretry::policy::{ManualClock, VirtualSleeper};
use bayesretry::{Context, CostModel, ErrorClass, HttpStatus, RetryErrorKind, RetryPolicy};

const CALLS: u64 = 1_000;
const OUTAGE: core::ops::Range<u64> = 500..700;

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

#[derive(Default)]
struct Tally {
    ok: u64,
    attempts: u64,
    fast_failed: u64,
}

fn run(name: &str, policy: &RetryPolicy) {
    let mut tally = Tally::default();
    for call in 0..CALLS {
        let mut made = 0;
        let result = policy.run_blocking("llm-provider", |attempt| {
            made += 1;
            provider(call, attempt)
        });
        tally.attempts += made;
        match result {
            Ok(_) => tally.ok += 1,
            Err(err) if matches!(err.kind(), RetryErrorKind::CircuitOpen { .. }) => {
                tally.fast_failed += 1;
            }
            Err(_) => {}
        }
    }
    let value = 10.0 * tally.ok as f64 - tally.attempts as f64;
    println!(
        "{name:<22} success {:>5.1} %   attempts {:>5}   retries {:>5}   failed fast {:>4}   net value {value:>7.0}",
        100.0 * tally.ok as f64 / CALLS as f64,
        tally.attempts,
        tally.attempts - (CALLS - tally.fast_failed),
        tally.fast_failed,
    );
}

fn main() -> Result<(), Box<dyn core::error::Error>> {
    println!(
        "{CALLS} calls to a rate-limited provider, down for calls {}..{}; value 10 per success, cost 1 per attempt\n",
        OUTAGE.start, OUTAGE.end
    );
    let virtual_time = || VirtualSleeper::new(ManualClock::new(0));

    let classic = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_virtual_time(virtual_time())
        .build()?;
    let adaptive = RetryPolicy::builder()
        .with_cost_model(CostModel::new(10.0, 1.0)?)
        .with_max_attempts(4)
        .with_virtual_time(virtual_time())
        .build()?;

    run("retry 4 times", &classic);
    run("bayesretry (adaptive)", &adaptive);

    println!("\nWhat the adaptive policy learned about the attempt after a failure:");
    for (class, label) in [
        (429, "429 rate limited"),
        (500, "500 server error"),
        (503, "503 overloaded"),
    ] {
        let ctx = Context::new("llm-provider", 1, ErrorClass::from_status(class));
        let belief = adaptive.posterior(&ctx);
        let (lo, hi) = belief.credible_interval(0.95);
        let decision = adaptive.should_retry(&ctx);
        println!(
            "  {label:<18} P(next attempt succeeds) = {:.3}  95% CI [{lo:.3}, {hi:.3}]  ->  {} ({})",
            belief.mean(),
            if decision.retry() { "retry" } else { "stop" },
            decision.reason()
        );
    }
    Ok(())
}
