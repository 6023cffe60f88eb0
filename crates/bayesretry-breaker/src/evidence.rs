//! The evidence a breaker has gathered, how it fades, and the rule that reads it.
//!
//! # The rule
//!
//! The breaker opens when, with probability `confidence`, the success rate is below
//! `open_below`: when the one-sided upper credible bound `q` of the posterior,
//! `P(X ≤ q) = confidence`, is below the floor. Because the cdf is strictly
//! increasing, `q < floor ⟺ cdf(floor) > confidence`, and the right-hand side is one
//! evaluation of the regularized incomplete beta function. The quantile `q` itself
//! (an iterative inversion, several cdf evaluations) is never computed on this path.
//!
//! Most evaluations can be skipped. For a healthy endpoint the floor lies far below
//! the posterior mean `μ`, and Cantelli's one-sided inequality bounds the lower tail
//! by the variance alone: `P(X ≤ μ − t) ≤ σ² / (σ² + t²)` for `t > 0`. When that bound
//! is already below `confidence` the rule cannot hold, and the incomplete beta
//! function is not evaluated at all. The shortcut only ever answers "no" and only
//! when the exact answer is "no" (it keeps a margin far above rounding, and reads
//! the floor's distance below the mean short by the mean's own rounding, which
//! is all of that distance when the floor is a few units in the last place below
//! it), so the decision is exactly that of the incomplete beta function.
//!
//! # Decay
//!
//! With a half-life `h`, evidence fades on read: counts above the prior are
//! multiplied by `2^(−Δt / h)`, where `Δt` is the time since they were last brought
//! up to date. Nothing sweeps in the background; the multiplication happens when
//! the breaker next records an outcome (or is asked for its posterior). An endpoint
//! that has been quiet for a while is thus judged on what remains of old evidence —
//! less of it, so the posterior is wider and `min_strength` is harder to reach.

use bayesretry_beta::{Beta, ChangePoint};

use crate::math;

/// How far below `confidence` Cantelli's bound must be for the shortcut to skip the
/// exact evaluation. The bound is computed with a few roundings of relative size
/// 1e-16; this margin is a million times that.
const CERTIFICATE_MARGIN: f64 = 1e-10;

/// How much of the mean, relatively, the floor's distance below it is shortened
/// by before Cantelli's bound reads it. The mean `1 / (1 + β/α)` is three
/// roundings from the true one (within `3.4e-16` of it, relatively), and a floor
/// that close to the mean leaves a gap that rounding may double: with the
/// standard deviation as small as that (counts of 1e18 near a rate of 1), the
/// bound would then claim far more than holds. Eight machine epsilons cover the
/// mean's roundings and the gap's own two.
const MEAN_ROUNDING: f64 = 8.0 * f64::EPSILON;

/// Successes and failures observed above the prior, as of `at_ms`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Evidence {
    successes: f64,
    failures: f64,
    at_ms: u64,
}

impl Evidence {
    /// No evidence, as of `now_ms`.
    pub(crate) const fn none(now_ms: u64) -> Evidence {
        Evidence {
            successes: 0.0,
            failures: 0.0,
            at_ms: now_ms,
        }
    }

    /// The evidence faded to `now_ms` (unchanged without a half-life, or when
    /// `now_ms` is not after `at_ms`: a caller whose clock lags another's does not
    /// turn time back).
    pub(crate) fn at(self, now_ms: u64, half_life_ms: Option<u64>) -> Evidence {
        let (Some(half_life), true) = (half_life_ms, now_ms > self.at_ms) else {
            return self;
        };
        let elapsed = (now_ms - self.at_ms) as f64;
        let factor = math::exp2(-elapsed / half_life as f64);
        Evidence {
            successes: self.successes * factor,
            failures: self.failures * factor,
            at_ms: now_ms,
        }
    }

    /// Adds one outcome (counts saturate at `f64::MAX`).
    pub(crate) fn observe(&mut self, success: bool) {
        let count = if success {
            &mut self.successes
        } else {
            &mut self.failures
        };
        *count = (*count + 1.0).min(f64::MAX);
    }

    /// Adds `count` successes that happened at unknown times between `since_ms`
    /// and `at_ms` (the evidence must already be faded to `at_ms`), each weighed
    /// by the mean of the decay factor over that interval: the weight they have
    /// if they were spread evenly over it. Without a half-life, or over an empty
    /// interval, the weight is 1. Saturates at `f64::MAX`.
    #[cfg(feature = "std")]
    pub(crate) fn observe_spread_successes(
        &mut self,
        count: u64,
        since_ms: u64,
        half_life_ms: Option<u64>,
    ) {
        let weight = match half_life_ms {
            Some(half_life) if self.at_ms > since_ms => {
                mean_decay((self.at_ms - since_ms) as f64 / half_life as f64)
            }
            _ => 1.0,
        };
        self.successes = (self.successes + count as f64 * weight).min(f64::MAX);
    }

    /// The time the evidence was last brought up to.
    #[cfg(feature = "std")]
    pub(crate) const fn at_ms(&self) -> u64 {
        self.at_ms
    }

    /// Successes plus failures above the prior.
    pub(crate) fn strength(&self) -> f64 {
        self.successes + self.failures
    }

    /// The posterior: the prior updated with this evidence.
    pub(crate) fn posterior(&self, prior: Beta) -> Beta {
        prior.update(self.successes, self.failures)
    }
}

/// The mean of `2^(-t)` for `t` uniform on `[0, span]` (in half-lives):
/// `(1 - 2^(-span)) / (span · ln 2)`. Near zero the closed form cancels, so a
/// short span uses its series; the mean falls from 1 at `span = 0` towards 0.
#[cfg(feature = "std")]
fn mean_decay(span: f64) -> f64 {
    let x = span * core::f64::consts::LN_2;
    if !(x > 1e-6) {
        // also a NaN span: treat it as no time at all
        return 1.0;
    }
    if x < 1e-3 {
        // 1 - x/2 + x²/6, exact to the rounding for x this small
        return 1.0 - x / 2.0 + x * x / 6.0;
    }
    (1.0 - math::exp2(-span)) / x
}

/// Whether the upper credible bound of `posterior` at `confidence` is below
/// `floor`, decided by Cantelli's bound where it suffices and otherwise by one
/// incomplete beta evaluation.
pub(crate) fn upper_bound_below(posterior: &Beta, confidence: f64, floor: f64) -> bool {
    if cantelli_below(posterior, floor)
        .is_some_and(|at_most| at_most < confidence - CERTIFICATE_MARGIN)
    {
        return false;
    }
    posterior.cdf(floor) > confidence
}

/// Cantelli's upper bound of `P(X ≤ floor)`, `σ² / (σ² + t²)` with `t` how far
/// the floor lies below the mean, read so that rounding can only raise it: `t`
/// is shortened by [`MEAN_ROUNDING`] of the mean. `None` where that leaves no
/// gap, or where the variance is not a normal number (it underflowed, or the
/// counts' sum overflowed), and the bound cannot be vouched for.
fn cantelli_below(posterior: &Beta, floor: f64) -> Option<f64> {
    let mean = posterior.mean();
    let variance = posterior.variance();
    let gap = mean - floor - MEAN_ROUNDING * mean;
    // a gap whose square underflows only raises the bound; NaN fails both tests
    (gap > 0.0 && variance >= f64::MIN_POSITIVE).then(|| variance / (variance + gap * gap))
}

/// The shortest run of failures after which even a certain change (down with
/// probability [`ChangePoint::down`], at a rate of Beta(½, ½ + k) otherwise) is
/// below `floor` with probability `confidence`: no shorter run can open the
/// breaker, whatever the posterior and the hazard, since the rate if changed
/// depends on the run's length alone and [`run_says_down`] refuses a run whose
/// changed rate is not below the floor. `u32::MAX` if none up to the longest
/// run weighed.
pub(crate) fn shortest_opening_run(confidence: f64, floor: f64) -> u32 {
    let allowed = 1.0 - confidence;
    // bounded: a thousand runs, as ChangePoint weighs at most
    (1..=1_000_u32)
        .find(|&k| ChangePoint::after(k, 0.5).is_some_and(|run| run.changed_sf(floor) < allowed))
        .unwrap_or(u32::MAX)
}

/// Whether a run of `failures` in a row, read as a change point, puts the
/// success rate above `floor` with probability under `1 − confidence`: the
/// mixture of "nothing changed" (the `posterior`, the run's failures
/// included) and "changed when the run began" (down, or Beta(½, ½ + k)),
/// weighed by the run's change-point weight at `usual`, the success rate
/// before the run, with `hazard` the prior probability that the run began
/// with a change.
///
/// The two readings of the endpoint are not the same on purpose. Given no
/// change, the run's failures are evidence about the same rate as everything
/// before them, so "nothing changed" is the whole posterior. But the weight
/// asks how likely the run is at the rate the endpoint had when it began,
/// `(1 − usual)^k`: a `usual` that held the run's own failures would be lower
/// for them, and read the run as the more ordinary the more of it there is.
pub(crate) fn run_says_down(
    failures: u32,
    posterior: &Beta,
    usual: f64,
    hazard: f64,
    confidence: f64,
    floor: f64,
) -> bool {
    let Some(run) = ChangePoint::after_with_hazard(failures, usual, hazard) else {
        return false;
    };
    let allowed = 1.0 - confidence;
    let weight = run.weight();
    // "nothing changed" alone leaves too much mass above the floor: told by
    // Cantelli's bound, with no incomplete beta evaluation (the common case on
    // a flaky endpoint, whose runs weigh little as a change)
    if (1.0 - weight) * sf_at_least(posterior, floor) >= allowed {
        return false;
    }
    let changed = run.changed_sf(floor);
    // even a certain change would leave too much mass above the floor
    if changed >= allowed {
        return false;
    }
    (1.0 - weight) * posterior.sf(floor) + weight * changed < allowed
}

/// A lower bound of `posterior.sf(floor)` that needs no incomplete beta:
/// Cantelli's inequality below the mean ([`cantelli_below`]), `1 − σ² / (σ² +
/// gap²)`, less [`CERTIFICATE_MARGIN`] for rounding; 0 where it vouches for
/// nothing (the floor at, above or within rounding of the mean).
fn sf_at_least(posterior: &Beta, floor: f64) -> f64 {
    cantelli_below(posterior, floor)
        .map_or(0.0, |at_most| (1.0 - at_most - CERTIFICATE_MARGIN).max(0.0))
}

#[cfg(test)]
mod tests {
    use bayesretry_beta::{Beta, CHANGE_HAZARD, hazard_per_run};
    use proptest::prelude::*;

    use super::{Evidence, run_says_down, shortest_opening_run, upper_bound_below};

    #[test]
    fn the_shortest_opening_run_is_where_the_changed_rates_tail_drops_below_the_allowance() {
        // 95 % sure below 0.1 after 6 failures, below 0.05 after 10, when a
        // change is down with probability D / (D + (1 − D)·m_k) and Beta(½,
        // ½ + k) otherwise (checked against mpmath: the tail above 0.1 is
        // 0.0578 after 5 and 0.0462 after 6; above 0.05, 0.0516 after 9 and
        // 0.0457 after 10). Jeffreys' prior alone took 18 and 38.
        assert_eq!(shortest_opening_run(0.95, 0.1), 6);
        assert_eq!(shortest_opening_run(0.95, 0.05), 10);
        // and no shorter run opens, even after a very healthy history (the
        // mixture above 0.1 is 0.0578 after 5 and 0.0462 after 6, mpmath)
        let healthy = Beta::new(1_000.0, 2.0).unwrap();
        let says = |k: u32, hazard: f64| {
            let (posterior, usual) = after_run(healthy, k);
            run_says_down(k, &posterior, usual, hazard, 0.95, 0.1)
        };
        assert!(!says(5, CHANGE_HAZARD));
        assert!(says(6, CHANGE_HAZARD));
        // a smaller hazard cannot make a shorter run open
        assert!(!says(5, 1e-6));
    }

    #[test]
    fn a_busy_flaky_endpoint_needs_a_longer_run_than_a_quiet_one() {
        // three failures in four: per run, 29 in a row read as a change; at
        // the hazard of an endpoint with 190 runs a second they do not, and
        // it takes 53 (both from mpmath: the mixture above 0.1 is 0.0551
        // after 28 and 0.0421 after 29 per run, 0.0632 after 52 and 0.0482
        // after 53 at that hazard)
        let flaky = Beta::new(250.0, 750.0).unwrap();
        let busy = hazard_per_run(0.19);
        let says = |k: u32, hazard: f64| {
            let (posterior, usual) = after_run(flaky, k);
            run_says_down(k, &posterior, usual, hazard, 0.95, 0.1)
        };
        assert!(!says(28, CHANGE_HAZARD));
        assert!(says(29, CHANGE_HAZARD));
        assert!(!says(35, busy));
        let needed = (29..200).find(|&k| says(k, busy));
        assert_eq!(needed, Some(53));
    }

    #[test]
    fn the_run_is_weighed_against_the_rate_before_it_not_the_posterior_with_it() {
        // three successes on the uniform prior, then a run of failures: the
        // rate before the run is 4/5, and six failures later the posterior's
        // mean is 4/11. Weighed against 4/5, the 7th failure reads as an
        // outage (the mixture above 0.1 is 0.0558 after 6, 0.0394 after 7);
        // weighed against the posterior's own mean, which the run has
        // lowered, it takes 68 (0.0533 after 67, 0.0497 after 68; mpmath)
        let before = Beta::uniform().update(3.0, 0.0);
        let says = |k: u32, usual: f64| {
            let (posterior, _) = after_run(before, k);
            run_says_down(k, &posterior, usual, CHANGE_HAZARD, 0.95, 0.1)
        };
        assert!(!says(6, before.mean()));
        assert!(says(7, before.mean()));
        let diluted = |k: u32| says(k, after_run(before, k).0.mean());
        assert_eq!((1..200).find(|&k| diluted(k)), Some(68));
    }

    /// The posterior after a run of `k` failures that follows `before`, and the
    /// rate before the run: what a breaker reads.
    fn after_run(before: Beta, k: u32) -> (Beta, f64) {
        (before.update(0.0, f64::from(k)), before.mean())
    }

    #[test]
    fn the_cheap_bound_never_exceeds_the_survival_function() {
        for (a, b) in [
            (1.0, 1.0),
            (0.5, 0.5),
            (250.0, 750.0),
            (1_000.0, 2.0),
            (3.0, 40.0),
        ] {
            let posterior = Beta::new(a, b).unwrap();
            for floor in [0.001, 0.05, 0.1, 0.5, 0.9] {
                let bound = super::sf_at_least(&posterior, floor);
                assert!(bound <= posterior.sf(floor), "{a} {b} {floor}");
                assert!(bound >= 0.0);
            }
        }
        // far above the floor, the bound is nearly 1: a flaky endpoint's run
        // is dismissed without evaluating either tail
        let flaky = Beta::new(250.0, 750.0).unwrap();
        assert!(super::sf_at_least(&flaky, 0.1) > 0.99);
    }

    #[test]
    fn the_cheap_bounds_allow_for_the_rounding_of_the_mean() {
        // Beta(1e18, 316.2…): the mean, 1 − 3.16e-16, is computed as
        // 1 − 2.2e-16, and a floor of 1 − 3·2⁻⁵³ lies 1.7e-17 below the true
        // mean (under a standard deviation, 1.8e-17) but 1.1e-16 below the
        // computed one. Read with that gap, Cantelli's bound says the tail
        // above the floor is at least 0.975; it is 0.829 (mpmath: 0.82876451…),
        // and the bound with the true gap is 0.473.
        let posterior = Beta::new(1e18, 316.227_766_016_837_96).unwrap();
        let floor = 1.0 - 3.0 * f64::EPSILON / 2.0;
        let sf = posterior.sf(floor);
        assert!((sf - 0.828_764_513_844_518_5).abs() < 1e-12, "{sf}");
        assert!(super::sf_at_least(&posterior, floor) <= sf);
        // so neither shortcut may answer "no" where the exact rule says yes:
        // the run's reading (at this hazard and a usual rate of the posterior's
        // mean, w ≈ ½, and ½·0.829 < 0.45) …
        assert!(run_says_down(
            1,
            &posterior,
            posterior.mean(),
            3e-16,
            0.55,
            floor
        ));
        // … and the credible bound's (the cdf at the floor is 0.171)
        assert!(upper_bound_below(&posterior, 0.1, floor));
    }

    #[test]
    fn a_half_life_halves_the_evidence() {
        let mut e = Evidence::none(0);
        for _ in 0..8 {
            e.observe(false);
        }
        e.observe(true);
        let later = e.at(1_000, Some(1_000));
        assert_eq!(later.strength(), 4.5);
        assert_eq!(e.at(1_000, None), e);
        assert_eq!(later.at(500, Some(1_000)), later);
    }

    #[test]
    fn the_rule_matches_the_quantile_on_known_cases() {
        // Beta(1, 1 + n): the upper bound at 0.95 is 1 - 0.05^(1 / (n + 1)); it falls
        // below 0.05 from n = 58 on.
        for n in [10.0, 57.0, 58.0, 200.0] {
            let posterior = Beta::uniform().update(0.0, n);
            let by_quantile = posterior.upper_bound(0.95) < 0.05;
            assert_eq!(
                upper_bound_below(&posterior, 0.95, 0.05),
                by_quantile,
                "n = {n}"
            );
            assert_eq!(by_quantile, n >= 58.0);
        }
    }

    proptest! {
        #[test]
        fn the_cheap_bound_is_below_the_survival_function_even_beside_the_mean(
            rate in 0.001_f64..0.999,
            log_strength in 0.0_f64..36.0,
            log_distance in -17.0_f64..0.0,
            ulps_below in 0_u64..8,
        ) {
            // up to counts of 1e36, where the standard deviation is a few
            // units in the last place of the mean
            let strength = 10_f64.powf(log_strength);
            let posterior = Beta::new(rate * strength, (1.0 - rate) * strength).unwrap();
            let mean = posterior.mean();
            // a floor some way below the mean, and one a few units in the
            // last place below it, where the mean's rounding is all the gap
            let floors = [
                mean * (1.0 - 10_f64.powf(log_distance)),
                f64::from_bits(mean.to_bits().saturating_sub(ulps_below + 1)),
            ];
            for floor in floors {
                prop_assume!(floor > 0.0 && floor < 1.0);
                let bound = super::sf_at_least(&posterior, floor);
                prop_assert!(bound <= posterior.sf(floor), "{posterior:?} {floor:e}: {bound}");
            }
        }

        #[test]
        fn no_run_shorter_than_the_shortest_opening_run_opens_whatever_the_posterior(
            log_alpha in -2.0_f64..6.0,
            log_beta in -2.0_f64..6.0,
            usual in 0.000_1_f64..0.999_9,
            log_hazard in -12.0_f64..0.0,
            confidence in 0.5_f64..0.999,
            floor in 0.001_f64..0.9,
        ) {
            let posterior = Beta::new(10_f64.powf(log_alpha), 10_f64.powf(log_beta)).unwrap();
            let shortest = shortest_opening_run(confidence, floor);
            // a hazard of 1 makes the change certain: the run is read alone
            for hazard in [10_f64.powf(log_hazard), 1.0] {
                for failures in 1..shortest.min(1_001) {
                    prop_assert!(
                        !run_says_down(failures, &posterior, usual, hazard, confidence, floor),
                        "{failures} < {shortest}: {posterior:?} {usual} {hazard:e}"
                    );
                }
                if shortest <= 1_000 {
                    // and at that length a certain change does open it
                    prop_assert!(
                        run_says_down(shortest, &posterior, usual, 1.0, confidence, floor)
                    );
                }
            }
        }

        #[test]
        fn the_rule_is_the_quantile_comparison(
            alpha in 0.01_f64..2_000.0,
            beta in 0.01_f64..2_000.0,
            confidence in 0.5_f64..0.999,
            floor in 0.001_f64..0.5,
        ) {
            let posterior = Beta::new(alpha, beta).unwrap();
            // Too close to call in floating point either way: skip.
            prop_assume!((posterior.cdf(floor) - confidence).abs() > 1e-9);
            prop_assert_eq!(
                upper_bound_below(&posterior, confidence, floor),
                posterior.upper_bound(confidence) < floor
            );
        }
    }
}
