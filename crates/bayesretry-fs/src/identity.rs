//! [`FileId`]: which version of a file was seen, without reading it again.

use std::fs::Metadata;
use std::time::SystemTime;

/// What tells one version of a file from another: its length and modification
/// time and, on Unix, its device and inode. Every save writes a new file and
/// renames it into place, so a save by anyone gives the path a new inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    dev: u64,
    #[cfg(unix)]
    ino: u64,
}

impl FileId {
    /// The identity of the file `metadata` describes.
    pub(crate) fn of(metadata: &Metadata) -> FileId {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        FileId {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            dev: metadata.dev(),
            #[cfg(unix)]
            ino: metadata.ino(),
        }
    }
}
