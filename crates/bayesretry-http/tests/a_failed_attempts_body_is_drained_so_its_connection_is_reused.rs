//! Before a retry, the failed response's body is read (up to a small limit), so
//! the retry reuses the connection instead of opening a new one, however many
//! chunks the body comes in.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use bayesretry_http::{Config, RetryClient, RetryLayer};
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{OK_200, answer, answer_sized, serve, serve_raw, virtual_client, virtual_policy};
use tower::{Layer, ServiceExt};

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

/// A `503` whose 1000-byte body comes in chunks of one byte (chunked transfer
/// encoding, as a proxy that streams an upstream's error writes it): far under
/// the drain limit, in more chunks than a cap on chunks alone would allow.
fn trickled_503() -> Vec<u8> {
    let mut answer =
        b"HTTP/1.1 503 Service Unavailable\r\nretry-after-ms: 5\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for _ in 0..1000 {
        answer.extend_from_slice(b"1\r\nx\r\n");
    }
    answer.extend_from_slice(b"0\r\n\r\n");
    answer
}

/// A raw server that answers [`trickled_503`] first, then a 200.
async fn trickled_then_ok() -> support::Server {
    serve_raw(|index| match index {
        0 => trickled_503(),
        _ => OK_200.to_vec(),
    })
    .await
}

#[tokio::test]
async fn a_body_under_the_limit_sent_in_a_thousand_chunks_is_drained_too() {
    let server = trickled_then_ok().await;
    let (client, _) = virtual_client();

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn the_tower_layer_drains_a_body_of_a_thousand_chunks_too() {
    let server = trickled_then_ok().await;
    let (policy, _) = virtual_policy();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let service = RetryLayer::new(policy).layer(client);
    let request = http::Request::get(server.url("/"))
        .body(Full::default())
        .unwrap();

    let response = service.oneshot(request).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert_eq!(server.connections(), 1);
}
