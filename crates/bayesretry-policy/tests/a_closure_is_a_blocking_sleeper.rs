//! Any `Fn(Duration)` is a blocking sleeper, as any `Fn(Duration) -> impl
//! Future` is an async one: `run_blocking` hands it each delay of the
//! schedule, and a test passes `|_| ()` to skip every wait.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{HttpStatus, RetryPolicy};

#[test]
fn a_closure_is_handed_each_delay_of_the_schedule() {
    let slept = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&slept);
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_millis(200))
                .with_factor(2.0)
                .with_jitter(Jitter::None),
        )
        .with_blocking_sleeper(move |delay| record.lock().unwrap().push(delay))
        .build()
        .unwrap();

    let mut made = 0;
    let result: Result<(), _> = policy.run_blocking("db", |_| {
        made += 1;
        Err(HttpStatus(503))
    });

    assert!(result.is_err());
    assert_eq!(made, 3);
    assert_eq!(
        *slept.lock().unwrap(),
        [Duration::from_millis(200), Duration::from_millis(400)]
    );
}

#[test]
fn a_closure_that_does_nothing_is_taken_as_written() {
    // `|_| ()`, its argument's type left to inference, as a test writes it
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_backoff(Config::new().with_base_delay(Duration::from_millis(1)))
        .with_blocking_sleeper(|_| ())
        .build()
        .unwrap();

    let result = policy.run_blocking("db", |attempt| {
        if attempt < 4 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        }
    });

    assert_eq!(result.ok(), Some(4));
}
