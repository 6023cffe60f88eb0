//! `SharedBreaker` is the plain `Breaker` behind `&self`: the same answers for the
//! same calls, its lock-free gate never admits what the breaker would refuse, and
//! threads racing through a half-open breaker get no more than `max_probes` probes.

use std::sync::Barrier;
use std::thread;

use bayesretry_breaker::{Admission, Config, SharedBreaker, State};

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

    // with a half-life each success is timed, so the time is read
    let decaying = SharedBreaker::new(config().with_half_life_ms(1_000).build().unwrap());
    let mut read = false;
    let _ = decaying.record_success_with(|| {
        read = true;
        0
    });
    assert!(read);
}

#[test]
fn a_released_probe_slot_is_handed_out_again_by_both() {
    let shared = SharedBreaker::new(config().build().unwrap());
    let mut plain = config().build().unwrap();
    // closed: releasing changes nothing
    shared.release_probe();
    plain.release_probe();
    assert_eq!(shared.snapshot(), plain);
    for t in 0..100 {
        assert_eq!(shared.record(t, false), plain.record(t, false));
    }
    let State::Open { until_ms } = plain.state() else {
        panic!("a hundred failures open the breaker");
    };
    // half-open: every probe slot handed out, then one released
    for _ in 0..3 {
        assert_eq!(shared.check(until_ms), plain.check(until_ms));
    }
    assert!(!shared.check(until_ms).is_allowed());
    assert!(!plain.check(until_ms).is_allowed());
    shared.release_probe();
    plain.release_probe();
    assert_eq!(shared.snapshot(), plain);
    assert_eq!(
        shared.check(until_ms),
        Admission::Probe { half_opened: false }
    );
    assert_eq!(
        plain.check(until_ms),
        Admission::Probe { half_opened: false }
    );
}
