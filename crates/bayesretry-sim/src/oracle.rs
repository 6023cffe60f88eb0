//! The oracles of §5: the DP oracle (finite-horizon recursion on the true
//! q), the myopic oracle (the one-step rule on the true q) and the clairvoyant
//! bound (knows the draws). All wait with B2's timing, and honour Retry-After
//! where the server sends it.

use crate::baseline::{full_jitter_us, honour_retry_after};
use crate::environment::Environment;
use crate::luck::PolicyStream;
use crate::rule::{CallState, Rule};

/// Which oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Oracle {
    /// `W_k = max(0, q_k·V − c + (1 − q_k)·W_{k+1})` on the true q.
    Dp,
    /// `q·V − c > 0` on the true q.
    Myopic,
    /// Knows the draws: retries only when an attempt the cap still allows will
    /// succeed (and so keeps retrying until it does).
    Clairvoyant,
}

impl Oracle {
    /// Every oracle.
    pub const ALL: [Oracle; 3] = [Oracle::Dp, Oracle::Myopic, Oracle::Clairvoyant];

    /// The id.
    pub const fn id(self) -> &'static str {
        match self {
            Oracle::Dp => "DP",
            Oracle::Myopic => "Myopic",
            Oracle::Clairvoyant => "Clairvoyant",
        }
    }

    /// The rule at success value `value` (attempt cost 1).
    pub fn rule(self, seed: u64, value: f64, max_attempts: u32) -> OracleRule {
        OracleRule {
            oracle: self,
            value,
            max_attempts,
            stream: PolicyStream::new(seed, self.id()),
            predicted: None,
        }
    }
}

/// An oracle, ready to run.
#[derive(Debug)]
pub struct OracleRule {
    oracle: Oracle,
    value: f64,
    max_attempts: u32,
    stream: PolicyStream,
    predicted: Option<f64>,
}

/// The value of the best continuation from a call whose next attempt is
/// attempt `next` (1-based) of `max_attempts`, with `qs(j)` the success
/// probability of the `j`th attempt from now: the recursion
/// `W_a = max(0, q_a·V − c + (1 − q_a)·W_{a+1})`, `W_{max+1} = 0`, returning the
/// value of making the next attempt (the first branch at `next`).
pub fn continuation_value(
    value: f64,
    next: u32,
    max_attempts: u32,
    qs: impl Fn(u32) -> f64,
) -> f64 {
    let remaining = max_attempts.saturating_sub(next.saturating_sub(1)).min(64);
    if remaining == 0 {
        return f64::NEG_INFINITY;
    }
    let mut w_next = 0.0;
    let mut go = 0.0;
    for j in (0..remaining).rev() {
        let q = qs(j);
        go = q * value - 1.0 + (1.0 - q) * w_next;
        w_next = go.max(0.0);
    }
    go
}

impl Rule for OracleRule {
    fn name(&self) -> &str {
        self.oracle.id()
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn retry(&mut self, env: &Environment, state: &mut CallState) -> Option<u64> {
        let jitter = full_jitter_us(&mut self.stream, state.attempts);
        let delay = honour_retry_after(jitter, state.last);
        let at = state.now_us.saturating_add(delay);
        let call = state.call;
        let next = state.attempts + 1;
        let retry = match self.oracle {
            Oracle::Clairvoyant => {
                // some attempt still allowed will succeed
                let ok =
                    (next..=self.max_attempts.min(64)).any(|a| env.would_succeed(&call, a, at));
                let first = env.would_succeed(&call, next, at);
                self.predicted = Some(if first { 1.0 } else { 0.0 });
                ok
            }
            Oracle::Myopic => {
                let q = env.true_q(&call, state.fail_weight, Some(state.last), at);
                self.predicted = Some(q);
                q * self.value - 1.0 > 0.0
            }
            Oracle::Dp => {
                let q0 = env.true_q(&call, state.fail_weight, Some(state.last), at);
                self.predicted = Some(q0);
                let factor = env.failure_factor(&call, at);
                let go = continuation_value(self.value, next, self.max_attempts, |j| {
                    // later attempts: the same time, j more informative failures
                    let w = state.fail_weight * factor.powi(i32::try_from(j).unwrap_or(64));
                    env.true_q(&call, w, Some(state.last), at)
                });
                go > 0.0
            }
        };
        retry.then_some(delay)
    }

    fn predicted(&self) -> Option<f64> {
        self.predicted
    }
}

#[cfg(test)]
mod tests {
    use super::continuation_value;

    #[test]
    fn the_recursion_matches_a_hand_computation() {
        // two attempts left, q = 0.5 then 0.2, V = 5: W_2 = max(0, 1 - 1) = 0,
        // go_1 = 2.5 - 1 + 0.5 * 0 = 1.5
        let qs = [0.5, 0.2];
        let go = continuation_value(5.0, 3, 4, |j| qs[j as usize]);
        assert!((go - 1.5).abs() < 1e-12, "{go}");
        // V = 10: W_2 = 1, go_1 = 5 - 1 + 0.5 = 4.5
        let go = continuation_value(10.0, 3, 4, |j| qs[j as usize]);
        assert!((go - 4.5).abs() < 1e-12, "{go}");
        // a later attempt worth making can make a poor next one worth it
        let qs = [0.05, 0.9];
        assert!(continuation_value(10.0, 3, 4, |j| qs[j as usize]) > 0.0);
    }
}
