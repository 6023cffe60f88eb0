//! [`Target`]: the file a snapshot path finally names, and the files a save
//! uses beside it.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// The most symbolic links followed from a snapshot path to its file: the
/// Linux kernel's limit (`MAXSYMLINKS`, past which it fails with `ELOOP`).
pub(crate) const MAX_LINKS: usize = 40;

/// The longest file name, in bytes, that Unix file systems take (`NAME_MAX`
/// of ext4, XFS, Btrfs, ZFS, APFS).
#[cfg(unix)]
const MAX_NAME_BYTES: usize = 255;

/// The suffix of the backup's temporary file: the longest a save adds to the
/// file's name.
const BACKUP_TEMP_SUFFIX: &str = ".bak.tmp";

/// Refuses a path that cannot name a snapshot file: one that ends in a
/// separator or in `.` (a directory, whatever its last name), and on Unix a
/// file name so long that a file beside it named with a save's longest
/// suffix would pass `NAME_MAX` — the first save, which keeps no backup,
/// would succeed and every later one fail.
pub(crate) fn check_file_name(path: &Path) -> Result<(), Error> {
    check_not_a_directory(path)?;
    check_name_length(path)
}

/// Refuses a path that ends in a separator or in `.`: it names a directory,
/// whatever its last name.
pub(crate) fn check_not_a_directory(path: &Path) -> Result<(), Error> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let separator = |b: &u8| b.is_ascii() && std::path::is_separator(char::from(*b));
    let names_a_directory = match bytes {
        [.., last] if separator(last) => true,
        [.., before, b'.'] => separator(before),
        _ => false,
    };
    if names_a_directory {
        return Err(Error::Io {
            op: "use as a snapshot file",
            path: path.into(),
            source: io::Error::new(
                io::ErrorKind::InvalidInput,
                "the path ends in a separator or `.`: it names a directory",
            ),
        });
    }
    Ok(())
}

/// On Unix, refuses a file name so long that a file beside it named with a
/// save's longest suffix would pass `NAME_MAX`.
pub(crate) fn check_name_length(path: &Path) -> Result<(), Error> {
    #[cfg(not(unix))]
    let _ = path;
    #[cfg(unix)]
    if let Some(name) = path.file_name() {
        if name.len() + BACKUP_TEMP_SUFFIX.len() > MAX_NAME_BYTES {
            return Err(Error::Io {
                op: "use as a snapshot file",
                path: path.into(),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "the file name is {} bytes, too long for the name of the backup's \
                         temporary file (`{BACKUP_TEMP_SUFFIX}` added) to fit in {MAX_NAME_BYTES}",
                        name.len()
                    ),
                ),
            });
        }
    }
    Ok(())
}

/// Refuses a path that names something other than a regular file, a
/// directory or nothing: a device, a FIFO or a socket. Reading one would
/// block (a FIFO) or read a device's stream as a snapshot (`/dev/null` as an
/// empty one), and a save's rename would replace the node itself (`/dev/null`
/// made a regular file, for a save run as root). Links are followed.
pub(crate) fn check_regular(path: &Path, op: &'static str) -> Result<(), Error> {
    match fs::metadata(path) {
        Ok(metadata) if !(metadata.is_file() || metadata.is_dir()) => Err(not_regular(path, op)),
        _ => Ok(()),
    }
}

/// Refuses a path a save cannot replace, before the save makes anything
/// beside it: a directory (a save renames a file over the path, which fails
/// on a directory, and would have made its lock file beside it first: beside
/// a directory anywhere, for a link pointed at one), a device, a FIFO or a
/// socket (see [`check_regular`]). Links are followed.
pub(crate) fn check_replaceable(path: &Path) -> Result<(), Error> {
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Err(Error::Io {
            op: "use as a snapshot file",
            path: path.into(),
            source: io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a directory; name a file in it",
            ),
        }),
        Ok(metadata) if !metadata.is_file() => Err(not_regular(path, "use as a snapshot file")),
        _ => Ok(()),
    }
}

/// The error refusing `path`, a device, a FIFO or a socket, for `op`.
pub(crate) fn not_regular(path: &Path, op: &'static str) -> Error {
    Error::Io {
        op,
        path: path.into(),
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file: a device, a FIFO or a socket is never read or \
             replaced as a snapshot file",
        ),
    }
}

/// The snapshot file a path names once its symbolic links are followed, and
/// its neighbours: every file a save creates, replaces or locks is in the
/// directory of that file, so a link survives a save and the atomic rename
/// happens where the file really is.
#[derive(Debug)]
pub(crate) struct Target {
    /// The snapshot file itself: not a link (or not there yet).
    pub(crate) file: PathBuf,
    /// `<file>.bak`.
    pub(crate) backup: PathBuf,
    /// `<file>.tmp`.
    pub(crate) temp: PathBuf,
    /// `<file>.bak.tmp`.
    pub(crate) backup_temp: PathBuf,
    /// `<file>.lock`.
    pub(crate) lock: PathBuf,
    /// The directory holding all of them.
    pub(crate) dir: PathBuf,
}

impl Target {
    /// The target of `path` as its links point now.
    ///
    /// # Errors
    ///
    /// [`Error::TooManyLinks`] past [`MAX_LINKS`] links (a loop, or a chain
    /// too long); [`Error::Io`] if a link cannot be read, or if the path
    /// resolves to one without a file name (a link to `..`).
    pub(crate) fn resolve(path: &Path) -> Result<Target, Error> {
        let file = follow_links(path)?;
        let Some(name) = file.file_name().map(OsString::from) else {
            return Err(Error::Io {
                op: "use as a snapshot file",
                path: file,
                source: io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"),
            });
        };
        let dir = match file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let sibling = |suffix: &str| {
            let mut sibling = name.clone();
            sibling.push(suffix);
            dir.join(sibling)
        };
        Ok(Target {
            backup: sibling(".bak"),
            temp: sibling(".tmp"),
            backup_temp: sibling(BACKUP_TEMP_SUFFIX),
            lock: sibling(".lock"),
            file,
            dir,
        })
    }
}

/// `path` with its last component's symbolic links followed, a relative link
/// from the directory that holds it, until a path that is not a link: a file,
/// or nothing yet (a dangling link's target, which a save creates). Links
/// among the directories on the way are left to the operating system.
fn follow_links(path: &Path) -> Result<PathBuf, Error> {
    let mut current = path.to_path_buf();
    let mut followed = 0_usize;
    loop {
        let is_link = match fs::symlink_metadata(&current) {
            Ok(metadata) => metadata.file_type().is_symlink(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::io("stat", &current, e)),
        };
        if !is_link {
            return Ok(current);
        }
        if followed == MAX_LINKS {
            return Err(Error::TooManyLinks {
                path: path.into(),
                limit: MAX_LINKS,
            });
        }
        let link = fs::read_link(&current).map_err(|e| Error::io("read the link", &current, e))?;
        current = match current.parent() {
            Some(dir) => dir.join(link),
            None => link,
        };
        followed += 1;
    }
}
