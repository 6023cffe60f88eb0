//! [`Decision`] and its [`Reason`].

use core::fmt;

/// Why a [`Decision`] came out as it did: the first check of the
/// [decision order](crate#the-order-of-checks) that stopped the retry, or the sign
/// of the expected value when none did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Every check passed and one more attempt is worth more than it costs: retry.
    PositiveExpectedValue,
    /// Every check passed, but one more attempt is worth no more than it costs
    /// (negative, or zero at the break-even point): stop.
    NegativeExpectedValue,
    /// The attempts made have reached `max_attempts`.
    MaxAttempts,
    /// The deadline has passed, or the next attempt could not start before it once
    /// the planned delay has elapsed (the server's Retry-After, if it asked for
    /// a longer wait, would not start it in time either).
    Deadline,
    /// The circuit breaker is open: the endpoint is down.
    CircuitOpen,
    /// The retry budget has nothing left for this retry.
    BudgetExhausted,
    /// The error is permanent: no attempt can succeed (bad request, failed
    /// authentication, a programming error).
    PermanentError,
    /// The server asked for a longer wait (Retry-After) than the caller allows.
    RetryAfterBeyondLimit,
    /// The planned delay would have let the next attempt start before the
    /// deadline, but the server asked for a longer wait (Retry-After), which
    /// would not: the server's wait, not the caller's backoff, ends the call.
    RetryAfterPastDeadline,
    /// Every hard check passed and the caller retries on a fixed count, without
    /// reading a posterior (classic mode): retry. See [`Decision::retry_fixed`].
    Fixed,
    /// The engine would have retried, but the caller's own veto (the run loop's
    /// `should_retry` hook) stopped it. The engine never gives this reason; the
    /// run loop reports it, so an observer or an audit log sees the stop that
    /// really happened.
    Vetoed,
}

impl Reason {
    /// Whether the decision was made by the expected value, after every hard
    /// check passed ([`PositiveExpectedValue`](Reason::PositiveExpectedValue) or
    /// [`NegativeExpectedValue`](Reason::NegativeExpectedValue)), rather than by a
    /// hard check.
    pub const fn is_expected_value(&self) -> bool {
        matches!(
            self,
            Reason::PositiveExpectedValue | Reason::NegativeExpectedValue
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::PositiveExpectedValue => "positive expected value",
            Reason::NegativeExpectedValue => "expected value not positive",
            Reason::MaxAttempts => "attempt cap reached",
            Reason::Deadline => "next attempt cannot start before the deadline",
            Reason::CircuitOpen => "circuit open",
            Reason::BudgetExhausted => "retry budget exhausted",
            Reason::PermanentError => "permanent error",
            Reason::RetryAfterBeyondLimit => "retry-after beyond limit",
            Reason::RetryAfterPastDeadline => "retry-after past the deadline",
            Reason::Fixed => "fixed count, every check passed",
            Reason::Vetoed => "vetoed by the caller",
        })
    }
}

/// The answer to "one more attempt?": whether to retry, the numbers behind it, and
/// the [`Reason`].
///
/// - [`probability`](Decision::probability): the success probability of the next
///   attempt the engine acted on — the posterior mean, or a Thompson draw.
/// - [`expected_value`](Decision::expected_value): the expected value of retrying,
///   in the cost model's units — `p · V − c`, or with
///   [`Lookahead`](crate::Strategy::Lookahead) that plus what the later attempts
///   are worth. `retry` is exactly `expected_value > 0` when the reason is an
///   expected value.
///
/// When a hard check stops the retry, the store is not read at all (the answer is
/// certain without it), and both numbers are `0.0`: no attempt will be made, so
/// none can succeed and none is paid for. A fixed-count retry
/// ([`Decision::retry_fixed`]) reads no store either and carries `0.0` too. They
/// are never NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
#[must_use]
pub struct Decision {
    retry: bool,
    probability: f64,
    expected_value: f64,
    reason: Reason,
}

impl Decision {
    /// A decision to stop for `reason`, made without reading a posterior:
    /// [`probability`](Decision::probability) and
    /// [`expected_value`](Decision::expected_value) are both `0.0`, as for every
    /// hard check.
    ///
    /// The engine makes these itself; the constructor is public for a caller
    /// that stops on its own account — a run loop past its hard cap on attempts,
    /// a budget that refused the retry the engine approved — and wants to report
    /// the stop as a `Decision` like any other. A `reason` that is an expected
    /// value ([`Reason::is_expected_value`]) is taken as given: the decision still
    /// says stop, with both numbers `0.0`.
    ///
    /// ```
    /// use bayesretry_decision::{Decision, Reason};
    ///
    /// let stop = Decision::stop(Reason::BudgetExhausted);
    /// assert!(!stop.retry());
    /// assert_eq!(stop.reason(), Reason::BudgetExhausted);
    /// assert_eq!((stop.probability(), stop.expected_value()), (0.0, 0.0));
    /// ```
    pub const fn stop(reason: Reason) -> Decision {
        Decision {
            retry: false,
            probability: 0.0,
            expected_value: 0.0,
            reason,
        }
    }

    /// A decision to retry on a fixed count, made without reading a posterior:
    /// the [`Reason`] is [`Reason::Fixed`], and
    /// [`probability`](Decision::probability) and
    /// [`expected_value`](Decision::expected_value) are both `0.0` — not a
    /// belief that the retry fails, but no belief at all: none was consulted.
    ///
    /// For a caller in classic mode ("retry three times"), which runs the hard
    /// checks — [`DecisionEngine::hard_stop`](crate::DecisionEngine::hard_stop),
    /// or all of it with [`DecisionEngine::decide_fixed`](crate::DecisionEngine::decide_fixed)
    /// — and retries whenever none stops it. Reporting that as a `Decision` keeps
    /// one type for every verdict an observer or a log sees, and the reason tells
    /// a fixed retry from one the expected value chose.
    ///
    /// ```
    /// use bayesretry_decision::{Decision, Reason};
    ///
    /// let retry = Decision::retry_fixed();
    /// assert!(retry.retry());
    /// assert_eq!(retry.reason(), Reason::Fixed);
    /// assert!(!retry.reason().is_expected_value());
    /// assert_eq!((retry.probability(), retry.expected_value()), (0.0, 0.0));
    /// ```
    pub const fn retry_fixed() -> Decision {
        Decision {
            retry: true,
            probability: 0.0,
            expected_value: 0.0,
            reason: Reason::Fixed,
        }
    }

    /// Every hard check passed: the sign of the expected value decides. NaN (which
    /// no valid posterior produces) reads as "not positive".
    pub(crate) fn from_expected_value(probability: f64, expected_value: f64) -> Decision {
        let retry = expected_value > 0.0;
        Decision {
            retry,
            probability,
            expected_value,
            reason: if retry {
                Reason::PositiveExpectedValue
            } else {
                Reason::NegativeExpectedValue
            },
        }
    }

    /// Whether to make one more attempt.
    pub const fn retry(&self) -> bool {
        self.retry
    }

    /// The success probability of the next attempt that the decision rests on;
    /// `0.0` when a hard check stopped the retry.
    pub const fn probability(&self) -> f64 {
        self.probability
    }

    /// The expected value of retrying, in the cost model's units; `0.0` when a hard
    /// check stopped the retry.
    pub const fn expected_value(&self) -> f64 {
        self.expected_value
    }

    /// Why.
    pub const fn reason(&self) -> Reason {
        self.reason
    }
}

/// A decision as a person reads it: the verdict, the reason, and for a decision
/// on expected value its two numbers, to four significant figures below 1 and
/// three decimals from 1 up (the exact
/// values are [`probability`](Decision::probability) and
/// [`expected_value`](Decision::expected_value)), as in
/// `stop: expected value not positive; p = 0.09458, expected value = -0.05415`.
impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.retry { "retry" } else { "stop" };
        if self.reason.is_expected_value() {
            write!(
                f,
                "{verdict}: {}; p = {}, expected value = {}",
                self.reason,
                Figures(self.probability),
                Figures(self.expected_value)
            )
        } else {
            write!(f, "{verdict}: {}", self.reason)
        }
    }
}

/// A number to four significant figures below 1 in magnitude (in scientific
/// notation below 0.0001), to three decimals from 1 up: enough to read a
/// decision by, without the seventeen digits of an exact `f64`.
struct Figures(f64);

impl fmt::Display for Figures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if !x.is_finite() || x == 0.0 {
            return write!(f, "{x}");
        }
        let mut magnitude = x.abs();
        if magnitude < 1e-4 {
            return write!(f, "{x:.3e}");
        }
        let mut decimals = 3_usize;
        // at most four steps: the magnitude is at least 1e-4
        while magnitude < 1.0 && decimals < 7 {
            magnitude *= 10.0;
            decimals += 1;
        }
        write!(f, "{x:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::string::ToString;

    use super::{Decision, Reason};

    fn on_value(retry: bool, probability: f64, expected_value: f64) -> Decision {
        let reason = if retry {
            Reason::PositiveExpectedValue
        } else {
            Reason::NegativeExpectedValue
        };
        Decision {
            retry,
            probability,
            expected_value,
            reason,
        }
    }

    #[test]
    fn a_decision_reads_with_four_significant_figures() {
        assert_eq!(
            on_value(false, 0.094_584_804_631_204_15, -0.054_151_953_687_958_526).to_string(),
            "stop: expected value not positive; p = 0.09458, expected value = -0.05415"
        );
        assert_eq!(
            on_value(true, 0.5, 4.0).to_string(),
            "retry: positive expected value; p = 0.5000, expected value = 4.000"
        );
        assert_eq!(
            on_value(true, 0.9, 1_234.567_89).to_string(),
            "retry: positive expected value; p = 0.9000, expected value = 1234.568"
        );
        // the hard checks carry no numbers
        assert_eq!(
            Decision::stop(Reason::MaxAttempts).to_string(),
            "stop: attempt cap reached"
        );
    }

    #[test]
    fn a_tiny_or_odd_number_still_prints() {
        assert_eq!(
            on_value(false, 1e-30, -1.0).to_string(),
            "stop: expected value not positive; p = 1.000e-30, expected value = -1.000"
        );
        assert_eq!(
            on_value(false, 0.0, f64::NEG_INFINITY).to_string(),
            "stop: expected value not positive; p = 0, expected value = -inf"
        );
    }
}
