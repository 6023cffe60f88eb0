//! Properties over arbitrary posteriors and cost models: the greedy rule retries
//! exactly when `p · V − c > 0` if no hard limit applies; lookahead is worth at
//! least the myopic value and at most `V − c`; no hard stop is ever overridden.

#![allow(
    clippy::unwrap_used,
    reason = "the generators produce only valid posteriors and cost models"
)]

mod common;

use bayesretry_beta::Beta;
use bayesretry_cost::{CostModel, expected_value_of_retry};
use bayesretry_decision::{Config, Reason, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass};
use common::TableStore;
use proptest::prelude::*;
use proptest::strategy::Strategy as _;

fn posterior() -> impl proptest::strategy::Strategy<Value = Beta> {
    (1e-3_f64..1e4, 1e-3_f64..1e4).prop_map(|(a, b)| Beta::new(a, b).unwrap())
}

fn cost_model() -> impl proptest::strategy::Strategy<Value = CostModel> {
    (1e-3_f64..1e3, prop_oneof![Just(0.0), 0.0_f64..1e3])
        .prop_map(|(value, cost)| CostModel::new(value, cost).unwrap())
}

fn ctx(attempt: u32) -> Context<'static> {
    Context::new("api", attempt, ErrorClass::from_status(500))
}

proptest! {
    #[test]
    fn greedy_retries_iff_p_v_minus_c_is_positive(
        posterior in posterior(),
        model in cost_model(),
        attempt in 1_u32..4,
        deadline_gap in 1_u64..1_000_000,
    ) {
        let engine = Config::new(model).build().unwrap();
        let store = TableStore::uniform_over_attempts(posterior);
        let now = 5_000;
        // a deadline the next attempt can meet: no hard limit applies
        let situation = Situation::new().with_deadline_ms(now + deadline_gap);
        let decision = engine.decide(&store, &ctx(attempt), &situation, now);

        let p = posterior.mean();
        prop_assert_eq!(decision.probability(), p);
        let ev = p * model.success_value() - model.attempt_cost();
        prop_assert_eq!(decision.retry(), expected_value_of_retry(p, &model) > 0.0);
        prop_assert!(decision.reason().is_expected_value());
        // away from the rounding of the break-even point, the plain formula agrees
        let scale = model.success_value().max(model.attempt_cost());
        if ev.abs() > 1e-12 * scale {
            prop_assert_eq!(decision.retry(), ev > 0.0);
        }
        prop_assert!((decision.expected_value() - ev).abs() <= 1e-12 * scale);
    }

    #[test]
    fn lookahead_is_worth_at_least_the_myopic_value_and_at_most_v_minus_c(
        posteriors in prop::collection::vec(posterior(), 1..10),
        model in cost_model(),
        max_attempts in 2_u32..10,
        attempt_seed in any::<u32>(),
    ) {
        let attempt = 1 + attempt_seed % (max_attempts - 1);
        let store = TableStore::new(posteriors);
        let build = |strategy| {
            Config::new(model)
                .with_strategy(strategy)
                .with_max_attempts(max_attempts)
                .build()
                .unwrap()
        };
        let situation = Situation::new();
        let myopic = build(Strategy::Greedy).decide(&store, &ctx(attempt), &situation, 0);
        let lookahead = build(Strategy::Lookahead).decide(&store, &ctx(attempt), &situation, 0);

        let v_minus_c = model.success_value() - model.attempt_cost();
        let slack = 1e-12 * model.success_value().max(model.attempt_cost());
        prop_assert_eq!(lookahead.probability(), myopic.probability());
        prop_assert!(lookahead.expected_value().is_finite());
        prop_assert!(lookahead.expected_value() >= myopic.expected_value());
        prop_assert!(lookahead.expected_value() <= v_minus_c + slack);
        // W = max(0, value of retrying) lies between max(0, myopic) and max(0, V − c)
        let w = lookahead.expected_value().max(0.0);
        prop_assert!(w >= myopic.expected_value().max(0.0));
        prop_assert!(w <= v_minus_c.max(0.0) + slack);
        // never less willing to retry than the myopic rule
        prop_assert!(!myopic.retry() || lookahead.retry());
    }

    #[test]
    fn no_strategy_retries_past_a_hard_stop(
        posterior in posterior(),
        model in cost_model(),
        attempt in 0_u32..8,
        flags in any::<[bool; 4]>(),
        deadline in proptest::option::of(0_u64..20_000),
        delay in 0_u64..20_000,
        retry_after in proptest::option::of(0_u64..20_000),
        limit in proptest::option::of(0_u64..20_000),
        u in any::<f64>(),
    ) {
        let [permanent, breaker_open, budget_available, _] = flags;
        let mut situation = Situation::new()
            .with_permanent(permanent)
            .with_breaker_open(breaker_open)
            .with_budget_available(budget_available)
            .with_delay_ms(delay);
        if let Some(deadline) = deadline {
            situation = situation.with_deadline_ms(deadline);
        }
        if let Some(retry_after) = retry_after {
            situation = situation.with_retry_after_ms(retry_after);
        }
        if let Some(limit) = limit {
            situation = situation.with_max_retry_after_ms(limit);
        }
        let store = TableStore::uniform_over_attempts(posterior);
        for strategy in [Strategy::Greedy, Strategy::Thompson, Strategy::Lookahead] {
            let engine = Config::new(model).with_strategy(strategy).build().unwrap();
            let decision = engine.decide_with_uniform(&store, &ctx(attempt), &situation, 5_000, u);
            let stop = engine.hard_stop(attempt, &situation, 5_000);
            prop_assert!(!decision.probability().is_nan());
            prop_assert!(!decision.expected_value().is_nan());
            match stop {
                Some(reason) => {
                    prop_assert_eq!(decision.reason(), reason);
                    prop_assert!(!decision.retry());
                }
                None => {
                    prop_assert!(decision.reason().is_expected_value());
                    prop_assert_eq!(decision.retry(), decision.expected_value() > 0.0);
                    prop_assert_eq!(
                        decision.reason() == Reason::PositiveExpectedValue,
                        decision.retry()
                    );
                }
            }
            if permanent {
                prop_assert_eq!(decision.reason(), Reason::PermanentError);
            }
        }
    }
}
