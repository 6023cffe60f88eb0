//! `RetryMiddleware` in a `reqwest_middleware` chain: the same rules as
//! `RetryClient`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]
#![cfg(feature = "middleware")]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_http::{Idempotent, MiddlewareError, RetryMiddleware};
use bayesretry_policy::RetryPolicy;
use support::{answer, serve, serve_failing_once, streamed_body, virtual_policy};

/// A reqwest client whose middleware chain is `RetryMiddleware` under `policy`.
fn retried(policy: RetryPolicy) -> reqwest_middleware::ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(policy))
        .build()
}

#[tokio::test]
async fn a_503_with_a_hint_then_a_200_through_the_middleware() {
    let server = serve_failing_once(503, &[("retry-after", "1")]).await;
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
    let (policy, sleeper) = virtual_policy();
    let client = retried(policy);

    let once = client
        .post(server.url("/"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(once.status(), 503);
    assert_eq!(server.requests(), 1);
    // the 503's wait holds the origin for every request until it runs out
    sleeper.clock().advance(Duration::from_secs(1));

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
    let server = serve_failing_once(429, &[("retry-after", "1")]).await;
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

/// What a middleware below the retries wrote in the chain's extensions: the
/// number of the attempt it saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AttemptSeen(u32);

/// Counts an attempt on `attempts` and writes its number in `extensions`.
fn note_attempt(attempts: &AtomicU32, extensions: &mut http::Extensions) -> u32 {
    let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    extensions.insert(AttemptSeen(attempt));
    attempt
}

/// Below the retries: counts the attempts and writes each one's number in
/// the extensions, as a middleware that leaves a note for those above it does.
struct Counting(AtomicU32);

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for Counting {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut http::Extensions,
        next: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        note_attempt(&self.0, extensions);
        next.run(request, extensions).await
    }
}

/// Above the retries: keeps what the chain below left in the extensions.
struct Reading(Mutex<Option<AttemptSeen>>);

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for Reading {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut http::Extensions,
        next: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let response = next.run(request, extensions).await;
        *self.0.lock().unwrap() = extensions.get::<AttemptSeen>().copied();
        response
    }
}

/// A chain of [`Reading`], `RetryMiddleware` under `policy`, and `below`; and
/// the `Reading`, to look at afterwards.
fn between(
    policy: RetryPolicy,
    below: impl reqwest_middleware::Middleware,
) -> (reqwest_middleware::ClientWithMiddleware, Arc<Reading>) {
    let reading = Arc::new(Reading(Mutex::new(None)));
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with_arc(reading.clone())
        .with(RetryMiddleware::new(policy))
        .with(below)
        .build();
    (client, reading)
}

#[tokio::test]
async fn what_the_chain_below_writes_in_the_extensions_reaches_the_chain_above() {
    let server = serve_failing_once(503, &[]).await;
    let (policy, _) = virtual_policy();
    let (client, reading) = between(policy, Counting(AtomicU32::new(0)));

    let response = client.get(server.url("/")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    // the last attempt's note, as without the retries in between
    assert_eq!(*reading.0.lock().unwrap(), Some(AttemptSeen(2)));
}

/// Below the retries, in place of the server: writes each attempt's number
/// in the extensions, then answers the first attempt with a 503 and never
/// answers the second.
struct ThenStalls(AtomicU32);

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for ThenStalls {
    async fn handle(
        &self,
        _request: reqwest::Request,
        extensions: &mut http::Extensions,
        _next: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        if note_attempt(&self.0, extensions) == 1 {
            return Ok(http::Response::builder()
                .status(503)
                .body("")
                .unwrap()
                .into());
        }
        core::future::pending().await
    }
}

#[tokio::test]
async fn a_last_attempt_cut_off_by_its_timeout_hands_back_its_own_extensions() {
    // the policy's timer is a virtual sleep: the attempt that waits is cut off
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(2)
        .with_attempt_timeout(Duration::from_secs(5))
        .with_virtual_time(bayesretry_policy::VirtualSleeper::new(
            bayesretry_policy::ManualClock::new(0),
        ))
        .build()
        .unwrap();
    let (client, reading) = between(policy, ThenStalls(AtomicU32::new(0)));

    let err = client
        .get("http://api.example.com/v1/chat")
        .send()
        .await
        .unwrap_err();

    let reqwest_middleware::Error::Middleware(err) = err else {
        panic!("a timeout is this crate's error: {err:?}");
    };
    let err = err.downcast_ref::<MiddlewareError>().unwrap();
    assert!(
        matches!(
            err,
            bayesretry_http::Error::AttemptTimedOut { attempts: 2, .. }
        ),
        "{err:?}"
    );
    // the note of the attempt the call ended on, not of the 503 before it
    assert_eq!(*reading.0.lock().unwrap(), Some(AttemptSeen(2)));
}

#[tokio::test]
async fn a_cancel_token_in_the_extensions_ends_the_call() {
    let stop = bayesretry_policy::CancelToken::new();
    let pressed = stop.clone();
    let server = serve(move |_| {
        pressed.cancel("stopped by the user");
        answer(503, &[])
    })
    .await;
    let (policy, _) = virtual_policy();
    let client = retried(policy);

    let err = client
        .get(server.url("/"))
        .with_extension(stop)
        .send()
        .await
        .unwrap_err();

    let reqwest_middleware::Error::Middleware(err) = err else {
        panic!("a cancellation is this crate's error: {err:?}");
    };
    let err = err.downcast_ref::<MiddlewareError>().unwrap();
    assert!(
        matches!(err, bayesretry_http::Error::Cancelled { attempts: 1, reason } if reason == "stopped by the user"),
        "{err:?}"
    );
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_streamed_body_whose_token_is_cancelled_is_not_sent() {
    let server = serve(|_| answer(200, &[])).await;
    let (policy, _) = virtual_policy();
    let client = retried(policy);
    let stop = bayesretry_policy::CancelToken::new();
    stop.cancel("caller went away");
    let body = streamed_body();

    let err = client
        .put(server.url("/"))
        .body(body)
        .with_extension(stop)
        .send()
        .await
        .unwrap_err();

    let reqwest_middleware::Error::Middleware(err) = err else {
        panic!("a cancellation is this crate's error: {err:?}");
    };
    let err = err.downcast_ref::<MiddlewareError>().unwrap();
    assert!(
        matches!(err, bayesretry_http::Error::Cancelled { attempts: 0, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests(), 0);
}
