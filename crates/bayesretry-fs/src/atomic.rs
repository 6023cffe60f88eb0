//! The atomic write: a new file beside the old, made durable, renamed over it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use crate::error::Error;
use crate::identity::FileId;

/// Options that create files readable and writable by their owner only
/// (mode 0600 on Unix; the process's umask can only remove bits from it).
pub(crate) fn create_options() -> OpenOptions {
    // Rebound rather than `let mut`, which would be an unused `mut` (a
    // warning, an error under `-D warnings`) where there is no mode to set.
    let options = OpenOptions::new();
    #[cfg(unix)]
    let options = {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = options;
        options.mode(0o600);
        options
    };
    options
}

/// Writes `json` and a newline to a new file at `temp` and makes them durable: whatever
/// was at `temp` (left by a save that was killed) is removed first, so the
/// file is created fresh, with mode 0600, and never inherits another mode.
/// Returns the new file's identity.
pub(crate) fn write_durably(temp: &Path, json: &str) -> Result<FileId, Error> {
    remove_if_present(temp)?;
    let mut file = create_options()
        .write(true)
        .create_new(true)
        .open(temp)
        .map_err(|e| Error::io("create", temp, e))?;
    file.write_all(json.as_bytes())
        .and_then(|()| file.write_all(b"\n"))
        .map_err(|e| Error::io("write", temp, e))?;
    file.sync_all().map_err(|e| Error::io("fsync", temp, e))?;
    let metadata = file.metadata().map_err(|e| Error::io("stat", temp, e))?;
    Ok(FileId::of(&metadata))
}

/// Makes `backup` a copy of `primary`, atomically: `backup` is at every
/// instant either its old self or a complete copy of `primary`.
///
/// The copy is a hard link where the file system allows one — the same inode
/// under a second name, no bytes copied — renamed over the backup. Saves never
/// modify a file in place (they rename a new one over the primary), so the
/// linked inode keeps the old snapshot after the primary moves on. A link
/// shares the primary's mode too, so where the primary is readable by anyone
/// but its owner (someone widened its mode), and where links are not
/// supported, the bytes are copied instead, into a new file created like
/// every other (mode 0600), and made durable before the rename.
pub(crate) fn rotate_backup(
    primary: &Path,
    backup_temp: &Path,
    backup: &Path,
) -> Result<(), Error> {
    remove_if_present(backup_temp)?;
    let linked = fs::hard_link(primary, backup_temp).is_ok();
    if !(linked && owner_only(backup_temp)?) {
        if linked {
            // Removes the second name only; the primary is untouched.
            remove_if_present(backup_temp)?;
        }
        copy_private(primary, backup_temp)?;
    }
    rename(backup_temp, backup, "rename the new backup over")
}

/// Whether no one but the file's owner may read or write `path` (always so
/// where there are no Unix modes).
fn owner_only(path: &Path) -> Result<bool, Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let metadata = fs::symlink_metadata(path).map_err(|e| Error::io("stat", path, e))?;
        Ok(metadata.permissions().mode() & 0o077 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(true)
    }
}

/// Copies `from` into a new file at `to`, created with mode 0600, and makes
/// it durable.
fn copy_private(from: &Path, to: &Path) -> Result<(), Error> {
    let mut source = File::open(from).map_err(|e| Error::io("copy to the backup", from, e))?;
    let mut target = create_options()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| Error::io("create", to, e))?;
    io::copy(&mut source, &mut target).map_err(|e| Error::io("copy to the backup", from, e))?;
    target.sync_all().map_err(|e| Error::io("fsync", to, e))
}

/// Renames `from` to `to`, replacing `to`: atomic on POSIX file systems and
/// on NTFS. An error names `to`, the file being replaced, and says what
/// `from` is through `op` ("rename the new backup over").
pub(crate) fn rename(from: &Path, to: &Path, op: &'static str) -> Result<(), Error> {
    fs::rename(from, to).map_err(|e| Error::io(op, to, e))
}

/// Makes the directory's entries durable, renames included (Unix; elsewhere
/// the rename itself is as durable as the platform offers).
pub(crate) fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| Error::io("fsync the directory", dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Removes `path` if it can, after a failed save: the save's own error is
/// the one to report, and a file that stays is removed by the next save.
pub(crate) fn discard(path: &Path) {
    let _removed = fs::remove_file(path);
}

/// Removes `path`; a file that is not there is no error.
fn remove_if_present(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io("remove", path, e)),
        _ => Ok(()),
    }
}
