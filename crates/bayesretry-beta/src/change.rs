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
//! endpoint changed when the run began. A change is one of two kinds, even odds
//! a priori ([`DOWN_SHARE`]):
//!
//! - **down**: the rate is 0. A dead host, a refused connection, a backend
//!   that answers every request with a 503: the outages that breakers exist
//!   for fail every attempt, and `k` failures have probability 1;
//! - **moved**: the rate went somewhere about which nothing is known beyond the
//!   run itself. For it the prior is Jeffreys' Beta(½, ½), the reference prior
//!   for a proportion, under which `k` failures have probability
//!   `m_k = ∏_{j<k} (½ + j) / (1 + j)` and the rate after them is
//!   Beta(½, ½ + k).
//!
//! Bayes' rule weighs the three. With `L = D + (1 − D)·m_k` the likelihood of
//! the run under a change (`D` the down share),
//!
//! ```text
//! w    = H·L / (H·L + (1 − H)·(1 − p₀)^k)     the weight of a change
//! down = D / L                                 how much of it is "down"
//! ```
//!
//! On a healthy endpoint (`p₀ = 0.95`) one failure moves little (`w ≈ 0.13`),
//! three make a change near certain. On a flaky one (`p₀ = 0.5`) runs are
//! ordinary and `w` stays small until they are long. A success ends the run.
//!
//! Why the point at 0. Jeffreys' prior alone puts mass near 0 but not at it, so
//! it explains a run of `k` failures by a rate of about `1/k` as well as by an
//! outage, and its mean after the run, `½ / (k + 1)`, falls only as fast as the
//! run grows: it fell below one in fifty, the break-even at a value of a
//! success fifty times an attempt's cost, only at the 25th failure, and at such
//! a value the retries went on for seconds into an outage. With the point, the
//! share of "down" grows with every failure (`m_k` falls as `1/√(πk)`), and the
//! rate if changed falls as `(1 − down)·½ / (k + 1)`. The price is paid on an
//! endpoint that degrades to a low rate rather than dying: a long run there
//! reads as an outage a few failures sooner, until its next success ends the
//! run.
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

/// The prior probability that a change, when there is one, took the endpoint
/// down (a success rate of exactly 0) rather than to a rate about which nothing
/// is known: even odds. See the module's *Why the point at 0*.
pub const DOWN_SHARE: f64 = 0.5;

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
/// assert!(one.weight() < 0.15);
/// assert!(six.weight() > 0.999);
/// // and if it changed, six failures say it is more likely down than not,
/// // and that its rate is low either way
/// assert!(six.down() > 0.8);
/// assert!(six.changed_sf(0.1) < 0.05);
///
/// // on a flaky endpoint the same run is ordinary
/// assert!(ChangePoint::after(3, 0.5).unwrap().weight() < 0.1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangePoint {
    weight: f64,
    down: f64,
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
    // Inlinable across crates: a learning decision weighs its run here once per
    // failure, and the call and its spills were some 13 of its instructions.
    #[inline]
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
        // m_k, the run's likelihood if the rate moved; it stays above 1/√(πk)/2
        let mut moved = 1.0;
        // bounded by MAX_RUN
        for j in 0..k {
            unchanged *= 1.0 - usual;
            moved *= (0.5 + f64::from(j)) / (1.0 + f64::from(j));
        }
        // the run's likelihood under a change: at least DOWN_SHARE, so positive
        let likelihood = DOWN_SHARE + (1.0 - DOWN_SHARE) * moved;
        let changed = hazard * likelihood;
        // both terms are finite, and at least one is positive unless the hazard
        // is 0 and the unchanged term underflows (under a change the run's
        // likelihood is at least DOWN_SHARE): an empty sum reads as no change
        let total = changed + unchanged;
        Some(ChangePoint {
            weight: if total > 0.0 { changed / total } else { 0.0 },
            down: DOWN_SHARE / likelihood,
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

    /// The probability that the endpoint is down (its rate exactly 0) if it
    /// changed when the run began: `D / (D + (1 − D)·m_k)`, from
    /// [`DOWN_SHARE`] after no failure towards 1 as the run grows.
    pub const fn down(&self) -> f64 {
        self.down
    }

    /// The success rate if the endpoint changed but is not down ("moved"):
    /// Beta(½, ½ + k).
    pub fn moved(&self) -> Beta {
        // ½ and ½ + k (k ≤ 1000) are finite and positive
        Beta::from_checked(0.5, 0.5 + f64::from(self.failures))
    }

    /// The next attempt's success probability if the endpoint changed: 0 if
    /// it is down, the mean of Beta(½, ½ + k) if it moved,
    /// `(1 − down)·½ / (k + 1)` together.
    pub fn changed_mean(&self) -> f64 {
        (1.0 - self.down) * 0.5 / (f64::from(self.failures) + 1.0)
    }

    /// The probability that the success rate is above `x` if the endpoint
    /// changed: `(1 − down)·P(Beta(½, ½ + k) > x)` for `x` ≥ 0 (a rate of 0
    /// is above no such `x`), 1 below 0, and NaN for a NaN `x`.
    ///
    /// ```
    /// use bayesretry_beta::ChangePoint;
    ///
    /// let run = ChangePoint::after(6, 0.95).unwrap();
    /// let above = run.changed_sf(0.1);
    /// assert!((above - (1.0 - run.down()) * run.moved().sf(0.1)).abs() < 1e-15);
    /// assert_eq!(run.changed_sf(-0.5), 1.0);
    /// assert!(run.changed_sf(f64::NAN).is_nan());
    /// ```
    pub fn changed_sf(&self, x: f64) -> f64 {
        if x < 0.0 {
            1.0
        } else {
            (1.0 - self.down) * self.moved().sf(x)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        CHANGE_HAZARD, ChangePoint, DOWN_SHARE, MEAN_TIME_BETWEEN_CHANGES_MS, hazard_per_run,
    };

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
        // one failure at p0 = 0.95: m_1 = ½, so L = D + (1 − D)·½
        let one = ChangePoint::after(1, 0.95).unwrap();
        let likelihood = DOWN_SHARE + (1.0 - DOWN_SHARE) * 0.5;
        let changed = CHANGE_HAZARD * likelihood;
        let expected = changed / (changed + 0.99 * 0.05);
        assert!((one.weight() - expected).abs() < 1e-15);
        assert!((one.down() - DOWN_SHARE / likelihood).abs() < 1e-15);
        // two failures: m_2 = ½ · ¾
        let two = ChangePoint::after(2, 0.8).unwrap();
        let likelihood = DOWN_SHARE + (1.0 - DOWN_SHARE) * 0.375;
        let changed = CHANGE_HAZARD * likelihood;
        let expected = changed / (changed + 0.99 * 0.04);
        assert!((two.weight() - expected).abs() < 1e-15);
        assert!((two.down() - DOWN_SHARE / likelihood).abs() < 1e-15);
        assert_eq!(two.moved().alpha(), 0.5);
        assert_eq!(two.moved().beta(), 2.5);
        // the mean if changed: 0 if down, Beta(½, 2½)'s mean if it moved
        let mean = (1.0 - two.down()) * two.moved().mean();
        assert!((two.changed_mean() - mean).abs() < 1e-15);
    }

    #[test]
    fn the_share_of_down_grows_with_the_run_and_lowers_the_rate_if_changed() {
        let mut last_down = DOWN_SHARE;
        let mut last_above = 1.0;
        for k in [1, 2, 5, 10, 50, 200, 1_000] {
            let run = ChangePoint::after(k, 0.95).unwrap();
            assert!(run.down() > last_down, "{k}: {} vs {last_down}", run.down());
            assert!(run.down() < 1.0, "{k}");
            // the rate if changed is below the moved rate's by the down share
            assert!(run.changed_mean() < run.moved().mean(), "{k}");
            let above = run.changed_sf(0.05);
            assert!(above < last_above, "{k}: {above} vs {last_above}");
            assert!(above <= 1.0 - run.down(), "{k}");
            last_down = run.down();
            last_above = above;
        }
        // m_k falls as 1/√(πk): after a thousand failures, about 0.018
        let long = ChangePoint::after(1_000, 0.95).unwrap();
        let moved = (1.0 - long.down()) / long.down();
        assert!((moved - 1.0 / (core::f64::consts::PI * 1_000.0).sqrt()).abs() < 1e-4);
        // no mass below 0, and none of a rate of 0 above 0
        assert_eq!(long.changed_sf(-1.0), 1.0);
        assert_eq!(long.changed_sf(1.0), 0.0);
    }

    #[test]
    fn the_point_at_zero_reads_an_outage_sooner_than_jeffreys_alone() {
        // at a value of a success fifty times an attempt's cost (break-even
        // 0.02), the mean if changed under Jeffreys' prior alone, ½ / (k + 1),
        // fell below break-even at k = 25; with the point at 0, at k = 5
        let jeffreys = |k: u32| 0.5 / (f64::from(k) + 1.0);
        let first = |mean: &dyn Fn(u32) -> f64| (1..100).find(|&k| mean(k) < 0.02);
        assert_eq!(first(&jeffreys), Some(25));
        let mixed = |k: u32| ChangePoint::after(k, 0.95).unwrap().changed_mean();
        assert_eq!(first(&mixed), Some(5));
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
