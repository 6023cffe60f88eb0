//! [`SharedBreaker`]: one breaker shared by every thread.

use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_beta::Beta;

use crate::breaker::{Admission, Breaker, State, Transition};

/// The gate value of a closed breaker: admit without locking.
const GATE_CLOSED: u64 = 0;
/// The gate value of a half-open breaker: take the lock to hand out probes.
const GATE_LOCKED: u64 = u64::MAX;

/// A [`Breaker`] shared by every thread: `&self`, `Send + Sync`.
///
/// # A mutex, and a gate in front of it
///
/// The breaker's state is a dozen fields — floating-point evidence, the phase, the
/// probe counts, the cooldown — that change together, and a record may evaluate an
/// incomplete beta function in the middle of the change. Packing all of that into
/// atomics would take a sequence lock or a copy-on-write scheme, and buy little:
/// a recorded outcome follows a network call that takes milliseconds, beside which
/// an uncontended `std::sync::Mutex` (a few tens of nanoseconds) is noise. So the
/// breaker sits behind a plain mutex.
///
/// The check, though, runs before *every* call, and in the common states it needs no
/// lock: an `AtomicU64` gate mirrors the state after every locked update — 0 when
/// closed, the end of the cooldown when open, `u64::MAX` when half-open. A closed
/// breaker admits on one atomic load; an open one rejects on one load and a
/// comparison. Only half-open checks (which hand out the few probe slots) and
/// checks right after the cooldown take the lock. A check that reads the gate just
/// before a concurrent record opens the breaker is admitted: it is ordered before
/// that record, as it would be with a lock.
///
/// ```
/// use bayesretry_breaker::{Config, SharedBreaker};
/// let breaker = SharedBreaker::new(Config::new().build().unwrap());
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| for t in 0..100 {
///             if breaker.check(t).is_allowed() {
///                 let _ = breaker.record(t, false);
///             }
///         });
///     }
/// });
/// assert!(!breaker.check(200).is_allowed()); // the outage was seen
/// ```
///
/// # Successes while closed: one atomic add
///
/// Most outcomes a healthy endpoint reports are successes, and a success recorded
/// while the breaker is closed changes nothing but a count: it cannot open the
/// breaker, and without a half-life it is not weighed by its time. So when the
/// breaker has no half-life, [`record_success_with`](SharedBreaker::record_success_with)
/// on a closed gate adds one to a counter of pending successes and takes no lock
/// and no time. The pending successes are folded into the evidence, as evidence,
/// at the start of the next locked operation — before any rule reads the
/// posterior — so every decision is taken on exactly the evidence it would have
/// seen had each success taken the lock. A success that races with the record that
/// opens the breaker is folded as evidence of a call admitted before it opened,
/// never as a probe result. With a half-life, each success is timed under the
/// lock as before.
#[derive(Debug)]
pub struct SharedBreaker {
    gate: AtomicU64,
    /// Successes recorded on a closed gate and not yet folded into the evidence.
    pending: AtomicU64,
    /// Whether successes may be counted without the lock (no half-life).
    count_successes: bool,
    breaker: Mutex<Breaker>,
}

impl SharedBreaker {
    /// Shares `breaker`, in whatever state it is.
    pub fn new(breaker: Breaker) -> SharedBreaker {
        SharedBreaker {
            gate: AtomicU64::new(gate_of(breaker.state())),
            pending: AtomicU64::new(0),
            count_successes: breaker.config().half_life_ms().is_none(),
            breaker: Mutex::new(breaker),
        }
    }

    /// Whether a call may be made at `now_ms`; see [`Breaker::check`]. Lock-free
    /// when closed, and when open before the cooldown ends.
    #[inline]
    pub fn check(&self, now_ms: u64) -> Admission {
        let gate = self.gate.load(Ordering::Acquire);
        if gate == GATE_CLOSED {
            return Admission::Allowed;
        }
        if gate != GATE_LOCKED && now_ms < gate {
            return Admission::Rejected { until_ms: gate };
        }
        self.update(|breaker| breaker.check(now_ms))
    }

    /// [`check`](SharedBreaker::check), reading the time only if it is needed:
    /// `now_ms` is not called when the breaker is closed. For a caller whose clock
    /// read is not free.
    #[inline]
    pub fn check_with(&self, now_ms: impl FnOnce() -> u64) -> Admission {
        if self.gate.load(Ordering::Acquire) == GATE_CLOSED {
            return Admission::Allowed;
        }
        self.check(now_ms())
    }

    /// Records the outcome of a call made at `now_ms`; see [`Breaker::record`].
    pub fn record(&self, now_ms: u64, success: bool) -> Option<Transition> {
        if success && self.count_lock_free() {
            return None;
        }
        self.update(|breaker| breaker.record(now_ms, success))
    }

    /// Records a success, reading the time only if it is needed: on a closed
    /// breaker without a half-life the success is counted with one atomic add,
    /// `now_ms` is not called and no lock is taken (see the type's documentation);
    /// otherwise this is [`record`](SharedBreaker::record)`(now_ms(), true)`.
    #[inline]
    pub fn record_success_with(&self, now_ms: impl FnOnce() -> u64) -> Option<Transition> {
        if self.count_lock_free() {
            return None;
        }
        self.update(|breaker| breaker.record(now_ms(), true))
    }

    /// Counts a success without the lock, if the breaker is closed and has no
    /// half-life; whether it did.
    #[inline]
    fn count_lock_free(&self) -> bool {
        if self.count_successes && self.gate.load(Ordering::Acquire) == GATE_CLOSED {
            self.pending.fetch_add(1, Ordering::AcqRel);
            return true;
        }
        false
    }

    /// Hands back the slot of a probe that ended without an outcome; see
    /// [`Breaker::release_probe`]. Takes the lock only when half-open.
    pub fn release_probe(&self) {
        if self.gate.load(Ordering::Acquire) == GATE_LOCKED {
            self.update(Breaker::release_probe);
        }
    }

    /// Closes the breaker and forgets its evidence; see [`Breaker::reset`].
    pub fn reset(&self, now_ms: u64) {
        self.update(|breaker| breaker.reset(now_ms));
    }

    /// The end of the cooldown if the breaker is open, `None` if it is closed
    /// or half-open; the same answer as matching [`state`](SharedBreaker::state)
    /// on [`State::Open`], read without the lock when the breaker is closed or
    /// open.
    #[inline]
    pub fn open_until(&self) -> Option<u64> {
        match self.gate.load(Ordering::Acquire) {
            GATE_CLOSED => None,
            GATE_LOCKED => match self.state() {
                State::Open { until_ms } => Some(until_ms),
                _ => None,
            },
            until_ms => Some(until_ms),
        }
    }

    /// The state as of the latest call; see [`Breaker::state`].
    pub fn state(&self) -> State {
        self.locked().state()
    }

    /// The posterior at `now_ms`; see [`Breaker::posterior`].
    pub fn posterior(&self, now_ms: u64) -> Beta {
        self.locked().posterior(now_ms)
    }

    /// A copy of the breaker as it is now.
    pub fn snapshot(&self) -> Breaker {
        *self.locked()
    }

    fn update<T>(&self, f: impl FnOnce(&mut Breaker) -> T) -> T {
        let mut breaker = self.locked();
        let answer = f(&mut breaker);
        self.gate.store(gate_of(breaker.state()), Ordering::Release);
        answer
    }

    /// The lock; a poisoned one is taken over, since no code here panics while
    /// holding it and the breaker is plain data, valid between any two statements.
    fn lock(&self) -> MutexGuard<'_, Breaker> {
        self.breaker.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock, with the pending successes folded in: what every operation but
    /// the lock-free ones sees.
    fn locked(&self) -> MutexGuard<'_, Breaker> {
        let mut breaker = self.lock();
        let pending = self.pending.swap(0, Ordering::AcqRel);
        if pending > 0 {
            breaker.absorb_successes(pending);
        }
        breaker
    }
}

impl From<Breaker> for SharedBreaker {
    fn from(breaker: Breaker) -> Self {
        SharedBreaker::new(breaker)
    }
}

fn gate_of(state: State) -> u64 {
    match state {
        State::Closed => GATE_CLOSED,
        // A cooldown ending at 0 cannot be told from "closed": lock instead (it is
        // over anyway). `u64::MAX` is the locked value already.
        State::Open { until_ms } if until_ms != GATE_CLOSED => until_ms,
        _ => GATE_LOCKED,
    }
}
