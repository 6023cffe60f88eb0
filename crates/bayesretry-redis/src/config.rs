//! [`FleetConfig`]: where Redis is and how often the fleet syncs.

use alloc::sync::Arc;
use core::fmt;
use core::time::Duration;

use bayesretry_policy::{Clock, SystemClock};

use crate::error::Error;
use crate::url::{RedisUrl, Secret};

/// The settings of a [`Fleet`](crate::Fleet): a `Clone` value built with
/// `with_*` setters and checked when the fleet starts.
///
/// # Default
///
/// - `namespace`: `"bayesretry"` (every key is `{namespace}:…`)
/// - `interval`: 1 s between sync rounds
/// - `ttl`: 10 min: a writer that has not synced for that long ages out
/// - `max_buffered`: 100 000 context updates held while Redis is away
/// - `batch`: 2 000 entries per script call
/// - `connect_timeout` and `response_timeout`: 1 s each
/// - `reconnect_backoff`: from 2 s up to 30 s (the first retry comes at the
///   next round; see [`with_reconnect_backoff`](FleetConfig::with_reconnect_backoff))
/// - `clock`: a [`SystemClock`] made when the config is
///
/// The credentials are the URL's (`redis://user:password@host`) unless
/// [`with_credentials`](FleetConfig::with_credentials) sets them; they never
/// appear in `Debug`.
///
/// ```
/// use std::time::Duration;
/// use bayesretry_redis::FleetConfig;
///
/// let config = FleetConfig::new("redis://app:hunter2@127.0.0.1:6379/0")
///     .with_namespace("checkout")
///     .with_interval(Duration::from_millis(200));
/// assert!(!format!("{config:?}").contains("hunter2"));
/// assert_eq!(config.interval(), Duration::from_millis(200));
/// ```
#[derive(Clone)]
pub struct FleetConfig {
    pub(crate) url: RedisUrl,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<Secret>,
    pub(crate) namespace: String,
    pub(crate) interval: Duration,
    pub(crate) ttl: Duration,
    pub(crate) max_buffered: usize,
    pub(crate) batch: usize,
    pub(crate) connect_timeout: Duration,
    pub(crate) response_timeout: Duration,
    pub(crate) reconnect_initial: Duration,
    pub(crate) reconnect_max: Duration,
    pub(crate) clock: Arc<dyn Clock>,
}

impl FleetConfig {
    /// The longest [`ttl`](FleetConfig::with_ttl): 2⁴⁰ ms, about 34 years.
    /// Redis refuses a time to live that, added to its clock, passes
    /// `i64::MAX` ms, so a longer one would fail every round.
    pub const MAX_TTL: Duration = Duration::from_millis(1 << 40);

    /// The defaults above, for the Redis at `url`.
    pub fn new(url: impl Into<String>) -> FleetConfig {
        FleetConfig {
            url: RedisUrl::new(url),
            username: None,
            password: None,
            namespace: String::from("bayesretry"),
            interval: Duration::from_secs(1),
            ttl: Duration::from_secs(600),
            max_buffered: 100_000,
            batch: 2_000,
            connect_timeout: Duration::from_secs(1),
            response_timeout: Duration::from_secs(1),
            reconnect_initial: Duration::from_secs(2),
            reconnect_max: Duration::from_secs(30),
            clock: Arc::new(SystemClock::new()),
        }
    }

    /// Credentials for Redis ACLs (`AUTH username password`), overriding the
    /// URL's; `None` as the username for the `default` user. Kept out of
    /// every `Debug`, `Display` and log line.
    pub fn with_credentials(
        mut self,
        username: Option<String>,
        password: impl Into<String>,
    ) -> FleetConfig {
        self.username = username;
        self.password = Some(Secret(password.into()));
        self
    }

    /// The prefix of every key, so that fleets (services, environments) can
    /// share one Redis: keys are `{namespace}:…` (the braces would make them
    /// one Redis Cluster hash slot, but the crate speaks to one server, not
    /// to a cluster; see [keys and scripts](crate#keys-and-scripts)).
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> FleetConfig {
        self.namespace = namespace.into();
        self
    }

    /// How often the fleet pushes its outcomes and pulls everyone else's: the
    /// bound on how stale a process's view of the fleet is (see the
    /// [consistency model](crate#consistency-model)).
    pub fn with_interval(mut self, interval: Duration) -> FleetConfig {
        self.interval = interval;
        self
    }

    /// How long a writer's evidence stays in Redis after its last sync round:
    /// a process that dies ages out of the fleet's evidence after this long.
    /// At least two intervals, at most [`MAX_TTL`](FleetConfig::MAX_TTL).
    pub fn with_ttl(mut self, ttl: Duration) -> FleetConfig {
        self.ttl = ttl;
        self
    }

    /// The most context updates held for Redis at once (while it cannot be
    /// reached, or in one round); updates beyond it wait in the store for a
    /// later round, counted in [`Stats::deferred`](crate::Stats::deferred).
    pub fn with_max_buffered(mut self, max_buffered: usize) -> FleetConfig {
        self.max_buffered = max_buffered;
        self
    }

    /// How many entries one script call pushes.
    pub fn with_batch(mut self, batch: usize) -> FleetConfig {
        self.batch = batch;
        self
    }

    /// How long to wait for a connection to Redis.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> FleetConfig {
        self.connect_timeout = timeout;
        self
    }

    /// How long to wait for Redis to answer one command.
    pub fn with_response_timeout(mut self, timeout: Duration) -> FleetConfig {
        self.response_timeout = timeout;
        self
    }

    /// How long the fleet waits before trying Redis again, after failing to
    /// reach it twice in a row: `initial`, doubling at each failure up to
    /// `max`, each wait drawn at random between half of that and all of it.
    ///
    /// While Redis is away, every process of a fleet that tried again at
    /// every interval would connect once an interval for the whole outage,
    /// and when Redis came back (a restart, a failover) all of them would
    /// reconnect, load their scripts and push what they buffered in the
    /// same interval. With the backoff they try less and less often, and
    /// drift apart: the jitter is drawn from a seed of each process's own.
    /// The price is time: a process may go on without Redis for up to `max`
    /// after it is back.
    ///
    /// The first retry is not delayed: it comes at the next round, so that a
    /// blip (a connection cut, a failover of a second) heals in one
    /// interval. A round that reaches Redis ends the backoff;
    /// [`Fleet::sync_now`](crate::Fleet::sync_now) tries at once, whatever
    /// the backoff says (and a failure there counts as one). Rounds come at
    /// the interval, so waits shorter than it change nothing; waits are
    /// timed on the fleet's clock ([`with_clock`](FleetConfig::with_clock)).
    /// [`Stats::reconnect_at_ms`](crate::Stats::reconnect_at_ms) says when
    /// the next attempt is due, and
    /// [`Stats::skipped_rounds`](crate::Stats::skipped_rounds) counts the
    /// rounds that waited. `Duration::ZERO` for both tries at every round.
    /// `initial` must be at most `max`, and `max` at most
    /// [`MAX_TTL`](FleetConfig::MAX_TTL).
    pub fn with_reconnect_backoff(mut self, initial: Duration, max: Duration) -> FleetConfig {
        self.reconnect_initial = initial;
        self.reconnect_max = max;
        self
    }

    /// The clock the fleet's budgets and breakers read (and its sync rounds
    /// stamp merges with); give it the policy's clock when that is not the
    /// system's.
    pub fn with_clock(mut self, clock: impl Clock) -> FleetConfig {
        self.clock = Arc::new(clock);
        self
    }

    /// The URL, credentials redacted when printed.
    pub const fn url(&self) -> &RedisUrl {
        &self.url
    }

    /// The key prefix.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The sync interval.
    pub const fn interval(&self) -> Duration {
        self.interval
    }

    /// How long a silent writer's evidence stays.
    pub const fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The bound on buffered context updates.
    pub const fn max_buffered(&self) -> usize {
        self.max_buffered
    }

    /// The reconnect backoff's first wait and its cap.
    pub const fn reconnect_backoff(&self) -> (Duration, Duration) {
        (self.reconnect_initial, self.reconnect_max)
    }

    /// Checks every setting and builds the Redis client.
    pub(crate) fn client(&self) -> Result<redis::Client, Error> {
        let ns = &self.namespace;
        let bad_char = |c: char| c == '{' || c == '}' || c.is_whitespace() || c.is_control();
        if ns.is_empty() || ns.chars().count() > 64 || ns.chars().any(bad_char) {
            return Err(Error::InvalidNamespace(ns.clone()));
        }
        if self.interval.is_zero() {
            return Err(Error::InvalidInterval(self.interval));
        }
        if self.ttl < self.interval.saturating_mul(2) || self.ttl > FleetConfig::MAX_TTL {
            return Err(Error::InvalidTtl {
                ttl: self.ttl,
                interval: self.interval,
            });
        }
        if self.reconnect_initial > self.reconnect_max || self.reconnect_max > FleetConfig::MAX_TTL
        {
            return Err(Error::InvalidReconnectBackoff {
                initial: self.reconnect_initial,
                max: self.reconnect_max,
            });
        }
        if self.max_buffered == 0 {
            return Err(Error::ZeroLimit {
                what: "max_buffered",
            });
        }
        if self.batch == 0 {
            return Err(Error::ZeroLimit { what: "batch" });
        }
        if self.url.is_tls() && !cfg!(feature = "tls") {
            return Err(Error::TlsNotEnabled(self.url.redacted()));
        }
        let invalid = |why: String| Error::InvalidUrl {
            url: self.url.redacted(),
            why,
        };
        if let Some(why) = self.url.scheme_problem() {
            return Err(invalid(why));
        }
        let mut info = redis::IntoConnectionInfo::into_connection_info(self.url.expose())
            // the parser's message names the part that failed, never the secret
            .map_err(|e| invalid(e.to_string()))?;
        if let Some(password) = &self.password {
            info.redis.password = Some(password.0.clone());
            info.redis.username.clone_from(&self.username);
        }
        #[cfg(feature = "tls")]
        crate::tls::install_provider();
        redis::Client::open(info).map_err(|e| invalid(e.to_string()))
    }

    /// The key prefix with its hash-tag braces.
    pub(crate) fn prefix(&self) -> String {
        format!("{{{}}}", self.namespace)
    }
}

impl fmt::Debug for FleetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetConfig")
            .field("url", &self.url)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("namespace", &self.namespace)
            .field("interval", &self.interval)
            .field("ttl", &self.ttl)
            .field("max_buffered", &self.max_buffered)
            .field("batch", &self.batch)
            .field("connect_timeout", &self.connect_timeout)
            .field("response_timeout", &self.response_timeout)
            .field("reconnect_initial", &self.reconnect_initial)
            .field("reconnect_max", &self.reconnect_max)
            .finish_non_exhaustive()
    }
}
