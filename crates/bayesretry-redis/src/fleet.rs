//! [`Fleet`]: the handle on one process's membership of a fleet, and the
//! sync task that does every Redis round trip.

use alloc::sync::{Arc, Weak};
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use bayesretry_policy::Clock;
use bayesretry_store::{Snapshot, WriterId};
use redis::AsyncConnectionConfig;
use redis::aio::MultiplexedConnection;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use crate::breaker::FleetBreaker;
use crate::budget::{FleetBudget, FleetBudgetConfig};
use crate::config::FleetConfig;
use crate::error::{Error, SyncError};
use crate::evidence::EvidenceSync;
use crate::reconnect::Reconnect;
use crate::replica::Replica;
use crate::scripts::Scripts;
use crate::url::RedisUrl;

/// State the sync task shares with the budgets and breakers it serves.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Whether the last round reached Redis.
    pub(crate) connected: AtomicBool,
    /// Whether [`Fleet::shutdown`] stopped the sync task: no round runs again.
    stopped: AtomicBool,
    /// Wakes the task before the interval (a lease ran low, a breaker opened).
    pub(crate) wake: Notify,
    pub(crate) interval: Duration,
    rounds: AtomicU64,
    failed_rounds: AtomicU64,
    pushed: AtomicU64,
    pulled: AtomicU64,
    buffered: AtomicU64,
    deferred: AtomicU64,
    resyncs: AtomicU64,
    skipped_rounds: AtomicU64,
    /// How the rounds have gone, for [`Stats`]: under one lock, so that a
    /// reading never pairs one round's error with another's time.
    health: Mutex<Health>,
}

/// What [`Stats`] says of the fleet's link to Redis beyond its counters.
#[derive(Debug, Clone, Copy, Default)]
struct Health {
    /// When (fleet clock) the fleet started.
    started_ms: u64,
    last_error: Option<SyncError>,
    last_error_ms: Option<u64>,
    last_reached_ms: Option<u64>,
    failed_in_a_row: u64,
    reconnect_at_ms: Option<u64>,
}

/// What a fleet's sync has done so far: for metrics, and for tests that wait
/// for a round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Whether the last round reached Redis. `false` once the fleet is
    /// [`stopped`](Stats::stopped).
    pub connected: bool,
    /// Whether [`Fleet::shutdown`] stopped the fleet: no round runs again,
    /// and the fleet's budgets and breakers run on local state. The counters
    /// keep what the last round left; a stopped fleet is not counted as
    /// without Redis ([`unreachable_since_ms`](Stats::unreachable_since_ms)
    /// is `None`), so that an alert on an unreachable Redis does not fire
    /// for a process that is draining on purpose.
    pub stopped: bool,
    /// Interval rounds that reached Redis.
    pub rounds: u64,
    /// Rounds that could not reach Redis (or got an error back).
    pub failed_rounds: u64,
    /// (context, writer) versions pushed and acknowledged.
    pub pushed: u64,
    /// Versions pulled from other writers and merged.
    pub pulled: u64,
    /// Versions waiting to be pushed now.
    pub buffered: u64,
    /// Versions that found the buffer full (`max_buffered`), each counted
    /// once: left in the store and pushed at a later round, once a push has
    /// made room. Nothing is lost; the fleet sees them a round or more later.
    /// Zero unless more contexts changed in one interval than the buffer
    /// holds, or Redis was away while they did.
    pub deferred: u64,
    /// Times Redis was found to have lost the fleet's data (a restart without
    /// persistence, a flush) and everything was pushed again, or to have lost
    /// part of it (a failover that missed the last writes, this process's
    /// evidence expired while it was cut off) and what was lost was pushed,
    /// or read, again.
    pub resyncs: u64,
    /// The kind of error the last failed round met, whatever rounds came
    /// after it; `None` if no round has failed yet. Whether the fleet is
    /// failing *now* is [`connected`](Stats::connected) (Redis away) or
    /// [`failed_in_a_row`](Stats::failed_in_a_row) (any failure, Redis
    /// refusing part of a round too); compare
    /// [`last_error_ms`](Stats::last_error_ms) with
    /// [`last_reached_ms`](Stats::last_reached_ms) to tell an old error from
    /// the current one. The error's message is in the log.
    pub last_error: Option<SyncError>,
    /// When (on the fleet's clock, [`FleetConfig::with_clock`]) the last
    /// failed round ended: the time of [`last_error`](Stats::last_error).
    ///
    /// [`FleetConfig::with_clock`]: crate::FleetConfig::with_clock
    pub last_error_ms: Option<u64>,
    /// When (on the fleet's clock) the last round that reached Redis ended:
    /// one that Redis answered, in whole or, refusing part of it for what it
    /// found in its data, in part. `None` if none has yet. (A round with
    /// nothing to ask — no evidence to sync, no budget or breaker — counts
    /// as reaching Redis while the fleet holds a connection.)
    pub last_reached_ms: Option<u64>,
    /// Since when (on the fleet's clock) the fleet has been without Redis:
    /// the end of the last round that reached it, or, if none has, the time
    /// the fleet started. `None` while the last round reached Redis
    /// ([`connected`](Stats::connected)), and once the fleet is
    /// [`stopped`](Stats::stopped). What an alert on "Redis
    /// unreachable for N s" reads, through
    /// [`unreachable_for`](Stats::unreachable_for): the spell is counted
    /// from the last time Redis was known to answer, so it is never shorter
    /// than the outage. It begins at most an interval before Redis went
    /// away, and ends with the first round that reaches Redis again: under
    /// the reconnect backoff
    /// ([`FleetConfig::with_reconnect_backoff`](crate::FleetConfig::with_reconnect_backoff)),
    /// up to its cap (30 s by default) after Redis is back, a spell in
    /// which the fleet is indeed still without it.
    pub unreachable_since_ms: Option<u64>,
    /// Rounds that failed since the last that went through whole: 0 while
    /// the fleet syncs. Counts rounds that could not reach Redis and rounds
    /// that Redis refused in part alike.
    pub failed_in_a_row: u64,
    /// Rounds that did not try Redis, waiting out the reconnect backoff
    /// ([`FleetConfig::with_reconnect_backoff`]) after failing to reach it:
    /// neither rounds nor failed rounds. Their budgets and breakers ran on
    /// local state, and their evidence stayed buffered.
    ///
    /// [`FleetConfig::with_reconnect_backoff`]: crate::FleetConfig::with_reconnect_backoff
    pub skipped_rounds: u64,
    /// When (on the fleet's clock) the reconnect backoff lets the next round
    /// try Redis again; `None` when the next round tries it (connected, or
    /// the first retry after a failure, which is not delayed).
    /// [`Fleet::sync_now`] tries at once whatever it says.
    pub reconnect_at_ms: Option<u64>,
    /// The fleet's clock when these stats were read: what
    /// [`unreachable_for`](Stats::unreachable_for) counts to, so that a
    /// reader needs no clock of its own.
    pub now_ms: u64,
}

impl Stats {
    /// How long the fleet has been without Redis when these stats were read
    /// (from [`unreachable_since_ms`](Stats::unreachable_since_ms) to
    /// [`now_ms`](Stats::now_ms)); `None` while it is connected.
    ///
    /// ```
    /// # use core::time::Duration;
    /// # fn alert(stats: bayesretry_redis::Stats) -> bool {
    /// // page when the fleet has synced with no one for two minutes
    /// stats.unreachable_for() >= Some(Duration::from_secs(120))
    /// # }
    /// ```
    pub fn unreachable_for(&self) -> Option<Duration> {
        self.unreachable_since_ms
            .map(|since| Duration::from_millis(self.now_ms.saturating_sub(since)))
    }
}

/// Things only the sync task may do (it owns the connection).
enum Command {
    Sync(oneshot::Sender<Result<(), Error>>),
    Shutdown(oneshot::Sender<Result<(), Error>>),
}

/// Budgets and breakers the task serves, held weakly: dropping the last
/// `Arc` of one ends its service.
#[derive(Default)]
struct Registry {
    budgets: Mutex<Vec<Weak<FleetBudget>>>,
    breakers: Mutex<Vec<Weak<FleetBreaker>>>,
}

/// One process's membership of a fleet sharing evidence, budgets and
/// breakers through Redis.
///
/// [`start`](Fleet::start) spawns a sync task on the current tokio runtime
/// and returns at once, whether Redis is up or not: the task connects (and
/// reconnects) on its own. Everything a caller touches on a request's path —
/// the policy's store, a [`FleetBudget`], a [`FleetBreaker`] — is local and
/// never waits for Redis; the task moves state between them and Redis every
/// interval, and at once when a lease runs low or a breaker opens. Dropping
/// the last clone of a fleet stops its task; its budgets and breakers then
/// run on local state alone, as while Redis is away.
///
/// Dropping it does not flush: the outcomes recorded since the last round
/// are not pushed, and what its budgets leased stays granted until the
/// window ends. A process that is shutting down calls
/// [`shutdown`](Fleet::shutdown) first (see
/// [shutting down](crate#shutting-down)).
///
/// See the [crate documentation](crate) for the consistency model.
#[derive(Clone)]
pub struct Fleet {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    registry: Arc<Registry>,
    commands: mpsc::Sender<Command>,
    task: JoinHandle<()>,
    client: redis::Client,
    config: FleetConfig,
    prefix: String,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.task.abort();
        // budgets and breakers that outlive the fleet run on local state
        self.shared.connected.store(false, Ordering::Release);
    }
}

impl fmt::Debug for Fleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fleet")
            .field("config", &self.inner.config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Fleet {
    /// Starts syncing `replica` (a `RetryPolicy`, a `MemoryStore`) with the
    /// fleet, on the current tokio runtime.
    ///
    /// # Errors
    ///
    /// A setting of `config` out of range, a URL that does not parse, or no
    /// tokio runtime. Never an unreachable Redis.
    pub fn start(config: FleetConfig, replica: impl Replica) -> Result<Fleet, Error> {
        Fleet::spawn(config, Some(Arc::new(replica)))
    }

    /// Starts a fleet that shares budgets and breakers only.
    ///
    /// # Errors
    ///
    /// As [`start`](Fleet::start).
    pub fn without_evidence(config: FleetConfig) -> Result<Fleet, Error> {
        Fleet::spawn(config, None)
    }

    fn spawn(config: FleetConfig, replica: Option<Arc<dyn Replica>>) -> Result<Fleet, Error> {
        let client = config.client()?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let shared = Arc::new(Shared {
            connected: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            wake: Notify::new(),
            interval: config.interval,
            rounds: AtomicU64::new(0),
            failed_rounds: AtomicU64::new(0),
            pushed: AtomicU64::new(0),
            pulled: AtomicU64::new(0),
            buffered: AtomicU64::new(0),
            deferred: AtomicU64::new(0),
            resyncs: AtomicU64::new(0),
            skipped_rounds: AtomicU64::new(0),
            health: Mutex::new(Health {
                started_ms: config.clock.now_ms(),
                ..Health::default()
            }),
        });
        let registry = Arc::new(Registry::default());
        let prefix = config.prefix();
        let ttl_ms = millis(config.ttl);
        let (commands, receiver) = mpsc::channel(16);
        let task = Task {
            client: client.clone(),
            connection: None,
            connection_config: AsyncConnectionConfig::new()
                .set_connection_timeout(config.connect_timeout)
                .set_response_timeout(config.response_timeout),
            scripts: Scripts::new(),
            evidence: replica.map(|replica| {
                let sync =
                    EvidenceSync::new(prefix.clone(), ttl_ms, config.max_buffered, config.batch);
                (sync, replica)
            }),
            authored: HashSet::new(),
            shared: shared.clone(),
            registry: registry.clone(),
            clock: config.clock.clone(),
            prefix: prefix.clone(),
            stale_ms: ttl_ms,
            url: config.url.clone(),
            refusing: false,
            started: false,
            reconnect: Reconnect::new(
                config.reconnect_initial,
                config.reconnect_max,
                // a seed of this process's own, so that processes that lost
                // Redis together draw different waits
                {
                    use core::hash::BuildHasher;
                    std::hash::RandomState::new().hash_one(std::process::id())
                },
            ),
        };
        let task = runtime.spawn(task.run(receiver, config.interval));
        Ok(Fleet {
            inner: Arc::new(Inner {
                shared,
                registry,
                commands,
                task,
                client,
                config,
                prefix,
            }),
        })
    }

    /// A retry budget shared by the fleet (see [`FleetBudget`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidBudget`] naming the setting out of range.
    pub fn budget(&self, config: FleetBudgetConfig) -> Result<Arc<FleetBudget>, Error> {
        let budget = Arc::new(FleetBudget::new(
            config,
            self.inner.shared.clone(),
            self.inner.config.clock.clone(),
        )?);
        let mut budgets = self
            .inner
            .registry
            .budgets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        budgets.retain(|b| b.strong_count() > 0);
        budgets.push(Arc::downgrade(&budget));
        drop(budgets);
        self.inner.shared.wake.notify_one();
        Ok(budget)
    }

    /// A breaker per endpoint shared by the fleet (see [`FleetBreaker`]),
    /// each endpoint's local breaker built from `config`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidBreaker`] when the breaker rejects `config`;
    /// [`Error::InvalidMaxCooldown`] when its `max_cooldown_ms` is longer
    /// than [`FleetBreaker::MAX_COOLDOWN_MS`].
    pub fn breaker(&self, config: bayesretry_breaker::Config) -> Result<Arc<FleetBreaker>, Error> {
        let breaker = Arc::new(FleetBreaker::new(
            config,
            self.inner.shared.clone(),
            self.inner.config.clock.clone(),
        )?);
        let mut breakers = self
            .inner
            .registry
            .breakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        breakers.retain(|b| b.strong_count() > 0);
        breakers.push(Arc::downgrade(&breaker));
        Ok(breaker)
    }

    /// What the sync has done so far.
    pub fn stats(&self) -> Stats {
        let s = &self.inner.shared;
        let get = |c: &AtomicU64| c.load(Ordering::Acquire);
        let health = *s.health.lock().unwrap_or_else(PoisonError::into_inner);
        let connected = s.connected.load(Ordering::Acquire);
        let stopped = s.stopped.load(Ordering::Acquire);
        Stats {
            connected,
            stopped,
            rounds: get(&s.rounds),
            failed_rounds: get(&s.failed_rounds),
            pushed: get(&s.pushed),
            pulled: get(&s.pulled),
            buffered: get(&s.buffered),
            deferred: get(&s.deferred),
            resyncs: get(&s.resyncs),
            last_error: health.last_error,
            last_error_ms: health.last_error_ms,
            last_reached_ms: health.last_reached_ms,
            unreachable_since_ms: (!connected && !stopped)
                .then(|| health.last_reached_ms.unwrap_or(health.started_ms)),
            failed_in_a_row: health.failed_in_a_row,
            skipped_rounds: get(&s.skipped_rounds),
            reconnect_at_ms: health.reconnect_at_ms,
            now_ms: self.inner.config.clock.now_ms(),
        }
    }

    /// The settings the fleet runs with.
    pub fn config(&self) -> &FleetConfig {
        &self.inner.config
    }

    /// Runs one full round now (push, pull, leases, breakers) and says
    /// whether it went through. Rounds run on their own every interval; this
    /// is for tests, and for handing the fleet the outcomes recorded since
    /// the last round at a moment of the caller's choosing.
    /// [`shutdown`](Fleet::shutdown) runs one too, as the last.
    ///
    /// # Errors
    ///
    /// The round's Redis error, or [`Error::Stopped`]. A part of the round
    /// that Redis refused for what it found in its data (a key of the wrong
    /// type) fails alone: the other parts are done all the same, and the
    /// first such error is returned.
    pub async fn sync_now(&self) -> Result<(), Error> {
        let (reply, answer) = oneshot::channel();
        self.inner
            .commands
            .send(Command::Sync(reply))
            .await
            .map_err(|_| Error::Stopped)?;
        answer.await.map_err(|_| Error::Stopped)?
    }

    /// Ends this process's part in the fleet, for a clean shutdown: one last
    /// full round (as [`sync_now`](Fleet::sync_now): the outcomes recorded
    /// since the previous one are pushed), then, for each budget, the units
    /// of its lease not spent are given back to their window and the process
    /// is taken out of the budget's processes; for each breaker, the probes
    /// it claimed from Redis and did not hand to a call are given back to
    /// their round; and the sync task stops.
    ///
    /// Without it, what a stopping process had leased stayed granted until
    /// its window ended, and its id counted among the budget's processes for
    /// the fleet's `ttl`: after a rolling deploy the new processes could
    /// lease only what the old ones had left of the window, and their
    /// fallbacks' fair shares were cut as if the old ones still ran (see
    /// [shutting down](crate#shutting-down)). A probe it had claimed for a
    /// call that never came counted against its round until Redis let the
    /// round's count go, a cooldown later: with one probe a round, every
    /// process refused the endpoint meanwhile.
    ///
    /// Call it once the service has stopped taking calls. After it, every
    /// clone of this fleet is stopped: `sync_now` and `shutdown` return
    /// [`Error::Stopped`], the fleet's budgets and breakers run on local
    /// state, as while Redis is away, and [`stats`](Fleet::stats) reads
    /// [`stopped`](Stats::stopped). Once the last round has reached Redis,
    /// a budget's lease is void, given back or not (a lost reply): a unit
    /// Redis may have taken back is never spent as well, and the budget
    /// spends from its fallback. When the last round cannot reach Redis,
    /// nothing is given back, and a budget spends what it holds of its lease
    /// until the lease's window ends, then from its fallback, as after a
    /// drop.
    ///
    /// # Errors
    ///
    /// The round's Redis error (Redis unreachable: nothing is given back,
    /// and the leases stay granted until their windows end, as before), or
    /// the first error of a budget's or a breaker's leave (the others are
    /// tried all the same), or [`Error::Stopped`]. The task stops in every case.
    pub async fn shutdown(&self) -> Result<(), Error> {
        let (reply, answer) = oneshot::channel();
        self.inner
            .commands
            .send(Command::Shutdown(reply))
            .await
            .map_err(|_| Error::Stopped)?;
        answer.await.map_err(|_| Error::Stopped)?
    }

    /// Pushes every entry of `snapshot` as it is, on a connection of its own,
    /// and returns how many changed the fleet's evidence. Idempotent: the
    /// same snapshot pushed again changes nothing and returns 0, since each
    /// (context, writer) keeps its newest version only. For tools (seeding a
    /// fleet from a file snapshot) and tests; a running fleet pushes on its
    /// own.
    ///
    /// # Errors
    ///
    /// The Redis error, if it cannot be reached.
    pub async fn push(&self, snapshot: &Snapshot) -> Result<u64, Error> {
        let mut conn = self.connect().await?;
        let mut sync = self.scratch();
        // the writers are the snapshot's; their time to live is not renewed
        sync.collect(snapshot, &mut HashSet::new());
        let progress = sync
            .push(&mut conn, &Scripts::new(), &HashSet::new())
            .await?;
        Ok(progress.applied)
    }

    /// The fleet's whole evidence as Redis holds it now, every writer's
    /// entries as a snapshot, read on a connection of its own.
    ///
    /// # Errors
    ///
    /// The Redis error, if it cannot be reached.
    pub async fn pull(&self) -> Result<Snapshot, Error> {
        let mut conn = self.connect().await?;
        let mut sync = self.scratch();
        let (snapshot, _) = sync
            .pull(&mut conn, &Scripts::new(), self.inner.config.clock.now_ms())
            .await?;
        Ok(snapshot)
    }

    fn scratch(&self) -> EvidenceSync {
        let config = &self.inner.config;
        EvidenceSync::new(
            self.inner.prefix.clone(),
            millis(config.ttl),
            usize::MAX,
            config.batch,
        )
    }

    async fn connect(&self) -> Result<MultiplexedConnection, Error> {
        let config = &self.inner.config;
        let settings = AsyncConnectionConfig::new()
            .set_connection_timeout(config.connect_timeout)
            .set_response_timeout(config.response_timeout);
        Ok(self
            .inner
            .client
            .get_multiplexed_async_connection_with_config(&settings)
            .await?)
    }
}

/// A duration in whole milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The sync task: owns the connection and does every round trip.
struct Task {
    client: redis::Client,
    connection: Option<MultiplexedConnection>,
    connection_config: AsyncConnectionConfig,
    scripts: Scripts,
    evidence: Option<(EvidenceSync, Arc<dyn Replica>)>,
    /// Writers whose evidence this process pushes as its own (never pulled
    /// first): their time to live is renewed by every round's heartbeat.
    authored: HashSet<WriterId>,
    shared: Arc<Shared>,
    registry: Arc<Registry>,
    clock: Arc<dyn Clock>,
    prefix: String,
    stale_ms: u64,
    url: RedisUrl,
    /// Whether the last round had a part Redis refused (see [`refused`]):
    /// logged once, when it begins.
    refusing: bool,
    /// Whether a round has ended yet: the first one that cannot reach Redis
    /// is logged, as a connected fleet losing Redis is, so that a fleet
    /// which never reaches it (Redis down at start, a wrong password) says so.
    started: bool,
    /// When the next round may try Redis, after failing to reach it.
    reconnect: Reconnect,
}

/// Whether `error` is Redis refusing one part of a round for what it found
/// in the data (a key of the wrong type, a value a script cannot take, a
/// reply this crate does not expect), rather than Redis being away or
/// unable to serve this fleet (a lost connection, a read-only replica,
/// loading, out of memory, a command it does not know or will not run for
/// this user): the other parts of the round go on, on the same connection,
/// and the fleet stays connected. Its budgets then refuse what no lease
/// covers, rather than spend from their fallbacks on top of what the fleet
/// granted: where the data is bad, the fleet errs toward too few retries.
///
/// Only errors known to come from the data count: a key of the wrong type, a
/// value a command cannot read as a number, and a script's own runtime error
/// on a value it did not expect. Anything else — `ERR unknown command` from a
/// server with scripting renamed away, `NOPERM` from an ACL, `BUSY`, and the
/// codes of a server unable to serve anyone — is Redis away: every budget
/// falls back, as it does without Redis, instead of a misconfigured server
/// leaving the whole fleet without retries.
///
/// Redis before 7 reports an error a script's command met as `ERR Error
/// running script ...: -READONLY ...`, whatever that command's own code: the
/// codes are looked for in the text, so that a connection left on a primary
/// turned replica by a failover is dropped, and the next round connects to
/// the new primary, as on Redis 7.
fn refused(error: &Error) -> bool {
    /// What the text of an error that comes from the data holds.
    const DATA: [&str; 4] = [
        "WRONGTYPE",
        "not an integer",
        "not a valid float",
        // a Lua runtime error of a script (`user_script:12: attempt to
        // perform arithmetic on a nil value`), met on a garbled value
        ": attempt to ",
    ];
    /// Codes of a server that serves nobody's writes for now.
    const AWAY: [&str; 6] = [
        "-READONLY ",
        "-OOM ",
        "-MASTERDOWN ",
        "-LOADING ",
        "-MISCONF ",
        "-NOREPLICAS ",
    ];
    match error {
        Error::Reply(_) => true,
        Error::Redis(e) => match e.kind() {
            redis::ErrorKind::TypeError => true,
            redis::ErrorKind::ExtensionError if e.code() == Some("WRONGTYPE") => true,
            redis::ErrorKind::ResponseError | redis::ErrorKind::ExtensionError => {
                e.detail().is_some_and(|detail| {
                    DATA.iter().any(|text| detail.contains(text))
                        && !AWAY.iter().any(|code| detail.contains(code))
                })
            }
            _ => false,
        },
        _ => false,
    }
}

/// The kind of a round's `error`, for [`Stats::last_error`]; `refusing`
/// when Redis refused a part of the round for its data (see [`refused`]).
fn kind_of(error: &Error, refusing: bool) -> SyncError {
    /// Codes of a refused login or command (`WRONGPASS` is the client's
    /// `AuthenticationFailed`).
    const AUTH: [&str; 3] = ["NOPERM", "NOAUTH", "WRONGPASS"];
    /// Codes of a server that serves no writes for now.
    const AWAY: [&str; 9] = [
        "READONLY",
        "OOM",
        "MASTERDOWN",
        "LOADING",
        "MISCONF",
        "NOREPLICAS",
        "BUSY",
        "TRYAGAIN",
        "CLUSTERDOWN",
    ];
    if refusing {
        return SyncError::Refused;
    }
    let Error::Redis(e) = error else {
        return SyncError::Other;
    };
    // a code of its own, or one a script's error carries in its text
    // (`-ERR Error running script ...: -NOPERM ...` before Redis 7)
    let has = |codes: &[&str]| {
        codes.iter().any(|code| {
            e.code() == Some(*code)
                || e.detail()
                    .is_some_and(|detail| detail.contains(&format!("-{code} ")))
        })
    };
    use redis::ErrorKind as Kind;
    if e.is_timeout() {
        SyncError::Timeout
    } else if e.kind() == Kind::AuthenticationFailed || has(&AUTH) {
        SyncError::Auth
    } else if matches!(
        e.kind(),
        Kind::ReadOnly
            | Kind::BusyLoadingError
            | Kind::MasterDown
            | Kind::TryAgain
            | Kind::ClusterDown
    ) || has(&AWAY)
    {
        SyncError::Unavailable
    } else if e.is_io_error() {
        SyncError::Unreachable
    } else {
        SyncError::Other
    }
}

impl Task {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>, interval: Duration) {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            let tick = tokio::select! {
                _ = ticks.tick() => true,
                () = self.shared.wake.notified() => false,
                command = commands.recv() => match command {
                    Some(Command::Sync(reply)) => {
                        let result = self.round(true, true).await;
                        let _ = reply.send(result);
                        continue;
                    }
                    Some(Command::Shutdown(reply)) => {
                        let result = self.shut_down().await;
                        // budgets and breakers that outlive the task run on
                        // local state
                        self.shared.connected.store(false, Ordering::Release);
                        self.shared.stopped.store(true, Ordering::Release);
                        let _ = reply.send(result);
                        return;
                    }
                    None => return,
                },
            };
            // the outcome is in the stats and the log; the next round retries
            let _ = self.round(tick, false).await;
        }
    }

    /// The last round, then each budget's leave (its unspent lease given
    /// back, its process taken out of the count) and each breaker's (its
    /// probes claimed and not handed out given back): on the round's connection,
    /// which a round that could not reach Redis leaves none of, and then
    /// nothing is given back (another connect would only wait as long again).
    async fn shut_down(&mut self) -> Result<(), Error> {
        let round = self.round(true, true).await;
        let Some(mut conn) = self.connection.take() else {
            return round;
        };
        let mut failure = round.err();
        for budget in upgrade(&self.registry.budgets) {
            let lease_key = format!("{}:budget:{}", self.prefix, budget.name);
            let members_key = format!("{}:bp:{}", self.prefix, budget.name);
            let left = budget
                .leave(&mut conn, &self.scripts, &lease_key, &members_key)
                .await;
            if let Err(e) = left {
                failure.get_or_insert(e);
            }
        }
        for breaker in upgrade(&self.registry.breakers) {
            let left = breaker.leave(&mut conn, &self.scripts, &self.prefix).await;
            if let Err(e) = left {
                failure.get_or_insert(e);
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// One round; on an interval tick (or an explicit sync) everything, on a
    /// wake-up only leases and breaker changes. Without a connection, a
    /// round that is not `forced` (an explicit sync) tries Redis only once
    /// the reconnect backoff says so: else it is skipped.
    async fn round(&mut self, tick: bool, forced: bool) -> Result<(), Error> {
        if tick {
            self.collect();
        }
        if self.connection.is_none() && !forced && !self.reconnect.due(self.clock.now_ms()) {
            let s = &self.shared;
            s.skipped_rounds.fetch_add(1, Ordering::AcqRel);
            if let Some((sync, _)) = &self.evidence {
                s.buffered.store(sync.buffered() as u64, Ordering::Release);
            }
            return Ok(());
        }
        let result = self.exchange(tick).await;
        let s = &self.shared;
        // Redis refused parts of the round for what they found there (the
        // connection is kept only then): it is reachable, and the fleet stays
        // connected (its budgets spend what the fleet grants, not their
        // fallbacks)
        let refusing = result.is_err() && self.connection.is_some();
        if refusing && !self.refusing {
            if let Err(e) = &result {
                tracing::warn!(
                    url = %self.url,
                    error = e as &(dyn core::error::Error + 'static),
                    "bayesretry-redis: redis refused part of the fleet sync; the rest goes on"
                );
            }
        }
        self.refusing = refusing;
        let now_ms = self.clock.now_ms();
        if result.is_ok() || refusing {
            self.reconnect.reached();
        } else {
            self.reconnect.failed(now_ms);
        }
        {
            let mut health = s.health.lock().unwrap_or_else(PoisonError::into_inner);
            health.reconnect_at_ms = self.reconnect.next_ms();
            if result.is_ok() || refusing {
                health.last_reached_ms = Some(now_ms);
            }
            match &result {
                Ok(()) => health.failed_in_a_row = 0,
                Err(e) => {
                    health.failed_in_a_row = health.failed_in_a_row.saturating_add(1);
                    health.last_error = Some(kind_of(e, refusing));
                    health.last_error_ms = Some(now_ms);
                }
            }
        }
        match &result {
            Ok(()) => {
                if !s.connected.swap(true, Ordering::AcqRel) {
                    tracing::info!(url = %self.url, "bayesretry-redis: connected, fleet sync on");
                }
                if tick {
                    s.rounds.fetch_add(1, Ordering::AcqRel);
                }
            }
            Err(_) if refusing => {
                s.failed_rounds.fetch_add(1, Ordering::AcqRel);
                if !s.connected.swap(true, Ordering::AcqRel) {
                    tracing::info!(url = %self.url, "bayesretry-redis: connected, fleet sync on");
                }
            }
            Err(e) => {
                self.connection = None;
                s.failed_rounds.fetch_add(1, Ordering::AcqRel);
                if s.connected.swap(false, Ordering::AcqRel) || !self.started {
                    tracing::warn!(
                        url = %self.url,
                        error = e as &(dyn core::error::Error + 'static),
                        "bayesretry-redis: redis unreachable, running on local state"
                    );
                }
            }
        }
        self.started = true;
        if let Some((sync, _)) = &self.evidence {
            s.buffered.store(sync.buffered() as u64, Ordering::Release);
        }
        result
    }

    /// Takes the replica's new versions into the buffer (Redis up or not).
    fn collect(&mut self) {
        let Some((sync, replica)) = &mut self.evidence else {
            return;
        };
        let snapshot = replica.snapshot(self.clock.now_ms());
        let deferred = sync.collect(&snapshot, &mut self.authored);
        if deferred > 0 {
            self.shared.deferred.fetch_add(deferred, Ordering::AcqRel);
        }
    }

    /// The round's round trips: evidence, then each budget, then each
    /// breaker. A part that Redis refuses (see [`refused`]) fails alone: the
    /// others go on, and the first such error is returned at the end, with
    /// the connection kept. Any other error ends the round at once.
    async fn exchange(&mut self, tick: bool) -> Result<(), Error> {
        let mut conn = match self.connection.take() {
            Some(conn) => conn,
            None => {
                self.client
                    .get_multiplexed_async_connection_with_config(&self.connection_config)
                    .await?
            }
        };
        let mut failure = None;
        if tick {
            let result = self.sync_evidence(&mut conn).await;
            Self::settle(result, &mut failure)?;
        }
        let budgets: Vec<Arc<FleetBudget>> = upgrade(&self.registry.budgets);
        for budget in budgets {
            // every round counts the budget's processes, for the fallback's
            // fair share; a budget made since the last one, at once
            if tick || !budget.counted() {
                let key = format!("{}:bp:{}", self.prefix, budget.name);
                let result = budget
                    .count(&mut conn, &self.scripts, &key, self.stale_ms)
                    .await;
                Self::settle(result, &mut failure)?;
            }
            if budget.needs_lease(tick) {
                let key = format!("{}:budget:{}", self.prefix, budget.name);
                let result = budget.refill(&mut conn, &self.scripts, &key).await;
                Self::settle(result, &mut failure)?;
            }
        }
        let breakers: Vec<Arc<FleetBreaker>> = upgrade(&self.registry.breakers);
        // the breakers share the namespace's endpoints: none cuts another's
        // openings short of that one's longest cooldown
        let longest_ms = breakers
            .iter()
            .map(|b| b.template().config().max_cooldown_ms())
            .max()
            .unwrap_or(0);
        for breaker in breakers {
            let result = breaker
                .exchange(
                    &mut conn,
                    &self.scripts,
                    &self.prefix,
                    self.stale_ms,
                    longest_ms,
                    tick,
                )
                .await;
            Self::settle(result, &mut failure)?;
        }
        self.connection = Some(conn);
        failure.map_or(Ok(()), Err)
    }

    /// Notes the result of one part of a round: an error Redis refused the
    /// part with is kept in `failure` (the first one) and the round goes on;
    /// any other is returned, to end it.
    fn settle(result: Result<(), Error>, failure: &mut Option<Error>) -> Result<(), Error> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if refused(&e) => {
                if failure.is_none() {
                    *failure = Some(e);
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    async fn sync_evidence(&mut self, conn: &mut MultiplexedConnection) -> Result<(), Error> {
        let Some((sync, replica)) = &mut self.evidence else {
            return Ok(());
        };
        let s = &self.shared;
        let mut progress = sync.push(conn, &self.scripts, &self.authored).await?;
        if progress.resynced || progress.lost {
            // Redis lost the fleet's data, or some of this process's own
            // entries (expired while it was cut off, lost in a failover):
            // push everything held, at once
            s.resyncs.fetch_add(1, Ordering::AcqRel);
            let snapshot = replica.snapshot(self.clock.now_ms());
            let deferred = sync.collect(&snapshot, &mut self.authored);
            s.deferred.fetch_add(deferred, Ordering::AcqRel);
            progress.pushed += sync.push(conn, &self.scripts, &self.authored).await?.pushed;
        }
        s.pushed.fetch_add(progress.pushed, Ordering::AcqRel);
        let now_ms = self.clock.now_ms();
        let (snapshot, pulled) = sync.pull(conn, &self.scripts, now_ms).await?;
        if pulled.resynced || pulled.lost {
            s.resyncs.fetch_add(1, Ordering::AcqRel);
        }
        if !snapshot.is_empty() {
            replica.merge(&snapshot, now_ms);
        }
        s.pulled.fetch_add(pulled.pulled, Ordering::AcqRel);
        Ok(())
    }
}

/// The live members of a registry list.
fn upgrade<T>(list: &Mutex<Vec<Weak<T>>>) -> Vec<Arc<T>> {
    list.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(Weak::upgrade)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `reply` (a server's error line) makes.
    fn server_error(reply: &str) -> Error {
        let value = redis::parse_redis_value(format!("{reply}\r\n").as_bytes());
        Error::Redis(
            value
                .and_then(redis::Value::extract_error)
                .expect_err("an error reply"),
        )
    }

    #[test]
    fn a_key_of_the_wrong_type_is_refused() {
        for reply in [
            "-WRONGTYPE Operation against a key holding the wrong kind of value",
            "-WRONGTYPE Operation against a key holding the wrong kind of value. script: 1f, on @user_script:5.",
            "-ERR Error running script (call to f_1f): @user_script:5: WRONGTYPE Operation against a key holding the wrong kind of value",
            "-ERR user_script:12: attempt to perform arithmetic on a nil value",
        ] {
            assert!(refused(&server_error(reply)), "{reply}");
        }
    }

    #[test]
    fn a_server_that_will_not_run_the_scripts_is_away_not_refusing_data() {
        for reply in [
            "-ERR unknown command 'EVALSHA', with args beginning with: ",
            "-NOPERM User fleet has no permissions to run the 'evalsha' command",
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
            "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -NOPERM this user has no permissions to access one of the keys used as arguments ",
        ] {
            assert!(!refused(&server_error(reply)), "{reply}");
        }
    }

    #[test]
    fn a_value_a_command_cannot_read_is_refused() {
        for reply in [
            "-ERR hash value is not an integer",
            "-ERR value is not an integer or out of range",
            "-ERR Error running script (call to f_1f): @user_script:7: @user_script: 7: -ERR value is not a valid float ",
        ] {
            assert!(refused(&server_error(reply)), "{reply}");
        }
    }

    #[test]
    fn a_server_that_serves_nobody_is_away_whatever_its_version() {
        for reply in [
            // Redis 7 gives a script's error its own code
            "-READONLY You can't write against a read only replica. script: 1f, on @user_script:1.",
            "-OOM command not allowed when used memory > 'maxmemory'. script: 1f, on @user_script:1.",
            "-LOADING Redis is loading the dataset in memory",
            "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
            // Redis 6 and before wrap it in ERR
            "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -READONLY You can't write against a read only replica. ",
            "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -OOM command not allowed when used memory > 'maxmemory'. ",
            "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'. ",
            "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. ",
        ] {
            assert!(!refused(&server_error(reply)), "{reply}");
        }
    }

    #[test]
    fn a_round_s_error_is_told_by_what_an_operator_does_about_it() {
        let cases = [
            (
                "-NOPERM User fleet has no permissions to run the 'evalsha' command",
                SyncError::Auth,
            ),
            ("-NOAUTH Authentication required.", SyncError::Auth),
            (
                "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -NOPERM this user has no permissions to access one of the keys used as arguments ",
                SyncError::Auth,
            ),
            (
                "-READONLY You can't write against a read only replica.",
                SyncError::Unavailable,
            ),
            (
                "-LOADING Redis is loading the dataset in memory",
                SyncError::Unavailable,
            ),
            (
                "-ERR Error running script (call to f_1f): @user_script:1: @user_script: 1: -OOM command not allowed when used memory > 'maxmemory'. ",
                SyncError::Unavailable,
            ),
            (
                "-BUSY Redis is busy running a script.",
                SyncError::Unavailable,
            ),
            (
                "-ERR unknown command 'EVALSHA', with args beginning with: ",
                SyncError::Other,
            ),
        ];
        for (reply, kind) in cases {
            assert_eq!(kind_of(&server_error(reply), false), kind, "{reply}");
        }
        let io = |kind| Error::Redis(redis::RedisError::from(std::io::Error::from(kind)));
        assert_eq!(
            kind_of(&io(std::io::ErrorKind::ConnectionRefused), false),
            SyncError::Unreachable
        );
        assert_eq!(
            kind_of(&io(std::io::ErrorKind::ConnectionReset), false),
            SyncError::Unreachable
        );
        assert_eq!(
            kind_of(&io(std::io::ErrorKind::TimedOut), false),
            SyncError::Timeout
        );
        let wrong_type =
            server_error("-WRONGTYPE Operation against a key holding the wrong kind of value");
        assert_eq!(kind_of(&wrong_type, true), SyncError::Refused);
        assert_eq!(kind_of(&Error::Stopped, false), SyncError::Other);
    }
}
