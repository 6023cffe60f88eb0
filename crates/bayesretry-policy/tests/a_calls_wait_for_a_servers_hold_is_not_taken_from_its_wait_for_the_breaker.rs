//! A call waits for two things, each within its own allowance: for a
//! server's hold on its endpoint (a retry, within the Retry-After limit,
//! `Builder::with_max_retry_after`) and for an open breaker (within
//! `Builder::with_wait_while_open`'s `max_wait`). Time spent on the one is
//! not taken from the other. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_cost::CostModel;
use bayesretry_policy::{Clock, ManualClock, RetryPolicy, VirtualSleeper, default_breaker};

/// The breaker's cooldown: 3 s, every time it opens.
const COOLDOWN_MS: u64 = 3_000;

mod common;
use common::{Reply, classify_reply, told_to_wait};

#[test]
fn a_retry_that_waited_out_a_hold_still_waits_for_the_breaker() {
    let sleeper = VirtualSleeper::new(ManualClock::new(1_000));
    let breaker = default_breaker(&CostModel::new(10.0, 1.0).unwrap())
        .with_cooldown_ms(COOLDOWN_MS)
        .with_max_cooldown_ms(COOLDOWN_MS);
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_breaker(breaker)
        .with_max_retry_after(Duration::from_secs(10))
        .with_wait_while_open(Duration::from_secs(5))
        .with_seed(5)
        .build()
        .unwrap();
    // a healthy endpoint
    for _ in 0..20 {
        policy
            .call_with("api", classify_reply)
            .run_blocking(|_| Ok::<(), Reply>(()))
            .unwrap();
        sleeper.clock().advance(Duration::from_millis(10));
    }
    let start = sleeper.clock().now_ms();
    let mut made = Vec::new();
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|attempt| {
            made.push(sleeper.clock().now_ms() - start);
            match attempt {
                1 => {
                    // while it fails, another call is told to wait 8 s
                    told_to_wait(&policy, Duration::from_secs(8));
                    Err((503, None))
                }
                2 => {
                    // after the hold, the endpoint goes down until its breaker opens
                    for _ in 0..1_000 {
                        let _ = policy
                            .call_with("api", classify_reply)
                            .should_retry(|_| false)
                            .run_blocking(|_| Err::<(), Reply>((503, None)));
                        if let Some(State::Open { .. }) = policy.breaker_state("api") {
                            return Err((503, None));
                        }
                        sleeper.clock().advance(Duration::from_millis(100));
                    }
                    panic!("a dead endpoint opens the breaker");
                }
                _ => Ok(()),
            }
        });
    // the 8 s spent on the hold left the 5 s for the breaker whole: the
    // retry waited the 3 s cooldown out and went through as the probe
    assert!(result.is_ok(), "{result:?} after attempts at {made:?}");
    assert_eq!(made.len(), 3, "{made:?}");
    assert_eq!(made[1], 8_000, "the retry went out as the hold ended");
}
