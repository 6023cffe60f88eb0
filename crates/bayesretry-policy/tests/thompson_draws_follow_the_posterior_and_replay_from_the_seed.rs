//! A Thompson policy decides on one draw from the context's posterior per
//! decision: the draws it reports are distributed as that posterior (a
//! Kolmogorov–Smirnov test against its exact CDF), they differ from decision to
//! decision, and one seed replays them.

#![allow(
    clippy::unwrap_used,
    clippy::cast_precision_loss,
    reason = "test code: a broken expectation must fail the test"
)]

use bayesretry_policy::{Context, ErrorClass, ManualClock, RetryPolicy, Strategy};

/// A Thompson policy with no breaker (so no run of failures adjusts the draw)
/// on a clock that stands still (so nothing decays), taught that `ctx`
/// succeeded once in 10.
fn taught(seed: u64, ctx: &Context<'_>) -> RetryPolicy {
    let policy = RetryPolicy::builder()
        .with_strategy(Strategy::Thompson)
        .without_breaker()
        .with_clock(ManualClock::new(0))
        .with_seed(seed)
        .build()
        .unwrap();
    for i in 0..10 {
        policy.observe(ctx, i < 1);
    }
    policy
}

#[test]
fn thompson_draws_follow_the_posterior_and_replay_from_the_seed() {
    let ctx = Context::new("provider", 1, ErrorClass::Http(503));
    let policy = taught(11, &ctx);
    let posterior = policy.posterior(&ctx);
    let n = 4000;
    let decisions: Vec<_> = (0..n).map(|_| policy.should_retry(&ctx)).collect();
    let mut draws: Vec<f64> = decisions.iter().map(|d| d.probability()).collect();

    // a posterior that straddles break-even: both answers come up
    let retries = decisions.iter().filter(|d| d.retry()).count();
    assert!(
        retries > n / 10 && retries < n * 9 / 10,
        "{retries} retries of {n}"
    );

    // one seed, one sequence of draws; another seed, another
    let replayed: Vec<f64> = {
        let again = taught(11, &ctx);
        (0..n)
            .map(|_| again.should_retry(&ctx).probability())
            .collect()
    };
    assert_eq!(draws, replayed);
    let other = taught(12, &ctx);
    assert_ne!(draws[0], other.should_retry(&ctx).probability());

    // Kolmogorov–Smirnov against the posterior's exact CDF, at the 1 % level
    draws.sort_by(f64::total_cmp);
    let d = draws
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = posterior.cdf(x);
            (f - i as f64 / n as f64).max((i + 1) as f64 / n as f64 - f)
        })
        .fold(0.0, f64::max);
    let critical = 1.628 / (n as f64).sqrt();
    assert!(d < critical, "KS distance {d} against {critical}");
    assert!(draws.iter().all(|x| (0.0..=1.0).contains(x)));
}

#[test]
fn a_posterior_of_counts_near_the_largest_double_draws_its_mean_and_retries() {
    // a prior of 1e308 pseudo-counts each (valid: Beta::new takes shapes up
    // to f64::MAX): the posterior is a point at 0.5, above the break-even 0.1
    // of the default costs, and a greedy policy retries; a Thompson draw is
    // that point too, never 0
    let prior = bayesretry_store::Beta::new(1e308, 1e308).unwrap();
    let ctx = Context::new("provider", 1, ErrorClass::Http(503));
    for strategy in [Strategy::Greedy, Strategy::Thompson] {
        let policy = RetryPolicy::builder()
            .with_strategy(strategy)
            .without_breaker()
            .with_clock(ManualClock::new(0))
            .with_store_config(bayesretry_policy::default_store().with_prior(prior))
            .with_seed(3)
            .build()
            .unwrap();
        for _ in 0..100 {
            let decision = policy.should_retry(&ctx);
            assert!(
                decision.retry() && (decision.probability() - 0.5).abs() < 1e-12,
                "{strategy:?}: {decision:?}"
            );
        }
    }
}
