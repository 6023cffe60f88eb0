//! [`scan`]: recognises a log line in canonical form in one pass, without
//! parsing it into values or copying it — the verifier's fast path.
//!
//! A line in canonical form is fully determined by its grammar (fixed keys in a
//! fixed order, one spelling per value), so checking it is a matter of walking
//! the grammar over the bytes. A line the scanner does not recognise goes to the
//! slow path, which parses it as JSON to say exactly what is wrong with it (or,
//! should the two ever disagree, accepts it: the slow path is the reference).

use crate::hash::{Hash, hex_digit};

/// A line recognised as an entry in canonical form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// The entry's sequence number.
    pub(crate) seq: u64,
    /// Where the hash field starts: the entry's canonical form is the line up to
    /// here, followed by `}`.
    pub(crate) body: usize,
    /// The hash stored on the line.
    pub(crate) hash: Hash,
    /// What the entry records.
    pub(crate) kind: Kind,
}

/// What an entry records, as a verifier tallies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A decision.
    Decision,
    /// An outcome.
    Outcome,
    /// A loss of this many records.
    Dropped(u64),
}

/// The line (without its newline) as an entry in canonical form, or `None` if
/// it is not one.
pub(crate) fn scan(line: &[u8]) -> Option<Scanned> {
    let mut at = Cursor { line, pos: 0 };
    at.literal(b"{\"v\":1,\"seq\":")?;
    let seq = at.integer()?;
    at.literal(b",\"time_ms\":")?;
    at.integer()?;
    at.literal(b",\"event\":\"")?;
    let kind;
    if at.eat(b"decision\"") {
        kind = Kind::Decision;
        at.call()?;
        at.literal(b",\"retry\":")?;
        at.boolean()?;
        at.literal(b",\"p\":\"")?;
        at.hex(16)?;
        at.literal(b"\",\"ev\":\"")?;
        at.hex(16)?;
        at.literal(b"\",\"reason\":")?;
        at.string()?;
    } else if at.eat(b"outcome\"") {
        kind = Kind::Outcome;
        at.call()?;
        at.literal(b",\"success\":")?;
        at.boolean()?;
    } else if at.eat(b"dropped\"") {
        at.literal(b",\"count\":")?;
        kind = Kind::Dropped(at.integer()?);
    } else {
        return None;
    }
    let body = at.pos;
    at.literal(b",\"hash\":\"")?;
    let hash = Hash::from_hex(at.hex(64)?)?;
    at.literal(b"\"}")?;
    if at.pos != line.len() {
        return None;
    }
    // strings were checked byte by byte; their non-ASCII bytes must be UTF-8
    core::str::from_utf8(line).ok()?;
    Some(Scanned {
        seq,
        body,
        hash,
        kind,
    })
}

/// A position in a line.
struct Cursor<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.line.get(self.pos).copied()
    }

    /// Consumes `text` if the line goes on with it.
    fn eat(&mut self, text: &[u8]) -> bool {
        let end = self.pos.saturating_add(text.len());
        if self.line.get(self.pos..end) == Some(text) {
            self.pos = end;
            true
        } else {
            false
        }
    }

    fn literal(&mut self, text: &[u8]) -> Option<()> {
        self.eat(text).then_some(())
    }

    /// `n` lowercase hexadecimal digits.
    fn hex(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let digits = self.line.get(self.pos..end)?;
        if !digits.iter().all(|&c| hex_digit(c).is_some()) {
            return None;
        }
        self.pos = end;
        Some(digits)
    }

    /// An unsigned integer: `0`, or digits without a leading zero, within `u64`.
    fn integer(&mut self) -> Option<u64> {
        let first = self.peek()?;
        if first == b'0' {
            self.pos += 1;
            return Some(0);
        }
        let mut value: u64 = 0;
        let mut digits = 0;
        // a u64 has at most 20 digits: the 21st is refused before the loop ends
        while let Some(c @ b'0'..=b'9') = self.peek() {
            if digits == 20 {
                return None;
            }
            value = value.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            digits += 1;
            self.pos += 1;
        }
        (digits > 0).then_some(value)
    }

    fn boolean(&mut self) -> Option<bool> {
        if self.eat(b"true") {
            Some(true)
        } else if self.eat(b"false") {
            Some(false)
        } else {
            None
        }
    }

    /// The fields that name a call: endpoint, attempt (within `u32`), class.
    fn call(&mut self) -> Option<()> {
        self.literal(b",\"endpoint\":")?;
        self.string()?;
        self.literal(b",\"attempt\":")?;
        u32::try_from(self.integer()?).ok()?;
        self.literal(b",\"class\":")?;
        self.string()
    }

    /// A string as the canonical form escapes it: `\"`, `\\` and `\u00xx` for
    /// the bytes below 0x20, which appear nowhere raw.
    fn string(&mut self) -> Option<()> {
        self.literal(b"\"")?;
        // each turn consumes at least one byte of the line, or returns
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => {
                    self.pos += 1;
                    if !(self.eat(b"\"") || self.eat(b"\\")) {
                        self.literal(b"u00")?;
                        let high = self.peek()?;
                        if high != b'0' && high != b'1' {
                            return None;
                        }
                        self.pos += 1;
                        self.hex(1)?;
                    }
                }
                0x00..=0x1f => return None,
                _ => self.pos += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scan;
    use crate::{Event, Fsync, Hash, JsonlWriter, Record};

    #[test]
    fn every_line_the_writer_writes_is_recognised() {
        let names = [
            "",
            "a",
            "\"q\\",
            "\u{0}\u{1f}\n\t",
            "\u{7f}é✓\u{1d11e}\u{2028}",
        ];
        let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
        let mut expected = Vec::new();
        for (i, name) in names.iter().cycle().take(60).enumerate() {
            let i = i as u64;
            let event = match i % 3 {
                0 => Event::Decision {
                    endpoint: (*name).to_owned(),
                    attempt: u32::MAX - i as u32,
                    error_class: names[(i as usize + 1) % names.len()].to_owned(),
                    retry: i % 2 == 0,
                    probability: f64::from_bits(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                    expected_value: -(i as f64) / 7.0,
                    reason: (*name).to_owned(),
                },
                1 => Event::Outcome {
                    endpoint: (*name).to_owned(),
                    attempt: i as u32,
                    error_class: String::new(),
                    success: i % 2 == 1,
                },
                _ => Event::Dropped {
                    count: u64::MAX - i,
                },
            };
            let record = Record::new(i * 1_000_003, event);
            expected.push((writer.append(&record).ok(), record.canonical(i)));
        }
        let bytes = writer.into_inner().unwrap_or_default();
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), expected.len());
        for (seq, (line, (hash, canonical))) in lines.iter().zip(&expected).enumerate() {
            let scanned = scan(line).map(|s| (s.seq, s.hash, [&line[..s.body], b"}"].concat()));
            assert_eq!(
                scanned,
                Some((seq as u64, hash.unwrap_or(Hash::GENESIS), canonical.clone()))
            );
        }
    }

    #[test]
    fn near_misses_of_a_canonical_line_are_not_recognised() {
        let good = concat!(
            r#"{"v":1,"seq":12,"time_ms":0,"event":"outcome","endpoint":"a\"\\\u000a","#,
            r#""attempt":4294967295,"class":"é","success":false,"hash":""#,
            "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
            r#""}"#
        );
        let scanned = scan(good.as_bytes());
        assert_eq!(scanned.map(|s| s.seq), Some(12));
        assert_eq!(
            scanned.map(|s| &good[..s.body]),
            good.split(",\"hash\"").next()
        );
        for (from, to) in [
            ("\"seq\":12", "\"seq\":012"),
            ("\"time_ms\":0", "\"time_ms\":00"),
            ("4294967295", "4294967296"),
            ("\\u000a", "\\n"),
            ("\\u000a", "\\u000A"),
            ("\\u000a", "\\u0020"),
            ("\\u000a", "\n"),
            ("\"v\":1", "\"v\":2"),
            ("false", "False"),
            ("00112233", "0011223G"),
            ("outcome", "Outcome"),
            ("\"}", "\"} "),
            ("é", "\u{7f}\u{0}"),
        ] {
            let bad = good.replacen(from, to, 1);
            assert_ne!(bad, good);
            assert_eq!(scan(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(scan(&good.as_bytes()[..good.len() - 1]), None);
        let mut not_utf8 = good.as_bytes().to_vec();
        let at = good.find('é').unwrap_or_default();
        not_utf8[at] = 0xff;
        assert_eq!(scan(&not_utf8), None);
        let seq_max = good.replacen("\"seq\":12", "\"seq\":18446744073709551615", 1);
        assert_eq!(scan(seq_max.as_bytes()).map(|s| s.seq), Some(u64::MAX));
        let seq_over = good.replacen("\"seq\":12", "\"seq\":18446744073709551616", 1);
        assert_eq!(scan(seq_over.as_bytes()), None);
    }
}
