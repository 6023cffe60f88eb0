#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "std")]
extern crate std;

/// The Beta distribution and its special functions (`bayesretry-beta`).
pub mod beta {
    pub use bayesretry_beta::*;
}

/// Delay schedules and jitter (`bayesretry-backoff`).
pub mod backoff {
    pub use bayesretry_backoff::*;
}

/// What a success is worth and what an attempt costs (`bayesretry-cost`).
pub mod cost {
    pub use bayesretry_cost::*;
}

/// Time decay of evidence toward the prior (`bayesretry-decay`).
pub mod decay {
    pub use bayesretry_decay::*;
}

/// Contexts, error classes and posterior stores (`bayesretry-store`).
pub mod store {
    pub use bayesretry_store::*;
}

/// The decision engine: expected value, Thompson, lookahead (`bayesretry-decision`).
pub mod decision {
    pub use bayesretry_decision::*;
}

/// The posterior-calibrated circuit breaker (`bayesretry-breaker`).
pub mod breaker {
    pub use bayesretry_breaker::*;
}

/// Retry budgets (`bayesretry-budget`).
pub mod budget {
    pub use bayesretry_budget::*;
}

/// `RetryPolicy` and its run loops (`bayesretry-policy`; feature `policy`).
#[cfg(feature = "policy")]
pub mod policy {
    pub use bayesretry_policy::*;
}

/// The SHA-256 hash-chained decision log: verifier, seals, and an observer that
/// logs every decision of a `RetryPolicy` (`bayesretry-audit`; feature `audit`).
///
/// ```
/// use bayesretry::audit::{AuditLog, Event, Record};
///
/// let mut log = AuditLog::new();
/// log.append(Record::new(1_764_460_800_000, Event::Dropped { count: 2 }));
/// let seal = log.seal(); // keep it elsewhere
/// assert_eq!(log.verify_against(&seal), Ok(()));
/// ```
#[cfg(feature = "audit")]
pub mod audit {
    pub use bayesretry_audit::*;
}

/// HTTP retries: `RetryClient` over reqwest, `RetryLayer` for tower, Retry-After
/// (`bayesretry-http`; feature `http`), and `RetryMiddleware` for a
/// `reqwest_middleware` chain (feature `http-middleware`).
///
/// The reqwest the client wraps is re-exported as `bayesretry::http::reqwest`:
/// a program whose own reqwest dependency is another major version (its
/// `reqwest::Client` is then another type) builds the client from this one.
///
/// What is sent again: GET, HEAD, OPTIONS, TRACE, PUT and DELETE after any
/// failure the policy retries; a POST or PATCH only when it carries an
/// `Idempotency-Key` header or is marked safe to replay
/// (`RequestBuilder::idempotent`, an `Idempotent` extension behind the layer
/// and the middleware), and otherwise only after a failure that shows it was
/// never processed: a failure to connect, or a refusal status (408, 429, 529;
/// not 503, which a proxy answers after forwarding the request). An LLM
/// provider's chat call without a key is therefore sent once after a 500 or a
/// 503, and its response says why (`NotRetried` in its extensions). A request
/// whose body is a stream is sent once by the client and the middleware; the
/// layer takes only a body that clones. The crate's own docs give the rules in
/// full.
///
/// An `https://` URL needs TLS, which reqwest leaves to the application:
/// feature `http-rustls`, or a TLS feature of the application's own reqwest.
/// Without either, every `https://` request fails at its one attempt, as a
/// permanent error.
///
/// ```
/// use bayesretry::RetryPolicy;
/// use bayesretry::http::{RetryClient, reqwest};
///
/// let client = RetryClient::new(reqwest::Client::new(), RetryPolicy::new());
/// let request = client.get("http://127.0.0.1:8080/v1/models").build()?;
/// assert_eq!(request.method(), reqwest::Method::GET);
/// # #[cfg(feature = "http-middleware")]
/// # {
/// // a link of a reqwest_middleware chain, with the same rules
/// let middleware = bayesretry::http::RetryMiddleware::new(RetryPolicy::new());
/// # let _ = middleware;
/// # }
/// # Ok::<(), reqwest::Error>(())
/// ```
#[cfg(feature = "http")]
pub mod http {
    pub use bayesretry_http::*;
}

/// The durable snapshot file (`bayesretry-fs`; feature `fs`).
#[cfg(feature = "fs")]
pub mod fs {
    pub use bayesretry_fs::*;
}

/// Fleet-wide evidence, retry budget and breaker on Redis (`bayesretry-redis`;
/// feature `redis`, and `redis-tls` for `rediss://` URLs).
///
/// One [`Fleet`](bayesretry_redis::Fleet) per process syncs a policy's store
/// with every other process's through Redis, in the background; a
/// [`FleetBudget`](bayesretry_redis::FleetBudget) and a
/// [`FleetBreaker`](bayesretry_redis::FleetBreaker) share one retry budget
/// and one breaker per endpoint, which a policy takes as its own budget
/// (`Builder::with_shared_budget`) and as its shared breaker, beside its own
/// (`Builder::with_shared_breaker`). A decision never waits on Redis: while it is
/// away each process runs on its local state. Its consistency model, what
/// happens when Redis goes away or comes back empty, and how a process shuts
/// down without losing its last outcomes or stranding its leases
/// (`Fleet::shutdown` before it exits: dropping a fleet does not flush) are
/// in the
/// [crate's documentation](bayesretry_redis).
#[cfg(feature = "redis")]
pub mod redis {
    pub use bayesretry_redis::*;
}

pub use bayesretry_beta::Beta;
pub use bayesretry_cost::CostModel;
pub use bayesretry_decision::{Decision, DecisionEngine, Reason, Situation, Strategy};
#[cfg(feature = "std")]
pub use bayesretry_store::MemoryStore;
pub use bayesretry_store::{Context, ErrorClass, PosteriorStore};

#[cfg(feature = "policy")]
pub use bayesretry_policy::{
    CancelToken, Classification, Classify, HttpStatus, RetryError, RetryErrorKind, RetryPolicy,
    permanent,
};
