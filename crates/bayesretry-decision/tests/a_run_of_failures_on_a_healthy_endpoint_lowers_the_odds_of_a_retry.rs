//! `Situation::with_failure_run`: a run of failures on an endpoint that usually
//! succeeds is weighed as evidence that it has just changed, under every
//! strategy; on a flaky endpoint, or with no run, the posterior alone decides.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

mod common;

use bayesretry_decision::{CHANGE_HAZARD, DOWN_SHARE, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass};
use common::{TableStore, engine};

fn ctx() -> Context<'static> {
    Context::new("api", 1, ErrorClass::from_status(503))
}

/// The posterior probability of a change after `k` failures at usual rate
/// `p0`, and the share of that change that is "down" (a rate of 0).
fn weight(k: i32, p0: f64) -> (f64, f64) {
    let mut jeffreys = 1.0;
    for j in 0..k {
        jeffreys *= (0.5 + f64::from(j)) / (1.0 + f64::from(j));
    }
    let likelihood = DOWN_SHARE + (1.0 - DOWN_SHARE) * jeffreys;
    let changed = CHANGE_HAZARD * likelihood;
    let w = changed / (changed + (1.0 - CHANGE_HAZARD) * (1.0 - p0).powi(k));
    (w, DOWN_SHARE / likelihood)
}

#[test]
fn the_greedy_probability_is_the_change_point_mixture() {
    let store = TableStore::with_means(&[0.5, 0.6]);
    let greedy = engine(Strategy::Greedy);
    for (k, p0) in [(1, 0.95), (2, 0.95), (3, 0.95), (3, 0.5), (6, 0.8)] {
        let situation = Situation::new().with_failure_run(k, 0.0 + p0);
        let decision = greedy.decide(&store, &ctx(), &situation, 0);
        let (w, down) = weight(k as i32, p0);
        let expected = (1.0 - w) * 0.6 + w * (1.0 - down) * 0.5 / (f64::from(k) + 1.0);
        let expected = expected.min(0.6);
        assert!(
            (decision.probability() - expected).abs() < 1e-12,
            "k = {k}, p0 = {p0}: {} vs {expected}",
            decision.probability()
        );
        assert_eq!(decision.retry(), expected > 0.1);
    }
}

#[test]
fn five_failures_in_a_row_on_a_healthy_endpoint_stop_every_strategy() {
    let store = TableStore::with_means(&[0.5, 0.6, 0.6, 0.6]);
    let outage = Situation::new().with_failure_run(5, 0.95);
    let calm = Situation::new().with_failure_run(1, 0.95);
    for strategy in [Strategy::Greedy, Strategy::Lookahead] {
        let engine = engine(strategy);
        assert!(
            engine.decide(&store, &ctx(), &calm, 0).retry(),
            "{strategy:?}"
        );
        assert!(
            !engine.decide(&store, &ctx(), &outage, 0).retry(),
            "{strategy:?}"
        );
    }
    // Thompson: even a draw at the top of the posterior is weighed down
    let thompson = engine(Strategy::Thompson);
    for u in [0.5, 0.9, 0.99] {
        let decision = thompson.decide_with_uniform(&store, &ctx(), &outage, 0, u);
        assert!(!decision.retry(), "u = {u}: {}", decision.probability());
    }
}

#[test]
fn on_a_flaky_endpoint_a_short_run_changes_little() {
    let store = TableStore::with_means(&[0.5, 0.6]);
    let greedy = engine(Strategy::Greedy);
    let plain = greedy.decide(&store, &ctx(), &Situation::new(), 0);
    let flaky = greedy.decide(
        &store,
        &ctx(),
        &Situation::new().with_failure_run(3, 0.5),
        0,
    );
    assert!(flaky.retry());
    assert!((plain.probability() - flaky.probability()).abs() < 0.05);
}

#[test]
fn a_run_never_raises_a_retry_the_posterior_judges_poor() {
    let store = TableStore::with_means(&[0.5, 0.05]);
    let greedy = engine(Strategy::Greedy);
    let plain = greedy.decide(&store, &ctx(), &Situation::new(), 0);
    // the changed regime's mean (1 − down)·½ / (k + 1) is above 0.05 only
    // after one failure (1/3 · 1/4): no change
    let one = greedy.decide(
        &store,
        &ctx(),
        &Situation::new().with_failure_run(1, 0.95),
        0,
    );
    assert_eq!(one, plain);
    // against a poorer retry (0.005), it stays above for runs up to 12
    let poorer = TableStore::with_means(&[0.5, 0.005]);
    let plain_poorer = greedy.decide(&poorer, &ctx(), &Situation::new(), 0);
    for k in [1, 2, 3, 8, 12] {
        let run = greedy.decide(
            &poorer,
            &ctx(),
            &Situation::new().with_failure_run(k, 0.95),
            0,
        );
        assert_eq!(run, plain_poorer, "k = {k}");
    }
    let thirteen = greedy.decide(
        &poorer,
        &ctx(),
        &Situation::new().with_failure_run(13, 0.95),
        0,
    );
    assert!(thirteen.probability() < plain_poorer.probability());
    // below it, lowered a little further
    for k in [2, 3, 10] {
        let long = greedy.decide(
            &store,
            &ctx(),
            &Situation::new().with_failure_run(k, 0.95),
            0,
        );
        assert!(
            long.probability() < plain.probability() && !long.retry(),
            "k = {k}"
        );
    }
}

#[test]
fn no_run_or_no_usable_rate_leaves_the_posterior_alone() {
    let store = TableStore::with_means(&[0.5, 0.6]);
    let greedy = engine(Strategy::Greedy);
    let plain = greedy.decide(&store, &ctx(), &Situation::new(), 0);
    for situation in [
        Situation::new().with_failure_run(0, 0.95),
        Situation::new().with_failure_run(5, f64::NAN),
        Situation::new().with_failure_run(5, 1.0),
        Situation::new()
            .with_failure_run(5, 0.95)
            .without_failure_run(),
    ] {
        assert_eq!(greedy.decide(&store, &ctx(), &situation, 0), plain);
    }
    assert_eq!(
        Situation::new().with_failure_run(3, 0.9).failure_run(),
        Some((3, 0.9))
    );
}

#[test]
fn the_lookahead_assumes_the_run_grows_with_each_later_failure() {
    // the next attempt is poor but the later ones are good: without a run the
    // lookahead retries through it; after three failures in a row on a healthy
    // endpoint the later attempts, reached only through more failures, are
    // judged on a longer run, and it stops
    let store = TableStore::with_means(&[0.5, 0.05, 0.9, 0.9]);
    let lookahead = engine(Strategy::Lookahead);
    assert!(
        lookahead
            .decide(&store, &ctx(), &Situation::new(), 0)
            .retry()
    );
    let run = Situation::new().with_failure_run(3, 0.95);
    assert!(!lookahead.decide(&store, &ctx(), &run, 0).retry());
}
