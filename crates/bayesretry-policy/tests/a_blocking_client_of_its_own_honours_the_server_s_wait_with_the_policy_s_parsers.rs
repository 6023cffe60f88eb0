//! A caller with an HTTP client of its own (a blocking one, say) reads the
//! server's wait with the parsers this crate holds, `parse_retry_after` and
//! `parse_retry_after_ms`, hands it to the policy through its `Classify`,
//! and the retry waits for it: no HTTP adapter, and none of its reqwest,
//! tower and tokio, is needed for it.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

use alloc::sync::Arc;
use core::time::Duration;
use std::sync::Mutex;
use std::time::SystemTime;

use bayesretry_policy::{
    Classification, Classify, RetryPolicy, classify_status, parse_retry_after, parse_retry_after_ms,
};

/// A failed response as a client of the caller's own reports it: the status
/// and the raw values of the two wait headers.
struct Response {
    status: u16,
    retry_after: Option<&'static [u8]>,
    retry_after_ms: Option<&'static [u8]>,
}

impl Classify for Response {
    fn classify(&self) -> Classification {
        let class = classify_status(self.status);
        let wait = self
            .retry_after_ms
            .and_then(parse_retry_after_ms)
            .or_else(|| {
                self.retry_after
                    .and_then(|value| parse_retry_after(value, SystemTime::now()))
            });
        match wait {
            Some(wait) => class.with_retry_after(wait),
            None => class,
        }
    }
}

/// The waits before each retry of one call whose first attempt fails with
/// `first` and whose second succeeds.
fn waits_after(first: Response) -> Vec<Duration> {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&waits);
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(2)
        .with_blocking_sleeper(move |wait: Duration| record.lock().unwrap().push(wait))
        .build()
        .unwrap();
    let mut first = Some(first);
    let out = policy.run_blocking("api.example.com", |_| match first.take() {
        Some(failed) => Err(failed),
        None => Ok(()),
    });
    assert!(out.is_ok());
    waits.lock().unwrap().clone()
}

#[test]
fn a_429_s_retry_after_in_seconds_is_waited_for() {
    let waits = waits_after(Response {
        status: 429,
        retry_after: Some(b"7"),
        retry_after_ms: None,
    });
    assert_eq!(waits, [Duration::from_secs(7)]);
}

#[test]
fn a_retry_after_ms_beside_it_wins_as_the_more_precise() {
    let waits = waits_after(Response {
        status: 503,
        retry_after: Some(b"7"),
        retry_after_ms: Some(b"6500"),
    });
    assert_eq!(waits, [Duration::from_millis(6_500)]);
}

#[test]
fn a_wait_that_does_not_parse_leaves_the_policy_s_own_backoff() {
    let waits = waits_after(Response {
        status: 429,
        retry_after: Some(b"soon"),
        retry_after_ms: None,
    });
    assert_eq!(waits.len(), 1);
    assert!(waits[0] < Duration::from_secs(7), "{waits:?}");
}
