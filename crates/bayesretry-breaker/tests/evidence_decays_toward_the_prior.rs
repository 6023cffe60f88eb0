//! With a half-life, old evidence fades on read: a breaker that stops hearing from
//! an endpoint regains its uncertainty.

use bayesretry_breaker::{Config, State};

/// Opens on the 10th straight failure (min_strength 10; the bound at 50 % is met
/// sooner).
fn config() -> Config {
    Config::new().with_open_below(0.5).with_min_strength(10.0)
}

#[test]
fn counts_above_the_prior_halve_every_half_life() {
    let mut breaker = config().with_half_life_ms(1_000).build().unwrap();
    for _ in 0..8 {
        let _ = breaker.record(0, false);
    }
    let prior = config().prior();
    let at = |t: u64| breaker.posterior(t).strength() - prior.strength();
    assert_eq!(at(0), 8.0);
    assert!((at(1_000) - 4.0).abs() < 1e-12);
    assert!((at(3_000) - 1.0).abs() < 1e-12);
    // The posterior widens back toward the prior: its upper bound rises.
    let bound = |t: u64| breaker.posterior(t).upper_bound(0.95);
    assert!(bound(0) < bound(1_000) && bound(1_000) < bound(10_000));
    assert!((bound(100_000) - prior.upper_bound(0.95)).abs() < 1e-9);
}

#[test]
fn stale_failures_do_not_count_toward_opening() {
    let mut decaying = config().with_half_life_ms(1_000).build().unwrap();
    let mut keeping = config().build().unwrap();
    for now in 0..9 {
        assert_eq!(decaying.record(now, false), None);
        assert_eq!(keeping.record(now, false), None);
    }
    // Ten half-lives later, one more failure: without decay that is the tenth and
    // the breaker opens; with decay the nine old ones weigh 9 / 1024.
    assert!(keeping.record(10_008, false).is_some());
    assert_eq!(decaying.record(10_008, false), None);
    assert_eq!(decaying.state(), State::Closed);
}

#[test]
fn a_lagging_clock_does_not_undo_decay() {
    let mut breaker = config().with_half_life_ms(1_000).build().unwrap();
    let _ = breaker.record(5_000, false);
    let _ = breaker.record(4_000, false); // read before the other, recorded after
    let strength = breaker.posterior(5_000).strength() - config().prior().strength();
    assert_eq!(strength, 2.0);
}
