//! Before a retry, the failed response's body is read (up to a small limit), so
//! the retry reuses the connection instead of opening a new one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use bayesretry_http::{Config, RetryClient};
use support::{answer, answer_sized, serve, virtual_client, virtual_policy};

/// A failure body too large for the client to have read with the headers.
const BODY: usize = 48 * 1024;

#[tokio::test]
async fn three_attempts_share_one_connection() {
    let server = serve(|seen| match seen.index {
        0 | 1 => answer_sized(503, &[("retry-after-ms", "5")], BODY),
        _ => answer(200, &[]),
    })
    .await;
    let (client, _) = virtual_client();

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 3);
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_body_above_the_limit_is_dropped_and_its_connection_closed() {
    let server = serve(|seen| match seen.index {
        0 => answer_sized(503, &[("retry-after-ms", "5")], BODY),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, _) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_drain_limit(1024));

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.connections(), 2);
}

#[tokio::test]
async fn with_draining_off_each_retry_opens_a_connection() {
    let server = serve(|seen| match seen.index {
        0 => answer_sized(503, &[("retry-after-ms", "5")], BODY),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, _) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_drain_limit(0));

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.connections(), 2);
}

#[tokio::test]
async fn successful_calls_keep_using_one_connection() {
    let server = serve(|_| answer(200, &[])).await;
    let (client, sleeper) = virtual_client();

    for _ in 0..20 {
        let response = client.get(server.url("/")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
    }

    assert_eq!(server.requests(), 20);
    assert_eq!(server.connections(), 1);
    assert!(sleeper.delays().is_empty());
}
