//! The four hooks run in p-retry's order; each stops what it may and nothing
//! more; permanent errors bypass them; a panicking observer is harmless.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

use core::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use bayesretry_policy::{
    Context, Decision, HttpStatus, Observer, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper, permanent,
};

fn quiet_policy(attempts: u32) -> RetryPolicy {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_virtual_time(VirtualSleeper::default())
        .build()
        .unwrap()
}

#[test]
fn the_four_hooks_run_in_order() {
    let policy = quiet_policy(2);
    let log = Mutex::new(Vec::new());
    let result: Result<(), _> = policy
        .call("api")
        .should_consume_retry(|_, attempt| {
            log.lock().unwrap().push(format!("consume {attempt}"));
            true
        })
        .on_failed_attempt(|info| {
            log.lock().unwrap().push(format!(
                "failed {} left {} delay {}",
                info.attempt,
                info.retries_left,
                info.next_delay.is_some()
            ));
        })
        .should_retry(|info| {
            log.lock()
                .unwrap()
                .push(format!("should_retry {}", info.attempt));
            true
        })
        .on_exhausted(|_| log.lock().unwrap().push("exhausted".to_owned()))
        .run_blocking(|_| Err(HttpStatus(503)));
    assert!(matches!(
        result.map_err(RetryError::into_kind),
        Err(RetryErrorKind::Exhausted { attempts: 2, .. })
    ));
    assert_eq!(
        log.into_inner().unwrap(),
        [
            "consume 1",
            "failed 1 left 1 delay true",
            "should_retry 1",
            "consume 2",
            "failed 2 left 0 delay false",
            "exhausted",
        ]
    );
}

#[test]
fn should_retry_can_stop_but_never_force() {
    let policy = quiet_policy(5);
    let mut made = 0;
    let result: Result<(), _> = policy
        .call("api")
        .should_retry(|info| info.attempt < 2)
        .run_blocking(|_| {
            made += 1;
            Err(HttpStatus(503))
        });
    assert_eq!(made, 2);
    assert!(matches!(
        result.map_err(RetryError::into_kind),
        Err(RetryErrorKind::Stopped { attempts: 2, .. })
    ));

    // a veto that always says yes cannot pass the cap or a permanent error
    let mut made = 0;
    let result: Result<(), _> = quiet_policy(2)
        .call("api")
        .should_retry(|_| true)
        .run_blocking(|_| {
            made += 1;
            Err(HttpStatus(503))
        });
    assert_eq!(made, 2);
    assert!(matches!(
        result.map_err(RetryError::into_kind),
        Err(RetryErrorKind::Exhausted { .. })
    ));

    let mut hooks_ran = false;
    let result: Result<(), _> = quiet_policy(5)
        .call("api")
        .on_failed_attempt(|_| hooks_ran = true)
        .run_blocking(|_| Err(permanent("bad api key")));
    assert!(matches!(
        result.map_err(RetryError::into_kind),
        Err(RetryErrorKind::Permanent(_))
    ));
    assert!(
        !hooks_ran,
        "a permanent error ends the call before any hook"
    );
}

#[test]
fn an_unconsumed_failure_does_not_count_but_is_still_bounded() {
    let mut made = 0;
    let result = quiet_policy(2)
        .call("api")
        .should_consume_retry(|err: &HttpStatus, _| err.0 != 429)
        .run_blocking(|attempt| {
            made += 1;
            if attempt <= 3 {
                Err(HttpStatus(429))
            } else {
                Ok(attempt)
            }
        });
    assert_eq!(
        result.ok(),
        Some(4),
        "three rate limits did not use up two attempts"
    );

    let mut made = 0;
    let _: Result<(), _> = quiet_policy(2)
        .call("api")
        .should_consume_retry(|_, _| false)
        .run_blocking(|_| {
            made += 1;
            Err(HttpStatus(429))
        });
    assert_eq!(made, 2 + bayesretry_policy::MAX_UNCOUNTED_FAILURES);
}

struct Panicking(AtomicU32);

impl Observer for Panicking {
    fn on_decision(&self, _: &Decision, _: &Context<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
        panic!("observer bug");
    }

    fn on_observe(&self, _: &Context<'_>, _: bool) {
        panic!("observer bug");
    }
}

#[test]
fn a_panicking_observer_is_harmless() {
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::default())
        .with_observer(Panicking(AtomicU32::new(0)))
        .build()
        .unwrap();
    let result = policy.run_blocking("api", |attempt| {
        if attempt < 3 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        }
    });
    assert_eq!(result.ok(), Some(3));
    let ctx = Context::new("api", 1, bayesretry_policy::ErrorClass::Http(503));
    policy.observe(&ctx, true);
    assert!(policy.should_retry(&ctx).retry());
}
