//! [`JsonlWriter`]: appends a hash-chained log to a JSON Lines file, with a
//! chosen [`Fsync`] policy.

use core::num::NonZeroU32;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::canonical;
use crate::error::Error;
use crate::hash::Hash;
use crate::lock::WriterLock;
use crate::record::{Event, Record};
use crate::scan;
use crate::seal::Seal;
use crate::trail::UnixClock;
use crate::verify::{MAX_LINE_LEN, Verifier};
use bayesretry_policy::Clock;

/// When a [`JsonlWriter`] writes its lines out and asks the operating system to
/// put them on disk (`fsync`, as `File::sync_data`).
///
/// A line waits in two places on its way to the disk, and a crash loses what
/// waits there: in the writer's buffer (64 KiB, in the process), which a
/// killed process loses, and in the operating system's memory, which a crash
/// of the machine or a power cut loses. A sync ([`JsonlWriter::sync`]) empties
/// both, at the price of a disk round trip (from tens of microseconds on an
/// NVMe drive to milliseconds on a spinning disk or a network volume).
///
/// What a crash loses is lost from the end and without a trace: the chain of
/// what remains still verifies, nothing in the log says entries are missing,
/// and only a seal taken when they were there shows it (a seal taken right
/// after a sync still holds: see [`JsonlWriter::seal`]). Only a line left
/// unfinished shows, and [`open_after_crash`](JsonlWriter::open_after_crash)
/// records it as one lost record, however many went with it. So the counts of
/// a log's `dropped` entries are a lower bound of what it lost, and what a
/// crash can lose unseen is this policy's choice. Counting the entries whose
/// [`append`](JsonlWriter::append) returned:
///
/// | policy | a killed process loses | a crash of the machine or a power cut loses |
/// |--------|------------------------|---------------------------------------------|
/// | [`EveryEntry`](Fsync::EveryEntry) | none | none |
/// | [`Every(n)`](Fsync::Every) | at most the last `n − 1` | at most the last `n − 1` |
/// | [`Never`](Fsync::Never) | those still in the buffer (at most 64 KiB of lines) | every one the operating system had not yet written to disk |
///
/// "None" assumes a disk that keeps what an fsync reported written. An
/// [`AuditTrail`](crate::AuditTrail) also loses the records still in its
/// queue; it writes the buffer out each time its queue runs dry.
///
/// # Default
///
/// [`Fsync::Every`] 64 entries: at most the last 63 entries lost in a crash,
/// one fsync per 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fsync {
    /// Lines are buffered in the process and written when the buffer fills, on
    /// [`flush`](JsonlWriter::flush), [`sync`](JsonlWriter::sync) and drop; the
    /// operating system decides when they reach the disk. The fastest; a crash
    /// loses an unbounded number of entries.
    Never,
    /// Each line is written and synced before [`append`](JsonlWriter::append)
    /// returns. Nothing acknowledged is ever lost (only the line being
    /// appended, if a crash cuts it); one disk round trip per entry.
    EveryEntry,
    /// Lines are buffered; every `n`-th entry, they are written and synced. A
    /// crash loses at most the `n − 1` entries appended since.
    Every(NonZeroU32),
}

impl Default for Fsync {
    fn default() -> Fsync {
        Fsync::Every(NonZeroU32::new(64).unwrap_or(NonZeroU32::MIN))
    }
}

/// A destination for log lines that can make what was written durable: a
/// [`File`], or for tests and benches a `Vec<u8>` or [`io::Sink`], for which
/// syncing does nothing.
pub trait Durable: Write {
    /// Makes every byte written so far durable (for a file: `fsync`).
    fn sync(&mut self) -> io::Result<()>;
}

impl Durable for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

impl Durable for Vec<u8> {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Durable for io::Sink {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Appends records to a log in the JSON Lines format of `docs/SPEC.md` ("Audit
/// log"): one entry per line, its canonical form with its hash as a last field.
///
/// The writer keeps the head of the chain in memory: each append is one SHA-256
/// and one buffered write. [`open`](JsonlWriter::open) verifies an existing file
/// before appending to it, so that a new entry never extends a broken chain.
///
/// One writer per file: two writers appending to the same file would interleave
/// two chains, which the verifier reports as broken. [`open`](JsonlWriter::open)
/// and [`open_after_crash`](JsonlWriter::open_after_crash) see to it: each
/// takes an exclusive advisory lock on `<file>.lock`, beside the file the path
/// finally names (after symbolic links), and holds it for as long as the
/// writer lives; on Unix, it also locks the file itself, so that a writer
/// given another name of the file (a hard link, the name a rotation renamed
/// it to) is kept out too. A second writer, of this process or another, is
/// refused with [`Error::Locked`], which names the file; a writer whose
/// process died holds nothing. The lock is advisory: it keeps out writers that take it (this
/// crate's), not a program that writes to the file regardless. Readers take
/// none.
///
/// ```
/// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
///
/// let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
/// writer.append(&Record::new(1, Event::Dropped { count: 2 }))?;
/// writer.append(&Record::new(2, Event::Dropped { count: 5 }))?;
/// writer.sync()?; // both lines written out (and, to a file, synced)
/// let seal = writer.seal();
/// let bytes = writer.into_inner()?;
///
/// let checked = Verifier::new().with_seal(seal).verify_reader(bytes.as_slice())?;
/// assert_eq!(checked, seal);
/// assert_eq!(checked.entries(), 2);
/// # Ok::<(), bayesretry_audit::Error>(())
/// ```
#[derive(Debug)]
pub struct JsonlWriter<W: Durable = File> {
    out: BufWriter<W>,
    /// The lock of a file opened by path. Dropped after `out`, which flushes
    /// the buffer when dropped: the next writer finds every line written.
    lock: Option<WriterLock>,
    path: Option<PathBuf>,
    fsync: Fsync,
    next_seq: u64,
    head: Hash,
    /// The seal of the entries whose lines have left the buffer: handed to
    /// the destination by a flush or a sync, or found there when resumed.
    handed: Seal,
    /// Entries appended since the last sync.
    unsynced: u32,
    /// A write failed: the destination may end in a partial line.
    poisoned: bool,
    /// Reused for each line.
    line: Vec<u8>,
    /// A handle of the file being written, by which a flush sees whether the
    /// file shrank under the writer ([`Error::Shrunk`]); `None` for a
    /// destination that is not a file opened by path.
    watch: Option<File>,
    /// The bytes the file held when opened, and the lines flushed since.
    written: u64,
    /// The bytes of the lines appended since the last flush.
    pending: u64,
}

impl JsonlWriter<File> {
    /// Opens the log at `path` for appending, creating it if it does not exist
    /// (and then, on Unix, syncing its directory, so that a power cut cannot
    /// take the new file's name and with it entries a sync made durable).
    ///
    /// # File mode
    ///
    /// A log names endpoints and error classes, so a file this creates is
    /// readable and writable by its owner alone: mode 0600 on Unix, whatever
    /// the process's umask (which can only take bits away). A file that
    /// exists keeps its mode: to choose another (0640, say, for a group that
    /// ships the log), create the file with it, or `chmod` it, before
    /// opening it. [`rotate`](JsonlWriter::rotate) gives the new file the
    /// mode of the old one, so the choice lasts. The same holds for
    /// [`open_after_crash`](JsonlWriter::open_after_crash) and
    /// [`open_continuing`](JsonlWriter::open_continuing). The lock file,
    /// `<file>.lock`, stays empty and is created with the umask's mode.
    ///
    /// An existing file is verified first, in constant memory (see [`Verifier`]),
    /// and the writer continues its chain. A file that does not verify — a
    /// broken chain, a malformed line, a last line cut short by a crash — is an
    /// error: appending to it would bury the damage under valid entries.
    ///
    /// A writer stopped while a line is being written can leave the file
    /// ending inside that line: not only a machine that crashes or loses
    /// power, but a process killed (`SIGKILL`, the OOM killer, a supervisor's
    /// timeout), since Linux stops a write at a page boundary when its process
    /// is killed, and a line that straddles one is left half-written. Such a
    /// file is opened with [`open_after_crash`](JsonlWriter::open_after_crash),
    /// which opens a file that ends with a whole line as this does: a
    /// program that may have been stopped that way opens its log with it.
    ///
    /// The writer holds the file's lock, `<file>.lock`, until it is dropped or
    /// given up ([`into_inner`](JsonlWriter::into_inner)); while another writer
    /// holds it, this fails with [`Error::Locked`] and reads nothing.
    ///
    /// A path that names no regular file — a FIFO or a socket (a named pipe
    /// made to ship the log; `/dev/stdout` when standard output is a pipe),
    /// a device (`/dev/null`) — is refused with [`Error::Io`], by this and
    /// every other way a writer opens a file: reading a FIFO back to verify
    /// it would wait for ever, and the lock file would be made beside a
    /// device, in `/dev`.
    pub fn open(path: impl AsRef<Path>, fsync: Fsync) -> Result<JsonlWriter<File>, Error> {
        let path = path.as_ref();
        let file = open_for_append(path)?;
        let lock = WriterLock::try_acquire(path, &file)?;
        // reads start at the beginning even in append mode; writes go to the end
        let seal = Verifier::new()
            .verify_reader(BufReader::new(&file))
            .map_err(|err| err.in_file(path))?;
        JsonlWriter::resume_file(file, lock, path, seal, fsync)
    }

    /// [`open`](JsonlWriter::open) for a log that a crash may have cut inside
    /// its last line: the bytes after the last newline, a line that was never
    /// whole, are cut off, and the loss is recorded in the log as a `dropped`
    /// entry of one record (timed by the system clock). That is a lower bound:
    /// whole lines the crash lost with it leave no trace, and how many there
    /// can be depends on the [`Fsync`] policy the file was written with.
    /// Returns the writer and the number of bytes cut (0, and no entry added,
    /// for a file that ends with a whole line).
    ///
    /// Only a line that was never finished is cut. No entry a seal taken after
    /// a [`sync`](JsonlWriter::sync) vouches for is lost, since such a seal
    /// covers only lines that were on disk: the file still verifies against
    /// it. A seal taken after lines were written out but before they were
    /// synced may cover lines the crash lost, and the entries written after
    /// the crash take their places: the file reads as rewritten at the seal's
    /// last entry ([`Break::Seal`](crate::Break::Seal)), or, while it is
    /// shorter, as cut ([`Break::Truncated`](crate::Break::Truncated)).
    ///
    /// What is cut must be what a crash of a writer leaves: the beginning of
    /// the entry that was due (`{"v":1,"seq":<n>,...` for a log of `n`
    /// entries), in canonical form up to its last byte, at most a line's
    /// worth ([`MAX_LINE_LEN`] bytes) and nothing past that entry's end,
    /// possibly followed by NUL bytes; or NUL bytes alone, of any number (a
    /// machine that lost power after the file grew but before its data
    /// reached the disk leaves zeros). Any other tail — text that does not
    /// begin as that entry would, that strays from the canonical form after
    /// its beginning (`{"v":1,"seq":3,"time_ms":5}junk`), more than a line of
    /// it — is [`Error::StrayTail`]: a writer writes its line front to back,
    /// so a crash leaves a beginning of it, and cutting anything else would
    /// destroy what some other program wrote. It and a
    /// file with any other damage — a broken chain, a malformed whole line —
    /// are refused as [`open`](JsonlWriter::open) refuses a damaged file, and
    /// left as they are.
    ///
    /// ```
    /// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
    /// use std::io::Write;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("decisions.jsonl");
    /// let mut writer = JsonlWriter::open(&path, Fsync::EveryEntry)?;
    /// writer.append(&Record::new(1, Event::Dropped { count: 0 }))?;
    /// drop(writer);
    /// // the power went out in the middle of the next line
    /// std::fs::OpenOptions::new().append(true).open(&path)?.write_all(b"{\"v\":1,\"seq\":1,")?;
    /// assert!(JsonlWriter::open(&path, Fsync::EveryEntry).is_err());
    ///
    /// let (writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::EveryEntry)?;
    /// assert_eq!(cut, 15);
    /// assert_eq!(writer.seal().entries(), 2); // the entry, and the loss
    /// assert_eq!(Verifier::new().verify_file(&path)?.entries(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_after_crash(
        path: impl AsRef<Path>,
        fsync: Fsync,
    ) -> Result<(JsonlWriter<File>, u64), Error> {
        let path = path.as_ref();
        let mut file = open_for_append(path)?;
        let lock = WriterLock::try_acquire(path, &file)?;
        let len = file
            .metadata()
            .map_err(|err| Error::io_at("read", path, err))?
            .len();
        let tail = find_tail(&mut file, len).map_err(|err| Error::io_at("read", path, err))?;
        let keep = tail.start;
        // the whole lines verify before anything is cut
        file.seek(SeekFrom::Start(0))
            .map_err(|err| Error::io_at("read", path, err))?;
        let seal = Verifier::new()
            .verify_reader(BufReader::new((&file).take(keep)))
            .map_err(|err| err.in_file(path))?;
        let cut = len - keep;
        if cut > 0 {
            check_crash_tail(&mut file, &tail, seal.entries())
                .map_err(|err| err.in_file(path))?
                .map_err(|problem| Error::StrayTail {
                    line: seal.entries().saturating_add(1),
                    len: cut,
                    problem,
                })?;
            file.set_len(keep)
                .map_err(|err| Error::io_at("cut the unfinished line of", path, err))?;
            file.sync_all()
                .map_err(|err| Error::io_at("sync", path, err))?;
        }
        let mut writer = JsonlWriter::resume_file(file, lock, path, seal, fsync)?;
        if cut > 0 {
            writer.append(&Record::new(
                UnixClock.now_ms(),
                Event::Dropped { count: 1 },
            ))?;
            writer.sync()?;
        }
        Ok((writer, cut))
    }

    /// A writer that continues, in `file` at `path`, the log whose verified
    /// end is `seal`.
    fn resume_file(
        file: File,
        lock: WriterLock,
        path: &Path,
        seal: Seal,
        fsync: Fsync,
    ) -> Result<JsonlWriter<File>, Error> {
        let watch = file
            .try_clone()
            .map_err(|err| Error::io_at("open", path, err))?;
        let written = file
            .metadata()
            .map_err(|err| Error::io_at("read", path, err))?
            .len();
        let mut writer = JsonlWriter::resume(file, seal, fsync);
        writer.lock = Some(lock);
        writer.path = Some(path.to_owned());
        writer.watch = Some(watch);
        writer.written = written;
        Ok(writer)
    }

    /// Opens the log file at `path` as the next file of a log kept in
    /// several, continuing the log whose end is `from` (the seal of the file
    /// before, taken after a sync): a file that does not exist or is empty
    /// gets the `continues` entry that links it to `from`
    /// ([`Event::Continues`]), synced; a file that already begins with that
    /// link (this call was made before, and the writer stopped) is verified
    /// and continued as [`open`](JsonlWriter::open) does. A file that holds
    /// no whole line but what a crash leaves of that link — NUL bytes, where
    /// a power cut came after the file grew and before its first line reached
    /// the disk, or the beginning of the link, as
    /// [`open_after_crash`](JsonlWriter::open_after_crash) tells such a tail
    /// apart — is emptied and given the link: it never was on disk.
    ///
    /// [`rotate`](JsonlWriter::rotate) does this itself; this is for a
    /// rotation a program does its own way, or one a crash interrupted after
    /// the old file was renamed. A file with entries that does not begin
    /// with the link to `from` is refused ([`Break::Link`](crate::Break::Link)
    /// at line 1, or [`Break::Sequence`](crate::Break::Sequence) if it starts
    /// elsewhere), and left as it is.
    pub fn open_continuing(
        path: impl AsRef<Path>,
        from: Seal,
        fsync: Fsync,
    ) -> Result<JsonlWriter<File>, Error> {
        let path = path.as_ref();
        let mut file = open_for_append(path)?;
        let lock = WriterLock::try_acquire(path, &file)?;
        cut_unwritten_link(&mut file, from).map_err(|err| err.in_file(path))?;
        let summary = Verifier::new()
            .summarize_reader(BufReader::new(&file))
            .map_err(|err| err.in_file(path))?;
        let empty = summary.seal() == Seal::new(0, Hash::GENESIS);
        if !empty && summary.start() != from {
            // the link of the file's first entry, or entry 0 if it has none
            let start = summary.start();
            let why = if start.entries() == from.entries() {
                crate::Break::Link {
                    expected: from.head(),
                    found: start.head(),
                }
            } else {
                crate::Break::Sequence {
                    expected: from.entries(),
                    found: start.entries(),
                }
            };
            return Err(Error::Broken {
                line: 1,
                broken: crate::Broken::new(from.entries(), why),
            });
        }
        let seal = if empty { from } else { summary.seal() };
        let mut writer = JsonlWriter::resume_file(file, lock, path, seal, fsync)?;
        if empty {
            writer.append_link()?;
        }
        Ok(writer)
    }

    /// Rotates the log: makes every entry durable, moves the file to `to`
    /// (never onto a file there), and goes on in a new file at the writer's
    /// path, whose first entry links it to the last of the renamed one
    /// ([`Event::Continues`]).
    /// Returns the seal of the renamed file, the end the new one continues:
    /// durable, like the seal [`sync`](JsonlWriter::sync) makes.
    ///
    /// # Why by renaming
    ///
    /// Each entry's hash covers the one before, so a log kept in several
    /// files is one chain only if each file starts where the one before
    /// ended, and says so: then a file deleted, reordered or swapped from the
    /// middle of a set is caught by verifying them in order
    /// ([`Verifier::summarize_files`]), and a file verified alone says
    /// where it starts ([`Summary::start`](crate::Summary::start)). A
    /// rename keeps every byte of the old file and leaves the writer to
    /// start the next: nothing is lost or written twice.
    ///
    /// logrotate's `copytruncate` does the opposite — copies the file, then
    /// empties it in place while the writer keeps appending — and loses
    /// entries written between the copy and the truncation; the file left
    /// starts in the middle of the chain with no link. A writer notices at
    /// its next flush that its file shrank and refuses to go on
    /// ([`Error::Shrunk`]); [`open`](JsonlWriter::open) of such a file says
    /// its first lines were cut. With logrotate, rotate by calling this from
    /// the program (on a signal, a size, a time), or use `create` without
    /// `copytruncate` and have `postrotate` get the program to call
    /// [`reopen`](JsonlWriter::reopen).
    ///
    /// `to` must not exist: an old file is never overwritten, not even one
    /// another program makes there while this runs. The file is moved in two
    /// steps, from the name the writer's path finally resolves to (after
    /// symbolic links): it is given the name `to` by a hard link, which the
    /// file system makes only if the name is free (a check, then a rename,
    /// would overwrite a file made between the two), the directory of `to`
    /// is synced, and only then is the old name removed. The new file is
    /// created at the old name, with the old file's mode (0600 unless it
    /// was changed: see [`open`](JsonlWriter::open)), and its directory
    /// synced, so that a power cut keeps the new names. The writer keeps its
    /// lock. So rotating needs a file system that has hard links (any Unix
    /// file system, NTFS); on one without (FAT, some network shares) it
    /// fails and changes nothing.
    ///
    /// An error before the old name is removed leaves the writer going on in
    /// its file as before; one after it poisons the writer, and the new
    /// file, if made, may lack its link:
    /// [`open_continuing`](JsonlWriter::open_continuing) from the returned
    /// seal (or the renamed file's, read by a [`Verifier`]) mends it.
    ///
    /// A crash between the two steps leaves the whole log under both names,
    /// `to` and the writer's path, one file: nothing is lost, the path
    /// verifies and reopens as before ([`open`](JsonlWriter::open)), and
    /// rotating to the same `to` again finishes the rotation (on Unix, where
    /// `to` is then seen to be another name of the file being written; a
    /// symbolic link to it, or a path that is the writer's own name, is
    /// refused). Until then the entries written go to that one file, which
    /// both names show.
    ///
    /// ```
    /// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let live = dir.path().join("decisions.jsonl");
    /// let mut writer = JsonlWriter::open(&live, Fsync::default())?;
    /// writer.append(&Record::new(1, Event::Dropped { count: 0 }))?;
    /// let old = dir.path().join("decisions.jsonl.1");
    /// let seal = writer.rotate(&old)?;
    /// assert_eq!(seal.entries(), 1);
    ///
    /// // the new file starts with its link, and verifies alone from there
    /// drop(writer);
    /// let live_alone = Verifier::new().summarize_file(&live)?;
    /// assert_eq!(live_alone.start(), seal);
    /// assert_eq!(Verifier::new().verify_files([&old, &live])?.entries(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rotate(&mut self, to: impl AsRef<Path>) -> Result<Seal, Error> {
        let to = to.as_ref();
        let path = self.own_path("rotate")?;
        self.sync()?;
        let seal = self.handed;
        let live = fs::canonicalize(&path).map_err(|err| Error::io_at("resolve", &path, err))?;
        let permissions = fs::metadata(&live)
            .map_err(|err| Error::io_at("read", &path, err))?
            .permissions();
        before_move();
        // The old file gets its new name first, by a hard link, which the
        // file system makes only if the name is free: a file there is never
        // overwritten, whenever it appeared (a check, then a rename, would
        // overwrite one made between the two).
        match fs::hard_link(&live, to) {
            Ok(()) => {}
            // this rotation, cut by a crash after its first step: `to` is
            // another name of the file (not a symbolic link to it, nor the
            // live name itself, which would then be removed)
            Err(err)
                if err.kind() == io::ErrorKind::AlreadyExists
                    && fs::symlink_metadata(to).is_ok_and(|meta| self.is_current(&meta))
                    && fs::canonicalize(to).is_ok_and(|name| name != live) => {}
            Err(err) => {
                let why = if err.kind() == io::ErrorKind::AlreadyExists {
                    format!(
                        "{} exists, and an old file is never overwritten",
                        to.display()
                    )
                } else {
                    format!("cannot give the file the name {}: {err}", to.display())
                };
                return Err(Error::io_at(
                    "rotate",
                    &path,
                    io::Error::new(err.kind(), why),
                ));
            }
        }
        // the new name is durable before the old one goes: a power cut
        // leaves the file under one name or both, never under neither
        sync_parent(to)?;
        fs::remove_file(&live).map_err(|err| Error::io_at("remove the old name of", &path, err))?;
        // from here on, a failure leaves the log between two files
        self.poisoned = true;
        let file = private_options()
            .create_new(true)
            .read(true)
            .append(true)
            .open(&live)
            .map_err(|err| Error::io_at("create", &path, err))?;
        // the mode chosen for the log (0600 unless changed) goes on
        file.set_permissions(permissions)
            .map_err(|err| Error::io_at("set the mode of", &path, err))?;
        sync_parent(&live)?;
        self.switch_to(&path, file)?;
        Ok(seal)
    }

    /// Goes on in a new file at the writer's path after another program
    /// renamed the file away — logrotate without `copytruncate`, in its
    /// `postrotate` step, or any tool that rotates by renaming — linking it
    /// to the renamed one, as [`rotate`](JsonlWriter::rotate) does. Returns
    /// the seal of the renamed file, which this writer wrote to until now:
    /// the lines it still had buffered are written there first.
    ///
    /// The path must name an empty file (logrotate's `create` makes one) or
    /// none, which is then created. If it still names the file being
    /// written (nothing renamed it; on Unix, where a file's identity can be
    /// read), or a file with entries, this fails and the writer goes on in
    /// its file as before. The writer keeps its lock on the path's lock file.
    /// The path's directory is synced before the new file is written, since
    /// the program that renamed the old file and made the new one (logrotate)
    /// syncs neither: a seal handed out after this survives a power cut.
    ///
    /// ```
    /// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let live = dir.path().join("decisions.jsonl");
    /// let old = dir.path().join("decisions.jsonl.1");
    /// let mut writer = JsonlWriter::open(&live, Fsync::default())?;
    /// writer.append(&Record::new(1, Event::Dropped { count: 0 }))?;
    /// // logrotate: `mv decisions.jsonl decisions.jsonl.1`, `create`
    /// std::fs::rename(&live, &old)?;
    /// std::fs::File::create(&live)?;
    /// // ...then, told by its postrotate step
    /// let seal = writer.reopen()?;
    /// writer.append(&Record::new(2, Event::Dropped { count: 0 }))?;
    /// drop(writer);
    /// assert_eq!(Verifier::new().verify_file(&old)?, seal);
    /// assert_eq!(Verifier::new().verify_files([&old, &live])?.entries(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reopen(&mut self) -> Result<Seal, Error> {
        let path = self.own_path("reopen")?;
        self.sync()?;
        let seal = self.handed;
        let file = open_for_append(&path)?;
        let meta = file
            .metadata()
            .map_err(|err| Error::io_at("read", &path, err))?;
        let refuse = |why: &str| {
            Err(Error::io_at(
                "reopen",
                &path,
                io::Error::new(io::ErrorKind::AlreadyExists, why.to_owned()),
            ))
        };
        if self.is_current(&meta) {
            return refuse("the path still names the file being written: nothing renamed it");
        }
        if meta.len() > 0 {
            return refuse("the path names another file, which holds entries");
        }
        // The rename and the new file are another program's (logrotate syncs
        // neither): without this, a power cut could take the new name back,
        // and with it every entry written to the new file that a seal vouched
        // for.
        sync_parent(&path)?;
        self.poisoned = true;
        self.switch_to(&path, file)?;
        Ok(seal)
    }

    /// Whether `meta` is the file this writer writes (on Unix, by device and
    /// inode; elsewhere, where std cannot tell, never).
    fn is_current(&self, meta: &fs::Metadata) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            self.watch
                .as_ref()
                .and_then(|file| file.metadata().ok())
                .is_some_and(|own| own.dev() == meta.dev() && own.ino() == meta.ino())
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            false
        }
    }

    /// The path of a writer opened by path, or why `op` needs one.
    fn own_path(&self, op: &'static str) -> Result<PathBuf, Error> {
        self.path.clone().ok_or_else(|| {
            Error::io(
                op,
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "a writer not opened by path has no file to rotate",
                ),
            )
        })
    }

    /// Goes on in `file`, new and empty at `path`, after the old file was
    /// synced and renamed away: moves the lock to it and writes its link.
    fn switch_to(&mut self, path: &Path, file: File) -> Result<(), Error> {
        if let Some(lock) = self.lock.as_mut() {
            lock.move_to(path, &file)?;
        }
        let watch = file
            .try_clone()
            .map_err(|err| Error::io_at("open", path, err))?;
        // the old buffer is empty: the sync wrote it out
        drop(core::mem::replace(
            &mut self.out,
            BufWriter::with_capacity(64 * 1024, file),
        ));
        self.watch = Some(watch);
        self.written = 0;
        self.pending = 0;
        self.poisoned = false;
        self.append_link()
    }

    /// Appends the `continues` entry that links this file to the entries
    /// before it, and syncs it.
    fn append_link(&mut self) -> Result<(), Error> {
        let link = Record::new(UnixClock.now_ms(), Event::Continues { prev: self.head });
        self.append(&link)?;
        self.sync()
    }

    /// The file's path.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl<W: Durable> JsonlWriter<W> {
    /// A writer of a new log into `out`, which must be empty: the first entry
    /// written is entry 0.
    pub fn new(out: W, fsync: Fsync) -> JsonlWriter<W> {
        JsonlWriter::resume(out, Seal::new(0, Hash::GENESIS), fsync)
    }

    /// A writer of the next file of a log kept in several, into `out`, which
    /// must be empty: its first entry is the `continues` entry that links it
    /// to `from`, the end of the file before ([`Event::Continues`]), so that
    /// the file verifies alone from there and after that file in order
    /// ([`Verifier::summarize_files`]). [`rotate`](JsonlWriter::rotate) does
    /// this for a file opened by path.
    ///
    /// ```
    /// use bayesretry_audit::{Event, Fsync, JsonlWriter, Record, Verifier};
    ///
    /// let mut first = JsonlWriter::new(Vec::new(), Fsync::Never);
    /// first.append(&Record::new(1, Event::Dropped { count: 0 }))?;
    /// first.sync()?;
    /// let end = first.seal();
    ///
    /// let mut next = JsonlWriter::continuing(Vec::new(), end, Fsync::Never)?;
    /// next.append(&Record::new(2, Event::Dropped { count: 0 }))?;
    /// let bytes = next.into_inner()?;
    /// let summary = Verifier::new().summarize_reader(bytes.as_slice())?;
    /// assert_eq!(summary.start(), end);
    /// assert_eq!(summary.seal().entries(), 3);
    /// # Ok::<(), bayesretry_audit::Error>(())
    /// ```
    pub fn continuing(out: W, from: Seal, fsync: Fsync) -> Result<JsonlWriter<W>, Error> {
        let mut writer = JsonlWriter::resume(out, from, fsync);
        let link = Record::new(UnixClock.now_ms(), Event::Continues { prev: from.head() });
        writer.append(&link)?;
        Ok(writer)
    }

    /// A writer that continues, in `out`, a log whose verified end is `seal`: the
    /// next entry is number `seal.entries()`, chained to `seal.head()`.
    pub fn resume(out: W, seal: Seal, fsync: Fsync) -> JsonlWriter<W> {
        JsonlWriter {
            out: BufWriter::with_capacity(64 * 1024, out),
            lock: None,
            path: None,
            fsync,
            next_seq: seal.entries(),
            head: seal.head(),
            handed: seal,
            unsynced: 0,
            poisoned: false,
            line: Vec::with_capacity(512),
            watch: None,
            written: 0,
            pending: 0,
        }
    }

    /// Appends `record` as the next entry; returns its hash.
    ///
    /// A record whose line would be longer than the verifier's bound (64 KiB) is
    /// refused with [`Error::RecordTooLong`], and the log is left as it was. After
    /// an I/O error the writer is poisoned: every later call fails with
    /// [`Error::Poisoned`], since the file may end in a partial line. An error
    /// while writing out buffered entries leaves them out of the writer's
    /// [`seal`](JsonlWriter::seal), and one while syncing them leaves them in
    /// it, in neither case saying whether they reached the file or the disk:
    /// reopen it to find out.
    pub fn append(&mut self, record: &Record) -> Result<Hash, Error> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        self.line.clear();
        canonical::write(self.next_seq, &record.view(), &mut self.line);
        let hash = Hash::chain(&self.head, &self.line);
        // the canonical form ends with `}`: the hash goes in before it
        self.line.pop();
        self.line.extend_from_slice(b",\"hash\":\"");
        hash.write_hex(&mut self.line);
        self.line.extend_from_slice(b"\"}");
        if self.line.len() > MAX_LINE_LEN {
            return Err(Error::RecordTooLong {
                len: self.line.len(),
                limit: MAX_LINE_LEN,
            });
        }
        self.line.push(b'\n');
        if let Err(err) = self.out.write_all(&self.line) {
            self.poisoned = true;
            return Err(self.io("write", err));
        }
        self.pending = self.pending.saturating_add(self.line.len() as u64);
        self.next_seq = self.next_seq.saturating_add(1);
        self.head = hash;
        self.unsynced = self.unsynced.saturating_add(1);
        let due = match self.fsync {
            Fsync::Never => false,
            Fsync::EveryEntry => true,
            Fsync::Every(n) => self.unsynced >= n.get(),
        };
        if due {
            self.sync()?;
        }
        Ok(hash)
    }

    /// Hands every buffered line to the operating system (no fsync): a crash
    /// of the process no longer loses them, a crash of the machine still may.
    /// The [`seal`](JsonlWriter::seal) then covers them.
    pub fn flush(&mut self) -> Result<(), Error> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        self.out.flush().map_err(|err| {
            self.poisoned = true;
            self.io("write", err)
        })?;
        self.written = self.written.saturating_add(self.pending);
        self.pending = 0;
        self.check_length()?;
        self.handed = Seal::new(self.next_seq, self.head);
        Ok(())
    }

    /// Whether the file still holds every byte written to it: a file
    /// truncated under the writer (logrotate's `copytruncate`) poisons it.
    /// A length that cannot be read is no evidence, and passes.
    fn check_length(&mut self) -> Result<(), Error> {
        let Some(len) = self.watch.as_ref().and_then(|file| file.metadata().ok()) else {
            return Ok(());
        };
        let len = len.len();
        if len < self.written {
            self.poisoned = true;
            return Err(Error::Shrunk {
                path: self.path.clone().unwrap_or_default(),
                written: self.written,
                len,
            });
        }
        Ok(())
    }

    /// Writes every buffered line and makes the file durable (fsync), whatever
    /// the [`Fsync`] policy.
    pub fn sync(&mut self) -> Result<(), Error> {
        self.flush()?;
        if let Err(err) = self.out.get_mut().sync() {
            self.poisoned = true;
            return Err(self.io("sync", err));
        }
        self.unsynced = 0;
        Ok(())
    }

    /// The seal of the entries whose lines have left the writer's buffer:
    /// those written out by the last [`flush`](JsonlWriter::flush) or
    /// [`sync`](JsonlWriter::sync) (which an [`Fsync`] policy makes at every
    /// entry or every `n`), and those the file held when opened. Entries
    /// appended since are left out: a crash of the process loses them.
    ///
    /// **A seal is durable only after a sync.** Lines handed to the operating
    /// system but not synced survive a crash of the process, not a crash of
    /// the machine or a power cut; a seal that covers lines such a crash loses
    /// no longer holds for the file that is left. A seal taken right after
    /// [`sync`](JsonlWriter::sync) covers only lines on disk: a crash can then
    /// lose only entries after it, and the file still verifies against it,
    /// however the log goes on once reopened
    /// ([`open_after_crash`](JsonlWriter::open_after_crash)).
    pub const fn seal(&self) -> Seal {
        self.handed
    }

    /// The fsync policy.
    pub const fn fsync(&self) -> Fsync {
        self.fsync
    }

    /// Flushes and gives back the destination. The lock of a file opened by
    /// path is released: another writer may open it.
    pub fn into_inner(mut self) -> Result<W, Error> {
        self.flush()?;
        let path = self.path.take();
        self.out.into_inner().map_err(|err| Error::Io {
            op: "write",
            path,
            source: err.into_error(),
        })
    }

    /// An I/O error while doing `op` on this writer's log, naming its file
    /// if it has one.
    fn io(&self, op: &'static str, source: io::Error) -> Error {
        Error::Io {
            op,
            path: self.path.clone(),
            source,
        }
    }
}

/// The permission bits of a log file the writer creates, on Unix: read and
/// write for its owner alone. A log names endpoints and error classes, which
/// are not everyone's to read; the umask can only take bits away from this.
#[cfg(unix)]
const PRIVATE_MODE: u32 = 0o600;

/// Options that create a file readable and writable by its owner alone
/// ([`PRIVATE_MODE`], on Unix; elsewhere the platform's default).
fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(PRIVATE_MODE);
    }
    options
}

/// Opens (or creates, private to its owner) the log file at `path` for
/// reading and appending. A file that exists keeps its mode.
fn open_for_append(path: &Path) -> Result<File, Error> {
    // followed through symbolic links: a dangling link's target is created
    let existed = fs::metadata(path).is_ok();
    let file = private_options()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(|err| Error::io_at("open", path, err))?;
    refuse_non_regular(&file, path)?;
    if !existed {
        sync_parent(path)?;
    }
    Ok(file)
}

/// Refuses `file`, opened at `path`, unless it is a regular file: a FIFO
/// or a socket (a named pipe made to ship the log, `/dev/stdout` when
/// standard output is a pipe) opened for reading and writing does not
/// block, but the writer then reads its log back to verify it, and that read
/// would wait for ever, the writer itself holding the pipe's other end; and a
/// device (`/dev/null`, to turn the log off) would have its lock file made
/// beside it, in `/dev`. The opened file is checked, not the path, so that
/// nothing put at the path in between passes.
fn refuse_non_regular(file: &File, path: &Path) -> Result<(), Error> {
    let metadata = file
        .metadata()
        .map_err(|err| Error::io_at("open", path, err))?;
    if metadata.is_file() {
        return Ok(());
    }
    Err(Error::io_at(
        "open",
        path,
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file: a device, a FIFO or a socket is never a log file \
             (reading a FIFO back to verify it would wait for ever, and a lock file \
             would be made beside a device)",
        ),
    ))
}

/// Makes the name of the file at `path`, just created, durable: fsyncs the
/// directory that holds it (after symbolic links). Without it a power cut can
/// take the new file's name, and with it every entry a seal vouched for, even
/// though the entries themselves were synced. Only on Unix, where a directory
/// can be opened and synced; a file whose directory cannot be is not created
/// in vain, so the error is returned.
fn sync_parent(path: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        let file = fs::canonicalize(path).map_err(|err| Error::io_at("resolve", path, err))?;
        if let Some(dir) = file.parent() {
            File::open(dir)
                .and_then(|dir| dir.sync_all())
                .map_err(|err| Error::io_at("fsync the directory of", path, err))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
std::thread_local! {
    /// What another program does at the instant a rotation of this thread
    /// moves its file: set by a test, run once.
    static BEFORE_MOVE: core::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { core::cell::RefCell::new(None) };
}

/// Runs what a test set to happen just before a rotation moves its file;
/// nothing outside tests.
fn before_move() {
    #[cfg(test)]
    if let Some(act) = BEFORE_MOVE.with(|hook| hook.borrow_mut().take()) {
        act();
    }
}

/// Where the last whole line of a file ends, and what follows it.
struct Tail {
    /// Just after the last newline (0 if there is none): where the tail begins.
    start: u64,
    /// Just after the tail's last byte that is not NUL (`start` if the tail is
    /// empty or all NUL).
    text_end: u64,
}

/// The [`Tail`] of the first `len` bytes of `file`. Looks from the end, a block
/// at a time: at most the file's length.
fn find_tail(file: &mut File, len: u64) -> io::Result<Tail> {
    let mut block = vec![0_u8; 64 * 1024];
    let mut end = len;
    let mut text_end = None;
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let read = usize::try_from(end - start)
            .unwrap_or(block.len())
            .min(block.len());
        let Some(chunk) = block.get_mut(..read) else {
            break;
        };
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        let newline = chunk.iter().rposition(|&b| b == b'\n');
        if text_end.is_none() {
            let after = newline.map_or(0, |at| at + 1);
            let last_text = chunk
                .get(after..)
                .and_then(|tail| tail.iter().rposition(|&b| b != 0));
            if let Some(at) = last_text {
                text_end = Some(start + (after + at) as u64 + 1);
            }
        }
        if let Some(at) = newline {
            let start = start + at as u64 + 1;
            return Ok(Tail {
                start,
                text_end: text_end.unwrap_or(start),
            });
        }
        end = start;
    }
    Ok(Tail {
        start: 0,
        text_end: text_end.unwrap_or(0),
    })
}

/// Empties `file`, the next file of a log that ended at `from`, if it holds
/// no whole line but what a crash leaves of its first one, the link to
/// `from` that was due: NUL bytes (the file grew, its data never reached the
/// disk), or the beginning of that entry, maybe followed by NUL bytes — as
/// [`open_after_crash`](JsonlWriter::open_after_crash) tells a crash's tail
/// apart. The link never reached the disk, so the file is as the rotation
/// that created it left it before writing it. Anything else is left for the
/// verifier to refuse. Leaves the file read from its start.
fn cut_unwritten_link(file: &mut File, from: Seal) -> Result<(), Error> {
    let len = file.metadata().map_err(|err| Error::io("read", err))?.len();
    if len > 0 {
        let tail = find_tail(file, len).map_err(|err| Error::io("read", err))?;
        if tail.start == 0 && check_crash_tail(file, &tail, from.entries())?.is_ok() {
            file.set_len(0)
                .map_err(|err| Error::io("cut the unwritten link of", err))?;
            file.sync_all().map_err(|err| Error::io("sync", err))?;
        }
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|err| Error::io("read", err))?;
    Ok(())
}

/// Whether `tail`, after the last whole line of a log of `entries` entries, is
/// what a crash of its writer can leave: at most a line of the beginning of
/// entry `entries`, in canonical form as far as it goes, then only NUL bytes
/// (or NUL bytes alone). The inner error says what it is not.
fn check_crash_tail(
    file: &mut File,
    tail: &Tail,
    entries: u64,
) -> Result<Result<(), String>, Error> {
    let text_len = tail.text_end - tail.start;
    let Some(text_len) = usize::try_from(text_len)
        .ok()
        .filter(|&n| n <= MAX_LINE_LEN)
    else {
        return Ok(Err(format!(
            "{text_len} bytes of text, more than a line holds ({MAX_LINE_LEN})"
        )));
    };
    let mut text = vec![0_u8; text_len];
    file.seek(SeekFrom::Start(tail.start))
        .and_then(|_| file.read_exact(&mut text))
        .map_err(|err| Error::io("read", err))?;
    if text.contains(&0) {
        return Ok(Err(
            "a NUL byte before its last other byte, where a line has none".to_owned(),
        ));
    }
    let mut due = Vec::with_capacity(48);
    canonical::write_start(entries, &mut due);
    let common = text.len().min(due.len());
    if text.get(..common) != due.get(..common) {
        return Ok(Err(format!(
            "it does not begin as entry {entries}, due next, would: `{}`",
            String::from_utf8_lossy(&due)
        )));
    }
    // a line is written front to back, so what a crash leaves of it is its
    // beginning: text that strays from the canonical form anywhere (another
    // spelling, bytes after the line's end) was written by something else
    if !scan::begins_an_entry(&text) {
        return Ok(Err(
            "it strays from the canonical form of an entry, which a writer's line never does"
                .to_owned(),
        ));
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed step must fail the test"
    )]

    use super::*;

    #[test]
    fn a_file_made_at_the_old_name_while_a_rotation_runs_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join("decisions.jsonl");
        let old = dir.path().join("decisions.jsonl.1");
        let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
        writer
            .append(&Record::new(1, Event::Dropped { count: 0 }))
            .unwrap();
        // another program writes `old` after the rotation has begun
        let theirs = old.clone();
        BEFORE_MOVE.with(|hook| {
            *hook.borrow_mut() = Some(Box::new(move || fs::write(theirs, b"kept\n").unwrap()));
        });

        let err = writer.rotate(&old).unwrap_err();
        assert!(err.to_string().contains("rotate"), "{err}");
        assert_eq!(fs::read(&old).unwrap(), b"kept\n");
        // the writer goes on in its file, which holds every entry
        writer
            .append(&Record::new(2, Event::Dropped { count: 0 }))
            .unwrap();
        drop(writer);
        assert_eq!(Verifier::new().verify_file(&live).unwrap().entries(), 2);
    }
}
