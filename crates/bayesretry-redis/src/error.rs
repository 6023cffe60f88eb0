//! The one error type of this crate.

use thiserror::Error as ThisError;

/// Why a fleet could not be set up, or why an explicit round trip to Redis
/// failed.
///
/// Only setup ([`Fleet::start`](crate::Fleet::start), the config builders) and
/// the explicit round trips ([`Fleet::sync_now`](crate::Fleet::sync_now),
/// [`Fleet::push`](crate::Fleet::push), [`Fleet::pull`](crate::Fleet::pull))
/// return it. The hot path — a decision, a budget spend, a breaker check —
/// never fails because Redis does: it falls back to local state instead.
///
/// No variant carries a password: a URL is shown with its credentials
/// replaced by `***`.
///
/// A message says what failed; the Redis client's error behind a
/// [`Redis`](Error::Redis) one is its [`source`](core::error::Error::source)
/// only, so that a report printing the chain of causes shows it once. A
/// rejected setting is named in the message itself, which has no source.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not a Redis URL this crate can connect to.
    #[error("invalid redis url {url}: {why}")]
    InvalidUrl {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// A `rediss://` URL was given but the crate was built without the `tls`
    /// feature.
    #[error("redis url {0} asks for TLS, but bayesretry-redis was built without the `tls` feature")]
    TlsNotEnabled(String),
    /// The namespace is empty, too long, or holds a character that would
    /// break the key layout (`{`, `}`, whitespace or a control character).
    #[error(
        "namespace must be 1 to 64 characters without braces, whitespace or control characters, got {0:?}"
    )]
    InvalidNamespace(String),
    /// The sync interval was zero.
    #[error("sync interval must be at least 1 ms, got {0:?}")]
    InvalidInterval(core::time::Duration),
    /// The time to live of a writer's evidence was shorter than two intervals,
    /// or longer than [`FleetConfig::MAX_TTL`](crate::FleetConfig::MAX_TTL).
    #[error(
        "ttl must be at least two sync intervals ({interval:?}) and at most 2^40 ms, got {ttl:?}"
    )]
    InvalidTtl {
        /// The time to live asked for.
        ttl: core::time::Duration,
        /// The sync interval.
        interval: core::time::Duration,
    },
    /// The reconnect backoff's first wait was longer than its cap, or its
    /// cap longer than [`FleetConfig::MAX_TTL`](crate::FleetConfig::MAX_TTL).
    #[error(
        "reconnect backoff must start at most at its cap ({max:?}), itself at most 2^40 ms, got {initial:?}"
    )]
    InvalidReconnectBackoff {
        /// The first wait asked for.
        initial: core::time::Duration,
        /// The cap asked for.
        max: core::time::Duration,
    },
    /// A count that must be at least 1 (the buffer bound, the batch size) was 0.
    #[error("{what} must be at least 1, got 0")]
    ZeroLimit {
        /// Which setting.
        what: &'static str,
    },
    /// A budget setting was out of its range; the message names it.
    #[error("invalid fleet budget: {0}")]
    InvalidBudget(String),
    /// The breaker's own config was rejected; the message gives the
    /// breaker's, which names the setting and its value.
    #[error("invalid breaker config: {0}")]
    InvalidBreaker(bayesretry_breaker::Error),
    /// A breaker's `max_cooldown_ms` was longer than
    /// [`FleetBreaker::MAX_COOLDOWN_MS`](crate::FleetBreaker::MAX_COOLDOWN_MS):
    /// the fleet could not hold such an opening in Redis.
    #[error("max_cooldown_ms of a fleet breaker must be at most 2^40 ms, got {0}")]
    InvalidMaxCooldown(u64),
    /// [`Fleet::start`](crate::Fleet::start) was called outside a tokio runtime.
    #[error("a fleet needs a tokio runtime to run its sync task: start it inside one")]
    NoRuntime,
    /// The fleet's sync task has stopped: the runtime shut down, or
    /// [`Fleet::shutdown`](crate::Fleet::shutdown) ended it.
    #[error("the fleet's sync task has stopped")]
    Stopped,
    /// Redis could not be reached, or answered with an error: the Redis
    /// client's error, its source, says which.
    #[error("a request to redis failed")]
    Redis(#[from] redis::RedisError),
    /// Redis answered with something the scripts never return; the message
    /// says what.
    #[error("unexpected reply from redis: {0}")]
    Reply(String),
}

impl From<bayesretry_breaker::Error> for Error {
    fn from(error: bayesretry_breaker::Error) -> Error {
        Error::InvalidBreaker(error)
    }
}

/// Why a sync round failed, as a kind a dashboard or an alert can match on:
/// [`Stats::last_error`](crate::Stats::last_error).
///
/// A round never returns its error to anyone but a caller of
/// [`Fleet::sync_now`](crate::Fleet::sync_now): the rounds the fleet runs on
/// its own log it (a warning when Redis becomes unreachable or starts
/// refusing part of a round) and go on. What an operator needs, beside the
/// log, is what to do: start Redis or fix the network
/// ([`Unreachable`](SyncError::Unreachable),
/// [`Timeout`](SyncError::Timeout)), fix the credentials or the ACL
/// ([`Auth`](SyncError::Auth)), wait out or fix a server that is up but
/// serves no writes ([`Unavailable`](SyncError::Unavailable)), or clean the
/// namespace's keys ([`Refused`](SyncError::Refused)). The kind is a `Copy`
/// value, so that [`Stats`](crate::Stats) stays one; the message, which may
/// name hosts and keys, stays in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SyncError {
    /// No connection to Redis: refused, reset, cut, a host that does not
    /// resolve, a failed TLS handshake. The fleet runs on local state.
    Unreachable,
    /// Redis did not answer in time: the connect or the response timeout
    /// ([`FleetConfig`](crate::FleetConfig)) passed. The fleet runs on local
    /// state.
    Timeout,
    /// Redis refused the fleet's credentials (`WRONGPASS`, `NOAUTH`), or its
    /// ACL refused the fleet a command or a key (`NOPERM`). The fleet runs on
    /// local state until they are fixed.
    Auth,
    /// Redis is up but serves no writes for now: a read-only replica
    /// (`READONLY`, as after a failover), out of memory (`OOM`), loading its
    /// data (`LOADING`), a replica cut from its primary (`MASTERDOWN`), a
    /// disk it cannot persist to (`MISCONF`), busy running a script (`BUSY`).
    /// The fleet runs on local state.
    Unavailable,
    /// Redis refused a part of the round for what it found in the
    /// namespace's data: a key of the wrong type, a value a script cannot
    /// read. The other parts went through and the fleet stays connected:
    /// something else writes into the namespace.
    Refused,
    /// Anything else: a command the server does not know or will not run
    /// (scripting disabled or renamed), a reply the crate does not expect.
    Other,
}
