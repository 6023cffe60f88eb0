//! The iterator form owns a SplitMix64 generator seeded by the caller: one seed,
//! one sequence of delays, on every run. Its steps are the pure `delay_after`
//! function, and it ends after `max_retries` delays when that is set.

use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};

#[test]
fn the_same_seed_gives_the_same_delays_and_another_seed_others() {
    let backoff = Config::new().with_max_retries(10).build().unwrap();
    let a: Vec<Duration> = backoff.delays(7).collect();
    let b: Vec<Duration> = backoff.delays(7).collect();
    let c: Vec<Duration> = backoff.delays(8).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 10);
}

#[test]
fn a_cloned_iterator_continues_identically() {
    let backoff = Config::new().build().unwrap();
    let mut delays = backoff.delays(3);
    delays.nth(4);
    let fork = delays.clone();
    assert!(delays.take(20).eq(fork.take(20)));
}

/// SplitMix64 as published (Steele, Lea and Flood 2014), written out here so that
/// the test pins the generator the iterator is documented to use.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let z = (*state ^ (*state >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn each_step_is_delay_after_with_the_next_splitmix64_word() {
    let jitters = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Proportional(0.5),
        Jitter::Hashed { key: 3 },
    ];
    for jitter in jitters {
        for factor in [1.0, 1.5, 2.0, 3.0] {
            let backoff = Config::new()
                .with_factor(factor)
                .with_base_delay(Duration::from_millis(300))
                .with_max_delay(Duration::from_secs(20))
                .with_jitter(jitter)
                .build()
                .unwrap();
            let mut state = 99;
            let mut previous = backoff.config().base_delay();
            // far past the cap, where the iterator stops recomputing the schedule
            for (i, delay) in backoff.delays(99).take(60).enumerate() {
                let attempt = i as u32 + 1;
                let expected = backoff.delay_after(attempt, previous, splitmix64(&mut state));
                assert_eq!(
                    delay, expected,
                    "{jitter:?}, factor {factor}, attempt {attempt}"
                );
                previous = delay;
            }
        }
    }
}

#[test]
fn without_jitter_the_iterator_and_the_pure_function_agree() {
    let backoff = Config::new()
        .with_factor(1.7)
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    for (i, delay) in backoff.delays(0).take(40).enumerate() {
        assert_eq!(delay, backoff.delay(i as u32 + 1, 0));
    }
}

#[test]
fn it_stops_after_max_retries_and_stays_stopped() {
    let backoff = Config::new().with_max_retries(3).build().unwrap();
    let mut delays = backoff.delays(1);
    assert_eq!(delays.size_hint(), (3, Some(3)));
    assert!(delays.next().is_some());
    assert_eq!(delays.size_hint(), (2, Some(2)));
    assert!(delays.next().is_some() && delays.next().is_some());
    assert_eq!(delays.next(), None);
    assert_eq!(delays.next(), None);
    assert_eq!(delays.retries(), 3);

    let none = Config::new().with_max_retries(0).build().unwrap();
    assert_eq!(none.delays(1).count(), 0);
}

#[test]
fn decorrelated_delays_wander_upward_from_the_base() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_secs(3600))
        .with_jitter(Jitter::Decorrelated)
        .build()
        .unwrap();
    // with no cap in reach, the typical delay grows by about 1.5x per step
    let late: Duration = backoff.delays(9).skip(20).take(10).sum();
    assert!(late > Duration::from_secs(10), "{late:?}");
}
