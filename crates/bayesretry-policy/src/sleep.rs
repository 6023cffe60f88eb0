//! [`Sleeper`] and [`BlockingSleeper`]: how the run loops wait between attempts,
//! with the real sleepers and the test [`VirtualSleeper`].

use alloc::sync::Arc;
use core::any::TypeId;
use core::future::{Future, Ready, ready};
use core::pin::Pin;
use core::time::Duration;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::cancel::CancelToken;
use crate::clock::ManualClock;

/// A boxed sleep, as the policy stores it.
pub(crate) type BoxSleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How [`RetryPolicy::run`](crate::RetryPolicy::run) waits before a retry.
///
/// Any `Fn(Duration) -> impl Future<Output = ()>` is a sleeper, so a test can pass
/// `|_| std::future::ready(())` to skip every wait. The default sleeps on tokio's
/// timer when the call is polled inside a tokio runtime (with the `tokio`
/// feature), and on a helper thread otherwise — under another executor, or
/// without the feature — so a retry never needs a particular runtime.
pub trait Sleeper: Send + Sync + 'static {
    /// The future that completes after the delay.
    type Sleep: Future<Output = ()> + Send + 'static;

    /// Waits for `delay`.
    fn sleep(&self, delay: Duration) -> Self::Sleep;
}

impl<F, Fut> Sleeper for F
where
    F: Fn(Duration) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    type Sleep = Fut;

    fn sleep(&self, delay: Duration) -> Fut {
        self(delay)
    }
}

/// How [`RetryPolicy::run_blocking`](crate::RetryPolicy::run_blocking) waits
/// before a retry. The default is [`ThreadSleeper`].
///
/// Any `Fn(Duration)` is a blocking sleeper, as any `Fn(Duration) -> impl
/// Future` is a [`Sleeper`], so a test can pass `|_| ()` to skip every wait.
/// A closure cannot be woken by a cancellation: a call with a
/// [`CancelToken`] sees it when the closure returns (see
/// [`sleep_blocking_cancellable`](BlockingSleeper::sleep_blocking_cancellable)).
///
/// ```
/// use bayesretry_policy::{HttpStatus, RetryPolicy};
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
///
/// let slept = Arc::new(Mutex::new(Vec::new()));
/// let record = Arc::clone(&slept);
/// let policy = RetryPolicy::builder()
///     .classic()
///     .with_max_attempts(3)
///     .with_blocking_sleeper(move |delay: Duration| record.lock().unwrap().push(delay))
///     .build()?;
///
/// let failed: Result<(), _> = policy.run_blocking("db", |_| Err(HttpStatus(503)));
/// assert!(failed.is_err());
/// assert_eq!(slept.lock().unwrap().len(), 2); // one wait before each retry
/// # Ok::<(), bayesretry_policy::Error>(())
/// ```
pub trait BlockingSleeper: Send + Sync + 'static {
    /// Blocks the calling thread for `delay`.
    fn sleep_blocking(&self, delay: Duration);

    /// Blocks the calling thread for `delay`, or less if `cancel` is cancelled
    /// first: the blocking loop sleeps with this when its call has a
    /// [`CancelToken`], and a cancellation then ends the call at once with
    /// [`RetryErrorKind::Cancelled`](crate::RetryErrorKind::Cancelled).
    ///
    /// The provided implementation cannot interrupt [`sleep_blocking`](Self::sleep_blocking):
    /// it sleeps the whole delay, and the cancellation is seen after it. Real
    /// sleepers override it — [`ThreadSleeper`] waits on the token with a
    /// timeout ([`CancelToken::wait_timeout`]) — while a virtual sleeper, which
    /// never waits, has no need to.
    fn sleep_blocking_cancellable(&self, delay: Duration, cancel: &CancelToken) {
        let _ = cancel;
        self.sleep_blocking(delay);
    }
}

impl<F> BlockingSleeper for F
where
    F: Fn(Duration) + Send + Sync + 'static,
{
    fn sleep_blocking(&self, delay: Duration) {
        self(delay);
    }
}

/// The object-safe face of a [`Sleeper`].
pub(crate) trait DynSleeper: Send + Sync {
    /// The sleep for `delay`, boxed; `None` when the sleeper's future is known
    /// to be complete already (see below), so nothing needs boxing or polling.
    fn sleep_boxed(&self, delay: Duration) -> Option<BoxSleep>;
}

impl<S: Sleeper> DynSleeper for S {
    /// A sleeper whose future is [`Ready<()>`] — a test's `|_| ready(())`, the
    /// [`VirtualSleeper`] — has finished its sleep when it returns: the sleeper
    /// is still called (it may advance a clock or record the delay), but its
    /// future is dropped unpolled instead of boxed, which saves an allocation
    /// per retry. Dropping a `Ready` is all polling it would have done.
    #[inline]
    fn sleep_boxed(&self, delay: Duration) -> Option<BoxSleep> {
        let sleep = self.sleep(delay);
        if TypeId::of::<S::Sleep>() == TypeId::of::<Ready<()>>() {
            return None;
        }
        Some(Box::pin(sleep))
    }
}

/// `tokio::time::sleep`: needs a tokio runtime with its time driver enabled.
///
/// # Panics
///
/// As `tokio::time::sleep` does, when a sleep is made outside a tokio runtime.
/// The policy's default sleeper does not: it uses tokio's timer only inside a
/// runtime.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

#[cfg(feature = "tokio")]
impl Sleeper for TokioSleeper {
    type Sleep = tokio::time::Sleep;

    fn sleep(&self, delay: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(delay)
    }
}

/// `std::thread::sleep`: the default blocking sleeper.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadSleeper;

impl BlockingSleeper for ThreadSleeper {
    fn sleep_blocking(&self, delay: Duration) {
        std::thread::sleep(delay);
    }

    /// Waits on the token with `delay` as the timeout: a cancellation wakes it
    /// at once.
    fn sleep_blocking_cancellable(&self, delay: Duration, cancel: &CancelToken) {
        let _ = cancel.wait_timeout(delay);
    }
}

/// The default async sleeper: tokio's timer when the sleep is made inside a
/// tokio runtime (with the `tokio` feature), otherwise the process's timer
/// thread ([`Timer`](crate::timer::Timer)), which wakes the task. A call polled by another executor — or by a
/// plain `block_on` — thus sleeps rather than panicking for want of tokio's
/// reactor. The runtime is looked for at each sleep, that is, only when a
/// retry actually waits.
///
/// What it cannot see: a tokio runtime's context entered on a thread that
/// polls the call with another executor (`Handle::enter`, then some other
/// `block_on`) looks like tokio polling it, so the sleep is tokio's, and it
/// wakes only if that runtime is being driven; a runtime built without its
/// time driver, or shutting down, makes tokio panic when asked to sleep. Such
/// programs set a sleeper of their own.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DefaultSleeper;

impl DynSleeper for DefaultSleeper {
    fn sleep_boxed(&self, delay: Duration) -> Option<BoxSleep> {
        #[cfg(feature = "tokio")]
        if tokio::runtime::Handle::try_current().is_ok() {
            return Some(Box::pin(tokio::time::sleep(delay)));
        }
        Some(Box::pin(crate::timer::Timer::new(delay)))
    }
}

/// A sleeper that does not wait: it advances a [`ManualClock`] by each delay at
/// once and records the delay. A test of a 60-second schedule runs in no time and
/// checks the exact delays. Clones share the clock and the record.
///
/// It is both a [`Sleeper`] and a [`BlockingSleeper`];
/// [`Builder::with_virtual_time`](crate::Builder::with_virtual_time) installs it
/// for both, with its clock as the policy's clock.
///
/// # What it keeps
///
/// A test asserts on the delays a scenario asked for, from its start: those
/// are kept, in order, up to [`MAX_KEPT_DELAYS`](Self::MAX_KEPT_DELAYS). A
/// long simulated run — millions of calls on virtual time, a soak test of an
/// agent loop — sleeps far more often than any test reads one by one, and a
/// record of every delay would grow its memory without limit (16 bytes a
/// sleep). So past the cap the delays are no longer kept one by one, and what
/// such a run asserts on stays exact whatever its length:
/// [`sleeps`](Self::sleeps), the number of sleeps, and
/// [`slept`](Self::slept), their total.
///
/// ```
/// use bayesretry_policy::{BlockingSleeper, Clock, ManualClock, VirtualSleeper};
/// use std::time::Duration;
///
/// let sleeper = VirtualSleeper::new(ManualClock::new(0));
/// sleeper.sleep_blocking(Duration::from_secs(60));
/// assert_eq!(sleeper.clock().now_ms(), 60_000);
/// assert_eq!(sleeper.delays(), [Duration::from_secs(60)]);
/// assert_eq!(sleeper.sleeps(), 1);
/// assert_eq!(sleeper.slept(), Duration::from_secs(60));
/// ```
#[derive(Clone, Debug, Default)]
pub struct VirtualSleeper {
    clock: ManualClock,
    record: Arc<Mutex<Record>>,
}

/// What a [`VirtualSleeper`] and its clones have slept.
#[derive(Debug, Default)]
struct Record {
    /// The first delays, at most [`VirtualSleeper::MAX_KEPT_DELAYS`].
    kept: Vec<Duration>,
    /// Every sleep.
    sleeps: u64,
    /// Their total, saturating.
    slept: Duration,
}

impl VirtualSleeper {
    /// How many delays [`delays`](Self::delays) keeps: the first 65 536 (1 MiB
    /// of them), far more than any test reads one by one. Later sleeps are
    /// counted in [`sleeps`](Self::sleeps) and [`slept`](Self::slept) only.
    pub const MAX_KEPT_DELAYS: usize = 1 << 16;

    /// A sleeper that advances `clock`.
    pub fn new(clock: ManualClock) -> VirtualSleeper {
        VirtualSleeper {
            clock,
            record: Arc::default(),
        }
    }

    /// The clock it advances.
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// The delays slept so far, in order: every one of them, up to the first
    /// [`MAX_KEPT_DELAYS`](Self::MAX_KEPT_DELAYS).
    pub fn delays(&self) -> Vec<Duration> {
        self.lock().kept.clone()
    }

    /// How many sleeps there were, kept in [`delays`](Self::delays) or not.
    pub fn sleeps(&self) -> u64 {
        self.lock().sleeps
    }

    /// The time slept in all, every sleep counted (saturating at
    /// [`Duration::MAX`]).
    pub fn slept(&self) -> Duration {
        self.lock().slept
    }

    fn lock(&self) -> MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, delay: Duration) {
        {
            let mut record = self.lock();
            if record.kept.len() < Self::MAX_KEPT_DELAYS {
                record.kept.push(delay);
            }
            record.sleeps = record.sleeps.saturating_add(1);
            record.slept = record.slept.saturating_add(delay);
        }
        self.clock.advance(delay);
    }
}

impl Sleeper for VirtualSleeper {
    type Sleep = Ready<()>;

    fn sleep(&self, delay: Duration) -> Ready<()> {
        self.record(delay);
        ready(())
    }
}

impl BlockingSleeper for VirtualSleeper {
    fn sleep_blocking(&self, delay: Duration) {
        self.record(delay);
    }
}
