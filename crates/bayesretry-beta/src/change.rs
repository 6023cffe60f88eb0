//! [`ChangePoint`]: a run of failures as evidence that an endpoint has changed.
//!
//! # Why
//!
//! A posterior learned over minutes is the last to hear that a dependency went
//! down: its evidence of good times outweighs the first failures of an outage
//! for as long as that evidence lasts. A run of failures in a row is the fastest
//! sign there is, and how much it says depends on how rare such a run is in the
//! endpoint's usual state. This module weighs it, once, for every BayesRetry
//! crate that reads a run: the decision (should this retry go out?) and the
//! breaker (should the endpoint be cut off?).
//!
//! # The model
//!
//! Take an endpoint whose usual success rate is `p₀` and which has failed `k`
//! times in a row. Either nothing changed and this is bad luck, with likelihood
//! `(1 − p₀)^k`; or, with prior probability [`CHANGE_HAZARD`] for a run, the
//! endpoint changed when the run began, to a success rate about which nothing is
//! known beyond the run itself. For that unknown rate the prior is Jeffreys'
//! Beta(½, ½), the reference prior for a proportion, whose mass sits near 0 and
//! 1 — an endpoint that has just changed is usually down or back, rarely
//! half-way. Under it `k` failures have probability `m_k = ∏_{j<k} (½ + j) / (1 + j)`,
//! and the rate after them is Beta(½, ½ + k). Bayes' rule weighs the two:
//!
//! ```text
//! w = H·m_k / (H·m_k + (1 − H)·(1 − p₀)^k)
//! ```
//!
//! On a healthy endpoint (`p₀ = 0.95`) one failure moves nothing (`w ≈ 0.1`),
//! three make a change likely and five certain. On a flaky one (`p₀ = 0.5`) runs
//! are ordinary and `w` stays small until they are long. A success ends the run.
//!
//! # The hazard, in time
//!
//! `H` is the chance that a run is the first one after a change. Counted per
//! run alone it would be the same on an endpoint that sees a run a minute and
//! on one that sees hundreds a second; but changes happen in time, not in runs,
//! and a busy flaky endpoint would meet the long run that reads as a change by
//! chance, every few minutes. So where the rate of runs is known,
//! [`hazard_per_run`] takes changes to come at most once per
//! [`MEAN_TIME_BETWEEN_CHANGES_MS`] (ten minutes): with `ρ` runs per
//! millisecond, the share of runs that are the first after a change is
//! `1 / (ρ · τ)`, capped at [`CHANGE_HAZARD`]. The cap binds below a run every
//! six seconds — the healthy endpoint at ten calls a second and one failure in
//! a hundred reads as before — and a flaky endpoint at a thousand calls a second
//! (hundreds of runs a second) needs a run about twice as long before it reads
//! it as a change.

use crate::beta::Beta;

/// The prior probability that a run of failures began with a change of the
/// endpoint's behaviour: one run in a hundred.
pub const CHANGE_HAZARD: f64 = 0.01;

/// The mean time between changes of an endpoint's behaviour that
/// [`hazard_per_run`] assumes, in milliseconds: ten minutes.
pub const MEAN_TIME_BETWEEN_CHANGES_MS: f64 = 600_000.0;

/// The prior probability that a run of failures began with a change, on an
/// endpoint that sees `runs_per_ms` runs a millisecond (a run begins at a
/// failure after a success: `calls · p · (1 − p)` for a success rate `p`):
/// `1 / (runs_per_ms · τ)` with `τ` [`MEAN_TIME_BETWEEN_CHANGES_MS`], and never
/// more than [`CHANGE_HAZARD`]. Below the cap the share `1 − e^(−x)` of runs a
/// change precedes differs from `x` by under half a percent of it. A rate that
/// is zero, negative or not a number gives [`CHANGE_HAZARD`]: nothing measured,
/// nothing lowered.
///
/// ```
/// use bayesretry_beta::{CHANGE_HAZARD, hazard_per_run};
///
/// // ten calls a second, one in a hundred failing: a run every ten seconds
/// assert_eq!(hazard_per_run(0.01 * 0.99 * 0.01), CHANGE_HAZARD);
/// // a thousand calls a second failing half the time: 250 runs a second
/// let busy = hazard_per_run(1.0 * 0.5 * 0.5);
/// assert!((busy - 1.0 / (0.25 * 600_000.0)).abs() < 1e-18);
/// assert_eq!(hazard_per_run(f64::NAN), CHANGE_HAZARD);
/// ```
pub fn hazard_per_run(runs_per_ms: f64) -> f64 {
    if runs_per_ms > 0.0 {
        // finite or +inf: the quotient is in [0, +inf], and the cap bounds it
        (1.0 / (runs_per_ms * MEAN_TIME_BETWEEN_CHANGES_MS)).min(CHANGE_HAZARD)
    } else {
        CHANGE_HAZARD
    }
}

/// Runs longer than this are read as this long: the weight of a change is 1 to
/// machine precision well before, and the loop stays bounded.
const MAX_RUN: u32 = 1_000;

/// What a run of failures in a row says: how likely it is that the endpoint
/// changed when the run began, and what its success rate is if it did.
///
/// ```
/// use bayesretry_beta::ChangePoint;
///
/// // a healthy endpoint: one failure is bad luck, six in a row are an outage
/// let one = ChangePoint::after(1, 0.95).unwrap();
/// let six = ChangePoint::after(6, 0.95).unwrap();
/// assert!(one.weight() < 0.1);
/// assert!(six.weight() > 0.999);
/// // and if it changed, six failures say its rate is low
/// assert!(six.changed().upper_bound(0.95) < 0.35);
///
/// // on a flaky endpoint the same run is ordinary
/// assert!(ChangePoint::after(3, 0.5).unwrap().weight() < 0.1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangePoint {
    weight: f64,
    failures: u32,
}

impl ChangePoint {
    /// The change-point posterior after `failures` in a row on an endpoint whose
    /// usual success rate is `usual`; `None` when there is no run, or when
    /// `usual` is not a probability strictly between 0 and 1 (nothing to weigh
    /// the run against).
    pub fn after(failures: u32, usual: f64) -> Option<ChangePoint> {
        ChangePoint::after_with_hazard(failures, usual, CHANGE_HAZARD)
    }

    /// [`after`](ChangePoint::after), with the prior probability of a change
    /// given: `hazard`, as [`hazard_per_run`] reckons it for an endpoint whose
    /// rate of runs is known. A hazard outside [0, 1] is clamped into it, and
    /// NaN reads as [`CHANGE_HAZARD`].
    ///
    /// ```
    /// use bayesretry_beta::{CHANGE_HAZARD, ChangePoint};
    ///
    /// // at p₀ = 0.25, 35 failures in a row are rare per run (0.75³⁵ ≈ 4e-5),
    /// // but an endpoint with 190 runs a second meets one every couple of minutes
    /// let per_run = ChangePoint::after(35, 0.25).unwrap();
    /// let busy = ChangePoint::after_with_hazard(35, 0.25, 1.0 / (0.19 * 600_000.0)).unwrap();
    /// assert!(per_run.weight() > 0.9);
    /// assert!(busy.weight() < 0.2);
    /// assert_eq!(ChangePoint::after_with_hazard(35, 0.25, CHANGE_HAZARD), Some(per_run));
    /// ```
    pub fn after_with_hazard(failures: u32, usual: f64, hazard: f64) -> Option<ChangePoint> {
        if failures == 0 || !(usual > 0.0 && usual < 1.0) {
            return None;
        }
        let hazard = if hazard.is_nan() {
            CHANGE_HAZARD
        } else {
            hazard.clamp(0.0, 1.0)
        };
        let k = failures.min(MAX_RUN);
        let mut unchanged = 1.0 - hazard;
        let mut changed = hazard;
        // bounded by MAX_RUN
        for j in 0..k {
            unchanged *= 1.0 - usual;
            changed *= (0.5 + f64::from(j)) / (1.0 + f64::from(j));
        }
        // both terms are finite and at least one is positive unless the hazard
        // is 0 or 1 and the other underflows; an empty sum reads as no change
        let total = changed + unchanged;
        Some(ChangePoint {
            weight: if total > 0.0 { changed / total } else { 0.0 },
            failures: k,
        })
    }

    /// The posterior probability that the endpoint changed when the run began.
    pub const fn weight(&self) -> f64 {
        self.weight
    }

    /// The run's length as weighed (at most a thousand).
    pub const fn failures(&self) -> u32 {
        self.failures
    }

    /// The success rate if the endpoint changed: Beta(½, ½ + k).
    pub fn changed(&self) -> Beta {
        // ½ and ½ + k (k ≤ 1000) are finite and positive
        Beta::from_checked(0.5, 0.5 + f64::from(self.failures))
    }

    /// The next attempt's success probability if the endpoint changed: the
    /// mean of Beta(½, ½ + k), `½ / (k + 1)`.
    pub fn changed_mean(&self) -> f64 {
        0.5 / (f64::from(self.failures) + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{CHANGE_HAZARD, ChangePoint, MEAN_TIME_BETWEEN_CHANGES_MS, hazard_per_run};

    #[test]
    fn the_hazard_falls_with_the_rate_of_runs_below_its_cap() {
        // a run every minute, every second, every millisecond
        let per_minute = hazard_per_run(1.0 / 60_000.0);
        let per_second = hazard_per_run(1.0 / 1_000.0);
        let per_ms = hazard_per_run(1.0);
        assert_eq!(per_minute, CHANGE_HAZARD);
        assert!((per_second - 1_000.0 / MEAN_TIME_BETWEEN_CHANGES_MS).abs() < 1e-15);
        assert!((per_ms - 1.0 / MEAN_TIME_BETWEEN_CHANGES_MS).abs() < 1e-18);
        // the cap binds exactly where one run in a hundred would be the
        // first after a change: a run every six seconds
        assert_eq!(hazard_per_run(1.0 / 6_000.0), CHANGE_HAZARD);
        assert!(hazard_per_run(1.0 / 5_999.0) < CHANGE_HAZARD);
        for rate in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY] {
            assert_eq!(hazard_per_run(rate), CHANGE_HAZARD, "{rate}");
        }
        assert_eq!(hazard_per_run(f64::INFINITY), 0.0);
    }

    #[test]
    fn a_smaller_hazard_needs_a_longer_run_for_the_same_weight() {
        let busy = 1.0 / (0.19 * MEAN_TIME_BETWEEN_CHANGES_MS);
        for k in [5, 20, 35, 60] {
            let per_run = ChangePoint::after(k, 0.25).unwrap().weight();
            let in_time = ChangePoint::after_with_hazard(k, 0.25, busy)
                .unwrap()
                .weight();
            assert!(in_time < per_run, "{k}: {in_time} vs {per_run}");
        }
        // no hazard, no change, however long the run; a hazard of 1, a
        // certain one; out of range is clamped and NaN is the default
        assert_eq!(
            ChangePoint::after_with_hazard(1_000, 0.99, 0.0)
                .unwrap()
                .weight(),
            0.0
        );
        assert_eq!(
            ChangePoint::after_with_hazard(1, 0.5, 1.0)
                .unwrap()
                .weight(),
            1.0
        );
        assert_eq!(
            ChangePoint::after_with_hazard(3, 0.9, -2.0),
            ChangePoint::after_with_hazard(3, 0.9, 0.0)
        );
        assert_eq!(
            ChangePoint::after_with_hazard(3, 0.9, f64::NAN),
            ChangePoint::after(3, 0.9)
        );
    }

    #[test]
    fn no_run_or_no_usual_rate_means_no_change() {
        assert_eq!(ChangePoint::after(0, 0.95), None);
        assert_eq!(ChangePoint::after(3, f64::NAN), None);
        assert_eq!(ChangePoint::after(3, 1.0), None);
        assert_eq!(ChangePoint::after(3, 0.0), None);
    }

    #[test]
    fn the_weight_is_bayes_rule_on_known_cases() {
        // one failure at p0 = 0.95: H·½ / (H·½ + (1 − H)·0.05)
        let one = ChangePoint::after(1, 0.95).unwrap();
        let expected = CHANGE_HAZARD * 0.5 / (CHANGE_HAZARD * 0.5 + 0.99 * 0.05);
        assert!((one.weight() - expected).abs() < 1e-15);
        // two failures: m_2 = ½ · ¾
        let two = ChangePoint::after(2, 0.8).unwrap();
        let changed = CHANGE_HAZARD * 0.375;
        let expected = changed / (changed + 0.99 * 0.04);
        assert!((two.weight() - expected).abs() < 1e-15);
        assert_eq!(two.changed().alpha(), 0.5);
        assert_eq!(two.changed().beta(), 2.5);
        assert!((two.changed_mean() - two.changed().mean()).abs() < 1e-15);
    }

    #[test]
    fn a_very_long_run_is_a_certain_change_and_stays_finite() {
        let long = ChangePoint::after(u32::MAX, 0.99).unwrap();
        assert_eq!(long.weight(), 1.0);
        assert_eq!(long.failures(), 1_000);
        assert!(long.changed_mean() > 0.0);
        assert_eq!(ChangePoint::after(1_000, 0.99), Some(long));
    }
}
