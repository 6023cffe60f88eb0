//! Before a retry, the failed response's body is drained, inside the retry's
//! attempt and after the policy's last look at the cancellation token. A token
//! cancelled while that body still trickles in (a proxy relaying an error a
//! few bytes at a time, a server that stalls midway) ends the drain at once:
//! the retry's request is not sent, and the call fails with
//! `Error::Cancelled`, the reason and the attempts really made.
//!
//! On tokio's paused clock: the drain's timer passes without waiting. Each call
//! runs under an hour's guard, so a call that hangs fails the test instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]
// the drain's timer is the `tokio` feature's
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

use bayesretry_http::{Config, Error, RetryClient, RetryLayer};
use bayesretry_policy::{
    CancelToken, Decision, ManualClock, Observer, RetryPolicy, VirtualSleeper,
};
use bytes::Bytes;
use http_body::Frame;
use std::sync::Mutex;
use support::{OK_200, STALLED_503, serve_raw, virtual_policy};
use tower::{Layer as _, Service as _, ServiceExt as _};

/// Longer than any wait in these tests: reaching it means the call hung.
const GUARD: Duration = Duration::from_secs(3600);

async fn guarded<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(GUARD, call)
        .await
        .expect("the call hung on the failed body")
}

#[tokio::test(start_paused = true)]
async fn a_cancel_while_a_stalled_body_is_drained_sends_no_retry() {
    let server = serve_raw(|index| match index {
        0 => STALLED_503.to_vec(),
        _ => OK_200.to_vec(),
    })
    .await;
    let (policy, sleeper) = virtual_policy();
    // a drain long enough that the cancellation comes in the middle of it
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_drain_timeout(Duration::from_secs(10)));
    let stop = CancelToken::new();
    let pressed = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        pressed.cancel("stopped by the user");
    });
    let start = tokio::time::Instant::now();

    let result = guarded(client.get(server.url("/")).with_cancel(stop).send()).await;

    match result {
        Err(Error::Cancelled { reason, attempts }) => {
            assert_eq!(reason, "stopped by the user");
            assert_eq!(attempts, 1, "only the first attempt was sent");
        }
        other => panic!("not cancelled: {other:?}"),
    }
    assert_eq!(server.requests(), 1, "the retry went out after the cancel");
    // the policy decided the retry (its backoff is virtual); the drain, not
    // the backoff, was under way when the cancellation came, and it ended then
    assert_eq!(sleeper.delays().len(), 1);
    assert_eq!(start.elapsed(), Duration::from_secs(5));
}

/// A body that cancels `token` when it is first read (the drain has begun),
/// then never sends its rest; or an empty body.
#[derive(Debug)]
struct CancelsWhenRead {
    token: Option<CancelToken>,
}

impl http_body::Body for CancelsWhenRead {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.token.take() {
            Some(token) => {
                token.cancel("stopped by the user");
                // never woken: the rest never comes
                self.token = Some(token);
                Poll::Pending
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.token.is_none()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(if self.token.is_some() { 100 } else { 0 })
    }
}

/// What the policy's observer is told: decisions, and outcomes learned.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<(usize, Vec<bool>)>>);

impl Observer for Told {
    fn on_decision(&self, _decision: &Decision, _ctx: &bayesretry_policy::Context<'_>) {
        self.0.lock().unwrap().0 += 1;
    }

    fn on_observe(&self, _ctx: &bayesretry_policy::Context<'_>, success: bool) {
        self.0.lock().unwrap().1.push(success);
    }
}

#[tokio::test(start_paused = true)]
async fn the_layer_sends_no_retry_after_a_cancel_during_the_drain() {
    let stop = CancelToken::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let pressed = stop.clone();
    let inner = tower::service_fn(move |_req: http::Request<String>| {
        let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
        let token = first.then(|| pressed.clone());
        async move {
            let status = if first { 503 } else { 200 };
            let body = CancelsWhenRead { token };
            Ok::<_, Infallible>(http::Response::builder().status(status).body(body).unwrap())
        }
    });
    let told = Told::default();
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_seed(7)
        .with_observer(told.clone())
        .build()
        .unwrap();
    let mut retried = RetryLayer::new(policy).layer(inner);
    let mut request = http::Request::get("http://svc.internal/v1/jobs/1")
        .body(String::new())
        .unwrap();
    request.extensions_mut().insert(stop);
    let start = tokio::time::Instant::now();

    let result = guarded(retried.ready().await.unwrap().call(request)).await;

    match result {
        Err(Error::Cancelled { reason, attempts }) => {
            assert_eq!(reason, "stopped by the user");
            assert_eq!(attempts, 1);
        }
        other => panic!("not cancelled: {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the retry went out");
    // the drain ended with the cancellation, not at its timeout
    assert_eq!(start.elapsed(), Duration::ZERO);
    // the retry was decided after the 503; as it never went out, the policy
    // did not learn it as failed
    let (decisions, outcomes) = told.0.lock().unwrap().clone();
    assert_eq!(decisions, 1);
    assert!(
        outcomes.is_empty(),
        "the unsent retry was learned: {outcomes:?}"
    );
}
