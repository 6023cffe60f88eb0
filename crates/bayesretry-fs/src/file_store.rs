//! [`FileStore`]: one snapshot file, its backup, and the protocol between them.

use core::time::Duration;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use bayesretry_store::{Snapshot, SnapshotEntry, WriterId};

use crate::atomic::{discard, rename, rotate_backup, sync_dir, write_durably};
use crate::error::Error;
use crate::identity::FileId;
use crate::lock::{DEFAULT_LOCK_TIMEOUT, SaveLock};
use crate::read::read_file;
use crate::recovery::{Merged, Origin, Recovery, Source};
use crate::target::{
    Target, check_file_name, check_name_length, check_not_a_directory, check_regular,
    check_replaceable,
};

/// A snapshot file on disk, with its backup: atomic saves, typed errors for
/// bad files, recovery from the backup, and merge-on-save across processes.
///
/// Opening a `FileStore` touches nothing on disk but a check that the
/// directory exists. Next to the file `F` it uses:
///
/// | file | what it holds |
/// | --- | --- |
/// | `F` | the snapshot, as the store's versioned JSON and a newline |
/// | `F.bak` | the snapshot `F` held before the last save that replaced it |
/// | `F.lock` | nothing; its advisory lock makes saves take turns (see below) |
/// | `F.tmp`, `F.bak.tmp` | a save in progress (left behind if it was killed, removed by the next) |
///
/// `F.lock` looks like a stale lock file but is not one: the lock is taken
/// on it, never by its existence, and goes with its holder. Do not remove it
/// (by hand, or in a clean-up at start) while a process may save: the holder
/// keeps its lock on the removed file, and the next save creates and locks a
/// new one, so two saves would run at once, sharing `F.tmp`.
///
/// All of them are created with mode 0600 on Unix: evidence about the
/// services a program calls is its owner's business. The backup is a hard
/// link to the file it replaces only while that file is private; one whose
/// mode was widened is copied into a new 0600 backup instead.
///
/// # Symbolic links
///
/// If the path is a symbolic link, `F` is the file it finally names: a chain
/// of links is followed (at most 40, else [`Error::TooManyLinks`]), and a
/// dangling link's target is created by the first save. The temporary files,
/// the backup and the lock file are beside that target, and the new file is
/// renamed over the target, never over the link: the link survives every
/// save, and the save is atomic in the target's directory. Every process
/// therefore locks the same lock file, whether it opened the link or the
/// target itself. The path is resolved again at every load and save, so a
/// link pointed elsewhere takes effect at the next one; errors about `F` name
/// the target.
///
/// # Saving
///
/// A save serialises the snapshot, takes the lock, writes `F.tmp`, fsyncs it,
/// links the current `F` to `F.bak` (renamed into place, so the backup too is
/// replaced in one step), renames `F.tmp` over `F` and fsyncs the directory.
/// A crash at any instant — a kill, a panic, a power cut — leaves `F` holding
/// either the old snapshot or the new one, complete, and `F.bak` a complete
/// older one. The current file goes to the backup only if it is a good
/// snapshot (this store wrote or read that very file, or it reads back now),
/// so a damaged file never pushes out a good backup. A store therefore reads
/// the file once before its first save if it has not loaded it, and again only
/// after another process replaced it.
///
/// # Several processes
///
/// Saves are serialised by the lock, but [`save`](FileStore::save) still
/// replaces whatever another process wrote. [`save_merged`](FileStore::save_merged)
/// reads the file under the lock, merges the snapshot into it with the store's
/// merge — per (context, writer), the entry with the larger sequence number —
/// and writes the result, so processes that each save their own store's
/// snapshot in turn lose nothing, and evidence saved twice counts once. Use it
/// whenever more than one process (or store) writes to one file.
///
/// That holds as long as each writer id belongs to one store at a time, and
/// a store that keeps its id across restarts loads the file before it
/// observes anything (a fresh, random id needs no loading). A store started
/// again under its old id without loading counts its sequence numbers from 1
/// again, below those of its entries on disk, and the merge would keep those
/// and drop its new evidence: `save_merged` refuses such a snapshot with
/// [`Error::WriterBehind`], writing nothing, rather than lose it silently.
///
/// A save waits for the lock while another process's save holds it, up to
/// the store's [`lock_timeout`](FileStore::lock_timeout) (10 seconds unless
/// [`with_lock_timeout`](FileStore::with_lock_timeout) or
/// [`without_lock_timeout`](FileStore::without_lock_timeout) says otherwise),
/// then gives up with [`Error::LockTimeout`], writing nothing. The lock goes
/// when its holder dies, but not while it is stopped (`SIGSTOP`, a debugger),
/// and a save holds it for milliseconds, so a wait that long means a holder
/// that will not let go soon (an [`Autosave`](crate::Autosave) tries again at
/// its next check).
///
/// A store with a half-life (the policy's default store has one) leaves out
/// of its snapshots the evidence it has forgotten, 64 half-lives old
/// ([`Snapshot::forgotten_before`]), and `save_merged` drops the file's
/// entries of that age before merging: the entries of processes long gone, and
/// of a writer id's earlier life. Other writers' entries go only once they are
/// also 64 half-lives older than the newest other writer's, so a saver whose
/// clock runs hours ahead does not erase the others' evidence. (Not if it
/// restarts under new ids: its earlier lives are then other writers, as far
/// ahead as it is, and a save may drop entries of the others that no live
/// store holds any more; a live store that holds them writes them back at its
/// next save.) So a file shared
/// by processes that restart under new random ids holds about one entry per
/// context for each process that wrote in the last 64 half-lives or so, not
/// one for every process that ever did. Stores sharing a file should share a
/// half-life: the saver's decides what the file forgets.
///
/// ```
/// use bayesretry_fs::{FileStore, Source};
/// use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};
///
/// let dir = tempfile::tempdir()?;
/// let file = FileStore::open(dir.path().join("evidence.json"))?;
///
/// // Nothing saved yet: `load` says the file is missing, recovery starts empty.
/// assert!(file.load().is_err_and(|e| e.is_missing()));
/// assert_eq!(file.load_or_recover()?.source(), Source::Neither);
///
/// let store = MemoryStore::new();
/// store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
/// file.save(&store.snapshot(0))?;
/// assert_eq!(file.load()?, store.snapshot(0));
///
/// // The second save keeps the first as the backup.
/// store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
/// file.save(&store.snapshot(0))?;
/// assert_eq!(file.load_backup()?.entries()[0].evidence().successes(), 1.0);
/// assert_eq!(file.load()?.entries()[0].evidence().successes(), 2.0);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FileStore {
    /// The path as given: the snapshot file, or a symbolic link to it.
    path: PathBuf,
    /// The version of the primary file this store last wrote or read whole,
    /// known to be a good snapshot without reading it again.
    known_good: Mutex<Option<FileId>>,
    /// How long a save waits for the lock; `None`: as long as it takes.
    lock_timeout: Option<Duration>,
    /// The longest file read, in bytes.
    max_file_bytes: u64,
}

impl FileStore {
    /// A store for the snapshot file at `path`, in a directory that must
    /// exist; `path` may be a symbolic link to the file (see
    /// [symbolic links](FileStore#symbolic-links)).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if `path` has no file name (`/`, `..`), names a
    /// directory (ends in a separator or in `.`, or is a directory, or a
    /// symbolic link to one, already there), names a device, a FIFO or a
    /// socket (`/dev/null`), has a file name too long for
    /// the files a save puts beside it (on Unix, more than 247 bytes: 255 with
    /// `.bak.tmp` added; for a symbolic link, the name of the file it names,
    /// beside which a save writes), or its directory cannot be read.
    pub fn open(path: impl AsRef<Path>) -> Result<FileStore, Error> {
        let path = path.as_ref().to_path_buf();
        if path.file_name().is_none() {
            return Err(Error::Io {
                op: "use as a snapshot file",
                path,
                source: io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"),
            });
        }
        check_not_a_directory(&path)?;
        // the files a save writes go beside the file a link names, not beside
        // the link: that file's name must leave room for their suffixes (a
        // link that cannot be followed is reported by the save)
        match Target::resolve(&path) {
            Ok(target) => {
                check_name_length(&target.file)?;
                // a directory already there (a state directory configured in
                // place of the file): every save would fail on it, after
                // making a lock file beside it
                if fs::metadata(&target.file).is_ok_and(|m| m.is_dir()) {
                    return Err(Error::Io {
                        op: "use as a snapshot file",
                        path,
                        source: io::Error::new(
                            io::ErrorKind::InvalidInput,
                            "it is a directory; name a file in it",
                        ),
                    });
                }
                check_regular(&target.file, "use as a snapshot file")?;
            }
            Err(_) => check_name_length(&path)?,
        }
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let metadata = fs::metadata(&dir).map_err(|e| Error::io("open the directory", &dir, e))?;
        if !metadata.is_dir() {
            return Err(Error::Io {
                op: "open the directory",
                path: dir,
                source: io::Error::new(io::ErrorKind::InvalidInput, "not a directory"),
            });
        }
        Ok(FileStore {
            path,
            known_good: Mutex::new(None),
            lock_timeout: Some(DEFAULT_LOCK_TIMEOUT),
            max_file_bytes: FileStore::DEFAULT_MAX_FILE_BYTES,
        })
    }

    /// The longest snapshot file (or backup) a store reads unless told
    /// otherwise: 256 MiB.
    ///
    /// A snapshot holds one entry per context and writer, of about 180 bytes
    /// for a short endpoint name and under 500 for one of 256 bytes, the
    /// longest a store keeps by default, with every number at its widest. The
    /// 100 000 contexts a store holds by default weigh under 50 MiB per
    /// writer, so the default leaves room for five writers' entries for every
    /// context at the longest names, and many more at the usual ones: a file
    /// past it is most likely not a snapshot at all (a log, a disk image the
    /// path was pointed at by mistake), which reading whole would cost as much
    /// memory as it is long. A store that shares a file among more writers
    /// than that raises the limit with
    /// [`with_max_file_bytes`](FileStore::with_max_file_bytes).
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

    /// The store, reading snapshot files of at most `bytes` bytes
    /// ([`DEFAULT_MAX_FILE_BYTES`](FileStore::DEFAULT_MAX_FILE_BYTES) unless
    /// set). A longer file, or backup, is refused with [`Error::TooLarge`]
    /// before it is read; one that grows past the limit while it is read is
    /// refused once the read has gone one byte past it, so a read never holds
    /// more than `bytes + 1` bytes of the file. No save replaces a file over
    /// the limit (see [`save`](FileStore::save)).
    ///
    /// ```
    /// use bayesretry_fs::{Error, FileStore};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("evidence.json");
    /// std::fs::write(&path, "{\"version\":1,\"taken_at_ms\":0,\"entries\":[]}\n")?;
    /// let file = FileStore::open(&path)?.with_max_file_bytes(16);
    /// assert_eq!(file.max_file_bytes(), 16);
    /// assert!(matches!(file.load(), Err(Error::TooLarge { size: 43, limit: 16, .. })));
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn with_max_file_bytes(mut self, bytes: u64) -> FileStore {
        self.max_file_bytes = bytes;
        self
    }

    /// The longest snapshot file the store reads, in bytes.
    pub const fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// The store, with saves that wait up to `timeout` for a lock another
    /// save holds before giving up with [`Error::LockTimeout`] (10 seconds
    /// unless set). `Duration::ZERO` tries the lock once. See
    /// [several processes](FileStore#several-processes).
    ///
    /// ```
    /// use core::time::Duration;
    /// use bayesretry_fs::FileStore;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let file = FileStore::open(dir.path().join("evidence.json"))?
    ///     .with_lock_timeout(Duration::from_secs(2));
    /// assert_eq!(file.lock_timeout(), Some(Duration::from_secs(2)));
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn with_lock_timeout(mut self, timeout: Duration) -> FileStore {
        self.lock_timeout = Some(timeout);
        self
    }

    /// The store, with saves that wait for the lock as long as it takes, as a
    /// process that would rather hang than skip a save needs: a stopped
    /// holder then blocks them until it ends.
    #[must_use]
    pub const fn without_lock_timeout(mut self) -> FileStore {
        self.lock_timeout = None;
        self
    }

    /// How long a save waits for the lock; `None` if as long as it takes.
    pub const fn lock_timeout(&self) -> Option<Duration> {
        self.lock_timeout
    }

    /// The snapshot file's path, as given to [`open`](FileStore::open): the
    /// file, or a symbolic link to it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The snapshot file itself: the path with its symbolic links followed,
    /// as they point now (the path itself when it is not a link). See
    /// [symbolic links](FileStore#symbolic-links).
    ///
    /// # Errors
    ///
    /// [`Error::TooManyLinks`] if the links form a loop or a chain of more
    /// than 40; [`Error::Io`] if a link cannot be read.
    pub fn target(&self) -> Result<PathBuf, Error> {
        Target::resolve(&self.path).map(|target| target.file)
    }

    /// The backup, the snapshot file as it was before the last save: beside
    /// the [`target`](FileStore::target).
    ///
    /// # Errors
    ///
    /// As [`target`](FileStore::target).
    pub fn backup_path(&self) -> Result<PathBuf, Error> {
        Target::resolve(&self.path).map(|target| target.backup)
    }

    /// The lock file: beside the [`target`](FileStore::target), so that
    /// every process locks the same one, whichever path it opened.
    ///
    /// # Errors
    ///
    /// As [`target`](FileStore::target).
    pub fn lock_path(&self) -> Result<PathBuf, Error> {
        Target::resolve(&self.path).map(|target| target.lock)
    }

    /// The snapshot in the file, migrated to the current format if it is older.
    ///
    /// Reading takes no lock: files are only ever replaced whole, by rename, so
    /// a reader sees one complete version or another.
    ///
    /// # Errors
    ///
    /// [`Error::Missing`] if nothing was saved yet; [`Error::Empty`],
    /// [`Error::Truncated`], [`Error::NotJson`], [`Error::Schema`] or
    /// [`Error::FutureVersion`] if the file is bad, naming it and what is wrong;
    /// [`Error::TooLarge`] if it is longer than the
    /// [`max_file_bytes`](FileStore::max_file_bytes), unread;
    /// [`Error::Io`] if it cannot be read; [`Error::TooManyLinks`] if the
    /// path is a loop of symbolic links. Never an empty snapshot in place of
    /// a bad file.
    pub fn load(&self) -> Result<Snapshot, Error> {
        let target = Target::resolve(&self.path)?;
        let loaded = read_file(&target.file, self.max_file_bytes)?;
        self.remember(loaded.id);
        Ok(loaded.snapshot)
    }

    /// The snapshot in the backup, checked like [`load`](FileStore::load).
    ///
    /// # Errors
    ///
    /// As [`load`](FileStore::load), about the backup.
    pub fn load_backup(&self) -> Result<Snapshot, Error> {
        let target = Target::resolve(&self.path)?;
        read_file(&target.backup, self.max_file_bytes).map(|loaded| loaded.snapshot)
    }

    /// The snapshot in the file or, if the file cannot be read, in the backup,
    /// with a [`Recovery`] that says which and why.
    ///
    /// If both files are missing — nothing was saved yet — the snapshot is
    /// empty and the origin is [`Source::Neither`]. A file that exists but is
    /// bad is never replaced by an empty snapshot: if the backup cannot be read
    /// either, the error says why for both.
    ///
    /// # Errors
    ///
    /// [`Error::Unrecoverable`] with both reasons when neither file is readable
    /// (and not both missing); [`Error::TooManyLinks`] if the path is a loop
    /// of symbolic links.
    pub fn load_or_recover(&self) -> Result<Recovery, Error> {
        let target = Target::resolve(&self.path)?;
        let (snapshot, origin) = self.read_with_fallback(&target)?;
        Ok(Recovery { snapshot, origin })
    }

    /// Writes `snapshot` to the file, atomically, keeping the file's previous
    /// version as the backup. See [saving](FileStore#saving).
    ///
    /// This replaces whatever is in the file; with several writers, use
    /// [`save_merged`](FileStore::save_merged).
    ///
    /// # Errors
    ///
    /// [`Error::FutureVersion`] (and nothing written) if the file holds a
    /// snapshot of a newer format, which a save by an older release must not
    /// destroy; [`Error::TooLarge`] (and nothing written) if the file is
    /// longer than the [`max_file_bytes`](FileStore::max_file_bytes): it is
    /// not read, so it cannot be told a snapshot, and a file that large is
    /// more likely something else, which a save must not replace;
    /// [`Error::Io`] (and nothing written) if the file exists but
    /// cannot be read, so it could not be kept as the backup; [`Error::Io`] if
    /// a step fails, in which case the file and its
    /// backup are as they were or hold complete snapshots;
    /// [`Error::TooManyLinks`] (and nothing written) if the path is a loop of
    /// symbolic links; [`Error::Io`] (and nothing written) if the file a
    /// symbolic link names could not be opened as one (see
    /// [`open`](FileStore::open)); [`Error::LockTimeout`] (and nothing
    /// written) if another save held the lock for longer than the
    /// [`lock_timeout`](FileStore::lock_timeout).
    pub fn save(&self, snapshot: &Snapshot) -> Result<(), Error> {
        let json = snapshot.to_json();
        let target = Target::resolve(&self.path)?;
        check_file_name(&target.file)?;
        // before the lock, whose file would go beside a device (`/dev`), or
        // beside a directory a link was pointed at
        check_replaceable(&target.file)?;
        let _lock = SaveLock::acquire(&target.lock, self.lock_timeout)?;
        let rotate = self.primary_is_good(&target)?;
        self.commit(&target, &json, rotate)
    }

    /// Reads the file under the save lock, merges `snapshot` into it and writes
    /// the result, atomically; returns what was written and where the evidence
    /// on disk came from.
    ///
    /// Merging keeps, per (context, writer), the entry with the larger
    /// sequence number: it is commutative, associative and idempotent, so
    /// processes saving in any order, any number of times, lose no evidence
    /// and count none twice — provided each writer id is one store's, which
    /// loaded the file before observing if it reuses an id from an earlier
    /// run (see [several processes](FileStore#several-processes)). If the file is missing or bad (empty, truncated,
    /// not JSON, the wrong schema) the backup is merged instead (and the bad
    /// file is not rotated into the backup); the returned [`Merged::origin`]
    /// says so. Entries of the file that the saving store has forgotten
    /// (updated before the snapshot's
    /// [`forgotten_before`](Snapshot::forgotten_before)) are dropped first;
    /// other writers' entries only when they are also 64 half-lives older
    /// than the newest other writer's, so that a saver whose clock runs hours
    /// ahead does not erase everyone else's evidence.
    ///
    /// # Errors
    ///
    /// [`Error::WriterBehind`] if the snapshot was taken by a store
    /// ([`Snapshot::taken_by`]) whose own entries on disk are newer than the
    /// snapshot's for some context: the store reuses a writer id without
    /// having loaded the file, and the merge would drop its evidence.
    /// [`Error::FutureVersion`] if the file is of a newer format,
    /// [`Error::Io`] if it exists but cannot be read and [`Error::TooLarge`]
    /// if it is longer than the [`max_file_bytes`](FileStore::max_file_bytes)
    /// (it is not known to be bad), and [`Error::Unrecoverable`] if neither the file nor the backup
    /// can be read: in these cases nothing is written, since writing would
    /// lose evidence. [`Error::Io`], [`Error::TooManyLinks`] and
    /// [`Error::LockTimeout`] as for [`save`](FileStore::save).
    pub fn save_merged(&self, snapshot: &Snapshot) -> Result<Merged, Error> {
        let target = Target::resolve(&self.path)?;
        check_file_name(&target.file)?;
        // before the lock, whose file would go beside a device (`/dev`), or
        // beside a directory a link was pointed at
        check_replaceable(&target.file)?;
        let _lock = SaveLock::acquire(&target.lock, self.lock_timeout)?;
        let (mut on_disk, mut origin) = self.read_with_fallback(&target)?;
        // A newer format must not be destroyed, and a file that could not be
        // read (permissions, too many open files, a failing disk) may well be
        // good, holding evidence the backup lacks: only a missing or bad file
        // is replaced by the backup's merge.
        if matches!(
            origin.primary_error,
            Some(Error::FutureVersion { .. } | Error::Io { .. } | Error::TooLarge { .. })
        ) {
            if let Some(error) = origin.primary_error.take() {
                return Err(error);
            }
        }
        // What the saving store has forgotten, the file forgets too, before
        // the merge: a forgotten entry must not win over its writer's new one.
        if let Some(cutoff) = snapshot.forgotten_before() {
            forget_in_file(&mut on_disk, snapshot, cutoff);
        }
        if let Some(writer) = snapshot.taken_by() {
            if let Some(error) = writer_behind(&on_disk, snapshot, writer, &origin.path) {
                return Err(error);
            }
        }
        on_disk.merge(snapshot);
        self.commit(
            &target,
            &on_disk.to_json(),
            origin.source == Source::Primary,
        )?;
        Ok(Merged {
            snapshot: on_disk,
            origin,
        })
    }

    /// The snapshot in the file, else in the backup, else (both missing) an
    /// empty one, with where it came from.
    fn read_with_fallback(&self, target: &Target) -> Result<(Snapshot, Origin), Error> {
        let primary_error = match read_file(&target.file, self.max_file_bytes) {
            Ok(loaded) => {
                self.remember(loaded.id);
                let origin = Origin {
                    source: Source::Primary,
                    path: target.file.clone(),
                    primary_error: None,
                    migrated_from: loaded.migrated_from,
                };
                return Ok((loaded.snapshot, origin));
            }
            Err(error) => error,
        };
        match read_file(&target.backup, self.max_file_bytes) {
            Ok(loaded) => Ok((
                loaded.snapshot,
                Origin {
                    source: Source::Backup,
                    path: target.backup.clone(),
                    primary_error: Some(primary_error),
                    migrated_from: loaded.migrated_from,
                },
            )),
            Err(backup_error) if primary_error.is_missing() && backup_error.is_missing() => Ok((
                Snapshot::new(),
                Origin {
                    source: Source::Neither,
                    path: target.file.clone(),
                    primary_error: Some(primary_error),
                    migrated_from: None,
                },
            )),
            Err(backup_error) => Err(Error::Unrecoverable {
                primary: Box::new(primary_error),
                backup: Box::new(backup_error),
            }),
        }
    }

    /// Whether the primary file is a good snapshot, worth keeping as the
    /// backup: `false` if it is missing or bad. Reads it only if this store
    /// has not seen that very file already.
    ///
    /// # Errors
    ///
    /// [`Error::FutureVersion`]: the file must not be overwritten.
    /// [`Error::Io`] or [`Error::TooLarge`]: the file cannot be read, so
    /// whether it is good is not known, and replacing it without keeping it
    /// could lose it.
    fn primary_is_good(&self, target: &Target) -> Result<bool, Error> {
        let metadata = match fs::metadata(&target.file) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Error::io("stat", &target.file, e)),
        };
        if Some(FileId::of(&metadata)) == self.known() {
            return Ok(true);
        }
        match read_file(&target.file, self.max_file_bytes) {
            Ok(loaded) => {
                self.remember(loaded.id);
                Ok(true)
            }
            Err(
                error @ (Error::FutureVersion { .. } | Error::Io { .. } | Error::TooLarge { .. }),
            ) => Err(error),
            Err(_) => Ok(false),
        }
    }

    /// Writes `json` as the new file: see [saving](FileStore#saving). The
    /// caller holds the lock.
    ///
    /// A step that fails before the new file is renamed into place leaves
    /// the file as it was (and the backup a complete snapshot), and the
    /// temporary files are removed: a half-written `F.tmp` (the disk filled
    /// up in the middle of it) would otherwise hold on to the space the next
    /// save needs.
    fn commit(&self, target: &Target, json: &str, rotate: bool) -> Result<(), Error> {
        let renamed = write_durably(&target.temp, json).and_then(|id| {
            if rotate {
                rotate_backup(&target.file, &target.backup_temp, &target.backup)?;
            }
            rename(&target.temp, &target.file, "rename the new snapshot over")?;
            Ok(id)
        });
        let id = match renamed {
            Ok(id) => id,
            Err(error) => {
                discard(&target.temp);
                discard(&target.backup_temp);
                return Err(error);
            }
        };
        sync_dir(&target.dir)?;
        self.remember(id);
        Ok(())
    }

    fn known(&self) -> Option<FileId> {
        *self
            .known_good
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn remember(&self, id: FileId) {
        *self
            .known_good
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(id);
    }
}

/// Drops the entries of `on_disk` that the store which took `snapshot` has
/// forgotten, at `cutoff` on its clock: its own entries before `cutoff`, and
/// other writers' entries before `cutoff` too, but never within one horizon
/// (64 half-lives) of the newest other writer's entry. The saver's clock may
/// run ahead of the others': hours fast, it would take every other writer's
/// evidence for forgotten and erase it from the file for good, where a reader
/// that merges it takes it as it is (`MemoryStore::merge_at` clamps the stamps
/// from a clock ahead of its own, it does not drop the others).
fn forget_in_file(on_disk: &mut Snapshot, snapshot: &Snapshot, cutoff: u64) {
    // `taken_at` is the saver's `now` (or later, after a merge), so the
    // horizon comes out at least as long as the saver's: never forgets more.
    let horizon = snapshot.taken_at_ms().saturating_sub(cutoff);
    let saver = snapshot.taken_by();
    let newest_other = on_disk
        .entries()
        .iter()
        .filter(|e| Some(e.writer()) != saver)
        .map(SnapshotEntry::updated_at_ms)
        .max();
    let others_cutoff = newest_other.map_or(cutoff, |t| cutoff.min(t.saturating_sub(horizon)));
    on_disk.retain(|e| {
        let cutoff = match Some(e.writer()) == saver {
            true => cutoff,
            false => others_cutoff,
        };
        e.updated_at_ms() >= cutoff
    });
}

/// The error to return if `on_disk` holds an entry of `writer` that would win
/// the merge over `snapshot`'s own entry for the same context while differing
/// from it: a higher sequence number, or the same one with another version.
/// Only another store writing under the same id leaves such an entry.
///
/// One pass over the snapshot's entries, each looked up by binary search in
/// the file's (both are sorted by context, then writer).
fn writer_behind(
    on_disk: &Snapshot,
    snapshot: &Snapshot,
    writer: WriterId,
    path: &Path,
) -> Option<Error> {
    let mut first: Option<(&SnapshotEntry, &SnapshotEntry)> = None;
    let mut contexts = 0_usize;
    for mine in snapshot.entries().iter().filter(|e| e.writer() == writer) {
        let wanted = (mine.endpoint(), mine.attempt(), mine.class(), writer);
        let Ok(at) = on_disk
            .entries()
            .binary_search_by(|e| (e.endpoint(), e.attempt(), e.class(), e.writer()).cmp(&wanted))
        else {
            continue;
        };
        let Some(theirs) = on_disk.entries().get(at) else {
            continue;
        };
        let newer = theirs.seq() > mine.seq() || (theirs.seq() == mine.seq() && theirs != mine);
        if newer {
            contexts += 1;
            first.get_or_insert((theirs, mine));
        }
    }
    let (theirs, mine) = first?;
    Some(Error::WriterBehind {
        path: path.to_path_buf(),
        writer,
        contexts,
        context: format!(
            "{}/{}/{}",
            theirs.endpoint(),
            theirs.attempt(),
            theirs.class()
        ),
        on_disk: theirs.seq(),
        in_snapshot: mine.seq(),
    })
}
