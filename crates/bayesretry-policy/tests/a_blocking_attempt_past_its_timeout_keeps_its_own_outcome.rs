//! `run_blocking` cannot cut off a blocking function, so a per-attempt timeout
//! does not apply there: an attempt that returns after the timeout keeps its own
//! outcome. A late success is a success; a late error is classified as itself.
//! Timed on a manual clock that each attempt advances.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_policy::{
    ErrorClass, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

fn policy(clock: &ManualClock) -> RetryPolicy {
    RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_attempt_timeout(Duration::from_secs(1))
        .with_seed(1)
        .build()
        .unwrap()
}

#[test]
fn a_late_success_is_returned_not_retried() {
    let clock = ManualClock::new(0);
    let policy = policy(&clock);
    let mut attempts = 0;
    let answer = policy.run_blocking("slow", |_| {
        attempts += 1;
        clock.advance(Duration::from_secs(5)); // five times the timeout
        Ok::<_, HttpStatus>("done")
    });
    assert_eq!(answer.ok(), Some("done"));
    assert_eq!(attempts, 1);
}

#[test]
fn a_late_error_is_classified_as_itself_not_as_a_timeout() {
    let clock = ManualClock::new(0);
    let policy = policy(&clock);
    let mut classes = Vec::new();
    let result = policy
        .call("slow")
        .on_failed_attempt(|info| classes.push(info.error_class))
        .run_blocking(|_| {
            clock.advance(Duration::from_secs(5));
            Err::<(), _>(HttpStatus(404))
        });
    // a permanent error stays permanent however late it comes
    assert!(matches!(
        result.map_err(RetryError::into_kind),
        Err(RetryErrorKind::Permanent(HttpStatus(404)))
    ));

    let result = policy
        .call("slow")
        .on_failed_attempt(|info| classes.push(info.error_class))
        .run_blocking(|attempt| {
            clock.advance(Duration::from_secs(5));
            if attempt == 1 {
                Err(HttpStatus(503))
            } else {
                Ok(())
            }
        });
    assert!(result.is_ok());
    assert_eq!(classes, [ErrorClass::from_status(503)]);
}
