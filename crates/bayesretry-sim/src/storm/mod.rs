//! S7, the retry storm of the benchmark specification §3: a shared server of
//! finite capacity, where retries of timed-out calls add load exactly when there
//! is no capacity to spare.
//!
//! - [S7a](s7a_table): latency grows with the requests in flight; a ramp of load
//!   to 80 calls/s (and a variant: a spike from 40 to 80 calls/s);
//! - [S7b](s7b_table): 50 workers behind a FIFO; capacity falls to a fraction
//!   for a while, then returns; each cell of the sweep is *recovered* or
//!   *metastable*, and the headline is the metastable area per policy.

mod policy;
mod sim;

use alloc::vec::Vec;
use std::path::Path;

use serde::Serialize;

pub use policy::PolicyId;
pub use sim::{Series, Totals};

use sim::{ServerModel, Setting};

/// Clients the calls are spread over; each holds its own policy state.
pub const CLIENTS: u32 = 10;

/// Scenario tags of the keys.
const S7A_RAMP: u64 = 0x7A1;
const S7A_SPIKE: u64 = 0x7A2;
const S7B: u64 = 0x7B;

/// S7a's two load shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum S7aShape {
    /// `80 - 1.6 · |t - 25|` calls/s for `t` in [0, 80 s].
    Ramp,
    /// 40 calls/s, 80 for `t` in [20, 25), over 120 s.
    Spike,
}

fn ramp_rate(t: f64, _: f64) -> f64 {
    (80.0 - 1.6 * (t - 25.0).abs()).max(0.0)
}

fn spike_rate(t: f64, _: f64) -> f64 {
    if (20.0..25.0).contains(&t) {
        80.0
    } else {
        40.0
    }
}

fn constant_rate(_: f64, rate: f64) -> f64 {
    rate
}

/// S7a's setting for `shape`.
fn s7a_setting(shape: S7aShape) -> Setting {
    let (scenario, rate, horizon_s): (u64, fn(f64, f64) -> f64, f64) = match shape {
        S7aShape::Ramp => (S7A_RAMP, ramp_rate, 80.0),
        S7aShape::Spike => (S7A_SPIKE, spike_rate, 120.0),
    };
    Setting {
        scenario,
        server: ServerModel::Latency {
            base_s: 1.0,
            per_request_s: 0.01,
        },
        net_mean_s: 0.1,
        timeout_s: 3.0,
        max_attempts: Some(3),
        rate,
        rate_param: 0.0,
        peak_rate: 80.0,
        horizon_s,
        clients: CLIENTS,
    }
}

/// One S7a row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct S7aRow {
    /// The load shape.
    pub shape: S7aShape,
    /// The policy.
    pub policy: PolicyId,
    /// Calls started.
    pub calls: u64,
    /// Successful calls / calls.
    pub success_rate: f64,
    /// Attempts / calls.
    pub amplification: f64,
    /// The most requests in flight at the server.
    pub peak_in_flight: u64,
    /// Seconds (1 s bins with calls offered) whose goodput was under half the
    /// first tries offered.
    pub collapsed_s: u32,
    /// Spike only: whether goodput came back to 95 % of offered within 60 s of
    /// the spike's end, held 10 s.
    pub recovered: Option<bool>,
    /// Server seconds spent on attempts already abandoned by their clients.
    pub wasted_server_s: f64,
}

/// Whether goodput came back to ≥ 95 % of the offered first tries in some 10 s
/// window starting within 60 s of `end_s` (summed over the window).
pub fn recovered(series: &Series, end_s: f64) -> bool {
    let start = end_s.max(0.0) as usize;
    (start..=start + 60).any(|t0| {
        let window = t0..t0 + 10;
        let offered: u64 = window
            .clone()
            .filter_map(|t| series.offered.get(t))
            .map(|&x| u64::from(x))
            .sum();
        let good: u64 = window
            .clone()
            .filter_map(|t| series.goodput.get(t))
            .map(|&x| u64::from(x))
            .sum();
        let complete = window.end <= series.offered.len();
        complete && offered > 0 && good as f64 >= 0.95 * offered as f64
    })
}

fn collapsed(series: &Series) -> u32 {
    let bins = series.offered.iter().zip(&series.goodput);
    bins.filter(|&(&o, &g)| o > 0 && f64::from(g) < 0.5 * f64::from(o))
        .count() as u32
}

/// S7a: both shapes, every policy.
pub fn s7a_table(seed: u64) -> Vec<S7aRow> {
    let mut rows = Vec::new();
    for shape in [S7aShape::Ramp, S7aShape::Spike] {
        let setting = s7a_setting(shape);
        for policy in PolicyId::ALL {
            let (totals, series) = sim::run(seed, &setting, policy);
            rows.push(S7aRow {
                shape,
                policy,
                calls: totals.calls,
                success_rate: ratio(totals.successes, totals.calls),
                amplification: ratio(totals.attempts, totals.calls),
                peak_in_flight: totals.peak_in_server,
                collapsed_s: collapsed(&series),
                recovered: (shape == S7aShape::Spike).then(|| recovered(&series, 25.0)),
                wasted_server_s: totals.wasted_server_s,
            });
        }
    }
    rows
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// One cell of the S7b sweep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct S7bCell {
    /// Capacity left during the drop.
    pub fraction: f64,
    /// Drop duration, seconds.
    pub duration_s: f64,
    /// Offered first tries / full capacity (500 calls/s).
    pub utilisation: f64,
}

/// The sweep: every fraction × duration × utilisation of the specification.
pub fn s7b_cells() -> Vec<S7bCell> {
    let mut cells = Vec::new();
    for utilisation in [0.5, 0.6, 0.7, 0.8] {
        for fraction in [0.8, 0.6, 0.4, 0.2] {
            for duration_s in [5.0, 10.0, 20.0, 40.0, 80.0] {
                cells.push(S7bCell {
                    fraction,
                    duration_s,
                    utilisation,
                });
            }
        }
    }
    cells
}

/// The drop starts here.
pub const S7B_DROP_START_S: f64 = 60.0;
/// Full capacity of the S7b server, calls/s.
pub const S7B_CAPACITY: f64 = 500.0;

fn s7b_setting(cell: &S7bCell) -> Setting {
    Setting {
        scenario: S7B,
        server: ServerModel::Workers {
            workers: 50,
            mean_service_s: 0.1,
            drop_fraction: cell.fraction,
            drop_start_s: S7B_DROP_START_S,
            drop_duration_s: cell.duration_s,
        },
        net_mean_s: 0.0,
        timeout_s: 1.0,
        max_attempts: None,
        rate: constant_rate,
        rate_param: cell.utilisation * S7B_CAPACITY,
        peak_rate: cell.utilisation * S7B_CAPACITY,
        horizon_s: 300.0,
        clients: CLIENTS,
    }
}

/// One policy in one S7b cell.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct S7bRow {
    /// The cell.
    #[serde(flatten)]
    pub cell: S7bCell,
    /// The policy.
    pub policy: PolicyId,
    /// Recovered (`true`) or metastable (`false`).
    pub recovered: bool,
    /// Successful calls / calls over the run.
    pub success_rate: f64,
    /// Attempts / calls over the run.
    pub amplification: f64,
}

/// Runs one S7b cell with `policy`.
pub fn s7b_run(seed: u64, cell: &S7bCell, policy: PolicyId) -> S7bRow {
    let (totals, series) = sim::run(seed, &s7b_setting(cell), policy);
    S7bRow {
        cell: *cell,
        policy,
        recovered: recovered(&series, S7B_DROP_START_S + cell.duration_s),
        success_rate: ratio(totals.successes, totals.calls),
        amplification: ratio(totals.attempts, totals.calls),
    }
}

/// The metastable area of one policy: cells out of the sweep that did not
/// recover.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct S7bArea {
    /// The policy.
    pub policy: PolicyId,
    /// Metastable cells.
    pub metastable: u32,
    /// Cells in the sweep.
    pub cells: u32,
}

/// The whole sweep for every policy, on up to `threads` threads.
pub fn s7b_table(seed: u64, threads: usize) -> Vec<S7bRow> {
    s7b_table_of(seed, threads, &PolicyId::ALL)
}

/// The whole sweep for `policies`, on up to `threads` threads.
pub fn s7b_table_of(seed: u64, threads: usize, policies: &[PolicyId]) -> Vec<S7bRow> {
    let jobs: Vec<(S7bCell, PolicyId)> = s7b_cells()
        .into_iter()
        .flat_map(|cell| policies.iter().map(move |p| (cell, *p)))
        .collect();
    let threads = threads.clamp(1, 64);
    let mut parts: Vec<Vec<(usize, S7bRow)>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let jobs = &jobs;
                scope.spawn(move || {
                    jobs.iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == t)
                        .map(|(i, (cell, p))| (i, s7b_run(seed, cell, *p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            if let Ok(part) = handle.join() {
                parts.push(part);
            }
        }
    });
    let mut rows: Vec<(usize, S7bRow)> = parts.into_iter().flatten().collect();
    rows.sort_by_key(|(i, _)| *i);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// The headline: metastable cells per policy.
pub fn s7b_areas(rows: &[S7bRow]) -> Vec<S7bArea> {
    PolicyId::ALL
        .into_iter()
        .map(|policy| {
            let mine = rows.iter().filter(|r| r.policy == policy);
            S7bArea {
                policy,
                metastable: mine.clone().filter(|r| !r.recovered).count() as u32,
                cells: mine.count() as u32,
            }
        })
        .collect()
}

/// Writes `s7a.json`, `s7b.json` and `s7b-area.json` into `dir`.
///
/// # Errors
///
/// A message naming the file that could not be written.
pub fn write_tables(dir: &Path, seed: u64) -> Result<(), String> {
    let write = |name: &str, text: Result<String, serde_json::Error>| {
        let path = dir.join(name);
        let mut text = text.map_err(|e| format!("{name}: {e}"))?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    write("s7a.json", serde_json::to_string_pretty(&s7a_table(seed)))?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let rows = s7b_table(seed, threads);
    write(
        "s7b-area.json",
        serde_json::to_string_pretty(&s7b_areas(&rows)),
    )?;
    write("s7b.json", serde_json::to_string_pretty(&rows))?;
    Ok(())
}
