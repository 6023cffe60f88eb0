//! [`Timer`]: the sleep of the default async sleeper outside tokio, on one
//! helper thread for the whole process.
//!
//! A thread per sleep would do, for a call that retries now and then; but a
//! service outside tokio that sees an endpoint fail sleeps many calls at once,
//! each for up to a server's Retry-After, and a call dropped in its sleep (an
//! outer timeout) would leave its thread sleeping to the end. So every sleep
//! is a deadline in one queue, soonest first, and one thread waits for the
//! soonest and wakes the tasks whose time has come. A dropped sleep takes its
//! waker out of the queue at once; its deadline is discarded when it comes up
//! (or sooner, when such leftovers outnumber the sleeps still waiting).

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

/// The longest sleep: a longer one (a server's "go away for good") sleeps
/// this long, which no call waits out.
const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);

/// Leftover deadlines (of sleeps dropped before their time) are discarded
/// once they are more than this many, and more than the sleeps waiting.
const LEFTOVERS: usize = 64;

/// The sleeps waiting, and their deadlines.
#[derive(Default)]
struct Queue {
    /// Deadlines, soonest first, each with the number of its sleep; a number
    /// not in `wakers` is a sleep dropped before its time.
    due: BinaryHeap<Reverse<(Instant, u64)>>,
    /// The waker of each sleep still waiting, by its number.
    wakers: HashMap<u64, Waker>,
    /// The next sleep's number.
    next: u64,
}

/// The queue, and the signal that its soonest deadline moved up.
struct Shared {
    queue: Mutex<Queue>,
    sooner: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // no code panics while holding it; the queue is valid between any
        // two statements
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The helper thread: wakes each sleep whose deadline has come, then
    /// waits for the next deadline or a sooner one. It runs for the life of
    /// the process; each round pops only deadlines that are due.
    fn run(&self) {
        let mut queue = self.lock();
        loop {
            let now = Instant::now();
            let mut woken = Vec::new();
            while let Some(&Reverse((at, number))) = queue.due.peek() {
                if at > now {
                    break;
                }
                queue.due.pop();
                if let Some(waker) = queue.wakers.remove(&number) {
                    woken.push(waker);
                }
            }
            if !woken.is_empty() {
                // woken without the lock: a waker may run the task at once
                drop(queue);
                woken.into_iter().for_each(Waker::wake);
                queue = self.lock();
                continue;
            }
            queue = match queue.due.peek() {
                Some(&Reverse((at, _))) => {
                    self.sooner
                        .wait_timeout(queue, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .sooner
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

/// The process's timer, its thread started at the first sleep; `None` if the
/// thread could not be started (a sleep then ends at once: the retry goes out
/// without its delay rather than never).
fn shared() -> Option<&'static Shared> {
    static SHARED: OnceLock<Option<&'static Shared>> = OnceLock::new();
    *SHARED.get_or_init(|| {
        let shared: &'static Shared = alloc::boxed::Box::leak(alloc::boxed::Box::new(Shared {
            queue: Mutex::new(Queue::default()),
            sooner: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("bayesretry-timer".into())
            .spawn(move || shared.run())
            .ok()
            .map(|_| shared)
    })
}

/// A sleep of `delay` on the process's timer thread.
pub(crate) struct Timer {
    delay: Duration,
    /// The deadline, set at the first poll.
    at: Option<Instant>,
    /// The sleep's number in the queue, once it waits there.
    number: Option<u64>,
}

impl Timer {
    pub(crate) fn new(delay: Duration) -> Timer {
        Timer {
            delay: delay.min(LONGEST),
            at: None,
            number: None,
        }
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.delay.is_zero() {
            return Poll::Ready(());
        }
        let now = Instant::now();
        let delay = self.delay;
        let at = *self
            .at
            .get_or_insert_with(|| now.checked_add(delay).unwrap_or(now));
        let Some(shared) = shared().filter(|_| at > now) else {
            self.forget();
            return Poll::Ready(());
        };
        let mut queue = shared.lock();
        match self.number {
            Some(number) => match queue.wakers.get_mut(&number) {
                Some(waker) => waker.clone_from(cx.waker()),
                // woken already: the deadline has passed since `now`
                None => {
                    drop(queue);
                    self.number = None;
                    return Poll::Ready(());
                }
            },
            None => {
                let number = queue.next;
                queue.next = queue.next.wrapping_add(1);
                let sooner = queue
                    .due
                    .peek()
                    .is_none_or(|&Reverse((first, _))| at < first);
                queue.due.push(Reverse((at, number)));
                queue.wakers.insert(number, cx.waker().clone());
                drop(queue);
                self.number = Some(number);
                if sooner {
                    shared.sooner.notify_one();
                }
            }
        }
        Poll::Pending
    }
}

impl Timer {
    /// Takes the sleep out of the queue, if it waits there.
    fn forget(&mut self) {
        let Some(number) = self.number.take() else {
            return;
        };
        let Some(shared) = shared() else {
            return;
        };
        let mut queue = shared.lock();
        queue.wakers.remove(&number);
        if queue.due.len() > LEFTOVERS && queue.due.len() > 2 * queue.wakers.len() {
            let Queue { due, wakers, .. } = &mut *queue;
            due.retain(|Reverse((_, number))| wakers.contains_key(number));
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.forget();
    }
}

#[cfg(test)]
mod tests {
    use super::Timer;
    use alloc::sync::Arc;
    use alloc::task::Wake;
    use alloc::vec::Vec;
    use core::future::Future;
    use core::pin::Pin;
    use core::task::{Context, Poll, Waker};
    use core::time::Duration;
    use std::sync::Mutex;
    use std::thread::Thread;

    /// Wakes the polling thread and notes which sleep was woken.
    struct Note {
        thread: Thread,
        index: usize,
        woken: Arc<Mutex<Vec<usize>>>,
    }

    impl Wake for Note {
        fn wake(self: Arc<Self>) {
            self.woken
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(self.index);
            self.thread.unpark();
        }
    }

    #[test]
    fn sleeps_end_soonest_first_and_a_dropped_one_is_never_woken() {
        let woken = Arc::new(Mutex::new(Vec::new()));
        // three sleeps of 30, 10 and 20 ms, and a fourth of 15 ms dropped
        let mut timers: Vec<(usize, Pin<Box<Timer>>)> = [30, 10, 20, 15]
            .into_iter()
            .enumerate()
            .map(|(i, ms)| (i, Box::pin(Timer::new(Duration::from_millis(ms)))))
            .collect();
        let wakers: Vec<Waker> = (0..4)
            .map(|index| {
                Waker::from(Arc::new(Note {
                    thread: std::thread::current(),
                    index,
                    woken: Arc::clone(&woken),
                }))
            })
            .collect();
        for (i, timer) in &mut timers {
            let mut cx = Context::from_waker(&wakers[*i]);
            assert!(timer.as_mut().poll(&mut cx).is_pending());
        }
        timers.retain(|(i, _)| *i != 3);
        let mut done = Vec::new();
        // bounded: each round ends a sleep or parks until a wake (or 100 ms)
        for _ in 0..1_000 {
            if timers.is_empty() {
                break;
            }
            std::thread::park_timeout(Duration::from_millis(100));
            timers.retain_mut(|(i, timer)| {
                let mut cx = Context::from_waker(&wakers[*i]);
                let ready = timer.as_mut().poll(&mut cx).is_ready();
                if ready {
                    done.push(*i);
                }
                !ready
            });
        }
        assert_eq!(done.len(), 3, "{done:?}");
        let woken = woken
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        assert_eq!(woken, [1, 2, 0], "woken soonest first");
        assert!(!woken.contains(&3), "a dropped sleep is never woken");
    }

    #[test]
    fn sleeps_dropped_before_their_time_leave_no_waker_and_few_deadlines() {
        let waker = Waker::from(Arc::new(Note {
            thread: std::thread::current(),
            index: 0,
            woken: Arc::default(),
        }));
        let mut cx = Context::from_waker(&waker);
        let mut timers: Vec<Pin<Box<Timer>>> = (0..200)
            .map(|_| Box::pin(Timer::new(Duration::from_secs(3_600))))
            .collect();
        for timer in &mut timers {
            assert!(timer.as_mut().poll(&mut cx).is_pending());
        }
        let numbers: Vec<u64> = timers.iter().filter_map(|t| t.number).collect();
        assert_eq!(numbers.len(), 200);
        drop(timers);
        let queue = super::shared().unwrap().lock();
        assert!(numbers.iter().all(|n| !queue.wakers.contains_key(n)));
        // the leftovers were discarded as they came to outnumber the sleeps
        // (other tests' few sleeps may be in the queue too)
        assert!(
            queue.due.len() <= super::LEFTOVERS + 8,
            "{}",
            queue.due.len()
        );
    }

    #[test]
    fn a_sleep_ends_once_its_delay_has_passed_and_not_before() {
        let start = std::time::Instant::now();
        let woken = Arc::new(Mutex::new(Vec::new()));
        let waker = Waker::from(Arc::new(Note {
            thread: std::thread::current(),
            index: 0,
            woken,
        }));
        let mut cx = Context::from_waker(&waker);
        let mut timer = Box::pin(Timer::new(Duration::from_millis(5)));
        let mut polls = 0;
        // bounded: a wake comes within the delay's order of magnitude
        while timer.as_mut().poll(&mut cx) == Poll::Pending && polls < 1_000 {
            polls += 1;
            std::thread::park_timeout(Duration::from_millis(50));
        }
        assert!(start.elapsed() >= Duration::from_millis(5));
        assert!(polls < 1_000);
    }
}
