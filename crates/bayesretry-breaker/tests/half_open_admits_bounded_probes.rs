//! What happens after the cooldown: bounded probes, closing, re-opening with a
//! longer cooldown. Manual clock throughout.
#![allow(
    clippy::panic,
    reason = "test helper: an unexpected transition must fail the calling test"
)]

use bayesretry_breaker::{Admission, Breaker, Config, State, Transition};

/// A breaker with a 1 s cooldown that opens on the 10th straight failure (a lax
/// rule, so the tests need not feed it 58 failures).
fn config() -> Config {
    Config::new()
        .with_open_below(0.5)
        .with_cooldown_ms(1_000)
        .with_max_cooldown_ms(3_000)
}

/// Records failures from `now` on, one per millisecond, until the breaker opens;
/// returns when the cooldown ends.
fn open(breaker: &mut Breaker, mut now: u64) -> u64 {
    loop {
        match breaker.record(now, false) {
            Some(Transition::Opened { until_ms }) => return until_ms,
            None => now += 1,
            Some(other) => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn the_breaker_rejects_until_the_cooldown_ends() {
    let mut breaker = config().build().unwrap();
    let until = open(&mut breaker, 0);
    assert_eq!(until, 9 + 1_000);
    assert_eq!(
        breaker.check(until - 1),
        Admission::Rejected { until_ms: until }
    );
    assert!(matches!(
        breaker.check(until),
        Admission::Probe {
            half_opened: true,
            ..
        }
    ));
}

#[test]
fn a_half_open_probe_success_closes_the_breaker() {
    let mut breaker = config().build().unwrap();
    let until = open(&mut breaker, 0);
    assert!(breaker.check(until).is_allowed());
    assert_eq!(breaker.record(until + 5, true), Some(Transition::Closed));
    assert_eq!(breaker.state(), State::Closed);
    assert!(breaker.check(until + 6).is_allowed());

    // The evidence went back to the prior: one failure does not re-open it, and
    // it takes the full count of fresh failures again.
    assert_eq!(breaker.posterior(until + 6), config().prior());
    let reopened = open(&mut breaker, until + 10);
    assert_eq!(reopened, until + 10 + 9 + 1_000);
}

#[test]
fn a_probe_failure_reopens_it_with_a_longer_cooldown() {
    let mut breaker = config().build().unwrap();
    let mut until = open(&mut breaker, 0);
    for expected_cooldown in [2_000, 3_000, 3_000] {
        assert!(breaker.check(until).is_allowed());
        let transition = breaker.record(until, false);
        assert_eq!(
            transition,
            Some(Transition::Reopened {
                until_ms: until + expected_cooldown,
                cooldown_ms: expected_cooldown,
            })
        );
        assert_eq!(breaker.cooldown_ms(), expected_cooldown);
        assert!(!breaker.check(until + expected_cooldown - 1).is_allowed());
        until += expected_cooldown;
    }
    // Closing resets the backoff: the next opening waits the first cooldown again.
    assert!(breaker.check(until).is_allowed());
    assert_eq!(breaker.record(until, true), Some(Transition::Closed));
    let next = open(&mut breaker, until + 1);
    assert_eq!(next, until + 1 + 9 + 1_000);
}

#[test]
fn only_max_probes_calls_are_admitted_while_half_open() {
    let mut breaker = config()
        .with_max_probes(3)
        .with_probes_to_close(2)
        .build()
        .unwrap();
    let until = open(&mut breaker, 0);
    let admitted: Vec<Admission> = (0..10).map(|i| breaker.check(until + i)).collect();
    let Admission::Probe {
        half_opened: true,
        round,
    } = admitted[0]
    else {
        panic!("the first check after the cooldown half-opens: {admitted:?}");
    };
    for admission in &admitted[1..3] {
        assert_eq!(
            *admission,
            Admission::Probe {
                half_opened: false,
                round
            }
        );
    }
    for rejected in &admitted[3..] {
        assert_eq!(
            *rejected,
            Admission::Rejected {
                until_ms: until + 1_000
            }
        );
    }
    // One success is not enough to close; the second is.
    assert_eq!(breaker.record(until + 20, true), None);
    assert!(!breaker.check(until + 21).is_allowed());
    assert_eq!(breaker.record(until + 30, true), Some(Transition::Closed));
}

#[test]
fn unanswered_probes_are_given_up_on_after_a_cooldown() {
    let mut breaker = config().build().unwrap();
    let until = open(&mut breaker, 0);
    let first = breaker.check(until); // this probe never reports back
    assert!(first.is_allowed());
    assert!(!breaker.check(until + 999).is_allowed());
    let second = breaker.check(until + 1_000);
    assert!(matches!(
        second,
        Admission::Probe {
            half_opened: false,
            ..
        }
    ));
    assert_ne!(second, first, "a new round");
    assert_eq!(
        breaker.state(),
        State::HalfOpen {
            since_ms: until + 1_000,
            probes: 1,
            successes: 0
        }
    );
}

#[test]
fn late_outcomes_while_open_are_evidence_only() {
    let mut breaker = config().build().unwrap();
    let until = open(&mut breaker, 0);
    let strength = breaker.posterior(10).strength();
    assert_eq!(breaker.record(10, true), None);
    assert_eq!(breaker.state(), State::Open { until_ms: until });
    assert_eq!(breaker.posterior(10).strength(), strength + 1.0);
}

#[test]
fn reset_closes_and_forgets() {
    let mut breaker = config().build().unwrap();
    open(&mut breaker, 0);
    breaker.reset(50);
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.posterior(50), config().prior());
}
