//! A 429 with an HTTP-date `Retry-After` waits until that date on the wall
//! clock; one with `retry-after-ms` waits that many milliseconds (unless it is
//! zero and a `Retry-After` gives a wait); a date in the past means no wait
//! beyond the policy's own backoff.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod support;

use core::time::Duration;
use std::time::SystemTime;

use bayesretry_http::{Config, RetryClient};
use support::{FIRST_BACKOFF_CAP, serve_failing_once, virtual_policy};

/// 1994-11-06 08:49:30 UTC.
fn pinned_now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_770)
}

async fn delays_for(headers: &[(&'static str, &'static str)]) -> Vec<Duration> {
    let server = serve_failing_once(429, headers).await;
    let (policy, sleeper) = virtual_policy();
    let client = RetryClient::new(reqwest::Client::new(), policy)
        .with_config(Config::new().with_wall_clock(pinned_now));
    let response = client.get(server.url("/v1/chat")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    sleeper.delays()
}

#[tokio::test]
async fn an_imf_fixdate_is_waited_for() {
    let delays = delays_for(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]).await;
    assert_eq!(delays, [Duration::from_secs(7)]);
}

#[tokio::test]
async fn the_obsolete_rfc_850_and_asctime_forms_are_waited_for() {
    let delays = delays_for(&[("retry-after", "Sunday, 06-Nov-94 08:49:40 GMT")]).await;
    assert_eq!(delays, [Duration::from_secs(10)]);
    let delays = delays_for(&[("retry-after", "Sun Nov  6 08:49:35 1994")]).await;
    assert_eq!(delays, [Duration::from_secs(5)]);
}

#[tokio::test]
async fn a_date_in_the_past_means_no_wait_beyond_the_backoff() {
    let delays = delays_for(&[("retry-after", "Sat, 05 Nov 1994 08:49:37 GMT")]).await;
    assert_eq!(delays.len(), 1);
    assert!(delays[0] <= FIRST_BACKOFF_CAP, "{delays:?}");
}

#[tokio::test]
async fn retry_after_ms_is_waited_for_to_the_millisecond() {
    let delays = delays_for(&[("retry-after-ms", "1500")]).await;
    assert_eq!(delays, [Duration::from_millis(1500)]);
}

#[tokio::test]
async fn retry_after_ms_wins_over_a_coarser_retry_after() {
    let delays = delays_for(&[("retry-after", "2"), ("retry-after-ms", "2750")]).await;
    assert_eq!(delays, [Duration::from_millis(2750)]);
}

#[tokio::test]
async fn a_zero_retry_after_ms_gives_way_to_the_retry_after_beside_it() {
    // as the OpenAI and Anthropic TypeScript SDKs read it: a zero there is no
    // value
    let delays = delays_for(&[("retry-after", "2"), ("retry-after-ms", "0")]).await;
    assert_eq!(delays, [Duration::from_secs(2)]);
}

#[tokio::test]
async fn a_garbage_hint_is_ignored_and_the_backoff_used() {
    let delays = delays_for(&[("retry-after", "-30"), ("retry-after-ms", "soon")]).await;
    assert_eq!(delays.len(), 1);
    assert!(delays[0] <= FIRST_BACKOFF_CAP, "{delays:?}");
}

#[tokio::test]
async fn fractional_retry_after_seconds_are_waited_for_to_the_millisecond() {
    let delays = delays_for(&[("retry-after", "1.5")]).await;
    assert_eq!(delays, [Duration::from_millis(1500)]);
    let delays = delays_for(&[("retry-after", "2.0625")]).await;
    assert_eq!(delays, [Duration::from_millis(2062)]);
}

#[tokio::test]
async fn a_date_as_common_formatters_write_it_is_waited_for() {
    // the RFC 5322 forms that the usual date formatters write in place of
    // IMF-fixdate, and that the providers' SDKs read (Python's
    // email.utils.parsedate_tz, JavaScript's Date.parse): all 08:49:37 UTC
    for date in [
        // Java's DateTimeFormatter.RFC_1123_DATE_TIME: a day of one digit
        "Sun, 6 Nov 1994 08:49:37 GMT",
        // Go's time.RFC1123 of a UTC time
        "Sun, 06 Nov 1994 08:49:37 UTC",
        // Python's email.utils.formatdate without usegmt
        "Sun, 06 Nov 1994 08:49:37 -0000",
        // PHP's date('r') an hour east of UTC
        "Sun, 06 Nov 1994 09:49:37 +0100",
    ] {
        let delays = delays_for(&[("retry-after", date)]).await;
        assert_eq!(delays, [Duration::from_secs(7)], "{date}");
    }
}
