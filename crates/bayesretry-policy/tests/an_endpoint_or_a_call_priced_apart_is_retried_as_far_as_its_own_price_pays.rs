//! `Builder::with_endpoint_cost` and `Call::with_cost_model`: an endpoint, or
//! one call, priced apart from the policy is retried as far as its own odds
//! pay at its own price; an endpoint priced apart gets the default breaker
//! for its price; the posteriors stay shared; a classic policy prices
//! nothing.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_breaker::State;
use bayesretry_cost::CostModel;
use bayesretry_policy::{
    Context, Decision, ErrorClass, HttpStatus, ManualClock, Observer, RetryError, RetryErrorKind,
    RetryPolicy, VirtualSleeper,
};

fn model(value: f64) -> CostModel {
    CostModel::new(value, 1.0).unwrap()
}

/// The expected values of the decisions a policy makes.
#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<f64>>>);

impl Observer for Decisions {
    fn on_decision(&self, decision: &Decision, _ctx: &Context<'_>) {
        self.0.lock().unwrap().push(decision.expected_value());
    }
}

/// Teaches `policy` that at `endpoint`, after a first attempt's 503, one retry
/// in four succeeds.
fn teach(policy: &RetryPolicy, endpoint: &str) {
    let ctx = Context::new(endpoint, 1, ErrorClass::Http(503));
    for i in 0..40 {
        policy.observe(&ctx, i % 4 == 0);
    }
}

#[test]
fn each_endpoint_is_judged_at_its_own_price_over_its_own_odds() {
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_endpoint_cost("chat", model(50.0))
        .with_endpoint_cost("hint", model(2.0))
        .build()
        .unwrap();
    for endpoint in ["chat", "hint", "other"] {
        teach(&policy, endpoint);
    }
    let decide =
        |endpoint: &str| policy.should_retry(&Context::new(endpoint, 1, ErrorClass::Http(503)));
    let (chat, hint, other) = (decide("chat"), decide("hint"), decide("other"));
    // about one in four: worth it at 50 and at the policy's 10, not at 2
    let p = chat.probability();
    assert!((0.2..0.3).contains(&p), "{p}");
    assert!(chat.retry() && other.retry() && !hint.retry());
    for (decision, value) in [(chat, 50.0), (hint, 2.0), (other, 10.0)] {
        let want = decision.probability() * value - 1.0;
        assert!((decision.expected_value() - want).abs() < 1e-9, "{value}");
    }
    assert_eq!(policy.cost_model("chat"), model(50.0));
    assert_eq!(policy.cost_model("hint"), model(2.0));
    assert_eq!(policy.cost_model("other"), model(10.0));
}

#[test]
fn a_call_s_own_price_decides_its_retries_over_the_shared_odds() {
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_max_attempts(2)
        .without_breaker()
        .with_endpoint_cost("chat", model(50.0))
        .with_observer(decisions.clone())
        .build()
        .unwrap();
    teach(&policy, "chat");
    let attempts = |price: Option<CostModel>| {
        let mut made = 0;
        let mut call = policy.call("chat");
        if let Some(price) = price {
            call = call.with_cost_model(price);
        }
        let out: Result<(), RetryError<HttpStatus>> = call.run_blocking(|attempt| {
            made += 1;
            if attempt == 1 {
                Err(HttpStatus(503))
            } else {
                Ok(())
            }
        });
        (made, out.is_ok())
    };
    // the endpoint's price retries: one in four is worth it at 50
    assert_eq!(attempts(None), (2, true));
    // a call worth two attempts is not retried at those odds...
    assert_eq!(attempts(Some(model(2.0))), (1, false));
    // ...and a call worth a thousand is, whatever its endpoint's price
    assert_eq!(attempts(Some(model(1_000.0))), (2, true));
    let seen = decisions.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    // each decision priced as its call: p · V − 1 over the same odds
    let p = (seen[0] + 1.0) / 50.0;
    assert!((0.2..0.3).contains(&p), "{p}");
    for (ev, value) in seen.iter().zip([50.0, 2.0, 1_000.0]) {
        // the odds moved a little between the calls: the first retry's
        // success was learned
        let odds = (ev + 1.0) / value;
        assert!((odds - p).abs() < 0.03, "{value}: {odds} vs {p}");
    }
}

#[test]
fn an_endpoint_priced_apart_gets_the_breaker_of_its_price() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_max_attempts(1)
        .with_seed(3)
        .with_endpoint_cost("hint", model(2.0))
        .with_endpoint_cost("chat", model(50.0))
        .build()
        .unwrap();
    // two calls in five succeed everywhere: below the hint's break-even
    // (0.5), above the policy's (0.1) and the chat model's (0.05 at most)
    let mut refused = [0_u32; 3];
    for call in 0..300_u32 {
        for (i, endpoint) in ["hint", "chat", "other"].into_iter().enumerate() {
            let result = policy.run_blocking(endpoint, |_| {
                if call % 5 == 0 || call % 5 == 2 {
                    Ok(())
                } else {
                    Err(HttpStatus(500))
                }
            });
            if let Err(RetryErrorKind::CircuitOpen { .. }) = result.map_err(RetryError::into_kind) {
                refused[i] += 1;
            }
        }
        clock.advance(Duration::from_millis(100));
    }
    assert!(refused[0] > 0, "the hint's breaker opens: {refused:?}");
    assert_eq!(refused[1..], [0, 0], "the others stay closed");
    assert_eq!(policy.breaker_state("chat"), Some(State::Closed));
}

#[test]
fn a_classic_policy_prices_nothing() {
    let policy = RetryPolicy::builder()
        .classic()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_endpoint_cost("hint", model(1.01))
        .build()
        .unwrap();
    let mut made = 0;
    let out: Result<(), RetryError<HttpStatus>> = policy
        .call("hint")
        .with_cost_model(model(1.01))
        .run_blocking(|_| {
            made += 1;
            Err(HttpStatus(503))
        });
    assert!(out.is_err());
    // every retry the cap allows, as with no price at all
    assert_eq!(made, 4);
}
