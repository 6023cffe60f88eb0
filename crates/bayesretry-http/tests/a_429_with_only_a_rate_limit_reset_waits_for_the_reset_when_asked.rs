//! A 429 that carries only the OpenAI-style `x-ratelimit-*` headers, no
//! `Retry-After`, waits for the limit that ran out to refill when
//! `Config::with_rate_limit_reset(true)` says so, stops at once when that
//! reset is beyond the policy's limit, and otherwise (the default) retries
//! at the policy's own backoff. A reset written as an absolute time — a Unix
//! time, as GitHub and many others send it, or Anthropic's RFC 3339
//! `anthropic-ratelimit-*-reset` — is a wait until that time on the wall
//! clock, never a wait of that many seconds.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

mod support;

use core::time::Duration;
use std::time::SystemTime;

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

/// 2024-12-02T00:40:00Z, the wall clock of the tests of absolute resets.
const NOW_UNIX: u64 = 1_733_100_000;

/// The waits slept by a client that reads resets, on virtual time, its wall
/// clock at [`NOW_UNIX`], for a request the server first refuses with a 429
/// carrying `headers`; the retry must succeed.
async fn waits_read_at_now(headers: &'static [(&'static str, &'static str)]) -> Vec<Duration> {
    let server = limited_once(headers).await;
    let (policy, sleeper) = virtual_policy();
    let config = Config::new()
        .with_rate_limit_reset(true)
        .with_wall_clock(|| SystemTime::UNIX_EPOCH + Duration::from_secs(NOW_UNIX));
    let client = RetryClient::new(reqwest::Client::new(), policy).with_config(config);

    let response = client.get(server.url("/v1/models")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    sleeper.delays()
}

#[tokio::test]
async fn a_reset_written_as_a_unix_time_waits_until_that_time() {
    // thirty seconds after the wall clock's now, in Unix seconds
    let delays = waits_read_at_now(&[
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "1733100030"),
    ])
    .await;
    assert_eq!(delays, [Duration::from_secs(30)]);
}

#[tokio::test]
async fn a_reset_written_as_a_unix_time_in_milliseconds_waits_until_that_time() {
    let delays = waits_read_at_now(&[
        ("x-ratelimit-remaining-tokens", "0"),
        ("x-ratelimit-reset-tokens", "1733100012500"),
    ])
    .await;
    assert_eq!(delays, [Duration::from_millis(12_500)]);
}

#[tokio::test]
async fn a_unix_time_already_past_is_no_wait_beyond_the_backoff() {
    let delays = waits_read_at_now(&[
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "1733099000"),
    ])
    .await;
    assert_eq!(delays.len(), 1);
    assert!(delays[0] <= FIRST_BACKOFF_CAP, "{delays:?}");
}

/// The headers of an Anthropic 429 without `retry-after`, as the API
/// documents them: the input-token limit ran out, and refills in twenty
/// seconds; the requests limit did not.
const ANTHROPIC_INPUT_TOKENS_OUT: &[(&str, &str)] = &[
    ("anthropic-ratelimit-requests-limit", "4000"),
    ("anthropic-ratelimit-requests-remaining", "3999"),
    ("anthropic-ratelimit-requests-reset", "2024-12-02T00:41:00Z"),
    ("anthropic-ratelimit-input-tokens-limit", "400000"),
    ("anthropic-ratelimit-input-tokens-remaining", "0"),
    (
        "anthropic-ratelimit-input-tokens-reset",
        "2024-12-02T00:40:20Z",
    ),
    ("anthropic-ratelimit-output-tokens-limit", "80000"),
    ("anthropic-ratelimit-output-tokens-remaining", "80000"),
    (
        "anthropic-ratelimit-output-tokens-reset",
        "2024-12-02T00:40:01Z",
    ),
];

#[tokio::test]
async fn an_anthropic_reset_timestamp_waits_until_the_limit_that_ran_out_refills() {
    let delays = waits_read_at_now(ANTHROPIC_INPUT_TOKENS_OUT).await;
    assert_eq!(delays, [Duration::from_secs(20)]);
}

#[tokio::test]
async fn an_anthropic_reset_with_an_offset_and_a_fraction_is_the_same_instant() {
    let delays = waits_read_at_now(&[
        ("anthropic-ratelimit-tokens-remaining", "0"),
        (
            "anthropic-ratelimit-tokens-reset",
            "2024-12-02T01:40:07.25+01:00",
        ),
    ])
    .await;
    assert_eq!(delays, [Duration::from_millis(7_250)]);
}

#[tokio::test]
async fn an_anthropic_reset_is_not_read_by_default() {
    let server = limited_once(ANTHROPIC_INPUT_TOKENS_OUT).await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy);

    let response = client.get(server.url("/v1/messages")).send().await.unwrap();

    assert_eq!(response.status(), 200);
    assert!(sleeper.delays()[0] <= FIRST_BACKOFF_CAP);
}
