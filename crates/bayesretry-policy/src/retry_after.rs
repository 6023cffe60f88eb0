//! The server's requested wait, as HTTP APIs send it: `Retry-After` (RFC
//! 9110 §10.2.3), `retry-after-ms`, and the rate-limit reset headers of
//! OpenAI-style and Anthropic APIs, parsed from a header's bytes without
//! ever panicking.
//!
//! They live here rather than in the HTTP adapter so that a caller with an
//! HTTP client of its own (a blocking one, say) can read a server's wait,
//! and hand it to the policy through its `Classify`, without taking the
//! adapter's reqwest, tower and tokio; `bayesretry-http` reads its
//! responses' headers with these same functions.

use core::time::Duration;
use std::time::SystemTime;

/// The most significant digits (leading zeros aside) folded into a number: 20
/// digits hold every `u64`, and a longer run of digits is a number past
/// `u64::MAX`, read as that largest value without being folded.
const MAX_DIGITS: usize = 20;

/// Parses one `Retry-After` value: delta-seconds (`120`) or an HTTP-date in any of
/// the three forms RFC 9110 allows — IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`) — read by the `httpdate` crate.
///
/// A date is turned into a wait from `now`, the wall clock; a date in the past
/// (or `now` itself) is a wait of zero: the server allows a retry at once.
///
/// So is a date in the RFC 5322 form that common formatters write instead of
/// IMF-fixdate, and that the providers' SDKs read (Python's
/// `email.utils.parsedate_tz`, JavaScript's `Date.parse`): a day of one digit
/// (`Sun, 6 Nov 1994 08:49:37 GMT`, Java's `RFC_1123_DATE_TIME`), the zone
/// `UTC` or `UT` (Go's `time.RFC1123`), or a numeric zone (`-0000` from
/// Python's `email.utils.formatdate`, `+0100` from PHP's `date('r')`).
///
/// Delta-seconds too large for a `u64` (a server telling the client to go away
/// for good) are read as the longest wait there is, `u64::MAX` seconds, not
/// dropped: a wait beyond the policy's Retry-After limit stops the call instead
/// of letting it retry at its own backoff.
///
/// Delta-seconds with a fraction (`1.5`, `.5`), which RFC 9110 does not allow
/// but some servers send and the official OpenAI and Anthropic SDKs honour,
/// are read to the millisecond: ignoring them would send the retry at the
/// policy's backoff, sooner than the server asked.
///
/// Returns `None`, so that the hint is ignored, for anything that is not one of
/// those forms: an empty value, a sign (`-5`, `+5`), an exponent (`1e3`), a
/// point with no digit on either side (`.`), non-ASCII bytes, a date before 1970 or
/// after 9999, a date whose weekday is not its own, a zone other than UTC's
/// names and numeric offsets (`PST`), a date whose wait does not fit a
/// [`Duration`]. Leading and trailing spaces and tabs (HTTP's optional
/// whitespace) are allowed.
///
/// ```
/// use bayesretry_policy::parse_retry_after;
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_770); // 08:49:30
/// assert_eq!(parse_retry_after(b"120", now), Some(Duration::from_secs(120)));
/// assert_eq!(parse_retry_after(b"1.5", now), Some(Duration::from_millis(1500)));
/// assert_eq!(
///     parse_retry_after(b"Sun, 06 Nov 1994 08:49:37 GMT", now),
///     Some(Duration::from_secs(7)),
/// );
/// assert_eq!(
///     parse_retry_after(b"Sun, 6 Nov 1994 09:49:37 +0100", now),
///     Some(Duration::from_secs(7)),
/// );
/// assert_eq!(
///     parse_retry_after(b"99999999999999999999", now),
///     Some(Duration::from_secs(u64::MAX)),
/// );
/// assert_eq!(parse_retry_after(b"-1", now), None);
/// ```
pub fn parse_retry_after(value: &[u8], now: SystemTime) -> Option<Duration> {
    let value = trim(value);
    if value.is_empty() {
        return None;
    }
    if let Some((secs, fraction)) = decimal(value) {
        let millis = scaled(fraction, 3);
        return Some(Duration::from_secs(secs).saturating_add(Duration::from_millis(millis)));
    }
    // a date is ASCII; `from_utf8` rejects nothing ASCII and everything else
    // that could confuse a parser
    if !value.is_ascii() {
        return None;
    }
    let text = core::str::from_utf8(value).ok()?;
    let date = httpdate::parse_http_date(text)
        .ok()
        .or_else(|| rfc5322_date(text))?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A date in the RFC 5322 form that common formatters write where HTTP wants
/// IMF-fixdate: `Sun, 6 Nov 1994 08:49:37 GMT`, a day of one digit (Java's
/// `DateTimeFormatter.RFC_1123_DATE_TIME`); `... 08:49:37 UTC` or `UT` (Go's
/// `time.RFC1123` of a UTC time); a numeric zone, `-0000` (Python's
/// `email.utils.formatdate` without `usegmt`) or `+0100` (PHP's `date('r')`).
///
/// RFC 9110 §5.6.7 asks recipients to be robust in parsing timestamps, and the
/// providers' SDKs are: Python's `email.utils.parsedate_tz` and JavaScript's
/// `Date.parse` read these forms, so ignoring them would send the retry at
/// the policy's backoff, sooner than the server asked. The date is rewritten
/// as IMF-fixdate (the day on two digits, the zone `GMT`) and read by
/// `httpdate`, which checks it as for any other date (its weekday included),
/// then moved by the zone's offset. Anything else — another zone name, no
/// weekday, a two-digit year — is still `None`.
fn rfc5322_date(text: &str) -> Option<SystemTime> {
    let mut fields = text.split(' ').filter(|field| !field.is_empty());
    let mut next = || fields.next();
    let (Some(weekday), Some(day), Some(month), Some(year), Some(time), Some(zone), None) =
        (next(), next(), next(), next(), next(), next(), next())
    else {
        return None;
    };
    let day_ok = matches!(day.len(), 1 | 2) && day.bytes().all(|b| b.is_ascii_digit());
    if !day_ok {
        return None;
    }
    let east = zone_offset(zone)?;
    let fixdate = format!("{weekday} {day:0>2} {month} {year} {time} GMT");
    let local = httpdate::parse_http_date(&fixdate).ok()?;
    // the date is the zone's clock reading: UTC is that reading less the
    // zone's offset east of it
    let utc = if east >= 0 {
        local.checked_sub(Duration::from_secs(east.unsigned_abs()))
    } else {
        local.checked_add(Duration::from_secs(east.unsigned_abs()))
    };
    utc.filter(|utc| *utc >= SystemTime::UNIX_EPOCH)
}

/// The offset east of UTC, in seconds, of an RFC 5322 zone that names UTC
/// (`GMT`, `UT`, `UTC`) or gives its offset (`+hhmm`, `-hhmm`, under 24
/// hours); `None` for any other zone.
fn zone_offset(zone: &str) -> Option<i64> {
    if matches!(zone, "GMT" | "UT" | "UTC") {
        return Some(0);
    }
    let (sign, digits) = match zone.as_bytes() {
        [b'+', digits @ ..] => (1, digits),
        [b'-', digits @ ..] => (-1, digits),
        _ => return None,
    };
    let [h1, h2, m1, m2] = *digits else {
        return None;
    };
    let digit = |b: u8| b.is_ascii_digit().then(|| i64::from(b - b'0'));
    let hours = digit(h1)? * 10 + digit(h2)?;
    let minutes = digit(m1)? * 10 + digit(m2)?;
    if hours > 23 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3_600 + minutes * 60))
}

/// Parses one `retry-after-ms` value: a non-negative number of milliseconds,
/// whole (`1500`) or with a fraction (`20.5` or `.5`, read to the
/// microsecond).
///
/// A whole part too large for a `u64` is read as the longest wait there is,
/// `u64::MAX` milliseconds, as [`parse_retry_after`] reads delta-seconds.
///
/// Returns `None` for an empty value, a sign, non-digits, a second point;
/// spaces and tabs around the number are allowed.
///
/// ```
/// use bayesretry_policy::parse_retry_after_ms;
/// use std::time::Duration;
///
/// assert_eq!(parse_retry_after_ms(b"1500"), Some(Duration::from_millis(1500)));
/// assert_eq!(parse_retry_after_ms(b" 20.5 "), Some(Duration::from_micros(20_500)));
/// assert_eq!(
///     parse_retry_after_ms(b"99999999999999999999999"),
///     Some(Duration::from_millis(u64::MAX)),
/// );
/// assert_eq!(parse_retry_after_ms(b"1e3"), None);
/// ```
pub fn parse_retry_after_ms(value: &[u8]) -> Option<Duration> {
    let (millis, fraction) = decimal(trim(value))?;
    // microseconds from the first three fraction digits; the rest are below
    // any timer's resolution
    let micros = scaled(fraction, 3);
    Some(Duration::from_millis(millis).saturating_add(Duration::from_micros(micros)))
}

/// A non-negative decimal number, `12` or `12.5` (or `12.`, or `.5`): its
/// whole part, as [`digits`] reads it (0 when the point comes first), and the
/// digits after the point (empty without one). `None` for anything else: no
/// digit on either side of the point, a second point, a sign, an exponent,
/// any other byte.
fn decimal(value: &[u8]) -> Option<(u64, &[u8])> {
    let (whole, fraction) = match value.iter().position(|&b| b == b'.') {
        Some(point) => (value.get(..point)?, value.get(point + 1..)?),
        None => (value, &[][..]),
    };
    if !fraction.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let whole = if whole.is_empty() && !fraction.is_empty() {
        0
    } else {
        digits(whole)?
    };
    Some((whole, fraction))
}

/// The first `places` digits of a fraction as a whole number of that many
/// places (`5` at 3 places is 500); the digits past them are cut.
fn scaled(fraction: &[u8], places: usize) -> u64 {
    fraction
        .iter()
        .chain(core::iter::repeat(&b'0'))
        .take(places)
        .fold(0_u64, |acc, &b| {
            acc.saturating_mul(10)
                .saturating_add(u64::from(b.wrapping_sub(b'0')))
        })
}

/// The most `<number><unit>` pieces read in one reset value (`1h2m3s` has
/// three); a longer value is not a duration any server writes, and is ignored.
const MAX_PIECES: usize = 8;

/// The smallest number without a unit that a reset value holds only as an
/// absolute time: `1_000_000_000` seconds is 2001-09-09 as a Unix time, and
/// nearly 32 years as a wait, which no server means. A Unix time in seconds
/// sent today (`1733100000`) is above it; a wait in seconds, far below.
const UNIX_SECONDS_FROM: u64 = 1_000_000_000;

/// 9999-12-31T23:59:59Z as a Unix time in seconds: the last instant an
/// HTTP-date can name. A number without a unit above it, and from
/// [`UNIX_MILLIS_FROM`] up to [`UNIX_MILLIS_TO`], is a Unix time in
/// milliseconds.
const UNIX_SECONDS_TO: u64 = 253_402_300_799;

/// The smallest number without a unit read as a Unix time in milliseconds
/// (2001-09-09 again).
const UNIX_MILLIS_FROM: u64 = 1_000_000_000_000;

/// 9999-12-31T23:59:59.999Z as a Unix time in milliseconds.
const UNIX_MILLIS_TO: u64 = 253_402_300_799_999;

/// Parses an `x-ratelimit-reset-*` value: a duration as Go writes one and the
/// OpenAI API sends it — `1s`, `6m0s`, `20ms`, `1h2m3.5s`, pieces of a decimal
/// number and a unit (`h`, `m`, `s`, `ms`, `us` or `µs`, `ns`) — or plain
/// seconds, `12` or `1.5`, as some other providers (Azure OpenAI) send it.
///
/// Returns `None`, so that the header is ignored, for anything else: an empty
/// value, a sign, a number without a unit after the first piece, an unknown
/// unit, more than eight pieces. A number too large for a `Duration` reads as
/// the longest wait there is, which stops the call as beyond the policy's
/// limit.
///
/// A number without a unit of 1,000,000,000 or more is not a wait: it is an
/// absolute time, a Unix time in seconds as GitHub and many other APIs send
/// in their reset headers (`1733100000`), or in milliseconds. Read as a wait
/// it would be decades; without a clock to measure it against, this function
/// ignores it (`None`). [`parse_rate_limit_reset_at`] reads it, and an RFC
/// 3339 timestamp too, against the wall clock.
///
/// ```
/// use bayesretry_policy::parse_rate_limit_reset;
/// use std::time::Duration;
///
/// assert_eq!(parse_rate_limit_reset(b"6m0s"), Some(Duration::from_secs(360)));
/// assert_eq!(parse_rate_limit_reset(b"1.5s"), Some(Duration::from_millis(1500)));
/// assert_eq!(parse_rate_limit_reset(b"20ms"), Some(Duration::from_millis(20)));
/// assert_eq!(parse_rate_limit_reset(b"12"), Some(Duration::from_secs(12)));
/// assert_eq!(parse_rate_limit_reset(b"1733100000"), None); // a Unix time
/// assert_eq!(parse_rate_limit_reset(b"-1s"), None);
/// assert_eq!(parse_rate_limit_reset(b"5 parsecs"), None);
/// ```
pub fn parse_rate_limit_reset(value: &[u8]) -> Option<Duration> {
    let mut rest = trim(value);
    if rest.is_empty() {
        return None;
    }
    if let Some((secs, fraction)) = decimal(rest) {
        if secs >= UNIX_SECONDS_FROM {
            return None;
        }
        let nanos = scaled(fraction, 9);
        return Some(Duration::from_secs(secs).saturating_add(Duration::from_nanos(nanos)));
    }
    let mut total_ns: u128 = 0;
    for _ in 0..MAX_PIECES {
        let number_len = rest
            .iter()
            .position(|&b| !(b.is_ascii_digit() || b == b'.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        let (whole, fraction) = decimal(number)?;
        let unit_len = after
            .iter()
            .position(|&b| b.is_ascii_digit() || b == b'.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let unit_ns: u128 = match unit {
            b"h" => 3_600_000_000_000,
            b"m" => 60_000_000_000,
            b"s" => 1_000_000_000,
            b"ms" => 1_000_000,
            b"us" | b"\xc2\xb5s" => 1_000,
            b"ns" => 1,
            _ => return None,
        };
        let part = u128::from(whole).saturating_mul(unit_ns).saturating_add(
            u128::from(scaled(fraction, 9)).saturating_mul(unit_ns) / 1_000_000_000,
        );
        total_ns = total_ns.saturating_add(part);
        rest = next;
        if rest.is_empty() {
            let secs = u64::try_from(total_ns / 1_000_000_000).unwrap_or(u64::MAX);
            let nanos = u64::try_from(total_ns % 1_000_000_000).unwrap_or(0);
            return Some(Duration::from_secs(secs).saturating_add(Duration::from_nanos(nanos)));
        }
    }
    None
}

/// Parses a rate-limit reset value as the wait from `now` until the limit
/// refills, whatever form the provider writes it in:
///
/// - a duration, as [`parse_rate_limit_reset`] reads one (`6m0s`, `1.5s`,
///   `20ms`, `12`): OpenAI's `x-ratelimit-reset-*`, Azure OpenAI's seconds;
/// - an RFC 3339 timestamp, `2025-02-24T20:37:51Z` (a fraction of a second
///   and a numeric offset, `+01:00`, allowed): Anthropic's
///   `anthropic-ratelimit-*-reset`;
/// - a number without a unit that can only be an absolute time, a Unix
///   time: in seconds from 1,000,000,000 (2001-09-09; a wait that long would
///   be 32 years) to the end of the year 9999, as GitHub's `x-ratelimit-reset`
///   and many others send it (`1733100000`), or in milliseconds from
///   1,000,000,000,000 to the end of 9999.
///
/// A time is measured against `now`, the wall clock that a `Retry-After`
/// HTTP-date is read against; one in the past is a wait of zero, as a
/// `Retry-After` date in the past is. A number between the two ranges of
/// Unix times, which is neither a plausible wait nor a time, is ignored
/// (`None`), as is a timestamp before 1970 or after 9999, an invalid date
/// (`2025-02-30`) or any other form.
///
/// ```
/// use bayesretry_policy::parse_rate_limit_reset_at;
/// use std::time::{Duration, SystemTime};
///
/// // 2024-12-02T00:40:00Z
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_733_100_000);
/// assert_eq!(parse_rate_limit_reset_at(b"6m0s", now), Some(Duration::from_secs(360)));
/// assert_eq!(parse_rate_limit_reset_at(b"1733100030", now), Some(Duration::from_secs(30)));
/// assert_eq!(parse_rate_limit_reset_at(b"1733100001500", now), Some(Duration::from_millis(1500)));
/// assert_eq!(
///     parse_rate_limit_reset_at(b"2024-12-02T00:41:00Z", now),
///     Some(Duration::from_secs(60)),
/// );
/// assert_eq!(parse_rate_limit_reset_at(b"1733099000", now), Some(Duration::ZERO)); // past
/// assert_eq!(parse_rate_limit_reset_at(b"500000000000", now), None);
/// ```
pub fn parse_rate_limit_reset_at(value: &[u8], now: SystemTime) -> Option<Duration> {
    let value = trim(value);
    let at = match decimal(value) {
        Some((whole, fraction)) if whole >= UNIX_SECONDS_FROM => {
            let since_epoch = if whole <= UNIX_SECONDS_TO {
                Duration::from_secs(whole).saturating_add(Duration::from_nanos(scaled(fraction, 9)))
            } else if (UNIX_MILLIS_FROM..=UNIX_MILLIS_TO).contains(&whole) {
                Duration::from_millis(whole)
            } else {
                return None;
            };
            SystemTime::UNIX_EPOCH.checked_add(since_epoch)?
        }
        Some(_) => return parse_rate_limit_reset(value),
        None => match rfc3339(value) {
            Some(at) => at,
            None => return parse_rate_limit_reset(value),
        },
    };
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An RFC 3339 timestamp (`2025-02-24T20:37:51Z`, `2025-02-24T20:37:51.25Z`,
/// `2025-02-24T21:37:51+01:00`) as a time, from 1970 to 9999; `None` for any
/// other text or an impossible date. The `T` and `Z` may be in lower case,
/// and the `T` a space, as RFC 3339 §5.6 allows.
///
/// Hand-written rather than a dependency: `httpdate` reads only the HTTP-date
/// forms, and this one fixed layout takes a few field reads and a day count.
fn rfc3339(text: &[u8]) -> Option<SystemTime> {
    let field = |from: usize, to: usize| text.get(from..to).and_then(digits);
    let at = |index: usize, allowed: &[u8]| text.get(index).is_some_and(|b| allowed.contains(b));
    let separated = at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":");
    if !separated {
        return None;
    }
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hour, minute, second) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    let valid = (1970..=9999).contains(&year)
        && (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && hour <= 23
        && minute <= 59
        // 60: a leap second
        && second <= 60;
    if !valid {
        return None;
    }
    let mut rest = text.get(19..)?;
    let mut nanos = 0;
    if let Some(after_point) = rest.strip_prefix(b".") {
        let len = after_point
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(after_point.len());
        if len == 0 {
            return None;
        }
        let (fraction, after) = after_point.split_at(len);
        nanos = scaled(fraction, 9);
        rest = after;
    }
    let east: i64 = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = digits(&[*h1, *h2])?;
            let minutes = digits(&[*m1, *m2])?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = i64::try_from(hours * 3_600 + minutes * 60).ok()?;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let local = days_since_epoch(year, month, day)?
        .checked_mul(86_400)?
        .checked_add(hour * 3_600 + minute * 60 + second)?;
    // the reading is the zone's clock: UTC is that reading less its offset
    let utc = if east >= 0 {
        local.checked_sub(east.unsigned_abs())?
    } else {
        local.checked_add(east.unsigned_abs())?
    };
    SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(utc))?
        .checked_add(Duration::from_nanos(nanos))
}

/// The days in `month` (1 to 12) of `year`, February's by the Gregorian
/// leap-year rule.
fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        _ => 28,
    }
}

/// The days from 1970-01-01 to a valid date of 1970 or later: the count of
/// days in whole 400-year eras and within the era, the year taken to start
/// in March so that February's leap day falls at its end. `None` before 1970.
fn days_since_epoch(year: u64, month: u64, day: u64) -> Option<u64> {
    let year = if month <= 2 {
        year.checked_sub(1)?
    } else {
        year
    };
    let era = year / 400;
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719_468: the days from 0000-03-01 to 1970-01-01
    (era * 146_097 + day_of_era).checked_sub(719_468)
}

/// `value` without HTTP's optional whitespace (spaces and tabs) at either end.
fn trim(value: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !is_ows(b)).unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |last| last + 1);
    value.get(start..end).unwrap_or(&[])
}

/// A non-empty run of ASCII digits as a `u64`, saturating: a number past
/// `u64::MAX` reads as `u64::MAX`. `None` when `value` is empty or holds
/// anything but ASCII digits.
///
/// The work is linear in the length of `value`, which is one header's: its
/// bytes are checked once, its leading zeros skipped, and at most
/// [`MAX_DIGITS`] digits folded into the number.
fn digits(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let first = value.iter().position(|&b| b != b'0').unwrap_or(value.len());
    let significant = value.get(first..).unwrap_or(&[]);
    if significant.len() > MAX_DIGITS {
        return Some(u64::MAX);
    }
    let folded = significant.iter().try_fold(0_u64, |acc, &b| {
        acc.checked_mul(10)?
            .checked_add(u64::from(b.wrapping_sub(b'0')))
    });
    Some(folded.unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_limit_reset_reads_every_unit_and_refuses_what_is_not_a_duration() {
        let read = |value: &str| parse_rate_limit_reset(value.as_bytes());
        assert_eq!(read("1h2m3.5s"), Some(Duration::from_millis(3_723_500)));
        assert_eq!(read("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(read("250us"), Some(Duration::from_micros(250)));
        assert_eq!(read("250\u{b5}s"), Some(Duration::from_micros(250)));
        assert_eq!(read("7ns"), Some(Duration::from_nanos(7)));
        assert_eq!(read(" 0s "), Some(Duration::ZERO));
        for bad in [
            "", "s", "1s5", "1d", "1S", "-1s", "+1s", "1 s", "1..5s", "1e3s",
        ] {
            assert_eq!(read(bad), None, "{bad:?}");
        }
        assert_eq!(read("1s1s1s1s1s1s1s1s"), Some(Duration::from_secs(8)));
        assert_eq!(read("1s1s1s1s1s1s1s1s1s"), None, "more than eight pieces");
        // far past a Duration: the longest wait there is, never a panic
        let huge = read("99999999999999999999999h");
        assert!(huge.is_some_and(|wait| wait > Duration::from_secs(u64::MAX / 2)));
    }

    #[test]
    fn an_rfc_3339_timestamp_reads_as_its_instant_and_an_impossible_one_not_at_all() {
        let secs = |at: &str| {
            rfc3339(at.as_bytes()).map(|time| time.duration_since(SystemTime::UNIX_EPOCH).unwrap())
        };
        let at = |s: u64| Some(Duration::from_secs(s));
        assert_eq!(secs("1970-01-01T00:00:00Z"), at(0));
        assert_eq!(secs("2024-12-02T00:40:00Z"), at(1_733_100_000));
        assert_eq!(secs("2024-12-02t00:40:00z"), at(1_733_100_000));
        assert_eq!(secs("2024-12-02 00:40:00Z"), at(1_733_100_000));
        assert_eq!(secs("2024-12-02T01:40:00+01:00"), at(1_733_100_000));
        assert_eq!(secs("2024-12-01T23:10:00-01:30"), at(1_733_100_000));
        assert_eq!(secs("2024-02-29T00:00:00Z"), at(1_709_164_800));
        assert_eq!(secs("2000-02-29T00:00:00Z"), at(951_782_400));
        assert_eq!(secs("9999-12-31T23:59:59Z"), at(253_402_300_799));
        assert_eq!(
            secs("2024-12-02T00:40:00.123456789987Z"),
            Some(Duration::new(1_733_100_000, 123_456_789))
        );
        for bad in [
            "",
            "2024-12-02",
            "2024-12-02T00:40:00",
            "2024-12-02T00:40:00+0100",
            "2024-12-02T00:40:00.Z",
            "2024-12-02T00:40:00ZZ",
            "2025-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-12-00T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-12-02T24:00:00Z",
            "2024-12-02T00:60:00Z",
            "2024-12-02T00:40:61Z",
            "1969-12-31T23:59:59Z",
            "1970-01-01T00:00:00+00:01",
            "+024-12-02T00:40:00Z",
            "2024-12-02T00:40:00+24:00",
        ] {
            assert_eq!(secs(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_number_that_can_only_be_a_time_is_read_as_one_or_ignored() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_733_100_000);
        let read = |value: &str| parse_rate_limit_reset_at(value.as_bytes(), now);
        assert_eq!(read("1733100030"), Some(Duration::from_secs(30)));
        assert_eq!(read(" 1733100030.5 "), Some(Duration::from_millis(30_500)));
        assert_eq!(read("1733100030000"), Some(Duration::from_secs(30)));
        assert_eq!(read("1733000000"), Some(Duration::ZERO));
        // a wait, not a time, below the first Unix time read
        assert_eq!(read("999999999"), Some(Duration::from_secs(999_999_999)));
        // past 9999 in seconds, before 2001 in milliseconds: neither
        assert_eq!(read("253402300800"), None);
        assert_eq!(read("999999999999"), None);
        assert_eq!(read("253402300800000"), None);
        assert_eq!(read("99999999999999999999999"), None);
        // with a unit it says what it is: a duration
        assert_eq!(
            read("1733100030s"),
            Some(Duration::from_secs(1_733_100_030))
        );
        assert_eq!(parse_rate_limit_reset(b"1733100030"), None);
        assert_eq!(parse_rate_limit_reset(b"1733100030000"), None);
    }

    /// Asserts that `parse` reads each of `values` as `expected`, naming the
    /// value that does not.
    fn each_reads<const N: usize>(
        values: [&[u8]; N],
        parse: impl Fn(&[u8]) -> Option<Duration>,
        expected: Option<Duration>,
    ) {
        for value in values {
            assert_eq!(parse(value), expected, "{}", String::from_utf8_lossy(value));
        }
    }

    /// 1994-11-06 08:49:30 UTC, seven seconds before the RFC's example date.
    fn before_rfc_date() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_770)
    }

    #[test]
    fn the_rfc_examples_parse() {
        let now = before_rfc_date();
        // RFC 9110 §10.2.3
        assert_eq!(
            parse_retry_after(b"Fri, 31 Dec 1999 23:59:59 GMT", now),
            Some(Duration::from_secs(946_684_799 - 784_111_770))
        );
        assert_eq!(
            parse_retry_after(b"120", now),
            Some(Duration::from_secs(120))
        );
        // RFC 9110 §5.6.7: the same instant in the three date forms
        for form in [
            &b"Sun, 06 Nov 1994 08:49:37 GMT"[..],
            b"Sunday, 06-Nov-94 08:49:37 GMT",
            b"Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_retry_after(form, now),
                Some(Duration::from_secs(7)),
                "{}",
                String::from_utf8_lossy(form)
            );
        }
    }

    #[test]
    fn a_date_in_the_past_or_now_is_no_wait() {
        let later = before_rfc_date() + Duration::from_secs(3_600);
        assert_eq!(
            parse_retry_after(b"Sun, 06 Nov 1994 08:49:37 GMT", later),
            Some(Duration::ZERO)
        );
        let exactly = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(
            parse_retry_after(b"Sun, 06 Nov 1994 08:49:37 GMT", exactly),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after(b"0", later), Some(Duration::ZERO));
    }

    #[test]
    fn the_rfc_5322_forms_of_common_formatters_are_read() {
        let now = before_rfc_date();
        let seven = Some(Duration::from_secs(7));
        each_reads(
            [
                &b"Sun, 6 Nov 1994 08:49:37 GMT"[..], // Java's RFC_1123_DATE_TIME
                b"Sun, 06 Nov 1994 08:49:37 UTC",     // Go's time.RFC1123
                b"Sun, 06 Nov 1994 08:49:37 UT",
                b"Sun, 06 Nov 1994 08:49:37 -0000", // Python's formatdate
                b"Sun, 06 Nov 1994 08:49:37 +0000", // PHP's gmdate('r')
                b"Sun, 06 Nov 1994 09:49:37 +0100", // PHP's date('r'), east of UTC
                b"Sun, 06 Nov 1994 03:19:37 -0530", // west of UTC
                b"Sun, 6 Nov 1994 08:49:37 +0000",
                b"Sun,  06 Nov 1994 08:49:37 UTC", // a doubled space
            ],
            |value| parse_retry_after(value, now),
            seven,
        );
        // the offset can move the date across midnight: the weekday is the
        // zone's own
        each_reads(
            [
                &b"Mon, 07 Nov 1994 00:49:37 +1600"[..],
                b"Mon, 07 Nov 1994 08:48:37 +2359",
                b"Sat, 05 Nov 1994 08:50:37 -2359",
            ],
            |value| parse_retry_after(value, now),
            seven,
        );
        // an offset of a day or more is no zone
        assert_eq!(
            parse_retry_after(b"Mon, 07 Nov 1994 08:49:37 +2400", now),
            None
        );
    }

    #[test]
    fn other_rfc_5322_forms_are_still_ignored() {
        let now = before_rfc_date();
        each_reads(
            [
                &b"Mon, 6 Nov 1994 08:49:37 GMT"[..], // the wrong weekday
                b"Sun, 06 Nov 1994 08:49:37 PST",     // a zone name not UTC's
                b"Sun, 06 Nov 1994 08:49:37 Z",
                b"06 Nov 1994 08:49:37 GMT",    // no weekday
                b"Sun, 06 Nov 94 08:49:37 GMT", // a two-digit year
                b"Sun, 006 Nov 1994 08:49:37 GMT",
                b"Sun, 6 Nov 1994 8:49:37 GMT",
                b"Sun, 06 Nov 1994 08:49:37 +01",
                b"Sun, 06 Nov 1994 08:49:37 +0160",
                b"Sun, 06 Nov 1994 08:49:37 ++100",
                b"Sun, 06 Nov 1994 08:49:37 -00000",
                b"Sun, 06 Nov 1994 08:49:37 GMT GMT",
                b"Sun, 06 Nov 1994 08:49:37",
                b"Sun,\t06 Nov 1994 08:49:37 UTC",
                b"Thu, 01 Jan 1970 00:30:00 +0100", // before 1970 in UTC
            ],
            |value| parse_retry_after(value, now),
            None,
        );
    }

    #[test]
    fn whitespace_around_the_value_is_allowed_inside_it_is_not() {
        let now = before_rfc_date();
        assert_eq!(
            parse_retry_after(b" \t 5 \t", now),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse_retry_after(b"  Sun, 06 Nov 1994 08:49:37 GMT  ", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(parse_retry_after(b"1 2", now), None);
        assert_eq!(parse_retry_after(b"", now), None);
        assert_eq!(parse_retry_after(b"   ", now), None);
        assert_eq!(parse_retry_after(b"\n5", now), None);
    }

    #[test]
    fn hostile_values_are_ignored() {
        let now = before_rfc_date();
        each_reads(
            [
                &b"-1"[..],
                b"-0",
                b"+5",
                b"1e3",
                b"0x10",
                b"5s",
                b"abc",
                "\u{661}\u{662}".as_bytes(), // Arabic-Indic digits
                "５".as_bytes(),             // a full-width digit
                "Sun, 06 Nov 1994 08:49:37 GMT\u{e9}".as_bytes(),
                b"\xff\xfe",
                b"Sun, 06 Nov 1969 08:49:37 GMT",   // before 1970
                b"Thu, 01 Jan 1970 00:00:00 GMT\0", // a NUL after a date
                b"Fri, 31 Dec 10000 23:59:59 GMT",  // after 9999
                b"Sat, 01 Jan 0000 00:00:00 GMT",
                b"Sun, 32 Nov 1994 08:49:37 GMT",
                b"Sun, 06 Nov 1994 25:49:37 GMT",
                b"Sun, 06 Nov 1994 08:49:37 PST",
            ],
            |value| parse_retry_after(value, now),
            None,
        );
    }

    #[test]
    fn the_largest_values_that_fit_are_read_not_wrapped() {
        let now = before_rfc_date();
        assert_eq!(
            parse_retry_after(b"18446744073709551615", now),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            parse_retry_after(b"00000000000000000001", now),
            Some(Duration::from_secs(1))
        );
        // the last date httpdate reads
        let far = parse_retry_after(b"Fri, 31 Dec 9999 23:59:59 GMT", now);
        assert!(far.is_some_and(|wait| wait > Duration::from_secs(250_000_000_000)));
    }

    #[test]
    fn delta_seconds_too_large_to_store_read_as_the_longest_wait() {
        let now = before_rfc_date();
        let longest = Some(Duration::from_secs(u64::MAX));
        each_reads(
            [
                &b"18446744073709551616"[..], // u64::MAX + 1
                b"99999999999999999999",      // 20 digits, past u64::MAX
                b"99999999999999999999999999999999999999999999",
                b"100000000000000000000",
                b" 99999999999999999999999 ",
            ],
            |value| parse_retry_after(value, now),
            longest,
        );
        // leading zeros are no magnitude: read past the digit cap, not saturated
        assert_eq!(
            parse_retry_after(b"000000000000000000000000000042", now),
            Some(Duration::from_secs(42))
        );
        assert_eq!(
            parse_retry_after(b"00000000000000000000000018446744073709551615", now),
            longest
        );
        // a long run of digits followed by anything else is still garbage
        each_reads(
            [
                &b"99999999999999999999999x"[..],
                b"99999999999999999999999.x",
                b"+99999999999999999999999",
                b"99999999999999999999 99999",
            ],
            |value| parse_retry_after(value, now),
            None,
        );
    }

    #[test]
    fn fractional_seconds_are_read_to_the_millisecond() {
        let now = before_rfc_date();
        let read = |value: &[u8]| parse_retry_after(value, now);
        assert_eq!(read(b"1.5"), Some(Duration::from_millis(1_500)));
        assert_eq!(read(b"0.25"), Some(Duration::from_millis(250)));
        assert_eq!(read(b" 2.0625\t"), Some(Duration::from_millis(2_062)));
        assert_eq!(read(b"7."), Some(Duration::from_secs(7)));
        assert_eq!(read(b"0.0001"), Some(Duration::ZERO));
        // no digit before the point, as Python's float and JavaScript's
        // parseFloat, which the SDKs use, read it
        assert_eq!(read(b".5"), Some(Duration::from_millis(500)));
        assert_eq!(read(b" .25 "), Some(Duration::from_millis(250)));
        // a whole part too large to store is still the longest wait there is
        let longest = read(b"99999999999999999999999.5");
        assert!(longest.is_some_and(|wait| wait >= Duration::from_secs(u64::MAX)));
        each_reads(
            [
                &b"."[..],
                b" . ",
                b"-.5",
                b"-1.5",
                b"+1.5",
                b"1.2.3",
                b"1,5",
                b"1.5s",
                b"1. 5",
                b"1.5e3",
                b"NaN",
                "1\u{661}.5".as_bytes(),
            ],
            read,
            None,
        );
    }

    #[test]
    fn milliseconds_too_large_to_store_read_as_the_longest_wait() {
        let longest = Some(Duration::from_millis(u64::MAX));
        each_reads(
            [
                &b"18446744073709551616"[..],
                b"99999999999999999999999",
                b"\t1000000000000000000000000000000\t",
            ],
            parse_retry_after_ms,
            longest,
        );
        assert_eq!(
            parse_retry_after_ms(b"0000000000000000000000001.5"),
            Some(Duration::from_micros(1_500))
        );
    }

    #[test]
    fn milliseconds_parse_whole_and_fractional() {
        assert_eq!(
            parse_retry_after_ms(b"1500"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after_ms(b"0"), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after_ms(b"20.5"),
            Some(Duration::from_micros(20_500))
        );
        assert_eq!(
            parse_retry_after_ms(b"1.23456"),
            Some(Duration::from_micros(1_234))
        );
        assert_eq!(parse_retry_after_ms(b"7."), Some(Duration::from_millis(7)));
        assert_eq!(
            parse_retry_after_ms(b".5"),
            Some(Duration::from_micros(500))
        );
        assert_eq!(
            parse_retry_after_ms(b"\t250 "),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after_ms(b"18446744073709551615"),
            Some(Duration::from_millis(u64::MAX))
        );
        each_reads(
            [
                &b""[..],
                b".",
                b"-.5",
                b"-1",
                b"+1",
                b"1.2.3",
                b"1,5",
                b"NaN",
                b"inf",
                b"1e3",
                b"99999999999999999999999.x",
                b"-99999999999999999999999",
                "１".as_bytes(),
            ],
            parse_retry_after_ms,
            None,
        );
    }
}
