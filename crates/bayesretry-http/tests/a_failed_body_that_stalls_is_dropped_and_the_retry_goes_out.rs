//! A failed response whose body stops coming (a `503` that declares 1000 bytes,
//! sends 3 and stalls) is drained only for the drain timeout; then it is
//! dropped, closing its connection, and the retry goes out. The drain is not an
//! attempt: it uses up none, and the policy never sees it as a timeout.
//!
//! On tokio's paused clock: the drain timeout passes without waiting. Each call
//! runs under an hour's guard, so a call that hangs fails the test instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]
// the drain's timer, and the policy's tokio sleeper, are the `tokio` feature's
#![cfg(feature = "tokio")]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::convert::Infallible;
use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_http::{Config, RetryClient, RetryLayer};
use bayesretry_policy::{
    Decision, ErrorClass, ManualClock, Observer, RetryPolicy, TokioSleeper, VirtualSleeper,
};
use bytes::Bytes;
use http_body::Frame;
use support::{OK_200, STALLED_503, serve_raw, virtual_client, virtual_policy};
use tower::{Layer, Service, ServiceExt};

/// Longer than any wait in these tests: reaching it means the call hung.
const GUARD: Duration = Duration::from_secs(3600);

async fn guarded<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(GUARD, call)
        .await
        .expect("the call hung on the stalled body")
}

/// A raw server whose first answer is the stalled 503, and every later one a 200.
async fn stalled_then_ok() -> support::Server {
    serve_raw(|index| match index {
        0 => STALLED_503.to_vec(),
        _ => OK_200.to_vec(),
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn the_retry_goes_out_under_the_default_policy() {
    let server = stalled_then_ok().await;
    let (client, _) = virtual_client();

    let response = guarded(client.get(server.url("/")).send()).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    // the stalled connection was closed, not reused
    assert_eq!(server.connections(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_zero_drain_timeout_drops_the_stalled_body_at_once() {
    let server = stalled_then_ok().await;
    let (policy, _) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_drain_timeout(Duration::ZERO));
    let start = tokio::time::Instant::now();

    let response = guarded(client.get(server.url("/")).send()).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    // no timer was waited on, not even on the paused clock
    assert_eq!(start.elapsed(), Duration::ZERO);
}

/// The error class of every decision the policy made.
#[derive(Clone, Default)]
struct Classes(Arc<Mutex<Vec<ErrorClass>>>);

impl Observer for Classes {
    fn on_decision(&self, _decision: &Decision, ctx: &bayesretry_policy::Context<'_>) {
        self.0.lock().unwrap().push(ctx.error_class());
    }
}

/// Three attempts under a per-attempt `timeout`, each answered by the stalled
/// 503: every attempt must be a request, and the policy must see three 503s.
async fn three_stalled_503s_under(timeout: Duration) {
    let server = serve_raw(|_| STALLED_503.to_vec()).await;
    let classes = Classes::default();
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_attempt_timeout(timeout)
        .with_sleeper(TokioSleeper)
        .with_observer(classes.clone())
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let response = guarded(client.get(server.url("/")).send()).await.unwrap();

    // every attempt was a request, and the last 503 is the answer
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 3);
    let seen = classes.0.lock().unwrap().clone();
    assert_eq!(seen, [ErrorClass::Http(503); 3]);
}

#[tokio::test(start_paused = true)]
async fn with_an_attempt_timeout_the_drain_uses_up_no_attempt() {
    three_stalled_503s_under(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn an_attempt_timeout_shorter_than_the_drain_timeout_bounds_the_drain_to_half() {
    // the default drain timeout, 1 s, would outlast the attempt
    three_stalled_503s_under(Duration::from_millis(800)).await;
}

/// A body that sends `abc` of a declared 1000 bytes and then stalls (`stall`),
/// or is empty.
#[derive(Debug)]
struct Scripted {
    stall: bool,
    sent: bool,
}

impl http_body::Body for Scripted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match (self.stall, self.sent) {
            (false, _) => Poll::Ready(None),
            (true, false) => {
                self.sent = true;
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"abc")))))
            }
            // never woken: the rest never comes
            (true, true) => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        !self.stall
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(if self.stall { 1000 } else { 0 })
    }
}

#[tokio::test(start_paused = true)]
async fn the_layer_drops_a_stalled_body_too() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let inner = tower::service_fn(move |_req: http::Request<String>| {
        let stall = counted.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            let status = if stall { 503 } else { 200 };
            let body = Scripted { stall, sent: false };
            Ok::<_, Infallible>(http::Response::builder().status(status).body(body).unwrap())
        }
    });
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .build()
        .unwrap();
    let mut retried = RetryLayer::new(policy).layer(inner);
    let request = http::Request::get("http://svc.internal/v1/jobs/1")
        .body(String::new())
        .unwrap();

    let response = guarded(retried.ready().await.unwrap().call(request))
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// reqwest's own timeout of a request (`RequestBuilder::timeout`, or the
/// client's) runs from the moment its send starts: the drain of the failed
/// body before a retry must not be counted in the retry's timeout.
#[tokio::test(start_paused = true)]
async fn the_drain_is_not_counted_in_reqwest_s_timeout_of_the_retry() {
    let server = stalled_then_ok().await;
    let client = RetryClient::new(reqwest::Client::new(), support::classic_at_once(2));

    // the default drain timeout, 1 s, is longer than the request's timeout
    let response = guarded(
        client
            .get(server.url("/"))
            .timeout(Duration::from_millis(500))
            .send(),
    )
    .await
    .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_drain_is_not_counted_in_the_client_s_timeout_of_the_retry() {
    let server = stalled_then_ok().await;
    let inner = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let client = RetryClient::new(inner, support::classic_at_once(2));

    let response = guarded(client.get(server.url("/")).send()).await.unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
}
