//! A 429 that carries only the OpenAI-style `x-ratelimit-*` headers, no
//! `Retry-After`, waits for the limit that ran out to refill when
//! `Config::with_rate_limit_reset(true)` says so, stops at once when that
//! reset is beyond the policy's limit, and otherwise (the default) retries
//! at the policy's own backoff.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

mod support;

use core::time::Duration;

use bayesretry_http::{Config, Error, RetryClient};
use support::{FIRST_BACKOFF_CAP, answer, serve, virtual_policy};

/// A 429 with `headers` once, then 200.
async fn limited_once(headers: &'static [(&'static str, &'static str)]) -> support::Server {
    serve(move |seen| match seen.index {
        0 => answer(429, headers),
        _ => answer(200, &[]),
    })
    .await
}

const REQUESTS_OUT: &[(&str, &str)] = &[
    ("x-ratelimit-remaining-requests", "0"),
    ("x-ratelimit-reset-requests", "1.5s"),
    ("x-ratelimit-remaining-tokens", "39000"),
    ("x-ratelimit-reset-tokens", "6m0s"),
];

#[tokio::test]
async fn the_wait_is_the_reset_of_the_limit_that_ran_out() {
    let server = limited_once(REQUESTS_OUT).await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_rate_limit_reset(true));

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    // the requests limit ran out; the tokens limit, with 39000 left, did not
    assert_eq!(sleeper.delays(), [Duration::from_millis(1500)]);
}

#[tokio::test]
async fn a_reset_beyond_the_limit_stops_the_call_without_sleeping() {
    let server = limited_once(&[
        ("x-ratelimit-remaining-tokens", "0"),
        ("x-ratelimit-reset-tokens", "6m0s"),
    ])
    .await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_rate_limit_reset(true));

    let result = client.get(server.url("/v1/models")).send().await;

    assert!(
        matches!(
            result,
            Err(Error::RetryAfterBeyondLimit { retry_after, attempts: 1, .. })
                if retry_after == Duration::from_secs(360)
        ),
        "{result:?}"
    );
    assert!(sleeper.delays().is_empty());
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_retry_after_wins_over_the_reset() {
    let server = limited_once(&[
        ("retry-after-ms", "250"),
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "20s"),
    ])
    .await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_rate_limit_reset(true));

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 1);
    // the larger of the server's 250 ms and the policy's own backoff
    assert!(delays[0] >= Duration::from_millis(250) && delays[0] <= FIRST_BACKOFF_CAP);
}

#[tokio::test]
async fn by_default_the_reset_is_not_read() {
    let server = limited_once(REQUESTS_OUT).await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 1);
    assert!(delays[0] <= FIRST_BACKOFF_CAP, "{delays:?}");
}

#[tokio::test]
async fn a_reset_on_another_status_than_429_is_not_read() {
    let server = serve(|seen| match seen.index {
        0 => answer(
            503,
            &[
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "20s"),
            ],
        ),
        _ => answer(200, &[]),
    })
    .await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_rate_limit_reset(true));

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert!(sleeper.delays()[0] <= FIRST_BACKOFF_CAP);
}
