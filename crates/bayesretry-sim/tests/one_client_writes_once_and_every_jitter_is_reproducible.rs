//! A1 (jitter under contention): small cases whose answer is known, and
//! determinism of the published table.

use bayesretry_sim::anchors::a1::{self, Algorithm};

#[test]
fn a_lone_client_needs_exactly_one_write_whatever_the_backoff() {
    for algorithm in Algorithm::ALL {
        for run in 0..20 {
            let outcome = a1::run_once(9, run, 1, algorithm);
            assert_eq!(outcome.writes, 1, "{algorithm:?} run {run}");
            assert!(outcome.complete);
            // read out and back, write out and back: four hops of ~10 ms
            assert!(
                (20.0..=70.0).contains(&outcome.last_done_ms),
                "{algorithm:?}: {} ms",
                outcome.last_done_ms
            );
        }
    }
}

#[test]
fn every_client_finishes_and_contention_costs_at_least_one_write_each() {
    for algorithm in Algorithm::ALL {
        let outcome = a1::run_once(3, 0, 20, algorithm);
        assert!(outcome.complete, "{algorithm:?}");
        assert!(outcome.writes >= 20, "{algorithm:?}: {}", outcome.writes);
    }
}

#[test]
fn without_backoff_contention_wastes_more_writes_than_full_jitter() {
    let rows = a1::table(1, &[50], 20);
    let writes = |algorithm| {
        rows.iter()
            .find(|row| row.algorithm == algorithm)
            .map_or(f64::NAN, |row| row.writes)
    };
    assert!(writes(Algorithm::None) > 1.5 * writes(Algorithm::Full));
    assert!(writes(Algorithm::Exponential) > writes(Algorithm::Full));
}

#[test]
fn the_same_seed_gives_the_same_table_and_another_seed_a_different_one() {
    let clients = [10, 30];
    let first = a1::table(5, &clients, 5);
    assert_eq!(first, a1::table(5, &clients, 5));
    assert_ne!(first, a1::table(6, &clients, 5));
    assert_eq!(first.len(), clients.len() * Algorithm::ALL.len());
}
