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

#[test]
fn the_suite_on_threads_gives_each_seed_what_one_thread_gives_it_in_order() {
    use bayesretry_sim::{Oracle, REFERENCE_VALUE, run_seed, suite_with_progress};
    use core::sync::atomic::{AtomicUsize, Ordering};

    let policies = [
        PolicySpec::Baseline(Baseline::B1),
        PolicySpec::Oracle(Oracle::Dp, REFERENCE_VALUE),
        PolicySpec::Bayes(BayesConfig::new(Strategy::Thompson, 10.0, 4)),
    ];
    let scenarios = [Scenario::S5, Scenario::S2];
    let seeds = [3, 4];
    let runs = AtomicUsize::new(0);
    let on_three = suite_with_progress(&scenarios, &seeds, &policies, 4, 3, &|| {
        runs.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap_or_else(|e| panic!("suite failed: {e}"));
    assert_eq!(runs.into_inner(), 12, "one progress call per run");
    let mut one_by_one = Vec::new();
    for scenario in scenarios {
        for seed in seeds {
            one_by_one.extend(
                run_seed(scenario, &policies, seed, 4)
                    .unwrap_or_else(|e| panic!("run_seed failed: {e}")),
            );
        }
    }
    let text = |r: &[bayesretry_sim::RunResult]| {
        serde_json::to_string(r).unwrap_or_else(|e| panic!("serialise: {e}"))
    };
    assert_eq!(text(&on_three), text(&one_by_one));
    // the recovery measure is taken against the same seed's DP run, on S5
    let s5: Vec<_> = on_three.iter().filter(|r| r.scenario == "S5").collect();
    assert_eq!(s5.len(), 6);
    assert!(s5.iter().all(|r| r.time_to_recover_s.is_some()));
}

#[test]
fn a_policy_that_cannot_be_built_fails_the_suite_and_stops_its_work() {
    use bayesretry_sim::suite_with_progress;
    use core::sync::atomic::{AtomicUsize, Ordering};

    let mut broken = BayesConfig::new(Strategy::Greedy, 10.0, 4);
    broken.value = f64::NAN;
    let policies = [
        PolicySpec::Bayes(broken),
        PolicySpec::Baseline(Baseline::B1),
    ];
    let seeds: Vec<u64> = (1..=20).collect();
    let runs = AtomicUsize::new(0);
    let out = suite_with_progress(&[Scenario::S0], &seeds, &policies, 4, 1, &|| {
        runs.fetch_add(1, Ordering::Relaxed);
    });
    assert!(out.is_err(), "a suite with a broken policy succeeded");
    // on one thread, the first run fails and no other is made
    assert_eq!(runs.into_inner(), 1);
}
