//! [`Clock`]: where the run loop reads the time, with the real [`SystemClock`] and
//! the test [`ManualClock`].

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A monotonic millisecond clock: the `now_ms` every core crate is told.
///
/// The store decays evidence with it, the breaker times its cooldown with it, and
/// the deadline (`max_elapsed`) is measured on it. It never goes backward.
///
/// Its origin is the clock's to choose, but evidence that leaves the process (a
/// snapshot file, a fleet) carries its readings: processes that share evidence
/// under decay need clocks with one origin, as [`SystemClock`]'s Unix epoch is.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since a fixed origin.
    fn now_ms(&self) -> u64;
}

/// The real clock: milliseconds since the Unix epoch, read from the wall clock
/// once, when the clock is made, and advanced by [`Instant`] from then on.
///
/// Each clock is monotonic: a wall clock stepped back (by NTP, or by hand)
/// does not move it, and nothing that times a cooldown or a deadline on it
/// jumps. (Two clocks made on either side of such a step differ by it: a
/// policy reads one clock, and its clones share it.) Across processes it shares an origin, and that is why the origin
/// is the epoch rather than the clock's making. The store stamps evidence with
/// this clock and decays it by the difference between two readings; evidence
/// saved in a file or a fleet by another process — or by this program before a
/// restart — carries that process's readings. Counted from each clock's own
/// making, a day-old entry written by a process that had been up for a day
/// would read as fresh after a restart (and stay at full weight for a day,
/// against a ten-minute half-life), and a younger process's entries would read
/// as ancient to an older one. Counted from the epoch, every process reads
/// every entry's true age, up to the difference between the hosts' wall clocks
/// when their clocks were made.
///
/// [`Instant`] may not advance while the machine is suspended, so after a
/// suspend the clock can lag the wall clock by the time spent asleep until the
/// next clock is made; a wall clock before 1970 reads as the epoch.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
    /// The wall clock at `origin`, in milliseconds since the Unix epoch.
    origin_ms: u64,
}

impl SystemClock {
    /// A clock that reads the wall clock's time now, and advances monotonically.
    pub fn new() -> SystemClock {
        let origin = Instant::now();
        let origin_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        SystemClock { origin, origin_ms }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.origin_ms.saturating_add(elapsed)
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
        #[allow(
            deprecated,
            reason = "renamed `try_update` in Rust newer than the workspace's 1.85, which lacks the new name"
        )]
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
