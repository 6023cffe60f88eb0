//! [`Strategy`]: how the engine turns a posterior into the probability it acts on.

use core::fmt;

/// How the success probability of the next attempt is read from the posterior, and
/// whether the attempts after it count.
///
/// All three retry exactly when their expected value is positive; they differ in
/// the probability they put into it and in how far ahead they look. The posterior
/// of a context is the belief that the next attempt succeeds given the attempt
/// just made failed with that error class; `q_a` below is the probability that
/// attempt `a` succeeds, read from the context whose attempt is `a − 1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// The posterior mean: retry while `q · V − c > 0`. Deterministic, one store
    /// lookup, and the optimal one-step (myopic) rule under the posterior: the
    /// mean *is* the probability of success once the uncertainty about the rate is
    /// integrated out.
    #[default]
    Greedy,
    /// One draw from the posterior instead of its mean (Thompson sampling).
    ///
    /// A context whose posterior is wide is sometimes retried although its mean
    /// says stop, so a rule that stopped retrying a context on thin evidence keeps
    /// collecting the outcomes that could prove it wrong, in proportion to how
    /// plausible that is. As the evidence grows the draws concentrate on the mean
    /// and Thompson behaves like [`Greedy`](Strategy::Greedy).
    ///
    /// The randomness comes from the caller:
    /// [`decide_with_uniform`](crate::DecisionEngine::decide_with_uniform) takes a
    /// uniform `u` in (0, 1) and draws the posterior's `u`-quantile exactly (the
    /// inverse-cdf method), and, with the `rand` feature,
    /// `DecisionEngine::decide_with_rng` draws from a `rand_core::Rng`. Plain
    /// [`decide`](crate::DecisionEngine::decide) has no randomness to draw with and
    /// uses the mean, like `Greedy`.
    Thompson,
    /// The finite-horizon optimal-stopping recursion over the remaining attempts:
    ///
    /// ```text
    /// W_a = max(0, q_a · V − c + (1 − q_a) · W_{a+1}),    W_{max_attempts + 1} = 0
    /// ```
    ///
    /// `W_a` is what the call is still worth, at best, before attempt `a` is
    /// decided on: make it (pay `c`, win `V` with probability `q_a`, and on failure
    /// face the same choice at `a + 1`) or stop (worth 0). The engine retries when
    /// the first branch is positive for the next attempt, and reports that branch
    /// as the expected value.
    ///
    /// The myopic rule asks only whether the *next* attempt pays. A call whose next
    /// attempt is poor but whose later ones are good — the attempt after a
    /// Retry-After wait, or at the end of a short outage, where the posterior of a
    /// later attempt number has learned that calls recover — is abandoned by it;
    /// lookahead counts the later attempts and keeps going. Where no later attempt
    /// can pay, `W = 0` beyond the next attempt and lookahead decides exactly as
    /// [`Greedy`](Strategy::Greedy) does; it is never *less* willing to retry.
    ///
    /// The later attempts are assumed to fail with the current error class (the
    /// class of a future failure is unknown), and each `q_a` is its context's
    /// posterior mean. The horizon is the attempt cap, and at most 32 attempts
    /// from the next one on: a later attempt beyond that counts as worth nothing,
    /// which can only understate `W`. The deadline is not projected forward; it is
    /// checked for the next attempt, each time one is decided on.
    Lookahead,
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::Greedy => "greedy",
            Strategy::Thompson => "thompson",
            Strategy::Lookahead => "lookahead",
        })
    }
}
