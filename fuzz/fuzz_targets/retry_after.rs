//! Retry-After and retry-after-ms parsing on arbitrary header bytes and clocks:
//! never a panic, and a value reads the same whatever optional whitespace
//! surrounds it. (A parsed wait may be far beyond any clock: delta-seconds up to
//! `u64::MAX` are read as they are, and the policy's Retry-After limit, not the
//! parser, stops a call that would wait that long.)
#![no_main]

use core::time::Duration;
use std::time::UNIX_EPOCH;

use bayesretry_http::{parse_retry_after, parse_retry_after_ms};
use libfuzzer_sys::fuzz_target;

/// 9999-12-31T23:59:59Z, the last moment an HTTP-date can name.
const LAST_DATE_SECS: u64 = 253_402_300_799;

fuzz_target!(|data: &[u8]| {
    // the first 8 bytes pick the clock (anywhere from 1970 to the year 9999),
    // the rest is the header value
    let (clock, value) = data.split_at(data.len().min(8));
    let mut bytes = [0u8; 8];
    bytes[..clock.len()].copy_from_slice(clock);
    let now_secs = u64::from_le_bytes(bytes) % LAST_DATE_SECS;
    let now = UNIX_EPOCH + Duration::from_secs(now_secs);

    if let Some(wait) = parse_retry_after(value, now) {
        let padded = [b" \t".as_slice(), value, b"\t ".as_slice()].concat();
        assert_eq!(
            parse_retry_after(&padded, now),
            Some(wait),
            "surrounding whitespace changed the reading"
        );
    }
    if let Some(wait) = parse_retry_after_ms(value) {
        let padded = [b" ".as_slice(), value, b"\t".as_slice()].concat();
        assert_eq!(parse_retry_after_ms(&padded), Some(wait));
    }
});
