//! `SharedBreaker` is the plain `Breaker` behind `&self`: the same answers for the
//! same calls, its lock-free gate never admits what the breaker would refuse, and
//! threads racing through a half-open breaker get no more than `max_probes` probes.

use std::sync::Barrier;
use std::thread;

use bayesretry_breaker::{Admission, Config, ProbeRound, SharedBreaker, State};

fn config() -> Config {
    Config::new()
        .with_open_below(0.5)
        .with_cooldown_ms(1_000)
        .with_max_probes(3)
        .with_probes_to_close(2)
}

#[test]
fn the_shared_breaker_answers_like_the_plain_one() {
    let mut plain = config().build().unwrap();
    let shared = SharedBreaker::new(plain);
    // A scripted life: outage, cooldown, probes failing, probes recovering.
    let mut now = 0_u64;
    for step in 0..3_000_u64 {
        now += 1 + step % 7;
        let success = !(200..1_500).contains(&step) && step % 5 != 0;
        let (a, b) = (plain.check(now), shared.check(now));
        assert_eq!(a, b, "check at step {step}");
        if a.is_allowed() {
            assert_eq!(
                plain.record(now, success),
                shared.record(now, success),
                "record at step {step}"
            );
        }
        assert_eq!(plain.state(), shared.state());
        let open_until = match plain.state() {
            State::Open { until_ms } => Some(until_ms),
            _ => None,
        };
        assert_eq!(shared.open_until(), open_until, "open_until at step {step}");
    }
    assert_eq!(shared.snapshot(), plain);
    assert_eq!(shared.posterior(now), plain.posterior(now));
}

#[test]
fn racing_threads_get_at_most_max_probes() {
    const THREADS: usize = 4;
    let mut breaker = config().build().unwrap();
    let mut now = 0;
    while breaker.record(now, false).is_none() {
        now += 1;
    }
    let State::Open { until_ms } = breaker.state() else {
        panic!("not open: {:?}", breaker.state());
    };
    let shared = SharedBreaker::from(breaker);
    let barrier = Barrier::new(THREADS);
    let probes: usize = thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (shared, barrier) = (&shared, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    (0..100)
                        .filter(|i| matches!(shared.check(until_ms + i), Admission::Probe { .. }))
                        .count()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(probes, 3);
}

#[test]
fn the_shared_breaker_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<SharedBreaker>();
    shared::<bayesretry_breaker::KeyedBreaker<(String, u32)>>();
}

#[test]
fn a_closed_breaker_reads_no_time_and_loses_no_success() {
    let shared = SharedBreaker::new(config().build().unwrap());
    let mut plain = config().build().unwrap();
    for _ in 0..10 {
        assert!(
            shared
                .check_with(|| panic!("a closed check read the time"))
                .is_allowed()
        );
        assert_eq!(
            shared.record_success_with(|| panic!("a closed success read the time")),
            None
        );
        assert_eq!(plain.record(0, true), None);
    }
    // the successes counted without the lock are all in the evidence
    assert_eq!(shared.posterior(0), plain.posterior(0));
    // and the next failure is judged on them, as the plain breaker judges it
    assert_eq!(shared.record(1, false), plain.record(1, false));
    assert_eq!(shared.snapshot(), plain);
}

#[test]
fn a_decaying_breaker_reads_the_time_on_a_thread_s_first_success_then_every_128th() {
    let decaying = SharedBreaker::new(config().with_half_life_ms(1_000).build().unwrap());
    // a fresh thread, so that this thread's counter starts at zero whatever
    // other tests in this process did
    let reads: Vec<u32> = thread::scope(|s| {
        s.spawn(|| {
            (1..=300)
                .filter(|_| {
                    let mut read = false;
                    let _ = decaying.record_success_with(|| {
                        read = true;
                        0
                    });
                    read
                })
                .collect()
        })
        .join()
        .unwrap()
    });
    assert_eq!(reads, [1, 129, 257]);
}

#[test]
fn successes_counted_between_folds_weigh_what_they_would_if_spread_evenly() {
    const HALF_LIFE: u64 = 1_000;
    let cfg = config().with_half_life_ms(HALF_LIFE);
    let shared = SharedBreaker::new(cfg.build().unwrap());
    // the last fold at 0 (a timed record), then 100 successes counted without
    // the time, then a fold at one half-life
    assert_eq!(shared.record(0, false), None);
    thread::scope(|s| {
        s.spawn(|| {
            let _ = shared.record_success_with(|| 0); // the thread's first: folds at 0
            for _ in 1..100 {
                let _ = shared.record_success_with(|| panic!("not a fold"));
            }
        });
    });
    let posterior = shared.posterior(HALF_LIFE);
    let prior = cfg.prior();
    // the one failure, faded one half-life: 0.5
    assert!((posterior.beta() - prior.beta() - 0.5).abs() < 1e-12);
    // one success folded at 0 faded to 0.5; 99 spread over one half-life:
    // 99 · (1 − 2^-1) / ln 2
    let spread = 99.0 * 0.5 / core::f64::consts::LN_2;
    let successes = posterior.alpha() - prior.alpha();
    assert!(
        (successes - (0.5 + spread)).abs() < 1e-9,
        "{successes} against {}",
        0.5 + spread
    );
    // ... between what they would weigh all at the start (49.5) and all at the end (99)
    assert!(successes > 0.5 + 49.5 && successes < 0.5 + 99.0);
}

#[test]
fn no_success_is_lost_when_more_threads_count_than_have_counters_of_their_own() {
    const THREADS: u64 = 24;
    const EACH: u64 = 2_000;
    let shared = SharedBreaker::new(config().build().unwrap());
    let mut plain = config().build().unwrap();
    let barrier = Barrier::new(THREADS as usize);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                barrier.wait();
                for _ in 0..EACH {
                    let _ = shared.record_success_with(|| panic!("no half-life: no time"));
                }
            });
        }
    });
    for _ in 0..THREADS * EACH {
        let _ = plain.record(0, true);
    }
    assert_eq!(shared.posterior(0), plain.posterior(0));
}

#[test]
fn a_released_probe_slot_is_handed_out_again_by_both() {
    let shared = SharedBreaker::new(config().build().unwrap());
    let mut plain = config().build().unwrap();
    // closed: releasing changes nothing
    shared.release_probe(ProbeRound::NONE);
    plain.release_probe(ProbeRound::NONE);
    assert_eq!(shared.snapshot(), plain);
    for t in 0..100 {
        assert_eq!(shared.record(t, false), plain.record(t, false));
    }
    let State::Open { until_ms } = plain.state() else {
        panic!("a hundred failures open the breaker");
    };
    // half-open: every probe slot handed out, then one released
    let mut round = ProbeRound::NONE;
    for _ in 0..3 {
        let admission = shared.check(until_ms);
        assert_eq!(admission, plain.check(until_ms));
        if let Admission::Probe { round: r, .. } = admission {
            round = r;
        }
    }
    assert!(!shared.check(until_ms).is_allowed());
    assert!(!plain.check(until_ms).is_allowed());
    shared.release_probe(round);
    plain.release_probe(round);
    assert_eq!(shared.snapshot(), plain);
    let again = Admission::Probe {
        half_opened: false,
        round,
    };
    assert_eq!(shared.check(until_ms), again);
    assert_eq!(plain.check(until_ms), again);
}

#[test]
fn a_decaying_breaker_first_used_late_weighs_its_first_successes_in_full() {
    let cfg = config().with_half_life_ms(1_000);
    let shared = SharedBreaker::new(cfg.build().unwrap());
    const LATE: u64 = 3_600_000;
    thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..3 {
                let _ = shared.record_success_with(|| LATE);
            }
        });
    });
    // three successes an hour after the breaker was made: they happened now,
    // not spread over the hour the breaker sat unused
    let successes = shared.posterior(LATE).alpha() - cfg.prior().alpha();
    assert!((successes - 3.0).abs() < 1e-12, "{successes}");
}

#[test]
fn its_failure_count_moves_with_failures_only() {
    let shared = SharedBreaker::new(Config::new().with_half_life_ms(10_000).build().unwrap());
    assert_eq!(shared.failures_recorded().get(), 0);
    let _ = shared.record(0, true);
    let _ = shared.record_success_with(|| 1);
    assert_eq!(shared.failures_recorded().get(), 0, "successes leave it");
    let _ = shared.record(2, false);
    let _ = shared.record(3, false);
    assert_eq!(shared.failures_recorded().get(), 2);
    assert_eq!(shared.run_reading(3).failures, 2);
    let _ = shared.record(4, true);
    assert_eq!(
        shared.failures_recorded().get(),
        2,
        "a success ends the run, not the count"
    );
    assert_eq!(shared.run_reading(4).failures, 0);
}
