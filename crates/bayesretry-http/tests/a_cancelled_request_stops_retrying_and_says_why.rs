//! A request given a `CancelToken` (`RequestBuilder::with_cancel`, or the
//! token in the request's extensions behind the tower layer) makes no further
//! attempt once the token is cancelled, and fails with `Error::Cancelled`,
//! the reason and the attempts made.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod support;

use bayesretry_http::{Error, RetryLayer};
use bayesretry_policy::CancelToken;
use support::{answer, classic_at_once, serve, streamed_body, virtual_client};
use tower::{Layer as _, Service as _, ServiceExt as _};

#[tokio::test]
async fn a_token_cancelled_during_the_first_attempt_stops_the_retry() {
    let stop = CancelToken::new();
    let pressed = stop.clone();
    // the server is busy, and the user presses stop while it answers
    let server = serve(move |_| {
        pressed.cancel("stopped by the user");
        answer(503, &[])
    })
    .await;
    let (client, sleeper) = virtual_client();

    let result = client
        .get(server.url("/v1/models"))
        .with_cancel(stop)
        .send()
        .await;

    match result {
        Err(Error::Cancelled { reason, attempts }) => {
            assert_eq!(reason, "stopped by the user");
            assert_eq!(attempts, 1);
        }
        other => panic!("not cancelled: {other:?}"),
    }
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().len() <= 1, "no attempt after the cancel");
}

#[tokio::test]
async fn a_token_cancelled_before_the_send_sends_nothing() {
    let server = serve(|_| answer(200, &[])).await;
    let (client, _sleeper) = virtual_client();
    let stop = CancelToken::new();
    stop.cancel("caller went away");

    let request = client
        .get(server.url("/v1/models"))
        .with_cancel(stop)
        .build()
        .unwrap();
    assert!(
        request
            .cancel_token()
            .is_some_and(CancelToken::is_cancelled)
    );
    let result = client.execute(request).await;

    assert!(
        matches!(&result, Err(Error::Cancelled { attempts: 0, reason }) if reason == "caller went away"),
        "{result:?}"
    );
    assert_eq!(
        result.unwrap_err().to_string(),
        "cancelled after 0 attempt(s): caller went away"
    );
    assert_eq!(server.requests(), 0);
}

#[tokio::test]
async fn a_request_without_a_token_is_retried_as_before() {
    let server = serve(|seen| match seen.index {
        0 => answer(503, &[]),
        _ => answer(200, &[]),
    })
    .await;
    let (client, _sleeper) = virtual_client();
    let response = client.get(server.url("/v1/models")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn the_layer_reads_the_token_from_the_request_s_extensions() {
    let stop = CancelToken::new();
    let pressed = stop.clone();
    let inner = tower::service_fn(move |_request: http::Request<String>| {
        pressed.cancel("stopped by the user");
        async {
            Ok::<_, std::io::Error>(
                http::Response::builder()
                    .status(503)
                    .body(String::new())
                    .unwrap(),
            )
        }
    });
    let mut service = RetryLayer::new(classic_at_once(3)).layer(inner);
    let mut request = http::Request::get("http://svc.internal/v1/jobs/1")
        .body(String::new())
        .unwrap();
    request.extensions_mut().insert(stop);

    let result = service.ready().await.unwrap().call(request).await;

    assert!(
        matches!(&result, Err(Error::Cancelled { attempts: 1, reason }) if reason == "stopped by the user"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_streamed_body_whose_token_is_cancelled_is_not_sent() {
    let server = serve(|_| answer(200, &[])).await;
    let (client, _sleeper) = virtual_client();
    let stop = CancelToken::new();
    stop.cancel("caller went away");
    let stream = streamed_body();

    // a body that can be sent only once is sent outside the policy, but a
    // token cancelled before the send still keeps it from going out
    let result = client
        .put(server.url("/v1/files/1"))
        .body(stream)
        .with_cancel(stop)
        .send()
        .await;

    assert!(
        matches!(&result, Err(Error::Cancelled { attempts: 0, reason }) if reason == "caller went away"),
        "{result:?}"
    );
    assert_eq!(server.requests(), 0);
}
