//! Determinism: the same (scenario, policy, seed) gives the same results bit
//! for bit, Thompson draws and jitter included; paired luck: every policy sees
//! the same calls.
#![allow(clippy::panic, reason = "a test fails by panicking")]

use bayesretry_sim::{Baseline, BayesConfig, Environment, PolicySpec, Scenario, Strategy, run};

fn json(scenario: Scenario, spec: &PolicySpec, seed: u64) -> String {
    let r = run(scenario, spec, seed, 4).unwrap_or_else(|e| panic!("run failed: {e}"));
    serde_json::to_string(&r).unwrap_or_else(|e| panic!("serialise: {e}"))
}

#[test]
fn a_thompson_policy_on_the_mixed_stream_replays_exactly() {
    let spec = PolicySpec::Bayes(BayesConfig::new(Strategy::Thompson, 10.0, 4));
    let a = json(Scenario::S0, &spec, 7);
    assert_eq!(a, json(Scenario::S0, &spec, 7));
    assert_ne!(a, json(Scenario::S0, &spec, 8));
}

#[test]
fn a_jittered_baseline_replays_exactly() {
    let spec = PolicySpec::Baseline(Baseline::B2r);
    assert_eq!(json(Scenario::S3, &spec, 3), json(Scenario::S3, &spec, 3));
}

#[test]
fn every_policy_faces_the_same_stream() {
    let a = Environment::new(Scenario::S2, 5);
    let b = Environment::new(Scenario::S2, 5);
    assert_eq!(a.calls(), b.calls());
    let call = a.calls()[10];
    assert_eq!(
        a.attempt(&call, 2, 1_000_000),
        b.attempt(&call, 2, 1_000_000)
    );
    assert_ne!(a.calls(), Environment::new(Scenario::S2, 6).calls());
}
