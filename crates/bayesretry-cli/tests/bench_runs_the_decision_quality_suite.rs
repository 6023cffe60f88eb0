//! `bayesretry bench`: the decision-quality suite of bayesretry-sim, its tables,
//! JSON and plots; no progress bar when stderr is not a terminal.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use common::{arg, bayesretry, scratch};

#[test]
fn one_scenario_and_seed_prints_the_tables_and_draws_the_sweep() {
    let dir = scratch("bench-plots");
    let _ = std::fs::remove_dir_all(&dir);
    let run = bayesretry(
        &[
            "bench",
            "--scenario",
            "outage",
            "--seeds",
            "1",
            "--plot",
            arg(&dir),
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stderr.is_empty(),
        "no progress bar off a terminal: {run:#?}"
    );
    let out = &run.stdout;
    assert!(out.contains("### S5 — 1 seed, max_attempts 4"), "{out}");
    for row in [
        "| B0 |", "| B1 |", "| DP |", "| BR-G |", "| BR-T |", "| BR-L |",
    ] {
        assert!(out.contains(row), "{row}: {out}");
    }
    assert!(out.contains("Net value per 1000 calls"), "{out}");
    assert!(out.contains("Goals for BR-G"), "{out}");
    let svg = std::fs::read_to_string(dir.join("S5.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for label in ["S5, 1 seed", "BR-G", "DP oracle (knows the truth)"] {
        assert!(
            labels.iter().any(|l| l.contains(label)),
            "{label}: {labels:?}"
        );
    }
}

#[test]
fn json_holds_one_result_per_policy_and_seed() {
    let run = bayesretry(
        &[
            "bench",
            "--scenario",
            "S4",
            "--seeds",
            "2",
            "--json",
            "--previous-default",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{run:#?}");
    let results: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let results = results.as_array().unwrap();
    let per_seed = results.iter().filter(|r| r["seed"] == 1).count();
    assert!(per_seed > 20, "{per_seed}");
    assert_eq!(results.len(), 2 * per_seed);
    assert!(results.iter().all(|r| r["scenario"] == "S4"));
    let greedy = results
        .iter()
        .find(|r| r["policy"] == "BR-G" && r["seed"] == 1 && r["value_ratio"] == 10.0)
        .unwrap();
    // nothing ever succeeds on a hard-down endpoint
    assert_eq!(greedy["pooled"]["successes"], 0);
    assert!(
        results.iter().any(|r| r["policy"] == "BR-G0"),
        "--previous-default adds BR-G0"
    );
}

#[test]
fn an_unknown_scenario_or_no_seed_is_a_usage_error() {
    bayesretry(&["bench", "--scenario", "S7"], b"").is_refused_with(&["S7", "S0, S1"]);
    bayesretry(&["bench", "--seeds", "0"], b"").is_refused_with(&["--seeds", "0"]);
}

#[test]
fn a_scenario_named_twice_or_by_its_alias_runs_once() {
    let run = bayesretry(
        &[
            "bench",
            "--scenario",
            "s5",
            "--scenario",
            "S5",
            "--scenario",
            "outage",
            "--seeds",
            "1",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{run:#?}");
    let out = &run.stdout;
    assert_eq!(out.matches("### S5 — ").count(), 1, "{out}");
    assert!(out.contains("### S5 — 1 seed, max_attempts 4"), "{out}");
    assert!(
        !out.contains("± 0.0000"),
        "identical runs shown as seeds: {out}"
    );
}

#[test]
fn a_plot_directory_that_is_a_file_is_refused_before_the_run() {
    let file = scratch("bench-plot-file.svg");
    std::fs::write(&file, "not a directory").unwrap();
    let run = bayesretry(
        &[
            "bench",
            "--scenario",
            "S4",
            "--seeds",
            "1",
            "--plot",
            arg(&file),
        ],
        b"",
    );
    run.fails_with(
        64,
        &[&format!(
            "error: --plot {}: not a directory",
            file.display()
        )],
    );
    assert!(run.stdout.is_empty(), "{run:#?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a directory");
}

/// A plot linked to `/dev/full` opens for writing, so it passes the check
/// before the run, but every write to it fails (Linux).
#[cfg(target_os = "linux")]
#[test]
fn a_plot_that_cannot_be_written_after_the_run_still_leaves_the_tables() {
    let dir = scratch("bench-plot-full");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("S4.svg")).unwrap();
    let run = bayesretry(
        &[
            "bench",
            "--scenario",
            "S4",
            "--seeds",
            "1",
            "--plot",
            arg(&dir),
        ],
        b"",
    );
    assert_eq!(run.code, 74, "{run:#?}");
    assert!(run.stdout.contains("### S4 — 1 seed"), "{run:#?}");
    assert_eq!(
        run.stderr,
        format!(
            "error: {}: write failed: no space left on device\n",
            dir.join("S4.svg").display()
        )
    );
}
