//! The value-paced cooldown (`Config::with_value_paced_cooldown`): an open
//! breaker waits `sqrt(2 · D / (r · (V/c − 1)))` before each probe, `r` being the
//! call rate it measured before opening and `D` the time open plus a half-life.
//! Manual clock throughout.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    reason = "test code: an unexpected transition or a rejected known-good config must fail the test"
)]

use bayesretry_breaker::{Breaker, Config, Error, State, Transition};

const HALF_LIFE_MS: u64 = 10_000;

/// A breaker that opens below 0.5, paced for a success worth `value` attempts,
/// with cooldowns between 1 ms and 10 s.
fn paced(value: f64) -> Breaker {
    Config::new()
        .with_open_below(0.5)
        .with_half_life_ms(HALF_LIFE_MS)
        .with_cooldown_ms(1)
        .with_max_cooldown_ms(10_000)
        .with_value_paced_cooldown(value)
        .build()
        .unwrap()
}

/// A minute of healthy traffic at `per_s` calls a second, then failures at the
/// same rate until the breaker opens; the time it opened and its cooldown.
fn open_after_traffic(breaker: &mut Breaker, per_s: u64) -> (u64, u64) {
    let gap = 1_000 / per_s;
    let mut now = 0;
    while now < 60_000 {
        assert_eq!(breaker.record(now, true), None);
        now += gap;
    }
    loop {
        match breaker.record(now, false) {
            Some(Transition::Opened { until_ms }) => return (now, until_ms - now),
            None => now += gap,
            Some(other) => panic!("unexpected {other:?}"),
        }
    }
}

/// The cooldown the rule gives for a measured rate `r` (per ms), `value` and
/// `open_for_ms`.
fn rule(value: f64, r: f64, open_for_ms: u64) -> f64 {
    (2.0 * (open_for_ms + HALF_LIFE_MS) as f64 / (r * (value - 1.0))).sqrt()
}

#[test]
fn the_first_cooldown_follows_the_square_root_rule_at_the_measured_rate() {
    let mut breaker = paced(10.0);
    let (_, cooldown) = open_after_traffic(&mut breaker, 10);
    // 10 calls a second is 0.01 per ms; the decayed count measures it to within
    // the ripple of one call's weight
    let expected = rule(10.0, 0.01, 0);
    assert!(
        (cooldown as f64 - expected).abs() < 0.05 * expected,
        "{cooldown} vs {expected}"
    );
    assert_eq!(breaker.cooldown_ms(), cooldown);
}

#[test]
fn a_dearer_success_is_probed_for_sooner() {
    let (_, cheap) = open_after_traffic(&mut paced(2.0), 10);
    let (_, dear) = open_after_traffic(&mut paced(100.0), 10);
    assert!(dear < cheap, "{dear} vs {cheap}");
    // sqrt((100 − 1) / (2 − 1)) ≈ 9.95 times sooner
    let ratio = cheap as f64 / dear as f64;
    assert!((ratio - 99_f64.sqrt()).abs() < 0.5, "{ratio}");
}

#[test]
fn a_busier_endpoint_is_probed_sooner_in_time() {
    let (_, quiet) = open_after_traffic(&mut paced(10.0), 1);
    let (_, busy) = open_after_traffic(&mut paced(10.0), 100);
    assert!(busy < quiet, "{busy} vs {quiet}");
    // a hundred times the traffic: a tenth of the wait
    let ratio = quiet as f64 / busy as f64;
    assert!((ratio - 10.0).abs() < 1.0, "{ratio}");
}

#[test]
fn the_cooldown_grows_with_the_time_open_and_stops_at_the_ceiling() {
    let mut breaker = paced(10.0);
    let (opened, first) = open_after_traffic(&mut breaker, 10);
    let mut until = opened + first;
    let mut previous = first;
    let mut ceiling_reached = false;
    for _ in 0..10_000 {
        assert!(breaker.check(until).is_allowed(), "a probe at {until}");
        let Some(Transition::Reopened {
            until_ms,
            cooldown_ms,
        }) = breaker.record(until, false)
        else {
            panic!("a failed probe reopens the breaker");
        };
        assert!(cooldown_ms >= previous, "{cooldown_ms} after {previous}");
        assert!(cooldown_ms <= 10_000);
        let expected = rule(10.0, 0.01, until - opened).min(10_000.0);
        assert!(
            (cooldown_ms as f64 - expected).abs() < 0.05 * expected,
            "{cooldown_ms} vs {expected} after {} ms open",
            until - opened
        );
        ceiling_reached |= cooldown_ms == 10_000;
        previous = cooldown_ms;
        until = until_ms;
        if ceiling_reached {
            break;
        }
    }
    assert!(ceiling_reached, "the ceiling is reached after long enough");
    // a probe that succeeds still closes it at once
    assert!(breaker.check(until).is_allowed());
    assert_eq!(breaker.record(until, true), Some(Transition::Closed));
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_success_worth_no_more_than_an_attempt_waits_the_longest_cooldown() {
    let (_, cooldown) = open_after_traffic(&mut paced(1.0), 10);
    assert_eq!(cooldown, 10_000);
}

#[test]
fn the_floor_holds_for_a_very_dear_success() {
    let mut breaker = Config::new()
        .with_open_below(0.5)
        .with_half_life_ms(HALF_LIFE_MS)
        .with_cooldown_ms(250)
        .with_max_cooldown_ms(10_000)
        .with_value_paced_cooldown(1e9)
        .build()
        .unwrap();
    let (_, cooldown) = open_after_traffic(&mut breaker, 100);
    assert_eq!(cooldown, 250);
}

#[test]
fn without_a_half_life_the_fixed_schedule_applies() {
    let mut breaker = Config::new()
        .with_open_below(0.5)
        .with_cooldown_ms(1_000)
        .with_max_cooldown_ms(3_000)
        .with_value_paced_cooldown(10.0)
        .build()
        .unwrap();
    let (opened, cooldown) = open_after_traffic(&mut breaker, 10);
    assert_eq!(cooldown, 1_000);
    let until = opened + cooldown;
    assert!(breaker.check(until).is_allowed());
    assert_eq!(
        breaker.record(until, false),
        Some(Transition::Reopened {
            until_ms: until + 2_000,
            cooldown_ms: 2_000
        })
    );
}

#[test]
fn a_success_value_that_is_not_a_positive_number_is_rejected() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = Config::new()
            .with_value_paced_cooldown(bad)
            .build()
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidSuccessValue(v) if v.to_bits() == bad.to_bits()),
            "{err:?}"
        );
    }
    assert_eq!(
        Config::new()
            .with_value_paced_cooldown(10.0)
            .without_value_paced_cooldown()
            .value_paced_cooldown(),
        None
    );
}

/// Probes the open breaker at the end of its cooldown with `success`; the
/// time of the probe.
fn probe(breaker: &mut Breaker, success: bool) -> (u64, Option<Transition>) {
    let State::Open { until_ms } = breaker.state() else {
        panic!("open, not {:?}", breaker.state());
    };
    assert!(breaker.check(until_ms).is_allowed());
    (until_ms, breaker.record(until_ms, success))
}

/// Failures at ten a second from `now` until the breaker opens again; the
/// cooldown it opened with.
fn reopen(breaker: &mut Breaker, mut now: u64) -> u64 {
    loop {
        now += 100;
        if let Some(Transition::Opened { until_ms }) = breaker.record(now, false) {
            return until_ms - now;
        }
    }
}

#[test]
fn a_reopening_soon_after_a_lucky_probe_continues_the_outage() {
    let mut breaker = paced(10.0);
    let (_, first) = open_after_traffic(&mut breaker, 10);
    // a minute of failed probes: the cooldown has grown
    let mut grown = first;
    for _ in 0..10_000 {
        let (at, transition) = probe(&mut breaker, false);
        let Some(Transition::Reopened { cooldown_ms, .. }) = transition else {
            panic!("a failed probe reopens");
        };
        grown = cooldown_ms;
        if at > 120_000 {
            break;
        }
    }
    assert!(grown > 2 * first, "{grown} vs {first}");
    // one lucky probe closes it; failures at once reopen it within a half-life:
    // the outage goes on, and so does the long cooldown
    let (at, transition) = probe(&mut breaker, true);
    assert_eq!(transition, Some(Transition::Closed));
    // (the call rate is measured afresh, from the failures since the close:
    // within a few per cent of the first reading)
    let soon = reopen(&mut breaker, at);
    assert!(soon > 2 * first, "{soon} vs {first}");
    assert!(soon as f64 > 0.9 * grown as f64, "{soon} vs {grown}");

    // a breaker that stays closed for longer than a half-life starts afresh
    let (at, _) = probe(&mut breaker, true);
    let mut now = at;
    while now < at + 2 * HALF_LIFE_MS {
        now += 100;
        assert_eq!(breaker.record(now, true), None);
    }
    let fresh = reopen(&mut breaker, now);
    assert!(fresh < soon, "{fresh} vs {soon}");

    // an operator's reset forgets the outage too
    let (at, _) = probe(&mut breaker, true);
    breaker.reset(at);
    assert!(reopen(&mut breaker, at) < soon);
}
