//! A request given a time limit of its own (`RequestBuilder::with_max_elapsed`,
//! `Request::with_max_elapsed`, or a `MaxElapsed` in the extensions behind the
//! tower layer and the middleware) makes no attempt after it and sleeps no
//! wait that would cross it. It ends with what a stop for any other reason
//! gives: the last failed response, or the server's wait past the deadline.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod support;

use core::sync::atomic::Ordering;
use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_http::{Error, MaxElapsed, NotRetried, RetryClient, RetryLayer, Stop};
use bayesretry_policy::{ManualClock, Reason, RetryPolicy, VirtualSleeper};
use support::{answer, inner_answering, serve, streamed_body};
use tower::{Layer as _, Service as _, ServiceExt as _};

/// Classic mode, ten attempts, waits of 1 s, 2 s, 4 s... (no jitter), on
/// virtual time.
fn doubling() -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(10)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(1))
                .with_jitter(Jitter::None),
        )
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    (policy, sleeper)
}

/// A client on [`doubling`]'s policy, and the sleeper that records its waits.
fn doubling_client() -> (RetryClient, VirtualSleeper) {
    let (policy, sleeper) = doubling();
    (RetryClient::new(reqwest::Client::new(), policy), sleeper)
}

fn secs(s: &[u64]) -> Vec<Duration> {
    s.iter().copied().map(Duration::from_secs).collect()
}

#[tokio::test]
async fn a_request_stops_before_a_wait_that_would_cross_its_limit() {
    let server = serve(|_| answer(503, &[])).await;
    let (client, sleeper) = doubling_client();

    let response = client
        .get(server.url("/v1/models"))
        .with_max_elapsed(Duration::from_secs(5))
        .send()
        .await
        .unwrap();

    // 1 s then 2 s (t = 3 s); the next 4 s would end at 7 s, past 5 s: the
    // last 503 is the answer
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));

    // the same request without a limit runs to the attempt cap
    let response = client.get(server.url("/v1/models")).send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 3 + 10);
}

#[tokio::test]
async fn a_built_request_keeps_its_limit() {
    let server = serve(|_| answer(503, &[])).await;
    let (client, sleeper) = doubling_client();

    let request = client
        .get(server.url("/v1/models"))
        .with_max_elapsed(Duration::from_secs(8))
        .build()
        .unwrap();
    assert_eq!(request.max_elapsed(), Some(Duration::from_secs(8)));
    assert!(format!("{request:?}").contains("max_elapsed: Some(8s)"));
    let response = client.execute(request).await.unwrap();
    // 1 + 2 + 4 = 7 s; the next 8 s would cross 8 s
    assert_eq!(response.status(), 503);
    assert_eq!(sleeper.delays(), secs(&[1, 2, 4]));

    // set on the built request itself
    let request = client
        .get(server.url("/v1/models"))
        .build()
        .unwrap()
        .with_max_elapsed(Duration::from_secs(2));
    let before = server.requests();
    let response = client.execute(request).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        server.requests() - before,
        2,
        "1 s fits in 2 s, 2 s more does not"
    );
}

#[tokio::test]
async fn a_server_s_wait_past_the_limit_ends_the_request_at_once() {
    let server = serve(|_| answer(429, &[("retry-after", "30")])).await;
    let (client, sleeper) = doubling_client();

    let result = client
        .get(server.url("/v1/chat"))
        .with_max_elapsed(Duration::from_secs(10))
        .send()
        .await;

    match result {
        Err(Error::RetryAfterPastDeadline {
            retry_after,
            attempts,
            response,
        }) => {
            assert_eq!(retry_after, Duration::from_secs(30));
            assert_eq!(attempts, 1);
            assert_eq!(response.status(), 429);
        }
        other => panic!("expected the deadline, got {other:?}"),
    }
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().is_empty());
}

#[tokio::test]
async fn the_layer_reads_the_limit_from_the_request_s_extensions() {
    let (inner, calls) = inner_answering(503);
    let (policy, sleeper) = doubling();
    let mut service = RetryLayer::new(policy).layer(inner);
    let mut request = http::Request::get("http://svc.internal/v1/jobs/1")
        .body(String::new())
        .unwrap();
    request
        .extensions_mut()
        .insert(MaxElapsed(Duration::from_secs(5)));

    let response = service.ready().await.unwrap().call(request).await.unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));
}

#[cfg(feature = "middleware")]
#[tokio::test]
async fn the_middleware_reads_the_limit_from_the_chain_s_extensions() {
    let server = serve(|_| answer(503, &[])).await;
    let (policy, sleeper) = doubling();
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(bayesretry_http::RetryMiddleware::new(policy))
        .build();

    let response = client
        .get(server.url("/v1/models"))
        .with_extension(MaxElapsed(Duration::from_secs(5)))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(server.requests(), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));
}

#[tokio::test]
async fn a_refused_connection_past_the_limit_ends_in_a_transport_error_stopped_by_the_deadline() {
    let addr = support::closed_port();
    let (client, sleeper) = doubling_client();

    let result = client
        .get(format!("http://{addr}/v1/models"))
        .with_max_elapsed(Duration::from_secs(5))
        .send()
        .await;

    // refused at 0 s, 1 s and 3 s; the next wait, 4 s, would end past 5 s
    match result {
        Err(Error::Transport {
            source,
            attempts,
            stop,
        }) => {
            assert!(source.is_connect(), "{source:?}");
            assert_eq!(attempts, 3);
            assert_eq!(stop, Stop::Policy(Reason::Deadline));
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(sleeper.delays(), secs(&[1, 2]));
}

#[tokio::test]
async fn an_attempt_cut_off_by_the_policy_s_timeout_past_the_limit_ends_in_attempt_timed_out() {
    let server = serve(|_| answer(200, &[])).await;
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    // on virtual time, the timeout's timer fires at once: every attempt is
    // cut off after 5 s
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(10)
        .with_attempt_timeout(Duration::from_secs(5))
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(1))
                .with_jitter(Jitter::None),
        )
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let result = client
        .get(server.url("/v1/models"))
        .with_max_elapsed(Duration::from_secs(7))
        .send()
        .await;

    // cut off at 5 s, retried at 6 s, cut off at 11 s: past the limit
    match result {
        Err(Error::AttemptTimedOut { timeout, attempts }) => {
            assert_eq!((timeout, attempts), (Duration::from_secs(5), 2));
        }
        other => panic!("expected the attempt's timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn a_copy_of_the_builder_or_of_the_request_keeps_its_limit() {
    let server = serve(|_| answer(503, &[])).await;
    let (client, sleeper) = doubling_client();

    let builder = client
        .get(server.url("/v1/models"))
        .with_max_elapsed(Duration::from_secs(5));
    assert!(format!("{builder:?}").contains("max_elapsed: Some(5s)"));
    let copy = builder.try_clone().unwrap();
    assert_eq!(copy.send().await.unwrap().status(), 503);
    assert_eq!(server.requests(), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));

    let request = builder.build().unwrap();
    let copy = request.try_clone().unwrap();
    assert_eq!(client.execute(copy).await.unwrap().status(), 503);
    assert_eq!(server.requests(), 3 + 3);
}

#[tokio::test]
async fn a_streamed_body_is_sent_once_whatever_its_limit() {
    let server = serve(|_| answer(503, &[])).await;
    let (client, sleeper) = doubling_client();
    let body = streamed_body();

    let response = client
        .put(server.url("/v1/files/1"))
        .body(body)
        .with_max_elapsed(Duration::from_secs(60))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 503);
    assert_eq!(
        response.extensions().get::<NotRetried>(),
        Some(&NotRetried::BodyNotClonable)
    );
    assert_eq!(server.requests(), 1);
    assert!(sleeper.delays().is_empty());
}
