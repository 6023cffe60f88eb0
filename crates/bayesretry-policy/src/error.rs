//! [`RetryError`], how a call ends without a result (and [`RetryErrorKind`],
//! its view to match on), and [`Error`], a rejected policy configuration.

use core::fmt;
use core::time::Duration;

use bayesretry_decision::{Decision, Reason};

use crate::readable::ReadableDuration;

/// Why a call gave up: what happened is its [`kind`](RetryError::kind), and
/// every kind that follows a failed attempt carries that attempt's error, so
/// nothing the operation said is lost.
///
/// ```
/// use bayesretry_policy::{HttpStatus, RetryErrorKind, RetryPolicy};
///
/// let policy = RetryPolicy::fixed(3);
/// let err = policy
///     .run_blocking("provider", |_| Err::<(), _>(HttpStatus(401)))
///     .unwrap_err();
/// // match on what happened, by reference...
/// assert!(matches!(err.kind(), RetryErrorKind::Permanent(HttpStatus(401))));
/// // ...or take the attempt's own error back
/// assert_eq!(err.into_last_error(), Some(HttpStatus(401)));
/// ```
///
/// # Why a box
///
/// Nearly every call succeeds, and a call's result is `Result<T, RetryError<E>>`:
/// its size is what every caller moves, on every call, and what decides whether
/// it comes back in registers or through memory. What a call that gave up
/// carries is large — the decision that stopped it, the endpoint's name, a
/// cancellation's reason, the operation's own error `E`, of any size — and an
/// enum of it inline made the result 48 bytes for a two-byte `E`, returned
/// through the stack and read back across narrow stores, which cost an async
/// call that succeeded more than twice what the rest of it costs. So the error
/// is one pointer to a [`RetryErrorKind`] in a box, as `std::io::Error` and
/// `reqwest::Error` keep theirs: the result is the size of `T` plus a pointer
/// whatever `E` is (16 bytes for a `u32`, 8 for `()`), and the allocation is
/// made only by a call that gives up, which has failed at least once or found
/// its endpoint's breaker open. [`kind`](RetryError::kind) and
/// [`into_kind`](RetryError::into_kind) give the enum back to match on.
pub struct RetryError<E> {
    kind: Box<RetryErrorKind<E>>,
}

/// What ended a call without a result, with everything it left: the view of a
/// [`RetryError`] to match on.
#[derive(Debug)]
#[non_exhaustive]
pub enum RetryErrorKind<E> {
    /// The policy decided that one more attempt is not worth it, or the attempt
    /// cap was reached; `decision` says which and why.
    Exhausted {
        /// The error of the last attempt.
        last_error: E,
        /// Attempts made.
        attempts: u32,
        /// The decision that stopped the call.
        decision: Decision,
        /// The wait the server asked for with the last failure (Retry-After),
        /// if it asked: with [`Reason::RetryAfterBeyondLimit`](crate::Reason::RetryAfterBeyondLimit),
        /// the wait the policy would not make.
        retry_after: Option<Duration>,
    },
    /// The error was classified permanent: returned at once, never retried.
    Permanent(E),
    /// The breaker for the endpoint is open: no attempt was made.
    CircuitOpen {
        /// The endpoint.
        endpoint: String,
        /// How long until the breaker may admit a call again, if known.
        retry_after: Option<Duration>,
        /// The error of the attempt before, if one was made in this call
        /// (an attempt cut off by the per-attempt timeout leaves none).
        last_error: Option<E>,
        /// Attempts made before the breaker refused the next one: 0 when it
        /// refused the call's first.
        attempts: u32,
    },
    /// A server's Retry-After holds the endpoint: it asked a call of the
    /// policy to wait, and the wait has not run out, so no attempt was made
    /// ([`Builder::without_server_hold`](crate::Builder::without_server_hold)).
    ServerHold {
        /// The endpoint.
        endpoint: String,
        /// How long the hold has still to run.
        retry_after: Duration,
        /// The error of the attempt before, if one was made in this call.
        last_error: Option<E>,
        /// Attempts made before the hold refused the next one: 0 when it
        /// refused the call's first.
        attempts: u32,
    },
    /// The retry budget denied the retry.
    BudgetExhausted {
        /// The error of the last attempt, if one was made.
        last_error: Option<E>,
        /// Attempts made.
        attempts: u32,
    },
    /// The next attempt could not start before the deadline (`max_elapsed`):
    /// `decision`'s reason is [`Reason::Deadline`](crate::Reason::Deadline), or
    /// [`Reason::RetryAfterPastDeadline`](crate::Reason::RetryAfterPastDeadline)
    /// when the planned delay would have started it in time and the server's
    /// longer Retry-After would not.
    DeadlineExceeded {
        /// The error of the last attempt.
        last_error: E,
        /// Attempts made.
        attempts: u32,
        /// The decision that stopped the call.
        decision: Decision,
        /// The wait the server asked for with the last failure (Retry-After),
        /// if it asked.
        retry_after: Option<Duration>,
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
    /// stands in for [`Exhausted`](RetryErrorKind::Exhausted),
    /// [`DeadlineExceeded`](RetryErrorKind::DeadlineExceeded) and
    /// [`Stopped`](RetryErrorKind::Stopped) when the last attempt timed out:
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
        /// The error of the last attempt, if one was made, or of the attempt
        /// that stopped unsent for the cancellation
        /// ([`Call::cancelled_before_sending`](crate::Call::cancelled_before_sending)).
        last_error: Option<E>,
    },
}

impl<E> RetryError<E> {
    /// What ended the call, to match on.
    #[inline]
    pub fn kind(&self) -> &RetryErrorKind<E> {
        &self.kind
    }

    /// What ended the call, by value: to take its parts.
    #[inline]
    pub fn into_kind(self) -> RetryErrorKind<E> {
        *self.kind
    }

    /// The error of the last attempt, if an attempt was made.
    #[inline]
    pub fn last_error(&self) -> Option<&E> {
        self.kind.last_error()
    }

    /// The error of the last attempt, if an attempt was made, by value.
    #[inline]
    pub fn into_last_error(self) -> Option<E> {
        self.into_kind().into_last_error()
    }

    /// How long until another call is worth making, as far as this one
    /// learned: see [`RetryErrorKind::retry_after`].
    #[inline]
    pub fn retry_after(&self) -> Option<Duration> {
        self.kind.retry_after()
    }
}

impl<E> From<RetryErrorKind<E>> for RetryError<E> {
    /// Boxes `kind`. Out of line and cold: only a call that gives up makes one.
    #[cold]
    #[inline(never)]
    fn from(kind: RetryErrorKind<E>) -> Self {
        RetryError {
            kind: Box::new(kind),
        }
    }
}

impl<E> RetryErrorKind<E> {
    /// The error of the last attempt, if an attempt was made.
    pub fn last_error(&self) -> Option<&E> {
        match self {
            RetryErrorKind::Exhausted { last_error, .. }
            | RetryErrorKind::DeadlineExceeded { last_error, .. }
            | RetryErrorKind::Stopped { last_error, .. }
            | RetryErrorKind::Permanent(last_error) => Some(last_error),
            RetryErrorKind::CircuitOpen { last_error, .. }
            | RetryErrorKind::ServerHold { last_error, .. }
            | RetryErrorKind::BudgetExhausted { last_error, .. }
            | RetryErrorKind::Cancelled { last_error, .. } => last_error.as_ref(),
            RetryErrorKind::AttemptTimedOut { .. } => None,
        }
    }

    /// The error of the last attempt, if an attempt was made, by value.
    pub fn into_last_error(self) -> Option<E> {
        match self {
            RetryErrorKind::Exhausted { last_error, .. }
            | RetryErrorKind::DeadlineExceeded { last_error, .. }
            | RetryErrorKind::Stopped { last_error, .. }
            | RetryErrorKind::Permanent(last_error) => Some(last_error),
            RetryErrorKind::CircuitOpen { last_error, .. }
            | RetryErrorKind::ServerHold { last_error, .. }
            | RetryErrorKind::BudgetExhausted { last_error, .. }
            | RetryErrorKind::Cancelled { last_error, .. } => last_error,
            RetryErrorKind::AttemptTimedOut { .. } => None,
        }
    }

    /// How long until another call is worth making, as far as this one
    /// learned: the wait the server asked for (Retry-After) with the failure
    /// the call gave up after ([`Exhausted`](RetryErrorKind::Exhausted),
    /// [`DeadlineExceeded`](RetryErrorKind::DeadlineExceeded)), or how long
    /// until the open breaker may admit a call
    /// ([`CircuitOpen`](RetryErrorKind::CircuitOpen)), or until a server's
    /// hold on the endpoint runs out ([`ServerHold`](RetryErrorKind::ServerHold)).
    /// `None` when none of them said.
    ///
    /// ```
    /// use bayesretry_policy::{Classification, ErrorClass, RetryPolicy};
    /// use std::time::Duration;
    ///
    /// // the server asks for five minutes, beyond the default limit of one
    /// let err = RetryPolicy::new()
    ///     .call_with("provider", |_: &u16| {
    ///         Classification::Retryable(ErrorClass::Http(429))
    ///             .with_retry_after(Duration::from_secs(300))
    ///     })
    ///     .run_blocking(|_| Err::<(), _>(429))
    ///     .unwrap_err();
    /// assert_eq!(err.retry_after(), Some(Duration::from_secs(300)));
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            RetryErrorKind::Exhausted { retry_after, .. }
            | RetryErrorKind::DeadlineExceeded { retry_after, .. }
            | RetryErrorKind::CircuitOpen { retry_after, .. } => *retry_after,
            RetryErrorKind::ServerHold { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }
}

impl<E: fmt::Debug> fmt::Debug for RetryError<E> {
    /// The kind's: the box is an implementation detail.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.kind, f)
    }
}

/// The kind's: see [`RetryErrorKind`]'s.
impl<E> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.kind, f)
    }
}

/// What ended the call, in one line. The last attempt's error is not in it:
/// it is the error's [`source`](core::error::Error::source), as Rust's error
/// reporters expect, so a report that prints the chain of causes shows it
/// once, and a caller can downcast it.
impl<E> fmt::Display for RetryErrorKind<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryErrorKind::Exhausted {
                attempts,
                decision,
                retry_after,
                ..
            } => {
                write!(f, "gave up after {attempts} attempt(s) ({decision}")?;
                if let (Reason::RetryAfterBeyondLimit, Some(wait)) =
                    (decision.reason(), retry_after)
                {
                    write!(f, "; the server asked for {}", ReadableDuration(*wait))?;
                }
                write!(f, ")")
            }
            RetryErrorKind::Permanent(_) => write!(
                f,
                "permanent error, not retried: tried again, it would fail the same way"
            ),
            RetryErrorKind::CircuitOpen {
                endpoint,
                retry_after,
                attempts,
                ..
            } => {
                write!(f, "circuit open for endpoint `{endpoint}`")?;
                match attempts {
                    0 => write!(f, ", no attempt made")?,
                    n => write!(f, " after {n} attempt(s)")?,
                }
                match retry_after {
                    Some(wait) => write!(f, " (may admit a call in {})", ReadableDuration(*wait)),
                    None => Ok(()),
                }
            }
            RetryErrorKind::ServerHold {
                endpoint,
                retry_after,
                attempts,
                ..
            } => {
                write!(f, "endpoint `{endpoint}` held by the server's Retry-After")?;
                match attempts {
                    0 => write!(f, ", no attempt made")?,
                    n => write!(f, " after {n} attempt(s)")?,
                }
                write!(f, " (for {} more)", ReadableDuration(*retry_after))
            }
            RetryErrorKind::BudgetExhausted { attempts, .. } => {
                write!(f, "retry budget exhausted after {attempts} attempt(s)")
            }
            RetryErrorKind::DeadlineExceeded {
                attempts,
                decision,
                retry_after,
                ..
            } => {
                write!(f, "gave up after {attempts} attempt(s): ")?;
                match (decision.reason(), retry_after) {
                    (Reason::RetryAfterPastDeadline, Some(wait)) => {
                        write!(
                            f,
                            "the server asked for {}, past the deadline",
                            ReadableDuration(*wait)
                        )
                    }
                    _ => write!(f, "the next one could not start before the deadline"),
                }
            }
            RetryErrorKind::Stopped { attempts, .. } => write!(
                f,
                "retry declined by the should_retry hook after {attempts} attempt(s)"
            ),
            RetryErrorKind::AttemptTimedOut {
                timeout,
                attempts,
                decision,
                vetoed,
            } => {
                write!(
                    f,
                    "attempt {attempts} timed out after {} and was not retried",
                    ReadableDuration(*timeout)
                )?;
                if *vetoed {
                    write!(f, " (declined by the should_retry hook)")
                } else {
                    write!(f, " ({decision})")
                }
            }
            RetryErrorKind::Cancelled { reason, .. } => write!(f, "cancelled: {reason}"),
        }
    }
}

/// The last attempt's error, when there is one: what the message leaves out.
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
    /// A shared breaker ([`Builder::with_shared_breaker`](crate::Builder::with_shared_breaker))
    /// was given to a policy without a breaker of its own
    /// ([`Builder::without_breaker`](crate::Builder::without_breaker), or
    /// [`Builder::classic`](crate::Builder::classic)): the shared breaker
    /// hears of openings from the policy's own, so it would never open.
    SharedBreakerWithoutBreaker,
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
            Error::SharedBreakerWithoutBreaker => f.write_str(
                "a shared breaker needs a breaker of the policy's own, which tells it of openings: \
                 remove without_breaker (or give a classic policy one with with_breaker)",
            ),
        }
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    type Plain = RetryErrorKind<&'static str>;

    #[test]
    fn every_text_with_a_duration_writes_it_for_a_person() {
        let beyond: Plain = RetryErrorKind::Exhausted {
            last_error: "503",
            attempts: 1,
            decision: Decision::stop(Reason::RetryAfterBeyondLimit),
            retry_after: Some(Duration::from_secs(3_600)),
        };
        assert!(
            beyond.to_string().contains("the server asked for 1 h)"),
            "{beyond}"
        );
        let past: Plain = RetryErrorKind::DeadlineExceeded {
            last_error: "503",
            attempts: 2,
            decision: Decision::stop(Reason::RetryAfterPastDeadline),
            retry_after: Some(Duration::from_millis(2_500)),
        };
        assert_eq!(
            past.to_string(),
            "gave up after 2 attempt(s): the server asked for 2.5 s, past the deadline"
        );
        let open: Plain = RetryErrorKind::CircuitOpen {
            endpoint: "api".to_owned(),
            retry_after: Some(Duration::from_secs(90)),
            last_error: None,
            attempts: 0,
        };
        assert_eq!(
            open.to_string(),
            "circuit open for endpoint `api`, no attempt made (may admit a call in 1 min 30 s)"
        );
        let held: Plain = RetryErrorKind::ServerHold {
            endpoint: "api".to_owned(),
            retry_after: Duration::from_millis(1_500),
            last_error: Some("429"),
            attempts: 1,
        };
        assert_eq!(
            held.to_string(),
            "endpoint `api` held by the server's Retry-After after 1 attempt(s) (for 1.5 s more)"
        );
        assert_eq!(held.retry_after(), Some(Duration::from_millis(1_500)));
        assert_eq!(held.last_error(), Some(&"429"));
        let timed_out: Plain = RetryErrorKind::AttemptTimedOut {
            timeout: Duration::from_millis(120),
            attempts: 3,
            decision: Decision::stop(Reason::MaxAttempts),
            vetoed: false,
        };
        assert!(
            timed_out
                .to_string()
                .starts_with("attempt 3 timed out after 120 ms and was not retried"),
            "{timed_out}"
        );
        // a server's hint saturated at the largest wait is no wait anyone makes
        let saturated: Plain = RetryErrorKind::Exhausted {
            last_error: "429",
            attempts: 1,
            decision: Decision::stop(Reason::RetryAfterBeyondLimit),
            retry_after: Some(Duration::MAX),
        };
        assert!(
            saturated
                .to_string()
                .contains("the server asked for longer than a year)"),
            "{saturated}"
        );
    }
}
