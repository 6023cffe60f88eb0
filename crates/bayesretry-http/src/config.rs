//! [`Config`]: what the HTTP adapters add to a policy — the endpoint key, the
//! idempotency rule, how much of a failed response is drained, and the wall clock
//! HTTP-dates are read against.

use alloc::sync::Arc;
use core::fmt;
use std::time::SystemTime;

use http::{HeaderName, Method};

use crate::endpoint::Target;

/// The default name of the header that makes a POST or PATCH safe to replay.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The default drain limit: 64 KiB.
pub const DEFAULT_DRAIN_LIMIT: usize = 64 * 1024;

type EndpointFn = Arc<dyn Fn(&Target<'_>) -> String + Send + Sync>;
type WallClockFn = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The settings of [`RetryClient`](crate::RetryClient), [`RetryLayer`](crate::RetryLayer)
/// and, with the `middleware` feature, `RetryMiddleware`.
///
/// # Default
///
/// - the endpoint key is the request's origin, `scheme://host:port`, the port
///   left out when it is the scheme's default ([`Target::origin`]);
/// - POST and PATCH are replayed only with an `Idempotency-Key` header
///   ([`IDEMPOTENCY_KEY`]) or a per-request opt-in;
/// - at most [`DEFAULT_DRAIN_LIMIT`] = 64 KiB of a failed attempt's body is read
///   to free its connection;
/// - HTTP-dates are read against [`SystemTime::now`].
///
/// ```
/// use bayesretry_http::Config;
///
/// // one key per route, whatever the ids in the path
/// let config = Config::new()
///     .with_endpoint(|target| {
///         let route = if target.path().starts_with("/v1/users/") { "/v1/users/{id}" } else { "other" };
///         format!("{}{route}", target.origin())
///     })
///     .with_idempotency_header(http::HeaderName::from_static("x-request-id"));
/// # let _ = config;
/// ```
#[derive(Clone)]
#[must_use]
pub struct Config {
    pub(crate) endpoint: Option<EndpointFn>,
    pub(crate) idempotency_header: HeaderName,
    pub(crate) drain_limit: usize,
    pub(crate) wall_clock: Option<WallClockFn>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("endpoint", &self.endpoint.as_ref().map(|_| "custom"))
            .field("idempotency_header", &self.idempotency_header)
            .field("drain_limit", &self.drain_limit)
            .field("wall_clock", &self.wall_clock.as_ref().map(|_| "custom"))
            .finish()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

impl Config {
    /// The defaults listed above.
    pub const fn new() -> Config {
        Config {
            endpoint: None,
            idempotency_header: IDEMPOTENCY_KEY,
            drain_limit: DEFAULT_DRAIN_LIMIT,
            wall_clock: None,
        }
    }

    /// The endpoint key of a request, from its method, origin and path: for a
    /// route template (`/users/{id}`) instead of the origin.
    ///
    /// The policy learns, and its breaker trips, per endpoint key. Make it a route
    /// or an origin, never the raw URL: ids in paths would make every request an
    /// endpoint of its own, and nothing would ever be learned.
    pub fn with_endpoint(
        mut self,
        endpoint: impl Fn(&Target<'_>) -> String + Send + Sync + 'static,
    ) -> Config {
        self.endpoint = Some(Arc::new(endpoint));
        self
    }

    /// The header whose presence makes a POST or PATCH safe to replay (the
    /// server deduplicates on it).
    pub fn with_idempotency_header(mut self, header: HeaderName) -> Config {
        self.idempotency_header = header;
        self
    }

    /// How much of a failed attempt's body is read, at most, before the retry, so
    /// that its connection goes back to the pool. A longer body is dropped
    /// unread, which closes its connection. 0 drops every body unread.
    pub const fn with_drain_limit(mut self, bytes: usize) -> Config {
        self.drain_limit = bytes;
        self
    }

    /// The wall clock that a `Retry-After` HTTP-date is measured against; a test
    /// pins it to read a date as an exact wait.
    pub fn with_wall_clock(
        mut self,
        now: impl Fn() -> SystemTime + Send + Sync + 'static,
    ) -> Config {
        self.wall_clock = Some(Arc::new(now));
        self
    }

    /// The endpoint key of `target`.
    pub(crate) fn endpoint_of(&self, target: &Target<'_>) -> String {
        match &self.endpoint {
            Some(endpoint) => endpoint(target),
            None => target.origin(),
        }
    }

    /// The wall clock now.
    pub(crate) fn now(&self) -> SystemTime {
        match &self.wall_clock {
            Some(now) => now(),
            None => SystemTime::now(),
        }
    }

    /// Whether a request may be sent more than once: see [`NotRetried`].
    pub(crate) fn replayable(
        &self,
        method: &Method,
        headers: &http::HeaderMap,
        opted_in: bool,
    ) -> Result<(), NotRetried> {
        if opted_in || is_idempotent(method) || headers.contains_key(&self.idempotency_header) {
            Ok(())
        } else {
            Err(NotRetried::NotIdempotent(method.clone()))
        }
    }
}

/// Whether RFC 9110 §9.2.2 calls `method` idempotent: GET, HEAD, OPTIONS, TRACE,
/// PUT and DELETE. Sending one twice has the effect of sending it once, so a
/// retry after a lost answer cannot duplicate anything.
pub fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

/// Why a request was sent only once.
///
/// A request is replayed only when a second copy cannot do harm: its method is
/// idempotent, or it carries an idempotency key the server deduplicates on, or
/// the caller said it is safe. A POST that timed out may have charged a card or
/// started a job on the server all the same; sending it again would do it twice.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotRetried {
    /// The method is not idempotent (POST, PATCH, CONNECT or an extension), the
    /// request has no idempotency key, and the caller did not opt in.
    NotIdempotent(Method),
    /// The body is a stream, which cannot be sent a second time.
    BodyNotClonable,
}

impl fmt::Display for NotRetried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotRetried::NotIdempotent(method) => write!(
                f,
                "{method} is not idempotent and the request has no idempotency key: sent once"
            ),
            NotRetried::BodyNotClonable => {
                f.write_str("the request body is a stream that cannot be cloned: sent once")
            }
        }
    }
}

/// Marks a request as safe to replay whatever its method: put it in an
/// `http::Request`'s extensions for [`RetryLayer`](crate::RetryLayer) (or, with
/// the `middleware` feature, in `reqwest_middleware`'s extensions). With
/// [`RetryClient`](crate::RetryClient), call
/// [`RequestBuilder::idempotent`](crate::RequestBuilder::idempotent) instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Idempotent;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_rfc_idempotent_methods_replay_by_default() {
        let config = Config::new();
        let none = http::HeaderMap::new();
        for method in [
            Method::GET,
            Method::HEAD,
            Method::OPTIONS,
            Method::TRACE,
            Method::PUT,
            Method::DELETE,
        ] {
            assert_eq!(config.replayable(&method, &none, false), Ok(()), "{method}");
        }
        for method in [Method::POST, Method::PATCH, Method::CONNECT] {
            assert_eq!(
                config.replayable(&method, &none, false),
                Err(NotRetried::NotIdempotent(method.clone()))
            );
            assert_eq!(config.replayable(&method, &none, true), Ok(()));
        }
        let mut keyed = http::HeaderMap::new();
        keyed.insert(IDEMPOTENCY_KEY, http::HeaderValue::from_static("k-1"));
        assert_eq!(config.replayable(&Method::POST, &keyed, false), Ok(()));
        let renamed = config.with_idempotency_header(HeaderName::from_static("x-request-id"));
        assert!(renamed.replayable(&Method::POST, &keyed, false).is_err());
    }
}
