//! A2 (retry strategies against the failure rate): closed forms, limits and
//! determinism.

use bayesretry_sim::anchors::a2::{self, A2Model, Policy, Sharing, Strategy};

fn model(failure_rate: f64, horizon_s: f64) -> A2Model {
    A2Model {
        horizon_s,
        ..A2Model::published(failure_rate)
    }
}

#[test]
fn with_no_failures_every_policy_succeeds_at_load_one() {
    let policies = Strategy::ALL.into_iter().map(Policy::Published).chain([
        Policy::BayesRetry(Sharing::PerClient),
        Policy::BayesRetry(Sharing::Shared),
    ]);
    for policy in policies {
        let counts = a2::run(1, &model(0.0, 2.0), policy);
        assert!(counts.calls > 1_500, "{policy:?}: {counts:?}");
        assert_eq!(counts.attempts, counts.calls, "{policy:?}");
        assert_eq!(counts.successes, counts.calls, "{policy:?}");
    }
}

#[test]
fn three_retries_load_and_success_match_the_geometric_closed_forms() {
    for f in [0.1, 0.5, 0.75] {
        let counts = a2::run(2, &model(f, 40.0), Policy::Published(Strategy::Retries3));
        let n = counts.calls as f64;
        let load = 1.0 + f + f * f + f * f * f;
        let success = 1.0 - f.powi(4);
        // attempts per call has variance below 3 at these rates; 40 000 calls
        let se_load = (3.0 / n).sqrt();
        let se_success = (success * (1.0 - success) / n).sqrt();
        assert!(
            (counts.load() - load).abs() < 4.0 * se_load,
            "f {f}: load {} vs {load}",
            counts.load()
        );
        assert!(
            (counts.success_rate() - success).abs() < 4.0 * se_success + 1e-12,
            "f {f}: success {} vs {success}",
            counts.success_rate()
        );
    }
}

#[test]
fn no_retries_has_load_one_and_success_one_minus_f() {
    let counts = a2::run(3, &model(0.3, 20.0), Policy::Published(Strategy::None));
    assert_eq!(counts.attempts, counts.calls);
    let se = (0.21 / counts.calls as f64).sqrt();
    assert!((counts.success_rate() - 0.7).abs() < 4.0 * se);
}

#[test]
fn token_bucket_and_breaker_hold_load_near_their_deposit_when_most_attempts_fail() {
    let m = model(0.75, 20.0);
    let bucket = a2::run(4, &m, Policy::Published(Strategy::TokenBucket)).load();
    let breaker = a2::run(4, &m, Policy::Published(Strategy::Breaker)).load();
    // 0.1 token per call pays for at most 0.1 retries per call after the first 4 tokens
    assert!(bucket > 1.05 && bucket < 1.16, "bucket load {bucket}");
    // failures / first tries ends far above 0.1: retries stop almost at once
    assert!(breaker < 1.01, "breaker load {breaker}");
}

#[test]
fn the_same_seed_gives_the_same_counts_and_policies_share_their_luck() {
    let m = model(0.2, 3.0);
    let policy = Policy::BayesRetry(Sharing::Shared);
    assert_eq!(a2::run(7, &m, policy), a2::run(7, &m, policy));
    assert_ne!(a2::run(7, &m, policy), a2::run(8, &m, policy));
    // the same arrivals for every policy
    let none = a2::run(7, &m, Policy::Published(Strategy::None));
    let three = a2::run(7, &m, Policy::Published(Strategy::Retries3));
    assert_eq!(none.calls, three.calls);
    // and the same first-attempt outcomes: a call that retries3 got right first
    // time, no-retries got right too, so no-retries never beats it
    assert!(none.successes <= three.successes);
}
