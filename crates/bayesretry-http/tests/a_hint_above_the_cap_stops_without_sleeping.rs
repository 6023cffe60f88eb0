//! A server asking for longer than the policy's limit, or for a wait past the
//! call's deadline, stops the call at once with a typed error that names the
//! wait; nothing is slept. A deadline the policy's own backoff would cross is
//! not blamed on the server's hint.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_http::{Error, RetryClient};
use bayesretry_policy::{ManualClock, RetryPolicy, VirtualSleeper};
use support::{answer, serve, serve_failing_once, virtual_client};

#[tokio::test]
async fn an_hour_is_beyond_the_default_minute() {
    let server = serve(|_| answer(429, &[("retry-after", "3600")])).await;
    let (client, sleeper) = virtual_client();

    let err = client.get(server.url("/")).send().await.unwrap_err();

    assert!(sleeper.delays().is_empty(), "slept {:?}", sleeper.delays());
    assert_eq!(server.requests(), 1);
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(err.attempts(), 1);
    assert!(err.to_string().contains("retry after 1 h,"), "{err}");
    match err {
        Error::RetryAfterBeyondLimit { response, .. } => assert_eq!(response.status(), 429),
        other => panic!("expected RetryAfterBeyondLimit, got {other:?}"),
    }
}

#[tokio::test]
async fn a_wait_too_large_to_store_stops_the_call_as_one_beyond_the_limit() {
    for (header, value, wait) in [
        // the largest delta-seconds a u64 holds, which always stopped the call
        (
            "retry-after",
            "18446744073709551615",
            Duration::from_secs(u64::MAX),
        ),
        // one digit more: past u64::MAX, read as the longest wait
        (
            "retry-after",
            "99999999999999999999",
            Duration::from_secs(u64::MAX),
        ),
        (
            "retry-after-ms",
            "99999999999999999999999",
            Duration::from_millis(u64::MAX),
        ),
    ] {
        let server = serve_failing_once(503, &[(header, value)]).await;
        let (client, sleeper) = virtual_client();

        let err = client.get(server.url("/")).send().await.unwrap_err();

        assert!(
            matches!(err, Error::RetryAfterBeyondLimit { .. }),
            "{header}: {value}: {err:?}"
        );
        assert_eq!(err.retry_after(), Some(wait), "{header}: {value}");
        assert!(sleeper.delays().is_empty(), "slept {:?}", sleeper.delays());
        assert_eq!(server.requests(), 1, "{header}: {value}");
    }
}

#[tokio::test]
async fn the_limit_is_the_policys_and_configurable() {
    let server = serve_failing_once(503, &[("retry-after-ms", "2500")]).await;
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_retry_after(Duration::from_secs(2))
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let err = client.get(server.url("/")).send().await.unwrap_err();

    assert!(
        matches!(err, Error::RetryAfterBeyondLimit { .. }),
        "{err:?}"
    );
    assert_eq!(err.retry_after(), Some(Duration::from_millis(2500)));
    assert!(sleeper.delays().is_empty());
    // the response is still there for a caller that wants it
    assert_eq!(err.into_response().map(|r| r.status().as_u16()), Some(503));
}

#[tokio::test]
async fn a_wait_past_the_deadline_is_not_slept() {
    let server = serve(|_| answer(503, &[("retry-after", "30")])).await;
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_elapsed(Duration::from_secs(10))
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let err = client.get(server.url("/")).send().await.unwrap_err();

    assert!(
        matches!(err, Error::RetryAfterPastDeadline { .. }),
        "{err:?}"
    );
    assert_eq!(err.retry_after(), Some(Duration::from_secs(30)));
    assert!(err.to_string().contains("retry after 30 s,"), "{err}");
    assert!(sleeper.delays().is_empty());
    assert_eq!(server.requests(), 1);
}

/// A classic policy of four attempts, a fixed 2 s backoff, and `deadline`.
fn two_second_backoff(deadline: Duration) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(2))
                .with_factor(1.0)
                .with_jitter(Jitter::None),
        )
        .with_virtual_time(sleeper.clone())
        .with_max_elapsed(deadline)
        .build()
        .unwrap();
    (policy, sleeper)
}

#[tokio::test]
async fn a_deadline_the_backoff_crosses_is_not_blamed_on_a_small_hint() {
    // the 2 s backoff alone crosses the 1.5 s deadline; the server's 1 ms
    // wait has nothing to do with it, and the call ends as it would without
    // the header: with the last response
    for headers in [&[("retry-after-ms", "1")][..], &[][..]] {
        let server = serve(move |_| answer(503, headers)).await;
        let (policy, sleeper) = two_second_backoff(Duration::from_millis(1500));
        let client = RetryClient::new(reqwest::Client::new(), policy);

        let response = client.get(server.url("/")).send().await;

        let response = response.unwrap_or_else(|err| panic!("{headers:?}: {err}"));
        assert_eq!(response.status().as_u16(), 503);
        assert!(sleeper.delays().is_empty());
        assert_eq!(server.requests(), 1);
    }
}

#[tokio::test]
async fn a_hint_that_alone_crosses_the_deadline_is_named() {
    // the 2 s backoff fits in the 10 s deadline; the server's 30 s does not
    let server = serve(|_| answer(503, &[("retry-after", "30")])).await;
    let (policy, sleeper) = two_second_backoff(Duration::from_secs(10));
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let err = client.get(server.url("/")).send().await.unwrap_err();

    assert!(
        matches!(err, Error::RetryAfterPastDeadline { .. }),
        "{err:?}"
    );
    assert!(sleeper.delays().is_empty());
    assert_eq!(server.requests(), 1);
}
