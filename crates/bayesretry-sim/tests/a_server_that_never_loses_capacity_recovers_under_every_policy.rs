//! S7 (retry storm): cells that must recover, a cell that must not, the
//! recovery criterion itself, and determinism.

use bayesretry_sim::storm::{self, PolicyId, S7aShape, S7bCell, Series};

#[test]
fn a_cell_without_a_capacity_drop_recovers_under_every_policy() {
    let cell = S7bCell {
        fraction: 1.0,
        duration_s: 40.0,
        utilisation: 0.6,
    };
    for policy in PolicyId::ALL {
        let row = storm::s7b_run(1, &cell, policy);
        assert!(row.recovered, "{policy:?}: {row:?}");
        assert!(row.success_rate > 0.999, "{policy:?}: {row:?}");
        assert!(row.amplification < 1.01, "{policy:?}: {row:?}");
    }
}

#[test]
fn immediate_fixed_retries_stay_metastable_after_a_long_deep_drop() {
    let cell = S7bCell {
        fraction: 0.2,
        duration_s: 40.0,
        utilisation: 0.7,
    };
    let row = storm::s7b_run(1, &cell, PolicyId::B1);
    assert!(!row.recovered, "{row:?}");
    // the storm: most calls end up making all four attempts
    assert!(row.amplification > 2.5, "{row:?}");
}

#[test]
fn the_default_breaker_whose_evidence_fades_sheds_a_storm_that_the_previous_default_rode() {
    let cell = S7bCell {
        fraction: 0.2,
        duration_s: 40.0,
        utilisation: 0.8,
    };
    let default = storm::s7b_run(1, &cell, PolicyId::BayesRetry);
    let previous = storm::s7b_run(1, &cell, PolicyId::BayesRetryPrevious);
    assert!(default.recovered, "{default:?}");
    assert!(!previous.recovered, "{previous:?}");
}

#[test]
fn recovery_needs_ten_full_seconds_of_goodput_within_a_minute_of_the_end() {
    let healthy = |from: usize, len: usize| {
        let mut series = Series {
            offered: vec![100; len],
            goodput: vec![0; len],
            attempts: vec![100; len],
        };
        for slot in series.goodput.iter_mut().skip(from) {
            *slot = 96;
        }
        series
    };
    // goodput back at 96 % from t = 150 s: 50 s after an end at 100 s
    assert!(storm::recovered(&healthy(150, 300), 100.0));
    // from t = 165 s: the first full window starts 65 s after the end
    assert!(!storm::recovered(&healthy(165, 300), 100.0));
    // the run ends before ten seconds of goodput could be seen
    assert!(!storm::recovered(&healthy(150, 155), 100.0));
    // 94 % is not enough
    let mut short = healthy(0, 300);
    short.goodput.iter_mut().for_each(|g| *g = 94);
    assert!(!storm::recovered(&short, 100.0));
}

#[test]
fn the_same_seed_gives_the_same_storm() {
    let first = storm::s7a_table(3);
    assert_eq!(first, storm::s7a_table(3));
    assert_ne!(first, storm::s7a_table(4));
    // every policy met the same calls
    for shape in [S7aShape::Ramp, S7aShape::Spike] {
        let calls: Vec<u64> = first
            .iter()
            .filter(|r| r.shape == shape)
            .map(|r| r.calls)
            .collect();
        assert!(
            calls.windows(2).all(|w| w[0] == w[1]),
            "{shape:?}: {calls:?}"
        );
    }
}

#[test]
fn a_cell_without_load_is_an_empty_run_not_a_hang() {
    let cell = S7bCell {
        fraction: 0.5,
        duration_s: 10.0,
        utilisation: 0.0,
    };
    let row = storm::s7b_run(1, &cell, PolicyId::BayesRetry);
    assert_eq!((row.success_rate, row.amplification), (1.0, 1.0));
    // nothing offered, so no window can show goodput at 95 % of it
    assert!(!row.recovered);
}
