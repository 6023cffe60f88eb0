//! The crate's errors: [`Broken`] (a chain that does not verify, and [`Break`],
//! why), [`Error`] (reading, writing and verifying files, the background writer)
//! and [`ParseError`] (a hash or a seal given as text).

use core::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::hash::Hash;
use crate::seal::Seal;

/// Why an entry breaks the chain.
///
/// Which of these a tampering shows up as: an edited entry is a
/// [`Hash`](Break::Hash) mismatch at that entry; a deleted, inserted or moved
/// entry is a [`Sequence`](Break::Sequence) mismatch at the first position that
/// changed; entries removed from the end are [`Truncated`](Break::Truncated)
/// and a log rewritten from some point on with every hash recomputed is a
/// [`Seal`](Break::Seal) mismatch — those two only when checked against a
/// [`Seal`](crate::Seal) kept elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Break {
    /// The entry's sequence number is not its position in the log.
    Sequence {
        /// The position.
        expected: u64,
        /// The number the entry carries.
        found: u64,
    },
    /// The stored hash is not SHA-256 over the previous hash and the entry's
    /// canonical form: the entry, or the hash stored with it, was changed.
    Hash {
        /// The hash stored with the entry.
        stored: Hash,
        /// The hash its content and the previous hash give.
        computed: Hash,
    },
    /// The log has fewer entries than the seal commits to.
    Truncated {
        /// Entries in the log.
        entries: u64,
        /// Entries the seal commits to.
        sealed: u64,
    },
    /// The entry the seal commits to has another hash: the log was rewritten.
    Seal {
        /// The hash in the seal.
        sealed: Hash,
        /// The hash of the entry at the seal's position.
        found: Hash,
    },
    /// A `continues` entry ([`Event::Continues`](crate::Event::Continues)),
    /// in its place, links to another hash than that of the entry before it:
    /// in a set of files, the file is from another log. (One out of its
    /// place is a [`Sequence`](Break::Sequence) break, as any entry.)
    Link {
        /// The hash of the entry before it.
        expected: Hash,
        /// The hash it links to, its `prev`.
        found: Hash,
    },
    /// The log starts after the entries the seal commits to (its first entry
    /// continues a log from files not given), so it cannot show that it
    /// holds them.
    SealBeforeStart {
        /// Entries the seal commits to.
        sealed: u64,
        /// The sequence number the log starts at.
        start: u64,
    },
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Break::Sequence { expected, found } => {
                write!(f, "sequence number {found} where {expected} was due")
            }
            Break::Hash { stored, computed } => {
                write!(
                    f,
                    "stored hash {stored} but the content hashes to {computed}"
                )
            }
            Break::Truncated { entries, sealed } => {
                write!(f, "{entries} entries but the seal commits to {sealed}")
            }
            Break::Seal { sealed, found } => {
                write!(f, "hash {found} where the seal has {sealed}")
            }
            Break::Link { expected, found } => write!(
                f,
                "it continues a log whose last entry hashes to {found}, where the entry \
                 before it hashes to {expected}"
            ),
            Break::SealBeforeStart { sealed, start } => write!(
                f,
                "the log starts at entry {start}, after the {sealed} entries the seal \
                 commits to: verify it with the files before it"
            ),
        }
    }
}

/// A log that does not verify: the index (0-based) of the first broken entry,
/// and why it is broken.
///
/// For [`Break::Truncated`] the index is the first missing entry, which is the
/// number of entries the log still has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    index: u64,
    why: Break,
}

impl Broken {
    /// Entry `index` is broken for `why`.
    pub const fn new(index: u64, why: Break) -> Broken {
        Broken { index, why }
    }

    /// The index (0-based) of the first broken entry.
    pub const fn index(&self) -> u64 {
        self.index
    }

    /// Why it is broken.
    pub const fn why(&self) -> &Break {
        &self.why
    }
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entry {}: {}", self.index, self.why)
    }
}

impl core::error::Error for Broken {}

/// Where a file of a log kept in several does not continue the file before
/// it ([`Error::Discontinuous`]): the two files, where the first ends, and
/// where the second's first entry links to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discontinuity {
    path: PathBuf,
    previous: PathBuf,
    ends: Seal,
    link: Option<Seal>,
}

impl Discontinuity {
    /// `path`, given after `previous`, which ends at `ends`, links to `link`
    /// (`None`: its first entry is no link).
    pub(crate) const fn new(
        path: PathBuf,
        previous: PathBuf,
        ends: Seal,
        link: Option<Seal>,
    ) -> Discontinuity {
        Discontinuity {
            path,
            previous,
            ends,
            link,
        }
    }

    /// The file that does not continue the one before.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file before it, in the order given.
    pub fn previous(&self) -> &Path {
        &self.previous
    }

    /// Where [`previous`](Discontinuity::previous) ends: its entries, counted
    /// from the log's beginning, and the hash of its last.
    pub const fn ends(&self) -> Seal {
        self.ends
    }

    /// Where the first entry of [`path`](Discontinuity::path) links to;
    /// `None` if it is no link (a file that starts a log of its own, an
    /// empty file, or one cut at its start). More entries than
    /// [`ends`](Discontinuity::ends): files are missing between the two;
    /// fewer: they are out of order; as many with another hash: the file is
    /// from another log.
    pub const fn link(&self) -> Option<Seal> {
        self.link
    }
}

impl fmt::Display for Discontinuity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, previous) = (self.path.display(), self.previous.display());
        let ends = self.ends;
        let entries = ends.entries();
        match self.link {
            None => write!(
                f,
                "{path} does not continue {previous}: its first entry is not a \
                 `continues` link to the {entries} entries {previous} ends with \
                 (the log's first file, out of order? a file of another log, or one \
                 emptied or cut at its start?)"
            ),
            Some(link) if link.entries() > entries => write!(
                f,
                "{path} continues a log of {} entries, but {previous} ends after \
                 {entries}: the {} entries between them are missing (a file left out \
                 or deleted?)",
                link.entries(),
                link.entries() - entries
            ),
            Some(link) if link.entries() < entries => write!(
                f,
                "{path} continues a log of {} entries, but {previous} already ends \
                 after {entries}: the files are out of order, or overlap",
                link.entries()
            ),
            Some(link) => write!(
                f,
                "{path} continues a log of {entries} entries whose last hashes to \
                 {}, but {previous}'s last hashes to {}: it continues another log \
                 (a file swapped in from another set?)",
                link.head(),
                ends.head()
            ),
        }
    }
}

/// A hash or a seal given as text that is not one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// Not 64 lowercase hexadecimal digits.
    Hash(String),
    /// Not `<entries>:<hash>`.
    Seal(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Hash(text) => {
                write!(f, "hash {text:?} is not 64 lowercase hexadecimal digits")
            }
            ParseError::Seal(text) => {
                write!(f, "seal {text:?} is not `<entries>:<64 hex digits>`")
            }
        }
    }
}

impl core::error::Error for ParseError {}

/// What can go wrong reading, writing or verifying a log file, or in the
/// background writer of an [`AuditTrail`](crate::AuditTrail).
///
/// Line numbers are 1-based, as an editor shows them; line `n` holds entry `n - 1`.
///
/// An error's message says what failed; the operating system's error behind
/// an [`Io`](Error::Io) is its [`source`](core::error::Error::source) only, so
/// that a report printing the chain of causes shows it once.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The log could not be opened, read, written or synced.
    Io {
        /// What was being done: `"open"`, `"read"`, `"write"`, `"sync"`, ...
        op: &'static str,
        /// The log file, when the log is a file this crate opened (not a
        /// reader or a writer the caller handed over).
        path: Option<PathBuf>,
        /// The operating system's error.
        source: io::Error,
    },
    /// A line is longer than the verifier's bound.
    LineTooLong {
        /// The line.
        line: u64,
        /// The bound, in bytes.
        limit: usize,
    },
    /// The last line has no newline: the writer stopped in the middle of it (a
    /// crash), the file was cut, or it was read while a writer was writing
    /// it. Every line before it chains.
    IncompleteLine {
        /// The line.
        line: u64,
    },
    /// A line is not an entry: blank (empty, even after the last entry), not
    /// JSON, a missing or unknown field, a field of the wrong type, an event
    /// with the fields of another; or bytes that a tool adds around an entry
    /// were added to it: a carriage return before its line feed (line endings
    /// converted to `\r\n`), a UTF-8 byte order mark before it. Those are
    /// named only when the entry without them is intact: a changed entry is
    /// [`Broken`](Error::Broken) (or [`NotCanonical`](Error::NotCanonical)),
    /// whatever a tool added to its line.
    Malformed {
        /// The line.
        line: u64,
        /// What is wrong with it.
        problem: String,
    },
    /// A line holds an entry, but not byte for byte in its canonical form (keys
    /// reordered, spaces added, another escape or number spelling).
    NotCanonical {
        /// The line.
        line: u64,
    },
    /// A line's `v` is a canonical form this version does not know.
    UnsupportedVersion {
        /// The line.
        line: u64,
        /// Its `v`.
        version: u64,
    },
    /// The file ends, after its last whole line, in bytes that no crash of a
    /// writer leaves: more than a line holds, or not the beginning of the entry
    /// that was due in canonical form. [`JsonlWriter::open_after_crash`](crate::JsonlWriter::open_after_crash)
    /// refuses to cut them and leaves the file as it is.
    StrayTail {
        /// The line they stand on: the one after the last whole line.
        line: u64,
        /// How many bytes follow the last whole line.
        len: u64,
        /// What a crash would not have left.
        problem: String,
    },
    /// The entries parse but the chain is broken.
    Broken {
        /// The line of the broken entry (for a truncation: the first missing line).
        line: u64,
        /// Which entry and why.
        broken: Broken,
    },
    /// A record whose line would be longer than the bound a verifier reads.
    /// The writer refuses it and leaves the log as it was; an
    /// [`AuditTrail`](crate::AuditTrail) counts it as dropped and records the
    /// loss in the log.
    RecordTooLong {
        /// The length of its line, in bytes.
        len: usize,
        /// The bound.
        limit: usize,
    },
    /// A write failed earlier, so the file may end in a partial line: the writer
    /// refuses to append after it. Reopen the file to find out.
    Poisoned,
    /// The background writer failed earlier with this error (shown as text,
    /// with its causes: the error itself is returned by
    /// [`AuditTrail::finish`](crate::AuditTrail::finish)).
    Writer(String),
    /// The background writer has stopped: its thread ended or panicked.
    WriterGone,
    /// Another writer has the log file open: it holds the lock beside it
    /// (see [`JsonlWriter::open`](crate::JsonlWriter::open)).
    Locked {
        /// The log file, as given.
        path: PathBuf,
        /// The lock file, beside the file the path finally names; or, on
        /// Unix, that file itself, when the other writer holds it under
        /// another name (a hard link, or the name it had before a rename).
        lock: PathBuf,
    },
    /// An error in one file of a log kept in several
    /// ([`Verifier::summarize_files`](crate::Verifier::summarize_files)):
    /// the file, and the error, whose line numbers count in that file.
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: Box<Error>,
    },
    /// In a log kept in several files, given in order, a file does not begin
    /// where the file before it ends: its first entry is not the
    /// `continues` link to that end ([`Event::Continues`](crate::Event::Continues)).
    /// A file between them is missing, the files are out of order, or one is
    /// from another log; the message says which the link points to. (Boxed:
    /// two paths and two seals would make every `Result` of this crate
    /// carry them.)
    Discontinuous(Box<Discontinuity>),
    /// The log file is shorter than what its writer has written to it: it
    /// was truncated under the writer, as logrotate's `copytruncate` does
    /// (copy the file, then empty it in place). The entries the writer goes
    /// on to append would start the file in the middle of the chain, so it
    /// refuses them: it is poisoned. Rotate a log by renaming it
    /// ([`JsonlWriter::rotate`](crate::JsonlWriter::rotate)).
    Shrunk {
        /// The log file.
        path: PathBuf,
        /// The bytes its writer has written to it.
        written: u64,
        /// Its length now.
        len: u64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                op,
                path: Some(path),
                ..
            } => write!(f, "cannot {op} audit log {}", path.display()),
            Error::Io { op, path: None, .. } => write!(f, "cannot {op} the audit log"),
            Error::LineTooLong { line, limit } => {
                write!(f, "line {line} is longer than {limit} bytes")
            }
            Error::IncompleteLine { line } => {
                // Lines are checked in order, so every line before this one
                // chains: said, since a reader of a log whose writer runs can
                // find one too, and "ends inside it" alone reads like damage.
                write!(
                    f,
                    "line {line} has no newline: the file ends inside it, as it does while \
                     a writer is writing the line or after one stopped in the middle of it"
                )?;
                match line.saturating_sub(1) {
                    0 => Ok(()),
                    1 => f.write_str("; the line before it chains"),
                    before => write!(f, "; the {before} lines before it chain"),
                }
            }
            Error::Malformed { line, problem } => {
                write!(f, "line {line} is not an audit entry: {problem}")
            }
            Error::NotCanonical { line } => {
                write!(f, "line {line} is not in canonical form")
            }
            Error::UnsupportedVersion { line, version } => {
                write!(f, "line {line} has version {version}; only 1 is known")
            }
            Error::StrayTail { line, len, problem } => write!(
                f,
                "line {line} is unfinished but not as a crash leaves a line ({len} bytes): {problem}"
            ),
            Error::Broken { line, broken } => {
                write!(f, "line {line}: {broken}")?;
                match broken.why() {
                    Break::Sequence { expected: 0, found } if *line == 1 && *found > 0 => write!(
                        f,
                        "; the file's first entry is entry {found}, and not a `continues` link: \
                         the lines before it were cut from its start, as logrotate's \
                         `copytruncate` does (rotate a log by renaming it instead)"
                    ),
                    _ => Ok(()),
                }
            }
            Error::RecordTooLong { len, limit } => {
                write!(f, "record line of {len} bytes is longer than {limit}")
            }
            Error::Poisoned => f.write_str("an earlier write failed; the writer refuses more"),
            Error::Writer(message) => write!(f, "the audit writer failed earlier: {message}"),
            Error::WriterGone => f.write_str("the audit writer has stopped"),
            Error::Locked { path, lock } => write!(
                f,
                "audit log {} has another writer, which holds {}",
                path.display(),
                lock.display()
            ),
            Error::InFile { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Discontinuous(gap) => write!(f, "{gap}"),
            Error::Shrunk { path, written, len } => write!(
                f,
                "audit log {} is {len} bytes, shorter than the {written} its writer wrote: \
                 it was truncated under the writer (logrotate's `copytruncate` does this), \
                 so the writer refuses to append; rotate a log by renaming it",
                path.display()
            ),
        }
    }
}

impl core::error::Error for Error {
    /// The operating system's error behind an [`Io`](Error::Io); `None` for
    /// every other variant, whose message says all there is (a
    /// [`Broken`](Error::Broken) one's includes its [`Broken`], an
    /// [`InFile`](Error::InFile) one's the error in the file, whose source is
    /// its own).
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::InFile { source, .. } => source.source(),
            _ => None,
        }
    }
}

/// An I/O error on a log the error cannot name, while reading or writing it:
/// `op` is `"read or write"`. The crate's own operations say which they were,
/// and name the file when they opened it.
impl From<io::Error> for Error {
    fn from(source: io::Error) -> Error {
        Error::io("read or write", source)
    }
}

impl Error {
    /// An I/O error while doing `op` on a log the error cannot name.
    pub(crate) const fn io(op: &'static str, source: io::Error) -> Error {
        Error::Io {
            op,
            path: None,
            source,
        }
    }

    /// An I/O error while doing `op` on the log file at `path`.
    pub(crate) fn io_at(op: &'static str, path: &Path, source: io::Error) -> Error {
        Error::Io {
            op,
            path: Some(path.to_owned()),
            source,
        }
    }

    /// This error, naming the log file at `path` if it is an I/O error that
    /// names none.
    pub(crate) fn in_file(self, path: &Path) -> Error {
        match self {
            Error::Io {
                op,
                path: None,
                source,
            } => Error::io_at(op, path, source),
            other => other,
        }
    }
}

/// `error` and each of its causes, joined by `": "`: the whole chain as one
/// line of text, for a message that outlives the error.
pub(crate) fn with_causes(error: &dyn core::error::Error) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    // A chain is finite, but is walked with a bound all the same.
    for _ in 0..16 {
        let Some(cause) = next else { break };
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}
