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
use core::cmp::Reverse;
use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bayesretry_policy::ManualClock;

/// What a run's executor and its sleeps share.
///
/// Only the executor moves the clock and sets the task being polled, so those
/// are plain atomics read without a lock (every attempt reads the time); the
/// timer queue, which sleeps push to, is behind the mutex (the policy's
/// sleeper must be `Send`, so the sleeps cannot share a `RefCell`). The
/// executor polls every future on its own thread, and the clock orders no
/// other memory, so `Relaxed` is enough.
#[derive(Debug, Default)]
struct State {
    now_us: AtomicU64,
    current: AtomicUsize,
    timers: Mutex<Timers>,
}

/// The pending wake-ups, earliest first, ties in registration order.
#[derive(Debug, Default)]
struct Timers {
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
}

impl State {
    fn timers(&self) -> std::sync::MutexGuard<'_, Timers> {
        self.timers.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// Runs one future per arrival, each spawned at its arrival time (sorted,
    /// microseconds), until every one has finished or the event cap is hit.
    /// Returns the number of events processed.
    pub fn run<'a>(
        &self,
        arrivals: &[u64],
        mut spawn: impl FnMut(usize) -> Pin<Box<dyn Future<Output = ()> + 'a>>,
        max_events: u64,
    ) -> u64 {
        let mut tasks: Vec<Option<Pin<Box<dyn Future<Output = ()> + 'a>>>> =
            Vec::with_capacity(arrivals.len());
        let mut cx = Context::from_waker(Waker::noop());
        let mut next = 0_usize;
        let mut events = 0_u64;
        while events < max_events {
            let arrival = arrivals.get(next).copied();
            let (at_us, task) = {
                let mut timers = self.state.timers();
                let due = timers.heap.peek().map(|Reverse(t)| *t);
                match (arrival, due) {
                    (Some(a), Some((t, _, _))) if a <= t => (a, None),
                    (Some(a), None) => (a, None),
                    (_, Some((t, _, task))) => {
                        timers.heap.pop();
                        (t, Some(task))
                    }
                    (None, None) => break,
                }
            };
            let index = if let Some(task) = task {
                task
            } else {
                tasks.push(Some(spawn(next)));
                next += 1;
                next - 1
            };
            {
                let now_us = self.now_us().max(at_us);
                self.state.now_us.store(now_us, Ordering::Relaxed);
                self.state.current.store(index, Ordering::Relaxed);
                self.clock.set(now_us / 1_000);
            }
            events += 1;
            if let Some(slot) = tasks.get_mut(index) {
                if let Some(future) = slot.as_mut() {
                    if future.as_mut().poll(&mut cx).is_ready() {
                        *slot = None;
                    }
                }
            }
        }
        events
    }
}

/// Completes at a virtual time; registers its wake-up on the first poll.
#[derive(Debug)]
pub struct Sleep {
    at_us: u64,
    armed: bool,
    state: Arc<State>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.state.now_us.load(Ordering::Relaxed) >= self.at_us {
            return Poll::Ready(());
        }
        if !self.armed {
            let task = self.state.current.load(Ordering::Relaxed);
            let mut timers = self.state.timers();
            let seq = timers.seq;
            timers.seq += 1;
            timers.heap.push(Reverse((self.at_us, seq, task)));
            drop(timers);
            self.armed = true;
        }
        Poll::Pending
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
}
