//! [`Classify`]: how a failed attempt's error becomes an [`ErrorClass`], a server
//! hint, or a permanent failure.

use core::fmt;
use core::time::Duration;
use std::io;

use bayesretry_store::ErrorClass;

/// What an error says about retrying.
///
/// The default, for an error nothing is known about, is
/// `Retryable(ErrorClass::Unknown)`: retrying an unknown failure is what every
/// classic retry loop does, and the posterior of the `Unknown` class then learns
/// whether it pays. A [`Permanent`](Classification::Permanent) error is returned
/// at once and never retried; no hook can override that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Classification {
    /// Retrying may help; beliefs are conditioned on the class.
    Retryable(ErrorClass),
    /// Retrying may help, and the server said when: wait at least this long
    /// (`Retry-After`, `retry-after-ms`).
    RetryAfter(ErrorClass, Duration),
    /// Retrying cannot help (bad request, authentication, a programming error).
    Permanent,
}

impl Classification {
    /// The class beliefs are conditioned on, unless the error is permanent.
    pub const fn error_class(&self) -> Option<ErrorClass> {
        match *self {
            Classification::Retryable(class) | Classification::RetryAfter(class, _) => Some(class),
            Classification::Permanent => None,
        }
    }

    /// The server's requested wait, if it gave one.
    pub const fn retry_after(&self) -> Option<Duration> {
        match *self {
            Classification::RetryAfter(_, wait) => Some(wait),
            _ => None,
        }
    }

    /// Whether the error is permanent.
    pub const fn is_permanent(&self) -> bool {
        matches!(self, Classification::Permanent)
    }

    /// The same classification with the server's wait attached, unless permanent.
    pub const fn with_retry_after(self, wait: Duration) -> Classification {
        match self {
            Classification::Retryable(class) | Classification::RetryAfter(class, _) => {
                Classification::RetryAfter(class, wait)
            }
            Classification::Permanent => Classification::Permanent,
        }
    }
}

impl Default for Classification {
    /// `Retryable(ErrorClass::Unknown)`: see [`Classification`].
    fn default() -> Self {
        Classification::Retryable(ErrorClass::Unknown)
    }
}

/// An error that knows what it says about retrying.
///
/// Implement it for your error type to use [`RetryPolicy::run`](crate::RetryPolicy::run);
/// for a type you do not own, pass a closure to
/// [`RetryPolicy::call_with`](crate::RetryPolicy::call_with) instead. Built in:
/// [`std::io::Error`] and [`std::io::ErrorKind`] (see [`classify_io_kind`]), HTTP
/// statuses as [`HttpStatus`] (see [`classify_status`]), and [`Permanent`].
pub trait Classify {
    /// What this error says about retrying.
    fn classify(&self) -> Classification;
}

/// The classification of an HTTP status.
///
/// - 429 (rate limited), 408 (request timeout), 409 (conflict) and every 5xx
///   (503 and 529, overloaded, among them) are retryable, each its own class;
/// - every other 4xx — 400, 401, 403, 404, 413, 422 ... — is permanent: the same
///   request will fail the same way;
/// - anything else is not a failure status, but when it is treated as one it is
///   retryable as [`ErrorClass::from_status`] maps it.
///
/// ```
/// use bayesretry_policy::{Classification, classify_status};
/// use bayesretry_store::ErrorClass;
///
/// assert_eq!(classify_status(429), Classification::Retryable(ErrorClass::Http(429)));
/// assert_eq!(classify_status(529), Classification::Retryable(ErrorClass::Http(529)));
/// assert_eq!(classify_status(401), Classification::Permanent);
/// ```
pub const fn classify_status(status: u16) -> Classification {
    match status {
        408 | 409 | 429 => Classification::Retryable(ErrorClass::Http(status)),
        400..=499 => Classification::Permanent,
        _ => Classification::Retryable(ErrorClass::from_status(status)),
    }
}

/// The classification of an I/O error kind.
///
/// Timeouts, refused, reset and aborted connections, and the other transport
/// failures are retryable, with [`ErrorClass::from_io_kind`]'s class;
/// `InvalidInput`, `InvalidData`, `PermissionDenied` and `Unsupported` are
/// permanent (the same call fails the same way); anything else is retryable as
/// [`ErrorClass::Unknown`].
///
/// ```
/// use bayesretry_policy::{Classification, classify_io_kind};
/// use bayesretry_store::ErrorClass;
/// use std::io::ErrorKind;
///
/// assert_eq!(classify_io_kind(ErrorKind::TimedOut), Classification::Retryable(ErrorClass::Timeout));
/// assert_eq!(classify_io_kind(ErrorKind::PermissionDenied), Classification::Permanent);
/// ```
pub fn classify_io_kind(kind: io::ErrorKind) -> Classification {
    match kind {
        io::ErrorKind::InvalidInput
        | io::ErrorKind::InvalidData
        | io::ErrorKind::PermissionDenied
        | io::ErrorKind::Unsupported => Classification::Permanent,
        other => Classification::Retryable(ErrorClass::from_io_kind(other)),
    }
}

impl Classify for io::ErrorKind {
    fn classify(&self) -> Classification {
        classify_io_kind(*self)
    }
}

impl Classify for io::Error {
    fn classify(&self) -> Classification {
        classify_io_kind(self.kind())
    }
}

/// An HTTP status as an error, classified by [`classify_status`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HttpStatus(pub u16);

impl fmt::Display for HttpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http status {}", self.0)
    }
}

impl core::error::Error for HttpStatus {}

impl Classify for HttpStatus {
    fn classify(&self) -> Classification {
        classify_status(self.0)
    }
}

/// An error marked permanent: returned at once, never retried (p-retry's
/// `AbortError`). Made by [`permanent`].
///
/// To mix permanent and retryable failures in one error type, give that type a
/// [`Classify`] impl whose answer for the permanent ones is
/// [`Classification::Permanent`], or wrap the inner error in an enum whose arms
/// delegate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Permanent<E>(pub E);

impl<E> Permanent<E> {
    /// The wrapped error.
    pub fn into_inner(self) -> E {
        self.0
    }
}

/// Marks `err` permanent: the call fails with it at once.
///
/// ```
/// use bayesretry_policy::{Classify, permanent};
/// assert!(permanent("bad api key").classify().is_permanent());
/// ```
pub const fn permanent<E>(err: E) -> Permanent<E> {
    Permanent(err)
}

/// The wrapped error's: the mark is a classification, not a layer of error,
/// and the call's [`RetryError`](crate::RetryError) already says the error was
/// permanent.
impl<E: fmt::Display> fmt::Display for Permanent<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Transparent, as its `Display` is: the wrapped error's source, so that a
/// chain of causes does not list the same message twice.
impl<E: core::error::Error + 'static> core::error::Error for Permanent<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.0.source()
    }
}

impl<E> Classify for Permanent<E> {
    fn classify(&self) -> Classification {
        Classification::Permanent
    }
}

impl<E: Classify + ?Sized> Classify for &E {
    fn classify(&self) -> Classification {
        (**self).classify()
    }
}

impl<E: Classify + ?Sized> Classify for Box<E> {
    fn classify(&self) -> Classification {
        (**self).classify()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_split_as_documented() {
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert_eq!(
                classify_status(status),
                Classification::Retryable(ErrorClass::Http(status))
            );
        }
        for status in [400, 401, 403, 404, 405, 413, 422, 451] {
            assert!(classify_status(status).is_permanent(), "{status}");
        }
        assert_eq!(
            classify_status(7),
            Classification::Retryable(ErrorClass::Unknown)
        );
    }

    #[test]
    fn io_kinds_and_the_default() {
        assert_eq!(
            io::Error::from(io::ErrorKind::ConnectionRefused).classify(),
            Classification::Retryable(ErrorClass::ConnectionRefused)
        );
        assert_eq!(
            io::ErrorKind::ConnectionReset.classify(),
            Classification::Retryable(ErrorClass::ConnectionReset)
        );
        assert!(io::ErrorKind::InvalidInput.classify().is_permanent());
        assert_eq!(
            Classification::default(),
            Classification::Retryable(ErrorClass::Unknown)
        );
        let hinted = classify_status(429).with_retry_after(Duration::from_secs(2));
        assert_eq!(hinted.retry_after(), Some(Duration::from_secs(2)));
        assert_eq!(hinted.error_class(), Some(ErrorClass::Http(429)));
    }
}
