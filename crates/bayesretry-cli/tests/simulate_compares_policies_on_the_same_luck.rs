//! `bayesretry simulate`: the adaptive policy, fixed-3 and no-retry on the same
//! simulated calls; deterministic per seed; `--plot` writes a well-formed SVG.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use common::{arg, bayesretry, scratch};
use serde_json::Value;

fn simulate_json(args: &[&str]) -> Value {
    let mut all = vec!["simulate", "--json"];
    all.extend_from_slice(args);
    let run = bayesretry(&all, b"");
    assert_eq!(run.code, 0, "{run:#?}");
    serde_json::from_str(&run.stdout).unwrap()
}

/// The entry of `policy` (by its name's first word) in a JSON report.
fn policy<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["policy"].as_str().unwrap().starts_with(name))
        .unwrap()
}

#[test]
fn the_default_run_prints_the_comparison_table() {
    let run = bayesretry(&["simulate"], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let out = &run.stdout;
    assert!(out.contains("scenario  outage: "), "{out}");
    assert!(out.contains("calls     500 at 10 per second (50 s of virtual time), seed 1"));
    assert!(out.contains("outage    from 12.5 s to 25 s"), "{out}");
    for row in ["adaptive (greedy) ", "fixed-3 ", "no-retry "] {
        assert_eq!(
            out.lines().filter(|l| l.starts_with(row)).count(),
            1,
            "{row}: {out}"
        );
    }
    for column in ["success rate", "attempts", "wasted retries", "net value"] {
        assert!(out.contains(column), "{column}: {out}");
    }
    assert!(out.contains("adaptive vs fixed-3: "), "{out}");
}

#[test]
fn the_same_seed_gives_the_same_numbers_and_another_seed_others() {
    let a = bayesretry(&["simulate", "--n", "3000", "--seed", "7"], b"");
    let b = bayesretry(&["simulate", "--n", "3000", "--seed", "7"], b"");
    let c = bayesretry(&["simulate", "--n", "3000", "--seed", "8"], b"");
    assert_eq!(a.code, 0, "{a:#?}");
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(a.stdout, c.stdout);
    let thompson = [
        "simulate",
        "--n",
        "2000",
        "--strategy",
        "thompson",
        "--json",
    ];
    assert_eq!(
        bayesretry(&thompson, b"").stdout,
        bayesretry(&thompson, b"").stdout
    );
}

#[test]
fn the_policies_meet_the_same_calls_and_the_numbers_add_up() {
    let report = simulate_json(&["--n", "4000", "--value", "20", "--cost", "2"]);
    assert_eq!(report["calls"], 4000);
    let none = policy(&report, "no-retry");
    let fixed = policy(&report, "fixed-3");
    let adaptive = policy(&report, "adaptive");
    for p in [none, fixed, adaptive] {
        assert_eq!(p["calls"], 4000);
        let (s, a) = (
            p["successes"].as_f64().unwrap(),
            p["attempts"].as_f64().unwrap(),
        );
        assert_eq!(p["net_value"].as_f64().unwrap(), 20.0 * s - 2.0 * a);
        assert!(a <= 4000.0 + p["retries"].as_f64().unwrap(), "{report:#}");
    }
    // without a breaker every call makes its first attempt; the adaptive
    // policy's breaker may refuse a call outright during the outage
    for p in [none, fixed] {
        let a = p["attempts"].as_f64().unwrap();
        assert_eq!(a, 4000.0 + p["retries"].as_f64().unwrap());
    }
    assert_eq!(none["attempts"], 4000);
    // same luck: every call no-retry wins, the others win on their first try
    assert!(fixed["successes"].as_u64() >= none["successes"].as_u64());
    assert!(adaptive["successes"].as_u64() >= none["successes"].as_u64());
    // through the outage fixed-3 retries every call three times; the adaptive
    // policy learns that a 503 now is not worth retrying
    let wasted = |p: &Value| p["wasted_retries"].as_u64().unwrap();
    assert!(wasted(adaptive) * 5 < wasted(fixed), "{report:#}");
}

#[test]
fn a_hard_down_endpoint_costs_fixed_3_three_wasted_retries_a_call() {
    let report = simulate_json(&["--n", "1000", "--scenario", "hard-down"]);
    assert_eq!(policy(&report, "fixed-3")["wasted_retries"], 3000);
    assert!(
        policy(&report, "adaptive")["wasted_retries"]
            .as_u64()
            .unwrap()
            < 100
    );
    assert_eq!(report["outage_s"], serde_json::json!([0.0, 100.0]));
}

#[test]
fn every_scenario_and_strategy_runs() {
    for scenario in ["outage", "flaky", "rate-limited", "hard-down", "degrading"] {
        for strategy in ["greedy", "thompson", "lookahead"] {
            let report =
                simulate_json(&["--n", "600", "--scenario", scenario, "--strategy", strategy]);
            assert_eq!(report["scenario"], scenario);
            assert_eq!(report["strategy"], strategy);
            assert_eq!(report["policies"].as_array().unwrap().len(), 3);
        }
    }
}

#[test]
fn the_plot_is_a_well_formed_svg_with_every_series_labelled() {
    let path = scratch("simulate-plot.svg");
    let run = bayesretry(&["simulate", "--n", "2000", "--plot", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some("1000"));
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for label in [
        "outage scenario, 2000 calls, seed 1",
        "Success rate per call",
        "What the adaptive policy believes",
        "Retries per call",
        "adaptive (greedy)",
        "fixed-3",
        "no-retry",
        "95% credible band",
        "true probability",
        "time (s)",
    ] {
        assert!(
            labels.iter().any(|l| l.contains(label)),
            "{label}: {labels:?}"
        );
    }
    // the lines: three policies in two panels, the posterior mean, the truth
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .count();
    assert!(lines >= 8, "{lines} polylines");
}

#[test]
fn huge_figures_print_in_scientific_notation_and_overflowing_ones_are_refused() {
    let run = bayesretry(
        &[
            "simulate", "--n", "100", "--value", "1e300", "--cost", "1e300",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{run:#?}");
    let out = &run.stdout;
    assert!(
        out.contains("a success is worth 1e300, an attempt costs 1e300;"),
        "{out}"
    );
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    assert!(out.lines().all(|l| l.len() < 160), "{out}");
    let no_retry = out.lines().find(|l| l.starts_with("no-retry ")).unwrap();
    assert!(
        no_retry.ends_with("e301") || no_retry.ends_with("e300"),
        "{out}"
    );
    bayesretry(&["simulate", "--value", "1e308", "--cost", "1e308"], b"").is_refused_with(&[
        "invalid value '1e308' for '--value <V>'",
        "must be at most 1e300",
    ]);
    bayesretry(&["simulate", "--cost", "1e301"], b"")
        .is_refused_with(&["'--cost <C>'", "must be at most 1e300"]);
}

#[test]
fn bad_arguments_and_an_unwritable_plot_have_their_status() {
    bayesretry(&["simulate", "--n", "0"], b"").is_refused_with(&["--n", "0"]);
    bayesretry(&["simulate", "--scenario", "meteor"], b"").is_refused_with(&["meteor"]);
    bayesretry(&["simulate", "--strategy", "hope"], b"").is_refused_with(&["hope"]);
    bayesretry(&["simulate", "--value", "0"], b"").is_refused_with(&["--value"]);
    let run = bayesretry(&["simulate", "--plot", "/no/such/dir/plot.svg"], b"");
    run.fails_with(
        74,
        &["/no/such/dir/plot.svg: write failed: no such file or directory"],
    );
    assert!(run.stdout.is_empty(), "checked before the run: {run:#?}");
}

/// `/dev/full` opens for writing, so it passes the check before the run, but
/// every write to it fails (Linux).
#[cfg(target_os = "linux")]
#[test]
fn a_plot_that_cannot_be_written_after_the_run_still_leaves_the_table() {
    let run = bayesretry(&["simulate", "--n", "100", "--plot", "/dev/full"], b"");
    assert_eq!(run.code, 74, "{run:#?}");
    assert!(run.stdout.contains("adaptive vs fixed-3: "), "{run:#?}");
    assert_eq!(
        run.stderr,
        "error: /dev/full: write failed: no space left on device\n"
    );
}

#[test]
fn an_existing_plot_file_is_overwritten() {
    let path = scratch("simulate-plot-again.svg");
    std::fs::write(&path, "an older plot").unwrap();
    let run = bayesretry(&["simulate", "--n", "100", "--plot", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("<svg "), "{text}");
}

#[test]
fn an_adaptive_run_that_spends_more_says_more_not_a_negative_fewer() {
    // On this luck the degrading endpoint's adaptive run makes a few more
    // attempts and wastes a few more retries than fixed-3.
    let args = [
        "simulate",
        "--n",
        "300",
        "--seed",
        "42",
        "--scenario",
        "degrading",
    ];
    let run = bayesretry(&args, b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let report = simulate_json(&args[1..]);
    let (adaptive, fixed) = (policy(&report, "adaptive"), policy(&report, "fixed-3"));
    assert!(adaptive["attempts"].as_u64() > fixed["attempts"].as_u64());
    assert!(adaptive["wasted_retries"].as_u64() > fixed["wasted_retries"].as_u64());
    assert!(
        run.stdout
            .contains("adaptive vs fixed-3: 1% more attempts, 3% more wasted retries, "),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("-1% fewer"), "{}", run.stdout);
}

#[test]
fn a_value_far_below_the_cost_runs_and_the_adaptive_policy_never_retries() {
    // V/c of 1e-600 rounds to 0, and c/V of 1e320 is infinite: within the
    // bounds each flag takes, all the same
    for (value, cost) in [("1e-300", "1e300"), ("1e-320", "1")] {
        let report = simulate_json(&["--n", "300", "--value", value, "--cost", cost]);
        let adaptive = policy(&report, "adaptive");
        assert_eq!(adaptive["calls"], 300, "{report}");
        assert_eq!(adaptive["retries"], 0, "{report}");
        assert_eq!(policy(&report, "fixed-3")["calls"], 300, "{report}");
    }
}
