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

use crate::beta::Beta;

/// The prior probability that a run of failures began with a change of the
/// endpoint's behaviour: one run in a hundred.
pub const CHANGE_HAZARD: f64 = 0.01;

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
        if failures == 0 || !(usual > 0.0 && usual < 1.0) {
            return None;
        }
        let k = failures.min(MAX_RUN);
        let mut unchanged = 1.0 - CHANGE_HAZARD;
        let mut changed = CHANGE_HAZARD;
        // bounded by MAX_RUN
        for j in 0..k {
            unchanged *= 1.0 - usual;
            changed *= (0.5 + f64::from(j)) / (1.0 + f64::from(j));
        }
        // both terms are positive and finite (the first may underflow to 0,
        // which reads as a certain change)
        Some(ChangePoint {
            weight: changed / (changed + unchanged),
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
    use super::{CHANGE_HAZARD, ChangePoint};

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
