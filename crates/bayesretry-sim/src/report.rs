//! Aggregation over seeds (mean and 95 % interval), the Markdown tables, the
//! goal checks and the files the runner writes.

use core::fmt::Write as _;
use std::io;
use std::path::Path;

use serde::Serialize;

use crate::metrics::Metrics;
use crate::runner::{REFERENCE_VALUE, RunResult, VALUE_RATIOS};

/// A mean over seeds with its 95 % interval (Student t).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The mean.
    pub mean: f64,
    /// Half-width of the 95 % interval.
    pub half_width: f64,
    /// Number of values.
    pub n: usize,
}

impl Interval {
    /// The mean and 95 % interval of `values`.
    pub fn of(values: &[f64]) -> Interval {
        let n = values.len();
        if n == 0 {
            return Interval {
                mean: f64::NAN,
                half_width: f64::NAN,
                n,
            };
        }
        let nf = n as f64;
        let mean = values.iter().sum::<f64>() / nf;
        if n < 2 {
            return Interval {
                mean,
                half_width: 0.0,
                n,
            };
        }
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (nf - 1.0);
        Interval {
            mean,
            half_width: t95(n - 1) * (var / nf).sqrt(),
            n,
        }
    }

    fn cell(&self, decimals: usize) -> String {
        if self.mean.is_nan() {
            return "–".to_owned();
        }
        if self.n < 2 {
            return format!("{:.*}", decimals, self.mean);
        }
        format!(
            "{:.*} ± {:.*}",
            decimals, self.mean, decimals, self.half_width
        )
    }
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    TABLE.get(df.saturating_sub(1)).copied().unwrap_or(1.96)
}

/// The runs of one policy (at one V/c, for policies told it) over seeds.
fn select<'a>(
    results: &'a [RunResult],
    scenario: &str,
    policy: &str,
    value: f64,
) -> Vec<&'a RunResult> {
    results
        .iter()
        .filter(|r| {
            r.scenario == scenario && r.policy == policy && r.value_ratio.is_none_or(|v| v == value)
        })
        .collect()
}

/// Metrics of a run, pooled or for one endpoint.
fn metrics_of<'a>(r: &'a RunResult, endpoint: Option<&str>) -> Option<&'a Metrics> {
    match endpoint {
        None => Some(&r.pooled),
        Some(name) => r.endpoints.iter().find(|(n, _)| n == name).map(|(_, m)| m),
    }
}

/// Net value per 1000 calls at `value`, over seeds, per seed (sorted by seed).
fn net_values(
    results: &[RunResult],
    scenario: &str,
    policy: &str,
    value: f64,
    endpoint: Option<&str>,
) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = select(results, scenario, policy, value)
        .into_iter()
        .filter_map(|r| metrics_of(r, endpoint).map(|m| (r.seed, m.net_value(value))))
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

fn stat(
    results: &[RunResult],
    scenario: &str,
    policy: &str,
    endpoint: Option<&str>,
    f: impl Fn(&RunResult, &Metrics) -> Option<f64>,
) -> Interval {
    stat_at(results, scenario, policy, REFERENCE_VALUE, endpoint, f)
}

/// [`stat`] of the runs of a policy told the V/c `value` (a baseline's runs
/// serve every V/c).
fn stat_at(
    results: &[RunResult],
    scenario: &str,
    policy: &str,
    value: f64,
    endpoint: Option<&str>,
    f: impl Fn(&RunResult, &Metrics) -> Option<f64>,
) -> Interval {
    let values: Vec<f64> = select(results, scenario, policy, value)
        .into_iter()
        .filter_map(|r| metrics_of(r, endpoint).and_then(|m| f(r, m)))
        .collect();
    Interval::of(&values)
}

/// The V/c of the sweep at which `policy` has runs in `scenario`.
fn values_run(results: &[RunResult], scenario: &str, policy: &str) -> Vec<f64> {
    VALUE_RATIOS
        .into_iter()
        .filter(|&v| !select(results, scenario, policy, v).is_empty())
        .collect()
}

/// A goal judged at each V/c of the sweep: met if it holds at every one.
/// `misses` names the V/c where it does not, with their figures; `at_reference`
/// gives the figures at the tables' V/c when it holds everywhere.
fn swept_goal(goal: String, misses: Vec<String>, values: usize, at_reference: String) -> Goal {
    Goal {
        goal,
        met: misses.is_empty(),
        detail: if misses.is_empty() {
            format!("holds at all {values} V/c; at V/c {REFERENCE_VALUE}: {at_reference}")
        } else {
            format!(
                "misses at {}; at V/c {REFERENCE_VALUE}: {at_reference}",
                misses.join(", ")
            )
        },
    }
}

/// The policies of the result set, in first-seen order.
fn policy_ids(results: &[RunResult], scenario: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in results.iter().filter(|r| r.scenario == scenario) {
        if !out.contains(&r.policy) {
            out.push(r.policy.clone());
        }
    }
    out
}

/// Ids of the baselines (B*), in order.
fn baseline_ids(results: &[RunResult], scenario: &str) -> Vec<String> {
    policy_ids(results, scenario)
        .into_iter()
        .filter(|p| p.starts_with('B') && !p.starts_with("BR"))
        .collect()
}

/// Per-seed differences a − b, paired by seed.
fn paired(a: &[(u64, f64)], b: &[(u64, f64)]) -> Vec<f64> {
    a.iter()
        .filter_map(|(s, x)| b.iter().find(|(t, _)| t == s).map(|(_, y)| x - y))
        .collect()
}

/// The Markdown summary of one scenario.
pub fn scenario_markdown(results: &[RunResult], scenario: &str) -> String {
    let mut md = String::new();
    let seeds = select(results, scenario, "B0", REFERENCE_VALUE).len();
    let max_attempts = results.first().map_or(4, |r| r.max_attempts);
    let _ = writeln!(
        md,
        "### {scenario} — {seeds} {seed_word}, max_attempts {max_attempts}\n\nMean ± 95 % interval over seeds. Policies told the value model run at V/c = {REFERENCE_VALUE} in this table.\n",
        seed_word = if seeds == 1 { "seed" } else { "seeds" }
    );
    let _ = writeln!(
        md,
        "| policy | success rate | amplification | wasted / 1000 | hopeless / 1000 | p50 ms | p99 ms | p99.9 ms | Brier | RA compliance | detect s | recover s | collateral |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let per_k = |x: u64, m: &Metrics| -> Option<f64> {
        let v = 1000.0 * x as f64 / (m.calls.max(1)) as f64;
        Some(v)
    };
    for p in policy_ids(results, scenario) {
        let s =
            |f: &dyn Fn(&RunResult, &Metrics) -> Option<f64>| stat(results, scenario, &p, None, f);
        let _ = writeln!(
            md,
            "| {p} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s(&|_, m| Some(m.success_rate)).cell(4),
            s(&|_, m| Some(m.amplification)).cell(3),
            s(&|_, m| per_k(m.wasted_retries, m)).cell(1),
            s(&|_, m| per_k(m.hopeless_retries, m)).cell(1),
            s(&|_, m| Some(m.latency_p50_ms)).cell(1),
            s(&|_, m| Some(m.latency_p99_ms)).cell(0),
            s(&|_, m| Some(m.latency_p999_ms)).cell(0),
            s(&|_, m| m.brier).cell(3),
            s(&|_, m| Some(m.retry_after_compliance())).cell(4),
            s(&|_, m| m.time_to_detect_s).cell(1),
            s(&|r, _| r.time_to_recover_s).cell(1),
            s(&|_, m| Some(m.collateral_failures as f64)).cell(1),
        );
    }
    md.push('\n');
    net_value_table(&mut md, results, scenario, None);
    if let Some(r) = results
        .iter()
        .find(|r| r.scenario == scenario && !r.endpoints.is_empty())
    {
        let names: Vec<String> = r.endpoints.iter().map(|(n, _)| n.clone()).collect();
        for name in names {
            let _ = writeln!(md, "#### {scenario}, endpoint {name}\n");
            let s = |p: &str, f: &dyn Fn(&RunResult, &Metrics) -> Option<f64>| {
                stat(results, scenario, p, Some(&name), f)
            };
            let _ = writeln!(
                md,
                "| policy | success rate | amplification | detect s | recover s |\n|---|---|---|---|---|"
            );
            for p in policy_ids(results, scenario) {
                let _ = writeln!(
                    md,
                    "| {p} | {} | {} | {} | {} |",
                    s(&p, &|_, m| Some(m.success_rate)).cell(4),
                    s(&p, &|_, m| Some(m.amplification)).cell(3),
                    s(&p, &|_, m| m.time_to_detect_s).cell(1),
                    s(&p, &|r, _| if name == "S5" {
                        r.time_to_recover_s
                    } else {
                        None
                    })
                    .cell(1),
                );
            }
            md.push('\n');
            net_value_table(&mut md, results, scenario, Some(&name));
        }
    }
    md
}

fn net_value_table(md: &mut String, results: &[RunResult], scenario: &str, endpoint: Option<&str>) {
    let _ = write!(
        md,
        "Net value per 1000 calls (V·S − c·A, c = 1), mean over seeds:\n\n| policy |"
    );
    for v in VALUE_RATIOS {
        let _ = write!(md, " V/c {v} |");
    }
    md.push_str("\n|---|");
    for _ in VALUE_RATIOS {
        md.push_str("---|");
    }
    md.push('\n');
    for p in policy_ids(results, scenario) {
        let _ = write!(md, "| {p} |");
        for v in VALUE_RATIOS {
            let xs: Vec<f64> = net_values(results, scenario, &p, v, endpoint)
                .into_iter()
                .map(|x| x.1)
                .collect();
            let _ = write!(md, " {} |", Interval::of(&xs).cell(0));
        }
        md.push('\n');
    }
    md.push('\n');
    crossover_table(md, results, scenario, endpoint);
    let _ = write!(
        md,
        "Regret to the DP oracle per 1000 calls (learning = myopic − policy, myopia = DP − myopic), and as a share of DP − B0:\n\n| policy |"
    );
    for v in VALUE_RATIOS {
        let _ = write!(md, " V/c {v} |");
    }
    md.push_str("\n|---|");
    for _ in VALUE_RATIOS {
        md.push_str("---|");
    }
    md.push('\n');
    for p in policy_ids(results, scenario)
        .into_iter()
        .filter(|p| p.starts_with("BR"))
    {
        let _ = write!(md, "| {p} |");
        for v in VALUE_RATIOS {
            let dp = net_values(results, scenario, "DP", v, endpoint);
            let my = net_values(results, scenario, "Myopic", v, endpoint);
            let b0 = net_values(results, scenario, "B0", v, endpoint);
            let me = net_values(results, scenario, &p, v, endpoint);
            let regret = Interval::of(&paired(&dp, &me)).mean;
            let learning = Interval::of(&paired(&my, &me)).mean;
            let myopia = Interval::of(&paired(&dp, &my)).mean;
            let gap = Interval::of(&paired(&dp, &b0)).mean;
            let share = if gap.abs() > 1e-9 {
                format!("{:.1} %", 100.0 * regret / gap)
            } else {
                "–".to_owned()
            };
            let _ = write!(md, " {regret:.0} ({learning:.0} / {myopia:.0}; {share}) |");
        }
        md.push('\n');
    }
    md.push('\n');
}

/// The crossover V/c of each BayesRetry strategy against each baseline: the
/// smallest V/c of the sweep from which the strategy's mean net value is at
/// least the baseline's at every higher V/c ("never" if it is behind at 200).
fn crossover_table(md: &mut String, results: &[RunResult], scenario: &str, endpoint: Option<&str>) {
    let ours: Vec<String> = policy_ids(results, scenario)
        .into_iter()
        .filter(|p| p.starts_with("BR"))
        .collect();
    let baselines = baseline_ids(results, scenario);
    let _ = write!(
        md,
        "Crossover V/c (BayesRetry at least level from this V/c up):\n\n| policy |"
    );
    for b in &baselines {
        let _ = write!(md, " {b} |");
    }
    md.push_str("\n|---|");
    for _ in &baselines {
        md.push_str("---|");
    }
    md.push('\n');
    let mean = |p: &str, v: f64| -> f64 {
        let xs: Vec<f64> = net_values(results, scenario, p, v, endpoint)
            .into_iter()
            .map(|x| x.1)
            .collect();
        Interval::of(&xs).mean
    };
    for p in &ours {
        let _ = write!(md, "| {p} |");
        for b in &baselines {
            let mut cross: Option<f64> = None;
            for v in VALUE_RATIOS.iter().rev() {
                if mean(p, *v) >= mean(b, *v) {
                    cross = Some(*v);
                } else {
                    break;
                }
            }
            match cross {
                Some(v) => {
                    let _ = write!(md, " {v} |");
                }
                None => md.push_str(" never |"),
            }
        }
        md.push('\n');
    }
    md.push('\n');
}

/// One goal of the specification, checked on a result set.
#[derive(Clone, Debug, Serialize)]
pub struct Goal {
    /// What the goal says.
    pub goal: String,
    /// Whether it holds.
    pub met: bool,
    /// The figures behind the verdict.
    pub detail: String,
}

/// Checks the goals of the issue for `policy` (BR-G by default), each at
/// every V/c of the sweep the policy ran at (the value model is a sweep, not a
/// point): S0 net value against every baseline and regret ≤ 10 % of DP − B0;
/// S3 Retry-After compliance 0; S5 detect and recover no worse than the best
/// baseline (B0, which never retries, left out of detection); S8 collateral
/// failures below every breaker baseline's (B7, B7s) and the SRE throttle's
/// (B5). A baseline, which is not told the value model, reads the same at
/// every V/c.
pub fn goals(results: &[RunResult], policy: &str) -> Vec<Goal> {
    let mut out = Vec::new();
    if results.iter().any(|r| r.scenario == "S0") {
        let mut worst = Vec::new();
        let mut regret_ok = true;
        let mut regret_detail = Vec::new();
        for v in VALUE_RATIOS {
            let me = Interval::of(
                &net_values(results, "S0", policy, v, None)
                    .iter()
                    .map(|x| x.1)
                    .collect::<Vec<_>>(),
            )
            .mean;
            for b in baseline_ids(results, "S0") {
                let theirs = Interval::of(
                    &net_values(results, "S0", &b, v, None)
                        .iter()
                        .map(|x| x.1)
                        .collect::<Vec<_>>(),
                )
                .mean;
                if theirs > me {
                    worst.push(format!("{b} at V/c {v}: {theirs:.0} > {me:.0}"));
                }
            }
            let dp = net_values(results, "S0", "DP", v, None);
            let b0 = net_values(results, "S0", "B0", v, None);
            let mine = net_values(results, "S0", policy, v, None);
            let regret = Interval::of(&paired(&dp, &mine)).mean;
            let gap = Interval::of(&paired(&dp, &b0)).mean;
            let share = if gap.abs() > 1e-9 { regret / gap } else { 0.0 };
            // A policy that beats the oracle has no regret, whatever the sign
            // of the gap; any other is held to a tenth of the oracle's lead
            // over B0 — so to none where the oracle has no lead (then the
            // share, a regret over a negative gap, would read as negative).
            if regret > 0.0 && regret > 0.10 * gap {
                regret_ok = false;
            }
            regret_detail.push(format!("V/c {v}: {:.1} %", 100.0 * share));
        }
        out.push(Goal {
            goal: format!("S0: {policy} net value ≥ every baseline at every V/c"),
            met: worst.is_empty(),
            detail: if worst.is_empty() {
                "holds at all 8 V/c".to_owned()
            } else {
                worst.join("; ")
            },
        });
        out.push(Goal {
            goal: format!("S0: {policy} regret to DP ≤ 10 % of (DP − B0)"),
            met: regret_ok,
            detail: regret_detail.join(", "),
        });
    }
    if results.iter().any(|r| r.scenario == "S3") {
        let values = values_run(results, "S3", policy);
        let share = |v: f64| {
            stat_at(results, "S3", policy, v, None, |_, m| {
                Some(m.retry_after_compliance())
            })
            .mean
        };
        let misses = values
            .iter()
            .filter(|&&v| share(v) != 0.0)
            .map(|&v| format!("V/c {v} (early retries share {:.4})", share(v)))
            .collect();
        out.push(swept_goal(
            format!("S3: {policy} Retry-After compliance 0 at every V/c"),
            misses,
            values.len(),
            format!("early retries share {:.4}", share(REFERENCE_VALUE)),
        ));
    }
    if results.iter().any(|r| r.scenario == "S5") {
        let values = values_run(results, "S5", policy);
        let mut best_d = (f64::INFINITY, String::new());
        let mut best_r = (f64::INFINITY, String::new());
        for b in baseline_ids(results, "S5") {
            let d = stat(results, "S5", &b, None, |_, m| m.time_to_detect_s).mean;
            let r = stat(results, "S5", &b, None, |r, _| r.time_to_recover_s).mean;
            if b != "B0" && d < best_d.0 {
                best_d = (d, b.clone());
            }
            if r < best_r.0 {
                best_r = (r, b.clone());
            }
        }
        let detect =
            |v: f64| stat_at(results, "S5", policy, v, None, |_, m| m.time_to_detect_s).mean;
        let recover =
            |v: f64| stat_at(results, "S5", policy, v, None, |r, _| r.time_to_recover_s).mean;
        let misses = |of: &dyn Fn(f64) -> f64, best: f64| -> Vec<String> {
            values
                .iter()
                .filter(|&&v| of(v) > best)
                .map(|&v| format!("V/c {v} ({:.2} s)", of(v)))
                .collect()
        };
        out.push(swept_goal(
            format!("S5: {policy} time to detect ≤ best baseline's at every V/c"),
            misses(&detect, best_d.0),
            values.len(),
            format!(
                "{:.2} s vs {} {:.2} s",
                detect(REFERENCE_VALUE),
                best_d.1,
                best_d.0
            ),
        ));
        out.push(swept_goal(
            format!("S5: {policy} time to recover ≤ best baseline's at every V/c"),
            misses(&recover, best_r.0),
            values.len(),
            format!(
                "{:.2} s vs {} {:.2} s",
                recover(REFERENCE_VALUE),
                best_r.1,
                best_r.0
            ),
        ));
    }
    if results.iter().any(|r| r.scenario == "S8") {
        let values = values_run(results, "S8", policy);
        let collateral = |who: &str, v: f64| {
            stat_at(results, "S8", who, v, None, |_, m| {
                Some(m.collateral_failures as f64)
            })
            .mean
        };
        let breakers = ["B5", "B7", "B7s"];
        let theirs: Vec<(&str, f64)> = breakers
            .iter()
            .map(|&b| (b, collateral(b, REFERENCE_VALUE)))
            .collect();
        let beaten = |mine: f64| {
            theirs
                .iter()
                .filter(|&&(_, t)| mine >= t && !(mine == 0.0 && t == 0.0))
                .map(|&(b, t)| format!("{b} {t:.1}"))
                .collect::<Vec<_>>()
        };
        let misses = values
            .iter()
            .filter_map(|&v| {
                let mine = collateral(policy, v);
                let by = beaten(mine);
                (!by.is_empty())
                    .then(|| format!("V/c {v} ({policy} {mine:.1} vs {})", by.join(", ")))
            })
            .collect();
        let mut reference = vec![format!(
            "{policy} {:.1}",
            collateral(policy, REFERENCE_VALUE)
        )];
        reference.extend(theirs.iter().map(|(b, t)| format!("{b} {t:.1}")));
        out.push(swept_goal(
            format!(
                "S8: {policy} fewer collateral failures than every breaker baseline (and B5's throttle) at every V/c"
            ),
            misses,
            values.len(),
            reference.join(", "),
        ));
    }
    out
}

/// The goals as a Markdown list.
pub fn goals_markdown(goals: &[Goal]) -> String {
    let mut md = String::new();
    for g in goals {
        let _ = writeln!(
            md,
            "- {} — **{}** ({})",
            g.goal,
            if g.met { "met" } else { "not met" },
            g.detail
        );
    }
    md
}

/// Writes one JSON file per (scenario, policy, V/c, seed) under `dir/runs/`, a
/// Markdown summary per scenario under `dir/`, and `dir/goals.md`.
///
/// # Errors
///
/// The first I/O error.
pub fn write_all(dir: &Path, results: &[RunResult]) -> io::Result<()> {
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs)?;
    for r in results {
        let v = r.value_ratio.map_or_else(String::new, |v| format!("_v{v}"));
        let name = format!(
            "{}_{}{}_seed{}.json",
            r.scenario,
            r.policy.replace('+', "plus"),
            v,
            r.seed
        );
        let text = serde_json::to_string_pretty(r).map_err(io::Error::other)?;
        std::fs::write(runs.join(name), text)?;
    }
    let mut scenarios: Vec<&str> = Vec::new();
    for r in results {
        if !scenarios.contains(&r.scenario) {
            scenarios.push(r.scenario);
        }
    }
    for s in scenarios {
        std::fs::write(dir.join(format!("{s}.md")), scenario_markdown(results, s))?;
    }
    let mut text = goals_markdown(&goals(results, "BR-G"));
    if results.iter().any(|r| r.policy == "BR-G0") {
        text.push_str(&goals_markdown(&goals(results, "BR-G0")));
    }
    if results.iter().any(|r| r.policy == "BR-Gw") {
        text.push_str(&goals_markdown(&goals(results, "BR-Gw")));
    }
    std::fs::write(dir.join("goals.md"), text)?;
    Ok(())
}

/// The golden summary of a result set: every run's metrics, one line each, as
/// JSON, in the order given.
pub fn golden(results: &[RunResult]) -> String {
    let mut out = String::new();
    for r in results {
        let line = serde_json::json!({
            "scenario": r.scenario,
            "policy": r.policy,
            "seed": r.seed,
            "value_ratio": r.value_ratio,
            "pooled": r.pooled,
            "endpoints": r.endpoints,
            "time_to_recover_s": r.time_to_recover_s,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}
