//! A run of failures as evidence that the endpoint has changed: the
//! change-point view behind [`Situation::with_failure_run`].
//!
//! [`Situation::with_failure_run`]: crate::Situation::with_failure_run
//!
//! # Why
//!
//! A context's posterior learns what a retry after this kind of failure yields
//! *in the endpoint's usual state*, from the outcomes of such retries only. When
//! an outage begins, that posterior is the last to know: the first failures of a
//! new class have no history (a fresh context starts at the prior), and a class
//! seen before still carries the good news of its past retries. Meanwhile the
//! endpoint's breaker has seen every attempt, first tries included, fail in a
//! row. That run is the fastest evidence there is that something changed.
//!
//! # The model
//!
//! Take an endpoint whose usual success rate is `p₀` (the breaker's decayed
//! posterior mean) and which has failed `k` times in a row. Either nothing
//! changed and this is bad luck, with likelihood `(1 − p₀)^k`; or, with prior
//! probability [`CHANGE_HAZARD`] for a run, the endpoint changed when the run
//! began, to a success rate about which nothing is known beyond the run itself.
//! For that unknown rate the prior is Jeffreys' Beta(½, ½), the reference prior
//! for a proportion, whose mass sits near 0 and 1 — an endpoint that has just
//! changed is usually down or back, rarely half-way. Under it `k` failures have
//! probability `∏_{j<k} (½ + j) / (1 + j)`, and the next attempt succeeds with
//! probability `½ / (k + 1)`. Bayes' rule weighs the two:
//!
//! ```text
//! w = H·m_k / (H·m_k + (1 − H)·(1 − p₀)^k)
//! p = min(p_context, (1 − w) · p_context + w · ½ / (k + 1))
//! ```
//!
//! The minimum makes the run evidence *against* a retry only. The changed
//! regime's mean speaks of the endpoint's attempts as a whole; the context's
//! posterior may know better that this kind of failure is rarely cured by a
//! retry (a doomed request, a class whose retries fail), and a run of failures
//! does not make such a retry likelier.
//!
//! On a healthy endpoint (`p₀ = 0.95`) one failure moves nothing (`w ≈ 0.1`),
//! three make a change likely and five certain; at the default `V / c` of 10 the
//! retries stop after four or five failures in a row, first tries included,
//! instead of after about nine failed retries. On a flaky endpoint
//! (`p₀ = 0.5`) runs are ordinary and `w` stays small until they are long. A
//! success ends the run, and with it the adjustment.

/// The prior probability that a run of failures began with a change of the
/// endpoint's behaviour: one run in a hundred.
pub const CHANGE_HAZARD: f64 = 0.01;

/// Runs longer than this are read as this long: the weight of a change is 1 to
/// machine precision well before, and the loops below stay bounded.
const MAX_RUN: u32 = 1_000;

/// What a run of failures says about the next attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Change {
    /// The posterior probability that the endpoint changed when the run began.
    pub(crate) weight: f64,
    /// The run's length.
    failures: u32,
}

impl Change {
    /// The change-point posterior after `failures` in a row on an endpoint whose
    /// usual success rate is `usual`; `None` when there is no run or the rate is
    /// not a probability strictly between 0 and 1 (nothing to weigh it against).
    pub(crate) fn after(failures: u32, usual: f64) -> Option<Change> {
        if failures == 0 || !(usual > 0.0 && usual < 1.0) {
            return None;
        }
        let k = failures.min(MAX_RUN);
        let mut unchanged = 1.0 - CHANGE_HAZARD;
        let mut changed = CHANGE_HAZARD;
        for j in 0..k {
            unchanged *= 1.0 - usual;
            changed *= (0.5 + f64::from(j)) / (1.0 + f64::from(j));
        }
        // both terms are positive and finite (the first may underflow to 0,
        // which reads as a certain change)
        let weight = changed / (changed + unchanged);
        Some(Change {
            weight,
            failures: k,
        })
    }

    /// The success probability of the next attempt if the endpoint changed:
    /// the mean of Beta(½, ½ + k).
    pub(crate) fn changed_mean(&self) -> f64 {
        0.5 / (f64::from(self.failures) + 1.0)
    }

    /// `p` from the context's posterior, mixed with what a change would mean
    /// when that is lower: the run only ever lowers `p`.
    pub(crate) fn adjust(&self, p: f64) -> f64 {
        let changed = self.changed_mean();
        if changed < p {
            (1.0 - self.weight) * p + self.weight * changed
        } else {
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CHANGE_HAZARD, Change};

    #[test]
    fn no_run_or_no_usual_rate_means_no_change() {
        assert_eq!(Change::after(0, 0.95), None);
        assert_eq!(Change::after(3, f64::NAN), None);
        assert_eq!(Change::after(3, 1.0), None);
        assert_eq!(Change::after(3, 0.0), None);
    }

    #[test]
    fn the_weight_is_bayes_rule_on_known_cases() {
        // one failure at p0 = 0.95: H·½ / (H·½ + (1 − H)·0.05)
        let one = Change::after(1, 0.95).unwrap();
        let expected = CHANGE_HAZARD * 0.5 / (CHANGE_HAZARD * 0.5 + 0.99 * 0.05);
        assert!((one.weight - expected).abs() < 1e-15);
        assert!(one.weight < 0.1);
        // five in a row: a change is near certain, and the next attempt is
        // judged at ½ / 6
        let five = Change::after(5, 0.95).unwrap();
        assert!(five.weight > 0.99, "{}", five.weight);
        assert!((five.adjust(0.9) - 0.5 / 6.0).abs() < 0.01);
        // never raised: a retry the context already judges poor stays poor
        assert_eq!(five.adjust(0.01), 0.01);
    }

    #[test]
    fn runs_are_ordinary_on_a_flaky_endpoint() {
        let flaky = Change::after(3, 0.5).unwrap();
        let healthy = Change::after(3, 0.95).unwrap();
        assert!(flaky.weight < 0.1, "{}", flaky.weight);
        assert!(healthy.weight > 0.5, "{}", healthy.weight);
    }

    #[test]
    fn a_very_long_run_is_a_certain_change_and_stays_finite() {
        let long = Change::after(u32::MAX, 0.99).unwrap();
        assert_eq!(long.weight, 1.0);
        assert!(long.changed_mean() > 0.0);
        assert_eq!(Change::after(1_000, 0.99), Some(long));
    }
}
