//! The one error type of this crate.

use core::fmt;
use core::time::Duration;
use std::io;
use std::path::{Path, PathBuf};

use bayesretry_store::WriterId;

/// Why a snapshot file could not be read or written.
///
/// Every variant about a file names its path, and a bad file says what is wrong
/// with it: a caller can tell "nothing saved yet" ([`Missing`](Error::Missing))
/// from "something saved and now unreadable" (every other reading variant), and
/// decide whether to [recover from the backup](crate::FileStore::load_or_recover).
///
/// The message of an [`Io`](Error::Io) error says what failed, on which file;
/// the operating system's error is its
/// [`source`](core::error::Error::source) only, so that a report printing the
/// chain of causes shows it once.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The file does not exist (nothing was saved there yet, or it was deleted).
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file exists and holds nothing but, at most, whitespace.
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The file holds the beginning of a JSON document that stops before its
    /// end: a write was cut short, or the file was truncated afterwards.
    Truncated {
        /// The file.
        path: PathBuf,
        /// The 1-based line at which the document stops.
        line: usize,
        /// The 1-based column at which the document stops.
        column: usize,
    },
    /// The file is not JSON: invalid UTF-8 or a syntax error.
    NotJson {
        /// The file.
        path: PathBuf,
        /// The 1-based line of the error (0 for invalid UTF-8).
        line: usize,
        /// The 1-based column of the error (0 for invalid UTF-8).
        column: usize,
        /// What the parser found there.
        why: String,
    },
    /// The file is JSON but not a snapshot: not an object, no `version`, a
    /// missing or mistyped field, or a value out of its domain (a negative
    /// count, a zero sequence number, an unknown class).
    Schema {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        why: String,
    },
    /// The file was written by a newer release, in a format version this one
    /// cannot read. It is never overwritten: a downgrade must not destroy it.
    FutureVersion {
        /// The file.
        path: PathBuf,
        /// The version the file declares.
        found: u64,
        /// The newest version this release reads.
        supported: u32,
    },
    /// The file is longer than the store reads
    /// ([`FileStore::with_max_file_bytes`](crate::FileStore::with_max_file_bytes)),
    /// and was not read: a snapshot that large is unlikely, so the path most
    /// likely names another file (a log, a disk image). No save replaces it.
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its length in bytes (if it grew while it was read, at least the
        /// bytes read, one more than the limit).
        size: u64,
        /// The most bytes the store reads.
        limit: u64,
    },
    /// An I/O operation on a file or directory failed.
    Io {
        /// What was being done ("read", "lock", "rename the new snapshot over", ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The snapshot path is a symbolic link, and following it led through
    /// more than `limit` links without reaching a file: the links form a
    /// loop, or a chain too long. Nothing was read or written.
    TooManyLinks {
        /// The snapshot path, as the store was opened with.
        path: PathBuf,
        /// The most links followed (40, as the Linux kernel).
        limit: usize,
    },
    /// [`load_or_recover`](crate::FileStore::load_or_recover) or
    /// [`save_merged`](crate::FileStore::save_merged) found neither the file nor
    /// its backup readable (and not both simply missing). The message gives
    /// both reasons, each with its causes.
    Unrecoverable {
        /// Why the file could not be read.
        primary: Box<Error>,
        /// Why the backup could not be read.
        backup: Box<Error>,
    },
    /// [`save_merged`](crate::FileStore::save_merged) was given a snapshot of
    /// a store whose own entries on disk are newer than the snapshot's (a
    /// higher sequence number, or the same one with other evidence): another
    /// store wrote under the same [`WriterId`] — most often this one's earlier
    /// run, started again without loading the file. The merge would keep the
    /// file's entries and drop the snapshot's, so nothing was written.
    ///
    /// Load the file into the store (`MemoryStore::load`) before it observes
    /// anything, or give each run a writer id of its own.
    WriterBehind {
        /// The file.
        path: PathBuf,
        /// The writer of the store that took the snapshot.
        writer: WriterId,
        /// How many contexts hold a newer entry of that writer on disk.
        contexts: usize,
        /// The first of them, as `endpoint/attempt/class`.
        context: String,
        /// Its sequence number on disk.
        on_disk: u64,
        /// Its sequence number in the snapshot.
        in_snapshot: u64,
    },
    /// Another save held the file's lock (`<file>.lock`) for longer than the
    /// store waits ([`FileStore::with_lock_timeout`](crate::FileStore::with_lock_timeout)):
    /// nothing was written. A save holds it for milliseconds, so the holder is
    /// most likely a process that is stopped or hung (the lock goes when it
    /// ends), or saves of many processes kept it taken in turn. The wait
    /// polls: a save that waits with [`FileStore::without_lock_timeout`](crate::FileStore::without_lock_timeout)
    /// blocks in the operating system instead, and takes the lock first when
    /// both wait.
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long the save waited.
        waited: Duration,
    },
    /// An autosave interval of zero.
    InvalidInterval(Duration),
    /// The autosave thread is gone: it could not be started, or it has
    /// stopped.
    AutosaveStopped(String),
    /// The autosave's snapshot source panicked; nothing was written, and the
    /// thread goes on.
    SourcePanicked,
}

impl Error {
    /// The file the error is about, if it is about one file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Missing { path }
            | Error::Empty { path }
            | Error::Truncated { path, .. }
            | Error::NotJson { path, .. }
            | Error::Schema { path, .. }
            | Error::FutureVersion { path, .. }
            | Error::TooLarge { path, .. }
            | Error::WriterBehind { path, .. }
            | Error::TooManyLinks { path, .. }
            | Error::LockTimeout { path, .. }
            | Error::Io { path, .. } => Some(path),
            Error::Unrecoverable { .. }
            | Error::InvalidInterval(_)
            | Error::AutosaveStopped(_)
            | Error::SourcePanicked => None,
        }
    }

    /// Whether the error says the file does not exist, the one reading error
    /// that means "nothing was saved" rather than "something was lost".
    pub const fn is_missing(&self) -> bool {
        matches!(self, Error::Missing { .. })
    }

    /// An I/O error, or [`Missing`](Error::Missing) if the file was not found.
    pub(crate) fn io(op: &'static str, path: &Path, source: io::Error) -> Error {
        if source.kind() == io::ErrorKind::NotFound && op == "read" {
            Error::Missing { path: path.into() }
        } else {
            Error::Io {
                op,
                path: path.into(),
                source,
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Missing { path } => {
                write!(f, "snapshot file {} does not exist", path.display())
            }
            Error::Empty { path } => write!(f, "snapshot file {} is empty", path.display()),
            Error::Truncated { path, line, column } => write!(
                f,
                "snapshot file {} is truncated: the document stops at line {line}, column {column}",
                path.display()
            ),
            Error::NotJson { path, why, .. } => {
                write!(f, "snapshot file {} is not JSON: {why}", path.display())
            }
            Error::Schema { path, why } => {
                write!(
                    f,
                    "snapshot file {} is JSON but not a snapshot: {why}",
                    path.display()
                )
            }
            Error::FutureVersion {
                path,
                found,
                supported,
            } => write!(
                f,
                "snapshot file {} has format version {found}, newer than {supported}, the newest this release reads",
                path.display()
            ),
            Error::TooLarge { path, size, limit } => write!(
                f,
                "snapshot file {} is {size} bytes, more than the {limit} bytes a store reads, \
                 and was not read: is the path right? (FileStore::with_max_file_bytes raises \
                 the limit)",
                path.display()
            ),
            Error::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
            Error::TooManyLinks { path, limit } => write!(
                f,
                "snapshot path {} leads through more than {limit} symbolic links without \
                 reaching a file: the links form a loop or a chain too long",
                path.display()
            ),
            Error::Unrecoverable { primary, backup } => write!(
                f,
                "neither the snapshot file nor its backup can be read: {}; {}",
                WithCauses(primary.as_ref()),
                WithCauses(backup.as_ref())
            ),
            Error::WriterBehind {
                path,
                writer,
                contexts,
                context,
                on_disk,
                in_snapshot,
            } => write!(
                f,
                "snapshot file {} holds newer entries of writer {writer} than the snapshot being \
                 saved, for {contexts} context(s) ({context}: sequence {on_disk} on disk, \
                 {in_snapshot} in the snapshot), so saving would drop this store's evidence and \
                 nothing was written: the store was started again under the same writer id \
                 without loading the file. Load the file into the store before it observes \
                 anything, or give each run its own writer id",
                path.display()
            ),
            Error::LockTimeout { path, waited } => write!(
                f,
                "gave up waiting for the save lock {} after {waited:?}: it was held all that \
                 time, and nothing was written (a save holds it for milliseconds, so a holder is \
                 likely stopped or hung, or many processes save at once)",
                path.display()
            ),
            Error::InvalidInterval(interval) => {
                write!(f, "autosave interval must be above zero, got {interval:?}")
            }
            Error::AutosaveStopped(why) => write!(f, "the autosave thread stopped: {why}"),
            Error::SourcePanicked => f.write_str("the autosave's snapshot source panicked"),
        }
    }
}

impl core::error::Error for Error {
    /// The operating system's error behind an [`Io`](Error::Io); `None` for
    /// every other variant, whose message says all there is.
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Shows an error and each of its causes, joined by `": "`: the whole chain
/// in one message, for a message that holds an error (or outlives it).
pub(crate) struct WithCauses<'a>(pub(crate) &'a dyn core::error::Error);

impl fmt::Display for WithCauses<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        // A chain is finite, but is walked with a bound all the same.
        for _ in 0..16 {
            let Some(cause) = next else { break };
            write!(f, ": {cause}")?;
            next = cause.source();
        }
        Ok(())
    }
}
