//! `Situation::with_cost_model`: a call's own success value and attempt cost
//! price its decision in place of the engine's model for the endpoint (an
//! override's too), under every strategy, the lookahead's later attempts
//! included; the posterior and the hard checks are the same whatever the price.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

mod common;

use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, DecisionEngine, Reason, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass};
use common::TableStore;

const STRATEGIES: [Strategy; 3] = [Strategy::Greedy, Strategy::Thompson, Strategy::Lookahead];

fn priced(strategy: Strategy, model: CostModel) -> DecisionEngine {
    Config::new(model)
        .with_strategy(strategy)
        .with_max_attempts(6)
        .build()
        .unwrap()
}

fn models() -> Vec<CostModel> {
    [
        (1.0, 1.0),
        (1.5, 1.0),
        (2.0, 1.0),
        (10.0, 1.0),
        (100.0, 3.0),
        (1.0, 0.0),
    ]
    .into_iter()
    .map(|(v, c)| CostModel::new(v, c).unwrap())
    .collect()
}

/// The same decision, bit for bit, as an engine whose own model is the call's.
#[test]
fn a_call_priced_on_its_own_decides_as_an_engine_of_that_price() {
    let store = TableStore::with_means(&[0.5, 0.08, 0.3, 0.6, 0.2, 0.45]);
    let endpoint_model = CostModel::new(10.0, 1.0).unwrap();
    let situations = [
        Situation::new(),
        Situation::new().with_failure_run(3, 0.9),
        Situation::new().with_delay_ms(200).with_deadline_ms(10_000),
    ];
    let mut retries = [0_u32, 0];
    for strategy in STRATEGIES {
        let engine = priced(strategy, endpoint_model);
        for model in models() {
            let reference = priced(strategy, model);
            for attempt in 1..=4 {
                let ctx = Context::new("api", attempt, ErrorClass::from_status(503));
                for situation in situations {
                    for u in [0.05, 0.5, 0.95] {
                        let own = situation.with_cost_model(model);
                        let got = engine.decide_with_uniform(&store, &ctx, &own, 0, u);
                        let want = reference.decide_with_uniform(&store, &ctx, &situation, 0, u);
                        assert_eq!(got, want, "{strategy:?} {attempt} {u}");
                        retries[usize::from(got.retry())] += 1;
                    }
                }
            }
        }
    }
    // the prices chosen make both verdicts happen
    assert!(retries[0] > 50 && retries[1] > 50, "{retries:?}");
}

#[test]
fn the_call_s_price_wins_over_the_endpoint_s_override() {
    let store = TableStore::with_means(&[0.5, 0.3]);
    // the endpoint "cache" is cheap to call again: any chance pays
    let free = CostModel::new(10.0, 0.0).unwrap();
    let engine = Config::new(CostModel::new(10.0, 1.0).unwrap())
        .with_cost_overrides([("cache", free)])
        .build()
        .unwrap();
    let ctx = Context::new("cache", 1, ErrorClass::from_status(503));
    let endpoint_priced = engine.decide(&store, &ctx, &Situation::new(), 0);
    assert!(endpoint_priced.retry());
    assert!((endpoint_priced.expected_value() - 3.0).abs() < 1e-12);
    // this call is worth three attempts: 0.3 · 3 − 1 < 0
    let dear = Situation::new().with_cost_model(CostModel::new(3.0, 1.0).unwrap());
    let decision = engine.decide(&store, &ctx, &dear, 0);
    assert!(!decision.retry());
    assert!((decision.expected_value() - (0.3 * 3.0 - 1.0)).abs() < 1e-12);
    // dropped again: the override prices it
    assert_eq!(
        engine.decide(&store, &ctx, &dear.without_cost_model(), 0),
        endpoint_priced
    );
}

#[test]
fn no_price_buys_a_retry_past_a_hard_check() {
    let store = TableStore::with_means(&[0.5, 0.99]);
    let precious = CostModel::new(1e12, 0.0).unwrap();
    for strategy in STRATEGIES {
        let engine = priced(strategy, CostModel::new(10.0, 1.0).unwrap());
        let ctx = Context::new("api", 1, ErrorClass::from_status(503));
        let stopped = [
            (
                Situation::new().with_permanent(true),
                Reason::PermanentError,
            ),
            (
                Situation::new().with_breaker_open(true),
                Reason::CircuitOpen,
            ),
            (
                Situation::new().with_budget_available(false),
                Reason::BudgetExhausted,
            ),
        ];
        for (situation, reason) in stopped {
            let decision = engine.decide(&store, &ctx, &situation.with_cost_model(precious), 0);
            assert!(!decision.retry(), "{strategy:?} {reason:?}");
            assert_eq!(decision.reason(), reason, "{strategy:?}");
        }
        let last = Context::new("api", 6, ErrorClass::from_status(503));
        let capped = engine.decide(
            &store,
            &last,
            &Situation::new().with_cost_model(precious),
            0,
        );
        assert!(!capped.retry());
        assert_eq!(capped.reason(), Reason::MaxAttempts);
    }
}

#[test]
fn the_situation_gives_back_the_model_it_was_given() {
    let model = CostModel::new(42.5, 0.25).unwrap();
    let situation = Situation::new().with_cost_model(model);
    assert_eq!(situation.cost_model(), Some(model));
    assert_eq!(Situation::new().cost_model(), None);
    assert_eq!(situation.without_cost_model(), Situation::new());
    // part of what a situation is: two prices are two situations
    assert_ne!(
        situation,
        Situation::new().with_cost_model(CostModel::new(42.5, 0.5).unwrap())
    );
}
