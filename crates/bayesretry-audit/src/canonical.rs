//! The canonical form of an entry: the exact bytes that are hashed.
//!
//! `docs/SPEC.md` ("Audit log") is the normative description; this file is its
//! implementation, and the test vectors under `tests/data/` (made by an
//! independent script) hold the two together.

use crate::hash::{HEX, Hash};

/// The version of the canonical form, written as the `v` field of every entry.
pub(crate) const VERSION: u64 = 1;

/// A record seen through borrowed fields, so that the verifier can rebuild the
/// canonical form of a parsed line without allocating.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    pub(crate) time_ms: u64,
    pub(crate) event: EventView<'a>,
}

/// The event of a [`View`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum EventView<'a> {
    Decision {
        endpoint: &'a str,
        attempt: u32,
        class: &'a str,
        retry: bool,
        p_bits: u64,
        ev_bits: u64,
        reason: &'a str,
    },
    Outcome {
        endpoint: &'a str,
        attempt: u32,
        class: &'a str,
        success: bool,
    },
    Dropped {
        count: u64,
    },
    Continues {
        prev: Hash,
    },
}

/// Appends the canonical form of `view` as entry `seq` to `out`.
pub(crate) fn write(seq: u64, view: &View<'_>, out: &mut Vec<u8>) {
    write_start(seq, out);
    push_u64(out, view.time_ms);
    match view.event {
        EventView::Decision {
            endpoint,
            attempt,
            class,
            retry,
            p_bits,
            ev_bits,
            reason,
        } => {
            out.extend_from_slice(b",\"event\":\"decision\"");
            push_call(out, endpoint, attempt, class);
            out.extend_from_slice(b",\"retry\":");
            push_bool(out, retry);
            out.extend_from_slice(b",\"p\":");
            push_f64_bits(out, p_bits);
            out.extend_from_slice(b",\"ev\":");
            push_f64_bits(out, ev_bits);
            out.extend_from_slice(b",\"reason\":");
            push_str(out, reason);
        }
        EventView::Outcome {
            endpoint,
            attempt,
            class,
            success,
        } => {
            out.extend_from_slice(b",\"event\":\"outcome\"");
            push_call(out, endpoint, attempt, class);
            out.extend_from_slice(b",\"success\":");
            push_bool(out, success);
        }
        EventView::Dropped { count } => {
            out.extend_from_slice(b",\"event\":\"dropped\",\"count\":");
            push_u64(out, count);
        }
        EventView::Continues { prev } => {
            out.extend_from_slice(b",\"event\":\"continues\",\"prev\":\"");
            prev.write_hex(out);
            out.push(b'"');
        }
    }
    out.push(b'}');
}

/// The fields that name a call: endpoint, attempt, class.
fn push_call(out: &mut Vec<u8>, endpoint: &str, attempt: u32, class: &str) {
    out.extend_from_slice(b",\"endpoint\":");
    push_str(out, endpoint);
    out.extend_from_slice(b",\"attempt\":");
    push_u64(out, u64::from(attempt));
    out.extend_from_slice(b",\"class\":");
    push_str(out, class);
}

fn push_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends what every entry numbered `seq` begins with, whatever it holds:
/// `{"v":1,"seq":<seq>,"time_ms":`.
pub(crate) fn write_start(seq: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"v\":");
    push_u64(out, VERSION);
    out.extend_from_slice(b",\"seq\":");
    push_u64(out, seq);
    out.extend_from_slice(b",\"time_ms\":");
}

/// An unsigned integer in decimal: no sign, no leading zero (zero is `0`).
fn push_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    // a u64 has at most 20 decimal digits: the loop runs at most 20 times
    for slot in digits.iter_mut().rev() {
        // the remainder is below 10, so the cast cannot truncate
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
        start -= 1;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(start..).unwrap_or_default());
}

/// An `f64` as its IEEE 754 binary64 bit pattern: a JSON string of exactly 16
/// lowercase hexadecimal digits, most significant first.
fn push_f64_bits(out: &mut Vec<u8>, bits: u64) {
    out.push(b'"');
    for shift in (0..16).rev() {
        // the mask keeps 4 bits, so the index is below 16
        out.push(HEX[((bits >> (shift * 4)) & 0xf) as usize]);
    }
    out.push(b'"');
}

/// A string as a JSON string: `"` and `\` escaped with a backslash, every byte
/// below 0x20 as `\u00xx` (lowercase hex), everything else (DEL and all of
/// non-ASCII included) as its own UTF-8 bytes.
fn push_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut run = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(run..i).unwrap_or_default());
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0x0f)]);
        } else {
            out.extend_from_slice(escape);
        }
        run = i + 1;
    }
    out.extend_from_slice(bytes.get(run..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::{push_f64_bits, push_str, push_u64};

    fn string(text: &str) -> String {
        let mut out = Vec::new();
        push_str(&mut out, text);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn strings_escape_only_quote_backslash_and_control_bytes() {
        assert_eq!(string("plain"), "\"plain\"");
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string("\n\t\u{0}\u{1f}"), r#""\u000a\u0009\u0000\u001f""#);
        assert_eq!(string("\u{7f}é✓\u{2028}"), "\"\u{7f}é✓\u{2028}\"");
        assert_eq!(string("/"), "\"/\"");
        assert_eq!(string(""), "\"\"");
    }

    #[test]
    fn integers_have_no_leading_zeros() {
        for (value, text) in [
            (0, "0"),
            (7, "7"),
            (10, "10"),
            (1_700_000_000_123, "1700000000123"),
            (u64::MAX, "18446744073709551615"),
        ] {
            let mut out = Vec::new();
            push_u64(&mut out, value);
            assert_eq!(out, text.as_bytes());
        }
    }

    #[test]
    fn floats_are_their_bit_patterns() {
        for (value, text) in [
            (0.0_f64, "\"0000000000000000\""),
            (-0.0, "\"8000000000000000\""),
            (0.5, "\"3fe0000000000000\""),
            (f64::INFINITY, "\"7ff0000000000000\""),
        ] {
            let mut out = Vec::new();
            push_f64_bits(&mut out, value.to_bits());
            assert_eq!(out, text.as_bytes());
        }
    }
}
