//! [`RetryError`], how a call ends without a result, and [`Error`], a rejected
//! policy configuration.

use core::fmt;
use core::time::Duration;

use bayesretry_decision::Decision;

/// Why a call gave up. Every variant that follows a failed attempt carries that
/// attempt's error, so nothing the operation said is lost.
#[derive(Debug)]
#[non_exhaustive]
pub enum RetryError<E> {
    /// The policy decided that one more attempt is not worth it, or the attempt
    /// cap was reached; `decision` says which and why.
    Exhausted {
        /// The error of the last attempt.
        last_error: E,
        /// Attempts made.
        attempts: u32,
        /// The decision that stopped the call.
        decision: Decision,
    },
    /// The error was classified permanent: returned at once, never retried.
    Permanent(E),
    /// The breaker for the endpoint is open: no attempt was made.
    CircuitOpen {
        /// The endpoint.
        endpoint: String,
        /// How long until the breaker may admit a call again, if known.
        retry_after: Option<Duration>,
        /// The error of the attempt before, if one was made in this call.
        last_error: Option<E>,
    },
    /// The retry budget denied the retry.
    BudgetExhausted {
        /// The error of the last attempt, if one was made.
        last_error: Option<E>,
        /// Attempts made.
        attempts: u32,
    },
    /// The next attempt could not start before the deadline (`max_elapsed`).
    DeadlineExceeded {
        /// The error of the last attempt.
        last_error: E,
        /// Attempts made.
        attempts: u32,
    },
    /// A `should_retry` hook declined the retry.
    Stopped {
        /// The error of the last attempt.
        last_error: E,
        /// Attempts made.
        attempts: u32,
    },
    /// The last attempt ran out of its per-attempt timeout
    /// ([`Builder::with_attempt_timeout`](crate::Builder::with_attempt_timeout))
    /// and no retry followed. A timed-out attempt has no error of its own, so this
    /// stands in for [`Exhausted`](RetryError::Exhausted),
    /// [`DeadlineExceeded`](RetryError::DeadlineExceeded) and
    /// [`Stopped`](RetryError::Stopped) when the last attempt timed out:
    /// `decision` says why the policy stopped, or, with `vetoed`, that it would
    /// have retried and a `should_retry` hook declined. (A budget or a breaker
    /// that stops the call after a timeout is reported by its own variant, with
    /// no last error.)
    AttemptTimedOut {
        /// The per-attempt timeout the last attempt ran out of.
        timeout: Duration,
        /// Attempts made.
        attempts: u32,
        /// The policy's decision after the timed-out attempt.
        decision: Decision,
        /// Whether a `should_retry` hook declined a retry the policy would make.
        vetoed: bool,
    },
    /// A [`CancelToken`](crate::CancelToken) ended the call.
    Cancelled {
        /// The reason given to [`cancel`](crate::CancelToken::cancel).
        reason: String,
        /// The error of the last attempt, if one was made.
        last_error: Option<E>,
    },
}

impl<E> RetryError<E> {
    /// The error of the last attempt, if an attempt was made.
    pub fn last_error(&self) -> Option<&E> {
        match self {
            RetryError::Exhausted { last_error, .. }
            | RetryError::DeadlineExceeded { last_error, .. }
            | RetryError::Stopped { last_error, .. }
            | RetryError::Permanent(last_error) => Some(last_error),
            RetryError::CircuitOpen { last_error, .. }
            | RetryError::BudgetExhausted { last_error, .. }
            | RetryError::Cancelled { last_error, .. } => last_error.as_ref(),
            RetryError::AttemptTimedOut { .. } => None,
        }
    }

    /// The error of the last attempt, if an attempt was made, by value.
    pub fn into_last_error(self) -> Option<E> {
        match self {
            RetryError::Exhausted { last_error, .. }
            | RetryError::DeadlineExceeded { last_error, .. }
            | RetryError::Stopped { last_error, .. }
            | RetryError::Permanent(last_error) => Some(last_error),
            RetryError::CircuitOpen { last_error, .. }
            | RetryError::BudgetExhausted { last_error, .. }
            | RetryError::Cancelled { last_error, .. } => last_error,
            RetryError::AttemptTimedOut { .. } => None,
        }
    }
}

/// Writes `: <error>` when there is one.
struct Last<'a, E>(Option<&'a E>);

impl<E: fmt::Display> fmt::Display for Last<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(err) => write!(f, "; last error: {err}"),
            None => Ok(()),
        }
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryError::Exhausted {
                last_error,
                attempts,
                decision,
            } => write!(
                f,
                "gave up after {attempts} attempt(s) ({decision}); last error: {last_error}"
            ),
            RetryError::Permanent(err) => write!(f, "permanent error, not retried: {err}"),
            RetryError::CircuitOpen {
                endpoint,
                retry_after,
                last_error,
            } => {
                write!(f, "circuit open for endpoint `{endpoint}`, no attempt made")?;
                if let Some(wait) = retry_after {
                    write!(f, " (may admit a call in {} ms)", wait.as_millis())?;
                }
                write!(f, "{}", Last(last_error.as_ref()))
            }
            RetryError::BudgetExhausted {
                last_error,
                attempts,
            } => write!(
                f,
                "retry budget exhausted after {attempts} attempt(s){}",
                Last(last_error.as_ref())
            ),
            RetryError::DeadlineExceeded {
                last_error,
                attempts,
            } => write!(
                f,
                "deadline reached after {attempts} attempt(s); last error: {last_error}"
            ),
            RetryError::Stopped {
                last_error,
                attempts,
            } => write!(
                f,
                "retry declined by the should_retry hook after {attempts} attempt(s); \
                 last error: {last_error}"
            ),
            RetryError::AttemptTimedOut {
                timeout,
                attempts,
                decision,
                vetoed,
            } => {
                write!(
                    f,
                    "attempt {attempts} timed out after {} ms and was not retried",
                    timeout.as_millis()
                )?;
                if *vetoed {
                    write!(f, " (declined by the should_retry hook)")
                } else {
                    write!(f, " ({decision})")
                }
            }
            RetryError::Cancelled { reason, last_error } => {
                write!(f, "cancelled: {reason}{}", Last(last_error.as_ref()))
            }
        }
    }
}

impl<E: core::error::Error + 'static> core::error::Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.last_error()
            .map(|err| err as &(dyn core::error::Error + 'static))
    }
}

/// A policy configuration that [`Builder::build`](crate::Builder::build) rejected.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The attempt cap must be at least 1.
    InvalidMaxAttempts(u32),
    /// The backoff config was rejected.
    Backoff(bayesretry_backoff::Error),
    /// The breaker config was rejected.
    Breaker(bayesretry_breaker::Error),
    /// The store config was rejected.
    Store(bayesretry_store::Error),
    /// The decision engine's config was rejected.
    Decision(bayesretry_decision::Error),
    /// The cost model was rejected.
    Cost(bayesretry_cost::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidMaxAttempts(n) => write!(f, "max attempts must be >= 1, got {n}"),
            Error::Backoff(err) => write!(f, "invalid backoff: {err}"),
            Error::Breaker(err) => write!(f, "invalid breaker: {err}"),
            Error::Store(err) => write!(f, "invalid store: {err}"),
            Error::Decision(err) => write!(f, "invalid decision engine: {err}"),
            Error::Cost(err) => write!(f, "invalid cost model: {err}"),
        }
    }
}

impl core::error::Error for Error {}
