//! Lookahead retries a call whose next attempt is poor but whose later attempts
//! are good, where the myopic rule stops; and it never retries where no later
//! attempt can pay.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

mod common;

use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, DecisionEngine, Reason, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass};
use common::TableStore;

/// V = 10, c = 1: an attempt pays on its own when q > 0.1.
fn engine(strategy: Strategy, max_attempts: u32) -> DecisionEngine {
    Config::new(CostModel::new(10.0, 1.0).unwrap())
        .with_strategy(strategy)
        .with_max_attempts(max_attempts)
        .build()
        .unwrap()
}

fn ctx(attempt: u32) -> Context<'static> {
    Context::new("api", attempt, ErrorClass::from_status(429))
}

#[test]
fn lookahead_retries_where_the_myopic_rule_stops() {
    // q_2 = 0.05 (read from the context of attempt 1), q_3 = 0.7 (attempt 2's).
    let store = TableStore::with_means(&[0.5, 0.05, 0.7, 0.7]);
    let situation = Situation::new();

    let greedy = engine(Strategy::Greedy, 4).decide(&store, &ctx(1), &situation, 0);
    assert!(!greedy.retry());
    assert_eq!(greedy.reason(), Reason::NegativeExpectedValue);
    assert!((greedy.expected_value() - (0.05 * 10.0 - 1.0)).abs() < 1e-12);

    let lookahead = engine(Strategy::Lookahead, 4).decide(&store, &ctx(1), &situation, 0);
    assert!(lookahead.retry());
    assert_eq!(lookahead.reason(), Reason::PositiveExpectedValue);
    assert_eq!(lookahead.probability(), greedy.probability());
    // W_4 = 0.7·10 − 1 = 6; W_3 = 0.7·10 − 1 + 0.3·6 = 7.8;
    // the retry is worth 0.05·10 − 1 + 0.95·7.8 = 6.91
    assert!((lookahead.expected_value() - 6.91).abs() < 1e-9);
}

#[test]
fn the_good_attempt_must_be_within_the_attempt_cap() {
    // With max_attempts = 2 the good third attempt will never be made.
    let store = TableStore::with_means(&[0.5, 0.05, 0.7]);
    let decision = engine(Strategy::Lookahead, 2).decide(&store, &ctx(1), &Situation::new(), 0);
    assert!(!decision.retry());
    assert!((decision.expected_value() - (0.05 * 10.0 - 1.0)).abs() < 1e-12);
}

#[test]
fn lookahead_reads_one_posterior_per_attempt_the_cap_still_allows() {
    let store = TableStore::with_means(&[0.5]);
    let _ = engine(Strategy::Lookahead, 4).decide(&store, &ctx(1), &Situation::new(), 0);
    assert_eq!(store.lookups(), 3);
    let store = TableStore::with_means(&[0.5]);
    let _ = engine(Strategy::Lookahead, 4).decide(&store, &ctx(3), &Situation::new(), 0);
    assert_eq!(store.lookups(), 1);
}

#[test]
fn lookahead_never_retries_where_no_later_attempt_can_pay() {
    // every attempt at or below break-even, the best of them exactly at it
    let store = TableStore::with_means(&[0.5, 0.02, 0.1, 0.08, 0.1, 0.05]);
    for max_attempts in 2..=6 {
        let engine = engine(Strategy::Lookahead, max_attempts);
        let decision = engine.decide(&store, &ctx(1), &Situation::new(), 0);
        assert!(!decision.retry(), "max_attempts {max_attempts}: {decision}");
        assert_eq!(decision.reason(), Reason::NegativeExpectedValue);
        // with nothing to gain later, lookahead is the greedy rule exactly
        let greedy = self::engine(Strategy::Greedy, max_attempts).decide(
            &store,
            &ctx(1),
            &Situation::new(),
            0,
        );
        assert_eq!(decision, greedy);
    }
}

#[test]
fn lookahead_over_a_long_cap_stays_bounded_and_finite() {
    let store = TableStore::with_means(&[0.5, 0.01, 0.9]);
    let engine = engine(Strategy::Lookahead, u32::MAX);
    let decision = engine.decide(&store, &ctx(1), &Situation::new(), 0);
    assert!(decision.retry());
    assert!(decision.expected_value().is_finite());
    assert!(decision.expected_value() <= 10.0 - 1.0);
    // the horizon: the next attempt and at most 31 after it
    assert_eq!(store.lookups(), 32);
}
