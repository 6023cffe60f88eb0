#![doc = include_str!("../README.md")]

extern crate alloc;

pub mod anchors;
mod baseline;
mod bayes;
mod environment;
mod luck;
mod metrics;
mod oracle;
mod report;
mod rule;
mod runner;
mod scenario;
pub mod storm;
mod timeline;
mod trace;

pub use baseline::{Baseline, BaselineRule};
pub use bayes::BayesConfig;
pub use environment::{
    AttemptOutcome, CallSpec, DEADLINE_US, Draws, Environment, Failure, TIMEOUT_US,
};
pub use luck::{Luck, PolicyStream, Purpose, mix64, unit_of};
pub use metrics::{Metrics, success_by_second, time_to_recover};
pub use oracle::{Oracle, OracleRule, continuation_value};
pub use report::{Goal, Interval, goals, goals_markdown, golden, scenario_markdown, write_all};
pub use rule::{CallState, Rule};
pub use runner::{
    PolicySpec, REFERENCE_VALUE, RunResult, VALUE_RATIOS, policies, policies_with, run, run_on,
    run_seed, run_with_log, suite, suite_with_progress, waiting_policies,
};
pub use scenario::{Profile, SECOND, Scenario};
pub use timeline::{Sleep, Timeline};
pub use trace::{CallRecord, RunLog};

pub use bayesretry_policy::Strategy;
