//! A `should_retry` veto stops a retry without spending the retry budget: the
//! budget is charged only when a retry is really made. So does a cancellation
//! that came while the attempt was under way: the call ends `Cancelled`
//! instead of retrying, and the retry it will not make is not charged. A hook
//! that panics unwinds to the caller, having spent nothing either.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use core::future::Future;
use core::panic::AssertUnwindSafe;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use bayesretry_policy::{CancelToken, HttpStatus, RetryError, RetryErrorKind, RetryPolicy};

/// A classic policy whose budget grants exactly one retry in the (long) window.
fn policy_with_one_retry_of_budget() -> RetryPolicy {
    common::one_retry_of_budget().build().unwrap()
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
    let retried = policy.run_blocking("api", common::fails_once);
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

/// The budget's one retry is still there: a call that fails once retries.
fn the_budget_still_has_its_retry(policy: &RetryPolicy) {
    let retried = policy.run_blocking("api", common::fails_once);
    assert!(
        matches!(retried, Ok(2)),
        "the budget was charged: {retried:?}"
    );
}

#[test]
fn a_blocking_call_cancelled_during_its_attempt_spends_no_retry_budget() {
    let policy = policy_with_one_retry_of_budget();
    let cancelled = common::cancelled_during_its_attempt(&policy);
    assert!(
        matches!(
            cancelled.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Cancelled { reason, last_error: Some(HttpStatus(503)) })
                if reason == "shutting down"
        ),
        "{cancelled:?}"
    );

    the_budget_still_has_its_retry(&policy);
}

#[test]
fn an_async_call_cancelled_during_its_attempt_spends_no_retry_budget() {
    let policy = policy_with_one_retry_of_budget();
    let token = CancelToken::new();
    let cancel = token.clone();
    let mut call = pin!(policy.call("api").with_cancel(token).run(|_| {
        cancel.cancel("shutting down");
        core::future::ready(Err::<u32, _>(HttpStatus(503)))
    }));
    let Poll::Ready(cancelled) = call.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
        panic!("a cancelled call with virtual waits ends at its first poll");
    };
    assert!(
        matches!(
            cancelled.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Cancelled { .. })
        ),
        "{cancelled:?}"
    );

    the_budget_still_has_its_retry(&policy);
}

#[test]
fn a_hook_that_panics_unwinds_to_the_caller_and_spends_no_retry_budget() {
    let policy = policy_with_one_retry_of_budget();
    let unwound = std::panic::catch_unwind(AssertUnwindSafe(|| {
        policy
            .call("api")
            .should_retry(|_| panic!("the hook panicked"))
            .run_blocking(|_| Err::<u32, _>(HttpStatus(503)))
    }));
    assert!(unwound.is_err(), "a hook's panic is not contained");

    the_budget_still_has_its_retry(&policy);
}
