//! The quickstart example's claims, checked on its own run: the adaptive policy
//! earns more than "retry 3 times" with fewer attempts, and has learned that a
//! 429 clears and a 500 does not.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

#[allow(
    dead_code,
    reason = "the example's `main` prints what this test checks through `compare`"
)]
#[path = "../examples/quickstart.rs"]
mod quickstart;

use bayesretry::{Context, ErrorClass};

#[test]
fn the_adaptive_policy_earns_more_with_fewer_attempts() {
    let run = quickstart::compare().unwrap();
    assert!(
        run.adaptive.net_value() > run.classic.net_value(),
        "{run:?}"
    );
    assert!(run.adaptive.attempts < run.classic.attempts, "{run:?}");
    // its breaker refuses calls in the outage, not the healthy ones after
    // it: it succeeds within 2 points of retrying everything
    assert!(run.adaptive.ok + 20 >= run.classic.ok, "{run:?}");
    assert!(run.adaptive.fast_failed > 0, "{run:?}");
}

#[test]
fn it_learns_that_a_429_clears_and_a_500_does_not() {
    let run = quickstart::compare().unwrap();
    let decide = |status| {
        run.learned
            .should_retry(&Context::new(
                "llm-provider",
                1,
                ErrorClass::from_status(status),
            ))
            .retry()
    };
    assert!(decide(429));
    assert!(!decide(500));
}
