//! A transport failure whose retry a server's hold on the endpoint stops
//! (the hold would carry it past the deadline) ends the call with the
//! transport error, `Stop::ServerHold`, and the time the hold has left, in the
//! stop and in `Error::retry_after`: a caller that schedules the work for
//! later needs that number, as it does after a hold refused the first attempt.
//! Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;
use std::io;

use bayesretry_http::{Error, RetryLayer, Stop};
use bayesretry_policy::{Classification, ErrorClass, ManualClock, RetryPolicy, VirtualSleeper};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use tower::{Layer, Service, ServiceExt};

type Body = Full<Bytes>;

/// The endpoint key of the requests below: their origin.
const ORIGIN: &str = "http://api.example";

#[tokio::test]
async fn the_error_carries_the_time_the_hold_has_left() {
    let sleeper = VirtualSleeper::new(ManualClock::new(1_000));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_elapsed(Duration::from_secs(5))
        .with_seed(7)
        .build()
        .unwrap();
    let other = policy.clone();
    // every request fails before a response arrives; while the first does,
    // another call to the origin is told to wait 30 s
    let inner = tower::service_fn(move |_: Request<Body>| {
        let told = other
            .call_with(ORIGIN, |_: &u16| {
                Classification::Retryable(ErrorClass::Http(429))
                    .with_retry_after(Duration::from_secs(30))
            })
            .should_retry(|_| false)
            .run_blocking(|_| Err::<(), u16>(429));
        assert!(told.is_err());
        core::future::ready(Err::<Response<Body>, io::Error>(io::Error::from(
            io::ErrorKind::ConnectionReset,
        )))
    });
    let mut service = RetryLayer::new(policy)
        .with_classifier(|_: &io::Error| Classification::Retryable(ErrorClass::Timeout))
        .layer(inner);
    let request = Request::get(format!("{ORIGIN}/v1/models"))
        .body(Body::default())
        .unwrap();
    let err = service
        .ready()
        .await
        .unwrap()
        .call(request)
        .await
        .expect_err("no response ever arrives");
    let Error::Transport {
        ref stop, attempts, ..
    } = err
    else {
        panic!("the transport error is kept: {err:?}");
    };
    assert_eq!(attempts, 1, "{err:?}");
    assert!(
        matches!(stop, Stop::ServerHold { .. }),
        "stopped by the hold: {err:?}"
    );
    let retry_after = err.retry_after().expect("the time the hold has left");
    // the retry's backoff ran before the hold refused it
    assert!(
        retry_after > Duration::from_secs(25) && retry_after < Duration::from_secs(30),
        "{err:?}"
    );
    assert_eq!(*stop, Stop::ServerHold { retry_after }, "{err:?}");
    assert!(err.to_string().contains(" more)"), "{err}");
}
