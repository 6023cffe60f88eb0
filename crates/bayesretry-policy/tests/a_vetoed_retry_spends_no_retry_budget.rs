//! A `should_retry` veto stops a retry without spending the retry budget: the
//! budget is charged only when a retry is really made.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use bayesretry_budget::{FixedWindowBudget, FixedWindowConfig};
use bayesretry_policy::{
    HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

/// A classic policy whose budget grants exactly one retry in the (long) window.
fn policy_with_one_retry_of_budget() -> RetryPolicy {
    let rules = FixedWindowConfig::new()
        .with_max_cost_per_window(1)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_budget(FixedWindowBudget::new(rules))
        .build()
        .unwrap()
}

#[test]
fn a_vetoed_retry_leaves_the_budget_for_the_next_call() {
    let policy = policy_with_one_retry_of_budget();

    // The veto stops the first call's retry.
    let vetoed = policy
        .call("api")
        .should_retry(|_| false)
        .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
    assert!(
        matches!(
            vetoed.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Stopped { attempts: 1, .. })
        ),
        "{vetoed:?}"
    );

    // The budget's one retry is still there for the next call.
    let retried = policy.run_blocking("api", |attempt| {
        if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        }
    });
    assert_eq!(retried.ok(), Some(2));

    // And now it is spent: the next retry is refused by the budget.
    let refused = policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503)));
    assert!(
        matches!(
            refused.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::BudgetExhausted { attempts: 1, .. })
        ),
        "{refused:?}"
    );
}
