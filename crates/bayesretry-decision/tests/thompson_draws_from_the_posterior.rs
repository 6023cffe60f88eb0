//! Thompson draws are exact quantiles of the posterior for a caller's uniform `u`
//! (`u = 0.5` is the median), and a malformed `u` never causes a retry.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

mod common;

use bayesretry_beta::{Beta, inc_beta_inv};
use bayesretry_decision::{Reason, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass};
use common::{TableStore, engine};

fn ctx() -> Context<'static> {
    Context::new("api", 1, ErrorClass::ConnectionReset)
}

#[test]
fn thompson_at_one_half_equals_the_posterior_median() {
    let engine = engine(Strategy::Thompson);
    for (a, b) in [(1.0, 1.0), (2.0, 9.0), (0.3, 0.7), (40.0, 3.0), (1e-3, 5.0)] {
        let posterior = Beta::new(a, b).unwrap();
        let store = TableStore::uniform_over_attempts(posterior);
        let decision = engine.decide_with_uniform(&store, &ctx(), &Situation::new(), 0, 0.5);
        assert_eq!(decision.probability(), inc_beta_inv(a, b, 0.5));
        assert_eq!(decision.probability(), posterior.quantile(0.5));
        assert!((posterior.cdf(decision.probability()) - 0.5).abs() < 1e-12);
    }
}

#[test]
fn thompson_draws_are_the_quantile_of_u() {
    let engine = engine(Strategy::Thompson);
    let posterior = Beta::new(2.0, 30.0).unwrap(); // mean 1/16: greedy stops
    let store = TableStore::uniform_over_attempts(posterior);
    let mut retried = 0;
    for i in 1..100 {
        let u = f64::from(i) / 100.0;
        let decision = engine.decide_with_uniform(&store, &ctx(), &Situation::new(), 0, u);
        assert_eq!(decision.probability(), posterior.quantile(u));
        assert_eq!(decision.retry(), decision.probability() > 0.1);
        retried += usize::from(decision.retry());
    }
    // a wide posterior below break-even is still explored now and then:
    // P(draw > 0.1) under Beta(2, 30) is about 0.15
    assert!((10..=20).contains(&retried), "{retried}");
}

#[test]
fn a_malformed_uniform_never_causes_a_retry() {
    let engine = engine(Strategy::Thompson);
    let store = TableStore::with_means(&[0.9]);
    for u in [f64::NAN, -1.0, f64::NEG_INFINITY, 0.0] {
        let decision = engine.decide_with_uniform(&store, &ctx(), &Situation::new(), 0, u);
        assert!(!decision.retry(), "u = {u}");
        assert_eq!(decision.probability(), 0.0);
        assert_eq!(decision.reason(), Reason::NegativeExpectedValue);
        assert!(!decision.expected_value().is_nan());
    }
    let high = engine.decide_with_uniform(&store, &ctx(), &Situation::new(), 0, 7.0);
    assert_eq!(high.probability(), 1.0);
    assert!(high.retry());
}

#[test]
fn plain_decide_and_other_strategies_use_the_posterior_mean() {
    let posterior = Beta::new(3.0, 5.0).unwrap();
    let store = TableStore::uniform_over_attempts(posterior);
    let thompson = engine(Strategy::Thompson).decide(&store, &ctx(), &Situation::new(), 0);
    assert_eq!(thompson.probability(), posterior.mean());
    let greedy = engine(Strategy::Greedy);
    for u in [0.01, 0.5, 0.99] {
        let decision = greedy.decide_with_uniform(&store, &ctx(), &Situation::new(), 0, u);
        assert_eq!(
            decision,
            greedy.decide(&store, &ctx(), &Situation::new(), 0)
        );
    }
}

#[cfg(feature = "rand")]
#[test]
fn rng_draws_are_reproducible_and_follow_the_posterior() {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    let engine = engine(Strategy::Thompson);
    let posterior = Beta::new(4.0, 12.0).unwrap();
    let store = TableStore::uniform_over_attempts(posterior);
    let draws = |seed: u64| {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..4_000)
            .map(|_| {
                engine
                    .decide_with_rng(&store, &ctx(), &Situation::new(), 0, &mut rng)
                    .probability()
            })
            .collect::<Vec<f64>>()
    };
    let first = draws(7);
    assert_eq!(first, draws(7));
    assert!(first.iter().all(|p| (0.0..=1.0).contains(p)));
    let mean = first.iter().sum::<f64>() / first.len() as f64;
    // standard error of the mean: sqrt(var / n) ≈ 0.0017
    assert!((mean - 0.25).abs() < 0.01, "{mean}");

    // a hard stop draws nothing from the generator
    let mut rng = StdRng::seed_from_u64(7);
    let stopped = Situation::new().with_breaker_open(true);
    let _ = engine.decide_with_rng(&store, &ctx(), &stopped, 0, &mut rng);
    let after = engine.decide_with_rng(&store, &ctx(), &Situation::new(), 0, &mut rng);
    assert_eq!(after.probability(), first[0]);
}
