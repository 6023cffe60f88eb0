//! Regenerates the anchor tables (A1, A2 and its BayesRetry extension) and the
//! S7 retry-storm tables as JSON files in one directory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use bayesretry_sim::anchors::{a1, a2};
use bayesretry_sim::storm;
use clap::{Parser, ValueEnum};
use serde::Serialize;

/// Which tables to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Only {
    /// A1, jitter under contention.
    A1,
    /// A2 and its BayesRetry extension.
    A2,
    /// S7a and S7b, the retry storm.
    S7,
    /// Everything.
    All,
}

/// Regenerates docs/benchmarks/{a1,a2,a2-bayesretry,s7a,s7b,s7b-area}.json.
#[derive(Debug, Parser)]
#[command(name = "anchors", version)]
struct Args {
    /// Directory the JSON files are written to.
    #[arg(long, default_value = "docs/benchmarks")]
    out: PathBuf,
    /// The seed of every run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Which tables to make.
    #[arg(long, value_enum, default_value_t = Only::All)]
    only: Only,
    /// Runs per A1 cell (the post used 100).
    #[arg(long, default_value_t = a1::PUBLISHED_RUNS)]
    a1_runs: u64,
    /// Replications (seeds) averaged per A2 cell.
    #[arg(long, default_value_t = 10)]
    a2_replications: u64,
}

fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T) -> Result<(), String> {
    let path = dir.join(name);
    let mut text = serde_json::to_string_pretty(value).map_err(|e| format!("{name}: {e}"))?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let wants = |what: Only| args.only == Only::All || args.only == what;
    if wants(Only::A1) {
        let start = Instant::now();
        let rows = a1::table(args.seed, &a1::published_clients(), args.a1_runs);
        write_json(&args.out, "a1.json", &rows)?;
        eprintln!("a1: {:.1} s", start.elapsed().as_secs_f64());
    }
    if wants(Only::A2) {
        let start = Instant::now();
        write_json(
            &args.out,
            "a2.json",
            &a2::table(args.seed, args.a2_replications),
        )?;
        let bayes = a2::bayes_table(args.seed, args.a2_replications);
        write_json(&args.out, "a2-bayesretry.json", &bayes)?;
        eprintln!("a2: {:.1} s", start.elapsed().as_secs_f64());
    }
    if wants(Only::S7) {
        let start = Instant::now();
        storm::write_tables(&args.out, args.seed)?;
        eprintln!("s7: {:.1} s", start.elapsed().as_secs_f64());
    }
    Ok(())
}
