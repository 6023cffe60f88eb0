//! Whatever bytes a server sends as `Retry-After`, `retry-after-ms` or a
//! rate-limit reset, parsing returns a value or `None`; it never panics, and
//! what it returns agrees with the header's plain meaning. An RFC 3339 reset
//! is checked against the calendar of `httpdate`, an independent day count.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

use core::time::Duration;
use std::time::SystemTime;

use bayesretry_http::{
    parse_rate_limit_reset, parse_rate_limit_reset_at, parse_retry_after, parse_retry_after_ms,
    retry_after,
};
use proptest::prelude::*;

fn any_now() -> impl Strategy<Value = SystemTime> {
    (0_u64..=u64::from(u32::MAX) * 8)
        .prop_map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), now in any_now()) {
        let _ = parse_retry_after(&bytes, now);
        let _ = parse_retry_after_ms(&bytes);
        let _ = parse_rate_limit_reset(&bytes);
        let _ = parse_rate_limit_reset_at(&bytes, now);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,48}", now in any_now()) {
        let _ = parse_retry_after(text.as_bytes(), now);
        let _ = parse_retry_after_ms(text.as_bytes());
        let _ = parse_rate_limit_reset(text.as_bytes());
        let _ = parse_rate_limit_reset_at(text.as_bytes(), now);
    }

    #[test]
    fn duration_like_text_never_panics(text in "([0-9]{0,24}(\\.[0-9]{0,12})?(h|m|s|ms|us|µs|ns|x)?){0,10}", now in any_now()) {
        let _ = parse_rate_limit_reset(text.as_bytes());
        let _ = parse_rate_limit_reset_at(text.as_bytes(), now);
    }

    #[test]
    fn timestamp_like_text_never_panics(
        text in "[0-9]{0,5}-[0-9]{0,3}-[0-9]{0,3}[Tt ][0-9]{0,3}:[0-9]{0,3}:[0-9]{0,3}(\\.[0-9]{0,12})?(Z|z|[+-][0-9]{0,3}:[0-9]{0,3})?",
        now in any_now(),
    ) {
        let _ = parse_rate_limit_reset_at(text.as_bytes(), now);
    }

    #[test]
    fn a_unix_time_reset_is_the_wait_until_it(at in 1_000_000_000_u64..=253_402_300_799, now in any_now()) {
        let wait = parse_rate_limit_reset_at(at.to_string().as_bytes(), now);
        let expected = (SystemTime::UNIX_EPOCH + Duration::from_secs(at))
            .duration_since(now)
            .unwrap_or(Duration::ZERO);
        prop_assert_eq!(wait, Some(expected));
        // without a clock it is no wait at all, never decades of one
        prop_assert_eq!(parse_rate_limit_reset(at.to_string().as_bytes()), None);
    }

    #[test]
    fn a_relative_reset_reads_the_same_with_a_clock(secs in 0_u64..1_000_000_000, now in any_now()) {
        let value = secs.to_string();
        prop_assert_eq!(
            parse_rate_limit_reset_at(value.as_bytes(), now),
            Some(Duration::from_secs(secs))
        );
    }

    #[test]
    fn a_go_duration_reads_as_written(h in 0_u64..1000, m in 0_u64..60, s in 0_u64..60, ms in 0_u64..1000) {
        let value = format!("{h}h{m}m{s}.{ms:03}s");
        let expected = Duration::from_secs(h * 3600 + m * 60 + s) + Duration::from_millis(ms);
        prop_assert_eq!(parse_rate_limit_reset(value.as_bytes()), Some(expected));
    }

    #[test]
    fn date_like_text_never_panics(
        text in "[A-Za-z]{3,9},? [0-9]{1,3}[ -][A-Za-z]{3}[ -][0-9]{1,6} [0-9]{1,3}:[0-9]{1,3}:[0-9]{1,3}( GMT| UTC| UT| [+-][0-9]{3,5})?",
        now in any_now(),
    ) {
        let _ = parse_retry_after(text.as_bytes(), now);
    }

    #[test]
    fn delta_seconds_read_as_written(secs in any::<u64>(), pad in "[ \t]{0,3}", now in any_now()) {
        let value = format!("{pad}{secs}{pad}");
        prop_assert_eq!(parse_retry_after(value.as_bytes(), now), Some(Duration::from_secs(secs)));
        let negative = format!("-{secs}");
        prop_assert_eq!(parse_retry_after(negative.as_bytes(), now), None);
    }

    #[test]
    fn fractional_seconds_read_to_the_millisecond(secs in 0_u64..1_000_000, millis in 0_u64..1000, rest in "[0-9]{0,6}", now in any_now()) {
        let value = format!("{secs}.{millis:03}{rest}");
        let expected = Duration::from_secs(secs) + Duration::from_millis(millis);
        prop_assert_eq!(parse_retry_after(value.as_bytes(), now), Some(expected));
    }

    #[test]
    fn milliseconds_read_as_written(ms in any::<u64>()) {
        prop_assert_eq!(parse_retry_after_ms(ms.to_string().as_bytes()), Some(Duration::from_millis(ms)));
    }

    #[test]
    fn numbers_past_u64_read_as_the_longest_wait(tail in "[0-9]{20,80}", now in any_now()) {
        // a 1 and twenty digits or more is at least 10^20, past u64::MAX
        let value = format!("1{tail}");
        prop_assert_eq!(parse_retry_after(value.as_bytes(), now), Some(Duration::from_secs(u64::MAX)));
        prop_assert_eq!(parse_retry_after_ms(value.as_bytes()), Some(Duration::from_millis(u64::MAX)));
    }

    #[test]
    fn a_formatted_date_reads_back_as_its_distance_from_now(
        now_secs in 0_u64..253_402_300_000,
        ahead in 0_u64..1_000_000,
    ) {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now_secs);
        let then = now + Duration::from_secs(ahead);
        let text = httpdate::fmt_http_date(then);
        if let Some(wait) = parse_retry_after(text.as_bytes(), now) {
            prop_assert_eq!(wait, Duration::from_secs(ahead));
        } else {
            // only a date past 9999 cannot be written and read back
            prop_assert!(now_secs + ahead >= 253_402_300_800);
        }
    }

    #[test]
    fn an_rfc_3339_reset_is_the_instant_httpdate_writes(
        utc in 0_u64..=253_402_300_799,
        east_minutes in -(23 * 60 + 59_i64)..=23 * 60 + 59,
        zulu in any::<bool>(),
        fraction in "(\\.[0-9]{1,12})?",
        separator in "[Tt ]",
    ) {
        // the zone's clock reading, written by httpdate's own calendar (an
        // independent day count), then read back as RFC 3339
        let east = if zulu { 0 } else { east_minutes * 60 };
        let Some(local) = utc.checked_add_signed(east).filter(|local| *local <= 253_402_300_799) else {
            return Ok(());
        };
        let date = httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(local));
        // "Sun, 06 Nov 1994 08:49:37 GMT"
        let parts: Vec<&str> = date.split(' ').collect();
        let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            .iter()
            .position(|name| *name == parts[2])
            .unwrap()
            + 1;
        let zone = if zulu {
            "Z".to_owned()
        } else {
            let sign = if east_minutes < 0 { '-' } else { '+' };
            let minutes = east_minutes.unsigned_abs();
            format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
        };
        let text = format!(
            "{}-{month:02}-{}{separator}{}{fraction}{zone}",
            parts[3], parts[1], parts[4]
        );
        let nanos: u32 = fraction
            .get(1..)
            .map(|digits| format!("{:0<9}", digits).get(..9).unwrap().parse().unwrap())
            .unwrap_or(0);
        let wait = parse_rate_limit_reset_at(text.as_bytes(), SystemTime::UNIX_EPOCH);
        prop_assert_eq!(wait, Some(Duration::new(utc, nanos)), "{}", text);
    }

    #[test]
    fn any_header_pair_never_panics(a in proptest::collection::vec(any::<u8>(), 0..32), b in proptest::collection::vec(any::<u8>(), 0..32)) {
        let mut headers = http::HeaderMap::new();
        if let Ok(value) = http::HeaderValue::from_bytes(&a) {
            headers.insert("retry-after", value);
        }
        if let Ok(value) = http::HeaderValue::from_bytes(&b) {
            headers.insert("retry-after-ms", value);
        }
        let _ = retry_after(&headers, SystemTime::UNIX_EPOCH);
    }
}
