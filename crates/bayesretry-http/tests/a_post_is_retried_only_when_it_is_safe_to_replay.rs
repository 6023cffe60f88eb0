//! POST and PATCH are replayed after any failure only with an idempotency key
//! or an explicit opt-in (after a refusal they are replayed all the same: see
//! `a_post_without_a_key_is_replayed_only_after_a_refusal`); a streamed body is
//! never replayed; the idempotent methods are.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use bayesretry_http::{Config, NotRetried, RetryClient};
use http::Method;
use support::{serve_failing_once, streamed_body, virtual_client, virtual_policy};

async fn busy_then_ok() -> support::Server {
    serve_failing_once(503, &[("retry-after", "1")]).await
}

#[tokio::test]
async fn a_post_without_a_key_is_sent_once_and_says_why() {
    let server = busy_then_ok().await;
    let (client, sleeper) = virtual_client();

    let response = client
        .post(server.url("/v1/charges"))
        .body("{\"amount\":100}")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().is_empty());
    assert_eq!(
        response.extensions().get::<NotRetried>(),
        Some(&NotRetried::NotIdempotent(Method::POST))
    );
}

#[tokio::test]
async fn a_post_with_an_idempotency_key_is_retried_with_the_same_key() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();

    let response = client
        .post(server.url("/v1/charges"))
        .header("Idempotency-Key", "charge-7")
        .body("{\"amount\":100}")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    for seen in server.seen() {
        assert_eq!(seen.headers["idempotency-key"], "charge-7");
    }
}

#[tokio::test]
async fn an_empty_idempotency_key_is_no_key() {
    // a key with no value deduplicates nothing: a server ignores it (or
    // rejects it), and a replay could do the POST's work twice
    for key in ["", "  ", "\t"] {
        let server = busy_then_ok().await;
        let (client, sleeper) = virtual_client();

        let response = client
            .post(server.url("/v1/charges"))
            .header("Idempotency-Key", key)
            .body("{\"amount\":100}")
            .send()
            .await
            .unwrap();

        assert_eq!(server.requests(), 1, "{key:?}");
        assert_eq!(response.status(), 503, "{key:?}");
        assert!(sleeper.delays().is_empty(), "{key:?}");
        assert_eq!(
            response.extensions().get::<NotRetried>(),
            Some(&NotRetried::NotIdempotent(Method::POST)),
            "{key:?}"
        );
    }
}

#[tokio::test]
async fn the_key_header_name_is_configurable() {
    let server = busy_then_ok().await;
    let (policy, _) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy).with_config(
        Config::new().with_idempotency_header(http::HeaderName::from_static("x-request-id")),
    );

    let keyed = client
        .patch(server.url("/v1/jobs/1"))
        .header("x-request-id", "r-1")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(keyed.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_post_the_caller_opts_in_is_retried() {
    let server = busy_then_ok().await;
    let (client, _) = virtual_client();

    let response = client
        .post(server.url("/v1/embeddings"))
        .body("{}")
        .idempotent()
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn the_idempotent_methods_are_retried() {
    for method in [Method::GET, Method::PUT, Method::DELETE, Method::OPTIONS] {
        let server = busy_then_ok().await;
        let (client, _) = virtual_client();
        let response = client
            .request(method.clone(), server.url("/"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{method}");
        assert_eq!(server.requests(), 2, "{method}");
    }
}

#[tokio::test]
async fn a_streamed_body_is_sent_once_and_says_why() {
    let server = busy_then_ok().await;
    let (client, sleeper) = virtual_client();
    let stream = streamed_body();

    let response = client
        .put(server.url("/v1/files/1"))
        .body(stream)
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().is_empty());
    assert_eq!(
        response.extensions().get::<NotRetried>(),
        Some(&NotRetried::BodyNotClonable)
    );
}
