//! [`SharedBreaker`]: one breaker shared by every thread.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_beta::Beta;

use crate::breaker::{Admission, Breaker, ProbeRound, RunReading, State, Transition};

/// The gate value of a closed breaker: admit without locking.
const GATE_CLOSED: u64 = 0;
/// The gate value of a half-open breaker: take the lock to hand out probes.
const GATE_LOCKED: u64 = u64::MAX;

/// How many failures a [`SharedBreaker`] had recorded at some moment
/// ([`SharedBreaker::failures_recorded`]), or a
/// [`KeyedBreaker`](crate::KeyedBreaker) for all its keys
/// ([`KeyedBreaker::failures_recorded`](crate::KeyedBreaker::failures_recorded)). An attempt notes it when it begins;
/// handed back with the attempt's outcome, it tells the breaker whether the
/// attempt began before the current run of failures
/// ([`record_success_since`](SharedBreaker::record_success_since)). Equal counts
/// read at two moments mean no failure was recorded between them.
///
/// A type of its own, so that it cannot be passed where a time is expected:
/// both are `u64`s, and the breaker's methods take both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[must_use]
pub struct FailureCount(u64);

impl FailureCount {
    /// The count as a number.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The count `n`, as a breaker reads it.
    pub(crate) const fn new(n: u64) -> FailureCount {
        FailureCount(n)
    }
}

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
/// # Successes while closed: no lock, no atomic read-modify-write
///
/// Most outcomes a healthy endpoint reports are successes, and a success recorded
/// while the breaker is closed cannot open it: it only adds to the evidence. So
/// [`record_success_with`](SharedBreaker::record_success_with) on a closed gate
/// takes no lock and reads no time. It adds one to a counter of the calling
/// thread's own: the first 16 threads that record successes in the process each
/// get a private counter, which only they write (a plain load and store, no
/// atomic read-modify-write, so no cache line is fought over), and any later
/// thread adds to one shared counter with an atomic add. No success is ever lost.
///
/// The counted successes are folded into the evidence at the start of the next
/// locked operation — before any rule reads the posterior — and, with a
/// half-life, also every 128 successes a thread counts (starting with its first),
/// which reads the time and takes the lock once. Without a half-life every decision
/// is thus taken on exactly the evidence it would have seen had each success
/// taken the lock. With a half-life a success's weight depends on its time, which
/// was not read: the successes folded together are weighed as if spread evenly
/// between the previous fold and this one (the mean of the decay factor over that
/// interval), which is exact in expectation for steady traffic and, since folds
/// come at least every 128 successes per thread and at every failure, never
/// misdates more than those few. A success that races with the record that opens
/// the breaker is folded as evidence of a call admitted before it opened, never
/// as a probe result.
///
/// [`record`](SharedBreaker::record), which is given the time, records a success
/// exactly under the lock when the breaker has a half-life.
#[derive(Debug)]
pub struct SharedBreaker {
    gate: AtomicU64,
    /// Successes counted on a closed gate: one counter per thread for the first
    /// `OWN_COUNTERS` threads, then one shared by every other thread.
    successes: [AtomicU64; COUNTERS],
    /// Whether the evidence decays, so that counted successes are folded in
    /// with their time every `FOLD_EVERY`.
    decays: bool,
    /// Failures recorded since the breaker was shared: a lock-free way to
    /// tell that none was recorded between two moments. Written under the
    /// lock only.
    failures: AtomicU64,
    /// What [`failures`](SharedBreaker::failures_recorded) read when the
    /// first failing attempt of the latest run began. Written under the lock,
    /// read without it by a success that overlapped failures (to keep the
    /// lock-free path when the success began inside the run), and kept until
    /// the next run begins: while the breaker is open or half-open, a success
    /// that began before the run that opened it is never a probe result.
    run_began_at: AtomicU64,
    locked: Mutex<Locked>,
}

/// What the lock guards: the breaker, and how much of the success counters it
/// has folded in, and when.
#[derive(Debug)]
struct Locked {
    breaker: Breaker,
    /// The value of each success counter at the last fold.
    folded: [u64; COUNTERS],
    /// The time of the last fold: successes counted since happened after it.
    /// `None` before the first fold, whose successes are taken as happening
    /// at its time (a thread folds at its first success, so they are at most
    /// that one).
    since_ms: Option<u64>,
}

/// Threads with a success counter of their own.
const OWN_COUNTERS: usize = 16;
/// All the counters: the own ones, then the shared one.
const COUNTERS: usize = OWN_COUNTERS + 1;
/// The index of the counter every thread past the first `OWN_COUNTERS` shares.
const SHARED_COUNTER: usize = OWN_COUNTERS;
/// With a half-life, a thread folds its counted successes in, with the time,
/// at its first success and then every this many.
const FOLD_EVERY: u64 = 128;

/// The next own counter to hand to a thread; saturates at `SHARED_COUNTER`.
static NEXT_COUNTER: AtomicUsize = AtomicUsize::new(0);

std::thread_local! {
    /// This thread's counter index, `usize::MAX` until its first success.
    static COUNTER: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The calling thread's counter index: its own below `SHARED_COUNTER`, handed
/// out once per thread in the order threads first count a success.
#[inline(always)]
fn counter_index() -> usize {
    COUNTER
        .try_with(|index| match index.get() {
            usize::MAX => assign_counter(index),
            at => at,
        })
        // a thread being torn down shares the common counter
        .unwrap_or(SHARED_COUNTER)
}

/// Hands the calling thread its counter index, at its first success.
#[cold]
#[inline(never)]
fn assign_counter(index: &Cell<usize>) -> usize {
    // Once the own counters are handed out, the next value is never
    // incremented again, so it cannot wrap round to an index in use: it passes
    // `SHARED_COUNTER` by at most the threads that read it below together.
    let at = match NEXT_COUNTER.load(Ordering::Relaxed) {
        next if next >= SHARED_COUNTER => SHARED_COUNTER,
        _ => NEXT_COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .min(SHARED_COUNTER),
    };
    index.set(at);
    at
}

impl SharedBreaker {
    /// Shares `breaker`, in whatever state it is.
    pub fn new(breaker: Breaker) -> SharedBreaker {
        SharedBreaker {
            gate: AtomicU64::new(gate_of(breaker.state())),
            successes: core::array::from_fn(|_| AtomicU64::new(0)),
            decays: breaker.config().half_life_ms().is_some(),
            failures: AtomicU64::new(0),
            run_began_at: AtomicU64::new(0),
            locked: Mutex::new(Locked {
                since_ms: None,
                folded: [0; COUNTERS],
                breaker,
            }),
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
        self.update(now_ms, |breaker| breaker.check(now_ms))
    }

    /// Whether the breaker is closed: one atomic load, no lock, no side effect.
    /// A closed breaker admits every call, so a caller that finds it closed may
    /// make its call without [`check`](SharedBreaker::check)ing (which, on a
    /// closed breaker, does nothing more).
    #[inline(always)]
    pub fn is_closed(&self) -> bool {
        self.gate.load(Ordering::Acquire) == GATE_CLOSED
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
    /// A success on a closed breaker without a half-life is counted without the
    /// lock; with a half-life it is recorded with its time, under the lock. The
    /// attempt is taken to have begun when its outcome is recorded (for the
    /// order of a success against a run of failures, see
    /// [`record_success_since`](SharedBreaker::record_success_since) and
    /// [`record_failure_since`](SharedBreaker::record_failure_since)).
    pub fn record(&self, now_ms: u64, success: bool) -> Option<Transition> {
        if success && !self.decays && self.gate.load(Ordering::Acquire) == GATE_CLOSED {
            self.count_success();
            return None;
        }
        if !success {
            return self.fail(None, now_ms, |_, transition| transition);
        }
        self.update(now_ms, |breaker| breaker.record(now_ms, success))
    }

    /// Counts a failure and records it under the lock; `then` reads the
    /// breaker just after. Its attempt began when the count of failures read
    /// `began` (`None`: it is taken to begin now, the count before this
    /// failure); the first failure of a run notes that, for
    /// [`record_success_since`](SharedBreaker::record_success_since).
    fn fail<T>(
        &self,
        began: Option<FailureCount>,
        now_ms: u64,
        then: impl FnOnce(&Breaker, Option<Transition>) -> T,
    ) -> T {
        self.update(now_ms, |breaker| {
            // Counted under the lock, which every failure takes: a plain
            // store, not a read-modify-write, and the count runs in the order
            // the failures are recorded in.
            let counted = self.failures.load(Ordering::Relaxed);
            self.failures
                .store(counted.wrapping_add(1), Ordering::Release);
            let mut run_began_at = self.run_began_at.load(Ordering::Acquire);
            let transition = breaker.record_failure_begun(
                now_ms,
                began.map(FailureCount::get),
                counted,
                &mut run_began_at,
            );
            self.run_began_at.store(run_began_at, Ordering::Release);
            then(breaker, transition)
        })
    }

    /// [`record`](SharedBreaker::record), and the run of failures as it reads
    /// just after ([`run_reading`](SharedBreaker::run_reading)), under one
    /// lock: what a decision that weighs the run needs after a failure, for
    /// one lock and one fold of the counted successes instead of two. A
    /// failure recorded here is taken to have begun when it is recorded.
    ///
    /// ```
    /// use bayesretry_breaker::{Config, SharedBreaker};
    ///
    /// let shared = SharedBreaker::new(Config::new().with_half_life_ms(10_000).build().unwrap());
    /// let _ = shared.record(0, true);
    /// let (transition, run) = shared.record_and_read(5, false);
    /// assert_eq!((transition, run.failures), (None, 1));
    /// assert_eq!(run, shared.run_reading(5));
    /// ```
    pub fn record_and_read(&self, now_ms: u64, success: bool) -> (Option<Transition>, RunReading) {
        if !success {
            return self.fail(None, now_ms, |breaker, transition| {
                (transition, breaker.run_reading(now_ms))
            });
        }
        self.update(now_ms, |breaker| {
            let transition = breaker.record(now_ms, success);
            (transition, breaker.run_reading(now_ms))
        })
    }

    /// [`record`](SharedBreaker::record)`(now_ms, false)` for the failure of an
    /// attempt that began when [`failures_recorded`](SharedBreaker::failures_recorded)
    /// read `failures_before`; see
    /// [`record_failure_and_read`](SharedBreaker::record_failure_and_read).
    pub fn record_failure_since(
        &self,
        failures_before: FailureCount,
        now_ms: u64,
    ) -> Option<Transition> {
        self.fail(Some(failures_before), now_ms, |_, transition| transition)
    }

    /// [`record_and_read`](SharedBreaker::record_and_read) for the failure of
    /// an attempt that began when [`failures_recorded`](SharedBreaker::failures_recorded)
    /// read `failures_before`. If the failure begins a run, the run remembers
    /// when its first attempt began, so that a success of an attempt that
    /// began earlier does not end it
    /// ([`record_success_since`](SharedBreaker::record_success_since)).
    pub fn record_failure_and_read(
        &self,
        failures_before: FailureCount,
        now_ms: u64,
    ) -> (Option<Transition>, RunReading) {
        self.fail(Some(failures_before), now_ms, |breaker, transition| {
            (transition, breaker.run_reading(now_ms))
        })
    }

    /// How many failures have been recorded since the breaker was shared: one
    /// atomic load. Equal readings at two moments mean no failure was recorded
    /// between them, so the run of failures
    /// ([`run_reading`](SharedBreaker::run_reading)) cannot have grown — what
    /// a caller checks before taking the lock to read it.
    #[inline]
    pub fn failures_recorded(&self) -> FailureCount {
        FailureCount(self.failures.load(Ordering::Acquire))
    }

    /// Records a success, reading the time only if it is needed: on a closed
    /// breaker the success is counted without a lock and `now_ms` is not called
    /// (but for the periodic fold of a decaying breaker's counts; see the type's
    /// documentation); otherwise this is
    /// [`record`](SharedBreaker::record)`(now_ms(), true)`.
    #[inline(always)]
    pub fn record_success_with(&self, now_ms: impl FnOnce() -> u64) -> Option<Transition> {
        if self.gate.load(Ordering::Acquire) != GATE_CLOSED {
            return self.record_success_locked(now_ms());
        }
        let counted = self.count_success();
        if self.decays && counted % FOLD_EVERY == 1 {
            self.fold_at(now_ms());
        }
        None
    }

    /// [`record_success_with`](SharedBreaker::record_success_with) for an
    /// attempt that began when [`failures_recorded`](SharedBreaker::failures_recorded)
    /// read `failures_before`. If the first failing attempt of the current
    /// run began later — a failure was recorded between the two beginnings —
    /// the success is older news than the run, and is recorded as
    /// [`Breaker::record_late_success`] records it: as evidence, without
    /// ending the run.
    ///
    /// The count of failures orders beginnings only coarsely: attempts that
    /// began with no failure recorded between them cannot be told apart, and
    /// for them the success ends the run, as it would by the order of ending.
    /// A burst of attempts sent together (the calls a breaker let go when it
    /// closed) thus reads as it always did; an attempt that was in flight for
    /// a whole failure and more before the run began does not end it.
    ///
    /// The lock is taken only for a success that may be older than the run:
    /// one whose attempt overlapped a failure and began before the latest
    /// run's first failing attempt. Any other success takes
    /// `record_success_with`'s path, for one atomic load more (two when
    /// failures were recorded while it ran) — and the attempt's beginning
    /// costs one, to read the count.
    ///
    /// ```
    /// use bayesretry_breaker::{Config, SharedBreaker};
    ///
    /// let shared = SharedBreaker::new(Config::new().build().unwrap());
    /// let slow = shared.failures_recorded(); // a slow attempt begins
    /// let _ = shared.record(1, false); // a failure, then a success
    /// let _ = shared.record(2, true);
    /// let _ = shared.record(3, false); // an outage begins
    /// let _ = shared.record(4, false);
    /// let _ = shared.record_success_since(slow, || 5); // the slow one ends
    /// assert_eq!(shared.run_reading(5).failures, 2, "the run goes on");
    ///
    /// let now = shared.failures_recorded(); // an attempt begins in the run
    /// let _ = shared.record_success_since(now, || 6);
    /// assert_eq!(shared.run_reading(6).failures, 0, "the endpoint is back");
    /// ```
    #[inline(always)]
    pub fn record_success_since(
        &self,
        failures_before: FailureCount,
        now_ms: impl FnOnce() -> u64,
    ) -> Option<Transition> {
        let before = failures_before.0;
        if self.failures.load(Ordering::Acquire) == before
            || before >= self.run_began_at.load(Ordering::Acquire)
        {
            return self.record_success_with(now_ms);
        }
        self.record_overlapping_success(before, now_ms())
    }

    /// A success whose attempt overlapped recorded failures and may have
    /// begun before the latest run, under the lock: older news than the run
    /// if the run is still going, or if the breaker is not closed (it opened
    /// on that run, or a success that began inside it ended it while open; a
    /// success from before it is not a probe's result either way).
    #[cold]
    #[inline(never)]
    fn record_overlapping_success(&self, failures_before: u64, now_ms: u64) -> Option<Transition> {
        self.update(now_ms, |breaker| {
            let run_began_at = self.run_began_at.load(Ordering::Acquire);
            breaker.record_success_begun(now_ms, failures_before, run_began_at)
        })
    }

    /// A success recorded under the lock (the breaker is not closed).
    #[cold]
    #[inline(never)]
    fn record_success_locked(&self, now_ms: u64) -> Option<Transition> {
        self.update(now_ms, |breaker| breaker.record(now_ms, true))
    }

    /// Folds the counted successes in at `now_ms`, under the lock.
    #[cold]
    #[inline(never)]
    fn fold_at(&self, now_ms: u64) {
        let mut locked = self.lock();
        self.fold(&mut locked, now_ms);
    }

    /// Adds one success to the calling thread's counter; the counter's new value.
    #[inline(always)]
    fn count_success(&self) -> u64 {
        let at = counter_index();
        match self.successes.get(at) {
            // only this thread writes its own counter: no read-modify-write
            Some(counter) if at < SHARED_COUNTER => {
                let counted = counter.load(Ordering::Relaxed).wrapping_add(1);
                counter.store(counted, Ordering::Release);
                counted
            }
            Some(counter) => counter.fetch_add(1, Ordering::AcqRel).wrapping_add(1),
            None => 0,
        }
    }

    /// Hands back the slot of a probe of `round` that ended without an
    /// outcome; see [`Breaker::release_probe`]: a probe of a round that is no
    /// longer the current one frees nothing. Takes the lock only when
    /// half-open.
    pub fn release_probe(&self, round: ProbeRound) {
        if self.gate.load(Ordering::Acquire) == GATE_LOCKED {
            let mut locked = self.lock();
            locked.breaker.release_probe(round);
            self.publish(&locked.breaker);
        }
    }

    /// Closes the breaker and forgets its evidence; see [`Breaker::reset`].
    pub fn reset(&self, now_ms: u64) {
        self.update(now_ms, |breaker| breaker.reset(now_ms));
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

    /// The state as of the latest call; see [`Breaker::state`]. (Successes
    /// counted without the lock never change it.)
    pub fn state(&self) -> State {
        self.lock().breaker.state()
    }

    /// The posterior at `now_ms`, with every counted success folded in; see
    /// [`Breaker::posterior`].
    pub fn posterior(&self, now_ms: u64) -> Beta {
        let mut locked = self.lock();
        self.fold(&mut locked, now_ms);
        locked.breaker.posterior(now_ms)
    }

    /// The failures in a row since the last success, the posterior and the
    /// hazard of a change at `now_ms` ([`Breaker::run_reading`]), read under
    /// one lock, with every counted success folded in.
    pub fn run_reading(&self, now_ms: u64) -> RunReading {
        let mut locked = self.lock();
        self.fold(&mut locked, now_ms);
        locked.breaker.run_reading(now_ms)
    }

    /// A copy of the breaker as it is now, with every counted success folded in
    /// as of the latest time the breaker has seen.
    pub fn snapshot(&self) -> Breaker {
        let mut locked = self.lock();
        let latest_ms = locked
            .since_ms
            .unwrap_or(0)
            .max(locked.breaker.evidence_at_ms());
        self.fold(&mut locked, latest_ms);
        locked.breaker
    }

    /// Under the lock, at `now_ms`: folds the counted successes in, runs `f`,
    /// and mirrors the new state in the gate.
    fn update<T>(&self, now_ms: u64, f: impl FnOnce(&mut Breaker) -> T) -> T {
        let mut locked = self.lock();
        self.fold(&mut locked, now_ms);
        let answer = f(&mut locked.breaker);
        self.publish(&locked.breaker);
        answer
    }

    /// Mirrors `breaker`'s state in the gate; called with the lock held.
    fn publish(&self, breaker: &Breaker) {
        self.gate.store(gate_of(breaker.state()), Ordering::Release);
    }

    /// Folds the successes counted since the last fold into the evidence, as
    /// happening between that fold and `now_ms`.
    ///
    /// Only the counters handed out so far are read: the own counters below
    /// [`NEXT_COUNTER`]'s reading, then the shared one (a thread being torn
    /// down counts there at any time). Every failure folds, and most
    /// processes have a few threads that count successes: reading all
    /// `COUNTERS` was some 80 instructions of every failure, for counters
    /// that never move. Skipping a counter loses nothing, since the fold adds
    /// what a counter gained since its value in `folded`: one skipped now is
    /// folded in whole later. Nor does the fold miss a success it must see: a
    /// thread takes its counter (an add to `NEXT_COUNTER`) before it counts
    /// there, so a fold that a count happened before reads `NEXT_COUNTER`
    /// past that counter's index (the coherence of one atomic, which holds
    /// for relaxed accesses too).
    #[inline]
    fn fold(&self, locked: &mut Locked, now_ms: u64) {
        let handed_out = NEXT_COUNTER.load(Ordering::Relaxed).min(OWN_COUNTERS);
        let mut count = 0_u64;
        let mut add = |counter: &AtomicU64, folded: &mut u64| {
            let counted = counter.load(Ordering::Acquire);
            count = count.wrapping_add(counted.wrapping_sub(*folded));
            *folded = counted;
        };
        let own = self.successes.iter().zip(locked.folded.iter_mut());
        for (counter, folded) in own.take(handed_out) {
            add(counter, folded);
        }
        // the shared counter is the last
        if let (Some(counter), Some(folded)) = (self.successes.last(), locked.folded.last_mut()) {
            add(counter, folded);
        }
        if count > 0 {
            locked
                .breaker
                .absorb_successes(count, locked.since_ms.unwrap_or(now_ms), now_ms);
        }
        locked.since_ms = Some(locked.since_ms.map_or(now_ms, |since| since.max(now_ms)));
    }

    /// The lock; a poisoned one is taken over, since no code here panics while
    /// holding it and the breaker is plain data, valid between any two statements.
    fn lock(&self) -> MutexGuard<'_, Locked> {
        self.locked.lock().unwrap_or_else(PoisonError::into_inner)
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
