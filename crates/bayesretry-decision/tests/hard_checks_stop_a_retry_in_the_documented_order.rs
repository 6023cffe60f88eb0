//! Each reason is produced, and when several checks would stop a retry, the one
//! earliest in the documented order is the reason reported.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

mod common;

use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, Decision, Reason, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass};
use common::{TableStore, engine};

const NOW: u64 = 10_000;

/// Retry while p > 0.1. Max 4 attempts.
fn ctx(attempt: u32) -> Context<'static> {
    Context::new("api", attempt, ErrorClass::from_status(503))
}

/// A store whose every posterior pays (mean 0.5).
fn good() -> TableStore {
    TableStore::with_means(&[0.5])
}

/// A store whose every posterior does not pay (mean 0.02).
fn poor() -> TableStore {
    TableStore::with_means(&[0.02])
}

/// Every check fails: permanent, at the cap, past the deadline, a long
/// Retry-After, breaker open, no budget.
fn everything_wrong() -> Situation {
    Situation::new()
        .with_permanent(true)
        .with_deadline_ms(NOW)
        .with_retry_after_ms(120_000)
        .with_max_retry_after_ms(60_000)
        .with_breaker_open(true)
        .with_budget_available(false)
}

fn decide(store: &TableStore, attempt: u32, situation: &Situation) -> Decision {
    engine(Strategy::Greedy).decide(store, &ctx(attempt), situation, NOW)
}

#[test]
fn each_check_in_turn_is_the_reason_once_the_ones_before_it_pass() {
    let store = good();
    let mut situation = everything_wrong();
    let mut attempt = 4;
    let expected = [
        Reason::PermanentError,
        Reason::MaxAttempts,
        Reason::Deadline,
        Reason::RetryAfterBeyondLimit,
        Reason::CircuitOpen,
        Reason::BudgetExhausted,
        Reason::PositiveExpectedValue,
    ];
    for (step, reason) in expected.into_iter().enumerate() {
        let decision = decide(&store, attempt, &situation);
        assert_eq!(decision.reason(), reason, "step {step}: {decision}");
        assert_eq!(decision.retry(), reason == Reason::PositiveExpectedValue);
        // clear the check that just fired
        match step {
            0 => situation = situation.with_permanent(false),
            1 => attempt = 1,
            2 => situation = situation.without_deadline(),
            3 => situation = situation.without_retry_after(),
            4 => situation = situation.with_breaker_open(false),
            5 => situation = situation.with_budget_available(true),
            _ => {}
        }
    }
}

#[test]
fn the_default_situation_leaves_the_decision_to_the_expected_value() {
    assert_eq!(Situation::default(), Situation::new());
    assert_eq!(
        engine(Strategy::Greedy).hard_stop(1, &Situation::new(), NOW),
        None
    );
    assert_eq!(
        decide(&good(), 1, &Situation::new()).reason(),
        Reason::PositiveExpectedValue
    );
    assert_eq!(
        decide(&poor(), 1, &Situation::new()).reason(),
        Reason::NegativeExpectedValue
    );
}

#[test]
fn a_permanent_error_at_the_attempt_cap_reports_the_permanent_error() {
    let situation = Situation::new().with_permanent(true);
    assert_eq!(
        decide(&good(), 4, &situation).reason(),
        Reason::PermanentError
    );
    assert_eq!(
        decide(&good(), 4, &Situation::new()).reason(),
        Reason::MaxAttempts
    );
}

#[test]
fn a_permanent_error_is_never_retried_whatever_the_evidence() {
    let certain = TableStore::with_means(&[0.999]);
    for strategy in [Strategy::Greedy, Strategy::Thompson, Strategy::Lookahead] {
        let engine = engine(strategy);
        let situation = Situation::new().with_permanent(true);
        for u in [0.0, 0.5, 1.0] {
            let decision = engine.decide_with_uniform(&certain, &ctx(1), &situation, NOW, u);
            assert!(!decision.retry());
            assert_eq!(decision.reason(), Reason::PermanentError);
        }
    }
}

#[test]
fn an_open_breaker_with_negative_expected_value_reports_the_open_circuit() {
    let situation = Situation::new().with_breaker_open(true);
    assert_eq!(decide(&poor(), 1, &situation).reason(), Reason::CircuitOpen);
    assert_eq!(
        decide(&poor(), 1, &Situation::new()).reason(),
        Reason::NegativeExpectedValue
    );
}

#[test]
fn an_open_breaker_and_an_empty_budget_report_the_open_circuit() {
    let situation = Situation::new()
        .with_breaker_open(true)
        .with_budget_available(false);
    assert_eq!(decide(&good(), 1, &situation).reason(), Reason::CircuitOpen);
}

#[test]
fn an_empty_budget_stops_a_retry_that_would_pay() {
    let situation = Situation::new().with_budget_available(false);
    let decision = decide(&good(), 1, &situation);
    assert!(!decision.retry());
    assert_eq!(decision.reason(), Reason::BudgetExhausted);
}

#[test]
fn the_deadline_counts_the_planned_delay_and_the_retry_after() {
    let store = good();
    let deadline = Situation::new().with_deadline_ms(NOW + 1_000);
    // starts at NOW + 999: in time
    let in_time = deadline.with_delay_ms(999);
    assert_eq!(
        decide(&store, 1, &in_time).reason(),
        Reason::PositiveExpectedValue
    );
    // starts exactly at the deadline: no time left to succeed in
    let at_deadline = deadline.with_delay_ms(1_000);
    assert_eq!(decide(&store, 1, &at_deadline).reason(), Reason::Deadline);
    // a short planned delay, but the server asked for a longer wait: the
    // server's wait is what crosses the deadline
    let told_to_wait = deadline.with_delay_ms(10).with_retry_after_ms(1_500);
    assert_eq!(
        decide(&store, 1, &told_to_wait).reason(),
        Reason::RetryAfterPastDeadline
    );
    // a planned delay that crosses it on its own: the deadline, whatever the
    // server asked for
    let both = deadline.with_delay_ms(1_200).with_retry_after_ms(1_500);
    assert_eq!(decide(&store, 1, &both).reason(), Reason::Deadline);
    let short_hint = deadline.with_delay_ms(1_200).with_retry_after_ms(1);
    assert_eq!(decide(&store, 1, &short_hint).reason(), Reason::Deadline);
    // a deadline already in the past
    let passed = Situation::new().with_deadline_ms(NOW - 1);
    assert_eq!(decide(&store, 1, &passed).reason(), Reason::Deadline);
    // a delay so long the start time saturates rather than wrapping around
    let huge = Situation::new()
        .with_deadline_ms(u64::MAX)
        .with_delay_ms(u64::MAX);
    assert_eq!(decide(&store, 1, &huge).reason(), Reason::Deadline);
}

#[test]
fn a_deadline_crossed_by_the_retry_after_reports_the_deadline_not_the_limit() {
    let situation = Situation::new()
        .with_deadline_ms(NOW + 5_000)
        .with_retry_after_ms(120_000)
        .with_max_retry_after_ms(60_000);
    assert_eq!(
        decide(&good(), 1, &situation).reason(),
        Reason::RetryAfterPastDeadline
    );
}

#[test]
fn a_retry_after_at_the_limit_is_accepted_and_one_beyond_it_is_not() {
    let store = good();
    let limit = Situation::new().with_max_retry_after_ms(60_000);
    assert_eq!(
        decide(&store, 1, &limit.with_retry_after_ms(60_000)).reason(),
        Reason::PositiveExpectedValue
    );
    assert_eq!(
        decide(&store, 1, &limit.with_retry_after_ms(60_001)).reason(),
        Reason::RetryAfterBeyondLimit
    );
    // no limit: any wait is accepted
    assert_eq!(
        decide(&store, 1, &Situation::new().with_retry_after_ms(u64::MAX)).reason(),
        Reason::PositiveExpectedValue
    );
}

#[test]
fn the_attempt_cap_counts_the_first_attempt() {
    let store = good();
    let once = Config::new(CostModel::new(10.0, 1.0).unwrap())
        .with_max_attempts(1)
        .build()
        .unwrap();
    let decision = once.decide(&store, &ctx(1), &Situation::new(), NOW);
    assert_eq!(decision.reason(), Reason::MaxAttempts);
    assert_eq!(
        decide(&store, 3, &Situation::new()).reason(),
        Reason::PositiveExpectedValue
    );
    assert_eq!(
        decide(&store, 4, &Situation::new()).reason(),
        Reason::MaxAttempts
    );
    assert_eq!(
        decide(&store, u32::MAX, &Situation::new()).reason(),
        Reason::MaxAttempts
    );
}

#[test]
fn hard_stops_read_no_posterior_and_report_zeros() {
    for strategy in [Strategy::Greedy, Strategy::Thompson, Strategy::Lookahead] {
        let engine = engine(strategy);
        let store = good();
        let situations = [
            Situation::new().with_permanent(true),
            Situation::new().with_deadline_ms(NOW),
            Situation::new()
                .with_retry_after_ms(2)
                .with_max_retry_after_ms(1),
            Situation::new().with_breaker_open(true),
            Situation::new().with_budget_available(false),
        ];
        for situation in &situations {
            let decision = engine.decide_with_uniform(&store, &ctx(1), situation, NOW, 0.9);
            assert!(!decision.retry());
            assert!(!decision.reason().is_expected_value());
            assert_eq!(decision.probability(), 0.0);
            assert_eq!(decision.expected_value(), 0.0);
            assert_eq!(engine.hard_stop(1, situation, NOW), Some(decision.reason()));
        }
        let capped = engine.decide(&store, &ctx(4), &Situation::new(), NOW);
        assert_eq!(capped.reason(), Reason::MaxAttempts);
        assert_eq!(store.lookups(), 0, "{strategy}");
    }
}

#[test]
fn reasons_and_decisions_display_in_lowercase() {
    let reasons = [
        Reason::PositiveExpectedValue,
        Reason::NegativeExpectedValue,
        Reason::MaxAttempts,
        Reason::Deadline,
        Reason::CircuitOpen,
        Reason::BudgetExhausted,
        Reason::PermanentError,
        Reason::RetryAfterBeyondLimit,
    ];
    for reason in reasons {
        let text = reason.to_string();
        assert!(!text.is_empty());
        assert_eq!(text, text.to_lowercase());
    }
    assert_eq!(Reason::CircuitOpen.to_string(), "circuit open");
    let stopped = decide(&good(), 1, &Situation::new().with_breaker_open(true));
    assert_eq!(stopped.to_string(), "stop: circuit open");
    let retried = decide(&good(), 1, &Situation::new());
    assert!(
        retried
            .to_string()
            .starts_with("retry: positive expected value; p = 0.5")
    );
}

#[test]
fn a_fixed_count_retries_exactly_when_no_hard_check_stops_it() {
    let mut situation = everything_wrong();
    let mut attempt = 4;
    let expected = [
        Reason::PermanentError,
        Reason::MaxAttempts,
        Reason::Deadline,
        Reason::RetryAfterBeyondLimit,
        Reason::CircuitOpen,
        Reason::BudgetExhausted,
        Reason::Fixed,
    ];
    for (step, reason) in expected.into_iter().enumerate() {
        let engine = engine(Strategy::Greedy);
        let decision = engine.decide_fixed(attempt, &situation, NOW);
        let by_hard_stop = engine.hard_stop(attempt, &situation, NOW);
        assert_eq!(decision.reason(), reason, "step {step}: {decision}");
        assert_eq!(by_hard_stop.is_none(), decision.retry());
        assert_eq!(decision.retry(), reason == Reason::Fixed);
        assert_eq!(
            (decision.probability(), decision.expected_value()),
            (0.0, 0.0)
        );
        match step {
            0 => situation = situation.with_permanent(false),
            1 => attempt = 1,
            2 => situation = situation.without_deadline(),
            3 => situation = situation.without_retry_after(),
            4 => situation = situation.with_breaker_open(false),
            5 => situation = situation.with_budget_available(true),
            _ => {}
        }
    }
}
