//! [`Autosave`]: a background thread that saves a store's snapshot when it
//! has changed, at most once per interval, and once more when it stops.

use alloc::sync::Arc;
use core::panic::AssertUnwindSafe;
use core::time::Duration;
use std::panic::catch_unwind;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use bayesretry_store::Snapshot;

use crate::error::{Error, WithCauses};
use crate::file_store::FileStore;

/// The settings of an [`Autosave`].
///
/// # Default
///
/// - `interval`: 30 seconds between checks
/// - `merge`: on, saves go through [`FileStore::save_merged`]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutosaveConfig {
    interval: Duration,
    merge: bool,
}

impl AutosaveConfig {
    /// The defaults listed above.
    pub const fn new() -> AutosaveConfig {
        AutosaveConfig {
            interval: Duration::from_secs(30),
            merge: true,
        }
    }

    /// How long the thread waits between two checks; above zero.
    #[must_use]
    pub const fn with_interval(self, interval: Duration) -> AutosaveConfig {
        AutosaveConfig { interval, ..self }
    }

    /// Whether saves merge with the file ([`FileStore::save_merged`], the
    /// default: right whenever another process may write the file) or replace
    /// it ([`FileStore::save`]: cheaper, for a file this process alone writes).
    #[must_use]
    pub const fn with_merge(self, merge: bool) -> AutosaveConfig {
        AutosaveConfig { merge, ..self }
    }

    /// The interval between checks.
    pub const fn interval(&self) -> Duration {
        self.interval
    }

    /// Whether saves merge with the file.
    pub const fn merge(&self) -> bool {
        self.merge
    }
}

impl Default for AutosaveConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// What one check of an [`Autosave`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// The snapshot had changed since the last save and was written.
    Saved,
    /// The snapshot's entries were those last saved: nothing was written.
    Unchanged,
}

/// Counts of what an [`Autosave`] did, and its last failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AutosaveStats {
    /// Checks that wrote the file.
    pub saves: u64,
    /// Checks that found nothing new to write.
    pub unchanged: u64,
    /// Checks that failed (the snapshot is written at the next check).
    pub failures: u64,
    /// The message of the last failure, with its causes, if any.
    pub last_error: Option<String>,
}

/// A background thread that keeps a snapshot file up to date.
///
/// Every interval it takes a snapshot from its source (a closure, typically
/// `move || store.snapshot(now_ms())`) and writes it if its entries differ
/// from those it last wrote. Changes are thereby debounced: however many
/// outcomes a store observes, the file is written at most once per interval,
/// and an idle store causes no write at all. A failed save is counted and
/// tried again at the next check.
///
/// [`shutdown`](Autosave::shutdown) stops the thread after one last check and
/// returns its result; dropping the `Autosave` does the same, best effort,
/// ignoring the result. Either way, evidence gathered since the last check is
/// saved when the program winds down cleanly. (A process that is killed loses
/// at most one interval of evidence; the file itself is never torn.)
///
/// [`manual`](Autosave::manual) starts a thread that checks only when
/// [`check_now`](Autosave::check_now) asks: for programs with a scheduler of
/// their own, and for tests, which thereby need no clock and no sleep.
///
/// ```
/// use std::sync::Arc;
/// use bayesretry_fs::{Autosave, AutosaveConfig, Check, FileStore};
/// use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};
///
/// let dir = tempfile::tempdir()?;
/// let file = FileStore::open(dir.path().join("evidence.json"))?;
/// let store = Arc::new(MemoryStore::new());
/// let source = Arc::clone(&store);
/// let autosave = Autosave::manual(file, AutosaveConfig::new(), move || source.snapshot(0))?;
///
/// store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
/// assert_eq!(autosave.check_now()?, Check::Saved);
/// assert_eq!(autosave.check_now()?, Check::Unchanged); // nothing new, nothing written
///
/// store.observe(&Context::new("api", 1, ErrorClass::Timeout), false, 0);
/// autosave.shutdown()?; // one last check saves the failure
/// let saved = FileStore::open(dir.path().join("evidence.json"))?.load()?;
/// assert_eq!(saved.entries()[0].evidence().failures(), 1.0);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Autosave {
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<Mutex<AutosaveStats>>,
}

/// What the thread is asked to do; each request carries where to answer.
#[derive(Debug)]
enum Command {
    Check(Sender<Result<Check, Error>>),
    Stop(Sender<Result<Check, Error>>),
}

impl Autosave {
    /// Starts a thread that checks every [`interval`](AutosaveConfig::interval).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInterval`] for a zero interval;
    /// [`Error::AutosaveStopped`] if the thread cannot be started.
    pub fn spawn<F>(file: FileStore, config: AutosaveConfig, source: F) -> Result<Autosave, Error>
    where
        F: FnMut() -> Snapshot + Send + 'static,
    {
        if config.interval.is_zero() {
            return Err(Error::InvalidInterval(config.interval));
        }
        Autosave::start(file, config, Some(config.interval), source)
    }

    /// Starts a thread that checks only when asked, by
    /// [`check_now`](Autosave::check_now) and at shutdown; the interval is
    /// not used.
    ///
    /// # Errors
    ///
    /// [`Error::AutosaveStopped`] if the thread cannot be started.
    pub fn manual<F>(file: FileStore, config: AutosaveConfig, source: F) -> Result<Autosave, Error>
    where
        F: FnMut() -> Snapshot + Send + 'static,
    {
        Autosave::start(file, config, None, source)
    }

    fn start<F>(
        file: FileStore,
        config: AutosaveConfig,
        interval: Option<Duration>,
        source: F,
    ) -> Result<Autosave, Error>
    where
        F: FnMut() -> Snapshot + Send + 'static,
    {
        let (commands, inbox) = mpsc::channel();
        let stats = Arc::new(Mutex::new(AutosaveStats::default()));
        let worker = Worker {
            file,
            merge: config.merge,
            source,
            last_saved: Snapshot::new(),
            stats: Arc::clone(&stats),
        };
        let thread = thread::Builder::new()
            .name(String::from("bayesretry-autosave"))
            .spawn(move || worker.run(&inbox, interval))
            .map_err(|e| Error::AutosaveStopped(format!("cannot start the thread: {e}")))?;
        Ok(Autosave {
            commands,
            thread: Some(thread),
            stats,
        })
    }

    /// Checks now, on the autosave thread, and waits for the result: the
    /// snapshot is written if it changed since the last save.
    ///
    /// # Errors
    ///
    /// The save's error; [`Error::SourcePanicked`] if the source panicked
    /// (the thread goes on); [`Error::AutosaveStopped`] if the thread is gone.
    pub fn check_now(&self) -> Result<Check, Error> {
        let (reply, answer) = mpsc::channel();
        self.commands
            .send(Command::Check(reply))
            .map_err(|_| stopped())?;
        answer.recv().map_err(|_| stopped())?
    }

    /// What the thread has done so far.
    pub fn stats(&self) -> AutosaveStats {
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops the thread after one last check, and returns that check's result.
    ///
    /// # Errors
    ///
    /// As [`check_now`](Autosave::check_now).
    pub fn shutdown(mut self) -> Result<Check, Error> {
        self.stop()
    }

    fn stop(&mut self) -> Result<Check, Error> {
        let Some(thread) = self.thread.take() else {
            return Err(stopped());
        };
        let (reply, answer) = mpsc::channel();
        let sent = self.commands.send(Command::Stop(reply));
        let result = match sent {
            Ok(()) => answer.recv().map_err(|_| stopped()).and_then(|r| r),
            Err(_) => Err(stopped()),
        };
        let joined = thread.join();
        if joined.is_err() && result.is_ok() {
            return Err(stopped());
        }
        result
    }
}

impl Drop for Autosave {
    /// Saves one last time, best effort: the result is dropped.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _best_effort = self.stop();
        }
    }
}

fn stopped() -> Error {
    Error::AutosaveStopped(String::from("the thread is no longer running"))
}

/// The thread's state.
struct Worker<F> {
    file: FileStore,
    merge: bool,
    source: F,
    /// The source's snapshot as last written (empty before the first save, so
    /// an empty store writes nothing).
    last_saved: Snapshot,
    stats: Arc<Mutex<AutosaveStats>>,
}

impl<F: FnMut() -> Snapshot> Worker<F> {
    /// Serves commands until told to stop or until the `Autosave` is gone;
    /// with an interval, a wait that times out is a check.
    fn run(mut self, inbox: &Receiver<Command>, interval: Option<Duration>) {
        loop {
            let command = match interval {
                Some(interval) => match inbox.recv_timeout(interval) {
                    Ok(command) => Some(command),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match inbox.recv() {
                    Ok(command) => Some(command),
                    Err(_) => return,
                },
            };
            match command {
                None => {
                    let _counted_in_stats = self.check();
                }
                Some(Command::Check(reply)) => {
                    let _gone_if_the_caller_stopped_waiting = reply.send(self.check());
                }
                Some(Command::Stop(reply)) => {
                    let _gone_if_the_caller_stopped_waiting = reply.send(self.check());
                    return;
                }
            }
        }
    }

    /// Takes a snapshot and writes it if it changed; counts the outcome.
    fn check(&mut self) -> Result<Check, Error> {
        let result = self.save_if_changed();
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        match &result {
            Ok(Check::Saved) => stats.saves += 1,
            Ok(Check::Unchanged) => stats.unchanged += 1,
            Err(error) => {
                stats.failures += 1;
                stats.last_error = Some(WithCauses(error).to_string());
            }
        }
        result
    }

    fn save_if_changed(&mut self) -> Result<Check, Error> {
        let source = &mut self.source;
        let snapshot = catch_unwind(AssertUnwindSafe(source)).map_err(|_| Error::SourcePanicked)?;
        if snapshot.entries() == self.last_saved.entries() {
            return Ok(Check::Unchanged);
        }
        if self.merge {
            self.file.save_merged(&snapshot)?;
        } else {
            self.file.save(&snapshot)?;
        }
        self.last_saved = snapshot;
        Ok(Check::Saved)
    }
}
