//! Behind `RetryMiddleware`, a call whose last attempt failed in transport
//! comes back as the chain gave it, so that `is_connect()` and its kin answer
//! as without retries; asked to (`with_wrapped_transport_errors`), it tells
//! the caller what `RetryClient` and the tower layer tell: the attempts made
//! and why no further one followed (the attempt cap, the deadline). It then
//! arrives as `reqwest_middleware::Error::Middleware` holding a
//! `MiddlewareError::Transport`, whose `transport()` is the chain's own error.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]
#![cfg(feature = "middleware")]

mod support;

use core::fmt;
use core::time::Duration;

use bayesretry_backoff::Jitter;
use bayesretry_http::{Error, MiddlewareError, RetryMiddleware, Stop};
use bayesretry_policy::{ManualClock, Reason, RetryPolicy, VirtualSleeper};
use http::Extensions;
use reqwest_middleware::{Middleware, Next};
use support::{classic_at_once, closed_port};

/// A reqwest client whose middleware chain is `RetryMiddleware` under
/// `policy`, wrapping its transport errors, then `below`.
fn retried(
    policy: RetryPolicy,
    below: Option<FailsBelow>,
) -> reqwest_middleware::ClientWithMiddleware {
    let builder = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(policy).with_wrapped_transport_errors());
    match below {
        Some(below) => builder.with(below),
        None => builder,
    }
    .build()
}

/// What the middleware's caller gets: the `MiddlewareError` inside.
fn unwrap_middleware_error(err: &reqwest_middleware::Error) -> &MiddlewareError {
    let reqwest_middleware::Error::Middleware(err) = err else {
        panic!("the chain's error came back bare: {err:?}");
    };
    err.downcast_ref::<MiddlewareError>()
        .expect("this crate's error over the chain's")
}

#[tokio::test]
async fn a_refused_connection_past_the_attempt_cap_says_the_cap_stopped_it() {
    let url = format!("http://{}/v1/models", closed_port());
    let client = retried(classic_at_once(3), None);

    let err = client.get(&url).send().await.unwrap_err();

    let ours = unwrap_middleware_error(&err);
    match ours {
        Error::Transport {
            source,
            attempts,
            stop,
        } => {
            assert_eq!(*attempts, 3);
            assert_eq!(*stop, Stop::Policy(Reason::MaxAttempts));
            // the chain's own error, one step down
            let reqwest_middleware::Error::Reqwest(source) = source else {
                panic!("not reqwest's error: {source:?}");
            };
            assert!(source.is_connect(), "{source:?}");
        }
        other => panic!("not a transport error: {other:?}"),
    }
    // the error's chain of causes starts with the stop, then the chain's error
    let text = err.to_string();
    assert!(text.contains("after 3 attempt(s)"), "{text}");
    assert!(text.contains("attempt cap reached"), "{text}");
    assert!(core::error::Error::source(ours).is_some());
}

#[tokio::test]
async fn a_refused_connection_whose_backoff_crosses_the_deadline_says_the_deadline_stopped_it() {
    let url = format!("http://{}/v1/models", closed_port());
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    // a backoff of a second, a deadline of half of one: the first retry would
    // cross it
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(5)
        .with_backoff(
            bayesretry_backoff::Config::new()
                .with_base_delay(Duration::from_secs(1))
                .with_jitter(Jitter::None),
        )
        .with_max_elapsed(Duration::from_millis(500))
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    let client = retried(policy, None);

    let err = client.get(&url).send().await.unwrap_err();

    match unwrap_middleware_error(&err) {
        Error::Transport { attempts, stop, .. } => {
            assert_eq!(*attempts, 1);
            assert_eq!(*stop, Stop::Policy(Reason::Deadline));
        }
        other => panic!("not a transport error: {other:?}"),
    }
    assert!(sleeper.delays().is_empty(), "no wait slept in vain");
}

/// A middleware's own error, which the chain above must still find.
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("refused by the middleware below")
    }
}

impl core::error::Error for Refused {}

/// A middleware below the retries that fails every request with [`Refused`].
struct FailsBelow;

#[async_trait::async_trait]
impl Middleware for FailsBelow {
    async fn handle(
        &self,
        _req: reqwest::Request,
        _extensions: &mut Extensions,
        _next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        Err(reqwest_middleware::Error::middleware(Refused))
    }
}

#[tokio::test]
async fn a_middleware_s_own_error_below_keeps_its_type_beside_the_stop() {
    let client = retried(classic_at_once(2), Some(FailsBelow));

    let err = client
        .get("http://svc.internal/v1/jobs/1")
        .send()
        .await
        .unwrap_err();

    let ours = unwrap_middleware_error(&err);
    assert_eq!(ours.attempts(), 2);
    assert!(
        matches!(
            ours,
            Error::Transport {
                stop: Stop::Policy(Reason::MaxAttempts),
                ..
            }
        ),
        "{ours:?}"
    );
    let Some(reqwest_middleware::Error::Middleware(below)) = ours.transport() else {
        panic!("not the middleware's error: {ours:?}");
    };
    assert!(below.downcast_ref::<Refused>().is_some());
}

#[tokio::test]
async fn reqwest_s_error_is_reached_through_the_chain_s_error_not_the_outer_one() {
    let url = format!("http://{}/v1/models", closed_port());
    let client = retried(classic_at_once(2), None);

    let err = client.get(&url).send().await.unwrap_err();

    // the outer error is a middleware's: reqwest-middleware's own questions
    // find no reqwest error in it
    assert!(!err.is_connect() && err.url().is_none(), "{err:?}");
    // the chain's error beside the stop answers them
    let chain = unwrap_middleware_error(&err).transport().unwrap();
    assert!(chain.is_connect() && chain.url().is_some(), "{chain:?}");
    // as does the one in the chain of causes, past the outer error; reqwest's
    // own error is not a link of it (reqwest-middleware's `Reqwest` variant
    // is transparent: its cause is the cause of reqwest's error)
    let causes = || core::iter::successors(Some(&err as &dyn core::error::Error), |e| e.source());
    let found = causes()
        .filter_map(|cause| cause.downcast_ref::<reqwest_middleware::Error>())
        .find(|cause| cause.is_connect());
    assert!(found.is_some(), "{err:?}");
    assert!(causes().all(|cause| cause.downcast_ref::<reqwest::Error>().is_none()));
    let reqwest_middleware::Error::Middleware(inner) = &err else {
        unreachable!("unwrapped above");
    };
    assert!(
        inner
            .chain()
            .filter_map(|cause| cause.downcast_ref::<reqwest_middleware::Error>())
            .any(reqwest_middleware::Error::is_connect)
    );
}

#[tokio::test]
async fn unasked_the_chain_s_error_comes_back_as_it_was_after_the_retries() {
    let url = format!("http://{}/v1/models", closed_port());
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(classic_at_once(3)))
        .build();

    let err = client.get(&url).send().await.unwrap_err();

    // reqwest's error itself: the questions a chain asks any error answer
    let reqwest_middleware::Error::Reqwest(source) = &err else {
        panic!("wrapped though not asked to: {err:?}");
    };
    assert!(source.is_connect(), "{source:?}");
    assert!(err.is_connect() && err.url().is_some(), "{err:?}");
}

#[tokio::test]
async fn unasked_a_middleware_s_own_error_below_comes_back_as_it_was() {
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(classic_at_once(2)))
        .with(FailsBelow)
        .build();

    let err = client
        .get("http://svc.internal/v1/jobs/1")
        .send()
        .await
        .unwrap_err();

    let reqwest_middleware::Error::Middleware(below) = &err else {
        panic!("not the middleware's error: {err:?}");
    };
    assert!(below.downcast_ref::<Refused>().is_some(), "{err:?}");
}
