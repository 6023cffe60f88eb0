//! S8: shard A is down for 300 s, B and C are healthy. A count breaker per
//! endpoint (B7s) opens and refuses calls to B and C as well — collateral
//! failures; BayesRetry's breaker, reading a credible bound of the endpoint's
//! success rate (two thirds of attempts still succeed), stays closed.
#![allow(clippy::panic, reason = "a test fails by panicking")]

use bayesretry_sim::{Baseline, BayesConfig, PolicySpec, Scenario, Strategy, run};

#[test]
fn the_count_breaker_has_collateral_failures_and_bayesretry_has_none() {
    let b7s = run(Scenario::S8, &PolicySpec::Baseline(Baseline::B7s), 1, 4)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        b7s.pooled.collateral_failures > 100,
        "{}",
        b7s.pooled.collateral_failures
    );
    let br = run(
        Scenario::S8,
        &PolicySpec::Bayes(BayesConfig::new(Strategy::Greedy, 10.0, 4)),
        1,
        4,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(br.pooled.collateral_failures, 0);
    assert!(br.pooled.success_rate > b7s.pooled.success_rate);
}
