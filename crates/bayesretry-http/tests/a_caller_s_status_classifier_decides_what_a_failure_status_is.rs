//! `Config::with_status_classifier` decides how a failure status is
//! classified where the policy's table does not fit an API: a 404 retried, a
//! 500 sent once; `None` leaves a status to the table; the server's
//! `x-should-retry: false` still ends the call. For the client and the tower
//! layer alike.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod support;

use bayesretry_http::{Config, RetryClient, RetryLayer};
use bayesretry_policy::{Classification, ErrorClass};
use http::StatusCode;
use support::{answer, classic_at_once, serve};
use tower::{Layer as _, Service as _, ServiceExt as _};

/// 404 is retryable (an object not there yet), 500 permanent, the rest the table's.
fn eventual_consistency() -> Config {
    Config::new().with_status_classifier(|status, _headers| match status {
        StatusCode::NOT_FOUND => Some(Classification::Retryable(ErrorClass::from_status(404))),
        StatusCode::INTERNAL_SERVER_ERROR => Some(Classification::Permanent),
        _ => None,
    })
}

/// `status` with `headers` on the first request, 200 after.
async fn failing_once(
    status: u16,
    headers: &'static [(&'static str, &'static str)],
) -> support::Server {
    serve(move |seen| match seen.index {
        0 => answer(status, headers),
        _ => answer(200, &[]),
    })
    .await
}

fn client() -> RetryClient {
    RetryClient::new(reqwest::Client::new(), classic_at_once(3)).with_config(eventual_consistency())
}

#[tokio::test]
async fn a_404_the_caller_calls_retryable_is_retried() {
    let server = failing_once(404, &[]).await;
    let response = client().get(server.url("/objects/7")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_500_the_caller_calls_permanent_is_sent_once() {
    let server = failing_once(500, &[]).await;
    let response = client().get(server.url("/objects/7")).send().await.unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_permanent_status_is_not_retried_whatever_the_server_says() {
    // the caller's word is final over `x-should-retry: true` and a Retry-After
    let server = failing_once(500, &[("x-should-retry", "true"), ("retry-after", "1")]).await;
    let response = client().get(server.url("/objects/7")).send().await.unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_status_the_caller_calls_retryable_does_not_replay_a_post() {
    // what a response is retried as changes, not whether a request not safe
    // to replay may go out again: a 404 is no refusal
    let server = failing_once(404, &[]).await;
    let response = client()
        .post(server.url("/objects"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_status_the_caller_leaves_is_classified_by_the_table() {
    let retried = failing_once(503, &[]).await;
    assert_eq!(
        client()
            .get(retried.url("/x"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(retried.requests(), 2);

    let permanent = failing_once(401, &[]).await;
    assert_eq!(
        client()
            .get(permanent.url("/x"))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(permanent.requests(), 1);
}

#[tokio::test]
async fn the_server_s_x_should_retry_false_still_ends_the_call() {
    let server = failing_once(404, &[("x-should-retry", "false")]).await;
    let response = client().get(server.url("/objects/7")).send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn the_layer_follows_the_caller_s_classifier_too() {
    let server = failing_once(404, &[]).await;
    let inner = tower::service_fn(move |request: http::Request<String>| {
        let url = server.url(request.uri().path());
        async move {
            let response = reqwest::get(url).await?;
            let status = response.status();
            Ok::<_, reqwest::Error>(
                http::Response::builder()
                    .status(status)
                    .body(String::new())
                    .unwrap(),
            )
        }
    });
    let mut service = RetryLayer::new(classic_at_once(3))
        .with_config(eventual_consistency())
        .layer(inner);
    let request = http::Request::get("http://store.internal/objects/7")
        .body(String::new())
        .unwrap();
    let response = service.ready().await.unwrap().call(request).await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
#[should_panic(expected = "a bug in the caller's classifier")]
async fn a_classifier_that_panics_unwinds_out_of_the_send() {
    let server = failing_once(503, &[]).await;
    let config = Config::new().with_status_classifier(|_status, _headers| {
        panic!("a bug in the caller's classifier");
    });
    let client = RetryClient::new(reqwest::Client::new(), classic_at_once(3)).with_config(config);
    let _ = client.get(server.url("/objects/7")).send().await;
}
