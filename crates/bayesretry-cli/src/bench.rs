//! `bayesretry bench`: the decision-quality suite of `bayesretry-sim`, with its
//! tables, a progress bar, and a regret plot per scenario.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::thread;

use bayesretry_sim::{
    Interval, RunResult, Scenario, VALUE_RATIOS, goals, goals_markdown, policies_with,
    scenario_markdown, suite_with_progress,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::BenchArgs;
use crate::error::Error;
use crate::output::{Output, write_json};
use crate::plot::{Sweep, SweepLine, check_writable, write_sweep_svg};

/// The scenarios when none is named: every one the simulator runs.
fn all_scenarios() -> Vec<Scenario> {
    Scenario::ALL.to_vec()
}

/// `scenarios` in the order first named, each once: `S5`, `s5` and `outage`
/// name the same scenario, and running it twice would count one seed's run as
/// two independent seeds.
fn distinct(scenarios: &[Scenario]) -> Vec<Scenario> {
    let mut once: Vec<Scenario> = Vec::with_capacity(scenarios.len());
    for scenario in scenarios {
        if !once.contains(scenario) {
            once.push(*scenario);
        }
    }
    once
}

/// Runs `bench` and writes its tables (or JSON) to `out`, and the plots when
/// asked.
pub(crate) fn run_bench(args: &BenchArgs, out: &mut Output<'_>) -> Result<(), Error> {
    let scenarios = if args.scenario.is_empty() {
        all_scenarios()
    } else {
        distinct(&args.scenario)
    };
    if let Some(dir) = &args.plot {
        check_plot_dir(dir, &scenarios)?;
    }
    let results = run_suite(
        &scenarios,
        args.seeds,
        args.max_attempts,
        args.previous_default,
    )?;
    let printed = if args.json {
        write_json(out, &results)
    } else {
        out.text(&tables(args, &scenarios, &results))
    };
    // The tables are printed even when a plot cannot be written after all,
    // and the plots drawn even when nobody reads the tables (`| head`).
    let plotted = match &args.plot {
        Some(dir) => plot_all(dir, &scenarios, &results),
        None => Ok(()),
    };
    plotted.and(printed)
}

/// The tables of every scenario, then the goals, met or not.
fn tables(args: &BenchArgs, scenarios: &[Scenario], results: &[RunResult]) -> String {
    let mut text = String::new();
    for scenario in scenarios {
        text.push_str(&scenario_markdown(results, scenario.id()));
    }
    let checked = goals(results, "BR-G");
    if !checked.is_empty() {
        text.push_str("Goals for BR-G, BayesRetry's default (greedy):\n\n");
        text.push_str(&goals_markdown(&checked));
    }
    let previous = if args.previous_default {
        goals(results, "BR-G0")
    } else {
        Vec::new()
    };
    if !previous.is_empty() {
        text.push_str("\nGoals for BR-G0, the previous default:\n\n");
        text.push_str(&goals_markdown(&previous));
    }
    text
}

/// Every run of the suite through `bayesretry-sim`'s runner, on as many
/// threads as the machine has, with a progress bar on stderr when stderr is a
/// terminal.
fn run_suite(
    scenarios: &[Scenario],
    seeds: u64,
    max_attempts: u32,
    previous_default: bool,
) -> Result<Vec<RunResult>, Error> {
    let specs = policies_with(max_attempts, previous_default);
    let seeds: Vec<u64> = (1..=seeds).collect();
    let runs = scenarios
        .len()
        .saturating_mul(seeds.len())
        .saturating_mul(specs.len());
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(runs as u64), target);
    if let Ok(style) = ProgressStyle::with_template("[{bar:32}] {pos}/{len} runs, {eta} left") {
        bar.set_style(style.progress_chars("=> "));
    }
    let threads = thread::available_parallelism().map_or(1, usize::from);
    let results = suite_with_progress(scenarios, &seeds, &specs, max_attempts, threads, &|| {
        bar.inc(1)
    });
    bar.finish_and_clear();
    results
        .map_err(|e| Error::Internal(format!("bench: a policy of the suite cannot be built: {e}")))
}

/// Checks, before the suite runs, that `DIR/<scenario>.svg` can be written for
/// every scenario: `dir` is made if it is not there, and refused if it is a
/// file (the plots would otherwise fail once the suite is done).
fn check_plot_dir(dir: &Path, scenarios: &[Scenario]) -> Result<(), Error> {
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::Usage(format!(
            "--plot {}: not a directory: bench writes one SVG per scenario into the \
             directory --plot names",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|error| Error::Write {
        path: dir.display().to_string(),
        error,
    })?;
    for scenario in scenarios {
        check_writable(&plot_path(dir, *scenario))?;
    }
    Ok(())
}

/// Where the plot of `scenario` goes.
fn plot_path(dir: &Path, scenario: Scenario) -> PathBuf {
    dir.join(format!("{}.svg", scenario.id()))
}

/// Writes `DIR/<scenario>.svg` for every scenario: regret to the DP oracle
/// against V/c.
fn plot_all(dir: &Path, scenarios: &[Scenario], results: &[RunResult]) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|error| Error::Write {
        path: dir.display().to_string(),
        error,
    })?;
    for scenario in scenarios {
        let sweep = sweep(results, scenario.id());
        write_sweep_svg(&plot_path(dir, *scenario), &sweep)?;
    }
    Ok(())
}

/// The mean net value per 1000 calls of `policy` on `scenario` at `value`,
/// over seeds.
fn net_value(results: &[RunResult], scenario: &str, policy: &str, value: f64) -> Option<f64> {
    let values: Vec<f64> = results
        .iter()
        .filter(|r| {
            r.scenario == scenario && r.policy == policy && r.value_ratio.is_none_or(|v| v == value)
        })
        .map(|r| r.pooled.net_value(value))
        .collect();
    let mean = Interval::of(&values).mean;
    mean.is_finite().then_some(mean)
}

/// Regret to the DP oracle against V/c, for BayesRetry's strategies and every
/// baseline of `scenario`.
fn sweep(results: &[RunResult], scenario: &str) -> Sweep {
    let mut ids: Vec<&str> = Vec::new();
    for r in results.iter().filter(|r| r.scenario == scenario) {
        if !ids.contains(&r.policy.as_str()) {
            ids.push(&r.policy);
        }
    }
    let line = |id: &str| -> Vec<(f64, f64)> {
        VALUE_RATIOS
            .iter()
            .filter_map(|&v| {
                let dp = net_value(results, scenario, "DP", v)?;
                Some((v, dp - net_value(results, scenario, id, v)?))
            })
            .collect()
    };
    let seeds = results
        .iter()
        .filter(|r| r.scenario == scenario && r.policy == "B0")
        .count();
    Sweep {
        title: format!(
            "bayesretry bench: {scenario}, {seeds} {} — regret to the DP oracle (lower is better)",
            if seeds == 1 { "seed" } else { "seeds" }
        ),
        bayes: ids
            .iter()
            .filter(|id| id.starts_with("BR"))
            .map(|id| SweepLine {
                name: (*id).to_owned(),
                points: line(id),
            })
            .collect(),
        baselines: ids
            .iter()
            .filter(|id| id.starts_with('B') && !id.starts_with("BR"))
            .map(|id| SweepLine {
                name: (*id).to_owned(),
                points: line(id),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use bayesretry_sim::Scenario;

    use super::distinct;

    #[test]
    fn a_scenario_named_twice_is_kept_once_in_the_order_first_named() {
        let named = [
            Scenario::S5,
            Scenario::S0,
            Scenario::S5,
            Scenario::S0,
            Scenario::S4,
        ];
        assert_eq!(distinct(&named), [Scenario::S5, Scenario::S0, Scenario::S4]);
    }
}
