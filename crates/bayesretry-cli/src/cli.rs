//! The command line: subcommands, flags and their checks, with clap's derive.

use core::ops::RangeInclusive;

use std::path::PathBuf;

use bayesretry_audit::Seal;
use bayesretry_beta::Beta;
use bayesretry_policy::Strategy;
use bayesretry_sim::Scenario;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::world::Kind;

/// The `bayesretry` command line.
#[derive(Debug, Parser)]
#[command(
    name = "bayesretry",
    version,
    about = "Decide whether one more attempt is worth it: simulate and benchmark retry \
             policies, replay outcomes into a posterior, inspect saved stores, verify audit logs.",
    long_about = "Decide whether one more attempt is worth it.\n\n\
                  BayesRetry keeps a Beta posterior over \"the next attempt succeeds\" for\n\
                  every context and retries while p * value - cost is positive. This tool\n\
                  runs that machinery from the command line.",
    after_help = "Examples:\n  \
                  bayesretry simulate --n 500 --seed 1\n  \
                  bayesretry bench --scenario S5 --seeds 5\n  \
                  echo \"1 1 0 1 0 0 0\" | bayesretry replay\n  \
                  bayesretry inspect store.json --sort mean\n  \
                  bayesretry audit verify decisions.jsonl\n\n\
                  Exit status: 0 ok, 64 usage, 65 bad data, 66 missing input,\n\
                  70 internal error, 74 I/O error.",
    arg_required_else_help = true,
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the adaptive policy, fixed-3 and no-retry on the same simulated calls.
    #[command(
        long_about = "Run BayesRetry's adaptive policy, \"retry 3 times\" and \"never retry\" on\n\
                      the same simulated calls, with the same luck, and compare them: success\n\
                      rate, attempts, wasted retries and net value (value x successful calls\n\
                      - cost x attempts).\n\n\
                      The default endpoint suffers an outage through the second quarter of the\n\
                      run, then recovers. Calls arrive at 10 per second on a virtual clock, so\n\
                      a run of any length takes no real waiting; the same seed always gives the\n\
                      same numbers. The adaptive policy is the real RetryPolicy, configured as\n\
                      the decision-quality benchmark (bayesretry-sim) configures it.",
        after_help = "Examples:\n  \
                      bayesretry simulate\n  \
                      bayesretry simulate --n 6000 --seed 7 --scenario flaky --value 50 --cost 1\n  \
                      bayesretry simulate --n 6000 --plot outage.svg\n  \
                      bayesretry simulate --scenario hard-down --strategy lookahead --json"
    )]
    Simulate(SimulateArgs),
    /// Run the decision-quality benchmark: every policy, scenario and seed.
    #[command(
        long_about = "Run the decision-quality benchmark of bayesretry-sim: every baseline\n\
                      retry policy, BayesRetry's three strategies and the oracles, on the same\n\
                      calls with the same luck, over the V/c sweep and SEEDS seeds per scenario.\n\
                      Prints the tables of docs/BENCHMARKS.md (mean and 95% interval over\n\
                      seeds) and the goals of the benchmark, met or not.\n\n\
                      A progress bar shows on stderr when stderr is a terminal.",
        after_help = "Examples:\n  \
                      bayesretry bench --scenario S5 --seeds 5\n  \
                      bayesretry bench --scenario S0 --scenario S3 --previous-default --json > results.json\n  \
                      bayesretry bench --seeds 30 --plot plots/"
    )]
    Bench(BenchArgs),
    /// Fold a stream of outcomes into a posterior and decide the next attempt.
    #[command(
        long_about = "Fold a stream of outcomes into a Beta posterior and decide whether one\n\
                      more attempt is worth making.\n\n\
                      Outcomes are read from FILE, or standard input when FILE is absent or\n\
                      '-': 1, ok or true for a success; 0, fail or false for a failure (any\n\
                      letter case), separated by spaces or newlines. A '#' at the start of a\n\
                      line or after a space or tab starts a comment that runs to the end of\n\
                      the line ('1#' is a bad token, '1 #' an outcome and a comment). The\n\
                      input is streamed: its length does not matter.\n\n\
                      An audit log (JSON Lines, from bayesretry-audit) records outcomes of\n\
                      many contexts: select the 'outcome' entries of one context (endpoint,\n\
                      attempt, class) and replay their 'success' fields, as the last example\n\
                      does with jq.",
        after_help = "Examples:\n  \
                      echo \"1 1 0 1 0 0 0\" | bayesretry replay\n  \
                      bayesretry replay outcomes.txt --value 50 --cost 1\n  \
                      printf 'ok\\nfail\\nfail\\n' | bayesretry replay --prior 2,2 --json\n  \
                      jq -r 'select(.event == \"outcome\" and .endpoint == \"api\" and .attempt == 1 \
                      and .class == \"http-503\") | .success' decisions.jsonl | bayesretry replay"
    )]
    Replay(ReplayArgs),
    /// Show the contexts of a saved store snapshot with their posteriors.
    #[command(
        long_about = "Show the contexts of a saved store snapshot (the versioned JSON of\n\
                      bayesretry-store's Snapshot) with their posterior, 95% interval,\n\
                      strength and last update.\n\n\
                      A context's evidence is the sum over the writers that saw it, as of\n\
                      each writer's last update (no decay is applied), on the prior given\n\
                      by --prior.\n\n\
                      Times are the store's clock in milliseconds: the snapshot's own is\n\
                      shown as it is and, when it reads as Unix time (the policy's default\n\
                      clock) in the years 2000 to 2199, as a UTC date too; a last update is\n\
                      shown as how long before the snapshot was taken it happened, not how\n\
                      long ago.",
        after_help = "Examples:\n  \
                      bayesretry inspect store.json\n  \
                      bayesretry inspect store.json --endpoint api.example.com --sort mean\n  \
                      bayesretry inspect store.json --json\n  \
                      ssh host cat /var/lib/app/store.json | bayesretry inspect -"
    )]
    Inspect(InspectArgs),
    /// Check a hash-chained audit log.
    #[command(after_help = "Examples:\n  \
                      bayesretry audit verify decisions.jsonl\n  \
                      bayesretry audit verify decisions.jsonl --seal 1200:<64 hex digits>")]
    Audit(AuditArgs),
}

/// `bayesretry audit`.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    pub(crate) command: AuditCommand,
}

/// The subcommands of `audit`.
#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Check every line of a JSON Lines audit log and its hash chain.
    #[command(
        long_about = "Check every line of a JSON Lines audit log (written by bayesretry-audit):\n\
                      each line must be an entry in canonical form whose SHA-256 hash chains\n\
                      to the previous one. Prints the log's seal when it is valid, or the\n\
                      first broken line and why (exit status 65).\n\n\
                      A valid log also says how many decisions and outcomes it records, and,\n\
                      in a line starting 'incomplete:', at least how many records its writer\n\
                      lost before they reached it (its 'dropped' entries, a lower bound: a\n\
                      crash takes the entries not yet on disk without a trace): the chain\n\
                      shows that nothing written was changed, not that everything was written.\n\n\
                      The chain alone cannot show entries cut from the end, or a log rewritten\n\
                      from some point on with every hash recomputed: keep the seal printed\n\
                      by an earlier run somewhere else and pass it with --seal. A line\n\
                      starting 'unanchored:' names the entries no seal given covers.\n\n\
                      A log rotated into several files is verified as one chain when they are\n\
                      given in the order written, the oldest first: each file after the first\n\
                      must begin with the link to the end of the one before, and a file\n\
                      missing, out of order or from another log is named. A set whose oldest\n\
                      files were deleted begins with a link to them that nothing given can\n\
                      check (a file can be made to begin with one): it is refused (exit\n\
                      status 65) unless a seal of that point or later (--seal) confirms the\n\
                      link, or --partial accepts a log that starts there; it then verifies\n\
                      from the link, and a line starting 'starts:' says where that is.\n\n\
                      The log is streamed: memory stays constant whatever its size.",
        after_help = "Examples:\n  \
                      bayesretry audit verify decisions.jsonl\n  \
                      bayesretry audit verify decisions.jsonl --seal 1200:<64 hex digits>\n  \
                      bayesretry audit verify decisions.jsonl.2 decisions.jsonl.1 decisions.jsonl\n  \
                      bayesretry audit verify --partial decisions.jsonl.1 decisions.jsonl\n  \
                      zcat old.jsonl.gz | bayesretry audit verify -"
    )]
    Verify(VerifyArgs),
}

/// `bayesretry audit verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The log file; standard input when '-'. A log rotated into several files:
    /// every file, in the order written, the oldest first.
    #[arg(value_name = "LOG.jsonl", required = true, num_args = 1..)]
    pub(crate) logs: Vec<PathBuf>,
    /// A seal printed by an earlier verification (`<entries>:<head hash in hex>`): the
    /// log must still hold those entries, the last with that hash.
    #[arg(long, value_name = "N:HEX", value_parser = parse_seal)]
    pub(crate) seal: Option<Seal>,
    /// Accept a log whose first file begins with a link to older files not
    /// given (deleted by rotation): it verifies from that link, and a line
    /// starting 'starts:' says where. Without it, or a seal of that point or
    /// later, such a log exits 65, since nothing given shows the older
    /// entries, nor the link, to be real.
    #[arg(long)]
    pub(crate) partial: bool,
}

/// `bayesretry simulate`.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// Calls to simulate (at most 10 000 000; about 50 bytes of memory each, so
    /// 10 000 000 take about 500 MB).
    #[arg(long, default_value_t = 500, value_parser = |n: &str| whole(n, 1..=10_000_000), allow_negative_numbers = true)]
    pub(crate) n: u64,
    /// The seed of the calls' luck and of the policy's own randomness.
    #[arg(long, default_value_t = 1, value_parser = |n: &str| whole(n, 0..=u64::MAX), allow_negative_numbers = true)]
    pub(crate) seed: u64,
    /// What the endpoint does.
    #[arg(long, value_enum, default_value_t = Kind::Outage)]
    pub(crate) scenario: Kind,
    #[command(flatten)]
    pub(crate) costs: CostArgs,
    /// How the adaptive policy decides: the posterior mean, a Thompson draw, or
    /// looking ahead over the attempts left.
    #[arg(long, value_enum, default_value_t = StrategyArg::Greedy)]
    pub(crate) strategy: StrategyArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also draw the run over time as an SVG: success rate, the adaptive
    /// policy's belief with its credible band, retries per call. An existing
    /// FILE is overwritten; that it can be written is checked before the run,
    /// and the table is printed even if the plot fails after it.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
}

/// `bayesretry bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// A scenario to run, by id (S0 mixed, S1 healthy, S2 flaky, S3 and S3b
    /// rate-limited, S4 hard-down, S5 outage, S6 degrading, S8 partial) or by
    /// simulate's names; repeat for several (each runs once, however often it
    /// is named). All of them by default.
    #[arg(long, value_name = "ID", value_parser = parse_scenario)]
    pub(crate) scenario: Vec<Scenario>,
    /// Seeds per scenario (1..=SEEDS).
    #[arg(long, default_value_t = 30, value_parser = |n: &str| whole(n, 1..=1_000), allow_negative_numbers = true)]
    pub(crate) seeds: u64,
    /// Attempts in all per call, for every policy (the benchmark's passes are
    /// 4 and 6).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=10), allow_negative_numbers = true)]
    pub(crate) max_attempts: u32,
    /// Also run BR-G0, the greedy strategy under the policy's previous default
    /// breaker (the breaker crate's own settings), for comparison with the
    /// default.
    #[arg(long)]
    pub(crate) previous_default: bool,
    /// Print every run's metrics as JSON instead of the tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also draw each scenario's regret to the DP oracle against V/c, as
    /// DIR/<scenario>.svg. DIR is made if missing (a file is refused) and
    /// existing plots in it are overwritten; that they can be written is
    /// checked before the run, and the tables are printed even if a plot
    /// fails after it.
    #[arg(long, value_name = "DIR")]
    pub(crate) plot: Option<PathBuf>,
}

/// A benchmark scenario by id (`S5`) or by `simulate`'s name (`outage`).
fn parse_scenario(text: &str) -> Result<Scenario, String> {
    if let Some(scenario) = Scenario::parse(text) {
        return Ok(scenario);
    }
    Kind::from_str(text, true).map(Kind::scenario).map_err(|_| {
        let ids: Vec<&str> = Scenario::ALL.iter().map(|s| s.id()).collect();
        format!(
            "no scenario {text:?}: expected one of {} or outage, flaky, rate-limited, \
             hard-down, degrading",
            ids.join(", ")
        )
    })
}

/// The adaptive policy's strategy, on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum StrategyArg {
    /// Retry while p * V - c > 0, p the posterior mean.
    Greedy,
    /// The same rule with p drawn from the posterior.
    Thompson,
    /// Count what the later attempts are worth too.
    Lookahead,
}

impl From<StrategyArg> for Strategy {
    fn from(arg: StrategyArg) -> Strategy {
        match arg {
            StrategyArg::Greedy => Strategy::Greedy,
            StrategyArg::Thompson => Strategy::Thompson,
            StrategyArg::Lookahead => Strategy::Lookahead,
        }
    }
}

/// `bayesretry replay`.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The outcomes; standard input when absent or '-'.
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) costs: CostArgs,
    /// The prior Beta(A, B) before any outcome; A and B finite, > 0 and at
    /// most 1e300.
    #[arg(long, value_name = "A,B", default_value = "1,1", value_parser = parse_prior, allow_hyphen_values = true)]
    pub(crate) prior: Beta,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What a success is worth and an attempt costs.
#[derive(Debug, Args, Clone, Copy)]
pub(crate) struct CostArgs {
    /// What a success is worth (V), in any unit; > 0 and at most 1e300.
    #[arg(long, value_name = "V", default_value = "10", value_parser = parse_value, allow_negative_numbers = true)]
    pub(crate) value: f64,
    /// What one attempt costs (c), in the unit of --value; >= 0 and at most
    /// 1e300.
    #[arg(long, value_name = "C", default_value = "1", value_parser = parse_cost, allow_negative_numbers = true)]
    pub(crate) cost: f64,
}

/// `bayesretry inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The snapshot file; standard input when '-'.
    #[arg(value_name = "STORE.json")]
    pub(crate) store: PathBuf,
    /// Show only the contexts of this endpoint.
    #[arg(long, value_name = "E")]
    pub(crate) endpoint: Option<String>,
    /// The order of the rows.
    #[arg(long, value_enum, default_value_t = SortKey::Context)]
    pub(crate) sort: SortKey,
    /// The prior every context starts from; A and B finite, > 0 and at most
    /// 1e300.
    #[arg(long, value_name = "A,B", default_value = "1,1", value_parser = parse_prior, allow_hyphen_values = true)]
    pub(crate) prior: Beta,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// The most bytes of input read (at least 1): a larger file, or a stream
    /// that goes on past it (`/dev/zero`, a runaway pipe), is refused instead
    /// of read into memory whole. The default, 256 MiB, holds a snapshot of
    /// about a million contexts.
    #[arg(long, value_name = "N", default_value_t = MAX_INSPECT_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_bytes: u64,
}

/// The most bytes `inspect` reads unless told otherwise: 256 MiB.
pub(crate) const MAX_INSPECT_BYTES: u64 = 256 * 1024 * 1024;

/// How `inspect` orders its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SortKey {
    /// By endpoint, then attempt, then error class.
    Context,
    /// Lowest posterior mean first: the contexts least worth retrying.
    Mean,
    /// Lowest lower credible bound first.
    Lower,
    /// Most evidence first.
    Strength,
    /// Most recently updated first.
    Updated,
}

/// A whole number in `range`; a negative one (`--n -5`) is named as out of
/// range like a positive one, as clap names them, not as an unexpected flag
/// or a bad digit.
fn whole(text: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    let n: i128 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number"))?;
    u64::try_from(n)
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| format!("{n} is not in {}..={}", range.start(), range.end()))
}

/// `N:HEX` as an audit seal.
fn parse_seal(text: &str) -> Result<Seal, String> {
    text.parse()
        .map_err(|e: bayesretry_audit::ParseError| e.to_string())
}

/// The largest success value, attempt cost and prior parameter the command
/// line takes: beyond any real figure, and small enough that what is made of
/// them stays finite (an f64 ends near 1.8e308) — a value times 10 million
/// calls, a cost times 40 million attempts, the difference of two net values,
/// a prior's strength A + B plus the outcomes counted.
const MAX_FIGURE: f64 = 1e300;

/// `A,B` as a Beta prior, each at most [`MAX_FIGURE`].
fn parse_prior(text: &str) -> Result<Beta, String> {
    let (a, b) = text
        .split_once(',')
        .ok_or_else(|| format!("expected A,B (two numbers and a comma), got {text:?}"))?;
    let number = |part: &str| {
        part.trim()
            .parse::<f64>()
            .map_err(|_| format!("{part:?} is not a number"))
    };
    let prior = Beta::new(number(a)?, number(b)?).map_err(|e| e.to_string())?;
    for (name, x, part) in [("alpha", prior.alpha(), a), ("beta", prior.beta(), b)] {
        if x > MAX_FIGURE {
            return Err(format!(
                "{name} must be at most 1e300 (larger priors overflow the strength), got {}",
                part.trim()
            ));
        }
    }
    Ok(prior)
}

/// A success value: > 0 and at most [`MAX_FIGURE`].
fn parse_value(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if !(v > 0.0 && v.is_finite()) {
        Err(format!("must be finite and > 0, got {text}"))
    } else if v > MAX_FIGURE {
        Err(format!(
            "must be at most 1e300 (larger values overflow the totals), got {text}"
        ))
    } else {
        Ok(v)
    }
}

/// An attempt cost: >= 0 and at most [`MAX_FIGURE`].
fn parse_cost(text: &str) -> Result<f64, String> {
    let c: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if !(c >= 0.0 && c.is_finite()) {
        Err(format!("must be finite and >= 0, got {text}"))
    } else if c > MAX_FIGURE {
        Err(format!(
            "must be at most 1e300 (larger costs overflow the totals), got {text}"
        ))
    } else {
        Ok(c + 0.0)
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::{Cli, parse_cost, parse_prior, parse_value, whole};

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn scenarios_are_named_by_id_or_by_simulate_name() {
        use super::parse_scenario;
        use bayesretry_sim::Scenario;
        assert_eq!(parse_scenario("S5"), Ok(Scenario::S5));
        assert_eq!(parse_scenario("s3b"), Ok(Scenario::S3b));
        assert_eq!(parse_scenario("hard-down"), Ok(Scenario::S4));
        let err = parse_scenario("S7").unwrap_err();
        assert!(err.contains("\"S7\"") && err.contains("S0, S1"), "{err}");
    }

    #[test]
    fn priors_costs_and_values_are_checked() {
        let prior = parse_prior("2, 3.5").unwrap();
        assert_eq!((prior.alpha(), prior.beta()), (2.0, 3.5));
        assert!(parse_prior("2").unwrap_err().contains("A,B"));
        assert!(parse_prior("0,1").unwrap_err().contains("alpha"));
        assert!(parse_prior("1,x").unwrap_err().contains("\"x\""));
        assert!(parse_value("0").is_err());
        assert!(parse_value("inf").is_err());
        assert_eq!(parse_value("2.5"), Ok(2.5));
        assert!(parse_cost("-1").is_err());
        assert!(parse_cost("NaN").is_err());
        assert_eq!(parse_cost("0"), Ok(0.0));
    }

    #[test]
    fn figures_beyond_1e300_are_refused_naming_the_bound() {
        assert_eq!(parse_value("1e300"), Ok(1e300));
        assert_eq!(
            parse_value("1e308"),
            Err(String::from(
                "must be at most 1e300 (larger values overflow the totals), got 1e308"
            ))
        );
        assert_eq!(parse_cost("1e300"), Ok(1e300));
        assert!(parse_cost("1.1e300").unwrap_err().contains("at most 1e300"));
        assert_eq!(parse_prior("1e300, 1e300").map(|p| p.strength()), Ok(2e300));
        assert_eq!(
            parse_prior("1, 1e301").unwrap_err(),
            "beta must be at most 1e300 (larger priors overflow the strength), got 1e301"
        );
        assert!(parse_prior("1e308,1").unwrap_err().starts_with("alpha"));
    }

    #[test]
    fn whole_numbers_out_of_range_name_the_range_whatever_their_sign() {
        assert_eq!(whole("7", 1..=10), Ok(7));
        assert_eq!(
            whole("-5", 1..=10),
            Err(String::from("-5 is not in 1..=10"))
        );
        assert_eq!(whole("0", 1..=10), Err(String::from("0 is not in 1..=10")));
        assert_eq!(
            whole("18446744073709551616", 0..=u64::MAX),
            Err(String::from(
                "18446744073709551616 is not in 0..=18446744073709551615"
            ))
        );
        assert_eq!(
            whole("1.5", 1..=10),
            Err(String::from("\"1.5\" is not a whole number"))
        );
    }
}
