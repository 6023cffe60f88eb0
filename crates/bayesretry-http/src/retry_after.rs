//! The server's requested wait in a response's headers: `Retry-After` and
//! `retry-after-ms`, and the rate-limit reset headers, read with the parsers
//! of `bayesretry-policy` (re-exported here).

use core::time::Duration;
use std::time::SystemTime;

pub use bayesretry_policy::{
    parse_rate_limit_reset, parse_rate_limit_reset_at, parse_retry_after, parse_retry_after_ms,
};
use http::HeaderMap;
use http::header::RETRY_AFTER;

/// The header LLM providers (OpenAI, Azure OpenAI and others) send beside
/// `Retry-After`: the wait in milliseconds, more precise than whole seconds.
pub const RETRY_AFTER_MS: &str = "retry-after-ms";

/// The server's requested wait in `headers`, if it gave one that parses:
/// `retry-after-ms` when present, valid and above zero (it is the more precise
/// of the two), otherwise `Retry-After`. A `retry-after-ms` of zero counts only
/// when `Retry-After` gives no wait: the OpenAI and Anthropic TypeScript SDKs
/// read a zero there as no value and fall through to `Retry-After` (their
/// Python SDKs take the zero and use their own backoff, reading neither), and
/// a server that sends both means the longer one. Of several lines of one
/// header, the first counts.
///
/// ```
/// use bayesretry_http::retry_after;
/// use http::HeaderMap;
/// use std::time::{Duration, SystemTime};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// headers.insert("retry-after-ms", "1500".parse().unwrap());
/// assert_eq!(retry_after(&headers, SystemTime::now()), Some(Duration::from_millis(1500)));
/// ```
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let millis = headers
        .get(RETRY_AFTER_MS)
        .and_then(|value| parse_retry_after_ms(value.as_bytes()));
    if let Some(wait) = millis.filter(|wait| !wait.is_zero()) {
        return Some(wait);
    }
    headers
        .get(RETRY_AFTER)
        .and_then(|value| parse_retry_after(value.as_bytes(), now))
        .or(millis)
}

/// The rate-limit headers of OpenAI-style APIs, read by
/// [`Config::with_rate_limit_reset`](crate::Config::with_rate_limit_reset): each
/// limit's `remaining` header, and its `reset` header, the time until it refills.
pub const RATE_LIMIT_RESETS: [(&str, &str); 2] = [
    (
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
    ),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
];

/// The rate-limit headers of the Anthropic API, read beside
/// [`RATE_LIMIT_RESETS`] by
/// [`Config::with_rate_limit_reset`](crate::Config::with_rate_limit_reset):
/// each limit's `remaining` header, and its `reset` header, the moment it
/// refills as an RFC 3339 timestamp (`2025-02-24T20:37:51Z`).
pub const ANTHROPIC_RATE_LIMIT_RESETS: [(&str, &str); 4] = [
    (
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ),
    (
        "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset",
    ),
    (
        "anthropic-ratelimit-input-tokens-remaining",
        "anthropic-ratelimit-input-tokens-reset",
    ),
    (
        "anthropic-ratelimit-output-tokens-remaining",
        "anthropic-ratelimit-output-tokens-reset",
    ),
];

/// The wait until the rate limit that ran out refills, from the
/// [`RATE_LIMIT_RESETS`] and [`ANTHROPIC_RATE_LIMIT_RESETS`] headers, read by
/// [`parse_rate_limit_reset_at`] against `now`: the longest reset of a limit
/// whose `remaining` header reads `0`, or of one sent with no `remaining`
/// header (a `remaining` header that is not a whole number does not count as
/// `0`). `None` when no such reset parses.
pub(crate) fn rate_limit_reset(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    RATE_LIMIT_RESETS
        .iter()
        .chain(ANTHROPIC_RATE_LIMIT_RESETS.iter())
        .filter(|(remaining, _)| {
            headers
                .get(*remaining)
                .is_none_or(|left| is_zero_count(left.as_bytes()))
        })
        .filter_map(|(_, reset)| {
            headers
                .get(*reset)
                .and_then(|value| parse_rate_limit_reset_at(value.as_bytes(), now))
        })
        .max()
}

/// Whether a `remaining` header's value reads as a count of zero: digits, all
/// of them `0`, with HTTP's optional whitespace (spaces and tabs) around them.
fn is_zero_count(value: &[u8]) -> bool {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let mut rest = value.iter().skip_while(|b| is_ows(b)).peekable();
    let mut zeros = 0_usize;
    while rest.next_if(|b| **b == b'0').is_some() {
        zeros += 1;
    }
    zeros > 0 && rest.all(is_ows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1994-11-06 08:49:30 UTC, seven seconds before the RFC's example date.
    fn before_rfc_date() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_770)
    }

    #[test]
    fn the_reset_read_is_that_of_a_limit_that_ran_out() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_733_100_000);
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, http::HeaderValue::from_static(value));
            }
            map
        };
        let both_out = headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "2s"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]);
        assert_eq!(
            rate_limit_reset(&both_out, now),
            Some(Duration::from_secs(360))
        );
        let none_out = headers(&[
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "2s"),
        ]);
        assert_eq!(rate_limit_reset(&none_out, now), None);
        let no_remaining = headers(&[("x-ratelimit-reset-requests", "2s")]);
        assert_eq!(
            rate_limit_reset(&no_remaining, now),
            Some(Duration::from_secs(2))
        );
        let garbled = headers(&[("x-ratelimit-reset-requests", "soon")]);
        assert_eq!(rate_limit_reset(&garbled, now), None);
        let garbled_remaining = headers(&[
            ("x-ratelimit-remaining-requests", "-1"),
            ("x-ratelimit-reset-requests", "2s"),
        ]);
        assert_eq!(rate_limit_reset(&garbled_remaining, now), None);
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after_unless_it_is_garbage() {
        let now = before_rfc_date();
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers, now), None);
        headers.insert(RETRY_AFTER, http::HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(3)));
        headers.insert(RETRY_AFTER_MS, http::HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(250)));
        headers.insert(RETRY_AFTER_MS, http::HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(3)));
        headers.insert(RETRY_AFTER, http::HeaderValue::from_static("later"));
        assert_eq!(retry_after(&headers, now), None);
    }

    #[test]
    fn a_zero_retry_after_ms_gives_way_to_retry_after() {
        let now = before_rfc_date();
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER_MS, http::HeaderValue::from_static("0"));
        assert_eq!(retry_after(&headers, now), Some(Duration::ZERO));
        headers.insert(RETRY_AFTER, http::HeaderValue::from_static("30"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        headers.insert(RETRY_AFTER_MS, http::HeaderValue::from_static("0.000"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        // a garbled Retry-After leaves the zero, which was a valid value
        headers.insert(RETRY_AFTER, http::HeaderValue::from_static("later"));
        assert_eq!(retry_after(&headers, now), Some(Duration::ZERO));
        // any wait above zero is the more precise header's
        headers.insert(RETRY_AFTER, http::HeaderValue::from_static("30"));
        headers.insert(RETRY_AFTER_MS, http::HeaderValue::from_static("0.5"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_micros(500)));
    }
}
