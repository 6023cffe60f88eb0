//! `bayesretry simulate`: the adaptive policy, fixed-3 and no-retry on the same
//! calls with the same luck, side by side.

use std::thread;

use bayesretry_beta::Beta;
use bayesretry_policy::Strategy;
use serde::Serialize;

use crate::cli::SimulateArgs;
use crate::error::Error;
use crate::format::{Align, Table, num, signed};
use crate::output::{Output, write_json};
use crate::plot::{Belief, Picture, PolicyLines, check_writable, write_svg};
use crate::run::{MAX_ATTEMPTS, Policy, Run, Totals, run, strategy_name};
use crate::world::{RATE, World};

/// The largest V/c the policy is told: a free attempt (c = 0) is simulated as
/// this, which retries on any chance of success.
const MAX_VALUE_RATIO: f64 = 1e12;

/// The smallest V/c the policy is told. Below 1 no retry can pay, and the
/// policy acts alike on every such ratio; this one keeps what it derives from
/// it (the break-even c/V, the pace of its breaker's cooldown) finite and
/// above zero, where a ratio of figures far apart (`--value 1e-300 --cost
/// 1e300`) would round to 0 or make c/V infinite.
const MIN_VALUE_RATIO: f64 = 1e-12;

/// Slices of time the plot is drawn from.
const SLICES: usize = 120;

/// Slices on each side of a slice that its rolling rates average over: a
/// window of five slices (a twenty-fourth of the run), centred so that a change
/// shows where it happened rather than a window later.
const HALF_WINDOW: usize = 2;

/// Runs `simulate` and writes its table (or JSON) to `out`, and the plot when
/// asked.
pub(crate) fn run_simulate(args: &SimulateArgs, out: &mut Output<'_>) -> Result<(), Error> {
    if let Some(path) = &args.plot {
        // A directory is a wrong command line, as a file is for `bench
        // --plot`, not a write that failed.
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(Error::Usage(format!(
                "--plot {}: is a directory: simulate writes one SVG file at the path \
                 --plot names",
                path.display()
            )));
        }
        check_writable(path)?;
    }
    let world = World::new(args.scenario, args.seed, args.n);
    let strategy = args.strategy.into();
    let ratio = value_ratio(args.costs.value, args.costs.cost);
    let policies = [
        Policy::Adaptive(strategy),
        Policy::FixedThree,
        Policy::NoRetry,
    ];
    let plotting = args.plot.is_some();
    let slices = if plotting { SLICES } else { 1 };
    // The three runs share nothing but the calls: one thread each.
    let runs: Vec<Result<Run, Error>> = thread::scope(|scope| {
        let handles: Vec<_> = policies
            .iter()
            .map(|&policy| {
                let world = &world;
                scope.spawn(move || run(world, policy, args.seed, ratio, slices, plotting))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal(String::from("a run panicked"))))
            })
            .collect()
    });
    let runs = runs.into_iter().collect::<Result<Vec<Run>, Error>>()?;
    let report = Report {
        args,
        world: &world,
        strategy,
        runs: &runs,
    };
    let printed = if args.json {
        write_json(out, &report.json())
    } else {
        out.text(&report.text())
    };
    // The numbers are printed even when the plot cannot be written after all,
    // and the plot drawn even when nobody reads the numbers (`| head`).
    let plotted = match &args.plot {
        Some(path) => write_svg(path, &report.picture()),
        None => Ok(()),
    };
    plotted.and(printed)
}

/// The runs and what they were run with.
struct Report<'a> {
    args: &'a SimulateArgs,
    world: &'a World,
    strategy: Strategy,
    runs: &'a [Run],
}

impl Report<'_> {
    fn value(&self) -> f64 {
        self.args.costs.value
    }

    fn cost(&self) -> f64 {
        self.args.costs.cost
    }

    fn horizon_s(&self) -> f64 {
        self.world.horizon_us() as f64 / 1e6
    }

    fn text(&self) -> String {
        let kind = self.world.kind();
        let mut text = format!(
            "scenario  {}: {}\ncalls     {} at {} per second ({} s of virtual time), seed {}\n",
            kind.name(),
            kind.describe(),
            self.args.n,
            num(RATE),
            num(self.horizon_s()),
            self.args.seed,
        );
        if let Some((from, to)) = self.world.outage_us() {
            text.push_str(&format!(
                "outage    from {} s to {} s\n",
                num(from as f64 / 1e6),
                num(to as f64 / 1e6)
            ));
        }
        text.push_str(&format!(
            "value     a success is worth {}, an attempt costs {}; at most {MAX_ATTEMPTS} \
             attempts per call\n\n",
            num(self.value()),
            num(self.cost()),
        ));
        let mut table = Table::new(&[
            ("policy", Align::Left),
            ("success rate", Align::Right),
            ("attempts", Align::Right),
            ("retries", Align::Right),
            ("wasted retries", Align::Right),
            ("net value", Align::Right),
        ]);
        for r in self.runs {
            let t = &r.totals;
            table.row(vec![
                r.policy.name(),
                format!("{:.1}%", 100.0 * t.success_rate()),
                t.attempts.to_string(),
                t.retries.to_string(),
                t.wasted_retries.to_string(),
                num(t.net_value(self.value(), self.cost())),
            ]);
        }
        text.push_str(&table.render());
        if let (Some(adaptive), Some(fixed)) = (self.runs.first(), self.runs.get(1)) {
            text.push_str(&self.compare(&adaptive.totals, &fixed.totals, &fixed.policy.name()));
        }
        text.push_str(
            "\nnet value = value x successful calls - cost x attempts; a wasted retry is one \
             that failed.\n",
        );
        text
    }

    /// One line comparing the adaptive policy with `other`.
    fn compare(&self, adaptive: &Totals, other: &Totals, name: &str) -> String {
        format!(
            "\nadaptive vs {name}: {}, {}, success rate {} points, net value {}\n",
            fewer_or_more(adaptive.attempts, other.attempts, "attempts"),
            fewer_or_more(
                adaptive.wasted_retries,
                other.wasted_retries,
                "wasted retries"
            ),
            signed(((adaptive.success_rate() - other.success_rate()) * 1000.0).round() / 10.0),
            signed(
                adaptive.net_value(self.value(), self.cost())
                    - other.net_value(self.value(), self.cost())
            ),
        )
    }

    fn json(&self) -> SimulateJson {
        SimulateJson {
            scenario: self.world.kind().name(),
            calls: self.args.n,
            seed: self.args.seed,
            value: self.value(),
            cost: self.cost(),
            strategy: strategy_name(self.strategy),
            max_attempts: MAX_ATTEMPTS,
            horizon_s: self.horizon_s(),
            outage_s: self
                .world
                .outage_us()
                .map(|(a, b)| [a as f64 / 1e6, b as f64 / 1e6]),
            policies: self
                .runs
                .iter()
                .map(|r| PolicyJson {
                    policy: r.policy.name(),
                    calls: r.totals.calls,
                    successes: r.totals.successes,
                    success_rate: r.totals.success_rate(),
                    attempts: r.totals.attempts,
                    retries: r.totals.retries,
                    wasted_retries: r.totals.wasted_retries,
                    net_value: r.totals.net_value(self.value(), self.cost()),
                })
                .collect(),
        }
    }

    fn picture(&self) -> Picture {
        let slice_s = self.horizon_s() / SLICES as f64;
        let end_of = |i: usize| (i + 1) as f64 * slice_s;
        let middle_of = |i: usize| (i as f64 + 0.5) * slice_s;
        let policies = self
            .runs
            .iter()
            .map(|r| {
                let (success, retries) = rolling(&r.slices, middle_of);
                PolicyLines {
                    name: r.policy.name(),
                    success,
                    retries,
                }
            })
            .collect();
        let mut belief = Belief {
            about: String::from("the retry after a first failure"),
            ..Belief::default()
        };
        let mut last = None;
        for (i, slot) in self
            .runs
            .first()
            .map_or(&[][..], |r| r.belief.as_slice())
            .iter()
            .enumerate()
        {
            last = slot.or(last);
            let Some(posterior) = last.and_then(|(a, b)| Beta::new(a, b).ok()) else {
                continue;
            };
            let t = end_of(i);
            let (lo, hi) = posterior.credible_interval(0.95);
            belief.mean.push((t, posterior.mean()));
            belief.band.push((t, lo, hi));
        }
        for i in 0..=SLICES * 4 {
            let t = i as f64 * slice_s / 4.0;
            if let Some(q) = self.world.true_retry_probability((t * 1e6) as u64) {
                belief.truth.push((t, q));
            }
        }
        Picture {
            title: format!(
                "bayesretry simulate: {} scenario, {} calls, seed {}, V/c = {} ({})",
                self.world.kind().name(),
                self.args.n,
                self.args.seed,
                num(self.value() / self.cost()),
                strategy_name(self.strategy),
            ),
            x_max: self.horizon_s(),
            outages: self
                .world
                .outage_us()
                .map(|(a, b)| vec![(a as f64 / 1e6, b as f64 / 1e6)])
                .unwrap_or_default(),
            policies,
            belief,
        }
    }
}

/// The V/c the adaptive policy is told for a success worth `value` and an
/// attempt costing `cost`, within [`MIN_VALUE_RATIO`, `MAX_VALUE_RATIO`].
fn value_ratio(value: f64, cost: f64) -> f64 {
    if cost > 0.0 {
        (value / cost).clamp(MIN_VALUE_RATIO, MAX_VALUE_RATIO)
    } else {
        MAX_VALUE_RATIO
    }
}

/// How `adaptive`'s count of `what` compares with `other`'s, as a share of
/// `other`'s: "55% fewer attempts", "3% more wasted retries", "as many
/// attempts", and, when `other` is 0, the count itself ("14 more wasted
/// retries"), since no share of nothing reads. Counts that differ by less
/// than 1% read "under 1%", and one left by more than 99% fewer "over 99%":
/// never "0%", nor "100% fewer" for a count that is not 0.
fn fewer_or_more(adaptive: u64, other: u64, what: &str) -> String {
    if adaptive == other {
        return format!("as many {what}");
    }
    let (by, word) = if adaptive < other {
        (other - adaptive, "fewer")
    } else {
        (adaptive - other, "more")
    };
    if other == 0 {
        return format!("{by} more {what}");
    }
    let share = format!("{:.0}", 100.0 * by as f64 / other as f64);
    // counts that differ never read as "0%", nor a count left as "100% fewer"
    match share.as_str() {
        "0" => format!("under 1% {word} {what}"),
        "100" if adaptive > 0 && adaptive < other => format!("over 99% {word} {what}"),
        _ => format!("{share}% {word} {what}"),
    }
}

/// The success rate and retries per call over the slices within
/// [`HALF_WINDOW`] of each slice, at the middle of each slice that has calls in
/// its window.
#[allow(
    clippy::type_complexity,
    reason = "two series of points, named where they are used"
)]
fn rolling(slices: &[Totals], end_of: impl Fn(usize) -> f64) -> (Vec<(f64, f64)>, Vec<(f64, f64)>) {
    let mut success = Vec::new();
    let mut retries = Vec::new();
    for i in 0..slices.len() {
        let from = i.saturating_sub(HALF_WINDOW);
        let to = (i + HALF_WINDOW).min(slices.len().saturating_sub(1));
        let window = slices.get(from..=to).unwrap_or_default();
        let calls: u64 = window.iter().map(|t| t.calls).sum();
        if calls == 0 {
            continue;
        }
        let won: u64 = window.iter().map(|t| t.successes).sum();
        let retried: u64 = window.iter().map(|t| t.retries).sum();
        success.push((end_of(i), won as f64 / calls as f64));
        retries.push((end_of(i), retried as f64 / calls as f64));
    }
    (success, retries)
}

#[derive(Serialize)]
struct SimulateJson {
    scenario: &'static str,
    calls: u64,
    seed: u64,
    value: f64,
    cost: f64,
    strategy: &'static str,
    max_attempts: u32,
    horizon_s: f64,
    outage_s: Option<[f64; 2]>,
    policies: Vec<PolicyJson>,
}

#[derive(Serialize)]
struct PolicyJson {
    policy: String,
    calls: u64,
    successes: u64,
    success_rate: f64,
    attempts: u64,
    retries: u64,
    wasted_retries: u64,
    net_value: f64,
}

#[cfg(test)]
mod tests {
    use super::{MAX_VALUE_RATIO, MIN_VALUE_RATIO, fewer_or_more, rolling, value_ratio};
    use crate::run::Totals;

    #[test]
    fn the_ratio_the_policy_is_told_stays_within_its_bounds() {
        assert_eq!(value_ratio(10.0, 1.0), 10.0);
        assert_eq!(value_ratio(10.0, 0.0), MAX_VALUE_RATIO);
        assert_eq!(value_ratio(1e300, 1e-300), MAX_VALUE_RATIO);
        // 1e-600 rounds to 0, and 1e-320 makes c/V infinite
        assert_eq!(value_ratio(1e-300, 1e300), MIN_VALUE_RATIO);
        assert_eq!(value_ratio(1e-320, 1.0), MIN_VALUE_RATIO);
    }

    #[test]
    fn a_count_above_the_other_reads_as_more_not_as_negative_fewer() {
        assert_eq!(fewer_or_more(419, 925, "attempts"), "55% fewer attempts");
        assert_eq!(fewer_or_more(619, 614, "attempts"), "1% more attempts");
        assert_eq!(
            fewer_or_more(256, 248, "wasted retries"),
            "3% more wasted retries"
        );
        assert_eq!(fewer_or_more(7, 7, "attempts"), "as many attempts");
        assert_eq!(
            fewer_or_more(0, 0, "wasted retries"),
            "as many wasted retries"
        );
        assert_eq!(
            fewer_or_more(14, 0, "wasted retries"),
            "14 more wasted retries"
        );
        assert_eq!(
            fewer_or_more(0, 412, "wasted retries"),
            "100% fewer wasted retries"
        );
    }

    #[test]
    fn counts_that_differ_never_read_as_the_same_or_as_none() {
        assert_eq!(
            fewer_or_more(1_001, 1_000, "attempts"),
            "under 1% more attempts"
        );
        assert_eq!(
            fewer_or_more(995, 1_000, "attempts"),
            "under 1% fewer attempts"
        );
        assert_eq!(
            fewer_or_more(1, 1_000, "wasted retries"),
            "over 99% fewer wasted retries"
        );
        assert_eq!(
            fewer_or_more(2_999, 1_000, "attempts"),
            "200% more attempts"
        );
    }

    #[test]
    fn rolling_rates_weigh_each_call_once() {
        let slice = |calls, successes, retries| Totals {
            calls,
            successes,
            retries,
            attempts: calls + retries,
            wasted_retries: 0,
        };
        let slices = [
            slice(10, 10, 0),
            slice(0, 0, 0),
            slice(30, 0, 30),
            slice(0, 0, 0),
            slice(0, 0, 0),
            slice(0, 0, 0),
        ];
        let (success, retries) = rolling(&slices, |i| i as f64);
        // slice 5 sees only empty slices 3..=5: no point
        assert_eq!(
            success,
            [
                (0.0, 0.25),
                (1.0, 0.25),
                (2.0, 0.25),
                (3.0, 0.0),
                (4.0, 0.0)
            ]
        );
        assert_eq!(
            retries,
            [
                (0.0, 0.75),
                (1.0, 0.75),
                (2.0, 0.75),
                (3.0, 1.0),
                (4.0, 1.0)
            ]
        );
    }
}
