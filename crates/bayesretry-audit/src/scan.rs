//! [`scan`]: recognises a log line in canonical form in one pass, without
//! parsing it into values or copying it — the verifier's fast path.
//!
//! A line in canonical form is fully determined by its grammar (fixed keys in a
//! fixed order, one spelling per value), so checking it is a matter of walking
//! the grammar over the bytes. A line the scanner does not recognise goes to the
//! slow path, which parses it as JSON to say exactly what is wrong with it (or,
//! should the two ever disagree, accepts it: the slow path is the reference).
//!
//! The same walk tells whether the text a crash left after a log's last whole
//! line is the beginning of a line in canonical form ([`begins_an_entry`]),
//! which is all `JsonlWriter::open_after_crash` cuts.

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
    /// The link to the entry before, in another file: its hash.
    Continues(Hash),
}

/// The line (without its newline) as an entry in canonical form, or `None` if
/// it is not one.
pub(crate) fn scan(line: &[u8]) -> Option<Scanned> {
    let scanned = Cursor::<false>::new(line).entry()?;
    // strings were checked byte by byte; their non-ASCII bytes must be UTF-8
    core::str::from_utf8(line).ok()?;
    Some(scanned)
}

/// Whether `text` is how a line in canonical form begins: its first bytes, up
/// to all of it but its newline. That is what a writer stopped while it wrote
/// the line leaves, and nothing else is: text that strays from the form at
/// any byte — another spelling, bytes after the line's end — was not written
/// by a writer of this format.
pub(crate) fn begins_an_entry(text: &[u8]) -> bool {
    let mut at = Cursor::<true>::new(text);
    if at.entry().is_some() {
        return core::str::from_utf8(text).is_ok();
    }
    // the grammar held up to the end of the text, where the line was cut,
    // maybe inside a character: UTF-8 up to that character
    at.ended && core::str::from_utf8(text).map_or_else(|err| err.error_len().is_none(), |_| true)
}

impl<const PREFIX: bool> Cursor<'_, PREFIX> {
    fn new(line: &[u8]) -> Cursor<'_, PREFIX> {
        Cursor {
            line,
            pos: 0,
            ended: false,
        }
    }

    /// Walks the grammar of an entry in canonical form over the whole line.
    /// `None` if the line is not one: `ended` then says whether the grammar
    /// held up to the line's end, so that the line is the beginning of one.
    fn entry(&mut self) -> Option<Scanned> {
        let at = self;
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
        } else if at.eat(b"continues\"") {
            at.literal(b",\"prev\":\"")?;
            let prev = Hash::from_hex(at.hex(64)?)?;
            at.literal(b"\"")?;
            kind = Kind::Continues(prev);
        } else {
            return None;
        }
        let body = at.pos;
        at.literal(b",\"hash\":\"")?;
        let hash = Hash::from_hex(at.hex(64)?)?;
        at.literal(b"\"}")?;
        if at.pos != at.line.len() {
            return None;
        }
        Some(Scanned {
            seq,
            body,
            hash,
            kind,
        })
    }
}

/// A position in a line. With `PREFIX`, the cursor also notes whether the
/// grammar ran into the line's end ([`begins_an_entry`]); without it, as the
/// verifier's fast path walks it, that bookkeeping is compiled out.
struct Cursor<'a, const PREFIX: bool> {
    line: &'a [u8],
    pos: usize,
    /// The grammar ran into the end of the line: what the line held until
    /// then was as the grammar wants it (see [`begins_an_entry`]).
    ended: bool,
}

impl<'a, const PREFIX: bool> Cursor<'a, PREFIX> {
    /// The next byte; at the end of the line, `None`, noted in `ended`.
    fn peek(&mut self) -> Option<u8> {
        let next = self.line.get(self.pos).copied();
        if PREFIX {
            self.ended |= next.is_none();
        }
        next
    }

    /// The bytes left.
    fn rest(&self) -> &'a [u8] {
        self.line.get(self.pos..).unwrap_or_default()
    }

    /// Consumes `text` if the line goes on with it. A line that ends within
    /// `text`, as it begins, is noted in `ended`.
    fn eat(&mut self, text: &[u8]) -> bool {
        let end = self.pos.saturating_add(text.len());
        if self.line.get(self.pos..end) == Some(text) {
            self.pos = end;
            true
        } else {
            if PREFIX {
                self.ended |= text.starts_with(self.rest());
            }
            false
        }
    }

    fn literal(&mut self, text: &[u8]) -> Option<()> {
        self.eat(text).then_some(())
    }

    /// `n` lowercase hexadecimal digits.
    fn hex(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let Some(digits) = self.line.get(self.pos..end) else {
            // fewer than `n` bytes left: the line ends among the digits
            if PREFIX {
                self.ended |= self.rest().iter().all(|&c| hex_digit(c).is_some());
            }
            return None;
        };
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
        if u32::try_from(self.integer()?).is_err() {
            // digits beyond a u32 stray from the form, even where the line ends
            self.ended = false;
            return None;
        }
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
    use super::{begins_an_entry, scan};
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

    #[test]
    fn every_beginning_of_a_line_begins_an_entry_and_a_stray_byte_ends_that() {
        let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
        let events = [
            Event::Decision {
                endpoint: "é\"\\\n✓\u{1d11e}".to_owned(),
                attempt: u32::MAX,
                error_class: "http-503".to_owned(),
                retry: false,
                probability: 0.25,
                expected_value: -1.5,
                reason: "negative_expected_value".to_owned(),
            },
            Event::Outcome {
                endpoint: String::new(),
                attempt: 0,
                error_class: "\u{1f}".to_owned(),
                success: true,
            },
            Event::Dropped { count: u64::MAX },
        ];
        for (i, event) in events.into_iter().enumerate() {
            assert!(writer.append(&Record::new(i as u64 * 10, event)).is_ok());
        }
        let bytes = writer.into_inner().unwrap_or_default();
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            for end in 0..=line.len() {
                let text = &line[..end];
                assert!(begins_an_entry(text), "{}", String::from_utf8_lossy(text));
            }
            assert!(!begins_an_entry(&[line, b"x"].concat()));
            assert!(!begins_an_entry(&[line, b"\n"].concat()));
        }
        let start = r#"{"v":1,"seq":0,"time_ms":5,"event":"outcome","endpoint":"a","attempt":"#;
        for stray in [
            "{\"v\":1,\"seq\":0,\"time_ms\":5}junk",
            "{\"v\":1,\"seq\":0,\"time_ms\":5,\"hash\":\"",
            "{\"v\":1,\"seq\":0,\"time_ms\":05",
            "{\"v\": 1",
            "{\"v\":1,\"seq\":0,\"time_ms\":5,\"event\":\"droppedx",
            "{\"v\":1,\"seq\":0,\"time_ms\":5,\"event\":\"dropped\",\"count\":1}",
            "{\"v\":1,\"seq\":0,\"time_ms\":5,\"event\":\"outcome\",\"endpoint\":\"\\n",
            "{\"v\":1,\"seq\":0,\"time_ms\":5,\"event\":\"outcome\",\"endpoint\":\"\\u00A",
            "{\"v\":1,\"seq\":0,\"time_ms\":5,\"event\":\"outcome\",\"endpoint\":\"\t",
        ] {
            assert!(!begins_an_entry(stray.as_bytes()), "{stray}");
        }
        // an attempt beyond a u32, even where the line ends
        assert!(begins_an_entry(format!("{start}4294967295").as_bytes()));
        assert!(!begins_an_entry(format!("{start}4294967296").as_bytes()));
        // a character cut at the end is a beginning; a broken one inside is not
        let cut = format!("{start}1,\"class\":\"é");
        assert!(begins_an_entry(&cut.as_bytes()[..cut.len() - 1]));
        let mut broken = cut.into_bytes();
        broken.insert(broken.len() - 2, 0xff);
        assert!(!begins_an_entry(&broken));
    }
}
