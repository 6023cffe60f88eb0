//! Virtual time: a single-threaded executor whose clock jumps from event to
//! event, and the sleep future that schedules those events.
//!
//! Every call of a run is a future. The executor polls the call that is due,
//! with the clock set to its time; a call that waits (an attempt's latency, a
//! backoff) registers its wake-up time and returns `Pending`. Nothing sleeps in
//! real time, and the order of events is a pure function of the times and of the
//! order in which calls registered them (ties broken by registration order).

use alloc::collections::BinaryHeap;
use alloc::sync::Arc;
use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bayesretry_policy::ManualClock;

/// No wake-up waiting in [`State::wake_at`]. A sleep asks for its wake-up
/// only when the clock is short of it, so never for time 0: 0 can stand for
/// none. (`u64::MAX` cannot: it is where a sleep of `Duration::MAX`, or any
/// that would pass the end of the clock, wakes.)
const NO_WAKE: u64 = 0;

/// What a run's executor and its sleeps share: the clock, and the wake-ups
/// the task being polled asks for.
///
/// The timer queue itself is the executor's own. A sleep that must wait does
/// not push to it: it leaves its wake-up time in `wake_at`, and the executor,
/// which polls every future on its own thread, files it under the task it has
/// just polled as soon as that poll returns. A call's poll asks for one
/// wake-up at most (its attempt's latency, or its backoff), so the slot takes
/// them all; a second one asked for in the same poll (a future that waits on
/// two sleeps at once) goes to the `more` list, in the order asked, and the
/// executor files the slot's first. The timers are numbered in the order the
/// sleeps asked, as they were when every sleep pushed to a queue behind a
/// mutex (shared, because the policy's sleeper must be `Send`); that lock and
/// its heap were about a sixth of a run. The clock and the slot are written and
/// read on the executor's thread only, so `Relaxed` is enough.
#[derive(Debug)]
struct State {
    now_us: AtomicU64,
    /// The task being polled.
    current: AtomicUsize,
    /// The wake-up time the task being polled asked for, or [`NO_WAKE`].
    wake_at: AtomicU64,
    /// Whether `more` holds wake-ups, so that the executor reads it only then.
    has_more: AtomicBool,
    /// Wake-ups past the first asked for in one poll, in the order asked.
    more: Mutex<Vec<u64>>,
}

impl Default for State {
    fn default() -> Self {
        State {
            now_us: AtomicU64::new(0),
            current: AtomicUsize::new(0),
            wake_at: AtomicU64::new(NO_WAKE),
            has_more: AtomicBool::new(false),
            more: Mutex::new(Vec::new()),
        }
    }
}

impl State {
    /// A poll of a sleep until `at_us`: ready once the clock is there, else
    /// pending, having asked for its wake-up on its first poll (`armed`).
    #[inline(always)]
    fn wait(&self, at_us: u64, armed: &mut bool) -> Poll<()> {
        if self.now_us.load(Ordering::Relaxed) >= at_us {
            return Poll::Ready(());
        }
        if !*armed {
            self.ask(at_us);
            *armed = true;
        }
        Poll::Pending
    }

    /// Drops every wake-up asked for and not yet filed: those asked for
    /// outside a run (no task was being polled), or left by a poll that
    /// unwound out of one.
    fn forget_asked(&self) {
        self.wake_at.store(NO_WAKE, Ordering::Relaxed);
        self.has_more.store(false, Ordering::Relaxed);
        self.more
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Asks for a wake-up at `at_us` of the task being polled.
    #[inline]
    fn ask(&self, at_us: u64) {
        if self.wake_at.load(Ordering::Relaxed) == NO_WAKE {
            self.wake_at.store(at_us, Ordering::Relaxed);
        } else {
            self.more
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(at_us);
            self.has_more.store(true, Ordering::Relaxed);
        }
    }
}

/// The executor's pending wake-ups, earliest first, ties in the order they
/// were asked for.
///
/// The earliest is held aside when it is the one filed last, and the rest are
/// in a binary heap: the wake-up a call asks for is most often the next event
/// of the run (an attempt's latency, tens of milliseconds, ends before the
/// next arrival and the others' longer waits), and then it is taken back
/// without a push into the heap and a pop out of it.
#[derive(Debug, Default)]
struct Timers {
    seq: u64,
    /// The earliest wake-up, when it is not in `heap`: earlier than all of it.
    first: Option<Timer>,
    heap: BinaryHeap<Timer>,
}

/// A pending wake-up of `task`. Ordered by `key`, the time in the high 64 bits
/// and the sequence number in the low ones, reversed so that the heap's top
/// is the earliest: one 128-bit comparison where a tuple of (time, sequence)
/// takes two, and the task, never compared (the sequence numbers are unique),
/// rides along.
#[derive(Clone, Copy, Debug)]
struct Timer {
    key: u128,
    task: usize,
}

impl Timer {
    fn at_us(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Timer {}

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timer {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}

impl Timers {
    /// Files the wake-ups the task `task` asked for in the poll just made.
    /// Inlined for the polls that ask for none (a third of them: every call's
    /// last); the filing itself is out of line.
    #[inline(always)]
    fn file(&mut self, state: &State, task: usize) {
        let at_us = state.wake_at.load(Ordering::Relaxed);
        if at_us != NO_WAKE {
            self.file_asked(state, at_us, task);
        }
    }

    /// Files the wake-up at `at_us` that `task` asked for, and any more it
    /// asked for after it in the same poll, in that order.
    #[inline(never)]
    fn file_asked(&mut self, state: &State, at_us: u64, task: usize) {
        state.wake_at.store(NO_WAKE, Ordering::Relaxed);
        self.push(at_us, task);
        if state.has_more.load(Ordering::Relaxed) {
            state.has_more.store(false, Ordering::Relaxed);
            let more =
                core::mem::take(&mut *state.more.lock().unwrap_or_else(PoisonError::into_inner));
            for at_us in more {
                self.push(at_us, task);
            }
        }
    }

    /// Queues a wake-up of `task` at `at_us`, numbered after every one before.
    fn push(&mut self, at_us: u64, task: usize) {
        let seq = self.seq;
        self.seq += 1;
        let timer = Timer {
            key: u128::from(at_us) << 64 | u128::from(seq),
            task,
        };
        // `Timer`'s order is reversed: greater is earlier
        match self.first {
            // earlier than the one held: held in its place, which joins the heap
            Some(first) if timer > first => {
                self.heap.push(first);
                self.first = Some(timer);
            }
            Some(_) => self.heap.push(timer),
            // nothing held: held if earlier than the whole heap
            None if self.heap.peek().is_none_or(|top| timer > *top) => self.first = Some(timer),
            None => self.heap.push(timer),
        }
    }

    /// The earliest wake-up, as (time, task), without taking it.
    #[inline]
    fn peek(&self) -> Option<(u64, usize)> {
        self.first
            .as_ref()
            .or_else(|| self.heap.peek())
            .map(|t| (t.at_us(), t.task))
    }

    /// Takes the earliest wake-up.
    #[inline]
    fn pop(&mut self) {
        if self.first.take().is_none() {
            self.heap.pop();
        }
    }
}

/// The virtual clock and timer queue of one run; cheap to clone.
#[derive(Clone, Debug)]
pub struct Timeline {
    state: Arc<State>,
    clock: ManualClock,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline::new()
    }
}

impl Timeline {
    /// A timeline at time 0.
    pub fn new() -> Timeline {
        Timeline {
            state: Arc::new(State::default()),
            clock: ManualClock::new(0),
        }
    }

    /// The clock a policy under test reads (milliseconds, kept in step).
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Now, in microseconds.
    pub fn now_us(&self) -> u64 {
        self.state.now_us.load(Ordering::Relaxed)
    }

    /// The task being polled (the index of its arrival), or the last one
    /// polled: inside a task's poll, whose task that is.
    pub fn task(&self) -> usize {
        self.state.current.load(Ordering::Relaxed)
    }

    /// A future that completes `delay` from now.
    pub fn sleep(&self, delay: Duration) -> Sleep {
        let delay_us = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.sleep_us(delay_us)
    }

    /// A future that completes `delay_us` microseconds from now.
    pub fn sleep_us(&self, delay_us: u64) -> Sleep {
        let at_us = self.now_us().saturating_add(delay_us);
        Sleep {
            at_us,
            armed: false,
            state: Arc::clone(&self.state),
        }
    }

    /// [`sleep_us`](Timeline::sleep_us) borrowing the timeline: for the
    /// simulator's own waits (an attempt's latency, a baseline's backoff),
    /// which live no longer than the run. A [`Sleep`] owns a share of the
    /// timeline, to be the `'static` future the policy's sleeper must return,
    /// and takes and gives it back with two atomic read-modify-writes; a wait
    /// does neither, and S0's runs wait some 700 000 times.
    #[inline]
    pub(crate) fn wait_us(&self, delay_us: u64) -> Wait<'_> {
        Wait {
            at_us: self.now_us().saturating_add(delay_us),
            armed: false,
            state: &self.state,
        }
    }

    /// Runs one future per arrival, each spawned at its arrival time (sorted,
    /// microseconds), until every one has finished or the event cap is hit.
    /// Returns the number of events processed.
    ///
    /// The futures are all of one type, so a finished future's box is kept
    /// and the next arrival's future is moved into it: a run allocates as many
    /// boxes as it has calls in flight at once, not one per call. (A caller
    /// whose futures differ in type passes boxed ones, `Pin<Box<dyn Future>>`.)
    pub fn run<F: Future<Output = ()>>(
        &self,
        arrivals: &[u64],
        mut spawn: impl FnMut(usize) -> F,
        max_events: u64,
    ) -> u64 {
        // by task (arrival index): the future's box while it runs
        let mut tasks: Vec<Option<Pin<Box<Option<F>>>>> = Vec::with_capacity(arrivals.len());
        // boxes of finished futures, emptied, for the next arrivals
        let mut spare: Vec<Pin<Box<Option<F>>>> = Vec::new();
        let mut timers = Timers::default();
        // a wake-up asked for outside a run has no task to go to
        self.state.forget_asked();
        let mut cx = Context::from_waker(Waker::noop());
        let mut next = 0_usize;
        let mut events = 0_u64;
        while events < max_events {
            let arrival = arrivals.get(next).copied();
            let due = timers.peek();
            let (at_us, index) = match (arrival, due) {
                (Some(a), Some((t, _))) if a <= t => (a, None),
                (Some(a), None) => (a, None),
                (_, Some((t, task))) => {
                    timers.pop();
                    (t, Some(task))
                }
                (None, None) => break,
            };
            let index = match index {
                Some(task) => task,
                None => {
                    let future = spawn(next);
                    let slot = match spare.pop() {
                        Some(mut slot) => {
                            slot.as_mut().set(Some(future));
                            slot
                        }
                        None => Box::pin(Some(future)),
                    };
                    tasks.push(Some(slot));
                    next += 1;
                    next - 1
                }
            };
            {
                let now_us = self.now_us().max(at_us);
                self.state.now_us.store(now_us, Ordering::Relaxed);
                self.state.current.store(index, Ordering::Relaxed);
                self.clock.set(now_us / 1_000);
            }
            events += 1;
            if let Some(entry) = tasks.get_mut(index) {
                let ready = match entry.as_mut().and_then(|slot| slot.as_mut().as_pin_mut()) {
                    Some(future) => future.poll(&mut cx).is_ready(),
                    None => false,
                };
                if ready {
                    if let Some(mut slot) = entry.take() {
                        // the finished future is dropped here, as it was when
                        // its box went with it
                        slot.as_mut().set(None);
                        spare.push(slot);
                    }
                }
            }
            timers.file(&self.state, index);
        }
        events
    }
}

/// Completes at a virtual time; asks for its wake-up on the first poll that
/// finds it early. Its wake-up goes to the task that polled it, when that
/// poll, inside [`Timeline::run`], returns. A wake-up asked for outside a
/// run goes to no task and is dropped when the next run starts: a sleep
/// first polled outside a run wakes nothing in one.
#[derive(Debug)]
pub struct Sleep {
    at_us: u64,
    armed: bool,
    state: Arc<State>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let Sleep {
            at_us,
            ref mut armed,
            ref state,
        } = *self;
        state.wait(at_us, armed)
    }
}

/// [`Sleep`] borrowing its timeline ([`Timeline::wait_us`]).
#[derive(Debug)]
pub(crate) struct Wait<'a> {
    at_us: u64,
    armed: bool,
    state: &'a State,
}

impl Future for Wait<'_> {
    type Output = ();

    #[inline(always)]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let Wait {
            at_us,
            ref mut armed,
            state,
        } = *self;
        state.wait(at_us, armed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bayesretry_policy::Clock;
    use core::cell::RefCell;

    #[test]
    fn calls_interleave_in_virtual_time() {
        let timeline = Timeline::new();
        let log = RefCell::new(Vec::new());
        let arrivals = [0, 10, 20];
        let events = timeline.run(
            &arrivals,
            |i| {
                let t = timeline.clone();
                let log = &log;
                Box::pin(async move {
                    log.borrow_mut().push((t.now_us(), i, 'a'));
                    t.sleep_us(15).await;
                    log.borrow_mut().push((t.now_us(), i, 'b'));
                })
            },
            100,
        );
        assert_eq!(events, 6);
        assert_eq!(
            log.into_inner(),
            vec![
                (0, 0, 'a'),
                (10, 1, 'a'),
                (15, 0, 'b'),
                (20, 2, 'a'),
                (25, 1, 'b'),
                (35, 2, 'b')
            ]
        );
        assert_eq!(timeline.clock().now_ms(), 0);
    }

    /// The order of events, worked out the plain way: every wake-up pushed to
    /// one heap as `(time, order asked, task)`, an arrival before the
    /// wake-ups of its time. Task `i` arrives at `arrivals[i]`, notes the time,
    /// then sleeps each delay of `scripts[i]` in turn and notes the time after
    /// each.
    fn reference(arrivals: &[u64], scripts: &[Vec<u64>]) -> Vec<(u64, usize)> {
        use alloc::collections::BinaryHeap;
        use core::cmp::Reverse;
        let mut heap = BinaryHeap::new();
        let (mut seq, mut next, mut now) = (0_u64, 0_usize, 0_u64);
        let mut steps = vec![0_usize; arrivals.len()];
        let mut log = Vec::new();
        loop {
            let due = heap.peek().map(|&Reverse(t)| t);
            let (at, task) = match (arrivals.get(next), due) {
                (Some(&a), Some((t, _, _))) if a <= t => (a, next),
                (Some(&a), None) => (a, next),
                (_, Some((t, _, task))) => {
                    heap.pop();
                    (t, task)
                }
                (None, None) => break,
            };
            if task == next {
                next += 1;
            }
            now = now.max(at);
            log.push((now, task));
            while let Some(&d) = scripts[task].get(steps[task]) {
                steps[task] += 1;
                if d > 0 {
                    heap.push(Reverse((now + d, seq, task)));
                    seq += 1;
                    break;
                }
                log.push((now, task));
            }
        }
        log
    }

    #[test]
    fn wake_ups_come_in_time_order_ties_in_the_order_asked_after_arrivals() {
        let mut word = 1_u64;
        let mut draw = |n: u64| {
            word = crate::luck::mix64(word);
            word % n
        };
        for round in 0..50 {
            let calls = 1 + draw(40) as usize;
            // coarse times, so that many fall together
            let mut arrivals: Vec<u64> = (0..calls).map(|_| draw(8) * 5).collect();
            arrivals.sort_unstable();
            let scripts: Vec<Vec<u64>> = (0..calls)
                .map(|_| (0..draw(5)).map(|_| draw(6) * 5).collect())
                .collect();
            let timeline = Timeline::new();
            let log = RefCell::new(Vec::new());
            let events = timeline.run(
                &arrivals,
                |i| {
                    let (t, log, script) = (&timeline, &log, scripts[i].clone());
                    async move {
                        log.borrow_mut().push((t.now_us(), i));
                        for d in script {
                            t.sleep_us(d).await;
                            log.borrow_mut().push((t.now_us(), i));
                        }
                    }
                },
                10_000,
            );
            let expected = reference(&arrivals, &scripts);
            let wakes = scripts.iter().flatten().filter(|&&d| d > 0).count();
            assert_eq!(events, (calls + wakes) as u64, "round {round}");
            assert_eq!(log.into_inner(), expected, "round {round}");
        }
    }

    #[test]
    fn a_sleep_to_the_end_of_time_still_wakes_its_task() {
        let timeline = Timeline::new();
        let log = RefCell::new(Vec::new());
        let events = timeline.run(
            &[0, 5],
            |i| {
                let (t, log) = (&timeline, &log);
                async move {
                    if i == 0 {
                        t.sleep(Duration::MAX).await;
                    } else {
                        // the longest wait that a clock at 5 us can still add
                        t.sleep_us(u64::MAX - 5).await;
                        t.sleep_us(1).await;
                    }
                    log.borrow_mut().push((t.now_us(), i));
                }
            },
            100,
        );
        // task 0 asked for its wake-up at the end of time first, task 1 second;
        // task 1's second sleep, at the end of time already, does not wait
        assert_eq!(events, 4);
        assert_eq!(log.into_inner(), vec![(u64::MAX, 0), (u64::MAX, 1)]);
    }

    #[test]
    fn wake_ups_asked_for_outside_a_run_wake_no_task_of_it() {
        let timeline = Timeline::new();
        let mut cx = Context::from_waker(Waker::noop());
        // two sleeps polled before any run: no task is being polled
        let mut early = (timeline.sleep_us(3), timeline.sleep_us(4));
        assert!(Pin::new(&mut early.0).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut early.1).poll(&mut cx).is_pending());
        let log = RefCell::new(Vec::new());
        let events = timeline.run(
            &[0],
            |i| {
                let (t, log) = (&timeline, &log);
                async move {
                    log.borrow_mut().push((t.now_us(), i));
                    t.sleep_us(10).await;
                    log.borrow_mut().push((t.now_us(), i));
                }
            },
            100,
        );
        // the arrival and the one wake-up the task asked for, nothing at 4 us
        assert_eq!(events, 2);
        assert_eq!(log.into_inner(), vec![(0, 0), (10, 0)]);
    }

    /// Waits for two sleeps at once: asks for two wake-ups in one poll.
    struct Both(Sleep, Sleep);

    impl Future for Both {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let a = Pin::new(&mut self.0).poll(cx).is_ready();
            let b = Pin::new(&mut self.1).poll(cx).is_ready();
            if a && b {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }

    #[test]
    fn a_task_that_waits_on_two_sleeps_is_woken_by_each() {
        let timeline = Timeline::new();
        let log = RefCell::new(Vec::new());
        let events = timeline.run(
            &[0, 12],
            |i| {
                let (t, log) = (&timeline, &log);
                async move {
                    if i == 0 {
                        Both(t.sleep_us(20), t.sleep_us(10)).await;
                    } else {
                        t.sleep_us(8).await;
                    }
                    log.borrow_mut().push((t.now_us(), i));
                }
            },
            100,
        );
        // task 0 is polled at 0, 10 (still waiting) and 20; task 1 at 12 and 20,
        // after task 0, whose wake-up at 20 was asked for first
        assert_eq!(events, 5);
        assert_eq!(log.into_inner(), vec![(20, 0), (20, 1)]);
    }
}
