//! [`Clock`]: where the run loop reads the time, with the real [`SystemClock`] and
//! the test [`ManualClock`].

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::time::Instant;

/// A monotonic millisecond clock: the `now_ms` every core crate is told.
///
/// The store decays evidence with it, the breaker times its cooldown with it, and
/// the deadline (`max_elapsed`) is measured on it. It never goes backward.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since an arbitrary, fixed origin.
    fn now_ms(&self) -> u64;
}

/// The real clock: milliseconds since the clock was made, from [`Instant`].
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A clock that moves only when told to. Clones share one time, so a test keeps a
/// clone while the policy reads another, and a
/// [`VirtualSleeper`](crate::VirtualSleeper) advances it by every delay it is
/// asked to sleep.
///
/// ```
/// use bayesretry_policy::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new(1_000);
/// let seen_by_policy = clock.clone();
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(seen_by_policy.now_ms(), 1_250);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    now_ms: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock that reads `start_ms` until advanced.
    pub fn new(start_ms: u64) -> ManualClock {
        ManualClock {
            now_ms: Arc::new(AtomicU64::new(start_ms)),
        }
    }

    /// Moves the clock forward by `by`, rounded down to whole milliseconds
    /// (saturating).
    pub fn advance(&self, by: Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        // a closure that always returns Some never fails
        let _ = self
            .now_ms
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                Some(now.saturating_add(ms))
            });
    }

    /// Moves the clock to `now_ms`, if that is later than its time; a clock never
    /// goes backward.
    pub fn set(&self, now_ms: u64) {
        self.now_ms.fetch_max(now_ms, Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Acquire)
    }
}
