//! The one error type of this crate, and the exit status of each error.

use core::fmt;
use std::io;

use crate::exit::Exit;

/// Why a `bayesretry` command failed.
///
/// Each error is reported as one lowercase line that names the file (or
/// `<stdin>`), the line and the offending token or value where there is one,
/// so that the message alone says what to fix: its `Display` says what failed,
/// and the operating system's error behind it, if any, is its
/// [`source`](core::error::Error::source), which [`report`](Error::report)
/// appends. [`Error::exit`] maps it to its [sysexits](Exit) status.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The command line was well-formed for the parser but asks for something
    /// impossible (a value out of range, a combination that cannot run).
    Usage(String),
    /// A token of an outcome stream is none of `1`, `0`, `ok`, `fail`, `true`,
    /// `false`.
    BadOutcome {
        /// Where the stream came from: a path, or `<stdin>`.
        source: String,
        /// 1-based line of the token.
        line: u64,
        /// 1-based byte column of the token's first byte.
        column: u64,
        /// The token, cut to its first bytes if it is long.
        token: String,
    },
    /// An input file could not be opened: it does not exist, is a directory, or
    /// is not readable.
    NoInput {
        /// The path as given.
        path: String,
        /// Why, in lowercase words.
        why: String,
    },
    /// Reading an input failed after it was opened.
    Read {
        /// The path as given, or `<stdin>`.
        path: String,
        /// The underlying error.
        error: io::Error,
    },
    /// Writing an output failed.
    Write {
        /// The path, or `<stdout>`.
        path: String,
        /// The underlying error.
        error: io::Error,
    },
    /// A store snapshot file could not be loaded: it is empty, truncated, not
    /// JSON, not a snapshot, of a newer format, or could not be read.
    Store(bayesretry_fs::Error),
    /// An audit log does not verify (a malformed line, a broken chain, a seal
    /// it no longer matches), or could not be read.
    Audit {
        /// The path as given, or `<stdin>`.
        path: String,
        /// What is wrong, with its line.
        error: bayesretry_audit::Error,
    },
    /// The input given as an audit log is another kind of file, which `why`
    /// names with the command that reads it (a store snapshot, for
    /// `inspect`).
    NotAuditLog {
        /// The path as given, or `<stdin>`.
        path: String,
        /// What the file is, and what to do with it.
        why: String,
    },
    /// An audit log verifies, but from a link to files not given: its first
    /// entry is a `continues` entry (a later file of a rotated log given
    /// without the older ones, or a file written to look like one), which
    /// states where a log it continues ends. Nothing given confirms that —
    /// neither those files nor a seal (`--seal`) of that point or later —
    /// so the log is not passed as a whole; `--partial` accepts it.
    UnconfirmedStart {
        /// The path of the first file as given, or `<stdin>`.
        path: String,
        /// Where the log starts: the entry count and the hash its link states.
        start: bayesretry_audit::Seal,
    },
    /// An input is larger than the most the command reads (`inspect
    /// --max-bytes`): a file that size, or a stream that goes on past it,
    /// is refused rather than read into memory whole.
    TooLarge {
        /// The path as given, or `<stdin>`.
        path: String,
        /// The cap, in bytes.
        limit: u64,
    },
    /// A bug: something this program should have ruled out happened.
    Internal(String),
}

impl Error {
    /// The exit status this error ends the process with.
    ///
    /// ```
    /// use bayesretry_cli::{Error, Exit};
    /// let err = Error::Usage(String::from("--n must be at least 1, got 0"));
    /// assert_eq!(err.exit(), Exit::Usage);
    /// assert_eq!(err.to_string(), "--n must be at least 1, got 0");
    /// ```
    pub fn exit(&self) -> Exit {
        match self {
            Error::Usage(_) => Exit::Usage,
            Error::BadOutcome { .. } => Exit::Data,
            Error::Store(error) => store_exit(error),
            Error::Audit { error, .. } => crate::audit::exit_of(error),
            Error::NoInput { .. } => Exit::NoInput,
            Error::Read { .. } | Error::Write { .. } => Exit::Io,
            Error::TooLarge { .. } | Error::UnconfirmedStart { .. } | Error::NotAuditLog { .. } => {
                Exit::Data
            }
            Error::Internal(_) => Exit::Internal,
        }
    }

    /// The one line the `bayesretry` binary prints for this error (after
    /// `error: `): its message and each of its causes, joined by `": "`, an
    /// I/O error in lowercase words without its `(os error N)` tail.
    ///
    /// ```
    /// use std::io;
    /// use bayesretry_cli::Error;
    ///
    /// let err = Error::Read {
    ///     path: String::from("outcomes.txt"),
    ///     error: io::Error::from(io::ErrorKind::PermissionDenied),
    /// };
    /// assert_eq!(err.to_string(), "outcomes.txt: read failed");
    /// assert_eq!(err.report(), "outcomes.txt: read failed: permission denied");
    /// ```
    pub fn report(&self) -> String {
        let mut line = self.to_string();
        let mut next = core::error::Error::source(self);
        // A chain is finite, but is walked with a bound all the same.
        for _ in 0..16 {
            let Some(cause) = next else { break };
            line.push_str(": ");
            match cause.downcast_ref::<io::Error>() {
                Some(error) => line.push_str(&describe(error)),
                None => line.push_str(&cause.to_string()),
            }
            next = cause.source();
        }
        line
    }

    /// An input that could not be opened, with the reason taken from `error`.
    pub(crate) fn no_input(path: &str, error: &io::Error) -> Error {
        Error::NoInput {
            path: path.to_owned(),
            why: describe(error),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(message) | Error::Internal(message) => f.write_str(message),
            Error::BadOutcome {
                source,
                line,
                column,
                token,
            } => {
                write!(
                    f,
                    "{source}:{line}:{column}: bad outcome token {token:?}: \
                     expected 1, 0, ok, fail, true or false"
                )?;
                // A JSON line: most likely an audit log, whose outcomes a
                // person would want to replay.
                if token.starts_with('{') {
                    f.write_str(
                        " (a JSON line is no outcome: for an audit log, \
                         `bayesretry replay --help` shows how to replay the outcomes it records)",
                    )?;
                }
                Ok(())
            }
            Error::NoInput { path, why } => write!(f, "{path}: cannot open: {why}"),
            Error::Read { path, .. } => write!(f, "{path}: read failed"),
            Error::Write { path, .. } => write!(f, "{path}: write failed"),
            Error::Store(error) => write!(f, "{error}"),
            // an error in a set of files names its file itself
            Error::Audit {
                error:
                    error @ (bayesretry_audit::Error::InFile { .. }
                    | bayesretry_audit::Error::Discontinuous(_)),
                ..
            } => write!(f, "{error}"),
            Error::Audit { path, error } => write!(f, "{path}: {error}"),
            Error::NotAuditLog { path, why } => write!(f, "{path}: not an audit log: {why}"),
            Error::UnconfirmedStart { path, start } => write!(
                f,
                "{path}: starts at entry {}, linked to the end of files not given (their \
                 seal: {start}), which nothing given verifies: the entries before it and the \
                 link are taken on trust; give the older files first, or a seal of that \
                 point or later (--seal), or accept a log that starts there with --partial",
                start.entries()
            ),
            Error::TooLarge { path, limit } => {
                write!(f, "{path}: more than {limit} bytes")?;
                if *limit >= 1 << 20 && limit % (1 << 20) == 0 {
                    write!(f, " ({} MiB)", limit >> 20)?;
                }
                f.write_str(
                    ", the most inspect reads (a snapshot that large is unlikely: is it \
                     the right input? --max-bytes raises the cap)",
                )
            }
        }
    }
}

impl core::error::Error for Error {
    /// The cause the message leaves out: the I/O error of a failed read or
    /// write, and, for a snapshot or audit log error (whose message is part of
    /// this one's), that error's own cause.
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Read { error, .. } | Error::Write { error, .. } => Some(error),
            Error::Store(error) => error.source(),
            Error::Audit { error, .. } => error.source(),
            _ => None,
        }
    }
}

/// A file that is not there or cannot be opened is missing input; one that
/// could not be read part-way is an I/O error; every other fault is in the data.
fn store_exit(error: &bayesretry_fs::Error) -> Exit {
    match error {
        bayesretry_fs::Error::Missing { .. } => Exit::NoInput,
        bayesretry_fs::Error::Io { source, .. } => match source.kind() {
            io::ErrorKind::NotFound
            | io::ErrorKind::PermissionDenied
            | io::ErrorKind::IsADirectory => Exit::NoInput,
            _ => Exit::Io,
        },
        _ => Exit::Data,
    }
}

/// An I/O error in lowercase words, without the `(os error N)` tail.
pub(crate) fn describe(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => String::from("no such file or directory"),
        io::ErrorKind::PermissionDenied => String::from("permission denied"),
        io::ErrorKind::IsADirectory => String::from("is a directory"),
        _ => {
            let text = error.to_string();
            let text = match text.find(" (os error") {
                Some(end) => text.get(..end).unwrap_or(&text).to_owned(),
                None => text,
            };
            let mut chars = text.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => text,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::{Error, describe};
    use crate::exit::Exit;

    #[test]
    fn io_errors_read_as_lowercase_words_without_the_os_code() {
        let gone = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(describe(&gone), "no such file or directory");
        let raw = io::Error::from_raw_os_error(28);
        let text = describe(&raw);
        assert!(!text.contains("os error"), "{text}");
        assert_eq!(text, text.to_lowercase());
    }

    #[test]
    fn each_error_has_its_sysexits_status() {
        let bad = Error::BadOutcome {
            source: String::from("<stdin>"),
            line: 2,
            column: 5,
            token: String::from("maybe"),
        };
        assert_eq!(bad.exit(), Exit::Data);
        assert_eq!(
            bad.to_string(),
            "<stdin>:2:5: bad outcome token \"maybe\": expected 1, 0, ok, fail, true or false"
        );
        let missing = Error::no_input("x.json", &io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(missing.exit(), Exit::NoInput);
        assert_eq!(
            missing.to_string(),
            "x.json: cannot open: no such file or directory"
        );
        let read = Error::Read {
            path: String::from("<stdin>"),
            error: io::Error::from(io::ErrorKind::UnexpectedEof),
        };
        assert_eq!(read.exit(), Exit::Io);
        assert_eq!(Error::Internal(String::new()).exit(), Exit::Internal);
    }
}
