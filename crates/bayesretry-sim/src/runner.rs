//! One run — a (scenario, policy, seed) on virtual time — and the suite of
//! runs, in parallel on plain threads.

use alloc::sync::Arc;
use core::cell::RefCell;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use bayesretry_policy::Strategy;
use serde::Serialize;

use crate::baseline::Baseline;
use crate::bayes::{self, BayesConfig, Predictions};
use crate::environment::{Draws, Environment};
use crate::metrics::{self, Group, Metrics, Window};
use crate::oracle::Oracle;
use crate::rule::{self, Rule};
use crate::scenario::{Profile, S5_OUTAGE, S8_DOWN_SHARD, SECOND, Scenario};
use crate::timeline::Timeline;
use crate::trace::RunLog;

/// The V/c sweep of §1.
pub const VALUE_RATIOS: [f64; 8] = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0];

/// The V/c at which the time-to-recover reference (the DP oracle) is run.
pub const REFERENCE_VALUE: f64 = 10.0;

/// A policy to run.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PolicySpec {
    /// A baseline of §4.
    Baseline(Baseline),
    /// An oracle of §5 at a success value.
    Oracle(Oracle, f64),
    /// BayesRetry.
    Bayes(BayesConfig),
}

impl PolicySpec {
    /// The policy's id in reports.
    pub fn id(&self) -> String {
        match self {
            PolicySpec::Baseline(b) => b.id().to_owned(),
            PolicySpec::Oracle(o, _) => o.id().to_owned(),
            PolicySpec::Bayes(c) => c.id(),
        }
    }

    /// The V/c the policy was told, if its decisions depend on it.
    pub fn value(&self) -> Option<f64> {
        match self {
            PolicySpec::Baseline(_) | PolicySpec::Oracle(Oracle::Clairvoyant, _) => None,
            PolicySpec::Oracle(_, v) => Some(*v),
            PolicySpec::Bayes(c) => Some(c.value),
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// Scenario id.
    pub scenario: &'static str,
    /// Policy id.
    pub policy: String,
    /// The seed.
    pub seed: u64,
    /// The attempt cap.
    pub max_attempts: u32,
    /// The V/c the policy was told (none for policies that ignore it).
    pub value_ratio: Option<f64>,
    /// Every parameter of the policy, as text.
    pub parameters: String,
    /// Metrics over every call.
    pub pooled: Metrics,
    /// Metrics per endpoint (S0), as (name, metrics).
    pub endpoints: Vec<(String, Metrics)>,
    /// S5 and S0's S5 endpoint: seconds until the success rate is back near the
    /// DP oracle's; filled in by the suite.
    pub time_to_recover_s: Option<f64>,
    /// Successes and calls per arrival second on the outage endpoint (for
    /// time to recover).
    #[serde(skip)]
    pub recovery_bins: Vec<(u32, u32)>,
    /// Events processed.
    pub events: u64,
}

/// Every policy of the suite for a pass with this attempt cap, and with
/// `previous` the greedy BayesRetry under the policy's previous default
/// breaker (`BR-G0`).
pub fn policies_with(max_attempts: u32, previous: bool) -> Vec<PolicySpec> {
    let mut out = policies(max_attempts);
    if previous {
        for v in VALUE_RATIOS {
            out.push(PolicySpec::Bayes(BayesConfig::previous_default(
                Strategy::Greedy,
                v,
                max_attempts,
            )));
        }
    }
    out
}

/// The greedy BayesRetry whose calls wait while the breaker is open (`BR-Gw`),
/// at every V/c, for a pass with this attempt cap.
pub fn waiting_policies(max_attempts: u32) -> Vec<PolicySpec> {
    VALUE_RATIOS
        .into_iter()
        .map(|v| PolicySpec::Bayes(BayesConfig::waiting(Strategy::Greedy, v, max_attempts)))
        .collect()
}

/// Every policy of the suite for a pass with this attempt cap.
pub fn policies(max_attempts: u32) -> Vec<PolicySpec> {
    let mut out: Vec<PolicySpec> = Baseline::ALL
        .into_iter()
        .map(PolicySpec::Baseline)
        .collect();
    out.push(PolicySpec::Oracle(Oracle::Clairvoyant, REFERENCE_VALUE));
    for v in VALUE_RATIOS {
        out.push(PolicySpec::Oracle(Oracle::Dp, v));
        out.push(PolicySpec::Oracle(Oracle::Myopic, v));
        for s in [Strategy::Greedy, Strategy::Thompson, Strategy::Lookahead] {
            out.push(PolicySpec::Bayes(BayesConfig::new(s, v, max_attempts)));
        }
    }
    out
}

/// The outage window time to detect is measured in, per profile.
fn outage_of(profile: Profile, horizon: u64) -> Option<Window> {
    match profile {
        Profile::HardDown => Some((0, horizon)),
        Profile::Outage => Some(S5_OUTAGE),
        _ => None,
    }
}

/// Runs `spec` on `scenario` under `seed`.
///
/// # Errors
///
/// The policy builder's error, for a BayesRetry configuration it rejects.
pub fn run(
    scenario: Scenario,
    spec: &PolicySpec,
    seed: u64,
    max_attempts: u32,
) -> Result<RunResult, bayesretry_policy::Error> {
    run_with_log(scenario, spec, seed, max_attempts).map(|(result, _)| result)
}

/// [`run`], also returning the raw log: every call's record, and the times of
/// every retry and refusal.
///
/// # Errors
///
/// The policy builder's error, for a BayesRetry configuration it rejects.
pub fn run_with_log(
    scenario: Scenario,
    spec: &PolicySpec,
    seed: u64,
    max_attempts: u32,
) -> Result<(RunResult, RunLog), bayesretry_policy::Error> {
    run_on(Arc::new(Draws::new(scenario, seed)), spec, max_attempts)
}

/// [`run_with_log`] on the draws of its (scenario, seed), shared with the
/// pair's other runs.
///
/// # Errors
///
/// The policy builder's error, for a BayesRetry configuration it rejects.
pub fn run_on(
    draws: Arc<Draws>,
    spec: &PolicySpec,
    max_attempts: u32,
) -> Result<(RunResult, RunLog), bayesretry_policy::Error> {
    let (scenario, seed) = (draws.scenario(), draws.seed());
    let env = Environment::of(draws);
    let timeline = Timeline::new();
    let log = RefCell::new(RunLog::new(env.calls().len()));
    let arrivals: Vec<u64> = env.calls().iter().map(|c| c.arrival_us).collect();
    let max_events = (env.calls().len() as u64)
        .saturating_mul(40)
        .saturating_add(1_000);
    let calls = env.calls();
    let parameters;
    let events = match spec {
        PolicySpec::Baseline(b) => {
            let rule = RefCell::new(b.rule(seed, scenario.endpoints().len(), max_attempts));
            parameters = format!("{:?}", rule.borrow());
            run_rule(&env, &timeline, &rule, &arrivals, &log, max_events)
        }
        PolicySpec::Oracle(o, v) => {
            let rule = RefCell::new(o.rule(seed, *v, max_attempts));
            parameters = format!("{:?}", rule.borrow());
            run_rule(&env, &timeline, &rule, &arrivals, &log, max_events)
        }
        PolicySpec::Bayes(config) => {
            let predictions = Arc::new(Predictions::new(&timeline, calls.len()));
            let (policy, params) =
                config.build_observed(seed, &timeline, Some(Arc::clone(&predictions)))?;
            parameters = params;
            let shard_keys = config.shard_keys;
            let run = &bayes::Run {
                env: &env,
                timeline: &timeline,
                policy: &policy,
                predictions: &predictions,
                shard_keys,
                log: &log,
            };
            timeline.run(
                &arrivals,
                |i| {
                    let call = calls.get(i).copied();
                    async move {
                        if let Some(call) = call {
                            bayes::drive(run, i, call).await;
                        }
                    }
                },
                max_events,
            )
        }
    };
    let mut log = log.into_inner();
    log.events = events;
    let horizon = scenario.horizon_us();
    let endpoints = scenario.endpoints();
    let healthy =
        |r: &crate::trace::CallRecord| scenario == Scenario::S8 && r.shard != S8_DOWN_SHARD;
    let single_outage = endpoints.first().and_then(|e| outage_of(e.1, horizon));
    let groups: Vec<Group> = if endpoints.len() > 1 {
        endpoints
            .iter()
            .enumerate()
            .map(|(i, (_, profile))| Group {
                brier: log.brier_of(u8::try_from(i).unwrap_or(u8::MAX)),
                outage: outage_of(*profile, horizon),
            })
            .collect()
    } else {
        Vec::new()
    };
    let all = Group {
        brier: log.brier,
        outage: if endpoints.len() == 1 {
            single_outage
        } else {
            None
        },
    };
    let (pooled, by_endpoint) = metrics::compute(&log, all, &groups, max_attempts, healthy);
    let mut per_endpoint = Vec::new();
    let mut recovery_bins = Vec::new();
    if endpoints.len() > 1 {
        for ((i, (name, profile)), m) in endpoints.iter().enumerate().zip(by_endpoint) {
            let ep = u8::try_from(i).unwrap_or(u8::MAX);
            per_endpoint.push(((*name).to_owned(), m));
            if matches!(profile, Profile::Outage) {
                recovery_bins = metrics::success_by_second(&log, |r| r.endpoint == ep);
            }
        }
    } else if endpoints
        .first()
        .is_some_and(|e| matches!(e.1, Profile::Outage))
    {
        recovery_bins = metrics::success_by_second(&log, |_| true);
    }
    let result = RunResult {
        scenario: scenario.id(),
        policy: spec.id(),
        seed,
        max_attempts,
        value_ratio: spec.value(),
        parameters,
        pooled,
        endpoints: per_endpoint,
        time_to_recover_s: None,
        recovery_bins,
        events: log.events,
    };
    Ok((result, log))
}

fn run_rule(
    env: &Environment,
    timeline: &Timeline,
    rule: &RefCell<dyn Rule + '_>,
    arrivals: &[u64],
    log: &RefCell<RunLog>,
    max_events: u64,
) -> u64 {
    let calls = env.calls();
    timeline.run(
        arrivals,
        |i| {
            let call = calls.get(i).copied();
            async move {
                if let Some(call) = call {
                    rule::drive(env, timeline, rule, call, log).await;
                }
            }
        },
        max_events,
    )
}

/// Runs every policy of `policies` on `scenario` for one seed, and fills in
/// the time to recover against the DP oracle at [`REFERENCE_VALUE`].
///
/// # Errors
///
/// The first policy that fails to build.
pub fn run_seed(
    scenario: Scenario,
    policies: &[PolicySpec],
    seed: u64,
    max_attempts: u32,
) -> Result<Vec<RunResult>, bayesretry_policy::Error> {
    let draws = Arc::new(Draws::new(scenario, seed));
    let mut out = Vec::with_capacity(policies.len());
    for spec in policies {
        out.push(run_on(Arc::clone(&draws), spec, max_attempts)?.0);
    }
    fill_recovery(&mut out);
    Ok(out)
}

/// Sets every run's time to recover, measured against the DP oracle at
/// [`REFERENCE_VALUE`] among `runs` (the runs of one scenario and seed); leaves
/// them unset when that oracle was not run.
fn fill_recovery(runs: &mut [RunResult]) {
    let reference = runs
        .iter()
        .find(|r| r.policy == Oracle::Dp.id() && r.value_ratio == Some(REFERENCE_VALUE))
        .map(|r| r.recovery_bins.clone());
    let Some(reference) = reference else {
        return;
    };
    if reference.is_empty() {
        return;
    }
    let end_s = usize::try_from(S5_OUTAGE.1 / SECOND).unwrap_or(300);
    for r in runs {
        r.time_to_recover_s = Some(metrics::time_to_recover(
            &r.recovery_bins,
            &reference,
            end_s,
        ));
    }
}

/// Runs the suite: every scenario × seed, each with every policy, on
/// `threads` threads. Results come back sorted by (scenario, seed, policy order).
///
/// # Errors
///
/// The first policy that fails to build.
pub fn suite(
    scenarios: &[Scenario],
    seeds: &[u64],
    policies: &[PolicySpec],
    max_attempts: u32,
    threads: usize,
) -> Result<Vec<RunResult>, bayesretry_policy::Error> {
    suite_with_progress(scenarios, seeds, policies, max_attempts, threads, &|| {})
}

/// [`suite`], calling `on_run` as each run ends (from the thread that ran it),
/// for a progress display.
///
/// The unit of work a thread takes is one run, a (scenario, seed, policy),
/// not a whole (scenario, seed): a suite of one seed, such as S0 alone, is
/// then as parallel as a suite of thirty, and the last seed to finish does
/// not leave a thread idle while its other policies run one after another.
/// Within a pair the BayesRetry runs, the longest, are taken first, so that
/// the pair's last runs are short ones and the threads finish together. The
/// pair's [`Draws`] are worked out by the first run of the pair to start,
/// shared by the rest, and let go when its last run ends.
///
/// # Errors
///
/// The first policy that fails to build.
pub fn suite_with_progress(
    scenarios: &[Scenario],
    seeds: &[u64],
    policies: &[PolicySpec],
    max_attempts: u32,
    threads: usize,
    on_run: &(dyn Fn() + Sync),
) -> Result<Vec<RunResult>, bayesretry_policy::Error> {
    let pairs: Vec<(Scenario, u64)> = scenarios
        .iter()
        .flat_map(|&s| seeds.iter().map(move |&seed| (s, seed)))
        .collect();
    let per_pair = policies.len();
    let total = pairs.len().saturating_mul(per_pair);
    // the order runs are taken in within a pair: BayesRetry's first (a stable
    // sort, so otherwise the policies' own order)
    let mut order: Vec<usize> = (0..per_pair).collect();
    order.sort_by_key(|&k| !matches!(policies.get(k), Some(PolicySpec::Bayes(_))));
    let draws: Vec<Mutex<Option<Arc<Draws>>>> = pairs.iter().map(|_| Mutex::new(None)).collect();
    let left: Vec<AtomicUsize> = pairs.iter().map(|_| AtomicUsize::new(per_pair)).collect();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<(usize, RunOutcome)>> = Mutex::new(Vec::with_capacity(total));
    let worker = || {
        // bounded: each iteration takes one of the `total` runs; a policy that
        // cannot be built stops every worker at its next run
        while !failed.load(Ordering::Relaxed) {
            let taken = next.fetch_add(1, Ordering::Relaxed);
            if taken >= total {
                break;
            }
            let pair = taken / per_pair;
            let Some(&k) = order.get(taken % per_pair) else {
                break;
            };
            let (Some(&(scenario, seed)), Some(spec), Some(slot), Some(left)) = (
                pairs.get(pair),
                policies.get(k),
                draws.get(pair),
                left.get(pair),
            ) else {
                break;
            };
            let shared = Arc::clone(
                slot.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(|| Arc::new(Draws::new(scenario, seed))),
            );
            let r = run_on(shared, spec, max_attempts).map(|(result, _)| result);
            if left.fetch_sub(1, Ordering::AcqRel) == 1 {
                // the pair's last run: its draws go
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            on_run();
            results
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((pair * per_pair + k, r));
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads.clamp(1, total.max(1)) {
            // a thread the system refuses leaves its share to the others
            let _refused = std::thread::Builder::new().spawn_scoped(scope, worker);
        }
        // the calling thread works too, so the suite runs even on no new thread
        worker();
    });
    let mut results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    let mut out = Vec::with_capacity(total);
    for (_, r) in results {
        out.push(r?);
    }
    if per_pair > 0 {
        for runs in out.chunks_mut(per_pair) {
            fill_recovery(runs);
        }
    }
    Ok(out)
}

/// One run's result, or the error that stopped it.
type RunOutcome = Result<RunResult, bayesretry_policy::Error>;
