//! Properties of the state machine over arbitrary configurations and streams of
//! checks, outcomes and clock moves:
//!
//! - a half-open round never admits more than `max_probes` probes;
//! - the breaker never opens with less than `min_strength` evidence above the
//!   prior, and when it opens, the upper credible bound really is below the floor;
//! - a closed breaker admits every call; transitions come from the right states;
//! - the cooldown stays between `cooldown_ms` and `max_cooldown_ms`.
#![allow(
    clippy::unwrap_used,
    reason = "the strategies only generate valid parameters"
)]

use std::collections::HashMap;

use bayesretry_breaker::{Admission, Beta, Config, State, Transition};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    Check,
    Record(bool),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        2 => (0_u64..4_000).prop_map(Op::Advance),
        4 => Just(Op::Check),
        4 => proptest::bool::weighted(0.3).prop_map(Op::Record),
    ];
    proptest::collection::vec(op, 1..600)
}

prop_compose! {
    fn configs()(
        alpha in 0.1_f64..5.0,
        beta in 0.1_f64..5.0,
        confidence in 0.5_f64..0.99,
        open_below in 0.01_f64..0.6,
        min_strength in 0.0_f64..30.0,
        cooldown_ms in 1_u64..3_000,
        factor in 1.0_f64..4.0,
        extra_ms in 0_u64..10_000,
        max_probes in 1_u32..5,
        close_share in 0.0_f64..1.0,
        half_life in proptest::option::of(1_u64..20_000),
    ) -> Config {
        let probes_to_close = 1 + ((max_probes - 1) as f64 * close_share) as u32;
        let config = Config::new()
            .with_prior(Beta::new(alpha, beta).unwrap())
            .with_confidence(confidence)
            .with_open_below(open_below)
            .with_min_strength(min_strength)
            .with_cooldown_ms(cooldown_ms)
            .with_cooldown_factor(factor)
            .with_max_cooldown_ms(cooldown_ms + extra_ms)
            .with_max_probes(max_probes)
            .with_probes_to_close(probes_to_close);
        match half_life {
            Some(h) => config.with_half_life_ms(h),
            None => config,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_breaker_keeps_its_invariants(config in configs(), start in 0_u64..1_000_000, ops in ops()) {
        let mut breaker = config.build().unwrap();
        let mut now = start;
        // Probes admitted per half-open round, a round named by its start.
        let mut probes_per_round: HashMap<u64, u32> = HashMap::new();
        for op in ops {
            let before = breaker.state();
            match op {
                Op::Advance(ms) => now += ms,
                Op::Check => {
                    let admission = breaker.check(now);
                    match (before, admission) {
                        (State::Closed, a) => prop_assert_eq!(a, Admission::Allowed),
                        (_, Admission::Probe { .. }) => {
                            let State::HalfOpen { since_ms, probes, .. } = breaker.state() else {
                                return Err(TestCaseError::fail("a probe outside half-open"));
                            };
                            let count = probes_per_round.entry(since_ms).or_insert(0);
                            *count += 1;
                            prop_assert_eq!(*count, probes);
                            prop_assert!(*count <= config.max_probes());
                        }
                        (_, Admission::Rejected { until_ms }) => prop_assert!(until_ms > now),
                        (_, Admission::Allowed) => {
                            return Err(TestCaseError::fail("allowed while not closed"));
                        }
                        _ => {}
                    }
                }
                Op::Record(success) => {
                    let transition = breaker.record(now, success);
                    match (before, transition) {
                        (State::Closed, Some(Transition::Opened { until_ms })) => {
                            prop_assert!(!success);
                            prop_assert_eq!(until_ms, now + config.cooldown_ms());
                            let posterior = breaker.posterior(now);
                            let evidence = posterior.strength() - config.prior().strength();
                            prop_assert!(evidence >= config.min_strength() - 1e-9);
                            let cdf = posterior.cdf(config.open_below());
                            if (cdf - config.confidence()).abs() > 1e-9 {
                                prop_assert!(
                                    posterior.upper_bound(config.confidence()) < config.open_below()
                                );
                            }
                        }
                        (State::HalfOpen { .. }, Some(Transition::Reopened { cooldown_ms, .. })) => {
                            prop_assert!(!success);
                            prop_assert!(cooldown_ms >= config.cooldown_ms());
                            prop_assert!(cooldown_ms <= config.max_cooldown_ms());
                        }
                        (State::HalfOpen { .. }, Some(Transition::Closed)) => {
                            prop_assert!(success);
                            prop_assert_eq!(breaker.state(), State::Closed);
                        }
                        (_, None) => {}
                        (state, t) => {
                            return Err(TestCaseError::fail(format!("{t:?} from {state:?}")));
                        }
                    }
                }
            }
        }
    }
}
