//! `bench-sim`: runs the decision-quality benchmark and writes one JSON file per
//! (scenario, policy, seed) and a Markdown summary per scenario.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bayesretry_sim::{
    Scenario, goals, goals_markdown, policies_with, suite, waiting_policies, write_all,
};
use clap::Parser;

/// Runs the decision-quality benchmark of BayesRetry.
#[derive(Debug, Parser)]
#[command(name = "bench-sim")]
struct Args {
    /// Scenarios, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    scenarios: Vec<String>,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Number of seeds.
    #[arg(long, default_value_t = 30)]
    seeds: u64,
    /// Attempt cap (the specification's passes: 4 and 6).
    #[arg(long, default_value_t = 4)]
    max_attempts: u32,
    /// Threads (each takes one run, a scenario, seed and policy, at a time).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Also run the greedy BayesRetry under the policy's previous default
    /// breaker (the breaker crate's own settings), BR-G0.
    #[arg(long)]
    previous_default: bool,
    /// Also run the greedy BayesRetry whose calls wait while the breaker is
    /// open, up to their deadline (`with_wait_while_open`), BR-Gw.
    #[arg(long)]
    wait_while_open: bool,
    /// Directory for the JSON and Markdown files (nothing written without it).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let scenarios: Vec<Scenario> = if args.scenarios.is_empty() {
        Scenario::ALL.to_vec()
    } else {
        let mut out = Vec::new();
        for s in &args.scenarios {
            match Scenario::parse(s) {
                Some(s) => out.push(s),
                None => {
                    eprintln!("bench-sim: unknown scenario `{s}`");
                    return ExitCode::FAILURE;
                }
            }
        }
        out
    };
    let seeds: Vec<u64> = (args.first_seed..args.first_seed.saturating_add(args.seeds)).collect();
    let mut specs = policies_with(args.max_attempts, args.previous_default);
    if args.wait_while_open {
        specs.extend(waiting_policies(args.max_attempts));
    }
    let start = Instant::now();
    let results = match suite(&scenarios, &seeds, &specs, args.max_attempts, args.threads) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench-sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    let elapsed = start.elapsed();
    eprintln!(
        "bench-sim: {} runs ({} scenarios x {} seeds x {} policies) in {:.2} s",
        results.len(),
        scenarios.len(),
        seeds.len(),
        specs.len(),
        elapsed.as_secs_f64()
    );
    print!("{}", goals_markdown(&goals(&results, "BR-G")));
    if args.previous_default {
        print!("{}", goals_markdown(&goals(&results, "BR-G0")));
    }
    if args.wait_while_open {
        print!("{}", goals_markdown(&goals(&results, "BR-Gw")));
    }
    if let Some(dir) = &args.out {
        if let Err(e) = write_all(dir, &results) {
            eprintln!("bench-sim: writing {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
        eprintln!("bench-sim: wrote {}", dir.display());
    }
    ExitCode::SUCCESS
}
