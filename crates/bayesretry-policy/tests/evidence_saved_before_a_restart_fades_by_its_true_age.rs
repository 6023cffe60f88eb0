//! The default clock counts from the Unix epoch, so evidence a store saved in
//! an earlier process — before a restart, or by another process sharing the
//! file or the fleet — decays by its true age when this process reads it.
//!
//! A clock counting from its own making would read such evidence as coming
//! from its future, and leave it at full weight for as long as the earlier
//! process had been running: a context stopped on a day-old run of failures
//! would stay stopped for a day after the restart, against the ten-minute
//! half-life.

#![cfg(feature = "serde")]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use std::time::{SystemTime, UNIX_EPOCH};

use bayesretry_policy::{Clock, RetryPolicy, SystemClock};
use bayesretry_store::{Context, ErrorClass, Snapshot};

const DAY_MS: u64 = 24 * 60 * 60 * 1_000;

fn unix_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// A snapshot in which another process saw forty 429s on `provider`, each
/// followed by a failed retry, last at `at_ms`.
fn forty_failures_at(at_ms: u64) -> Snapshot {
    let json = format!(
        r#"{{"version":1,"taken_at_ms":{at_ms},"entries":[{{"endpoint":"provider","attempt":1,"class":"http-429","writer":7,"seq":40,"successes":0.0,"failures":40.0,"updated_at_ms":{at_ms}}}]}}"#
    );
    Snapshot::from_json(&json).unwrap()
}

fn retries_429_after_loading(snapshot: &Snapshot) -> bool {
    let policy = RetryPolicy::new();
    policy.load(snapshot);
    let context = Context::new("provider", 1, ErrorClass::Http(429));
    policy.should_retry(&context).retry()
}

#[test]
fn fresh_evidence_from_another_process_counts_in_full() {
    assert!(!retries_429_after_loading(&forty_failures_at(unix_ms())));
}

#[test]
fn day_old_evidence_from_before_a_restart_has_faded() {
    let day_ago = unix_ms() - DAY_MS;
    assert!(retries_429_after_loading(&forty_failures_at(day_ago)));
}

#[test]
fn clocks_made_at_different_times_share_the_unix_origin() {
    let before = unix_ms();
    let clock = SystemClock::new();
    let read = clock.now_ms();
    let after = unix_ms();
    // the wall clock is read once, at the making; allow for its millisecond
    // rounding on either side
    assert!(
        read + 1 >= before && read <= after + 1,
        "{before} <= {read} <= {after}"
    );
    let later = SystemClock::new();
    assert!(later.now_ms().abs_diff(clock.now_ms()) <= 1_000);
}
