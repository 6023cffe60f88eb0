//! A call whose future is dropped while it sleeps out a server's
//! `Retry-After` — under an outer timeout, a client that went away, a task
//! aborted — ends there: no task left behind sends the retry once the wait
//! runs out. So for `RetryClient` and for `RetryLayer` over a real HTTP
//! client, against a server that counts what it gets.
//!
//! On tokio's paused clock, with tokio's own sleeps: the wait passes without
//! waiting.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]
#![cfg(feature = "tokio")]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::future::Future;
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_http::{RetryClient, RetryLayer};
use bayesretry_policy::RetryPolicy;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{Server, serve_failing_once};
use tower::{Layer as _, ServiceExt as _};

/// A policy that sleeps on tokio's timer, and the sleeps it has begun.
fn tokio_policy() -> (RetryPolicy, Arc<Mutex<Vec<Duration>>>) {
    let begun = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&begun);
    let policy = RetryPolicy::builder()
        .with_sleeper(move |delay: Duration| {
            record.lock().unwrap().push(delay);
            tokio::time::sleep(delay)
        })
        .with_seed(7)
        .build()
        .unwrap();
    (policy, begun)
}

/// Runs `call` until it sleeps before its retry, drops it there, lets an hour
/// pass, and returns the requests the server got.
async fn dropped_in_its_wait<T: Send + 'static>(
    server: &Server,
    begun: &Mutex<Vec<Duration>>,
    call: impl Future<Output = T> + Send + 'static,
) -> usize {
    let call = tokio::spawn(call);
    for _ in 0..10_000 {
        if !begun.lock().unwrap().is_empty() {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(
        *begun.lock().unwrap(),
        [Duration::from_secs(30)],
        "the call sleeps out the server's wait"
    );
    assert_eq!(server.requests(), 1);

    call.abort();
    assert!(call.await.is_err_and(|err| err.is_cancelled()));
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
    server.requests()
}

#[tokio::test(start_paused = true)]
async fn the_client_sends_no_retry_after_its_call_is_dropped() {
    let server = serve_failing_once(429, &[("retry-after", "30")]).await;
    let (policy, begun) = tokio_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let call = client.get(server.url("/v1/chat")).send();
    let requests = dropped_in_its_wait(&server, &begun, call).await;

    assert_eq!(requests, 1, "a retry went out after the call was dropped");
}

#[tokio::test(start_paused = true)]
async fn the_layer_sends_no_retry_after_its_call_is_dropped() {
    let server = serve_failing_once(503, &[("retry-after", "30")]).await;
    let (policy, begun) = tokio_policy();
    let hyper = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let service = RetryLayer::new(policy).layer(hyper);

    let request = http::Request::get(server.url("/v1/models"))
        .body(Full::default())
        .unwrap();
    let requests = dropped_in_its_wait(&server, &begun, service.oneshot(request)).await;

    assert_eq!(requests, 1, "a retry went out after the call was dropped");
}
