//! [`ErrorClass`]: how an attempt failed, at the granularity beliefs are
//! conditioned on.

use core::fmt;

/// What went wrong, at the granularity beliefs are conditioned on.
/// Low-cardinality by construction.
///
/// A posterior is kept per class because classes recover differently: a 429
/// (rate limited) usually clears after the server's `Retry-After`, a 503 or 529
/// (overloaded) clears with the load, a 500 may be a bug that no retry fixes, and
/// a refused connection says the process is down. Lumping them together would
/// average behaviours that call for opposite decisions. Splitting further — by
/// error message, request id, or anything else a server makes up at run time —
/// would give every failure a context of its own in which nothing is ever
/// learned, and let a remote party grow the store at will. So a class is an HTTP
/// status, one of a few transport outcomes, or a caller's *static* name: the set
/// of classes a program can produce is fixed when it is compiled.
///
/// ```
/// use bayesretry_store::ErrorClass;
///
/// assert_eq!(ErrorClass::from_status(429), ErrorClass::Http(429));
/// assert_eq!(ErrorClass::from_status(42), ErrorClass::Unknown);
/// assert!(ErrorClass::Http(429).is_rate_limited());
/// assert!(ErrorClass::Http(529).is_overloaded() && ErrorClass::Http(529).is_server_error());
/// assert_eq!(ErrorClass::Http(503).to_string(), "http-503");
/// assert_eq!(ErrorClass::Custom("quota-exhausted").to_string(), "quota-exhausted");
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// An HTTP status, 100..=599 (429, 500, 503 and 529 are each a class of their
    /// own). [`from_status`](ErrorClass::from_status) maps anything else to
    /// [`Unknown`](ErrorClass::Unknown).
    Http(u16),
    /// The attempt timed out.
    Timeout,
    /// The connection was refused: nothing listens at the address.
    ConnectionRefused,
    /// The connection was reset or aborted by the peer.
    ConnectionReset,
    /// Any other failure to connect (no route, address unavailable, DNS, TLS):
    /// the request was never sent.
    Connect,
    /// A caller's own class, named by a static string: never a run-time message.
    Custom(&'static str),
    /// Anything not classified.
    Unknown,
}

impl ErrorClass {
    /// The class of an HTTP status: `Http(status)` for 100..=599, otherwise
    /// [`Unknown`](ErrorClass::Unknown).
    pub const fn from_status(status: u16) -> ErrorClass {
        if status >= 100 && status <= 599 {
            ErrorClass::Http(status)
        } else {
            ErrorClass::Unknown
        }
    }

    /// Whether the server said "too many requests": HTTP 429.
    pub const fn is_rate_limited(&self) -> bool {
        matches!(self, ErrorClass::Http(429))
    }

    /// Whether the server said it is overloaded: HTTP 503 (service unavailable)
    /// or 529 (overloaded, as some LLM APIs send it).
    pub const fn is_overloaded(&self) -> bool {
        matches!(self, ErrorClass::Http(503) | ErrorClass::Http(529))
    }

    /// Whether the class is an HTTP server error, 500..=599.
    pub const fn is_server_error(&self) -> bool {
        matches!(self, ErrorClass::Http(500..=599))
    }

    /// The class of an I/O error kind: `TimedOut` is [`Timeout`](ErrorClass::Timeout),
    /// `ConnectionRefused` is [`ConnectionRefused`](ErrorClass::ConnectionRefused),
    /// `ConnectionReset` and `ConnectionAborted` are
    /// [`ConnectionReset`](ErrorClass::ConnectionReset), `NotConnected` and
    /// `AddrNotAvailable` are [`Connect`](ErrorClass::Connect), and anything else
    /// is [`Unknown`](ErrorClass::Unknown) — `HostUnreachable`,
    /// `NetworkUnreachable` and `NetworkDown` too: a kind alone does not say
    /// whether the error came while connecting or after the request went out,
    /// and `Connect` tells an adapter that the request was never sent (the HTTP
    /// adapter, which knows a failed connect when it sees one, classes those
    /// [`Connect`](ErrorClass::Connect)).
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// use bayesretry_store::ErrorClass;
    /// assert_eq!(ErrorClass::from_io_kind(ErrorKind::TimedOut), ErrorClass::Timeout);
    /// assert_eq!(ErrorClass::from_io_kind(ErrorKind::ConnectionAborted), ErrorClass::ConnectionReset);
    /// assert_eq!(ErrorClass::from_io_kind(ErrorKind::NotFound), ErrorClass::Unknown);
    /// ```
    #[cfg(feature = "std")]
    pub fn from_io_kind(kind: std::io::ErrorKind) -> ErrorClass {
        use std::io::ErrorKind;
        match kind {
            ErrorKind::TimedOut => ErrorClass::Timeout,
            ErrorKind::ConnectionRefused => ErrorClass::ConnectionRefused,
            ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => {
                ErrorClass::ConnectionReset
            }
            ErrorKind::NotConnected | ErrorKind::AddrNotAvailable => ErrorClass::Connect,
            _ => ErrorClass::Unknown,
        }
    }

    /// A number that stands for the class in hashes: the status for
    /// [`Http`](ErrorClass::Http), a fixed value above every status for the
    /// transport classes, and a tag for [`Custom`](ErrorClass::Custom), whose
    /// name is hashed besides.
    #[cfg(feature = "std")]
    pub(crate) const fn code(&self) -> u64 {
        match *self {
            ErrorClass::Http(status) => status as u64,
            ErrorClass::Timeout => CODE_BASE,
            ErrorClass::ConnectionRefused => CODE_BASE + 1,
            ErrorClass::ConnectionReset => CODE_BASE + 2,
            ErrorClass::Connect => CODE_BASE + 3,
            ErrorClass::Unknown => CODE_BASE + 4,
            ErrorClass::Custom(_) => CODE_CUSTOM,
        }
    }
}

/// The first class code above every `u16` status.
#[cfg(feature = "std")]
pub(crate) const CODE_BASE: u64 = 1 << 16;
/// The class code of every custom class.
#[cfg(feature = "std")]
pub(crate) const CODE_CUSTOM: u64 = CODE_BASE + 5;

impl fmt::Display for ErrorClass {
    /// `http-429`, `timeout`, `connection-refused`, `connection-reset`,
    /// `connect`, `unknown`, or the custom name as it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorClass::Http(status) => write!(f, "http-{status}"),
            ErrorClass::Timeout => f.write_str("timeout"),
            ErrorClass::ConnectionRefused => f.write_str("connection-refused"),
            ErrorClass::ConnectionReset => f.write_str("connection-reset"),
            ErrorClass::Connect => f.write_str("connect"),
            ErrorClass::Custom(name) => f.write_str(name),
            ErrorClass::Unknown => f.write_str("unknown"),
        }
    }
}
