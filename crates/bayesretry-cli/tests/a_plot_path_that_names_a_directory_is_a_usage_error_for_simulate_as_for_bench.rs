//! `simulate --plot` names one SVG file, `bench --plot` a directory: given
//! the other kind, each refuses it before the run as a wrong command line
//! (status 64), naming the flag and the path, and writes nothing. The bench's
//! side is `bench_runs_the_decision_quality_suite.rs`'s
//! `a_plot_directory_that_is_a_file_is_refused_before_the_run`.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use common::{arg, bayesretry, scratch};

#[test]
fn simulate_refuses_a_plot_path_that_is_a_directory() {
    let dir = scratch("simulate-plot-into-a-directory");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = bayesretry(&["simulate", "--n", "50", "--plot", arg(&dir)], b"");
    run.fails_with(
        64,
        &[&format!(
            "error: --plot {}: is a directory: simulate writes one SVG file at the path --plot names",
            dir.display()
        )],
    );
    assert!(run.stdout.is_empty(), "{run:#?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}
