//! Nothing listens at first: the connection is refused, classified as such, and
//! retried; the server comes up during the backoff, and the retry succeeds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

mod support;

use alloc::sync::Arc;
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_http::{Error, RetryClient, Stop};
use bayesretry_policy::{ErrorClass, Reason, RetryPolicy};
use support::{answer, classic_at_once, closed_port, serve_on};

#[tokio::test]
async fn the_retry_after_the_refusal_reaches_the_new_server() {
    let addr = closed_port();
    let started: Arc<Mutex<Option<support::Server>>> = Arc::default();
    let slept: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let (started_in_sleep, slept_in_sleep) = (Arc::clone(&started), Arc::clone(&slept));
    // the sleeper starts the server on the refused port instead of waiting
    let sleeper = move |delay: Duration| {
        slept_in_sleep.lock().unwrap().push(delay);
        let mut started = started_in_sleep.lock().unwrap();
        if started.is_none() {
            let listener = std::net::TcpListener::bind(addr).unwrap();
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            *started = Some(serve_on(listener, |_| answer(200, &[])));
        }
        core::future::ready(())
    };
    let policy = RetryPolicy::builder()
        .with_sleeper(sleeper)
        .with_seed(3)
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy.clone());

    let response = client
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 200);
    assert_eq!(slept.lock().unwrap().len(), 1);
    let server = started.lock().unwrap().clone().unwrap();
    assert_eq!(server.requests(), 1);
    // the refusal was learned under its own class, and the retry as a success
    let endpoint = format!("http://{addr}");
    let ctx = bayesretry_policy::Context::new(&endpoint, 1, ErrorClass::ConnectionRefused);
    assert!(policy.posterior(&ctx).mean() > 0.5);
}

#[tokio::test]
async fn a_server_that_never_comes_up_ends_in_a_transport_error() {
    let addr = closed_port();
    let policy = classic_at_once(3);
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let err = client
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap_err();

    match &err {
        Error::Transport {
            source,
            attempts,
            stop,
        } => {
            assert!(source.is_connect(), "{source}");
            assert_eq!(*attempts, 3);
            assert_eq!(*stop, Stop::Policy(Reason::MaxAttempts));
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    // the transport error is the source, to downcast, and not in the line
    let source = core::error::Error::source(&err).unwrap();
    assert!(source.downcast_ref::<reqwest::Error>().is_some());
    assert_eq!(
        err.to_string(),
        "request failed after 3 attempt(s), no further attempt (attempt cap reached)"
    );
}
