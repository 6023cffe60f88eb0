//! `RetryLayer`'s service is ready when the service under it is, so that the
//! layers above it see that service's backpressure: a load shedder above
//! sheds while a concurrency limit below is full, as it would without the
//! retry layer, instead of the calls queueing inside it. A service whose
//! readiness fails is done: that is no attempt, and nothing to retry.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::future::{Ready, poll_fn, ready};
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use std::io;

use bayesretry_http::{Error, RetryLayer, Stop};
use http::{Request, Response};
use support::classic_at_once;
use tokio::sync::Semaphore;
use tower::{Service, ServiceBuilder, ServiceExt};

fn request() -> Request<String> {
    Request::get("http://api.example.com/v1/models")
        .body(String::new())
        .unwrap()
}

/// The attempts and the stop of the inner service's `BrokenPipe` failure,
/// which `failed` must be.
fn broken_pipe<T: core::fmt::Debug>(
    failed: Result<T, Error<io::Error, Response<String>>>,
) -> (u32, Stop) {
    match failed {
        Err(Error::Transport {
            source,
            attempts,
            stop,
        }) => {
            assert_eq!(source.kind(), io::ErrorKind::BrokenPipe);
            (attempts, stop)
        }
        other => panic!("expected the inner service's failure, got {other:?}"),
    }
}

// on tokio's paused clock, so that a second call queued inside the layer
// (rather than shed) fails the test at its guard instead of hanging it
#[tokio::test(start_paused = true)]
async fn a_load_shedder_above_sheds_while_a_concurrency_limit_below_is_full() {
    // the inner service answers once the gate lets it
    let gate = Arc::new(Semaphore::new(0));
    let answered = Arc::clone(&gate);
    let inner = tower::service_fn(move |_: Request<String>| {
        let gate = Arc::clone(&answered);
        async move {
            let _permit = gate.acquire().await.unwrap();
            Ok::<_, io::Error>(Response::new(String::from("ok")))
        }
    });
    let mut service = ServiceBuilder::new()
        .load_shed()
        .layer(RetryLayer::new(classic_at_once(3)))
        .concurrency_limit(1)
        .service(inner);

    // the first call takes the limit's one slot and waits at the gate
    let first = service.ready().await.unwrap().call(request());
    let first = tokio::spawn(first);
    tokio::task::yield_now().await;

    // the second finds the limit full: shed at once, not queued
    let second = service.ready().await.unwrap().call(request());
    let second = tokio::time::timeout(Duration::from_secs(3_600), second)
        .await
        .expect("the second call was queued behind the first, not shed");
    let shed = second.expect_err("the second call should be shed");
    assert!(shed.is::<tower::load_shed::error::Overloaded>(), "{shed:?}");

    gate.add_permits(1);
    let response = first.await.unwrap().unwrap();
    assert_eq!(response.body(), "ok");
}

/// A service that fails its readiness, counting its calls.
#[derive(Clone)]
struct Failed(Arc<AtomicU32>);

impl Service<Request<String>> for Failed {
    type Response = Response<String>;
    type Error = io::Error;
    type Future = Ready<Result<Response<String>, io::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            "worker gone",
        )))
    }

    fn call(&mut self, _request: Request<String>) -> Self::Future {
        self.0.fetch_add(1, Ordering::Relaxed);
        ready(Ok(Response::new(String::new())))
    }
}

#[tokio::test]
async fn a_service_whose_readiness_fails_is_not_retried() {
    let calls = Arc::new(AtomicU32::new(0));
    let mut service = ServiceBuilder::new()
        .layer(RetryLayer::new(classic_at_once(3)))
        .service(Failed(Arc::clone(&calls)));

    let failed = poll_fn(|cx| service.poll_ready(cx)).await;

    assert_eq!(broken_pipe(failed), (0, Stop::Permanent));
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}

/// A service that answers its first call with a 503 and then fails: its
/// clones' readiness fails from then on, as a buffer's does once its worker
/// is gone. Counts calls and readiness checks.
#[derive(Clone)]
struct FailsAfterA503 {
    calls: Arc<AtomicU32>,
    readiness: Arc<AtomicU32>,
}

impl Service<Request<String>> for FailsAfterA503 {
    type Response = Response<String>;
    type Error = io::Error;
    type Future = Ready<Result<Response<String>, io::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        self.readiness.fetch_add(1, Ordering::Relaxed);
        if self.calls.load(Ordering::Relaxed) == 0 {
            Poll::Ready(Ok(()))
        } else {
            Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "worker gone",
            )))
        }
    }

    fn call(&mut self, _request: Request<String>) -> Self::Future {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut response = Response::new(String::new());
        *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
        ready(Ok(response))
    }
}

#[tokio::test]
async fn a_retry_whose_service_fails_its_readiness_ends_the_call_at_once() {
    let calls = Arc::new(AtomicU32::new(0));
    let readiness = Arc::new(AtomicU32::new(0));
    let mut service = ServiceBuilder::new()
        .layer(RetryLayer::new(classic_at_once(4)))
        .service(FailsAfterA503 {
            calls: Arc::clone(&calls),
            readiness: Arc::clone(&readiness),
        });

    let failed = service.ready().await.unwrap().call(request()).await;

    // the retry that found the service done is the last attempt
    assert_eq!(broken_pipe(failed), (2, Stop::Permanent));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    // the caller's readiness check, and the one retry's
    assert_eq!(readiness.load(Ordering::Relaxed), 2);
}
