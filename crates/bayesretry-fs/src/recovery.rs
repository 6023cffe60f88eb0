//! [`Recovery`], [`Merged`] and their [`Origin`]: what was read, from which
//! file, and why.

use core::fmt;
use std::path::{Path, PathBuf};

use bayesretry_store::Snapshot;

use crate::error::{Error, WithCauses};

/// Which file a snapshot was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// The snapshot file itself.
    Primary,
    /// The backup, because the snapshot file could not be read.
    Backup,
    /// Neither: both files are missing, as before the first save. The snapshot
    /// is empty, and nothing was lost to get it.
    Neither,
}

/// Where a snapshot read from disk came from: which file, why not the
/// snapshot file itself if it was not, and whether it was migrated.
///
/// Its `Display` says all of it in one line, for a log: a recovery is never
/// silent.
#[derive(Debug)]
pub struct Origin {
    pub(crate) source: Source,
    pub(crate) path: PathBuf,
    pub(crate) primary_error: Option<Error>,
    pub(crate) migrated_from: Option<u32>,
}

impl Origin {
    /// Which file the snapshot came from.
    pub const fn source(&self) -> Source {
        self.source
    }

    /// The file the snapshot came from (the snapshot file itself for
    /// [`Source::Neither`]), with symbolic links followed: the
    /// [`target`](crate::FileStore::target) or the backup beside it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the snapshot file itself was not used: `None` when it was.
    pub const fn primary_error(&self) -> Option<&Error> {
        self.primary_error.as_ref()
    }

    /// Whether the snapshot came from the backup.
    pub fn recovered(&self) -> bool {
        self.source == Source::Backup
    }

    /// The older format version the file was written in and migrated from, if
    /// any. The next save writes the current format.
    pub const fn migrated_from(&self) -> Option<u32> {
        self.migrated_from
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match (self.source, &self.primary_error) {
            (Source::Backup, Some(why)) => {
                write!(f, "read the backup {path}, because {}", WithCauses(why))?
            }
            (Source::Neither, _) => write!(
                f,
                "neither {path} nor its backup exists: starting from an empty snapshot"
            )?,
            _ => write!(f, "read {path}")?,
        }
        if let Some(version) = self.migrated_from {
            write!(f, " (migrated from format version {version})")?;
        }
        Ok(())
    }
}

/// What [`FileStore::load_or_recover`](crate::FileStore::load_or_recover)
/// read: the snapshot and its [`Origin`].
#[derive(Debug)]
pub struct Recovery {
    pub(crate) snapshot: Snapshot,
    pub(crate) origin: Origin,
}

impl Recovery {
    /// The snapshot read (empty when the origin is [`Source::Neither`]).
    pub const fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The snapshot read, by value.
    pub fn into_snapshot(self) -> Snapshot {
        self.snapshot
    }

    /// Where the snapshot came from.
    pub const fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Which file the snapshot came from; short for `origin().source()`.
    pub const fn source(&self) -> Source {
        self.origin.source
    }
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} entries", self.origin, self.snapshot.len())
    }
}

/// What [`FileStore::save_merged`](crate::FileStore::save_merged) wrote: the
/// merged snapshot, and the [`Origin`] of the evidence that was on disk.
#[derive(Debug)]
pub struct Merged {
    pub(crate) snapshot: Snapshot,
    pub(crate) origin: Origin,
}

impl Merged {
    /// The snapshot written: the evidence on disk merged with the snapshot
    /// given. Merging it into a store gives that store every other process's
    /// evidence too, each piece counted once.
    pub const fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The snapshot written, by value.
    pub fn into_snapshot(self) -> Snapshot {
        self.snapshot
    }

    /// Where the evidence on disk was read from.
    pub const fn origin(&self) -> &Origin {
        &self.origin
    }
}

impl fmt::Display for Merged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; wrote {} entries", self.origin, self.snapshot.len())
    }
}
