//! When the breaker opens, and when it must not: on a manual clock, outcome by
//! outcome.

use bayesretry_breaker::{Beta, Config, State, Transition};

#[test]
fn a_sustained_outage_opens_the_breaker() {
    let mut breaker = Config::new().build().unwrap();
    let mut now = 0;
    let mut failures = 0;
    let transition = loop {
        assert!(breaker.check(now).is_allowed());
        let bound_before = breaker.posterior(now).upper_bound(0.95);
        failures += 1;
        if let Some(transition) = breaker.record(now, false) {
            assert!(bound_before >= 0.05);
            break transition;
        }
        now += 100;
        assert!(failures < 1_000, "never opened");
    };
    // Beta(1, 1 + n): the 95 % upper bound first drops below 5 % at n = 58.
    assert_eq!(failures, 58);
    assert_eq!(
        transition,
        Transition::Opened {
            until_ms: now + 10_000
        }
    );
    assert!(breaker.posterior(now).upper_bound(0.95) < 0.05);
    assert!(!breaker.check(now + 1).is_allowed());
    assert_eq!(
        breaker.state(),
        State::Open {
            until_ms: now + 10_000
        }
    );
}

#[test]
fn one_failure_does_not_open_the_breaker() {
    // Not on a fresh breaker, even with no evidence floor at all...
    let mut fresh = Config::new().with_min_strength(0.0).build().unwrap();
    assert_eq!(fresh.record(0, false), None);
    assert_eq!(fresh.state(), State::Closed);

    // ...nor after a long healthy history.
    let mut healthy = Config::new().build().unwrap();
    for now in 0..500 {
        assert_eq!(healthy.record(now, true), None);
    }
    assert_eq!(healthy.record(500, false), None);
    assert!(healthy.check(501).is_allowed());
}

#[test]
fn the_breaker_does_not_open_before_min_strength() {
    // A prior that already believes the endpoint is down: the bound is below the
    // floor before any outcome, so only min_strength holds the breaker closed.
    let prior = Beta::new(0.5, 200.0).unwrap();
    assert!(prior.upper_bound(0.95) < 0.05);
    let mut breaker = Config::new()
        .with_prior(prior)
        .with_min_strength(10.0)
        .build()
        .unwrap();
    for now in 0..9 {
        assert_eq!(breaker.record(now, false), None, "failure {}", now + 1);
    }
    assert!(matches!(
        breaker.record(9, false),
        Some(Transition::Opened { .. })
    ));
}

#[test]
fn successes_never_open_the_breaker() {
    let prior = Beta::new(0.5, 200.0).unwrap();
    let mut breaker = Config::new()
        .with_prior(prior)
        .with_min_strength(0.0)
        .build()
        .unwrap();
    for now in 0..100 {
        assert_eq!(breaker.record(now, true), None);
    }
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn a_flaky_endpoint_is_not_a_dead_one() {
    let mut breaker = Config::new().build().unwrap();
    // Three failures in four calls, for a long time: the success rate is 25 %,
    // well above the 5 % floor, and the breaker knows it.
    for now in 0..10_000 {
        assert_eq!(breaker.record(now, now % 4 == 0), None);
    }
    assert!(breaker.check(10_000).is_allowed());
}

#[test]
fn the_rule_reads_the_configured_confidence_and_floor() {
    // A laxer rule opens sooner: 80 % confidence that the rate is below 20 %.
    let mut breaker = Config::new()
        .with_confidence(0.8)
        .with_open_below(0.2)
        .build()
        .unwrap();
    let mut failures = 0;
    while breaker.record(failures, false).is_none() {
        failures += 1;
    }
    // Beta(1, 1 + n): 1 - 0.8^(n + 1) > 0.8 from n + 1 = 8 on; min_strength is 10.
    assert_eq!(failures + 1, 10);
}
