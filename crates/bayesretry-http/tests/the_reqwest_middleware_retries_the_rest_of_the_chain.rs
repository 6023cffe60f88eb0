//! `RetryMiddleware` in a `reqwest_middleware` chain: the same rules as
//! `RetryClient`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]
#![cfg(feature = "middleware")]

mod support;

use core::time::Duration;

use bayesretry_http::{Idempotent, MiddlewareError, RetryMiddleware};
use bayesretry_policy::RetryPolicy;
use support::{answer, serve, virtual_policy};

/// A reqwest client whose middleware chain is `RetryMiddleware` under `policy`.
fn retried(policy: RetryPolicy) -> reqwest_middleware::ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(policy))
        .build()
}

#[tokio::test]
async fn a_503_with_a_hint_then_a_200_through_the_middleware() {
    let server = serve(|seen| match seen.index {
        0 => answer(503, &[("retry-after", "1")]),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, sleeper) = virtual_policy();
    let client = retried(policy);

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert_eq!(sleeper.delays(), [Duration::from_secs(1)]);
}

#[tokio::test]
async fn a_post_is_replayed_only_with_the_idempotent_extension() {
    let server = serve(|seen| match seen.index {
        0 | 1 => answer(503, &[("retry-after", "1")]),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, _) = virtual_policy();
    let client = retried(policy);

    let once = client
        .post(server.url("/"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(once.status(), 503);
    assert_eq!(server.requests(), 1);

    let marked = client
        .post(server.url("/"))
        .with_extension(Idempotent)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(marked.status(), 200);
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn a_post_without_a_key_is_replayed_after_a_429() {
    let server = serve(|seen| match seen.index {
        0 => answer(429, &[("retry-after", "1")]),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, _) = virtual_policy();
    let client = retried(policy);

    let response = client
        .post(server.url("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_hint_above_the_cap_arrives_as_this_crates_error() {
    let server = serve(|_| answer(429, &[("retry-after", "7200")])).await;
    let (policy, sleeper) = virtual_policy();
    let client = retried(policy);

    let err = client.get(server.url("/")).send().await.unwrap_err();

    let reqwest_middleware::Error::Middleware(err) = err else {
        panic!("expected a middleware error, got {err:?}");
    };
    let err = err.downcast_ref::<MiddlewareError>().unwrap();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7200)));
    assert!(sleeper.delays().is_empty());
}
