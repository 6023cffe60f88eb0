//! An attempt the policy's per-attempt timeout cut off, with no retry after it,
//! ends the request in `Error::AttemptTimedOut` naming that timeout — whether
//! the attempt cap or the retry budget is what stopped the retry.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;

use bayesretry_budget::{Budget, Denied};
use bayesretry_http::{Error, RetryClient};
use bayesretry_policy::{Builder, ManualClock, RetryPolicy, VirtualSleeper};
use support::{answer, serve};

const TIMEOUT: Duration = Duration::from_secs(5);

/// A budget that grants no retry.
struct Spent;

impl Budget for Spent {
    fn try_spend(&self, _now_ms: u64, _cost: u32) -> Result<(), Denied> {
        Err(Denied::exhausted(u64::MAX))
    }

    fn deposit(&self, _now_ms: u64) {}
}

/// Classic mode on virtual time with the per-attempt timeout: the timeout's
/// timer is a virtual sleep, so an attempt that has to wait for the network at
/// all is cut off at once.
fn timed(attempts: u32) -> Builder {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_attempt_timeout(TIMEOUT)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
}

async fn outcome(policy: RetryPolicy) -> Error<reqwest::Error, reqwest::Response> {
    let server = serve(|_| answer(200, &[])).await;
    let client = RetryClient::new(reqwest::Client::new(), policy);
    client.get(server.url("/")).send().await.unwrap_err()
}

#[tokio::test]
async fn the_attempt_cap_after_a_timeout() {
    let err = outcome(timed(1).build().unwrap()).await;
    match err {
        Error::AttemptTimedOut { timeout, attempts } => {
            assert_eq!((timeout, attempts), (TIMEOUT, 1));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn the_budget_after_a_timeout() {
    let err = outcome(timed(3).with_budget(Spent).build().unwrap()).await;
    match err {
        Error::AttemptTimedOut { timeout, attempts } => {
            assert_eq!((timeout, attempts), (TIMEOUT, 1));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(
        RetryPolicy::builder()
            .with_attempt_timeout(TIMEOUT)
            .build()
            .unwrap()
            .attempt_timeout(),
        Some(TIMEOUT)
    );
}
