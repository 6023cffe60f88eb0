//! However often the server sends `Retry-After`, the attempt cap holds: the hint
//! sets the wait, never the number of attempts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;

use bayesretry_http::RetryClient;
use bayesretry_policy::{ManualClock, RetryPolicy, VirtualSleeper};
use support::{answer, serve, virtual_client};

#[tokio::test]
async fn four_attempts_and_the_last_503_is_returned() {
    let server = serve(|_| answer(503, &[("retry-after", "1")])).await;
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 4);
    // three waits, none shorter than the server's second
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 3);
    assert!(
        delays.iter().all(|d| *d >= Duration::from_secs(1)),
        "{delays:?}"
    );
}

#[tokio::test]
async fn a_learning_policy_never_exceeds_its_cap_either() {
    let server = serve(|_| answer(503, &[("retry-after-ms", "10")])).await;
    let (client, sleeper) = virtual_client();

    for call in 1..=5 {
        // the last 503's wait holds the origin until it runs out
        sleeper.clock().advance(Duration::from_millis(10));
        let response = client.get(server.url("/")).send().await.unwrap();
        assert_eq!(response.status(), 503);
        assert!(
            server.requests() <= call * bayesretry_policy::DEFAULT_MAX_ATTEMPTS as usize,
            "call {call}: {} requests",
            server.requests()
        );
    }
}
