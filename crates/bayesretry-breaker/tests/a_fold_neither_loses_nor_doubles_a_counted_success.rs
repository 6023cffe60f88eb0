//! A `SharedBreaker` folds the successes its threads counted without the lock
//! into its evidence at its next locked operation. A fold reads only the
//! counters handed out to threads so far (and the shared one), so these tests
//! hand counters out around folds — before, after and during them, on several
//! breakers, past the threads that get a counter of their own — and check
//! that every success counted before a fold is in it, once.

use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::thread;

use bayesretry_breaker::{Config, SharedBreaker};

/// More threads than have a counter of their own (16), whatever other tests
/// in this process took already.
const THREADS: u64 = 24;

fn config() -> Config {
    Config::new().with_open_below(0.5).with_cooldown_ms(1_000)
}

/// The successes folded into `shared`'s evidence (none decays: no half-life).
fn folded(shared: &SharedBreaker) -> f64 {
    shared.posterior(0).alpha() - config().prior().alpha()
}

#[test]
fn a_thread_that_takes_its_counter_after_a_fold_is_read_by_the_next_one() {
    let shared = SharedBreaker::new(config().build().unwrap());
    assert_eq!(folded(&shared), 0.0);
    // one thread at a time, each new to the counters, each joined (so its
    // successes happen before the fold that follows)
    for n in 1..=THREADS {
        thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..3 {
                    let _ = shared.record_success_with(|| panic!("no half-life: no time"));
                }
            });
        });
        assert_eq!(folded(&shared), (3 * n) as f64, "after thread {n}");
    }
}

#[test]
fn a_counter_taken_on_one_breaker_is_read_by_another_s_fold() {
    let first = SharedBreaker::new(config().build().unwrap());
    let second = SharedBreaker::new(config().build().unwrap());
    // the second breaker folds before any of the threads below took a counter
    assert_eq!(folded(&second), 0.0);
    let gate = Barrier::new(2);
    thread::scope(|s| {
        s.spawn(|| {
            // the thread takes its counter counting on the first breaker ...
            let _ = first.record_success_with(|| 0);
            gate.wait();
            // ... and counts on the second only after that breaker folded
            gate.wait();
            let _ = second.record_success_with(|| 0);
            let _ = second.record_success_with(|| 0);
        });
        gate.wait();
        assert_eq!(folded(&second), 0.0);
        gate.wait();
    });
    assert_eq!(folded(&first), 1.0);
    assert_eq!(folded(&second), 2.0);
}

#[test]
fn folds_racing_threads_that_take_their_counters_lose_and_double_nothing() {
    const EACH: u64 = 2_000;
    for round in 0..4 {
        let shared = SharedBreaker::new(config().build().unwrap());
        let counting = AtomicBool::new(true);
        let start = Barrier::new(THREADS as usize + 1);
        thread::scope(|s| {
            // a thread that folds without pause while the others count
            let folder = s.spawn(|| {
                start.wait();
                let mut seen = 0.0;
                while counting.load(Ordering::Acquire) {
                    let now = folded(&shared);
                    // the evidence only grows, by whole successes
                    assert!(now >= seen && now.fract() == 0.0, "{seen} then {now}");
                    seen = now;
                }
            });
            let counters: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        for _ in 0..EACH {
                            let _ = shared.record_success_with(|| 0);
                        }
                    })
                })
                .collect();
            for counter in counters {
                counter.join().unwrap();
            }
            counting.store(false, Ordering::Release);
            folder.join().unwrap();
        });
        assert_eq!(folded(&shared), (THREADS * EACH) as f64, "round {round}");
        // and a fold later finds nothing more
        assert_eq!(folded(&shared), (THREADS * EACH) as f64, "round {round}");
    }
}
