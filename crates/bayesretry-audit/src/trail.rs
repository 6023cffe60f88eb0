//! [`AuditTrail`]: a background writer fed by an [`AuditObserver`], so that a
//! policy's decisions are logged without hashing or I/O on the call's path.

use alloc::sync::Arc;
use core::any::Any;
use core::fmt;
use core::num::NonZeroUsize;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::thread::{self, JoinHandle, Thread};
use std::time::{SystemTime, UNIX_EPOCH};

use bayesretry_decision::Decision;
use bayesretry_policy::{Clock, Observer};
use bayesretry_store::{Context, ErrorClass};

use crate::error::{Error, with_causes};
use crate::jsonl::{Durable, JsonlWriter};
use crate::log::AuditLog;
use crate::record::{Event, Record, class_name, reason_name};
use crate::seal::Seal;

/// Where an [`AuditTrail`] writes: an [`AuditLog`] in memory or a
/// [`JsonlWriter`].
pub trait Sink: Send + 'static {
    /// Appends `record` as the next entry.
    ///
    /// [`Error::RecordTooLong`] means the record was refused and the sink left
    /// as it was: the trail counts the record as dropped and records the loss in
    /// the log. Any other error means the sink may be damaged (a file may end in
    /// a partial line): the trail reports it until it finishes.
    fn append(&mut self, record: &Record) -> Result<(), Error>;

    /// Hands what was appended to its destination (for a file: written, and
    /// synced as its [`Fsync`](crate::Fsync) policy says).
    fn flush(&mut self) -> Result<(), Error>;

    /// Hands what was appended to its destination and makes it durable (for
    /// a file: written and synced, whatever its [`Fsync`](crate::Fsync)
    /// policy), so that a crash of the machine after it loses none of it.
    /// [`AuditTrail::sync`] calls it before taking the seal.
    ///
    /// By default, [`flush`](Sink::flush): for a sink with nothing durable
    /// to make, such as an [`AuditLog`] in memory.
    fn sync(&mut self) -> Result<(), Error> {
        self.flush()
    }

    /// The seal of what was appended so far and handed to the destination
    /// (see [`JsonlWriter::seal`]).
    fn seal(&self) -> Seal;

    /// Rotates the log to `to` and goes on in a new file linked to it (see
    /// [`JsonlWriter::rotate`]); returns the seal of the rotated file.
    /// [`AuditTrail::rotate`] calls it.
    ///
    /// By default an error of kind [`Unsupported`](std::io::ErrorKind::Unsupported):
    /// only a [`JsonlWriter`] of a file opened by path rotates.
    fn rotate(&mut self, to: &Path) -> Result<Seal, Error> {
        let _ = to;
        Err(Error::io(
            "rotate",
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this sink has no file to rotate",
            ),
        ))
    }

    /// Goes on in a new file at the sink's path, which another program
    /// renamed away (see [`JsonlWriter::reopen`]); returns the seal of the
    /// renamed file. [`AuditTrail::reopen`] calls it.
    ///
    /// By default an error of kind [`Unsupported`](std::io::ErrorKind::Unsupported).
    fn reopen(&mut self) -> Result<Seal, Error> {
        Err(Error::io(
            "reopen",
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this sink has no file to reopen",
            ),
        ))
    }
}

impl Sink for AuditLog {
    fn append(&mut self, record: &Record) -> Result<(), Error> {
        AuditLog::append(self, record.clone());
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn seal(&self) -> Seal {
        AuditLog::seal(self)
    }
}

impl<W: Durable + Send + 'static> Sink for JsonlWriter<W> {
    fn append(&mut self, record: &Record) -> Result<(), Error> {
        JsonlWriter::append(self, record).map(drop)
    }

    fn flush(&mut self) -> Result<(), Error> {
        JsonlWriter::flush(self)
    }

    fn sync(&mut self) -> Result<(), Error> {
        JsonlWriter::sync(self)
    }

    fn seal(&self) -> Seal {
        JsonlWriter::seal(self)
    }

    /// [`JsonlWriter::rotate`] for a writer of a [`File`]; the default error
    /// for any other destination, which has no file to rename.
    fn rotate(&mut self, to: &Path) -> Result<Seal, Error> {
        let any: &mut dyn Any = self;
        match any.downcast_mut::<JsonlWriter<File>>() {
            Some(writer) => writer.rotate(to),
            None => Err(Error::io(
                "rotate",
                std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    "a writer of something other than a file has no file to rotate",
                ),
            )),
        }
    }

    /// [`JsonlWriter::reopen`] for a writer of a [`File`]; the default error
    /// for any other destination.
    fn reopen(&mut self) -> Result<Seal, Error> {
        let any: &mut dyn Any = self;
        match any.downcast_mut::<JsonlWriter<File>>() {
            Some(writer) => writer.reopen(),
            None => Err(Error::io(
                "reopen",
                std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    "a writer of something other than a file has no file to reopen",
                ),
            )),
        }
    }
}

/// Wall-clock time: milliseconds since the Unix epoch, from [`SystemTime`].
///
/// The time an audit entry carries is meant for people and other systems to
/// line up with their own records, so it is the wall clock read at every
/// entry, unlike the policy's [`SystemClock`](bayesretry_policy::SystemClock),
/// which reads it once and then counts monotonically. A clock set before 1970
/// reads 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnixClock;

impl Clock for UnixClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            })
    }
}

/// Endpoint names up to this many bytes travel inside the message.
const INLINE_NAME: usize = 56;

/// An endpoint name on its way to the writer: copied into the message when it
/// is short (the usual case), so that the call's thread does not allocate and
/// the writer's thread does not free what another thread allocated.
enum Name {
    Inline { len: u8, bytes: [u8; INLINE_NAME] },
    Heap(Box<str>),
}

impl Name {
    fn new(name: &str) -> Name {
        let mut bytes = [0u8; INLINE_NAME];
        match (bytes.get_mut(..name.len()), u8::try_from(name.len())) {
            (Some(prefix), Ok(len)) => {
                prefix.copy_from_slice(name.as_bytes());
                Name::Inline { len, bytes }
            }
            _ => Name::Heap(name.into()),
        }
    }

    fn into_string(self) -> String {
        match self {
            Name::Inline { len, bytes } => {
                // a whole `str` was copied, so the bytes are UTF-8
                String::from_utf8_lossy(bytes.get(..usize::from(len)).unwrap_or_default())
                    .into_owned()
            }
            Name::Heap(name) => name.into(),
        }
    }
}

/// What travels from the observer to the writer: a record in its cheapest form
/// (the class and the decision are `Copy`; the endpoint is copied, without
/// allocating when short).
enum Message {
    Decision {
        time_ms: u64,
        endpoint: Name,
        attempt: u32,
        class: ErrorClass,
        decision: Decision,
    },
    Outcome {
        time_ms: u64,
        endpoint: Name,
        attempt: u32,
        class: ErrorClass,
        success: bool,
    },
    /// Sync the sink, and answer with the seal, or an error (see
    /// [`AuditTrail::sync`]).
    Sync(SyncSender<Result<Seal, Error>>),
    /// With a path, rotate the sink to it; without, reopen the sink after
    /// another program renamed its file. Answer with the seal of the old
    /// file, or an error (see [`AuditTrail::rotate`], [`AuditTrail::reopen`]).
    Rotate(Option<PathBuf>, SyncSender<Result<Seal, Error>>),
    /// Flush and stop.
    Stop,
}

/// What the observers and the handle share.
///
/// Each record an observer offers ends up counted once, in `dropped`,
/// `written` or `failed`; `written` and `failed` also count the `dropped`
/// entries the writer appends.
///
/// That holds while the trail finishes too, through `offers` and `finished`:
/// the writer closes the trail by setting [`CLOSED`] in `offers`, which tells
/// it how many offers began before, and waits until `finished` says they have
/// all ended, each with its message in the queue or counted as dropped; then
/// it drains the queue. An offer that begins after finds [`CLOSED`] and counts
/// its record as dropped without sending it (see [`AuditObserver::offer`] and
/// [`Writer::close`]).
#[derive(Debug, Default)]
struct Counters {
    /// Records lost: the queue was full, the writer had closed, or the sink
    /// refused the record and was left as it was. Each is recorded in a
    /// `dropped` entry, but for those offered after the writer's last one.
    dropped: AtomicU64,
    /// Records the sink appended.
    written: AtomicU64,
    /// Records the sink failed to append with an error that may have damaged
    /// it (an I/O error, or any append after one).
    failed: AtomicU64,
    /// Offers begun, and [`CLOSED`] once the writer has closed.
    offers: AtomicU64,
    /// Offers begun before the writer closed that have ended.
    finished: AtomicU64,
    /// The writer's thread, which an offer ending after it closed wakes.
    writer: OnceLock<Thread>,
}

/// The bit of [`Counters::offers`] the writer sets when it closes: beyond any
/// count of offers (2⁶³ of them would take centuries).
const CLOSED: u64 = 1 << 63;

/// The [`Observer`] of an [`AuditTrail`]: hand it to
/// `RetryPolicy::builder().with_observer(..)`.
///
/// Each decision and outcome becomes a small message (the endpoint copied, the
/// rest plain values) offered to a bounded queue with `try_send`: it never
/// blocks, never hashes and never touches a file. When the queue is full the
/// record is dropped and counted ([`AuditTrail::dropped`]), and the writer
/// records the loss in the log itself as a [`Event::Dropped`] entry: a call is
/// never slowed down to keep its audit, and the log never hides a record the
/// trail dropped.
#[derive(Clone)]
pub struct AuditObserver {
    sender: SyncSender<Message>,
    counters: Arc<Counters>,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for AuditObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditObserver")
            .field("dropped", &self.counters.dropped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl AuditObserver {
    /// Records dropped so far by this observer and every other of its trail:
    /// the same count as [`AuditTrail::dropped`], readable from a clone kept
    /// after the trail is gone.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// Sends `message` to the writer, or counts it as dropped.
    ///
    /// The writer must not stop between the moment an offer decides to send
    /// and the moment the message is in the queue: a message queued after the
    /// writer's last look at the queue would be neither written nor counted.
    /// So an offer first adds itself to `offers` and reads [`CLOSED`] from it
    /// in the same step. Found set, the writer is closing or gone: the record
    /// is dropped. Otherwise the writer, when it closes, counts this offer
    /// among those to wait for, and this offer says it has ended by adding to
    /// `finished` — then wakes the writer if it has closed in the meantime.
    /// The operations on `offers` and `finished`, here and in the writer, are
    /// sequentially consistent: an offer that does not see [`CLOSED`] when it
    /// ends added to `finished` before the writer set it, so the writer sees
    /// that addition when it first looks; one that does see it wakes the
    /// writer.
    ///
    /// While the trail runs this costs two atomic additions and a load beside
    /// `try_send`, and no system call; the wake-up (an `unpark`) happens only
    /// while the trail finishes.
    fn offer(&self, message: Message) {
        let counters = &*self.counters;
        if counters.offers.fetch_add(1, Ordering::SeqCst) & CLOSED != 0 {
            counters.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match self.sender.try_send(message) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        counters.finished.fetch_add(1, Ordering::SeqCst);
        if counters.offers.load(Ordering::SeqCst) & CLOSED != 0 {
            if let Some(writer) = counters.writer.get() {
                writer.unpark();
            }
        }
    }
}

impl Observer for AuditObserver {
    fn on_decision(&self, decision: &Decision, ctx: &Context<'_>) {
        self.offer(Message::Decision {
            time_ms: self.clock.now_ms(),
            endpoint: Name::new(ctx.endpoint()),
            attempt: ctx.attempt(),
            class: ctx.error_class(),
            decision: *decision,
        });
    }

    fn on_observe(&self, ctx: &Context<'_>, success: bool) {
        self.offer(Message::Outcome {
            time_ms: self.clock.now_ms(),
            endpoint: Name::new(ctx.endpoint()),
            attempt: ctx.attempt(),
            class: ctx.error_class(),
            success,
        });
    }
}

/// A hash-chained log of a policy's decisions and outcomes, written by a
/// background thread.
///
/// [`observer`](AuditTrail::observer) gives the policy's end; the trail is the
/// writer's end: it owns the thread and the [`Sink`] (an in-memory
/// [`AuditLog`] or a [`JsonlWriter`]), counts what was written, dropped or
/// failed, and on [`finish`](AuditTrail::finish) stops the thread and gives the
/// sink back. Dropping the trail stops the thread too (flushing the sink) but
/// loses the sink and any error.
///
/// # Losses and errors
///
/// A record is lost without damage to the log when the queue is full, when the
/// writer has closed (the trail is finishing or gone), or when the sink refuses
/// it and is left as it was (a [`JsonlWriter`] refuses a record whose line
/// would be longer than a log line may be: [`Error::RecordTooLong`]). Each such loss is counted
/// ([`dropped`](AuditTrail::dropped)) and recorded in the log as a
/// [`Event::Dropped`] entry, so that a log without one lost nothing while the
/// trail ran; the records after it are written as usual. A crash is another
/// matter: the records still queued, and the entries the sink had not made
/// durable (see [`Fsync`](crate::Fsync)), are lost without a trace, so the
/// counts of the `dropped` entries are a lower bound of what a log lost. A refusal is also reported once, by
/// the next [`sync`](AuditTrail::sync).
///
/// Any other error of the sink (an I/O error) may have damaged it — a file may
/// end in a partial line — and the log can no longer vouch for itself: the
/// records it hits are counted as [`failed`](AuditTrail::failed), every later
/// `sync` returns an error, and `finish` returns the first such error instead
/// of the sink.
///
/// The thread polls its queue (every 1 to 10 ms when it is empty) instead of
/// sleeping until woken, so that offering a record never costs the call a
/// system call to wake it; a record reaches the sink within about 10 ms, and
/// the sink is flushed (for a file: written to the operating system) each time
/// the queue runs dry.
///
/// # Default
///
/// A queue of [`DEFAULT_CAPACITY`] records; times from [`UnixClock`].
///
/// ```
/// use bayesretry_audit::{AuditLog, AuditTrail, Event};
/// use bayesretry_policy::{HttpStatus, RetryPolicy, VirtualSleeper};
///
/// let trail = AuditTrail::spawn(AuditLog::new())?;
/// let policy = RetryPolicy::builder()
///     .with_observer(trail.observer()) // the one line of setup
///     .with_virtual_time(VirtualSleeper::default())
///     .build()?;
///
/// // the first attempt fails with a 503, the second succeeds
/// let answer = policy.run_blocking("provider", |attempt| {
///     if attempt == 1 { Err(HttpStatus(503)) } else { Ok(attempt) }
/// });
/// assert_eq!(answer.ok(), Some(2));
///
/// let log = trail.finish()?;
/// assert_eq!(log.verify(), Ok(()));
/// assert!(log.entries().iter().any(|e| matches!(e.record().event(), Event::Decision { retry: true, .. })));
/// assert!(log.entries().iter().any(|e| matches!(e.record().event(), Event::Outcome { success: true, .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AuditTrail<S: Sink> {
    sender: SyncSender<Message>,
    counters: Arc<Counters>,
    clock: Arc<dyn Clock>,
    thread: Option<JoinHandle<Result<S, Error>>>,
}

impl<S: Sink> fmt::Debug for AuditTrail<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditTrail")
            .field("written", &self.written())
            .field("dropped", &self.dropped())
            .field("failed", &self.failed())
            .finish_non_exhaustive()
    }
}

/// The queue length of an [`AuditTrail`] unless set: records that may wait for
/// the writer before the next is dropped.
pub const DEFAULT_CAPACITY: NonZeroUsize = match NonZeroUsize::new(16 * 1024) {
    Some(n) => n,
    None => NonZeroUsize::MIN,
};

impl<S: Sink> AuditTrail<S> {
    /// Starts the writer thread over `sink`, with the default queue length and
    /// the wall clock.
    pub fn spawn(sink: S) -> Result<AuditTrail<S>, Error> {
        AuditTrail::spawn_with(sink, DEFAULT_CAPACITY, UnixClock)
    }

    /// Starts the writer thread over `sink`, with a queue of `capacity` records
    /// and `clock` for the time of each record.
    pub fn spawn_with(
        sink: S,
        capacity: NonZeroUsize,
        clock: impl Clock,
    ) -> Result<AuditTrail<S>, Error> {
        let (sender, receiver) = mpsc::sync_channel(capacity.get());
        let counters = Arc::new(Counters::default());
        let clock: Arc<dyn Clock> = Arc::new(clock);
        let writer = Writer {
            sink,
            counters: Arc::clone(&counters),
            clock: Arc::clone(&clock),
            logged_drops: 0,
            damage: None,
            refusal: None,
        };
        let thread = thread::Builder::new()
            .name("bayesretry-audit".into())
            .spawn(move || writer.run(&receiver))?;
        Ok(AuditTrail {
            sender,
            counters,
            clock,
            thread: Some(thread),
        })
    }

    /// The observer to give the policy. Clones feed the same writer, so one
    /// trail can audit several policies.
    pub fn observer(&self) -> AuditObserver {
        AuditObserver {
            sender: self.sender.clone(),
            counters: Arc::clone(&self.counters),
            clock: Arc::clone(&self.clock),
        }
    }

    /// Records dropped so far: offered while the queue was full or after the
    /// writer closed, or refused by the sink with the log left intact (a line
    /// too long). Each is also counted in a [`Event::Dropped`] entry of the
    /// log, once the writer gets to it: all but those offered after the
    /// writer's last entry, when the trail has finished.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// Records the sink has appended so far (the `dropped` entries included).
    pub fn written(&self) -> u64 {
        self.counters.written.load(Ordering::Relaxed)
    }

    /// Records the sink failed to append so far with an error that may have
    /// damaged it (an I/O error, and every record after one; the `dropped`
    /// entries included). They are in no `dropped` entry:
    /// [`sync`](AuditTrail::sync) and [`finish`](AuditTrail::finish) report the
    /// damage instead.
    pub fn failed(&self) -> u64 {
        self.counters.failed.load(Ordering::Relaxed)
    }

    /// Waits until the writer has appended every record queued before this
    /// call (and a `dropped` entry for the losses not yet in the log), makes
    /// the sink durable ([`Sink::sync`]: a [`JsonlWriter`] writes its lines
    /// out and syncs the file, whatever its [`Fsync`](crate::Fsync) policy),
    /// and returns its seal. Blocks, for a disk round trip among other
    /// things: not for the call path.
    ///
    /// The seal covers only what is durable: a crash of the machine or a
    /// power cut after it can lose only later entries, and the file still
    /// verifies against it, however the log goes on once reopened
    /// ([`JsonlWriter::open_after_crash`]). Keep this seal rather than one
    /// taken between syncs, which is durable only once a sync has followed.
    ///
    /// An error:
    ///
    /// - [`Error::Writer`], with the text of the first error that may have
    ///   damaged the sink (the error itself comes with
    ///   [`finish`](AuditTrail::finish)): at every call from that error on;
    /// - otherwise, the first [`Error::RecordTooLong`] since the previous
    ///   `sync`, once: the refused records are counted as dropped and the log
    ///   records the loss, so the next `sync` returns the seal again if nothing
    ///   else was refused;
    /// - [`Error::WriterGone`] if the writer has stopped.
    pub fn sync(&self) -> Result<Seal, Error> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.sender
            .send(Message::Sync(reply))
            .map_err(|_| Error::WriterGone)?;
        answer.recv().map_err(|_| Error::WriterGone)?
    }

    /// Rotates the log file: waits until the writer has appended every
    /// record queued before this call (and a `dropped` entry for the losses
    /// not yet in the log), then has the sink rotate ([`Sink::rotate`]: a
    /// [`JsonlWriter`] syncs, renames its file to `to` and goes on in a new
    /// file at its path, linked to the renamed one), and returns the seal of
    /// the renamed file. Records offered meanwhile wait in the queue and go
    /// to the new file: the policy is not held up.
    ///
    /// An error that leaves the sink as it was (`to` exists, the file could
    /// not be given its new name, a sink that cannot rotate) is returned and
    /// the trail goes on in the same file. One after the old name was
    /// removed may have damaged the sink: it
    /// is reported as [`sync`](AuditTrail::sync) reports damage, from then
    /// on.
    ///
    /// ```
    /// use bayesretry_audit::{AuditTrail, Fsync, JsonlWriter, Verifier};
    /// use bayesretry_policy::{HttpStatus, RetryPolicy, VirtualSleeper};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let live = dir.path().join("decisions.jsonl");
    /// let trail = AuditTrail::spawn(JsonlWriter::open(&live, Fsync::default())?)?;
    /// let policy = RetryPolicy::builder()
    ///     .with_observer(trail.observer())
    ///     .with_virtual_time(VirtualSleeper::default())
    ///     .build()?;
    /// let mut rotated = Vec::new();
    /// for day in 1..=3 {
    ///     let _ = policy.run_blocking("provider", |attempt| {
    ///         if attempt == 1 { Err(HttpStatus(503)) } else { Ok(()) }
    ///     });
    ///     let old = dir.path().join(format!("decisions.jsonl.{day}"));
    ///     trail.rotate(&old)?;
    ///     rotated.push(old);
    /// }
    /// let seal = trail.sync()?;
    /// drop(trail.finish()?);
    ///
    /// rotated.push(live);
    /// assert_eq!(Verifier::new().with_seal(seal).verify_files(&rotated)?, seal);
    /// rotated.remove(1); // a file lost from the middle is caught
    /// assert!(Verifier::new().verify_files(&rotated).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rotate(&self, to: impl AsRef<Path>) -> Result<Seal, Error> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.sender
            .send(Message::Rotate(Some(to.as_ref().to_owned()), reply))
            .map_err(|_| Error::WriterGone)?;
        answer.recv().map_err(|_| Error::WriterGone)?
    }

    /// Goes on in a new file after another program renamed the log file
    /// away — logrotate without `copytruncate`; call this from what its
    /// `postrotate` step triggers (a signal, a control request). As
    /// [`rotate`](AuditTrail::rotate), but the renaming is done already:
    /// the records queued before this call go to the renamed file, those
    /// after to a new file at the sink's path linked to it ([`Sink::reopen`],
    /// [`JsonlWriter::reopen`]); returns the seal of the renamed file.
    pub fn reopen(&self) -> Result<Seal, Error> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.sender
            .send(Message::Rotate(None, reply))
            .map_err(|_| Error::WriterGone)?;
        answer.recv().map_err(|_| Error::WriterGone)?
    }

    /// Appends what is queued, makes it durable ([`Sink::sync`]: for a file,
    /// written and synced whatever its [`Fsync`](crate::Fsync) policy), stops
    /// the writer and gives the sink back — or the first error that may have
    /// damaged the sink. Refused records,
    /// recorded in the log as lost, do not make it fail (they are counted in
    /// [`dropped`](AuditTrail::dropped)).
    ///
    /// Observers may go on offering records meanwhile, from other threads:
    /// each is written or counted as dropped, never lost unseen. The writer
    /// closes the trail once it reaches the stop, waits for the offers already
    /// under way, appends what they queued, and then writes its last `dropped`
    /// entry, which counts every drop until then. A record offered after the
    /// writer closed is dropped and counted in
    /// [`AuditObserver::dropped`], and in the log only if the writer has not
    /// written its last entry yet. Dropping the trail does the same.
    pub fn finish(mut self) -> Result<S, Error> {
        self.stop().unwrap_or(Err(Error::WriterGone))
    }

    fn stop(&mut self) -> Option<Result<S, Error>> {
        let thread = self.thread.take()?;
        // a blocking send: the writer drains the queue, so there is room soon
        let _ = self.sender.send(Message::Stop);
        thread.join().ok()
    }
}

impl<S: Sink> Drop for AuditTrail<S> {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Whether the writer goes on after a message.
enum Flow {
    Go,
    Stop,
}

/// The writer's first wait on an empty queue.
const MIN_IDLE: Duration = Duration::from_millis(1);
/// The writer's longest wait on an empty queue: with the default capacity, a
/// burst of up to about 1.6 million records a second after a quiet spell is
/// absorbed without a drop.
const MAX_IDLE: Duration = Duration::from_millis(10);

/// The writer thread's state.
///
/// The writer polls its queue rather than blocking on it: a thread blocked on
/// a channel must be woken by the sender, a system call on the call's path for
/// every record; a polling writer leaves the sender a plain enqueue. It waits
/// 1 ms when the queue runs dry, doubling up to 10 ms while it stays dry, so
/// that an idle trail costs about a hundred wake-ups a second and a record
/// reaches the sink within 10 ms.
struct Writer<S> {
    sink: S,
    counters: Arc<Counters>,
    clock: Arc<dyn Clock>,
    /// Drops already recorded in the log.
    logged_drops: u64,
    /// The first error that may have damaged the sink: reported by every sync
    /// and by the end of the run.
    damage: Option<Error>,
    /// The first refusal since the last sync: reported by the next sync.
    refusal: Option<Error>,
}

impl<S: Sink> Writer<S> {
    /// Appends until told to stop, or until every sender is gone; then closes
    /// the trail, appends what is left in the queue, records the drops not yet
    /// in the log and flushes.
    fn run(mut self, receiver: &Receiver<Message>) -> Result<S, Error> {
        let _ = self.counters.writer.set(thread::current());
        let mut idle = MIN_IDLE;
        let mut drained = true;
        // each turn takes one message or waits; the loop ends when the channel
        // closes or a Stop arrives
        loop {
            let message = match receiver.try_recv() {
                Ok(message) => {
                    idle = MIN_IDLE;
                    drained = false;
                    message
                }
                Err(TryRecvError::Empty) => {
                    if !drained {
                        // the queue ran dry: hand what was written to the
                        // destination before waiting
                        self.log_drops();
                        let flushed = self.sink.flush();
                        self.note(flushed);
                        drained = true;
                    }
                    thread::sleep(idle);
                    idle = (idle * 2).min(MAX_IDLE);
                    continue;
                }
                Err(TryRecvError::Disconnected) => break,
            };
            if let Flow::Stop = self.take(message) {
                break;
            }
        }
        self.close();
        // No message enters the queue from here on (the trail, the only other
        // sender, is stopping), so this ends.
        while let Ok(message) = receiver.try_recv() {
            let _ = self.take(message);
        }
        self.log_drops();
        // Durable, whatever the fsync policy: the trail ends with its process
        // more often than not, and a machine that fails minutes after a clean
        // shutdown should not take the last entries with it. One fsync per
        // trail is nothing to a policy that saves them per entry.
        let synced = self.sink.sync();
        self.note(synced);
        match self.damage {
            None => Ok(self.sink),
            Some(err) => Err(err),
        }
    }

    /// Closes the trail: from now on an offer counts its record as dropped
    /// instead of sending it. Returns once every offer begun before has ended,
    /// its message in the queue or counted as dropped.
    ///
    /// Those offers are at most a few steps from their end, none of which
    /// blocks (`try_send` does not), and each wakes this thread when it ends;
    /// so the thread parks until the last has, rather than spinning. A wake-up
    /// given before it parks is kept, and one with nothing to wait for any more
    /// only costs a look at the count.
    fn close(&self) {
        let counters = &*self.counters;
        let opened = counters.offers.fetch_or(CLOSED, Ordering::SeqCst) & !CLOSED;
        while counters.finished.load(Ordering::SeqCst) < opened {
            thread::park();
        }
    }

    /// Handles one message: appends its record, or answers a sync. Says
    /// whether the message asks the writer to stop.
    fn take(&mut self, message: Message) -> Flow {
        let record = match message {
            Message::Decision {
                time_ms,
                endpoint,
                attempt,
                class,
                decision,
            } => Record::new(
                time_ms,
                Event::Decision {
                    endpoint: endpoint.into_string(),
                    attempt,
                    error_class: class_name(class),
                    retry: decision.retry(),
                    probability: decision.probability(),
                    expected_value: decision.expected_value(),
                    reason: reason_name(decision.reason()).to_owned(),
                },
            ),
            Message::Outcome {
                time_ms,
                endpoint,
                attempt,
                class,
                success,
            } => Record::new(
                time_ms,
                Event::Outcome {
                    endpoint: endpoint.into_string(),
                    attempt,
                    error_class: class_name(class),
                    success,
                },
            ),
            Message::Sync(reply) => {
                self.log_drops();
                let synced = self.sink.sync();
                self.note(synced);
                let refusal = self.refusal.take();
                let answer = match (&self.damage, refusal) {
                    (Some(err), _) => Err(Error::Writer(with_causes(err))),
                    (None, Some(err)) => Err(err),
                    (None, None) => Ok(self.sink.seal()),
                };
                let _ = reply.send(answer);
                return Flow::Go;
            }
            Message::Rotate(to, reply) => {
                self.log_drops();
                let answer = match &self.damage {
                    Some(err) => Err(Error::Writer(with_causes(err))),
                    None => {
                        let rotated = match &to {
                            Some(to) => self.sink.rotate(to),
                            None => self.sink.reopen(),
                        };
                        if rotated.is_err() {
                            // a sink the failure damaged refuses a flush
                            let flushed = self.sink.flush();
                            self.note(flushed);
                        }
                        rotated
                    }
                };
                let _ = reply.send(answer);
                return Flow::Go;
            }
            Message::Stop => return Flow::Stop,
        };
        self.log_drops();
        match self.sink.append(&record) {
            Ok(()) => {
                self.counters.written.fetch_add(1, Ordering::Relaxed);
            }
            Err(err @ Error::RecordTooLong { .. }) => {
                // nothing was written: the next `dropped` entry records
                // the loss
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                self.refusal.get_or_insert(err);
            }
            Err(err) => {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                self.note(Err(err));
            }
        }
        Flow::Go
    }

    /// Appends a `dropped` entry for the drops not yet in the log.
    ///
    /// A `dropped` entry the sink fails to append, even by refusing it, counts
    /// as damage: the log would then hide a loss.
    fn log_drops(&mut self) {
        let dropped = self.counters.dropped.load(Ordering::Relaxed);
        if dropped > self.logged_drops {
            let record = Record::new(
                self.clock.now_ms(),
                Event::Dropped {
                    count: dropped - self.logged_drops,
                },
            );
            self.logged_drops = dropped;
            let appended = self.sink.append(&record);
            let counter = if appended.is_ok() {
                &self.counters.written
            } else {
                &self.counters.failed
            };
            counter.fetch_add(1, Ordering::Relaxed);
            self.note(appended);
        }
    }

    /// Keeps the first error that may have damaged the sink.
    fn note(&mut self, result: Result<(), Error>) {
        if let Err(err) = result {
            self.damage.get_or_insert(err);
        }
    }
}
