//! A call's first attempt takes a fast path when nothing but a closed breaker
//! stands before it; a policy with a per-attempt timeout always takes the
//! general loop. The two must be the same policy: over a scripted life of an
//! endpoint — healthy, flaky, down (the breaker opens, refuses, probes),
//! recovered — with a deadline and a retry budget that both bind, two policies that differ
//! only in that (never firing) timeout give the same results, spend the same
//! virtual time, learn the same posteriors and end in the same breaker state.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::ready;
use core::time::Duration;

use bayesretry_budget::{RatioBudget, RatioConfig};
use bayesretry_policy::{
    Clock, Context, ErrorClass, HttpStatus, ManualClock, RetryPolicy, VirtualSleeper,
};

mod common;
use common::block_on;

fn policy(general: bool) -> (RetryPolicy, ManualClock) {
    let clock = ManualClock::new(0);
    let mut builder = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_max_elapsed(Duration::from_millis(1_200))
        .with_budget(RatioBudget::new(
            RatioConfig::new()
                .with_percent(20.0)
                .with_min_per_sec(0)
                .build()
                .unwrap(),
        ))
        .with_seed(11);
    if general {
        // never fires: every attempt below is ready at once
        builder = builder.with_attempt_timeout(Duration::from_secs(3_600));
    }
    (builder.build().unwrap(), clock)
}

/// The status of attempt `attempt` of call `call`: the endpoint's life.
fn outcome(call: u32, attempt: u32) -> Result<u32, HttpStatus> {
    let failing = match call {
        0..40 => call % 9 == 0 && attempt == 1, // healthy, a rare blip
        40..80 => (call + attempt) % 3 == 0,    // flaky
        80..300 => true,                        // down
        _ => call % 11 == 0 && attempt == 1,    // recovered
    };
    let status = if call % 2 == 0 { 503 } else { 429 };
    if failing {
        Err(HttpStatus(status))
    } else {
        Ok(call * 10 + attempt)
    }
}

fn life(general: bool, blocking: bool) -> Vec<String> {
    let (policy, clock) = policy(general);
    let endpoint = policy.endpoint("provider");
    let mut seen = Vec::new();
    for call in 0..380 {
        let result = if blocking {
            endpoint.run_blocking(|attempt| outcome(call, attempt))
        } else {
            block_on(endpoint.run(|attempt| ready(outcome(call, attempt))))
        };
        seen.push(format!(
            "call {call}: {:?} at {} ms, breaker {:?}",
            result.map_err(|e| e.to_string()),
            clock.now_ms(),
            endpoint.breaker_state()
        ));
        clock.advance(Duration::from_millis(250));
    }
    for status in [503, 429] {
        for attempt in 1..=3 {
            let ctx = Context::new("provider", attempt, ErrorClass::Http(status));
            seen.push(format!("{ctx:?}: {:?}", policy.posterior(&ctx)));
        }
    }
    seen
}

#[test]
fn the_fast_path_and_the_general_loop_live_the_same_life() {
    for blocking in [false, true] {
        let fast = life(false, blocking);
        let general = life(true, blocking);
        assert_eq!(fast.len(), general.len());
        for (f, g) in fast.iter().zip(&general) {
            assert_eq!(f, g, "blocking: {blocking}");
        }
        // the life is rich enough to mean something: the breaker opened and
        // refused calls, and calls both succeeded after retries and failed
        let text = fast.join("\n");
        assert!(text.contains("Open"), "the breaker never opened");
        assert!(text.contains("circuit open"), "no call was refused");
        assert!(text.contains("Ok(") && text.contains("Err("));
        assert!(text.contains("budget"), "the budget never refused a retry");
        assert!(text.contains("deadline"), "no call ran out of time");
    }
}
