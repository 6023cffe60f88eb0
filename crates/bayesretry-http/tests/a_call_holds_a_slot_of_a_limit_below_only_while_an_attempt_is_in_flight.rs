//! A concurrency limit under `RetryLayer` bounds every attempt, retries
//! included, and a call holds one of its slots only while an attempt is in
//! flight: not while it sleeps before a retry, and not while it waits for an
//! open breaker to admit its first attempt. A call that held the slot through
//! such a wait would shut out every other call through the limit — those to
//! other endpoints too — while sending nothing.
//!
//! The policy sleeps on a gate the test opens, and its clock is moved by the
//! length of each sleep once the gate lets it end: no time passes for real.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::future::{Future, poll_fn};
use core::pin::pin;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::io;
use std::sync::Mutex;

use bayesretry_http::RetryLayer;
use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy, VirtualSleeper};
use http::{Request, Response, StatusCode};
use tokio::sync::Semaphore;
use tower::{Service, ServiceBuilder, ServiceExt};

/// Sleeps that end when the test opens their gate, each then moving the
/// clock by its length.
#[derive(Clone)]
struct Gate {
    clock: ManualClock,
    open: Arc<Semaphore>,
    delays: Arc<Mutex<Vec<Duration>>>,
}

impl Gate {
    fn new(clock: ManualClock) -> Gate {
        Gate {
            clock,
            open: Arc::new(Semaphore::new(0)),
            delays: Arc::default(),
        }
    }

    /// Lets one sleep end.
    fn open_once(&self) {
        self.open.add_permits(1);
    }

    fn delays(&self) -> Vec<Duration> {
        self.delays.lock().unwrap().clone()
    }
}

/// A policy whose async sleeps wait at `gate`, on `gate`'s clock; `build`
/// adds what the test needs.
fn policy(
    gate: &Gate,
    build: impl FnOnce(bayesretry_policy::Builder) -> bayesretry_policy::Builder,
) -> RetryPolicy {
    let gated = gate.clone();
    let builder = RetryPolicy::builder()
        .with_clock(gate.clock.clone())
        .with_blocking_sleeper(VirtualSleeper::new(gate.clock.clone()))
        .with_sleeper(move |delay: Duration| {
            let gate = gated.clone();
            async move {
                gate.delays.lock().unwrap().push(delay);
                gate.open.acquire().await.unwrap().forget();
                gate.clock.advance(delay);
            }
        })
        .with_seed(7);
    build(builder).build().unwrap()
}

/// A server in memory: `GET /busy` is answered 503 the first time, every
/// other request 200; each call waits for a permit of `answer` first. Counts
/// the calls it got, and the most in flight at once.
#[derive(Clone)]
struct Server {
    answer: Arc<Semaphore>,
    calls: Arc<AtomicU32>,
    in_flight: Arc<AtomicU32>,
    most: Arc<AtomicU32>,
}

impl Server {
    fn new() -> Server {
        Server {
            answer: Arc::new(Semaphore::new(0)),
            calls: Arc::default(),
            in_flight: Arc::default(),
            most: Arc::default(),
        }
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    fn service(&self) -> Server {
        self.clone()
    }
}

impl Service<Request<String>> for Server {
    type Response = Response<String>;
    type Error = io::Error;
    type Future = core::pin::Pin<Box<dyn Future<Output = io::Result<Response<String>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<String>) -> Self::Future {
        let server = self.clone();
        Box::pin(async move {
            let call = server.calls.fetch_add(1, Ordering::SeqCst);
            let now = server.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            server.most.fetch_max(now, Ordering::SeqCst);
            server.answer.acquire().await.unwrap().forget();
            server.in_flight.fetch_sub(1, Ordering::SeqCst);
            let status = match (call, request.uri().path()) {
                (0, "/busy") => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::OK,
            };
            let mut response = Response::new(String::new());
            *response.status_mut() = status;
            Ok(response)
        })
    }
}

fn get(url: &str) -> Request<String> {
    Request::get(url).body(String::new()).unwrap()
}

/// Whether `service` is ready at once.
fn ready_now<S: Service<Request<String>>>(service: &mut S) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    matches!(service.poll_ready(&mut cx), Poll::Ready(Ok(())))
}

/// Lets the spawned tasks run until none can go further.
async fn settle() {
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_sleeping_before_its_retry_leaves_the_slot_and_its_retry_waits_for_one() {
    let gate = Gate::new(ManualClock::new(0));
    let policy = policy(&gate, |b| b.classic().with_max_attempts(3));
    let server = Server::new();
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(policy))
        .concurrency_limit(1)
        .service(server.service());

    // A's first attempt is answered 503, and A sleeps before its retry
    server.answer.add_permits(1);
    let a = tokio::spawn(service.clone().oneshot(get("http://api.example.com/busy")));
    settle().await;
    assert_eq!(server.calls(), 1);
    assert_eq!(gate.delays().len(), 1, "A sleeps before its retry");

    // B finds the slot free while A sleeps, and takes it
    let mut b_service = service.clone();
    assert!(
        ready_now(&mut b_service),
        "A held the slot through its sleep"
    );
    let b = tokio::spawn(b_service.call(get("http://api.example.com/other")));
    settle().await;
    assert_eq!(server.calls(), 2);

    // A's sleep ends: its retry waits for B's slot instead of going around it
    gate.open_once();
    settle().await;
    assert_eq!(server.calls(), 2, "A's retry went out beside B");

    // B is answered, and A's retry goes out in the slot B left
    server.answer.add_permits(2);
    assert_eq!(b.await.unwrap().unwrap().status(), 200);
    assert_eq!(a.await.unwrap().unwrap().status(), 200);
    assert_eq!(server.calls(), 3);
    assert_eq!(server.most.load(Ordering::SeqCst), 1);
}

/// Fails calls to `endpoint` until its breaker opens.
fn open_breaker(policy: &RetryPolicy, clock: &ManualClock, endpoint: &str) {
    for _ in 0..1_000 {
        let _ = policy.run_blocking(endpoint, |_| Err::<(), _>(HttpStatus(503)));
        let state = policy.breaker_state(endpoint);
        if state.is_some_and(|state| format!("{state:?}").starts_with("Open")) {
            return;
        }
        clock.advance(Duration::from_millis(100));
    }
    panic!("a dead endpoint opens the breaker");
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_waiting_for_an_open_breaker_leaves_the_slot_to_calls_elsewhere() {
    let gate = Gate::new(ManualClock::new(0));
    let policy = policy(&gate, |b| {
        b.with_max_elapsed(Duration::from_secs(30))
            .with_wait_while_open(Duration::from_secs(10))
    });
    open_breaker(&policy, &gate.clock, "http://down.example.com");
    let server = Server::new();
    let mut service = ServiceBuilder::new()
        .layer(RetryLayer::new(policy))
        .concurrency_limit(1)
        .service(server.service());

    // A, to the endpoint whose breaker is open, waits for it to admit a probe
    service.ready().await.unwrap();
    let a = service.call(get("http://down.example.com/v1/models"));
    let mut a = pin!(a);
    let polled = poll_fn(|cx| Poll::Ready(a.as_mut().poll(cx))).await;
    assert!(polled.is_pending());
    assert_eq!(gate.delays().len(), 1, "A waits for the breaker");
    assert_eq!(server.calls(), 0);

    // B, to another endpoint, is not kept out while A sends nothing
    assert!(
        ready_now(&mut service),
        "A held the limit's one slot through its wait for the breaker"
    );
    server.answer.add_permits(1);
    let b = service.call(get("http://up.example.com/v1/models")).await;
    assert_eq!(b.unwrap().status(), 200);

    // A's wait ends: its probe goes out, in a slot of its own
    gate.open_once();
    server.answer.add_permits(1);
    let a = a.await.unwrap();
    assert_eq!(a.status(), 200);
    assert_eq!(server.calls(), 2);
    assert_eq!(server.most.load(Ordering::SeqCst), 1);
}
