//! `x-should-retry`, which the OpenAI and Anthropic APIs send and their
//! official SDKs obey before looking at the status: `false` ends the call at
//! the failure it came with (which the breaker still counts: a 503 is the
//! endpoint failing), `true` makes a status the table calls permanent
//! retryable. The policy still decides whether a retryable failure is worth
//! another attempt, and a request not safe to replay is replayed only after a
//! refusal, as without the header.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::convert::Infallible;
use core::sync::atomic::{AtomicUsize, Ordering};

use bayesretry_http::{NotRetried, RetryClient, RetryLayer};
use support::{Server, answer, serve, serve_failing_once, virtual_client, virtual_policy};
use tower::{Layer, Service, ServiceExt};

/// A chat completion's POST, without an idempotency key: not safe to replay
/// but after a refusal.
async fn post_a_chat(client: &RetryClient, server: &Server) -> reqwest::Response {
    client
        .post(server.url("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn false_ends_the_call_at_a_failure_the_status_would_retry() {
    for status in [429_u16, 500, 503, 529] {
        let server = serve(move |_| answer(status, &[("x-should-retry", "false")])).await;
        let (client, sleeper) = virtual_client();

        let response = client.get(server.url("/v1/models")).send().await.unwrap();

        assert_eq!(response.status().as_u16(), status);
        assert_eq!(server.requests(), 1, "status {status}");
        assert!(sleeper.delays().is_empty(), "status {status}");
    }
}

#[tokio::test]
async fn false_on_a_status_the_table_retries_is_still_counted_by_the_breaker() {
    let server = serve(|_| answer(503, &[("x-should-retry", "false")])).await;
    let (client, sleeper) = virtual_client();

    let mut refused_after = None;
    for call in 0..200 {
        match client.get(server.url("/v1/models")).send().await {
            Ok(response) => assert_eq!(response.status(), 503),
            Err(bayesretry_http::Error::CircuitOpen { attempts, .. }) => {
                assert_eq!(attempts, 0, "a refused call sends nothing");
                refused_after = Some(call);
                break;
            }
            Err(other) => panic!("call {call}: {other}"),
        }
    }

    let calls = refused_after.expect("the breaker opens on a run of 503s");
    assert_eq!(
        server.requests(),
        calls,
        "one request a call until it opened"
    );
    assert!(sleeper.delays().is_empty(), "no call was retried");
}

#[tokio::test]
async fn false_on_a_post_without_a_key_is_the_server_s_word_not_a_held_back_replay() {
    let server = serve(|_| answer(500, &[("x-should-retry", "false")])).await;
    let (client, _) = virtual_client();

    let response = post_a_chat(&client, &server).await;

    assert_eq!(response.status(), 500);
    assert_eq!(server.requests(), 1);
    assert!(response.extensions().get::<NotRetried>().is_none());
}

#[tokio::test]
async fn false_on_a_refusal_ends_a_post_without_a_key_too() {
    // a refusal (429, 529, 408) would let a POST without a key be replayed:
    // the server's word still ends the call, for this request as for a GET
    for status in [429_u16, 529, 408] {
        let server = serve(move |_| answer(status, &[("x-should-retry", "false")])).await;
        let (client, sleeper) = virtual_client();

        let response = post_a_chat(&client, &server).await;

        assert_eq!(response.status().as_u16(), status);
        assert_eq!(server.requests(), 1, "status {status}");
        assert!(sleeper.delays().is_empty(), "status {status}");
        assert!(
            response.extensions().get::<NotRetried>().is_none(),
            "status {status}"
        );
    }
}

#[tokio::test]
async fn false_returns_the_response_even_with_a_wait_beyond_the_limit() {
    // the server says not to retry at all: its wait is no reason to stop with
    // an error, the answer is the response
    let server =
        serve(|_| answer(429, &[("x-should-retry", "false"), ("retry-after", "7200")])).await;
    let (client, _) = virtual_client();

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 429);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn true_retries_a_status_the_table_calls_permanent() {
    let server = serve_failing_once(400, &[("x-should-retry", "true")]).await;
    let (client, sleeper) = virtual_client();

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert_eq!(sleeper.delays().len(), 1);
}

#[tokio::test]
async fn true_does_not_make_a_post_without_a_key_safe_to_replay() {
    let server = serve_failing_once(500, &[("x-should-retry", "true")]).await;
    let (client, _) = virtual_client();

    let response = post_a_chat(&client, &server).await;

    assert_eq!(response.status(), 500);
    assert_eq!(server.requests(), 1);
    assert!(response.extensions().get::<NotRetried>().is_some());
}

#[tokio::test]
async fn any_other_value_leaves_the_status_to_decide() {
    for value in ["maybe", "", "1", "yes"] {
        let server = serve_failing_once(503, &[("x-should-retry", value)]).await;
        let (client, _) = virtual_client();

        let response = client.get(server.url("/v1/models")).send().await.unwrap();

        assert_eq!(response.status(), 200, "value {value:?}");
        assert_eq!(server.requests(), 2, "value {value:?}");
    }
}

#[tokio::test]
async fn the_tower_layer_obeys_it_too() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let inner = tower::service_fn(move |_req: http::Request<String>| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            let response = http::Response::builder()
                .status(529)
                .header("x-should-retry", "false")
                .body(String::new())
                .unwrap();
            Ok::<_, Infallible>(response)
        }
    });
    let (policy, sleeper) = virtual_policy();
    let mut retried = RetryLayer::new(policy).layer(inner);
    let request = http::Request::get("http://api.internal/v1/messages")
        .body(String::new())
        .unwrap();

    let response = retried.ready().await.unwrap().call(request).await.unwrap();

    assert_eq!(response.status(), 529);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(sleeper.delays().is_empty());
}
