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
//! The run is weighed by [`bayesretry_beta::ChangePoint`]: bad luck at the
//! endpoint's usual rate `p₀` (its breaker's success rate before the run: the
//! posterior mean just before the run's first failure) against a
//! change when the run began, either down (a rate of 0) or to a rate with
//! Jeffreys' prior, Beta(½, ½ + k) after the run, even odds a priori
//! ([`DOWN_SHARE`]). The prior probability of the change is the situation's
//! [`change_hazard`](crate::Situation::change_hazard): [`CHANGE_HAZARD`] unless
//! the caller gives the hazard its breaker reckons from the rate of runs. With
//! `w` the weight of a change and `down` the share of it that is "down", the
//! decision reads
//!
//! ```text
//! p = min(p_context, (1 − w) · p_context + w · (1 − down) · ½ / (k + 1))
//! ```
//!
//! `p₀` is the rate before the run, and stays so as the run grows: the
//! likelihood of "nothing changed", `(1 − p₀)^k`, is that of `k` failures at
//! the rate the endpoint had when they began. A `p₀` that held the run's own
//! failures would be lowered by them and read the run as bad luck the more
//! of it there is (on an endpoint with three successes of evidence, six
//! failures would weigh as a change 0.085 instead of 0.99). The lookahead,
//! which lengthens the run by one per further failure, keeps the same `p₀`
//! for the same reason. What "nothing changed" predicts is the context's own
//! posterior, failures and all: given no change they are evidence about the
//! same rate.
//!
//! The minimum makes the run evidence *against* a retry only. The changed
//! regime's mean speaks of the endpoint's attempts as a whole; the context's
//! posterior may know better that this kind of failure is rarely cured by a
//! retry (a doomed request, a class whose retries fail), and a run of failures
//! does not make such a retry likelier.
//!
//! At the default `V / c` of 10 on a healthy endpoint the retries stop after
//! three failures in a row at `p₀ = 0.95` (two from `p₀ = 0.98` up), first
//! tries included, instead of after about nine failed retries; at `V / c` 50,
//! after five (Jeffreys' prior alone, without the point at 0, took 25). A
//! success ends the run, and with it the adjustment.

use bayesretry_beta::ChangePoint;
pub use bayesretry_beta::{CHANGE_HAZARD, DOWN_SHARE};

/// `p` from the context's posterior, mixed with what the change `run` reads
/// would mean when that is lower: the run only ever lowers `p`.
pub(crate) fn lowered(run: &ChangePoint, p: f64) -> f64 {
    let changed = run.changed_mean();
    if changed < p {
        let weight = run.weight();
        (1.0 - weight) * p + weight * changed
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use bayesretry_beta::ChangePoint;

    use super::lowered;

    #[test]
    fn no_run_or_no_usual_rate_means_no_change() {
        assert_eq!(ChangePoint::after(0, 0.95), None);
        assert_eq!(ChangePoint::after(3, f64::NAN), None);
    }

    #[test]
    fn a_run_only_ever_lowers_the_probability() {
        // one failure on a healthy endpoint barely moves a good retry
        let one = ChangePoint::after(1, 0.95).unwrap();
        assert!(lowered(&one, 0.9) > 0.75);
        // five in a row: a change is near certain, most likely to "down", and
        // the next attempt is judged at about (1 − down)·½ / 6
        let five = ChangePoint::after(5, 0.95).unwrap();
        assert!(five.down() > 0.8);
        assert!((lowered(&five, 0.9) - (1.0 - five.down()) * 0.5 / 6.0).abs() < 0.001);
        // never raised: a retry the context already judges poor stays poor
        assert_eq!(lowered(&five, 0.01), 0.01);
    }
}
