//! The golden file: every scenario, every baseline and oracle, and the three
//! BayesRetry strategies (told V/c = 10), seed 1, max_attempts 4. Any change in
//! behaviour shows as a diff. To accept a change on purpose, run the test with
//! `BAYESRETRY_BLESS=1` and commit the new file.
#![allow(clippy::panic, reason = "a test fails by panicking")]

use std::path::Path;

use bayesretry_sim::{PolicySpec, REFERENCE_VALUE, Scenario, golden, policies, suite};

#[test]
fn seed_1_reproduces_the_committed_results_exactly() {
    let specs: Vec<PolicySpec> = policies(4)
        .into_iter()
        .filter(|p| p.value().is_none_or(|v| v == REFERENCE_VALUE))
        .collect();
    let results =
        suite(&Scenario::ALL, &[1], &specs, 4, 2).unwrap_or_else(|e| panic!("suite failed: {e}"));
    let text = golden(&results);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/seed1.jsonl");
    if std::env::var_os("BAYESRETRY_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("write {path:?}: {e}"));
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {path:?}: {e}; bless with BAYESRETRY_BLESS=1"));
    for (i, (got, want)) in text.lines().zip(expected.lines()).enumerate() {
        assert_eq!(got, want, "line {} of {path:?} differs", i + 1);
    }
    assert_eq!(
        text.lines().count(),
        expected.lines().count(),
        "line count differs"
    );
}
