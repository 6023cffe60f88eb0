//! [`Config`]: what the HTTP adapters add to a policy — the endpoint key, the
//! idempotency rule and the statuses that show a request was refused, how much of a failed response is drained and for how long,
//! and the wall clock HTTP-dates are read against.

use alloc::sync::Arc;
use core::fmt;
use core::time::Duration;
use std::time::SystemTime;

use bayesretry_policy::Classification;
use http::{HeaderName, Method, StatusCode};

use crate::endpoint::Target;
use crate::retry_after::rate_limit_reset;

/// The default name of the header that makes a POST or PATCH safe to replay.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The default drain limit: 64 KiB.
pub const DEFAULT_DRAIN_LIMIT: usize = 64 * 1024;

/// The default drain timeout: one second. See [`Config::with_drain_timeout`].
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// The default refusal statuses: 408, 429 and 529, after which a request that
/// is not safe to replay is replayed all the same. See
/// [`Config::with_refusal_statuses`].
pub const DEFAULT_REFUSAL_STATUSES: [u16; 3] = [408, 429, 529];

/// A set of failure statuses, 400 to 999 (all `http::StatusCode` allows), one
/// bit each.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatusSet([u64; 10]);

impl StatusSet {
    /// The lowest status in a set: a lower one is not a failure.
    const FIRST: u16 = 400;
    /// One past the highest.
    const END: u16 = 1000;

    /// The set of `statuses`; those outside 400 to 999 are left out.
    const fn of(statuses: &[u16]) -> StatusSet {
        let mut bits = [0_u64; 10];
        // bounded by the slice, one status a round
        let mut rest = statuses;
        while let [status, tail @ ..] = rest {
            if *status >= Self::FIRST && *status < Self::END {
                let offset = (*status - Self::FIRST) as usize;
                bits[offset / 64] |= 1 << (offset % 64);
            }
            rest = tail;
        }
        StatusSet(bits)
    }

    /// Whether `status` is in the set.
    fn contains(&self, status: StatusCode) -> bool {
        let Some(offset) = status.as_u16().checked_sub(Self::FIRST) else {
            return false;
        };
        let offset = usize::from(offset);
        self.0
            .get(offset / 64)
            .is_some_and(|word| word & (1 << (offset % 64)) != 0)
    }

    /// The statuses in the set, lowest first.
    fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (Self::FIRST..Self::END).filter(|&status| {
            StatusCode::from_u16(status).is_ok_and(|status| self.contains(status))
        })
    }
}

impl fmt::Debug for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

type EndpointFn = Arc<dyn Fn(&Target<'_>) -> String + Send + Sync>;
type WallClockFn = Arc<dyn Fn() -> SystemTime + Send + Sync>;
type StatusClassifierFn =
    Arc<dyn Fn(StatusCode, &http::HeaderMap) -> Option<Classification> + Send + Sync>;

/// The settings of [`RetryClient`](crate::RetryClient), [`RetryLayer`](crate::RetryLayer)
/// and, with the `middleware` feature, `RetryMiddleware`.
///
/// # Default
///
/// - the endpoint key is the request's origin, `scheme://host:port`, the port
///   left out when it is the scheme's default ([`Target::origin`]);
/// - POST and PATCH are replayed after any failure only with an
///   `Idempotency-Key` header ([`IDEMPOTENCY_KEY`]) or a per-request opt-in,
///   and otherwise only after a failure to connect or a refusal status,
///   [`DEFAULT_REFUSAL_STATUSES`] = 408, 429 and 529;
/// - at most [`DEFAULT_DRAIN_LIMIT`] = 64 KiB of a failed attempt's body is read
///   to free its connection, for at most [`DEFAULT_DRAIN_TIMEOUT`] = 1 s;
/// - a failure status is classified by the policy's table
///   (`classify_status`) and the server's `x-should-retry`
///   ([`with_status_classifier`](Config::with_status_classifier));
/// - HTTP-dates are read against [`SystemTime::now`];
/// - the `x-ratelimit-reset-*` headers are not read
///   ([`with_rate_limit_reset`](Config::with_rate_limit_reset)).
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
    refusal_statuses: StatusSet,
    pub(crate) drain_limit: usize,
    pub(crate) drain_timeout: Duration,
    pub(crate) wall_clock: Option<WallClockFn>,
    rate_limit_reset: bool,
    status_classifier: Option<StatusClassifierFn>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("endpoint", &self.endpoint.as_ref().map(|_| "custom"))
            .field("idempotency_header", &self.idempotency_header)
            .field("refusal_statuses", &self.refusal_statuses)
            .field("drain_limit", &self.drain_limit)
            .field("drain_timeout", &self.drain_timeout)
            .field("wall_clock", &self.wall_clock.as_ref().map(|_| "custom"))
            .field("rate_limit_reset", &self.rate_limit_reset)
            .field(
                "status_classifier",
                &self.status_classifier.as_ref().map(|_| "custom"),
            )
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
            refusal_statuses: StatusSet::of(&DEFAULT_REFUSAL_STATUSES),
            drain_limit: DEFAULT_DRAIN_LIMIT,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            wall_clock: None,
            rate_limit_reset: false,
            status_classifier: None,
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
    /// server deduplicates on it). It must have a value: one that is empty, or
    /// only spaces and tabs, deduplicates nothing (a server ignores it, or
    /// rejects it), and is no key.
    pub fn with_idempotency_header(mut self, header: HeaderName) -> Config {
        self.idempotency_header = header;
        self
    }

    /// The failure statuses that show a request was refused before it was
    /// processed, after which a request that is not safe to replay (a POST or
    /// PATCH without an idempotency key or an opt-in) is replayed all the same.
    /// Statuses below 400 are answers, never replayed, and those above 999 do
    /// not exist: either in `statuses` is left out.
    ///
    /// A POST is sent once because a second copy could do its work twice: the
    /// first may have been processed although its answer was lost or was an
    /// error. A status that says the server turned the request away before
    /// doing anything with it rules that out, and then a replay is as safe as
    /// for a GET. The default set, [`DEFAULT_REFUSAL_STATUSES`], holds the
    /// statuses that mean this wherever they come from: 429 (too many
    /// requests: rate limited), 529 (overloaded, as LLM providers answer a
    /// chat request they did not start) and 408 (the server gave up waiting
    /// for the request to arrive). A failure to connect is a refusal too,
    /// whatever this says: the request was never sent (but see below for one
    /// on the way to where a redirect led).
    ///
    /// Only the refusal of the request as it was sent counts. reqwest follows
    /// redirects, and a POST answered with a 303 (or a 302) was processed: the
    /// GET that the redirect leads to is another request, and its 429 does
    /// not replay the POST. A redirect is told by the URL the response
    /// answers, the last that reqwest requested: one back to the URL
    /// requested (a POST to `/cart` answered with a 303 to `/cart`) cannot be
    /// told apart from the request's own refusal, and the POST is replayed
    /// after it. Nor can a failure to connect to where a redirect led (the
    /// redirect target down, or its name not found): reqwest reports it as
    /// the request's own, with the URL first requested and no other trace of
    /// the redirect, so it reads as the POST never sent, and replays the
    /// POST that was processed. Give a POST that a server may redirect so an
    /// idempotency key, or build its client with
    /// `reqwest::redirect::Policy::none()`, which returns the redirect as
    /// the answer. ([`RetryLayer`](crate::RetryLayer) cannot tell any redirect: its
    /// inner service's responses do not say whether it followed one.)
    ///
    /// 503 is not in the default set, although a server that is down answers
    /// it before processing anything: a proxy in front of the server also
    /// answers 503 when the upstream connection was reset after the request
    /// had been forwarded (Envoy does, for one), and then the request may have
    /// been processed. Add it, or another status, when the servers you call
    /// say otherwise: `with_refusal_statuses(&[408, 429, 503, 529])`. An empty
    /// set replays such requests only after a failure to connect.
    pub const fn with_refusal_statuses(mut self, statuses: &[u16]) -> Config {
        self.refusal_statuses = StatusSet::of(statuses);
        self
    }

    /// Whether `status` is one of the refusal statuses.
    pub(crate) fn is_refusal(&self, status: StatusCode) -> bool {
        self.refusal_statuses.contains(status)
    }

    /// How much of a failed attempt's body is read, at most, before the retry, so
    /// that its connection goes back to the pool. A longer body is dropped
    /// unread, which closes its connection. 0 drops every body unread.
    pub const fn with_drain_limit(mut self, bytes: usize) -> Config {
        self.drain_limit = bytes;
        self
    }

    /// How long a failed attempt's body is read, at most, before the retry; a
    /// body not finished by then is dropped, which closes its connection, and
    /// the retry goes out. 0 reads only what has already arrived.
    ///
    /// The drain runs when the retry's attempt starts, before its request is
    /// sent: that is the first moment the retry is sure to be made (until then
    /// the failed response may still be the call's answer, and its body the
    /// caller's to read). Without this bound, a server that stops sending a
    /// failed response's body midway (a `503` that declares 1000 bytes and
    /// sends 3) would hold the call for as long as the connection stays open,
    /// for ever under a policy without a per-attempt timeout. So that the
    /// drain can never use up an attempt, it is bounded to half the policy's
    /// per-attempt timeout too, when that is shorter: the request always has
    /// at least the other half, and a drain cut short is never a timed-out
    /// attempt, only a closed connection.
    ///
    /// The default, [`DEFAULT_DRAIN_TIMEOUT`] = 1 s, is set by what a drain
    /// saves: one new connection, a TCP and perhaps a TLS handshake, some tens
    /// to a few hundred milliseconds. Waiting longer than that for a body
    /// cannot pay, while a second is enough to read the whole drain limit
    /// (64 KiB) at 0.6 Mbit/s; a server that has not sent a short error body
    /// in that time is stalling, not slow.
    ///
    /// The timer is tokio's, with the `tokio` feature inside a tokio runtime
    /// (where reqwest always runs; its timer must be enabled, as for the
    /// policy's default sleeper). Outside one, or without the feature, no timer
    /// can be set, and the drain reads only what has already arrived.
    pub const fn with_drain_timeout(mut self, timeout: Duration) -> Config {
        self.drain_timeout = timeout;
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

    /// Whether a `429` that carries no `Retry-After` or `retry-after-ms` waits
    /// for the rate limit that ran out to refill, as its `x-ratelimit-reset-*`
    /// header says (`6m0s`, `1.5s`), or Anthropic's
    /// `anthropic-ratelimit-*-reset` (an RFC 3339 timestamp,
    /// `2025-02-24T20:37:51Z`): the longest reset of a limit — requests or
    /// tokens, and Anthropic's input and output tokens — whose `remaining`
    /// header reads `0` (or comes without one; a remaining count that is not
    /// a whole number, `-1` or `soon`, is taken as a limit that did not run
    /// out, and its reset is not read). Off by default.
    ///
    /// A reset that names a moment rather than a wait — the RFC 3339
    /// timestamp, or a number without a unit that can only be a Unix time
    /// (`1733100000`, as GitHub and many other APIs send it) — is the wait
    /// until that moment on the wall clock a `Retry-After` HTTP-date is read
    /// against ([`with_wall_clock`](Config::with_wall_clock)); read as a count
    /// of seconds it would be a wait of decades. See
    /// [`parse_rate_limit_reset_at`](crate::parse_rate_limit_reset_at).
    ///
    /// The OpenAI API and others that copy it send these on every answer, and
    /// some 429s carry nothing else: without them the retry goes out after the
    /// policy's own backoff, a fraction of a second, and meets the same limit
    /// again, spending an attempt. With them, the wait is the reset, and a reset
    /// beyond the policy's limit (`Builder::with_max_retry_after`) stops the call
    /// at once with [`Error::RetryAfterBeyondLimit`](crate::Error::RetryAfterBeyondLimit),
    /// as a `Retry-After` that long does. Off by default because the reset is
    /// when the limit refills, not a wait the server asked for: the providers'
    /// own SDKs read only `Retry-After` and `retry-after-ms`, which win here too.
    pub const fn with_rate_limit_reset(mut self, on: bool) -> Config {
        self.rate_limit_reset = on;
        self
    }

    /// How a failure status (400 and up) is classified, when the policy's
    /// table does not fit an API: `classify(status, headers)` returns the
    /// classification, or `None` to leave the status to the table (and to the
    /// server's `x-should-retry`). A 404 that an eventually consistent store
    /// answers for a moment after a write can be made retryable, or a 500 that
    /// an API answers only for a request it can never serve permanent.
    ///
    /// The caller's word is final over the table and over `x-should-retry:
    /// true`; `x-should-retry: false` still ends the call. A permanent
    /// classification ends the call at that failure, with the response, and
    /// teaches the policy nothing; a retryable one is learned under its class,
    /// and the server's `Retry-After` is attached to it as to any other. Only
    /// what a response is retried as changes: whether a request not safe to
    /// replay may be sent again still follows the refusal statuses
    /// ([`with_refusal_statuses`](Config::with_refusal_statuses)), and a status
    /// below 400 is an answer, never a failure.
    ///
    /// `classify` runs inside the attempt, once per failure response, and is
    /// the caller's own code: like a policy's per-call hooks, and unlike its
    /// observer, a panic in it is not contained and unwinds out of the send
    /// (the layer's or the middleware's future), with the response dropped.
    /// It should not read a header with `to_str().unwrap()`: a server can send
    /// bytes that are not visible ASCII.
    ///
    /// ```
    /// use bayesretry_http::Config;
    /// use bayesretry_policy::{Classification, ErrorClass};
    /// use http::StatusCode;
    ///
    /// let config = Config::new().with_status_classifier(|status, _headers| match status {
    ///     // read-after-write: the object is not there yet
    ///     StatusCode::NOT_FOUND => Some(Classification::Retryable(ErrorClass::from_status(404))),
    ///     _ => None,
    /// });
    /// # let _ = config;
    /// ```
    pub fn with_status_classifier(
        mut self,
        classify: impl Fn(StatusCode, &http::HeaderMap) -> Option<Classification>
        + Send
        + Sync
        + 'static,
    ) -> Config {
        self.status_classifier = Some(Arc::new(classify));
        self
    }

    /// The caller's classification of a failure response, if it gave one.
    pub(crate) fn classify_response(
        &self,
        status: StatusCode,
        headers: &http::HeaderMap,
    ) -> Option<Classification> {
        self.status_classifier
            .as_ref()
            .and_then(|classify| classify(status, headers))
    }

    /// The wait for a failure with `status` and `headers` that gave no
    /// `Retry-After`: the rate limit's reset, for a 429 when
    /// [`with_rate_limit_reset`](Config::with_rate_limit_reset) is on.
    pub(crate) fn rate_limit_wait(
        &self,
        status: StatusCode,
        headers: &http::HeaderMap,
    ) -> Option<Duration> {
        if self.rate_limit_reset && status == StatusCode::TOO_MANY_REQUESTS {
            rate_limit_reset(headers, self.now())
        } else {
            None
        }
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

    /// Whether a request may be replayed after any failure; if not, why: then
    /// it is replayed only after a refusal (see
    /// [`with_refusal_statuses`](Config::with_refusal_statuses)).
    pub(crate) fn replayable(
        &self,
        method: &Method,
        headers: &http::HeaderMap,
        opted_in: bool,
    ) -> Result<(), NotRetried> {
        if opted_in || is_idempotent(method) || self.has_key(headers) {
            Ok(())
        } else {
            Err(NotRetried::NotIdempotent(method.clone()))
        }
    }

    /// Whether `headers` carry an idempotency key: the header, with a value
    /// that is not empty or only spaces and tabs.
    fn has_key(&self, headers: &http::HeaderMap) -> bool {
        headers
            .get_all(&self.idempotency_header)
            .iter()
            .any(|value| value.as_bytes().iter().any(|b| !matches!(b, b' ' | b'\t')))
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

/// Why a request was not sent again after a failure.
///
/// A request is replayed after any failure only when a second copy cannot do
/// harm: its method is idempotent, or it carries an idempotency key the server
/// deduplicates on, or the caller said it is safe. A POST that timed out may
/// have charged a card or started a job on the server all the same; sending it
/// again would do it twice. Such a request is still replayed after a failure
/// that shows it was not processed — a failure to connect, a refusal status
/// ([`Config::with_refusal_statuses`]) — and says why when any other failure
/// ends its call, as does a request that succeeded at its one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotRetried {
    /// The method is not idempotent (POST, PATCH, CONNECT or an extension), the
    /// request has no idempotency key, the caller did not opt in, and the
    /// failure was neither a refusal nor permanent (a permanent failure ends
    /// any request, and is reported as one).
    NotIdempotent(Method),
    /// The body is a stream, which cannot be sent a second time.
    BodyNotClonable,
}

impl fmt::Display for NotRetried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotRetried::NotIdempotent(method) => write!(
                f,
                "{method} is not idempotent and the request has no idempotency key: not sent again"
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

/// A time limit of one call's own: put it in an `http::Request`'s extensions
/// for [`RetryLayer`](crate::RetryLayer) (or, with the `middleware` feature,
/// in `reqwest_middleware`'s extensions). With
/// [`RetryClient`](crate::RetryClient), call
/// [`RequestBuilder::with_max_elapsed`](crate::RequestBuilder::with_max_elapsed)
/// instead, which says what it does. A request the middleware sends once (its
/// body is a stream) is not bounded by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MaxElapsed(pub Duration);

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
        let renamed = config
            .clone()
            .with_idempotency_header(HeaderName::from_static("x-request-id"));
        assert!(renamed.replayable(&Method::POST, &keyed, false).is_err());
        // a key without a value is none; of several, one with a value is enough
        let mut blank = http::HeaderMap::new();
        for value in ["", " \t "] {
            blank.insert(IDEMPOTENCY_KEY, http::HeaderValue::from_static(value));
            assert!(config.replayable(&Method::POST, &blank, false).is_err());
        }
        blank.append(IDEMPOTENCY_KEY, http::HeaderValue::from_static("k-2"));
        assert_eq!(config.replayable(&Method::POST, &blank, false), Ok(()));
    }

    #[test]
    fn refusal_statuses_are_failures_and_nothing_else() {
        let config = Config::new();
        let refusals: Vec<u16> = (0..=u16::MAX)
            .filter_map(|status| StatusCode::from_u16(status).ok())
            .filter(|&status| config.is_refusal(status))
            .map(|status| status.as_u16())
            .collect();
        assert_eq!(refusals, DEFAULT_REFUSAL_STATUSES);
        // below 400 or above 999 is no failure status, and is left out
        let odd = Config::new().with_refusal_statuses(&[0, 200, 399, 400, 503, 999, 1000, 65535]);
        assert_eq!(format!("{:?}", odd.refusal_statuses), "[400, 503, 999]");
        let none = Config::new().with_refusal_statuses(&[]);
        assert!(!none.is_refusal(StatusCode::TOO_MANY_REQUESTS));
    }
}
