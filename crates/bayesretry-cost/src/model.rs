//! [`CostModel`] and the expected value of one more attempt.

use core::fmt;

use crate::error::Error;

/// What a success is worth and what one attempt costs, in the caller's units.
///
/// The units are yours: dollars, cents, tokens, milliseconds of a latency budget,
/// anything, as long as both figures use the same one. Only the ratio of the two
/// matters to every retry decision, because the expected value of an attempt,
/// `p · V − c`, is positive exactly when `p > c / V`: doubling both figures, or
/// restating them from dollars in cents, changes no decision.
///
/// - `success_value` (`V`, finite and > 0): what the caller gains when an attempt
///   succeeds — the value of the answer, or what failing the whole request would
///   cost.
/// - `attempt_cost` (`c`, finite and ≥ 0): the marginal cost of one more attempt —
///   tokens billed, quota consumed, load put on a struggling server, time spent.
///   Attempts already made are sunk and do not count.
///
/// ```
/// use bayesretry_cost::{CostModel, expected_value_of_retry};
///
/// // An LLM call worth 50 cents; each attempt costs 1 cent.
/// let model = CostModel::new(50.0, 1.0)?;
/// assert_eq!(model.break_even_probability(), 0.02);
/// assert!(expected_value_of_retry(0.10, &model) > 0.0); // worth about 4 cents: retry
/// assert!(expected_value_of_retry(0.01, &model) < 0.0); // worth less than nothing: stop
/// # Ok::<(), bayesretry_cost::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq)]
pub struct CostModel {
    success_value: f64,
    attempt_cost: f64,
    /// `attempt_cost / success_value`, worked out once: every learning
    /// decision compares its probability with it, and a division is among
    /// the slowest instructions a decision runs. The same quotient as
    /// dividing at each decision, so no decision changes.
    break_even: f64,
}

impl CostModel {
    /// A cost model with success value `V` and attempt cost `c`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSuccessValue`] unless `success_value` is finite and greater
    /// than zero; [`Error::InvalidAttemptCost`] unless `attempt_cost` is finite and
    /// at least zero. NaN is rejected for both.
    ///
    /// ```
    /// use bayesretry_cost::{CostModel, Error};
    /// assert_eq!(CostModel::new(0.0, 1.0), Err(Error::InvalidSuccessValue(0.0)));
    /// assert_eq!(
    ///     CostModel::new(1.0, -0.5).unwrap_err().to_string(),
    ///     "attempt cost must be finite and >= 0, got -0.5",
    /// );
    /// assert!(CostModel::new(1.0, f64::NAN).is_err());
    /// ```
    pub const fn new(success_value: f64, attempt_cost: f64) -> Result<CostModel, Error> {
        if !(success_value > 0.0 && success_value < f64::INFINITY) {
            return Err(Error::InvalidSuccessValue(success_value));
        }
        if !(attempt_cost >= 0.0 && attempt_cost < f64::INFINITY) {
            return Err(Error::InvalidAttemptCost(attempt_cost));
        }
        // turns -0.0 into +0.0, so a free attempt prints and compares as 0
        let attempt_cost = attempt_cost + 0.0;
        Ok(CostModel {
            success_value,
            attempt_cost,
            break_even: attempt_cost / success_value,
        })
    }

    /// `V`, what a success is worth.
    pub const fn success_value(&self) -> f64 {
        self.success_value
    }

    /// `c`, what one more attempt costs.
    pub const fn attempt_cost(&self) -> f64 {
        self.attempt_cost
    }

    /// `c / V`: the success probability at which one more attempt breaks even.
    /// Above it a retry is worth making; at or below it, not. It may exceed 1
    /// (an attempt costs more than a success is worth: never retry), and it is 0
    /// for free attempts (retry while any chance remains).
    ///
    /// ```
    /// use bayesretry_cost::CostModel;
    /// // the same decision in dollars and in cents
    /// assert_eq!(CostModel::new(0.50, 0.01)?.break_even_probability(), 0.02);
    /// assert_eq!(CostModel::new(50.0, 1.0)?.break_even_probability(), 0.02);
    /// # Ok::<(), bayesretry_cost::Error>(())
    /// ```
    #[inline]
    pub const fn break_even_probability(&self) -> f64 {
        self.break_even
    }

    /// Whether one more attempt with success probability `p` is worth making:
    /// `expected_value_of_retry(p, self) > 0`, which is `p > c / V`. False for a
    /// `p` that is NaN or outside [0, 1].
    pub fn retry_pays(&self, p: f64) -> bool {
        expected_value_of_retry(p, self) > 0.0
    }
}

impl fmt::Debug for CostModel {
    /// The two figures the model is made of; the break-even probability
    /// follows from them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CostModel")
            .field("success_value", &self.success_value)
            .field("attempt_cost", &self.attempt_cost)
            .finish()
    }
}

/// The expected value of one more attempt, `p · V − c`, for the probability `p`
/// that it succeeds. Positive means the attempt is worth making.
///
/// It is evaluated as `(p − c/V) · V`, which is `p · V − c` up to rounding and
/// has its sign decided exactly by `p` against
/// [`break_even_probability`](CostModel::break_even_probability): negative below it,
/// zero at it, positive above it, for every valid model and every `p`. (Evaluated
/// as written, `p · V − c` can round to the wrong sign for a `p` one unit in the
/// last place from the break-even point.) The result is in the model's units.
///
/// A `p` outside [0, 1], or NaN, gives NaN, and NaN is never `> 0.0`: a
/// malformed probability never causes a retry.
///
/// ```
/// use bayesretry_cost::{CostModel, expected_value_of_retry};
/// let model = CostModel::new(50.0, 1.0)?; // cents
/// assert!((expected_value_of_retry(0.5, &model) - 24.0).abs() < 1e-12);
/// assert_eq!(expected_value_of_retry(0.02, &model), 0.0);
/// assert!(expected_value_of_retry(1.5, &model).is_nan());
/// # Ok::<(), bayesretry_cost::Error>(())
/// ```
// Inlinable across crates: every learning decision ends here, and as a call
// from the decision crate it cost the run loop's failure a call and its spills.
#[inline]
pub fn expected_value_of_retry(p: f64, model: &CostModel) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    let value = model.success_value;
    let break_even = model.break_even_probability();
    if !(break_even < f64::INFINITY) {
        // c/V overflowed (a tiny value, a huge cost): p · V − c is certainly
        // negative, and finite where the product form is not.
        return p * value - model.attempt_cost;
    }
    // exact sign: a float difference is zero only for equal operands
    let margin = p - break_even;
    let ev = margin * value;
    if ev == 0.0 && margin != 0.0 {
        // a subnormal margin times a tiny value underflowed: keep its sign
        return if margin > 0.0 {
            f64::from_bits(1)
        } else {
            -f64::from_bits(1)
        };
    }
    ev
}
