//! [`Tally`] and [`read_outcomes`]: a streaming reader of outcome tokens.

use std::io::{self, Read};

use crate::error::Error;

/// How many bytes a read asks for at a time.
const CHUNK: usize = 64 * 1024;

/// The longest token kept for an error message; longer ones are cut and marked.
const MAX_SHOWN: usize = 24;

/// The successes and failures counted in an outcome stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tally {
    successes: u64,
    failures: u64,
}

impl Tally {
    /// A tally of `successes` and `failures`.
    pub const fn new(successes: u64, failures: u64) -> Tally {
        Tally {
            successes,
            failures,
        }
    }

    /// The outcomes that were successes.
    pub const fn successes(&self) -> u64 {
        self.successes
    }

    /// The outcomes that were failures.
    pub const fn failures(&self) -> u64 {
        self.failures
    }

    /// All outcomes.
    pub const fn total(&self) -> u64 {
        self.successes.saturating_add(self.failures)
    }
}

/// Counts the outcomes in `reader`, a stream of whitespace-separated tokens.
///
/// A success is `1`, `ok` or `true`; a failure is `0`, `fail` or `false`, in any
/// letter case. Tokens are separated by any ASCII whitespace, newlines included,
/// and a `#` at the start of a token comments out the rest of its line, so a file
/// can say where its outcomes came from. A UTF-8 byte-order mark at the start
/// of the stream, as Windows editors write one, is skipped. `source` names the stream in errors
/// (a path, or `<stdin>`).
///
/// The reader is consumed in 64 KiB chunks and nothing but the counts is kept, so
/// memory stays constant whatever the length of the stream.
///
/// # Errors
///
/// [`Error::BadOutcome`] for the first token that is not an outcome, with its line
/// and column; [`Error::Read`] if reading fails.
///
/// ```
/// use bayesretry_cli::{Tally, read_outcomes};
///
/// let tally = read_outcomes("1 1 0 1\n0 0 0".as_bytes(), "<stdin>")?;
/// assert_eq!(tally, Tally::new(3, 4));
/// let words = read_outcomes("ok FAIL true  # retried by hand\nfalse".as_bytes(), "log")?;
/// assert_eq!(words, Tally::new(2, 2));
///
/// let err = read_outcomes("1 0\n1 maybe 0".as_bytes(), "log").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "log:2:3: bad outcome token \"maybe\": expected 1, 0, ok, fail, true or false"
/// );
/// # Ok::<(), bayesretry_cli::Error>(())
/// ```
pub fn read_outcomes<R: Read>(mut reader: R, source: &str) -> Result<Tally, Error> {
    let mut scanner = Scanner::new();
    let mut buffer = vec![0_u8; CHUNK];
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => {
                return Err(Error::Read {
                    path: source.to_owned(),
                    error,
                });
            }
        };
        let chunk = buffer.get(..read).unwrap_or_default();
        scanner.feed(chunk).map_err(|bad| bad.into_error(source))?;
    }
    scanner.finish().map_err(|bad| bad.into_error(source))
}

/// A token that is not an outcome, and where it starts.
#[derive(Debug)]
struct BadToken {
    line: u64,
    column: u64,
    shown: Vec<u8>,
    cut: bool,
}

impl BadToken {
    fn into_error(self, source: &str) -> Error {
        let mut token = String::from_utf8_lossy(&self.shown).into_owned();
        if self.cut {
            token.push('…');
        }
        Error::BadOutcome {
            source: source.to_owned(),
            line: self.line,
            column: self.column,
            token,
        }
    }
}

/// The tokenizer's state between chunks: a token may straddle two reads.
#[derive(Debug)]
struct Scanner {
    tally: Tally,
    /// 1-based line of the next byte.
    line: u64,
    /// 1-based column of the next byte.
    column: u64,
    /// Inside a `#` comment, until the end of the line.
    comment: bool,
    /// The first bytes of the token being read (empty between tokens).
    token: [u8; MAX_SHOWN],
    /// The length of the token being read, which may exceed what `token` holds.
    len: usize,
    /// Where the token being read started.
    start: (u64, u64),
    /// The first bytes of the stream, held until they are known not to be
    /// a byte-order mark.
    head: [u8; 3],
    /// How many of them have been read (the mark's length once past them).
    head_len: usize,
}

/// The UTF-8 byte-order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

impl Scanner {
    const fn new() -> Scanner {
        Scanner {
            tally: Tally::new(0, 0),
            line: 1,
            column: 1,
            comment: false,
            token: [0; MAX_SHOWN],
            len: 0,
            start: (1, 1),
            head: [0; 3],
            head_len: 0,
        }
    }

    /// Reads `bytes`, counting every token they complete. A UTF-8 byte-order
    /// mark at the start of the stream, which Windows editors write, is
    /// skipped: it is no token.
    fn feed(&mut self, mut bytes: &[u8]) -> Result<(), BadToken> {
        if self.head_len < BOM.len() {
            // the first bytes, which may come in several reads, are held
            // until it is known whether they are the mark
            while let Some(slot) = self.head.get_mut(self.head_len) {
                let Some((&byte, rest)) = bytes.split_first() else {
                    return Ok(());
                };
                *slot = byte;
                self.head_len += 1;
                bytes = rest;
            }
            if self.head != BOM {
                let head = self.head;
                self.scan(&head)?;
            }
        }
        self.scan(bytes)
    }

    /// Reads `bytes`, past the start of the stream.
    fn scan(&mut self, bytes: &[u8]) -> Result<(), BadToken> {
        for &byte in bytes {
            if self.comment {
                if byte == b'\n' {
                    self.comment = false;
                    self.line += 1;
                    self.column = 1;
                } else {
                    self.column += 1;
                }
                continue;
            }
            if byte.is_ascii_whitespace() {
                self.end_token()?;
                if byte == b'\n' {
                    self.line += 1;
                    self.column = 1;
                } else {
                    self.column += 1;
                }
                continue;
            }
            if byte == b'#' && self.len == 0 {
                self.comment = true;
                self.column += 1;
                continue;
            }
            if self.len == 0 {
                self.start = (self.line, self.column);
            }
            if let Some(slot) = self.token.get_mut(self.len) {
                *slot = byte;
            }
            self.len = self.len.saturating_add(1);
            self.column += 1;
        }
        Ok(())
    }

    /// Ends the stream: counts a last token not followed by whitespace.
    fn finish(mut self) -> Result<Tally, BadToken> {
        if self.head_len < BOM.len() {
            // a stream shorter than the mark
            let head = self.head;
            self.scan(head.get(..self.head_len).unwrap_or_default())?;
        }
        self.end_token()?;
        Ok(self.tally)
    }

    /// Counts the token just read, if any.
    #[inline]
    fn end_token(&mut self) -> Result<(), BadToken> {
        if self.len == 0 {
            return Ok(());
        }
        let len = core::mem::take(&mut self.len);
        let token = self.token.get(..len.min(MAX_SHOWN)).unwrap_or_default();
        match classify(token, len) {
            Some(true) => self.tally.successes += 1,
            Some(false) => self.tally.failures += 1,
            None => {
                return Err(BadToken {
                    line: self.start.0,
                    column: self.start.1,
                    shown: token.to_vec(),
                    cut: len > MAX_SHOWN,
                });
            }
        }
        Ok(())
    }
}

/// Whether `token` (of full length `len`) is a success, a failure, or neither.
#[inline]
fn classify(token: &[u8], len: usize) -> Option<bool> {
    match token {
        b"1" => return Some(true),
        b"0" => return Some(false),
        _ => {}
    }
    if len > 5 {
        return None;
    }
    let mut lower = [0_u8; 5];
    for (slot, byte) in lower.iter_mut().zip(token) {
        *slot = byte.to_ascii_lowercase();
    }
    match lower.get(..len)? {
        b"ok" | b"true" => Some(true),
        b"fail" | b"false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read};

    use super::{CHUNK, Tally, read_outcomes};
    use crate::error::Error;

    /// Hands out its bytes one at a time, so every token straddles a read.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&byte, rest)), Some(slot)) => {
                    *slot = byte;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn tokens_split_across_reads_count_once() {
        let text = b"true false\nok\tfail  1\r\n0 TRUE";
        let whole = read_outcomes(&text[..], "t");
        let trickled = read_outcomes(Trickle(text), "t");
        assert_eq!(whole.ok(), Some(Tally::new(4, 3)));
        assert_eq!(trickled.ok(), Some(Tally::new(4, 3)));
    }

    #[test]
    fn a_bad_token_is_located_by_line_and_column_even_across_reads() {
        let text = b"1 0\n# a comment with 2 words\n  1 ok yes 0";
        for result in [
            read_outcomes(&text[..], "f"),
            read_outcomes(Trickle(text), "f"),
        ] {
            match result {
                Err(Error::BadOutcome {
                    line,
                    column,
                    token,
                    ..
                }) => {
                    assert_eq!((line, column, token.as_str()), (3, 8, "yes"));
                }
                other => panic!("expected a bad token, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_utf8_byte_order_mark_at_the_start_is_skipped_even_across_reads() {
        let text = b"\xEF\xBB\xBF1 0 ok\r\nfail\r\n";
        assert_eq!(read_outcomes(&text[..], "f").ok(), Some(Tally::new(2, 2)));
        assert_eq!(
            read_outcomes(Trickle(text), "f").ok(),
            Some(Tally::new(2, 2))
        );
        assert_eq!(
            read_outcomes(&b"\xEF\xBB\xBF"[..], "f").ok(),
            Some(Tally::new(0, 0))
        );
        // a short stream is read as it is
        assert_eq!(read_outcomes(&b"1"[..], "f").ok(), Some(Tally::new(1, 0)));
        assert_eq!(read_outcomes(&b"0 "[..], "f").ok(), Some(Tally::new(0, 1)));
        // a mark anywhere else is a bad token, at its column
        let err = read_outcomes(&b"1 \xEF\xBB\xBF0"[..], "f").unwrap_err();
        assert_eq!(
            err.to_string(),
            "f:1:3: bad outcome token \"\\u{feff}0\": expected 1, 0, ok, fail, true or false"
        );
        // so is the start of one cut short
        assert!(read_outcomes(&b"\xEF\xBB1"[..], "f").is_err());
    }

    #[test]
    fn a_long_token_is_cut_in_the_message() {
        let long = "x".repeat(1000);
        let err = read_outcomes(long.as_bytes(), "f").unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&format!("\"{}…\"", "x".repeat(24))), "{text}");
        assert!(text.len() < 200, "{text}");
    }

    #[test]
    fn prefixes_and_extensions_of_words_are_not_outcomes() {
        for bad in ["o", "oka", "tru", "falsey", "10", "01", "+1", "1.0", "#"] {
            let input = format!("1 {bad}");
            let result = read_outcomes(input.as_bytes(), "f");
            // `#` opens a comment, so `1 #` is one outcome
            if bad == "#" {
                assert_eq!(result.ok(), Some(Tally::new(1, 0)));
            } else {
                assert!(result.is_err(), "{bad} was accepted");
            }
        }
    }

    #[test]
    fn a_stream_longer_than_a_chunk_counts_every_outcome() {
        let n = CHUNK; // two bytes per outcome: two chunks' worth
        let text: Vec<u8> = (0..n)
            .flat_map(|i| [if i % 3 == 0 { b'0' } else { b'1' }, b' '])
            .collect();
        let tally = read_outcomes(&text[..], "f").ok();
        let failures = n.div_ceil(3) as u64;
        assert_eq!(tally, Some(Tally::new(n as u64 - failures, failures)));
    }

    #[test]
    fn empty_and_blank_streams_have_no_outcomes() {
        for text in ["", "   \n\n\t", "# nothing yet\n"] {
            assert_eq!(
                read_outcomes(text.as_bytes(), "f").ok(),
                Some(Tally::default())
            );
        }
    }

    #[test]
    fn a_read_error_is_reported_with_the_source() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let err = read_outcomes(Broken, "<stdin>").unwrap_err();
        assert_eq!(err.to_string(), "<stdin>: read failed");
        assert_eq!(err.report(), "<stdin>: read failed: disk on fire");
    }
}
