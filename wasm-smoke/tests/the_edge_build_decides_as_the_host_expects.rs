//! The checks `smoke.mjs` makes in Node, made natively: the exported functions give
//! the same answers on the host as in the wasm module.

use bayesretry_wasm_smoke as smoke;

#[test]
fn learning_then_deciding_retries_429_and_gives_up_on_500() {
    // One test: the store is a process-wide table, shared by every test here.
    smoke::smoke_reset();
    for _ in 0..18 {
        smoke::smoke_observe(429, 1, 1);
    }
    for _ in 0..2 {
        smoke::smoke_observe(429, 1, 0);
    }
    smoke::smoke_observe(500, 1, 1);
    for _ in 0..19 {
        smoke::smoke_observe(500, 1, 0);
    }
    assert_eq!(smoke::smoke_decide(429, 1, 10.0, 1.0), 1);
    assert!((smoke::smoke_last_probability() - 19.0 / 22.0).abs() < 1e-12);
    assert_eq!(smoke::smoke_last_reason(), 1);
    assert_eq!(smoke::smoke_decide(500, 1, 10.0, 1.0), 0);
    assert_eq!(smoke::smoke_last_reason(), 2);
    assert_eq!(smoke::smoke_decide(500, 1, 1000.0, 1.0), 1);
    assert_eq!(smoke::smoke_decide(429, 4, 10.0, 1.0), 0);
    assert_eq!(smoke::smoke_last_reason(), 3);
    assert_eq!(smoke::smoke_decide(429, 1, f64::NAN, 1.0), -1);
    // Hostile counts and statuses are absorbed, not trapped on.
    smoke::smoke_observe(u32::MAX, u32::MAX, 7);
    assert!((0..=1).contains(&smoke::smoke_decide(u32::MAX, 0, 10.0, 1.0)));
}

#[test]
fn special_functions_breaker_budget_backoff_and_decay() {
    assert_eq!(smoke::smoke_inc_beta(0.5, 2.0, 3.0), 11.0 / 16.0);
    assert!((smoke::smoke_quantile(2.0, 3.0, 11.0 / 16.0) - 0.5).abs() < 1e-14);
    assert!(smoke::smoke_inc_beta(0.5, -1.0, 3.0).is_nan());
    assert_eq!(smoke::smoke_breaker_failures_to_open(200), 58);
    assert_eq!(smoke::smoke_breaker_failures_to_open(57), 58);
    assert_eq!(smoke::smoke_breaker_recovers(), 1);
    assert_eq!(smoke::smoke_budget_spent(5, 8), 5);
    assert_eq!(smoke::smoke_budget_spent(5, 3), 3);
    let delays = [1, 2, 3, 8].map(|n| smoke::smoke_backoff_ms(n));
    assert_eq!(delays, [200.0, 400.0, 800.0, 10_000.0]);
    assert_eq!(smoke::smoke_decay_factor(1000.0, 1000.0), 0.5);
    assert!(smoke::smoke_decay_factor(1000.0, -1.0).is_nan());
}
