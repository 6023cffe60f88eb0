//! S3: the server's token bucket answers 429 with Retry-After; BayesRetry's run
//! loop waits at least that long, while B2 (which ignores the header) does not.
#![allow(clippy::panic, reason = "a test fails by panicking")]

use bayesretry_sim::{Baseline, BayesConfig, PolicySpec, Scenario, Strategy, run};

#[test]
fn no_bayesretry_strategy_retries_early_and_b2_does() {
    for strategy in [Strategy::Greedy, Strategy::Thompson, Strategy::Lookahead] {
        let spec = PolicySpec::Bayes(BayesConfig::new(strategy, 50.0, 4));
        let r = run(Scenario::S3, &spec, 2, 4).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.pooled.retries > 0, "{strategy:?} made no retry to check");
        assert_eq!(r.pooled.retry_after_violations, 0, "{strategy:?}");
    }
    let b2 = run(Scenario::S3, &PolicySpec::Baseline(Baseline::B2), 2, 4)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(b2.pooled.retry_after_violations > 0);
}
