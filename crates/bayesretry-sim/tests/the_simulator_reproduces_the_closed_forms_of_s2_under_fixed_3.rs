//! S2 (d = 0.05, s = 0.55) under fixed 3 retries (B1, 4 attempts), about 100 000
//! calls: success per call and attempts per call within 3 standard errors of
//! the closed forms of the specification.
#![allow(clippy::panic, reason = "a test fails by panicking")]

use bayesretry_sim::{Baseline, PolicySpec, Scenario, run};

#[test]
fn success_and_attempts_per_call_match_the_closed_forms() {
    let (d, s) = (0.05_f64, 0.55_f64);
    // P(the first k attempts fail) = d + (1 - d)(1 - s)^k
    let fail = |k: i32| d + (1.0 - d) * (1.0 - s).powi(k);
    let success = 1.0 - fail(4);
    let attempts: f64 = (0..4).map(fail).sum();
    // E[A^2] = sum_k (2k + 1) P(A > k)
    let second: f64 = (0..4).map(|k| f64::from(2 * k + 1) * fail(k)).sum();
    let attempts_var = second - attempts * attempts;

    let (mut calls, mut successes, mut total_attempts) = (0_u64, 0_u64, 0_u64);
    for seed in 1..=17 {
        let r = run(Scenario::S2, &PolicySpec::Baseline(Baseline::B1), seed, 4)
            .unwrap_or_else(|e| panic!("run failed: {e}"));
        calls += r.pooled.calls;
        successes += r.pooled.successes;
        total_attempts += r.pooled.attempts;
    }
    assert!(calls >= 100_000, "{calls}");
    let n = calls as f64;
    let got_success = successes as f64 / n;
    let got_attempts = total_attempts as f64 / n;
    let se_success = (success * (1.0 - success) / n).sqrt();
    let se_attempts = (attempts_var / n).sqrt();
    assert!(
        (got_success - success).abs() < 3.0 * se_success,
        "success {got_success} vs {success} (se {se_success})"
    );
    assert!(
        (got_attempts - attempts).abs() < 3.0 * se_attempts,
        "attempts {got_attempts} vs {attempts} (se {se_attempts})"
    );
}
