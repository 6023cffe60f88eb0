//! S0's per-endpoint tables score each endpoint's retries on their own: the
//! Brier score of an endpoint is that of the predictions made for its
//! retries, and the pooled score is their mean weighted by the retries.
#![allow(clippy::panic, reason = "a test fails by panicking")]

use bayesretry_sim::{BayesConfig, PolicySpec, Scenario, Strategy, run};

#[test]
fn the_pooled_score_is_the_retry_weighted_mean_of_different_endpoint_scores() {
    let spec = PolicySpec::Bayes(BayesConfig::new(Strategy::Greedy, 10.0, 4));
    let result = run(Scenario::S0, &spec, 1, 4).unwrap_or_else(|e| panic!("{e}"));
    let pooled = result
        .pooled
        .brier
        .unwrap_or_else(|| panic!("no retry was scored"));
    let scored: Vec<(f64, f64)> = result
        .endpoints
        .iter()
        .filter_map(|(_, m)| m.brier.map(|b| (b, m.retries as f64)))
        .collect();
    assert!(scored.len() >= 4, "{scored:?}");
    let (low, high) = scored
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(l, h), &(b, _)| {
            (l.min(b), h.max(b))
        });
    assert!(high - low > 0.01, "every endpoint reads alike: {scored:?}");
    let retries: f64 = scored.iter().map(|&(_, n)| n).sum();
    let weighted = scored.iter().map(|&(b, n)| b * n).sum::<f64>() / retries;
    assert!(
        (weighted - pooled).abs() < 1e-9,
        "weighted {weighted} against pooled {pooled}"
    );
}
