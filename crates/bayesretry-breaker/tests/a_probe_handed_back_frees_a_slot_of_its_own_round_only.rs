//! A probe that ends without an outcome hands its slot back to the round of
//! probes that gave it out, and to no other: a probe of a round given up on, or
//! of a round a failed probe ended, frees no slot of the current round, so never
//! more than `max_probes` probes are out at once — through a plain breaker, a
//! shared one and a keyed one, and for any order of checks, outcomes and
//! hand-backs.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers: a broken expectation must fail the calling test"
)]

use core::num::NonZeroUsize;

use bayesretry_breaker::{
    Admission, Breaker, Config, KeyedBreaker, ProbeRound, SharedBreaker, State, Transition,
};
use proptest::prelude::*;

/// One probe at a time, a cooldown of 1 s that does not grow, and a lax rule.
fn config() -> Config {
    Config::new()
        .with_open_below(0.5)
        .with_cooldown_ms(1_000)
        .with_max_cooldown_ms(1_000)
}

/// A breaker opened by failures from 0 on, and when its cooldown ends.
fn open_breaker() -> (Breaker, u64) {
    let mut breaker = config().build().unwrap();
    let mut now = 0;
    loop {
        if let Some(Transition::Opened { until_ms }) = breaker.record(now, false) {
            return (breaker, until_ms);
        }
        now += 1;
    }
}

fn round_of(admission: Admission) -> ProbeRound {
    match admission {
        Admission::Probe { round, .. } => round,
        other => panic!("not a probe: {other:?}"),
    }
}

#[test]
fn a_probe_of_a_round_given_up_frees_no_slot_of_the_next() {
    let (mut breaker, t) = open_breaker();
    let hung = round_of(breaker.check(t)); // never reports back
    let current = round_of(breaker.check(t + 1_000)); // the round is given up
    assert_ne!(hung, current);
    breaker.release_probe(hung); // its call is dropped at last
    assert!(
        !breaker.check(t + 1_001).is_allowed(),
        "a second probe out with max_probes = 1: {:?}",
        breaker.state()
    );
    breaker.release_probe(current);
    assert_eq!(round_of(breaker.check(t + 1_002)), current);
}

#[test]
fn a_probe_of_a_round_a_failed_probe_ended_frees_no_slot_of_the_next() {
    let mut breaker = config().with_max_probes(2).build().unwrap();
    let mut now = 0;
    let t = loop {
        if let Some(Transition::Opened { until_ms }) = breaker.record(now, false) {
            break until_ms;
        }
        now += 1;
    };
    let slow = round_of(breaker.check(t));
    let _ = round_of(breaker.check(t));
    // the other probe fails: open again, then a new round of two
    assert!(matches!(
        breaker.record(t + 1, false),
        Some(Transition::Reopened { .. })
    ));
    let next = t + 1 + 1_000;
    let current = round_of(breaker.check(next));
    let _ = round_of(breaker.check(next));
    breaker.release_probe(slow); // the slow probe of the first round ends in a 404
    assert!(!breaker.check(next).is_allowed());
    assert_eq!(
        breaker.state(),
        State::HalfOpen {
            since_ms: next,
            probes: 2,
            successes: 0
        }
    );
    breaker.release_probe(current);
    assert!(breaker.check(next).is_allowed());
}

#[test]
fn a_shared_breaker_frees_no_slot_for_a_stale_probe() {
    let (breaker, t) = open_breaker();
    let shared = SharedBreaker::new(breaker);
    let hung = round_of(shared.check(t));
    let current = round_of(shared.check(t + 1_000));
    shared.release_probe(hung);
    assert!(!shared.check(t + 1_001).is_allowed());
    shared.release_probe(current);
    assert_eq!(round_of(shared.check(t + 1_002)), current);
}

/// Records failures for `key` from `now` on until its breaker opens; returns
/// when the cooldown ends.
fn open_key(keyed: &KeyedBreaker<&'static str>, key: &'static str, mut now: u64) -> u64 {
    loop {
        if let Some(Transition::Opened { until_ms }) = keyed.record(&key, now, false) {
            return until_ms;
        }
        now += 1;
    }
}

#[test]
fn a_keyed_breaker_frees_no_slot_for_a_stale_probe() {
    let keyed = KeyedBreaker::new(config().build().unwrap(), NonZeroUsize::new(8).unwrap());
    let t = open_key(&keyed, "a", 0);
    let hung = round_of(keyed.check(&"a", t));
    let current = round_of(keyed.check(&"a", t + 1_000));
    keyed.release_probe(&"a", hung);
    assert!(!keyed.check(&"a", t + 1_001).is_allowed());
    keyed.release_probe(&"b", current); // another key's: nothing
    assert!(!keyed.check(&"a", t + 1_001).is_allowed());
    keyed.release_probe(&"a", current);
    assert_eq!(round_of(keyed.check(&"a", t + 1_002)), current);
}

#[test]
fn a_probe_of_an_evicted_key_frees_no_slot_when_the_key_comes_back() {
    let keyed = KeyedBreaker::new(config().build().unwrap(), NonZeroUsize::new(1).unwrap());
    let t = open_key(&keyed, "a", 0);
    let out = round_of(keyed.check(&"a", t)); // never reports back
    // "b" evicts "a"; "a" comes back afresh, opens and half-opens again
    let _ = keyed.record(&"b", t, true);
    assert_eq!(keyed.state(&"a"), None);
    let back = open_key(&keyed, "a", t);
    let fresh = round_of(keyed.check(&"a", back));
    assert_ne!(fresh, out, "a key that comes back numbers its rounds on");
    keyed.release_probe(&"a", out);
    assert!(!keyed.check(&"a", back).is_allowed());
    // and the same after a removal
    assert!(keyed.remove(&"a").is_some());
    let again = open_key(&keyed, "a", back);
    assert_ne!(round_of(keyed.check(&"a", again)), fresh);
    keyed.release_probe(&"a", fresh);
    assert!(!keyed.check(&"a", again).is_allowed());
}

/// What a caller does with a half-open breaker.
#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    /// Check; an admitted probe goes out.
    Check,
    /// The `n`-th oldest probe out (modulo how many) reports.
    Report(usize, bool),
    /// The `n`-th oldest probe out ends without an outcome: its slot is handed back.
    HandBack(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            2 => (0_u64..700).prop_map(Op::Advance),
            4 => Just(Op::Check),
            1 => (any::<usize>(), prop::bool::weighted(0.2)).prop_map(|(n, s)| Op::Report(n, s)),
            3 => any::<usize>().prop_map(Op::HandBack),
        ],
        1..200,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Probes out of the current round — admitted in it, neither reported nor
    /// handed back — never number more than `max_probes`.
    #[test]
    fn never_more_than_max_probes_are_out_of_one_round(
        max_probes in 1_u32..4,
        ops in ops(),
    ) {
        let mut breaker = config().with_max_probes(max_probes).build().unwrap();
        let mut now = 0;
        while breaker.record(now, false).is_none() {
            now += 1;
        }
        // the probes out, each with its round, and the latest round admitted
        let mut out: Vec<ProbeRound> = Vec::new();
        let mut latest = ProbeRound::NONE;
        for op in ops {
            match op {
                Op::Advance(ms) => now += ms,
                Op::Check => {
                    if let Admission::Probe { round, .. } = breaker.check(now) {
                        prop_assert!(round.get() >= latest.get(), "rounds are numbered in order");
                        latest = round;
                        out.push(round);
                    }
                }
                Op::Report(n, success) if !out.is_empty() => {
                    let _ = out.remove(n % out.len());
                    let _ = breaker.record(now, success);
                }
                Op::HandBack(n) if !out.is_empty() => {
                    breaker.release_probe(out.remove(n % out.len()));
                }
                Op::Report(..) | Op::HandBack(_) => {}
            }
            match breaker.state() {
                State::HalfOpen { probes, .. } => {
                    // a round begins with a probe admitted: the latest is the current one
                    let current = out.iter().filter(|&&round| round == latest).count();
                    let current = u32::try_from(current).unwrap();
                    prop_assert!(
                        current <= max_probes,
                        "{current} probes of round {latest:?} out, max {max_probes}"
                    );
                    prop_assert!(current <= probes, "{current} out, {probes} counted");
                }
                State::Closed => {
                    // what is still out are ordinary calls now; open it again
                    out.clear();
                    while breaker.record(now, false).is_none() {
                        now += 1;
                    }
                }
                _ => {}
            }
        }
    }
}
