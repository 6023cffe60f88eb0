//! [`FleetBudget`]: one retry budget for every process, leased from Redis.

use alloc::sync::Arc;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_budget::{Budget, Denied, FixedWindowConfig};
use bayesretry_policy::Clock;
use redis::aio::MultiplexedConnection;

use crate::error::Error;
use crate::fleet::Shared;
use crate::scripts::Scripts;
use crate::share::FairShare;
use crate::spends::{Refund, Spends};

/// The largest window, in milliseconds: about 31 years.
const MAX_WINDOW_MS: u64 = 1 << 40;

/// How a fleet budget's allowance per window is set.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    /// At most this much retry cost per window, fleet-wide.
    FixedWindow { max_cost: u32 },
    /// At most `floor + ratio × first attempts` per window, fleet-wide.
    Ratio { ratio: f64, floor: u32 },
}

/// The settings of a [`FleetBudget`]: the rule, its window, the lease size and
/// the local budget used while Redis is away.
///
/// # Default
///
/// - `lease`: a tenth of the allowance (at least 1) for a fixed window, the
///   floor's tenth (at least 1) for a ratio
/// - `fallback`: a local fixed window of the process's *fair share* of the
///   allowance (for a ratio, of its floor): the allowance divided by the
///   number of processes the fleet last saw sharing this budget
///   ([`FleetBudget::processes`]), the units the division leaves over taken
///   by turns — and the whole allowance until this process has reached
///   Redis once, since it cannot know how many share it before.
///
/// # The fair share
///
/// While Redis is away, a process cannot ask the fleet what is left, and
/// spends from its fallback alone. A fallback of the whole allowance (the
/// default before) let a fleet of `n` processes cut off from Redis together
/// spend up to `n` times it: twenty replicas, twenty allowances, just when
/// the provider they retry against may be the reason Redis went away. The
/// share brings that back to about one allowance. Each round a process
/// adds its budget's id to a sorted set in Redis, `{ns}:bp:<name>`, scored
/// with the server's time; ids not renewed for the fleet's
/// [`ttl`](crate::FleetConfig::with_ttl) (10 min by default) are dropped,
/// and a process that ends with [`Fleet::shutdown`](crate::Fleet::shutdown)
/// takes its own out at once. Processes that stopped without it count for a
/// while after, and make the shares smaller, the strict side: after a
/// rolling deploy the old and new replicas both count, until the old ones
/// age out.
///
/// It is a bound on each process, not a fleet-wide count: the processes'
/// fallback windows are aligned on their own clocks (not the server's),
/// and what the fleet leased in the window before Redis went away is not
/// taken off. A fleet cut off mid-window may then spend what was leased,
/// plus about an allowance from the fallbacks. The allowance seldom divides
/// evenly (`allowance = q · processes + r`): each window a process may spend
/// `q`, and one more in `r` windows of every `processes`, chosen by a hash
/// of the window's number and a draw of the process's own, so that the
/// fleet spends the allowance on average (not exactly: two processes may
/// take their turns in the same window). With more processes than the
/// allowance, `q` is 0 and a process spends 1 in a window now and then,
/// where a floor of 1 each let the fleet spend one per process. A process
/// that never reached Redis, not knowing its fleet, spends the whole
/// allowance.
/// [`with_fallback`](FleetBudgetConfig::with_fallback) replaces the share
/// with a budget of the caller's own.
#[derive(Clone)]
pub struct FleetBudgetConfig {
    name: String,
    rule: Rule,
    window_ms: u64,
    lease: Option<u32>,
    fallback: Option<Arc<dyn Budget + Send + Sync>>,
}

impl fmt::Debug for FleetBudgetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetBudgetConfig")
            .field("name", &self.name)
            .field("rule", &self.rule)
            .field("window_ms", &self.window_ms)
            .field("lease", &self.lease)
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

impl FleetBudgetConfig {
    /// At most `max_cost` of retry cost per `window`, for the whole fleet.
    /// `name` tells budgets apart within a namespace.
    ///
    /// Budgets of one name in one namespace are one budget: every process
    /// that makes one, of whatever service, draws on the same window's
    /// grants, each checking them against its own allowance. Processes
    /// sharing a name must agree on its rule, allowance and window; two
    /// services with settings of their own give their budgets names (or
    /// namespaces) of their own, or the one allowed more spends what the
    /// other was allowed.
    pub fn fixed_window(name: impl Into<String>, max_cost: u32, window: Duration) -> Self {
        FleetBudgetConfig {
            name: name.into(),
            rule: Rule::FixedWindow { max_cost },
            window_ms: u64::try_from(window.as_millis()).unwrap_or(u64::MAX),
            lease: None,
            fallback: None,
        }
    }

    /// At most `floor + ratio × first attempts` of retry cost per `window`,
    /// first attempts counted fleet-wide (each process's
    /// [`deposit`](Budget::deposit)s reach Redis with its next lease), each
    /// in the window it was made in.
    /// As for [`fixed_window`](FleetBudgetConfig::fixed_window), budgets of
    /// one name in one namespace are one budget, whose processes must agree
    /// on its settings.
    pub fn ratio(name: impl Into<String>, ratio: f64, floor: u32, window: Duration) -> Self {
        FleetBudgetConfig {
            name: name.into(),
            rule: Rule::Ratio { ratio, floor },
            window_ms: u64::try_from(window.as_millis()).unwrap_or(u64::MAX),
            lease: None,
            fallback: None,
        }
    }

    /// How much one lease asks for: larger leases mean fewer round trips and
    /// more of the allowance stranded in idle processes at a window's end
    /// (never more than the allowance is spent either way).
    pub fn with_lease(mut self, lease: u32) -> Self {
        self.lease = Some(lease);
        self
    }

    /// The budget a process spends from alone while it cannot reach Redis,
    /// in place of its fair share of the allowance (see the type's
    /// documentation).
    pub fn with_fallback(mut self, fallback: impl Budget + Send + Sync + 'static) -> Self {
        self.fallback = Some(Arc::new(fallback));
        self
    }

    fn check(&self) -> Result<(u32, Fallback), Error> {
        let bad = |why: String| Err(Error::InvalidBudget(why));
        if self.name.is_empty()
            || self
                .name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return bad(format!(
                "name must be non-empty without whitespace, got {:?}",
                self.name
            ));
        }
        if !(1..=MAX_WINDOW_MS).contains(&self.window_ms) {
            return bad(format!(
                "window must be 1 ms to {MAX_WINDOW_MS} ms, got {} ms",
                self.window_ms
            ));
        }
        let base = match self.rule {
            Rule::FixedWindow { max_cost: 0 } => {
                return bad(String::from("max_cost must be at least 1, got 0"));
            }
            Rule::FixedWindow { max_cost } => max_cost,
            Rule::Ratio { ratio, .. } if !(0.0..=1_000.0).contains(&ratio) => {
                return bad(format!("ratio must be between 0 and 1000, got {ratio}"));
            }
            Rule::Ratio { floor, .. } => floor,
        };
        let lease = match self.lease {
            Some(0) => return bad(String::from("lease must be at least 1, got 0")),
            Some(lease) => lease,
            None => (base / 10).max(1),
        };
        let fallback = match &self.fallback {
            Some(fallback) => Fallback {
                budget: fallback.clone(),
                share: None,
            },
            None => {
                let share = Arc::new(FairShare::new(
                    base.clamp(1, FixedWindowConfig::MAX_COST),
                    self.window_ms,
                ));
                Fallback {
                    budget: share.clone(),
                    share: Some(share),
                }
            }
        };
        Ok((lease, fallback))
    }
}

/// The budget a fleet budget spends from while Redis is away, and its fair
/// share when it is the default one.
struct Fallback {
    budget: Arc<dyn Budget + Send + Sync>,
    share: Option<Arc<FairShare>>,
}

/// A batch of deposits sent to Redis with a lease request.
#[derive(Debug, Clone, Copy)]
struct Batch {
    /// Its number among this budget's batches, from 1: Redis counts a batch
    /// numbered no higher than the last it counted of this budget for none.
    number: u64,
    /// First attempts made in window `of`.
    deposits: u64,
    /// First attempts made in the window after `of`.
    deposits_next: u64,
    /// The window of the lease held when it was made.
    of: Option<u64>,
}

/// The units of the current lease, and the window they belong to.
#[derive(Debug, Default)]
struct Lease {
    /// Units leased and not yet spent.
    units: u64,
    /// The server's window index they were granted in.
    window: Option<u64>,
    /// When (fleet clock) that window ends: units are void from then on.
    until_ms: u64,
    /// Whether the last lease got less than it asked: the window's allowance
    /// is all granted.
    exhausted: bool,
    /// Where the spends a refund may still give back came from.
    spends: Spends,
}

impl Lease {
    /// The units are void: their window is over, or a lease of another
    /// window replaces them. Their spends can no longer be given back.
    #[inline]
    fn void(&mut self) {
        self.units = 0;
        self.spends.roll();
    }
}

/// A retry budget shared by every process of a fleet: the sum of what they
/// spend in a window never exceeds its allowance, as long as Redis keeps its
/// record of the window's grants (a Redis that lost its data grants the
/// window's allowance again: see the
/// [consistency model](crate#consistency-model)).
///
/// # How
///
/// A spend never waits for Redis. Each process holds a *lease*: units granted
/// to it by an atomic script (see [the lease script](crate#keys-and-scripts))
/// that records every grant against the window's allowance, so grants never
/// add up to more than the allowance; a spend takes units from the lease
/// under a local lock. When the lease runs low the sync task asks for more at
/// once, not at the next interval, and when it is empty a spend is denied
/// until more arrive — the fleet errs toward too few retries, never too many.
/// A lease that finds the window all granted marks the budget exhausted: its
/// spends are then denied without asking, and the sync task asks again at
/// each interval round, for the units a process that shut down gave back
/// (and, for a ratio, the allowance its first attempts raised).
/// A spend costing more than the lease holds is denied as one finding it
/// empty, and the lease asked for then covers its cost, however much larger
/// than a lease, if the window has that much left: it is granted whole or
/// not at all (then only an ordinary lease), so a spend the window cannot
/// cover takes nothing from the other processes. One costing more than a
/// fixed window's whole allowance is refused without asking: no window
/// grants it. Units are void when their window ends (on the server's clock, read back
/// into the fleet's clock with the round trip taken off), so a window never
/// spends units of another.
///
/// While Redis cannot be reached, spends go to the local fallback budget
/// instead (see [`FleetBudgetConfig`]), and deposits wait to be counted.
///
/// A ratio budget's deposits count in the window they were made in, as far
/// as the process can tell from its last lease: those of the window it
/// holds a lease of, and of the one after it, go up with the next lease and
/// raise the allowance only if that is still their window. Deposits of an
/// earlier window, or made when the process knows no window (before its
/// first lease, or once Redis has been away for a window and more), raise
/// no window's: counted in the window a lease finally reaches, an outage's
/// worth of first attempts would let the fleet retry that many times just
/// as Redis, and often the provider, comes back. Such a deposit asks for a
/// lease at once, so that a process back from a quiet spell (no call for a
/// window and more) counts its first attempts again a round trip later. A
/// deposit is placed by the time it is given, which a policy reads from its
/// clock: the fleet's clock must be the policy's
/// ([`FleetConfig::with_clock`](crate::FleetConfig::with_clock)).
///
/// # Refunds
///
/// A policy charges a retry when it decides it, before the backoff; a retry
/// that is then not made — its call cancelled or dropped during the wait,
/// stopped after it by the breaker or the deadline — is given back with
/// [`Budget::refund`], at the time it was charged. A unit spent from the
/// current lease goes back to that lease, as long as the lease's window is
/// the one it was spent in: once the window has ended, or a lease of another
/// window has replaced it, its units are void and the refund gives nothing.
/// A unit spent from the fallback goes back to the fallback, which gives it
/// back if its own window still counts it. A refund never gives a lease
/// more than its window's spends took from it, given twice or for more than
/// was spent, and every unit it gives back is one Redis granted this
/// process: the fleet never spends more than its allowance. Without
/// refunds, cancellations would drain the fleet's allowance with no retry
/// going out.
///
/// A refund stays in the process: Redis is not told. Redis counts *grants*
/// (the units leased to each process), not spends: a unit given back to the
/// lease it came from is a unit Redis already counts against the window, so
/// the fleet's total stays within the allowance whatever refunds do, and a
/// refund costs no round trip. Handing units back to Redis for the other
/// processes would need a write that counts once however often a lost reply
/// makes it be sent, to give the fleet nothing a lease refill does not
/// already: the refunded unit is spent by this process's next retry, and
/// its lease asks for that much less at its next refill.
///
/// The budget tells where a spend came from by the time it was made, with a
/// few numbers kept beside the lease, under its lock: the cost the current
/// window's spends took and the first and last times they were made at,
/// the latest time of an earlier window's spend, and the first and last
/// times of the fallback's spends. Where those two stretches of time
/// overlap, it cannot tell the lease's spends from the fallback's, and a
/// refund there gives nothing back, the strict side: a fallback spend made
/// while Redis was away, when the lease's window spent before the outage
/// and again once Redis was back, or a lease spend between two of the
/// fallback's while the connection came and went. So does a refund whose
/// spend's time is no later than an earlier window's last spend (a caller
/// whose clock lagged when the lease changed windows), from the lease or
/// from the fallback.
///
/// Implements [`Budget`]: give it to a policy with
/// `Builder::with_shared_budget`.
///
/// ```
/// use std::time::Duration;
/// use bayesretry_policy::RetryPolicy;
/// use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let fleet = Fleet::without_evidence(FleetConfig::new("redis://127.0.0.1:6379"))?;
/// // At most 600 retries a minute, for all the fleet's processes together.
/// let budget = fleet.budget(
///     FleetBudgetConfig::fixed_window("llm-retries", 600, Duration::from_secs(60)).with_lease(10),
/// )?;
/// let policy = RetryPolicy::builder().with_shared_budget(budget.clone()).build()?;
/// # let _ = policy;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FleetBudget {
    pub(crate) name: String,
    rule: Rule,
    pub(crate) window_ms: u64,
    lease_size: u32,
    lease: Mutex<Lease>,
    /// First attempts made in the window of the current lease, not yet sent.
    deposits: AtomicU64,
    /// First attempts made in the window after it, not yet sent.
    deposits_next: AtomicU64,
    /// This budget's name among the fleet's processes, random: what Redis
    /// keeps the number of the last batch of deposits it counted under.
    id: String,
    /// Batches of deposits numbered so far.
    batches: AtomicU64,
    /// A batch whose request failed: Redis may have counted it (the reply
    /// was lost), so it is sent again as it was, under its own number, for
    /// Redis to count once.
    unconfirmed: Mutex<Option<Batch>>,
    /// When (fleet clock) the window of the current lease ends: 0 before
    /// the first lease. What a deposit reads to tell its window.
    window_end: AtomicU64,
    want: AtomicBool,
    /// The largest cost refused for want of leased units since the last
    /// lease was asked for: the next lease asks for at least that much.
    need: AtomicU64,
    spent: AtomicU64,
    fallback: Arc<dyn Budget + Send + Sync>,
    /// The default fallback, to set its share as the fleet is counted.
    share: Option<Arc<FairShare>>,
    /// The processes sharing this budget, as the fleet last counted them: 0
    /// before it has.
    processes: AtomicU64,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for FleetBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetBudget")
            .field("name", &self.name)
            .field("rule", &self.rule)
            .field("window_ms", &self.window_ms)
            .field("lease", &*self.lock())
            .finish_non_exhaustive()
    }
}

impl FleetBudget {
    pub(crate) fn new(
        config: FleetBudgetConfig,
        shared: Arc<Shared>,
        clock: Arc<dyn Clock>,
    ) -> Result<FleetBudget, Error> {
        let (lease_size, fallback) = config.check()?;
        Ok(FleetBudget {
            name: config.name,
            rule: config.rule,
            window_ms: config.window_ms,
            lease_size,
            lease: Mutex::new(Lease::default()),
            deposits: AtomicU64::new(0),
            deposits_next: AtomicU64::new(0),
            id: {
                use core::hash::BuildHasher;
                let draw = std::hash::RandomState::new().hash_one(config.window_ms);
                format!("{draw:016x}")
            },
            batches: AtomicU64::new(0),
            unconfirmed: Mutex::new(None),
            window_end: AtomicU64::new(0),
            // ask for a first lease at once
            want: AtomicBool::new(true),
            need: AtomicU64::new(0),
            spent: AtomicU64::new(0),
            fallback: fallback.budget,
            share: fallback.share,
            processes: AtomicU64::new(0),
            shared,
            clock,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Lease> {
        self.lease.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Units leased to this process and not yet spent, in the current window.
    pub fn leased(&self) -> u64 {
        let now = self.clock.now_ms();
        let lease = self.lock();
        if now < lease.until_ms { lease.units } else { 0 }
    }

    /// Whether the fleet has been granted the whole allowance of the current
    /// window and this process's lease is spent: no retry is possible until
    /// the window rolls, or a process that shuts down gives units back (as
    /// far as this process last heard: it asks again each interval round).
    pub fn is_exhausted(&self) -> bool {
        let now = self.clock.now_ms();
        let lease = self.lock();
        lease.exhausted && lease.units == 0 && now < lease.until_ms
    }

    /// The retry cost this process has spent from fleet leases, less what
    /// refunds gave back to them (fallback spends not included).
    pub fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }

    /// How many processes the fleet last saw sharing this budget (its
    /// budgets of this name in this namespace, one per process as a rule):
    /// those whose rounds reached Redis within the fleet's `ttl`, this one
    /// among them, as of this process's last round that reached Redis.
    /// `None` until one has. The default fallback's share divides the
    /// allowance by it (see [`FleetBudgetConfig`]).
    pub fn processes(&self) -> Option<u64> {
        match self.processes.load(Ordering::Acquire) {
            0 => None,
            n => Some(n),
        }
    }

    /// What the default fallback lets this process spend per window while
    /// Redis is away, at least: its fair share of the allowance, rounded
    /// down (0 with more processes than the allowance); the units the
    /// division leaves over go to the processes by turns, one more in some
    /// windows (see [`FleetBudgetConfig`]). `None` for a fallback of the
    /// caller's own ([`with_fallback`](FleetBudgetConfig::with_fallback)).
    pub fn fallback_share(&self) -> Option<u32> {
        self.share.as_ref().map(|share| share.share())
    }

    /// Whether the fleet has counted this budget's processes yet.
    pub(crate) fn counted(&self) -> bool {
        self.processes.load(Ordering::Acquire) > 0
    }

    /// Renews this process in the set of the budget's processes at `key`
    /// (see the members script), for `ttl_ms`, and sets
    /// the fallback's share from the count.
    pub(crate) async fn count(
        &self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        key: &str,
        ttl_ms: u64,
    ) -> Result<(), Error> {
        let processes: u64 = scripts
            .members
            .prepare_invoke()
            .arg(key)
            .arg(&self.id)
            .arg(ttl_ms)
            .invoke_async(conn)
            .await?;
        // this process is one of them, whatever the reply says
        let processes = processes.max(1);
        self.processes.store(processes, Ordering::Release);
        if let Some(share) = &self.share {
            share.set_processes(processes);
        }
        Ok(())
    }

    /// At the process's shutdown: gives the unspent units of the current
    /// lease back to their window (the return script, at `lease_key`), and
    /// takes this process out of the budget's processes (`members_key`), so
    /// that neither waits for its window or the fleet's `ttl` to end. The
    /// lease is void from here on, whether Redis took its units back or not:
    /// a unit is never both given back and spent.
    ///
    /// # Errors
    ///
    /// The first Redis error of the two; the second is tried all the same.
    pub(crate) async fn leave(
        &self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        lease_key: &str,
        members_key: &str,
    ) -> Result<(), Error> {
        let now = self.clock.now_ms();
        let (units, window) = {
            let mut lease = self.lock();
            let units = if now < lease.until_ms { lease.units } else { 0 };
            let window = lease.window;
            lease.void();
            (units, window)
        };
        let mut failure = None;
        if let (true, Some(window)) = (units > 0, window) {
            let given: redis::RedisResult<u64> = scripts
                .lease_return
                .prepare_invoke()
                .arg(lease_key)
                .arg(window)
                .arg(units)
                .invoke_async(conn)
                .await;
            if let Err(e) = given {
                failure = Some(Error::from(e));
            }
        }
        let left: redis::RedisResult<u64> = redis::cmd("ZREM")
            .arg(members_key)
            .arg(&self.id)
            .query_async(conn)
            .await;
        match (failure, left) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(e.into()),
            (None, Ok(_)) => Ok(()),
        }
    }

    /// Whether the sync task should ask for a lease (or flush deposits).
    ///
    /// `tick` is true on the interval's rounds (as opposed to a wake-up): an
    /// exhausted budget asks again only then, without a round trip per
    /// denied spend. A ratio's deposits may have raised its allowance, and a
    /// process that shut down may have given its lease back to the window
    /// ([`Fleet::shutdown`](crate::Fleet::shutdown)), for a fixed window as
    /// for a ratio: asking only once the window rolled, a process that found
    /// the window all granted refused every retry until then while the
    /// units given back lay in Redis.
    pub(crate) fn needs_lease(&self, tick: bool) -> bool {
        if self.want.load(Ordering::Acquire)
            || self.unconfirmed_batch().is_some()
            || self.deposits.load(Ordering::Relaxed) > 0
            || self.deposits_next.load(Ordering::Relaxed) > 0
        {
            return true;
        }
        tick && self.lock().exhausted
    }

    /// Asks Redis for a lease (and reports deposits).
    pub(crate) async fn refill(
        &self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        key: &str,
    ) -> Result<(), Error> {
        // A batch whose request failed goes first, as it was and for no
        // units: Redis counts it once, whether or not it ran it before. Sent
        // after a newer batch, it would be taken for one counted already.
        let unconfirmed = self.unconfirmed_batch().take();
        if let Some(batch) = unconfirmed {
            let sent = self.invoke(conn, scripts, key, 0, 0, &batch).await;
            if let Err(e) = sent {
                *self.unconfirmed_batch() = Some(batch);
                self.want.store(true, Ordering::Release);
                return Err(e.into());
            }
        }
        let sent_at = self.clock.now_ms();
        let (held, of) = {
            let lease = self.lock();
            let held = if sent_at < lease.until_ms {
                lease.units
            } else {
                0
            };
            (held, lease.window)
        };
        // A lease; or enough for the largest spend refused meanwhile, even
        // above a lease, granted whole or not at all: a part would leave
        // the spend refused, and the fleet short of what this process holds.
        let need = self.need.swap(0, Ordering::AcqRel);
        let want = u64::from(self.lease_size).saturating_sub(held);
        let whole = if need > held {
            u64::from(self.lease_size).max(need) - held
        } else {
            0
        };
        // deposits of the lease's window `of`, and of the one after it: the
        // script counts them only in their own window
        let batch = Batch {
            number: self
                .batches
                .fetch_add(1, Ordering::AcqRel)
                .saturating_add(1),
            deposits: self.deposits.swap(0, Ordering::AcqRel),
            deposits_next: self.deposits_next.swap(0, Ordering::AcqRel),
            of,
        };
        self.want.store(false, Ordering::Release);
        let reply = self.invoke(conn, scripts, key, want, whole, &batch).await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                // Redis may have counted the deposits (a lost reply): sent
                // again as this batch, first thing at the next request
                if batch.deposits > 0 || batch.deposits_next > 0 {
                    *self.unconfirmed_batch() = Some(batch);
                }
                self.need.fetch_max(need, Ordering::AcqRel);
                self.want.store(true, Ordering::Release);
                return Err(e.into());
            }
        };
        let [granted, remaining_ms, window] = reply.as_slice() else {
            return Err(Error::Reply(format!("lease returned {reply:?}")));
        };
        let mut lease = self.lock();
        if lease.window != Some(*window) || sent_at >= lease.until_ms {
            lease.void();
        }
        lease.window = Some(*window);
        lease.units = lease.units.saturating_add(*granted);
        // the window ends `remaining_ms` after the server ran the script, which
        // was after `sent_at`: counting from `sent_at` never overshoots
        lease.until_ms = sent_at.saturating_add(*remaining_ms);
        self.window_end.store(lease.until_ms, Ordering::Release);
        lease.exhausted = *granted < want;
        Ok(())
    }

    /// Runs the lease script for `want` units (`whole`: see the script) and
    /// the deposits of `batch`.
    async fn invoke(
        &self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        key: &str,
        want: u64,
        whole: u64,
        batch: &Batch,
    ) -> redis::RedisResult<Vec<u64>> {
        let (mode, base, ratio) = match self.rule {
            Rule::FixedWindow { max_cost } => ("w", max_cost, 0.0),
            Rule::Ratio { ratio, floor } => ("r", floor, ratio),
        };
        scripts
            .lease
            .prepare_invoke()
            .arg(key)
            .arg(self.window_ms)
            .arg(mode)
            .arg(base)
            .arg(ratio)
            .arg(want)
            .arg(batch.deposits)
            .arg(whole)
            .arg(batch.of.map_or_else(String::new, |of| of.to_string()))
            .arg(batch.deposits_next)
            .arg(&self.id)
            .arg(batch.number)
            .invoke_async(conn)
            .await
    }

    fn unconfirmed_batch(&self) -> MutexGuard<'_, Option<Batch>> {
        self.unconfirmed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn ask(&self) {
        if !self.want.swap(true, Ordering::AcqRel) {
            self.shared.wake.notify_one();
        }
    }
}

impl Budget for FleetBudget {
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        if cost == 0 {
            return Ok(());
        }
        let now = self.clock.now_ms();
        let mut lease = self.lock();
        if now >= lease.until_ms {
            lease.void();
        }
        if lease.units >= u64::from(cost) {
            lease.units -= u64::from(cost);
            // where the spend came from, for its refund; `spent` counted under
            // the lock, so that a refund never takes off what is not counted
            lease.spends.took(now_ms, u64::from(cost));
            self.spent.fetch_add(u64::from(cost), Ordering::Relaxed);
            let low = lease.units * 2 < u64::from(self.lease_size);
            let exhausted = lease.exhausted;
            drop(lease);
            if low && !exhausted {
                self.ask();
            }
            return Ok(());
        }
        let (until, exhausted) = (lease.until_ms, lease.exhausted);
        drop(lease);
        if !self.shared.connected.load(Ordering::Acquire) {
            let granted = self.fallback.try_spend(now_ms, cost);
            if granted.is_ok() {
                self.lock().spends.fell_back(now_ms);
            }
            return granted;
        }
        if exhausted && now < until {
            // asked again on the interval by the sync task: until then no
            // unit is back (a process that shut down gave its lease back)
            // nor more first attempts counted (a ratio)
            return Err(Denied::exhausted(until));
        }
        if let Rule::FixedWindow { max_cost } = self.rule {
            if cost > max_cost {
                // no window of the fleet's ever grants it: asking would only
                // take units from the other processes
                return Err(Denied::exhausted(now.saturating_add(self.window_ms)));
            }
        }
        self.need.fetch_max(u64::from(cost), Ordering::AcqRel);
        self.ask();
        let interval = u64::try_from(self.shared.interval.as_millis()).unwrap_or(u64::MAX);
        Err(Denied::exhausted(now.saturating_add(interval)))
    }

    fn deposit(&self, now_ms: u64) {
        if matches!(self.rule, Rule::Ratio { .. }) {
            // the window it is made in, told from the last lease's end;
            // one of no window known raises none (see the type's docs).
            // `now_ms` is the caller's reading of the fleet's clock (the
            // policy's, `FleetConfig::with_clock`): a first attempt is on a
            // policy's hot path, and reading the clock again here would
            // cost every one of them a second reading.
            let end = self.window_end.load(Ordering::Acquire);
            if now_ms < end {
                self.deposits.fetch_add(1, Ordering::Relaxed);
            } else if end > 0 && now_ms < end.saturating_add(self.window_ms) {
                self.deposits_next.fetch_add(1, Ordering::Relaxed);
            } else {
                // No window known: a lease tells it, a round trip away.
                // Unasked, a process that went quiet for a window and more
                // would count none of its first attempts until a retry
                // happened to ask: only the floor, when an outage begins.
                self.ask();
            }
        }
        self.fallback.deposit(now_ms);
    }

    /// Gives back `cost` of a spend granted at `spent_at_ms` whose retry was
    /// not made: to the current lease if it was spent from it, while its
    /// window lasts; to the fallback if it was spent from that (which gives
    /// it back if its own window still counts it); else nowhere. See the
    /// type's documentation, under *Refunds*.
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        if cost == 0 {
            return;
        }
        let now = self.clock.now_ms();
        let mut lease = self.lock();
        if now >= lease.until_ms {
            lease.void();
        }
        match lease.spends.refund(spent_at_ms, u64::from(cost)) {
            Refund::Lease(back) => {
                lease.units = lease.units.saturating_add(back);
                // every spend `back` is part of was counted under this lock
                self.spent.fetch_sub(back, Ordering::Relaxed);
            }
            Refund::Fallback => {
                drop(lease);
                self.fallback.refund(spent_at_ms, cost);
            }
            Refund::Kept => {}
        }
    }
}
