//! A request given a price of its own (`RequestBuilder::with_cost_model`,
//! `Request::with_cost_model`, or a `CostModel` in the extensions behind the
//! tower layer and the middleware) has its retries judged at that price,
//! over the odds its endpoint has taught the policy.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

mod support;

use core::sync::atomic::Ordering;

use bayesretry_cost::CostModel;
use bayesretry_http::{RetryClient, RetryLayer};
use bayesretry_policy::{ManualClock, RetryPolicy, VirtualSleeper};
use support::{answer, inner_answering, serve};
use tower::{Layer as _, Service as _, ServiceExt as _};

/// A learning policy on virtual time, without a breaker: a 503 never seen
/// before has even odds, and at the default price (a success worth ten
/// attempts) it is retried.
fn learning() -> RetryPolicy {
    RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .without_breaker()
        .with_max_attempts(2)
        .build()
        .unwrap()
}

/// A success worth little more than the attempt: even odds do not pay.
fn cheap() -> CostModel {
    CostModel::new(1.2, 1.0).unwrap()
}

#[tokio::test]
async fn a_cheap_request_is_not_retried_where_the_policy_s_price_retries() {
    let server = serve(|_| answer(503, &[])).await;
    let client = RetryClient::new(reqwest::Client::new(), learning());

    let response = client
        .get(server.url("/v1/embeddings"))
        .with_cost_model(cheap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1, "not worth a retry at 1.2");

    // the same request at the policy's price: retried (odds of ½ minus what
    // the first 503 taught are still worth it at 10)
    let response = client
        .get(server.url("/v1/embeddings"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1 + 2);
}

#[tokio::test]
async fn a_built_request_keeps_its_price() {
    let server = serve(|_| answer(503, &[])).await;
    let client = RetryClient::new(reqwest::Client::new(), learning());

    let request = client
        .get(server.url("/v1/embeddings"))
        .with_cost_model(cheap())
        .build()
        .unwrap();
    assert_eq!(request.cost_model(), Some(cheap()));
    assert!(format!("{request:?}").contains("cost_model: Some("));
    let response = client.execute(request).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);

    // priced on the built request itself
    let request = client
        .get(server.url("/v1/embeddings"))
        .build()
        .unwrap()
        .with_cost_model(cheap());
    client.execute(request).await.unwrap();
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn the_layer_reads_the_price_from_the_request_s_extensions() {
    let (inner, calls) = inner_answering(503);
    let mut service = RetryLayer::new(learning()).layer(inner);
    let request = |priced: bool| {
        let mut request = http::Request::get("http://svc.internal/v1/embeddings")
            .body(String::new())
            .unwrap();
        if priced {
            request.extensions_mut().insert(cheap());
        }
        request
    };

    let response = service.ready().await.unwrap().call(request(true)).await;
    assert_eq!(response.unwrap().status(), 503);
    assert_eq!(calls.load(Ordering::Relaxed), 1);

    let response = service.ready().await.unwrap().call(request(false)).await;
    assert_eq!(response.unwrap().status(), 503);
    assert_eq!(calls.load(Ordering::Relaxed), 1 + 2);
}

#[cfg(feature = "middleware")]
#[tokio::test]
async fn the_middleware_reads_the_price_from_the_chain_s_extensions() {
    let server = serve(|_| answer(503, &[])).await;
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(bayesretry_http::RetryMiddleware::new(learning()))
        .build();

    let response = client
        .get(server.url("/v1/embeddings"))
        .with_extension(cheap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
}
