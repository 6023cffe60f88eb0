//! A 503 with `Retry-After: 1`, then a 200: one retry, after exactly the
//! server's second (virtual time), and the 200 is returned.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;

use support::{serve_failing_once, virtual_client};

#[tokio::test]
async fn the_retry_waits_the_servers_second_and_returns_the_200() {
    let server = serve_failing_once(503, &[("retry-after", "1")]).await;
    let (client, sleeper) = virtual_client();

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    // max(server hint, own backoff): the first backoff is at most 500 ms
    assert_eq!(sleeper.delays(), [Duration::from_secs(1)]);
}

#[tokio::test]
async fn without_a_hint_the_wait_is_the_policys_own_backoff() {
    let server = serve_failing_once(503, &[]).await;
    let (client, sleeper) = virtual_client();

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 1);
    assert!(delays[0] <= support::FIRST_BACKOFF_CAP, "{delays:?}");
}

#[tokio::test]
async fn a_529_from_an_overloaded_provider_is_retried_too() {
    let server = serve_failing_once(529, &[("retry-after", "2")]).await;
    let (client, sleeper) = virtual_client();

    let response = client.get(server.url("/v1/messages")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(sleeper.delays(), [Duration::from_secs(2)]);
}
