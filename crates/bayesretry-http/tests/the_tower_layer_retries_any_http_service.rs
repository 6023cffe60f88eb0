//! `RetryLayer` around a real HTTP client service (hyper-util's): the same
//! rules as `RetryClient` — the server's hint waited, the cap honoured, POST
//! sent once unless safe to replay.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;

use bayesretry_http::{Error, Idempotent, RetryLayer};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{answer, classic_at_once, closed_port, serve, serve_failing_once, virtual_policy};
use tower::{Layer, Service};

type Body = Full<Bytes>;

fn hyper_client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Body> {
    Client::builder(TokioExecutor::new()).build_http()
}

async fn call<S>(service: &mut S, request: Request<Body>) -> Result<S::Response, S::Error>
where
    S: Service<Request<Body>>,
{
    core::future::poll_fn(|cx| service.poll_ready(cx)).await?;
    service.call(request).await
}

#[tokio::test]
async fn a_503_with_a_hint_then_a_200_through_the_layer() {
    let server = serve_failing_once(503, &[("retry-after", "1")]).await;
    let (policy, sleeper) = virtual_policy();
    let mut service = RetryLayer::new(policy).layer(hyper_client());

    let request = Request::get(server.url("/v1/models"))
        .body(Body::default())
        .unwrap();
    let response = call(&mut service, request).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert_eq!(sleeper.delays(), [Duration::from_secs(1)]);
    // the failed body was drained: one connection
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_post_is_sent_once_unless_marked_or_keyed() {
    // each call's first attempt meets a 503, a retry a 200
    let server = serve(|seen| match seen.index {
        0 | 1 | 3 => answer(503, &[("retry-after", "1")]),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, sleeper) = virtual_policy();
    let mut service = RetryLayer::new(policy).layer(hyper_client());

    let plain = Request::post(server.url("/v1/jobs"))
        .body(Body::from("{}"))
        .unwrap();
    let response = call(&mut service, plain).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
    // each 503's wait holds the origin for every request until it runs out
    sleeper.clock().advance(Duration::from_secs(1));

    let mut marked = Request::post(server.url("/v1/jobs"))
        .body(Body::from("{}"))
        .unwrap();
    marked.extensions_mut().insert(Idempotent);
    let response = call(&mut service, marked).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 3);
    sleeper.clock().advance(Duration::from_secs(1));

    let keyed = Request::post(server.url("/v1/jobs"))
        .header("idempotency-key", "job-9")
        .body(Body::from("{}"))
        .unwrap();
    let response = call(&mut service, keyed).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 5);
}

#[tokio::test]
async fn a_hint_above_the_cap_is_a_typed_error_and_the_cap_holds() {
    let server = serve(|seen| match seen.index {
        0 => answer(429, &[("retry-after", "86400")]),
        _ => answer(503, &[("retry-after", "1")]),
    })
    .await;
    let (policy, sleeper) = virtual_policy();
    let mut service = RetryLayer::new(policy).layer(hyper_client());

    let request = Request::get(server.url("/")).body(Body::default()).unwrap();
    let err = call(&mut service, request).await.unwrap_err();
    assert!(
        matches!(err, Error::RetryAfterBeyondLimit { .. }),
        "{err:?}"
    );
    assert_eq!(err.retry_after(), Some(Duration::from_secs(86_400)));
    assert!(sleeper.delays().is_empty());

    let request = Request::get(server.url("/")).body(Body::default()).unwrap();
    let response = call(&mut service, request).await.unwrap();
    assert_eq!(response.status(), 503);
    assert!(server.requests() <= 1 + bayesretry_policy::DEFAULT_MAX_ATTEMPTS as usize);
}

#[tokio::test]
async fn a_refused_connection_is_classified_by_the_callers_classifier() {
    let addr = closed_port();
    let policy = classic_at_once(2);
    let mut service = RetryLayer::new(policy)
        .with_classifier(|err: &hyper_util::client::legacy::Error| {
            bayesretry_http::classify_service_error(err)
        })
        .layer(hyper_client());

    let request = Request::get(format!("http://{addr}/"))
        .body(Body::default())
        .unwrap();
    let err = call(&mut service, request).await.unwrap_err();
    assert_eq!(err.attempts(), 2, "{err:?}");
    assert!(err.transport().is_some_and(|e| e.is_connect()));
}
