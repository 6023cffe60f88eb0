//! [`Verifier`]: checks a JSON Lines log of any size in constant memory.

use alloc::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::canonical::{self, EventView, View};
use crate::chain::Checker;
use crate::error::{Break, Discontinuity, Error};
use crate::hash::{Hash, hex_digit};
use crate::scan::{Kind, Scanned, scan};
use crate::seal::Seal;
use crate::summary::{Summary, Tally};

/// The longest line, newline excluded, that a [`JsonlWriter`](crate::JsonlWriter)
/// writes and a default [`Verifier`] reads: 64 KiB.
pub const MAX_LINE_LEN: usize = 64 * 1024;

/// The length of `,"hash":"` + 64 hex digits + `"}`: what a line has beyond the
/// canonical form without its closing brace.
const HASH_SUFFIX_LEN: usize = 9 + 64 + 2;

/// Checks a log file line by line: that each line is an entry in canonical form,
/// that the chain holds, and optionally that the log still holds what a [`Seal`]
/// commits to.
///
/// Memory stays constant whatever the size of the file: one line is held at a
/// time, and a line longer than the bound ([`MAX_LINE_LEN`] unless changed) is
/// an error rather than a reason to allocate more. Every failure names its line.
///
/// # A log that starts with a link
///
/// A log whose first entry is a `continues` entry — a later file of a
/// rotated log, verified without the older files, or a file written to look
/// like one — states where a log it continues ends, and verifies from
/// there: that link, and the entries before it, are taken on trust, since
/// nothing given holds them. The seal the `verify_*` methods return counts
/// those entries too, and does not say where the log starts: read it from
/// the `summarize_*` methods ([`Summary::start`], 0 entries for a log from
/// its beginning), or verify with a seal of that point or later
/// ([`with_seal`](Verifier::with_seal)), which confirms the link.
///
/// # Default
///
/// No seal; lines of at most [`MAX_LINE_LEN`] bytes.
///
/// ```
/// use bayesretry_audit::{Error, Event, Fsync, JsonlWriter, Record, Verifier};
///
/// let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
/// for count in 0..3 {
///     writer.append(&Record::new(count, Event::Dropped { count }))?;
/// }
/// let good = writer.into_inner()?;
/// assert_eq!(Verifier::new().verify_reader(good.as_slice())?.entries(), 3);
///
/// // change a count on line 2 and the verifier points at it
/// let text = String::from_utf8(good).unwrap_or_default();
/// let forged = text.replacen("\"count\":1", "\"count\":7", 1);
/// let err = Verifier::new().verify_reader(forged.as_bytes()).unwrap_err();
/// assert!(matches!(err, Error::Broken { line: 2, .. }));
/// # Ok::<(), bayesretry_audit::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Verifier {
    seal: Option<Seal>,
    max_line_len: usize,
}

impl Default for Verifier {
    fn default() -> Verifier {
        Verifier::new()
    }
}

/// One line of the file, parsed: every field of every event, those of the other
/// events absent. Strings are borrowed from the line unless they hold escapes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    v: u64,
    seq: u64,
    time_ms: u64,
    #[serde(borrow)]
    event: Cow<'a, str>,
    #[serde(borrow, default)]
    endpoint: Option<Cow<'a, str>>,
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(borrow, default)]
    class: Option<Cow<'a, str>>,
    #[serde(default)]
    retry: Option<bool>,
    #[serde(borrow, default)]
    p: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    ev: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reason: Option<Cow<'a, str>>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    count: Option<u64>,
    #[serde(borrow, default)]
    prev: Option<Cow<'a, str>>,
    /// Required, but read from the line's bytes, where it must stand exactly.
    #[serde(rename = "hash")]
    _hash: IgnoredAny,
}

/// A line's optional fields, one bit each: what [`Line::holds_other_than`]
/// reads, so that each kind of event names the fields it may have once.
mod field {
    pub(super) const ENDPOINT: u16 = 1 << 0;
    pub(super) const ATTEMPT: u16 = 1 << 1;
    pub(super) const CLASS: u16 = 1 << 2;
    pub(super) const RETRY: u16 = 1 << 3;
    pub(super) const P: u16 = 1 << 4;
    pub(super) const EV: u16 = 1 << 5;
    pub(super) const REASON: u16 = 1 << 6;
    pub(super) const SUCCESS: u16 = 1 << 7;
    pub(super) const COUNT: u16 = 1 << 8;
    pub(super) const PREV: u16 = 1 << 9;
    /// The call an entry is about: a decision's and an outcome's.
    pub(super) const CALL: u16 = ENDPOINT | ATTEMPT | CLASS;
}

impl Line<'_> {
    /// Whether the line holds an optional field outside `allowed` (a set of
    /// [`field`] bits): a field of another kind of event.
    fn holds_other_than(&self, allowed: u16) -> bool {
        let present = [
            (self.endpoint.is_some(), field::ENDPOINT),
            (self.attempt.is_some(), field::ATTEMPT),
            (self.class.is_some(), field::CLASS),
            (self.retry.is_some(), field::RETRY),
            (self.p.is_some(), field::P),
            (self.ev.is_some(), field::EV),
            (self.reason.is_some(), field::REASON),
            (self.success.is_some(), field::SUCCESS),
            (self.count.is_some(), field::COUNT),
            (self.prev.is_some(), field::PREV),
        ];
        present
            .iter()
            .any(|&(held, bit)| held && allowed & bit == 0)
    }
}

impl Verifier {
    /// A verifier with no seal and the default line bound.
    pub const fn new() -> Verifier {
        Verifier {
            seal: None,
            max_line_len: MAX_LINE_LEN,
        }
    }

    /// Also checks the log against `seal`: it must still hold the entries the
    /// seal commits to, the last of them with the sealed hash. Entries after
    /// them are checked as part of the chain.
    ///
    /// A log whose first file continues files not given (its first entry is
    /// [`Event::Continues`](crate::Event::Continues), [`Summary::start`] is
    /// not 0 entries) holds only the entries from its start: a seal that
    /// ends before the start is refused, and one that ends at it or after
    /// confirms the link, but not that the entries before the start are kept
    /// anywhere. Read [`Summary::start`] to know which entries were checked.
    pub const fn with_seal(mut self, seal: Seal) -> Verifier {
        self.seal = Some(seal);
        self
    }

    /// The longest line accepted, newline excluded (at least 1 byte).
    pub const fn with_max_line_len(mut self, max_line_len: usize) -> Verifier {
        self.max_line_len = if max_line_len == 0 { 1 } else { max_line_len };
        self
    }

    /// Verifies the log file at `path`; returns its seal (its length and head).
    ///
    /// The seal does not say where the log starts: one that begins with a
    /// link to files not given verifies from it, on trust (see "A log that
    /// starts with a link" above); [`summarize_file`](Verifier::summarize_file)
    /// says where.
    pub fn verify_file(&self, path: impl AsRef<Path>) -> Result<Seal, Error> {
        self.summarize_file(path).map(|summary| summary.seal())
    }

    /// Verifies a log read from `reader`; returns its seal (its length and
    /// head), which does not say where the log starts (see
    /// [`verify_file`](Verifier::verify_file)).
    pub fn verify_reader(&self, reader: impl BufRead) -> Result<Seal, Error> {
        self.summarize_reader(reader).map(|summary| summary.seal())
    }

    /// Verifies the log file at `path`, as [`verify_file`](Verifier::verify_file);
    /// returns its seal and what its entries record, records lost included.
    pub fn summarize_file(&self, path: impl AsRef<Path>) -> Result<Summary, Error> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|err| Error::io_at("open", path, err))?;
        self.summarize_reader(BufReader::with_capacity(256 * 1024, file))
            .map_err(|err| err.in_file(path))
    }

    /// Verifies a log read from `reader`, as [`verify_reader`](Verifier::verify_reader);
    /// returns its seal and what its entries record, records lost included.
    pub fn summarize_reader(&self, reader: impl BufRead) -> Result<Summary, Error> {
        let mut tally = Tally::default();
        let mut checker = Checker::new(self.seal);
        let _first = self.check_lines(reader, &mut checker, &mut tally)?;
        finish(&checker, tally, checker.start().entries())
    }

    /// Verifies a log kept in several files, `paths` in the order they were
    /// written (the oldest first, the file being written last), as one
    /// chain: returns the seal of the whole and what its entries record.
    ///
    /// Each file after the first must begin with the `continues` entry that
    /// links it to the end of the file before it
    /// ([`JsonlWriter::rotate`](crate::JsonlWriter::rotate) writes it): a
    /// file left out, deleted, given out of order or taken from another log
    /// is [`Error::Discontinuous`] ([`Discontinuity`]), which names it and the
    /// file before it,
    /// and says which of those it looks like. A damaged line is
    /// [`Error::InFile`], which names its file. A seal given with
    /// [`with_seal`](Verifier::with_seal) counts entries across the files,
    /// as the writer does.
    ///
    /// The first file may start at the log's beginning, or continue a log
    /// from files not given (older files that rotation has since deleted):
    /// its link is then taken as the start, and [`Summary::start`] says
    /// where that is. One file verifies as with
    /// [`summarize_file`](Verifier::summarize_file), errors aside, which
    /// name it; no files is an empty log.
    ///
    /// ```
    /// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let live = dir.path().join("decisions.jsonl");
    /// let old = dir.path().join("decisions.jsonl.1");
    /// let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry)?;
    /// writer.append(&Record::new(1, Event::Dropped { count: 0 }))?;
    /// writer.rotate(&old)?; // decisions.jsonl.1 holds entry 0
    /// writer.append(&Record::new(2, Event::Dropped { count: 0 }))?;
    /// drop(writer);
    ///
    /// let summary = Verifier::new().summarize_files([&old, &live])?;
    /// assert_eq!(summary.seal().entries(), 3); // entry 0, the link, entry 2
    /// assert!(Verifier::new().summarize_files([&live, &old]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn summarize_files<P: AsRef<Path>>(
        &self,
        paths: impl IntoIterator<Item = P>,
    ) -> Result<Summary, Error> {
        let mut tally = Tally::default();
        let mut checker = Checker::new(self.seal);
        let mut previous: Option<PathBuf> = None;
        // the entries before the last file: its line 1 holds the next
        let mut before_last = 0;
        for path in paths {
            let path = path.as_ref();
            let in_file = |error: Error| Error::InFile {
                path: path.to_owned(),
                source: Box::new(error.in_file(path)),
            };
            let file = File::open(path).map_err(|err| Error::io_at("open", path, err))?;
            let ends = checker.end();
            let started = checker.started();
            let _ = checker.take_link();
            let checked = self.check_lines(
                BufReader::with_capacity(256 * 1024, file),
                &mut checker,
                &mut tally,
            );
            // every file after the first must begin with the link to where
            // the one before ends, even after files that held no entry
            if let Some(previous) = previous.as_ref() {
                let discontinuous = |link| {
                    Error::Discontinuous(Box::new(Discontinuity::new(
                        path.to_owned(),
                        previous.clone(),
                        ends,
                        link,
                    )))
                };
                match &checked {
                    // the file's first line breaks the chain where it joins
                    Err(Error::Broken { line: 1, broken })
                        if matches!(broken.why(), Break::Link { .. } | Break::Sequence { .. }) =>
                    {
                        return Err(discontinuous(checker.take_link()));
                    }
                    // an empty file, or one whose first entry is no link,
                    // continues nothing
                    Ok(None | Some(Kind::Decision | Kind::Outcome | Kind::Dropped(_))) => {
                        return Err(discontinuous(None));
                    }
                    // a link taken on trust, after files with no entry,
                    // must still be to where they end
                    Ok(Some(Kind::Continues(_))) if !started && checker.start() != ends => {
                        return Err(discontinuous(Some(checker.start())));
                    }
                    _ => {}
                }
            }
            let _first = checked.map_err(in_file)?;
            before_last = if started {
                ends.entries()
            } else {
                checker.start().entries()
            };
            previous = Some(path.to_owned());
        }
        let file = previous;
        finish(&checker, tally, before_last).map_err(|error| match file {
            Some(path) => Error::InFile {
                source: Box::new(error),
                path,
            },
            None => error,
        })
    }

    /// [`summarize_files`](Verifier::summarize_files), the seal alone, which
    /// does not say where the log starts (see
    /// [`verify_file`](Verifier::verify_file)).
    pub fn verify_files<P: AsRef<Path>>(
        &self,
        paths: impl IntoIterator<Item = P>,
    ) -> Result<Seal, Error> {
        self.summarize_files(paths).map(|summary| summary.seal())
    }

    /// Checks every line read from `reader`, continuing `checker`'s chain and
    /// counting into `tally`; line numbers count from 1 in this reader.
    /// Returns the kind of the first entry, `None` if there is none.
    fn check_lines(
        &self,
        mut reader: impl BufRead,
        checker: &mut Checker,
        tally: &mut Tally,
    ) -> Result<Option<Kind>, Error> {
        let mut line = Vec::with_capacity(1024);
        let mut canonical = Vec::with_capacity(1024);
        let limit = u64::try_from(self.max_line_len)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        // the loop ends at the end of the reader; each turn consumes a line
        let mut number: u64 = 0;
        let mut first = None;
        loop {
            line.clear();
            let read = (&mut reader)
                .take(limit)
                .read_until(b'\n', &mut line)
                .map_err(|err| Error::io("read", err))?;
            if read == 0 {
                break;
            }
            number = number.saturating_add(1);
            match line.last() {
                Some(b'\n') => {
                    line.pop();
                }
                _ if line.len() > self.max_line_len => {
                    return Err(Error::LineTooLong {
                        line: number,
                        limit: self.max_line_len,
                    });
                }
                _ => return Err(Error::IncompleteLine { line: number }),
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                let last = reader
                    .fill_buf()
                    .map_err(|err| Error::io("read", err))?
                    .is_empty();
                return Err(blank(&line, number, last));
            }
            let kind = check_line(&line, number, &mut canonical, checker)?;
            first.get_or_insert(kind);
            tally.add(kind);
        }
        Ok(first)
    }
}

/// The summary of the chain `checker` walked, whose entries `tally` counted,
/// or why it falls short of the seal it checks against (on the line of the
/// last file after its last, which held the entries from `before` on).
fn finish(checker: &Checker, tally: Tally, before: u64) -> Result<Summary, Error> {
    checker
        .finish()
        .map(|seal| tally.summary(checker.start(), seal))
        .map_err(|broken| Error::Broken {
            line: broken.index().saturating_sub(before).saturating_add(1),
            broken,
        })
}

/// The error for line `number`, `line` (without its newline), which is blank:
/// a writer never writes one, not even after the last entry, so it is not
/// skipped but named, saying whether it is empty and whether it ends the log.
fn blank(line: &[u8], number: u64, last: bool) -> Error {
    let what = if line.is_empty() {
        "it is empty"
    } else {
        "it holds only whitespace"
    };
    let after = if last && number > 1 {
        " (a blank line after the last entry)"
    } else {
        ""
    };
    Error::Malformed {
        line: number,
        problem: format!("{what}{after}, and a log has no blank lines"),
    }
}

/// Checks one line (without its newline): that it is an entry in canonical form
/// with its hash, and that it continues the chain. A line the fast scanner
/// recognises is hashed in place; any other is parsed as JSON and its canonical
/// form rebuilt into `canonical`, to say what is wrong with it. Returns what
/// the entry records.
fn check_line(
    line: &[u8],
    number: u64,
    canonical: &mut Vec<u8>,
    checker: &mut Checker,
) -> Result<Kind, Error> {
    let broken = |broken| Error::Broken {
        line: number,
        broken,
    };
    if let Some(Scanned {
        seq,
        body,
        hash,
        kind,
    }) = scan(line)
    {
        // the line up to its hash field, and `}`: the canonical form
        let before_hash = line.get(..body).unwrap_or_default();
        let link = match kind {
            Kind::Continues(prev) => Some(prev),
            _ => None,
        };
        return checker
            .step_with(seq, &hash, link, |prev| {
                Hash::chain_pieces(prev, before_hash, b"}")
            })
            .map(|()| kind)
            .map_err(broken);
    }
    // Bytes a tool adds without changing a value: named for what they are,
    // since "not in canonical form" or a parser's "expected value" would
    // read like tampering. But only once the line without them checks: a
    // changed entry with a carriage return added is named as changed, never
    // as line endings to fix. One of each is stripped, and the rest goes
    // to the slow path, which strips nothing: no recursion, whatever the line.
    if let Some((entry, added)) = added_by_a_tool(line) {
        if !entry.iter().all(u8::is_ascii_whitespace) {
            slow_check_line(entry, number, canonical, checker)?;
        }
        return Err(Error::Malformed {
            line: number,
            problem: String::from(added),
        });
    }
    slow_check_line(line, number, canonical, checker)
}

/// The UTF-8 byte order mark.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// If `line` begins with a byte order mark or ends in a carriage return,
/// bytes a writer never writes but a tool may add: the line without them
/// (one of each), and what was added, said for a reader.
fn added_by_a_tool(line: &[u8]) -> Option<(&[u8], &'static str)> {
    let (entry, mark) = match line.strip_prefix(BYTE_ORDER_MARK) {
        Some(rest) => (rest, true),
        None => (line, false),
    };
    let (entry, cr) = match entry.strip_suffix(b"\r") {
        Some(rest) => (rest, true),
        None => (entry, false),
    };
    match (mark, cr) {
        (true, _) => Some((
            entry,
            "it begins with a UTF-8 byte order mark, which a writer never writes \
             (an editor may add one when it saves a file)",
        )),
        (false, true) => Some((
            entry,
            "it ends in a carriage return, where a line of a log ends in a line feed \
             alone (were its line endings converted to \\r\\n?)",
        )),
        (false, false) => None,
    }
}

/// The slow path of [`check_line`], for lines the scanner did not recognise:
/// parses the line as JSON, to name what is wrong with it.
fn slow_check_line(
    line: &[u8],
    number: u64,
    canonical: &mut Vec<u8>,
    checker: &mut Checker,
) -> Result<Kind, Error> {
    let malformed = |problem: String| Error::Malformed {
        line: number,
        problem,
    };
    let parsed: Line<'_> =
        serde_json::from_slice(line).map_err(|err| malformed(err.to_string()))?;
    if parsed.v != canonical::VERSION {
        return Err(Error::UnsupportedVersion {
            line: number,
            version: parsed.v,
        });
    }
    let event = event_view(&parsed).map_err(|problem| malformed(problem.to_owned()))?;
    let kind = match event {
        EventView::Decision { .. } => Kind::Decision,
        EventView::Outcome { .. } => Kind::Outcome,
        EventView::Dropped { count } => Kind::Dropped(count),
        EventView::Continues { prev } => Kind::Continues(prev),
    };
    let link = match kind {
        Kind::Continues(prev) => Some(prev),
        _ => None,
    };
    canonical.clear();
    canonical::write(
        parsed.seq,
        &View {
            time_ms: parsed.time_ms,
            event,
        },
        canonical,
    );
    // the line must be the canonical form with `,"hash":"<hex>"` before its `}`
    let body = canonical.len().saturating_sub(1);
    let in_form = line.len() == body + HASH_SUFFIX_LEN
        && line.get(..body) == canonical.get(..body)
        && line.get(body..body + 9) == Some(b",\"hash\":\"".as_slice())
        && line.get(body + 73..) == Some(b"\"}".as_slice());
    if !in_form {
        return Err(Error::NotCanonical { line: number });
    }
    let stored = line
        .get(body + 9..body + 73)
        .and_then(Hash::from_hex)
        .ok_or(Error::NotCanonical { line: number })?;
    checker
        .step(parsed.seq, canonical, &stored, link)
        .map(|()| kind)
        .map_err(|broken| Error::Broken {
            line: number,
            broken,
        })
}

/// The event of a parsed line, with exactly the fields its kind has.
fn event_view<'a>(line: &'a Line<'a>) -> Result<EventView<'a>, &'static str> {
    let call = || -> Result<(&'a str, u32, &'a str), &'static str> {
        match (&line.endpoint, line.attempt, &line.class) {
            (Some(endpoint), Some(attempt), Some(class)) => Ok((endpoint, attempt, class)),
            _ => Err("a decision or an outcome needs endpoint, attempt and class"),
        }
    };
    match line.event.as_ref() {
        "decision" => {
            let allowed = field::CALL | field::RETRY | field::P | field::EV | field::REASON;
            if line.holds_other_than(allowed) {
                return Err("a decision has no success, count or prev");
            }
            let (endpoint, attempt, class) = call()?;
            match (line.retry, &line.p, &line.ev, &line.reason) {
                (Some(retry), Some(p), Some(ev), Some(reason)) => Ok(EventView::Decision {
                    endpoint,
                    attempt,
                    class,
                    retry,
                    p_bits: f64_bits(p).ok_or("p is not 16 lowercase hex digits")?,
                    ev_bits: f64_bits(ev).ok_or("ev is not 16 lowercase hex digits")?,
                    reason,
                }),
                _ => Err("a decision needs retry, p, ev and reason"),
            }
        }
        "outcome" => {
            if line.holds_other_than(field::CALL | field::SUCCESS) {
                return Err("an outcome has no retry, p, ev, reason, count or prev");
            }
            let (endpoint, attempt, class) = call()?;
            let success = line.success.ok_or("an outcome needs success")?;
            Ok(EventView::Outcome {
                endpoint,
                attempt,
                class,
                success,
            })
        }
        "dropped" => {
            if line.holds_other_than(field::COUNT) {
                return Err("a dropped entry has only count");
            }
            let count = line.count.ok_or("a dropped entry needs count")?;
            Ok(EventView::Dropped { count })
        }
        "continues" => {
            if line.holds_other_than(field::PREV) {
                return Err("a continues entry has only prev");
            }
            let prev = line.prev.as_ref().ok_or("a continues entry needs prev")?;
            let prev =
                Hash::from_hex(prev.as_bytes()).ok_or("prev is not 64 lowercase hex digits")?;
            Ok(EventView::Continues { prev })
        }
        _ => Err("event is not decision, outcome, dropped or continues"),
    }
}

/// The bit pattern of an `f64` written as 16 lowercase hex digits.
fn f64_bits(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    if bytes.len() != 16 {
        return None;
    }
    bytes.iter().try_fold(0u64, |bits, &c| {
        Some((bits << 4) | u64::from(hex_digit(c)?))
    })
}
