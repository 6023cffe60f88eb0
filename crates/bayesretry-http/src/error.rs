//! [`Error`]: how a retried HTTP call ends without a response to return, and
//! [`Stop`], why the retrying stopped.

use core::fmt;
use core::time::Duration;

use bayesretry_policy::{ReadableDuration, Reason};

use crate::config::NotRetried;

/// Why no further attempt was made after a failed one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// The policy decided so; the reason is its decision's (the attempt cap, the
    /// deadline, a negative expected value, the breaker, the budget).
    Policy(Reason),
    /// The failure is permanent: a retry would fail the same way.
    Permanent,
    /// A server's Retry-After on another call holds the endpoint past the
    /// policy's limit or the deadline
    /// (`bayesretry_policy::Builder::without_server_hold`).
    ServerHold {
        /// How long the hold had still to run when it stopped the retry.
        retry_after: Duration,
    },
    /// The request was never going to be sent twice.
    NotRetried(NotRetried),
    /// The policy stopped for a reason this version of the crate does not name.
    Other,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Policy(reason) => write!(f, "{reason}"),
            Stop::Permanent => {
                f.write_str("permanent error: sent again, the request would fail the same way")
            }
            Stop::ServerHold { retry_after } => write!(
                f,
                "endpoint held by the server's Retry-After (for {} more)",
                ReadableDuration(*retry_after)
            ),
            Stop::NotRetried(why) => write!(f, "{why}"),
            Stop::Other => f.write_str("stopped by the policy"),
        }
    }
}

/// How a retried call ended without a response to hand back.
///
/// A call that got a response returns it, whatever its status, as the client it
/// wraps does: a 404 is an answer, and so is the last 503 once the policy stops
/// retrying. The call fails only when there is no response — the transport
/// failed, the breaker refused, the attempt timed out, the caller cancelled —
/// or when the server's own
/// `Retry-After` is what stopped it: then the response is kept inside the error
/// together with the wait the server asked for, since a caller that schedules
/// the work for later needs exactly that number.
///
/// `E` is the transport error (`reqwest::Error` for
/// [`RetryClient`](crate::RetryClient), the inner service's error for
/// [`Retry`](crate::Retry), `reqwest_middleware::Error` for `RetryMiddleware`,
/// whose error is named `MiddlewareError`), `R` the response type.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error<E = reqwest::Error, R = reqwest::Response> {
    /// The request could not be built; nothing was sent.
    Build(E),
    /// The last attempt failed before a response arrived (connect, timeout,
    /// body), and no retry followed.
    Transport {
        /// The last attempt's error.
        source: E,
        /// Attempts made.
        attempts: u32,
        /// Why no retry followed.
        stop: Stop,
    },
    /// The server asked for a wait longer than the policy's limit
    /// (`Builder::with_max_retry_after`): the call stopped at once, without
    /// sleeping.
    RetryAfterBeyondLimit {
        /// The wait the server asked for.
        retry_after: Duration,
        /// Attempts made.
        attempts: u32,
        /// The response that asked for it.
        response: Box<R>,
    },
    /// Waiting as long as the server asked would cross the call's deadline
    /// (`Builder::with_max_elapsed`, or the call's own:
    /// [`RequestBuilder::with_max_elapsed`](crate::RequestBuilder::with_max_elapsed))
    /// where the policy's own backoff would not: the call stopped at once,
    /// without sleeping. (When the backoff crosses
    /// the deadline too, the call ends as it would without the header: with
    /// the last response.)
    RetryAfterPastDeadline {
        /// The wait the server asked for.
        retry_after: Duration,
        /// Attempts made.
        attempts: u32,
        /// The response that asked for it.
        response: Box<R>,
    },
    /// The endpoint's breaker is open, and refused the call's first attempt or
    /// the one after an attempt the per-attempt timeout cut off (a response or
    /// transport error before the refusal is reported as itself).
    CircuitOpen {
        /// The endpoint key.
        endpoint: String,
        /// How long until the breaker may admit a call, if known.
        retry_after: Option<Duration>,
        /// Attempts made before the refusal: 0 when none was.
        attempts: u32,
    },
    /// A server's `Retry-After` to another call holds the endpoint, and
    /// refused the call's first attempt (or the one after an attempt the
    /// per-attempt timeout cut off): no request was sent
    /// (`bayesretry_policy::Builder::without_server_hold`).
    ServerHold {
        /// The endpoint key.
        endpoint: String,
        /// How long the hold has still to run.
        retry_after: Duration,
        /// Attempts made before the refusal: 0 when none was.
        attempts: u32,
    },
    /// The last attempt ran past the policy's per-attempt timeout
    /// (`Builder::with_attempt_timeout`) and no retry followed.
    AttemptTimedOut {
        /// The per-attempt timeout.
        timeout: Duration,
        /// Attempts made.
        attempts: u32,
    },
    /// The request's [`CancelToken`](bayesretry_policy::CancelToken) was
    /// cancelled (`RequestBuilder::with_cancel`, or a `CancelToken` in the
    /// request's extensions behind the layer or the middleware): no further
    /// attempt was made, and what the last one left was dropped. A
    /// cancellation that comes while the failed response before a retry is
    /// drained keeps that retry's request from being sent.
    Cancelled {
        /// The reason given to `cancel`.
        reason: String,
        /// Attempts sent: 0 when none was (a retry stopped in the drain
        /// before it is not counted).
        attempts: u32,
    },
}

impl<E, R> Error<E, R> {
    /// How long to wait before calling again, when the error says: the
    /// server's requested wait, when it is what stopped the call
    /// ([`RetryAfterBeyondLimit`](Error::RetryAfterBeyondLimit),
    /// [`RetryAfterPastDeadline`](Error::RetryAfterPastDeadline)), or the time
    /// until the open breaker may admit a call
    /// ([`CircuitOpen`](Error::CircuitOpen), when known), or until a
    /// server's hold on the endpoint ends ([`ServerHold`](Error::ServerHold),
    /// and a [`Transport`](Error::Transport) error whose retry the hold
    /// stopped: [`Stop::ServerHold`]).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::RetryAfterBeyondLimit { retry_after, .. }
            | Error::RetryAfterPastDeadline { retry_after, .. } => Some(*retry_after),
            Error::CircuitOpen { retry_after, .. } => *retry_after,
            Error::ServerHold { retry_after, .. }
            | Error::Transport {
                stop: Stop::ServerHold { retry_after },
                ..
            } => Some(*retry_after),
            _ => None,
        }
    }

    /// The last response, when the error keeps one.
    pub fn response(&self) -> Option<&R> {
        match self {
            Error::RetryAfterBeyondLimit { response, .. }
            | Error::RetryAfterPastDeadline { response, .. } => Some(response),
            _ => None,
        }
    }

    /// The last response, by value, when the error keeps one: for a caller that
    /// wants the response whatever stopped the call.
    pub fn into_response(self) -> Option<R> {
        match self {
            Error::RetryAfterBeyondLimit { response, .. }
            | Error::RetryAfterPastDeadline { response, .. } => Some(*response),
            _ => None,
        }
    }

    /// The transport error, when the error is one.
    pub fn transport(&self) -> Option<&E> {
        match self {
            Error::Build(source) | Error::Transport { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Attempts made (0 when none was).
    pub fn attempts(&self) -> u32 {
        match self {
            Error::Build(_) => 0,
            Error::CircuitOpen { attempts, .. }
            | Error::ServerHold { attempts, .. }
            | Error::Transport { attempts, .. }
            | Error::RetryAfterBeyondLimit { attempts, .. }
            | Error::RetryAfterPastDeadline { attempts, .. }
            | Error::AttemptTimedOut { attempts, .. }
            | Error::Cancelled { attempts, .. } => *attempts,
        }
    }
}

/// What happened, in one line. A transport error is not in it: it is the
/// error's [`source`](core::error::Error::source), as Rust's error reporters
/// expect. So the line of a [permanent](Stop::Permanent) error says why no
/// attempt followed, and its causes say what failed (`URL scheme is not
/// allowed`; `invalid URL, scheme is not http`, an `https://` URL without a
/// TLS feature): print the chain (`{:#}` with anyhow, or each
/// [`source`](core::error::Error::source) in turn) to see both.
impl<E, R> fmt::Display for Error<E, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Build(_) => write!(f, "request not built, nothing sent"),
            Error::Transport { attempts, stop, .. } => write!(
                f,
                "request failed after {attempts} attempt(s), no further attempt ({stop})"
            ),
            Error::RetryAfterBeyondLimit {
                retry_after,
                attempts,
                ..
            } => write!(
                f,
                "server asked to retry after {}, beyond the policy's limit; \
                 stopped after {attempts} attempt(s) without waiting",
                ReadableDuration(*retry_after)
            ),
            Error::RetryAfterPastDeadline {
                retry_after,
                attempts,
                ..
            } => write!(
                f,
                "server asked to retry after {}, past the call's deadline; \
                 stopped after {attempts} attempt(s) without waiting",
                ReadableDuration(*retry_after)
            ),
            Error::CircuitOpen {
                endpoint,
                retry_after,
                attempts,
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
            Error::ServerHold {
                endpoint,
                retry_after,
                attempts,
            } => {
                write!(f, "endpoint `{endpoint}` held by the server's Retry-After")?;
                match attempts {
                    0 => write!(f, ", no attempt made")?,
                    n => write!(f, " after {n} attempt(s)")?,
                }
                write!(f, " (for {} more)", ReadableDuration(*retry_after))
            }
            Error::AttemptTimedOut { timeout, attempts } => write!(
                f,
                "attempt {attempts} timed out after {}, no further attempt",
                ReadableDuration(*timeout)
            ),
            Error::Cancelled { reason, attempts } => {
                write!(f, "cancelled after {attempts} attempt(s): {reason}")
            }
        }
    }
}

/// An `Error` is a standard error when its transport error is one. tower's
/// `BoxError` (`Box<dyn Error + Send + Sync>`) is not one, so over an inner
/// service that fails with a `BoxError` (a `Buffer`, a `Timeout`) the retry
/// layer's error is not either: to use `?` on it, or to put above it a layer
/// that needs its error `Into<BoxError>`, map the inner service's error to a
/// type of your own below the retry layer (`ServiceBuilder::map_err`).
impl<E, R> core::error::Error for Error<E, R>
where
    E: core::error::Error + 'static,
    R: fmt::Debug,
{
    /// The transport error, when there is one: what the message leaves out.
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.transport()
            .map(|err| err as &(dyn core::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Plain = Error<&'static str, ()>;

    /// A transport error with a cause of its own.
    #[derive(Debug)]
    struct Sending(std::io::Error);

    impl fmt::Display for Sending {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("error sending request")
        }
    }

    impl core::error::Error for Sending {
        fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_report_of_the_causes_names_the_transport_error_once() {
        let err: Error<Sending, ()> = Error::Transport {
            source: Sending(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "connection refused",
            )),
            attempts: 2,
            stop: Stop::Policy(Reason::MaxAttempts),
        };
        let mut causes = Vec::new();
        let mut next: Option<&dyn core::error::Error> = Some(&err);
        while let Some(cause) = next.filter(|_| causes.len() < 8) {
            causes.push(cause.to_string());
            next = cause.source();
        }
        assert_eq!(
            causes,
            [
                "request failed after 2 attempt(s), no further attempt (attempt cap reached)",
                "error sending request",
                "connection refused"
            ]
        );
    }

    #[test]
    fn a_transport_error_says_how_many_attempts_failed_and_why_none_followed() {
        let capped: Plain = Error::Transport {
            source: "connection refused",
            attempts: 4,
            stop: Stop::Policy(Reason::MaxAttempts),
        };
        assert_eq!(
            capped.to_string(),
            "request failed after 4 attempt(s), no further attempt (attempt cap reached)"
        );
        let once: Plain = Error::Transport {
            source: "connection reset",
            attempts: 1,
            stop: Stop::NotRetried(NotRetried::BodyNotClonable),
        };
        assert_eq!(
            once.to_string(),
            "request failed after 1 attempt(s), no further attempt (the request body is a \
             stream that cannot be cloned: sent once)"
        );
    }

    #[test]
    fn the_wait_before_calling_again_is_the_server_s_or_the_breaker_s() {
        let beyond: Plain = Error::RetryAfterBeyondLimit {
            retry_after: Duration::from_secs(120),
            attempts: 1,
            response: Box::new(()),
        };
        assert_eq!(beyond.retry_after(), Some(Duration::from_secs(120)));
        let open: Plain = Error::CircuitOpen {
            endpoint: "https://api.example.com".to_owned(),
            retry_after: Some(Duration::from_secs(5)),
            attempts: 0,
        };
        assert_eq!(open.retry_after(), Some(Duration::from_secs(5)));
        let transport: Plain = Error::Transport {
            source: "connection refused",
            attempts: 4,
            stop: Stop::Policy(Reason::MaxAttempts),
        };
        assert_eq!(transport.retry_after(), None);
    }

    #[test]
    fn every_text_with_a_duration_writes_it_for_a_person() {
        let beyond: Plain = Error::RetryAfterBeyondLimit {
            retry_after: Duration::from_secs(3_600),
            attempts: 1,
            response: Box::new(()),
        };
        assert_eq!(
            beyond.to_string(),
            "server asked to retry after 1 h, beyond the policy's limit; stopped after 1 \
             attempt(s) without waiting"
        );
        let past: Plain = Error::RetryAfterPastDeadline {
            retry_after: Duration::from_millis(2_500),
            attempts: 2,
            response: Box::new(()),
        };
        assert_eq!(
            past.to_string(),
            "server asked to retry after 2.5 s, past the call's deadline; stopped after 2 \
             attempt(s) without waiting"
        );
        let open: Plain = Error::CircuitOpen {
            endpoint: "https://api.example.com".to_owned(),
            retry_after: Some(Duration::from_secs(90)),
            attempts: 0,
        };
        assert_eq!(
            open.to_string(),
            "circuit open for endpoint `https://api.example.com`, no attempt made (may admit a \
             call in 1 min 30 s)"
        );
        let timed_out: Plain = Error::AttemptTimedOut {
            timeout: Duration::from_millis(120),
            attempts: 3,
        };
        assert_eq!(
            timed_out.to_string(),
            "attempt 3 timed out after 120 ms, no further attempt"
        );
    }

    #[test]
    fn no_message_says_a_retried_call_was_not_retried() {
        let errors: [Plain; 5] = [
            Error::Transport {
                source: "timed out",
                attempts: 3,
                stop: Stop::Policy(Reason::Deadline),
            },
            Error::Transport {
                source: "bad certificate",
                attempts: 2,
                stop: Stop::Permanent,
            },
            Error::AttemptTimedOut {
                timeout: Duration::from_millis(250),
                attempts: 3,
            },
            Error::RetryAfterBeyondLimit {
                retry_after: Duration::from_secs(120),
                attempts: 2,
                response: Box::new(()),
            },
            Error::RetryAfterPastDeadline {
                retry_after: Duration::from_secs(20),
                attempts: 2,
                response: Box::new(()),
            },
        ];
        for err in errors {
            let text = err.to_string();
            assert!(!text.contains("not retried"), "{text}");
            assert!(text.contains(&err.attempts().to_string()), "{text}");
        }
    }
}
