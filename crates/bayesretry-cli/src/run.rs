//! One policy's run through a [`World`], on `bayesretry-sim`'s virtual-time
//! executor: the totals, and what happened over time.
//!
//! The adaptive policy is the real `RetryPolicy`, built by `bayesretry-sim`'s
//! [`BayesConfig`] exactly as the benchmark builds it (its store, breaker,
//! deadline and seeded randomness), on the run's virtual clock and sleeper.
//! Calls overlap in time as they would in a service: each call is a future that
//! the executor wakes at its arrival and after each latency or backoff.

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::time::Duration;

use bayesretry_policy::{Classification, Context, ErrorClass, RetryPolicy, Strategy};
use bayesretry_sim::{BayesConfig, DEADLINE_US, Failure, Timeline};

use crate::error::Error;
use crate::world::{Call, Server, World};

/// The endpoint's name, as the policy keys it.
pub(crate) const ENDPOINT: &str = "api";

/// Attempts in all (first try and three retries), for every policy: the
/// benchmark's cap.
pub(crate) const MAX_ATTEMPTS: u32 = 4;

/// A policy `simulate` compares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Policy {
    /// BayesRetry with this strategy.
    Adaptive(Strategy),
    /// Retry immediately until `MAX_ATTEMPTS` attempts have been made.
    FixedThree,
    /// One attempt, no retry.
    NoRetry,
}

impl Policy {
    /// The name in tables and legends.
    pub(crate) fn name(self) -> String {
        match self {
            Policy::Adaptive(strategy) => format!("adaptive ({})", strategy_name(strategy)),
            Policy::FixedThree => String::from("fixed-3"),
            Policy::NoRetry => String::from("no-retry"),
        }
    }
}

/// The command-line name of a strategy.
pub(crate) fn strategy_name(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::Thompson => "thompson",
        Strategy::Lookahead => "lookahead",
        _ => "greedy",
    }
}

/// Counts over a set of calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    /// Calls made.
    pub(crate) calls: u64,
    /// Calls that succeeded.
    pub(crate) successes: u64,
    /// Attempts made, first tries included.
    pub(crate) attempts: u64,
    /// Attempts after the first of their call.
    pub(crate) retries: u64,
    /// Retries that failed.
    pub(crate) wasted_retries: u64,
}

impl Totals {
    /// Successful calls over calls.
    pub(crate) fn success_rate(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.successes as f64 / self.calls as f64
        }
    }

    /// `V · successes − c · attempts`.
    pub(crate) fn net_value(&self, value: f64, cost: f64) -> f64 {
        value * self.successes as f64 - cost * self.attempts as f64
    }

    fn add(&mut self, call: &CallTally) {
        self.calls += 1;
        self.successes += u64::from(call.success);
        self.attempts += u64::from(call.attempts);
        self.retries += u64::from(call.attempts.saturating_sub(1));
        self.wasted_retries += u64::from(call.failed_retries);
    }
}

/// What one call did.
#[derive(Clone, Copy, Debug, Default)]
struct CallTally {
    success: bool,
    attempts: u32,
    failed_retries: u32,
}

/// A policy's run: its totals, the same per slice of time (by arrival), and,
/// for the adaptive policy, its belief at the end of each slice.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Run {
    /// The policy.
    pub(crate) policy: Policy,
    /// Over every call.
    pub(crate) totals: Totals,
    /// Per slice of the run, by arrival time.
    pub(crate) slices: Vec<Totals>,
    /// The posterior (α, β) of "the retry after a first failure succeeds" for
    /// the class of the latest first failure, as of the end of each slice.
    pub(crate) belief: Vec<Option<(f64, f64)>>,
}

/// What the drivers write as calls end.
#[derive(Debug)]
struct Recorder {
    totals: Totals,
    slices: Vec<Totals>,
    belief: Vec<Option<(f64, f64)>>,
    slice_us: u64,
}

impl Recorder {
    fn new(world: &World, slices: usize) -> Recorder {
        let slices = slices.max(1);
        Recorder {
            totals: Totals::default(),
            slices: vec![Totals::default(); slices],
            belief: vec![None; slices],
            slice_us: (world.horizon_us() / slices as u64).max(1),
        }
    }

    /// The slice `t_us` falls in (the last one for times past the horizon).
    fn slice(&self, t_us: u64) -> usize {
        let last = self.slices.len().saturating_sub(1);
        usize::try_from(t_us / self.slice_us).map_or(last, |i| i.min(last))
    }

    fn end(&mut self, call: &Call, tally: &CallTally) {
        self.totals.add(tally);
        let slice = self.slice(call.arrival_us);
        if let Some(totals) = self.slices.get_mut(slice) {
            totals.add(tally);
        }
    }
}

/// Runs every call of `world` under `policy` (seeded with `seed`, told that a
/// success is worth `value_ratio` attempts), recording `slices` slices of time;
/// the adaptive policy's belief is recorded only when `watch_belief` is set.
pub(crate) fn run(
    world: &World,
    policy: Policy,
    seed: u64,
    value_ratio: f64,
    slices: usize,
    watch_belief: bool,
) -> Result<Run, Error> {
    let timeline = Timeline::new();
    let server = world.server();
    let recorder = RefCell::new(Recorder::new(world, slices));
    let calls = world.calls();
    let arrivals: Vec<u64> = calls.iter().map(|c| c.arrival_us).collect();
    // Each call is a handful of events (arrival, one per latency and backoff);
    // the cap only stops a run that would never end.
    let max_events = (calls.len() as u64)
        .saturating_mul(40)
        .saturating_add(1_000);
    let spawn_call = |i: usize| calls.get(i).copied();
    match policy {
        Policy::Adaptive(strategy) => {
            let config = BayesConfig::new(strategy, value_ratio, MAX_ATTEMPTS);
            let (retry_policy, _) = config
                .build(seed, &timeline)
                .map_err(|e| Error::Usage(format!("the adaptive policy cannot be built: {e}")))?;
            let (server, timeline, recorder, retry_policy) =
                (&server, &timeline, &recorder, &retry_policy);
            timeline.run(
                &arrivals,
                |i| -> Pin<Box<dyn Future<Output = ()> + '_>> {
                    match spawn_call(i) {
                        Some(call) => Box::pin(drive_adaptive(
                            server,
                            timeline,
                            retry_policy,
                            call,
                            recorder,
                            watch_belief,
                        )),
                        None => Box::pin(core::future::ready(())),
                    }
                },
                max_events,
            );
        }
        Policy::FixedThree | Policy::NoRetry if world.calls_are_independent() => {
            let attempts = fixed_attempts(policy);
            let mut recorder = recorder.borrow_mut();
            for call in calls {
                recorder.end(call, &call_fixed(&server, attempts, call));
            }
        }
        Policy::FixedThree | Policy::NoRetry => {
            let attempts = fixed_attempts(policy);
            let (server, timeline, recorder) = (&server, &timeline, &recorder);
            timeline.run(
                &arrivals,
                |i| -> Pin<Box<dyn Future<Output = ()> + '_>> {
                    match spawn_call(i) {
                        Some(call) => {
                            Box::pin(drive_fixed(server, timeline, attempts, call, recorder))
                        }
                        None => Box::pin(core::future::ready(())),
                    }
                },
                max_events,
            );
        }
    }
    let recorder = recorder.into_inner();
    if recorder.totals.calls != calls.len() as u64 {
        return Err(Error::Internal(format!(
            "simulate: {} of {} calls finished",
            recorder.totals.calls,
            calls.len()
        )));
    }
    Ok(Run {
        policy,
        totals: recorder.totals,
        slices: recorder.slices,
        belief: recorder.belief,
    })
}

/// Attempts in all for a fixed policy.
fn fixed_attempts(policy: Policy) -> u32 {
    if policy == Policy::NoRetry {
        1
    } else {
        MAX_ATTEMPTS
    }
}

/// [`drive_fixed`] without the executor, for a server on which calls do not
/// affect each other: a fixed policy keeps no state across calls either, so
/// each call's attempts follow from its own arrival and latencies alone, and
/// running the calls one after the other gives the same outcomes as running
/// them interleaved — at a fraction of the cost.
fn call_fixed(server: &Server<'_>, max_attempts: u32, call: &Call) -> CallTally {
    let deadline = call.arrival_us.saturating_add(DEADLINE_US);
    let mut now = call.arrival_us;
    let mut tally = CallTally::default();
    for attempt in 1..=max_attempts {
        if attempt > 1 && now >= deadline {
            break;
        }
        let outcome = server.attempt(call, attempt, now);
        now = now.saturating_add(outcome.latency_us);
        tally.attempts = attempt;
        if outcome.failure.is_none() {
            tally.success = true;
            break;
        }
        if attempt > 1 {
            tally.failed_retries += 1;
        }
    }
    tally
}

/// One call under a fixed number of immediate attempts, none started after the
/// call's deadline.
async fn drive_fixed(
    server: &Server<'_>,
    timeline: &Timeline,
    max_attempts: u32,
    call: Call,
    recorder: &RefCell<Recorder>,
) {
    let deadline = call.arrival_us.saturating_add(DEADLINE_US);
    let mut tally = CallTally::default();
    for attempt in 1..=max_attempts {
        let now = timeline.now_us();
        if attempt > 1 && now >= deadline {
            break;
        }
        let outcome = server.attempt(&call, attempt, now);
        timeline.sleep_us(outcome.latency_us).await;
        tally.attempts = attempt;
        if outcome.failure.is_none() {
            tally.success = true;
            break;
        }
        if attempt > 1 {
            tally.failed_retries += 1;
        }
    }
    recorder.borrow_mut().end(&call, &tally);
}

/// One call under the adaptive policy's run loop.
async fn drive_adaptive(
    server: &Server<'_>,
    timeline: &Timeline,
    policy: &RetryPolicy,
    call: Call,
    recorder: &RefCell<Recorder>,
    watch_belief: bool,
) {
    let attempts = Cell::new(0_u32);
    let failed_retries = Cell::new(0_u32);
    let first_failure: Cell<Option<Failure>> = Cell::new(None);
    let result = policy
        .call_with(ENDPOINT, classify)
        .run(|attempt| {
            let (attempts, failed_retries, first_failure) =
                (&attempts, &failed_retries, &first_failure);
            async move {
                let now = timeline.now_us();
                attempts.set(attempt);
                let outcome = server.attempt(&call, attempt, now);
                timeline.sleep_us(outcome.latency_us).await;
                match outcome.failure {
                    None => Ok(()),
                    Some(failure) => {
                        if attempt == 1 {
                            first_failure.set(Some(failure));
                        } else {
                            failed_retries.set(failed_retries.get() + 1);
                        }
                        Err(failure)
                    }
                }
            }
        })
        .await;
    let tally = CallTally {
        success: result.is_ok(),
        attempts: attempts.get(),
        failed_retries: failed_retries.get(),
    };
    let mut recorder = recorder.borrow_mut();
    recorder.end(&call, &tally);
    if let (true, Some(failure)) = (watch_belief, first_failure.get()) {
        let ctx = Context::new(ENDPOINT, 1, class_of(&failure));
        let posterior = policy.posterior(&ctx);
        let slice = recorder.slice(timeline.now_us());
        if let Some(slot) = recorder.belief.get_mut(slice) {
            *slot = Some((posterior.alpha(), posterior.beta()));
        }
    }
}

/// The class a simulated failure is learned under.
fn class_of(failure: &Failure) -> ErrorClass {
    match *failure {
        Failure::Transient5xx(status) => ErrorClass::Http(status),
        Failure::Timeout => ErrorClass::Timeout,
        Failure::ConnRefused => ErrorClass::ConnectionRefused,
        Failure::RateLimited429 { .. } => ErrorClass::Http(429),
        _ => ErrorClass::Unknown,
    }
}

/// What the policy is told about a failure: its class, and the server's
/// Retry-After when it sent one (as the simulator classifies).
fn classify(failure: &Failure) -> Classification {
    match *failure {
        Failure::RateLimited429 {
            retry_after_s: Some(s),
        } => Classification::RetryAfter(ErrorClass::Http(429), Duration::from_secs(s)),
        other => Classification::Retryable(class_of(&other)),
    }
}

#[cfg(test)]
mod tests {
    use bayesretry_policy::Strategy;

    use super::{MAX_ATTEMPTS, Policy, run};
    use crate::world::{Kind, World};

    #[test]
    fn every_call_is_counted_once_and_attempts_stay_under_the_cap() {
        let world = World::new(Kind::Flaky, 1, 2_000);
        for policy in [
            Policy::NoRetry,
            Policy::FixedThree,
            Policy::Adaptive(Strategy::Greedy),
        ] {
            let r = run(&world, policy, 1, 10.0, 20, false).unwrap();
            assert_eq!(r.totals.calls, 2_000, "{policy:?}");
            assert!(r.totals.attempts <= 2_000 * u64::from(MAX_ATTEMPTS));
            assert_eq!(r.totals.attempts, r.totals.calls + r.totals.retries);
            let sliced: u64 = r.slices.iter().map(|s| s.calls).sum();
            assert_eq!(sliced, 2_000);
        }
    }

    #[test]
    fn fixed_policies_give_the_same_outcomes_with_or_without_the_executor() {
        use core::cell::RefCell;

        use bayesretry_sim::Timeline;

        use super::{Recorder, drive_fixed};

        for kind in [Kind::Flaky, Kind::Outage, Kind::Degrading] {
            let world = World::new(kind, 9, 3_000);
            let direct = run(&world, Policy::FixedThree, 9, 10.0, 7, false).unwrap();
            let timeline = Timeline::new();
            let server = world.server();
            let recorder = RefCell::new(Recorder::new(&world, 7));
            let calls = world.calls();
            let arrivals: Vec<u64> = calls.iter().map(|c| c.arrival_us).collect();
            timeline.run(
                &arrivals,
                |i| {
                    Box::pin(drive_fixed(
                        &server,
                        &timeline,
                        MAX_ATTEMPTS,
                        calls[i],
                        &recorder,
                    ))
                },
                1_000_000,
            );
            let interleaved = recorder.into_inner();
            assert_eq!(direct.totals, interleaved.totals, "{kind:?}");
            assert_eq!(direct.slices, interleaved.slices, "{kind:?}");
        }
    }

    #[test]
    fn no_retry_matches_the_first_attempt_of_fixed_three_on_the_same_luck() {
        let world = World::new(Kind::Flaky, 4, 3_000);
        let none = run(&world, Policy::NoRetry, 4, 10.0, 1, false).unwrap();
        let fixed = run(&world, Policy::FixedThree, 4, 10.0, 1, false).unwrap();
        assert_eq!(none.totals.retries, 0);
        // a call that no-retry wins, fixed-3 wins on its first attempt too, so
        // fixed-3 succeeds at least as often, and its extra successes are retries
        let rescued = fixed.totals.successes - none.totals.successes;
        assert!(rescued > 0);
        assert_eq!(
            fixed.totals.retries - fixed.totals.wasted_retries,
            rescued,
            "every successful retry rescues exactly one call"
        );
    }

    #[test]
    fn the_adaptive_policy_stops_retrying_a_hard_down_endpoint() {
        let world = World::new(Kind::HardDown, 1, 2_000);
        let fixed = run(&world, Policy::FixedThree, 1, 10.0, 1, false).unwrap();
        let adaptive = run(
            &world,
            Policy::Adaptive(Strategy::Greedy),
            1,
            10.0,
            1,
            false,
        )
        .unwrap();
        assert_eq!(fixed.totals.wasted_retries, 2_000 * 3);
        assert!(adaptive.totals.retries < 100, "{:?}", adaptive.totals);
        assert_eq!(adaptive.totals.successes, 0);
    }

    #[test]
    fn the_belief_is_recorded_only_when_watched() {
        let world = World::new(Kind::Outage, 1, 2_000);
        let policy = Policy::Adaptive(Strategy::Greedy);
        let quiet = run(&world, policy, 1, 10.0, 40, false).unwrap();
        let watched = run(&world, policy, 1, 10.0, 40, true).unwrap();
        assert!(quiet.belief.iter().all(Option::is_none));
        assert!(watched.belief.iter().filter(|b| b.is_some()).count() > 30);
        assert_eq!(quiet.totals, watched.totals, "watching changes nothing");
    }
}
