//! [`FleetBreaker`]: a breaker per endpoint whose open state is the fleet's.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::fmt;
use core::num::NonZeroUsize;
use std::collections::{HashMap, HashSet};
use std::hash::RandomState;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_breaker::{
    Admission, Breaker, FleetView, KeyedBreaker, ProbeRound, State, Transition,
};
use bayesretry_policy::Clock;
use core::hash::BuildHasher;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use redis::aio::MultiplexedConnection;

use crate::error::Error;
use crate::fleet::Shared;
use crate::scripts::Scripts;

/// The most endpoints a fleet breaker tracks, locally and in its fleet view.
const MAX_ENDPOINTS: usize = 4_096;
/// The most publications waiting for the sync task; beyond, the oldest wait
/// is not extended (a newer one of the same kind follows).
const MAX_OUTBOX: usize = 4_096;
/// The most probes of an endpoint handed out and awaiting their outcome;
/// beyond, the oldest is given up on (its outcome would be of a past round).
const MAX_PROBES_OUT: usize = 64;

/// The fleet's view of one endpoint, as last pulled (or as this process just
/// made it).
#[derive(Debug)]
struct Fleetwide {
    name: String,
    /// Open until this time on the fleet clock.
    open_until: Option<u64>,
    /// Cooldown over, not yet closed: calls need a probe claimed from Redis.
    probing: bool,
    /// Probes claimed and not yet handed out, each by the round it was
    /// claimed in.
    permits: Vec<String>,
    /// A call found no permit: claim one at once.
    want_permit: bool,
    /// When (fleet clock) a call finding no permit may claim one again: a
    /// claim that got none says how long until that may change, up to an
    /// interval, so that a busy process does not claim at every call.
    claim_after_ms: u64,
    /// Probes handed out whose outcome has not been recorded, oldest first:
    /// each by the number it was handed out under ([`ProbeRound::NONE`]
    /// from [`FleetBreaker::check`], which numbers none: an outcome
    /// recorded there is taken for the oldest's), the round it was
    /// claimed in, and the [`openings`](Fleetwide::openings) seen when it
    /// was handed out.
    probes_out: VecDeque<(ProbeRound, String, u64)>,
    /// Openings seen here so far, each of which ends the probe round
    /// before it (a fleet opening or reopening begins a new round): a probe
    /// handed out carries the count, so that one given back after a later
    /// opening ([`FleetView::release_probe`]) frees nothing of the round
    /// that opening began, as the probes held are voided with it.
    openings: u64,
    /// The full cooldown of this process's last local opening (0: none):
    /// what an opening published again asks the fleet to back off from.
    cooldown_ms: u64,
    /// Until when (fleet clock) a policy's own breaker holds the endpoint
    /// open, as it told through [`FleetView::publish`]: the local opening
    /// that a breaker used through the seam keeps no `KeyedBreaker` for.
    told_open_until: Option<u64>,
}

impl Fleetwide {
    fn new(name: &str) -> Fleetwide {
        Fleetwide {
            name: name.to_owned(),
            open_until: None,
            probing: false,
            permits: Vec::new(),
            want_permit: false,
            claim_after_ms: 0,
            probes_out: VecDeque::new(),
            openings: 0,
            cooldown_ms: 0,
            told_open_until: None,
        }
    }

    /// Hands out a probe claimed from Redis, under `id`, if one is held.
    fn take_permit(&mut self, id: ProbeRound) {
        let Some(round) = self.permits.pop() else {
            return;
        };
        if self.probes_out.len() >= MAX_PROBES_OUT {
            self.probes_out.pop_front();
        }
        self.probes_out.push_back((id, round, self.openings));
    }

    /// The endpoint opened (again) for the fleet: the probes claimed and
    /// held are of the round that opening ended, and so are those handed
    /// out and not yet back, which a return then frees nothing of.
    fn void_permits(&mut self) {
        self.permits.clear();
        self.openings = self.openings.wrapping_add(1);
    }

    /// Whether this process's own breaker holds the endpoint open at `now`
    /// (fleet clock), as told through the seam.
    fn told_open(&self, now: u64) -> Option<u64> {
        self.told_open_until.filter(|&until_ms| until_ms > now)
    }
}

/// A change waiting to be published.
#[derive(Debug, Clone, PartialEq)]
enum Message {
    /// The local breaker opened until `until_ms` on the fleet clock, for a
    /// cooldown of `cooldown_ms`: sent as the time left then, if the
    /// endpoint is still open here, with the full cooldown (the base of the
    /// backoff after a failed probe, and the length of a probe round).
    Open {
        endpoint: String,
        until_ms: u64,
        cooldown_ms: u64,
    },
    /// A server asked this process to send the endpoint nothing until
    /// `until_ms` on the fleet clock: sent as the time left then, if any.
    Hold { endpoint: String, until_ms: u64 },
    ProbeResult {
        endpoint: String,
        success: bool,
        /// The round the probe was claimed in: the fleet ignores the outcome
        /// of a probe of a round that has ended.
        round: String,
        /// This report's own name, random: a report sent again after its
        /// reply was lost (Redis may have counted it) carries the same one,
        /// and the fleet counts a success once per token.
        token: String,
    },
}

impl Message {
    fn endpoint(&self) -> &str {
        match self {
            Message::Open { endpoint, .. }
            | Message::Hold { endpoint, .. }
            | Message::ProbeResult { endpoint, .. } => endpoint,
        }
    }
}

/// A circuit breaker per endpoint, shared by a fleet: an endpoint opened by
/// one process is open for every process within one sync interval, and its
/// half-open probes are counted fleet-wide.
///
/// # How
///
/// Each process weighs its own outcomes with a local [`Breaker`] per
/// endpoint (the posterior rule of `bayesretry-breaker`): a policy's own,
/// when the fleet breaker is the policy's shared breaker (see below), or
/// else one the fleet breaker keeps. When one opens, the
/// process refuses the endpoint at once and wakes its sync task, which
/// publishes the opening (an atomic script that keeps the later cooldown end,
/// on the server's clock); every other process learns it at its next round.
/// When the cooldown ends, a call needs a *probe* claimed from Redis, where a
/// counter admits at most `max_probes` per round for the whole fleet; a
/// process without one refuses the call and claims one at once for the next.
/// Probe outcomes go to Redis: a failure reopens the endpoint for everyone
/// with the cooldown backed off, `probes_to_close` successes close it for
/// everyone — and each process then resets its local breaker, as a local
/// close would. An outcome counts only in the round its probe was claimed
/// in: a success reported after another probe's failure reopened the
/// endpoint does not close it. A success counts once: each report carries a
/// token, so one sent again after its reply was lost (Redis may have counted
/// it) is not counted again, and `probes_to_close` successes take as many
/// probes.
///
/// [`check`](FleetBreaker::check) and [`record`](FleetBreaker::record) never
/// wait for Redis. While it cannot be reached, each process runs its local
/// breakers alone, with their own half-open probes (still refusing an
/// endpoint the fleet was last known to hold open). An opening made then is
/// published when Redis is back, for the time its cooldown has left, unless
/// it has ended or the local breaker has closed meanwhile. An endpoint that
/// Redis lost (a restart without persistence) stays open in each process
/// whose own breaker opened it, and is published again.
///
/// # Beside a `RetryPolicy`
///
/// A `RetryPolicy` keeps a breaker of its own per endpoint, and takes a fleet
/// breaker as its shared one (`Builder::with_shared_breaker`; the breaker is
/// a [`FleetView`]): the policy asks it after its own breaker admits each
/// attempt, tells it each attempt's outcome and each opening of its own
/// breaker, and hands back a probe whose attempt was never sent. Used so,
/// the fleet breaker keeps no local breaker of its own: the policy's is the
/// process's judge, and the fleet breaker publishes what it decides (see the
/// [`FleetView` impl](#impl-FleetView-for-FleetBreaker)).
///
/// ```
/// use std::time::Duration;
/// use bayesretry_breaker::{Config, FleetView};
/// use bayesretry_policy::{HttpStatus, RetryErrorKind, RetryPolicy};
/// use bayesretry_redis::{Fleet, FleetConfig};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let config = FleetConfig::new("redis://127.0.0.1:1") // nothing listens: Redis is down
///     .with_connect_timeout(Duration::from_millis(50));
/// let fleet = Fleet::without_evidence(config)?;
/// let rules = Config::new().with_min_strength(5.0).with_open_below(0.5);
/// let breaker = fleet.breaker(rules)?;
/// let policy = RetryPolicy::builder()
///     .with_breaker(rules) // the process's own, which tells the fleet's
///     .with_shared_breaker(breaker.clone())
///     .with_max_attempts(1)
///     .build()?;
/// for _ in 0..20 {
///     let _ = policy.run_blocking("payments", |_| Err::<(), _>(HttpStatus(503)));
/// }
/// // The policy's breaker opened and told the fleet's, which publishes the
/// // opening once Redis is reachable, and refuses meanwhile.
/// assert!(breaker.is_open_fleetwide("payments"));
/// assert!(!breaker.admit("payments", policy.now_ms()).is_allowed());
/// let refused = policy.run_blocking("payments", |_| Ok::<(), HttpStatus>(()));
/// assert!(matches!(refused.unwrap_err().kind(), RetryErrorKind::CircuitOpen { .. }));
/// assert!(breaker.admit("search", policy.now_ms()).is_allowed());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # On its own
///
/// Without a policy's breaker, [`check`](FleetBreaker::check) before a call
/// and [`record`](FleetBreaker::record) after it run a local breaker per
/// endpoint (the posterior rule of `bayesretry-breaker`) and share its
/// verdicts in the same way:
///
/// ```
/// use bayesretry_breaker::Config;
/// use bayesretry_redis::{Fleet, FleetConfig};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let fleet = Fleet::without_evidence(FleetConfig::new("redis://127.0.0.1:1"))?;
/// let breaker = fleet.breaker(Config::new().with_min_strength(5.0).with_open_below(0.5))?;
/// let call = |up: bool| if up { Ok(()) } else { Err("503") };
/// for _ in 0..20 {
///     if breaker.check("payments").is_allowed() {
///         let outcome = call(false);
///         breaker.record("payments", outcome.is_ok());
///     }
/// }
/// // Redis is unreachable here, so the local breaker alone opened.
/// assert!(!breaker.check("payments").is_allowed());
/// assert!(breaker.check("search").is_allowed());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FleetBreaker {
    local: KeyedBreaker<u64>,
    template: Breaker,
    keys: RandomState,
    fleet: Mutex<HashMap<u64, Fleetwide>>,
    outbox: Mutex<Vec<Message>>,
    /// Probe outcomes reported so far: what a report's token is drawn from.
    reports: AtomicU64,
    /// Probes handed out through [`FleetView::admit`] so far: each is
    /// numbered, so that its outcome, or its return, finds it.
    probes: AtomicU64,
    /// Until when (fleet clock) a server's wait holds each endpoint, as this
    /// process was told ([`FleetView::hold`]) or last pulled from the fleet.
    holds: Mutex<HashMap<u64, u64>>,
    /// Whether `holds` may hold one: what [`FleetView::held_until`] reads,
    /// in one load, before it takes the lock or reads the clock.
    holding: AtomicBool,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for FleetBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetBreaker")
            .field("template", &self.template)
            .field("endpoints", &lock(&self.fleet).len())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FleetBreaker {
    /// The longest `max_cooldown_ms` a fleet breaker takes: 2⁴⁰ ms, about 34
    /// years, the bound of a fleet's [`ttl`](crate::FleetConfig::MAX_TTL)
    /// and of a budget's window.
    ///
    /// The fleet writes an opening's end in Redis as a whole number of ms of
    /// at most fifteen digits (past that, a Lua number is no longer exact
    /// enough to count rounds by), and gives a probe round's counter the
    /// held cooldown, capped at the longest, as its time to live. A cooldown
    /// of more than about 30 000 years, or one backed off that far, wrote an
    /// end every process took for a garbled one, and forgot: the fleet never
    /// held the endpoint open. With a longest cooldown past `i64::MAX` ms, a
    /// held cooldown that long (written by hand) had Redis refuse the
    /// counter's time to live, and every claim of a probe failed. Such a
    /// setting is refused when the breaker is made, rather than let the
    /// fleet's breaker fail once the endpoint goes down; and since no process
    /// writes an end further off than its longest cooldown, one found in
    /// Redis is cut to it (see the
    /// [consistency model](crate#consistency-model), on keys written by
    /// something else).
    pub const MAX_COOLDOWN_MS: u64 = 1 << 40;

    /// The longest server's hold a fleet breaker shares or takes
    /// ([`FleetView::hold`]): 2⁴⁰ ms, as [`MAX_COOLDOWN_MS`](FleetBreaker::MAX_COOLDOWN_MS),
    /// for the same reason (an end Redis holds is a whole number of ms of
    /// at most fifteen digits). A policy's own limit on a server's wait is
    /// far shorter.
    pub const MAX_HOLD_MS: u64 = 1 << 40;

    pub(crate) fn new(
        config: bayesretry_breaker::Config,
        shared: Arc<Shared>,
        clock: Arc<dyn Clock>,
    ) -> Result<FleetBreaker, Error> {
        let template = config.build()?;
        if config.max_cooldown_ms() > FleetBreaker::MAX_COOLDOWN_MS {
            return Err(Error::InvalidMaxCooldown(config.max_cooldown_ms()));
        }
        let max = NonZeroUsize::new(MAX_ENDPOINTS).unwrap_or(NonZeroUsize::MIN);
        Ok(FleetBreaker {
            local: KeyedBreaker::new(template, max),
            template,
            keys: RandomState::new(),
            fleet: Mutex::new(HashMap::new()),
            outbox: Mutex::new(Vec::new()),
            reports: AtomicU64::new(0),
            probes: AtomicU64::new(0),
            holds: Mutex::new(HashMap::new()),
            holding: AtomicBool::new(false),
            shared,
            clock,
        })
    }

    /// May a call to `endpoint` be made now? Never waits for Redis.
    pub fn check(&self, endpoint: &str) -> Admission {
        let now = self.clock.now_ms();
        let key = self.keys.hash_one(endpoint);
        let connected = self.shared.connected.load(Ordering::Acquire);
        if let Some(verdict) = self.fleet_verdict(key, now, connected, false) {
            return verdict;
        }
        if connected {
            Admission::Allowed
        } else {
            self.local.check(&key, now)
        }
    }

    /// What the fleet, as last heard, says of a call to the endpoint of
    /// `key` at `now` (fleet clock): `None` when it has no opinion (the
    /// endpoint is not open or half-open for the fleet, or is half-open
    /// while Redis is away, when probes cannot be claimed). A probe handed
    /// out is noted under a number of its own if `numbered` (for
    /// [`FleetView`], which is given it back), [`ProbeRound::NONE`] if not.
    fn fleet_verdict(
        &self,
        key: u64,
        now: u64,
        connected: bool,
        numbered: bool,
    ) -> Option<Admission> {
        let mut fleet = lock(&self.fleet);
        let state = fleet.get_mut(&key)?;
        if let Some(until_ms) = state.open_until {
            if now < until_ms {
                return Some(Admission::Rejected { until_ms });
            }
            // The cooldown ended since the last round: the endpoint is
            // half-open for the fleet, not closed, until Redis says
            // otherwise. Taken for closed, every process would admit all its
            // calls until its next round.
            state.open_until = None;
            state.probing = true;
        }
        if !(state.probing && connected) {
            return None;
        }
        if !state.permits.is_empty() {
            // the fleet's probe, claimed from Redis: under a number of its
            // own for a caller that hands it back, `NONE` for `check`'s,
            // whose outcome is taken for the oldest's
            let id = match numbered {
                // from 1: `ProbeRound::NONE` is no probe's
                true => ProbeRound::numbered(
                    self.probes.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
                ),
                false => ProbeRound::NONE,
            };
            state.take_permit(id);
            return Some(Admission::Probe {
                half_opened: false,
                round: id,
            });
        }
        if !state.want_permit && now >= state.claim_after_ms {
            state.want_permit = true;
            self.shared.wake.notify_one();
        }
        let interval = u64::try_from(self.shared.interval.as_millis()).unwrap_or(u64::MAX);
        Some(Admission::Rejected {
            until_ms: now.saturating_add(interval),
        })
    }

    /// Records the outcome of a call to `endpoint`; returns the local
    /// breaker's transition, if any. An opening is published to the fleet at
    /// once (by the sync task, without waiting here).
    pub fn record(&self, endpoint: &str, success: bool) -> Option<Transition> {
        let now = self.clock.now_ms();
        let key = self.keys.hash_one(endpoint);
        let transition = self.local.record(&key, now, success);
        let mut messages = Vec::new();
        {
            let mut fleet = lock(&self.fleet);
            if let Some(state) = fleet.get_mut(&key) {
                if let Some((_, round, _)) = state.probes_out.pop_front() {
                    messages.push(self.probe_result(key, endpoint, success, round));
                }
            }
            let opened = match transition {
                Some(Transition::Opened { until_ms }) => {
                    Some((until_ms, until_ms.saturating_sub(now)))
                }
                Some(Transition::Reopened {
                    until_ms,
                    cooldown_ms,
                }) => Some((until_ms, cooldown_ms)),
                _ => None,
            };
            if let Some((until_ms, cooldown_ms)) = opened {
                if fleet.len() < MAX_ENDPOINTS || fleet.contains_key(&key) {
                    let state = fleet.entry(key).or_insert_with(|| Fleetwide::new(endpoint));
                    state.open_until = Some(until_ms);
                    state.probing = false;
                    state.void_permits();
                    state.cooldown_ms = cooldown_ms;
                }
                messages.push(Message::Open {
                    endpoint: endpoint.to_owned(),
                    until_ms,
                    cooldown_ms,
                });
            }
        }
        self.post(messages);
        transition
    }

    /// The report of a probe of `round`'s outcome for the fleet.
    fn probe_result(&self, key: u64, endpoint: &str, success: bool, round: String) -> Message {
        // unique to this report: the count of reports, hashed with keys
        // drawn at random for this breaker
        let n = self.reports.fetch_add(1, Ordering::Relaxed);
        let token = format!("{:016x}", self.keys.hash_one((key, n)));
        Message::ProbeResult {
            endpoint: endpoint.to_owned(),
            success,
            round,
            token,
        }
    }

    /// Whether the fleet holds `endpoint` open (or half-open), as this
    /// process last heard.
    pub fn is_open_fleetwide(&self, endpoint: &str) -> bool {
        let key = self.keys.hash_one(endpoint);
        lock(&self.fleet)
            .get(&key)
            .is_some_and(|s| s.open_until.is_some() || s.probing)
    }

    /// The settings every endpoint's breaker starts from.
    pub const fn template(&self) -> &Breaker {
        &self.template
    }

    /// Publishes what waits, pulls the fleet's open endpoints, claims the
    /// probes wanted. `tick` is false on a wake-up: the pull waits for the
    /// interval. `longest_ms` is the longest cooldown of the process's
    /// breakers, which share the namespace's endpoints: an end the pull, an
    /// opening or a claim finds further off is cut to it (see the scripts),
    /// and one of another breaker's openings is no further off. Not this
    /// breaker's own longest: an opening, or a claim on a view from before
    /// another breaker's opening, would cut that opening to it.
    pub(crate) async fn exchange(
        &self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        prefix: &str,
        stale_ms: u64,
        longest_ms: u64,
        tick: bool,
    ) -> Result<(), Error> {
        let config = self.template.config();
        let outbox: Vec<Message> = core::mem::take(&mut *lock(&self.outbox));
        for (i, message) in outbox.iter().enumerate() {
            let sent = match message {
                Message::Open {
                    endpoint,
                    until_ms,
                    cooldown_ms,
                } => {
                    // Queued while Redis was away, an opening may have
                    // ended, or the local breaker probed the endpoint and
                    // closed: published late, it would open a healthy
                    // endpoint for the fleet. Otherwise it goes up for the
                    // time it has left, not a fresh cooldown, with its full
                    // cooldown for the backoff. An endpoint this breaker
                    // had no room to track (an opening told through the
                    // seam, which keeps no local breaker, past
                    // `MAX_ENDPOINTS`) leaves nothing to look at: its
                    // opening goes up for the time it has left, as its
                    // breaker can close only once that has run out.
                    let now = self.clock.now_ms();
                    let key = self.keys.hash_one(endpoint.as_str());
                    let open_here = matches!(self.local.state(&key), Some(State::Open { .. }))
                        || lock(&self.fleet)
                            .get(&key)
                            .is_none_or(|state| state.told_open(now).is_some());
                    if !open_here || *until_ms <= now {
                        continue;
                    }
                    scripts
                        .breaker_open
                        .prepare_invoke()
                        .arg(prefix)
                        .arg(endpoint)
                        .arg(until_ms - now)
                        .arg((*cooldown_ms).max(until_ms - now))
                        .arg(config.max_cooldown_ms())
                        .arg(longest_ms)
                        .invoke_async::<i64>(conn)
                        .await
                }
                Message::Hold { endpoint, until_ms } => {
                    // sent for the time it has left, if any
                    let now = self.clock.now_ms();
                    if *until_ms <= now {
                        continue;
                    }
                    scripts
                        .breaker_hold
                        .prepare_invoke()
                        .arg(prefix)
                        .arg(endpoint)
                        .arg((until_ms - now).min(FleetBreaker::MAX_HOLD_MS))
                        .invoke_async::<i64>(conn)
                        .await
                }
                Message::ProbeResult {
                    endpoint,
                    success,
                    round,
                    token,
                } => scripts
                    .breaker_result
                    .prepare_invoke()
                    .arg(prefix)
                    .arg(endpoint)
                    .arg(if *success { "1" } else { "0" })
                    .arg(config.probes_to_close())
                    .arg(config.cooldown_factor())
                    .arg(config.max_cooldown_ms())
                    .arg(round)
                    .arg(config.cooldown_ms())
                    .arg(token)
                    .arg(stale_ms)
                    .invoke_async::<String>(conn)
                    .await
                    .map(|_| 0),
            };
            if let Err(e) = sent {
                // put back what was not sent, ahead of anything newer
                let mut held = lock(&self.outbox);
                let rest: Vec<Message> = outbox.get(i..).unwrap_or_default().to_vec();
                held.splice(0..0, rest);
                held.truncate(MAX_OUTBOX);
                return Err(e.into());
            }
        }
        if tick {
            // bytes, not text: an endpoint that is not UTF-8 (written by
            // hand: no process names one) would fail the whole reply, and
            // every round of every process with it
            let reply: Vec<Vec<u8>> = scripts
                .breaker_state
                .prepare_invoke()
                .arg(prefix)
                .arg(stale_ms)
                .arg(longest_ms)
                .invoke_async(conn)
                .await?;
            self.apply_state(&reply);
        }
        let wanted: Vec<(u64, String)> = lock(&self.fleet)
            .iter_mut()
            .filter(|(_, s)| s.want_permit)
            .map(|(k, s)| {
                s.want_permit = false;
                (*k, s.name.clone())
            })
            .collect();
        for (key, endpoint) in wanted {
            // text: the claim script names a round with a whole number (it
            // begins a new round in place of anything else), so its reply is
            // ASCII
            let claimed: Vec<String> = scripts
                .breaker_claim
                .prepare_invoke()
                .arg(prefix)
                .arg(&endpoint)
                .arg(config.max_probes())
                .arg(config.cooldown_ms())
                .arg(config.max_cooldown_ms())
                .arg(longest_ms)
                .invoke_async(conn)
                .await?;
            let now = self.clock.now_ms();
            let interval = u64::try_from(self.shared.interval.as_millis()).unwrap_or(u64::MAX);
            let mut fleet = lock(&self.fleet);
            match claimed.as_slice() {
                [one, round] if one == "1" => {
                    if let Some(state) = fleet.get_mut(&key) {
                        state.permits.push(round.clone());
                    }
                }
                [closed] if closed == "-1" => {
                    fleet.remove(&key);
                    drop(fleet);
                    self.local.remove(&key);
                }
                [none, wait @ ..] if none == "0" => {
                    // none until the cooldown or the round's probes end (a
                    // reply without the time: the interval)
                    let wait = wait
                        .first()
                        .and_then(|ms| ms.parse::<u64>().ok())
                        .map_or(interval, |ms| ms.min(interval));
                    if let Some(state) = fleet.get_mut(&key) {
                        state.claim_after_ms = now.saturating_add(wait);
                    }
                }
                _ => return Err(Error::Reply(format!("probe claim returned {claimed:?}"))),
            }
        }
        if tick {
            // last: the holds are a part of their own, which nothing above
            // waits for
            let reply: Vec<Vec<u8>> = scripts
                .breaker_holds
                .prepare_invoke()
                .arg(prefix)
                .arg(FleetBreaker::MAX_HOLD_MS)
                .invoke_async(conn)
                .await?;
            self.apply_holds(&reply);
        }
        Ok(())
    }

    /// At the process's shutdown: gives back the probes claimed from Redis
    /// and not handed to a call (the release script), once each, so that
    /// the other processes may claim them in the same round. They are
    /// dropped here first, given back or not: a probe Redis may have taken
    /// back is never sent as well.
    ///
    /// # Errors
    ///
    /// The first Redis error; the other endpoints are tried all the same.
    pub(crate) async fn leave(
        &self,
        conn: &mut MultiplexedConnection,
        scripts: &Scripts,
        prefix: &str,
    ) -> Result<(), Error> {
        let mut held: Vec<(String, String, u64)> = Vec::new();
        for state in lock(&self.fleet).values_mut() {
            for round in state.permits.drain(..) {
                match held
                    .iter_mut()
                    .find(|(ep, r, _)| *ep == state.name && *r == round)
                {
                    Some((.., n)) => *n = n.saturating_add(1),
                    None => held.push((state.name.clone(), round, 1)),
                }
            }
            state.want_permit = false;
        }
        let mut failure = None;
        for (endpoint, round, n) in held {
            let given: redis::RedisResult<u64> = scripts
                .breaker_release
                .prepare_invoke()
                .arg(prefix)
                .arg(&endpoint)
                .arg(&round)
                .arg(n)
                .arg(self.template.config().max_probes())
                .invoke_async(conn)
                .await;
            if let Err(e) = given {
                failure.get_or_insert(Error::from(e));
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Takes the fleet's holds, `{endpoint, ms left}` pairs: a later end
    /// than the one this process holds wins. A hold this process holds that
    /// the fleet does not list (not published yet, or lost by Redis) is kept
    /// until it ends; one that has ended is let go.
    fn apply_holds(&self, reply: &[Vec<u8>]) {
        let now = self.clock.now_ms();
        let mut holds = lock(&self.holds);
        for pair in reply.chunks_exact(2) {
            let [endpoint, left] = pair else { continue };
            // an endpoint that is not UTF-8 is none a process names
            let (Ok(endpoint), Some(left)) = (
                core::str::from_utf8(endpoint),
                core::str::from_utf8(left)
                    .ok()
                    .and_then(|left| left.parse::<u64>().ok()),
            ) else {
                continue;
            };
            let key = self.keys.hash_one(endpoint);
            if left == 0 || (holds.len() >= MAX_ENDPOINTS && !holds.contains_key(&key)) {
                continue;
            }
            let until_ms = now.saturating_add(left.min(FleetBreaker::MAX_HOLD_MS));
            let held = holds.entry(key).or_insert(until_ms);
            *held = (*held).max(until_ms);
        }
        holds.retain(|_, until_ms| *until_ms > now);
        self.holding.store(!holds.is_empty(), Ordering::Release);
    }

    /// Applies the fleet's open endpoints: `{endpoint, ms left}` pairs.
    fn apply_state(&self, reply: &[Vec<u8>]) {
        let now = self.clock.now_ms();
        let pending: HashSet<String> = lock(&self.outbox)
            .iter()
            .map(|m| m.endpoint().to_owned())
            .collect();
        let mut listed = HashSet::new();
        let mut closed = Vec::new();
        let mut lost = Vec::new();
        {
            let mut fleet = lock(&self.fleet);
            for pair in reply.chunks_exact(2) {
                let [endpoint, left] = pair else { continue };
                let (Ok(endpoint), Ok(left)) =
                    (core::str::from_utf8(endpoint), core::str::from_utf8(left))
                else {
                    continue;
                };
                let key = self.keys.hash_one(endpoint);
                // listed, whatever its time left: a time this process cannot
                // read (the script writes none) leaves what it knew, rather
                // than read as closed, which would reset its own breaker
                listed.insert(key);
                let Ok(left) = left.parse::<i64>() else {
                    continue;
                };
                if fleet.len() >= MAX_ENDPOINTS && !fleet.contains_key(&key) {
                    continue;
                }
                let state = fleet.entry(key).or_insert_with(|| Fleetwide::new(endpoint));
                if left > 0 {
                    state.open_until = Some(now.saturating_add(left.unsigned_abs()));
                    state.probing = false;
                    state.void_permits();
                } else {
                    state.open_until = None;
                    state.probing = true;
                }
            }
            fleet.retain(|key, state| {
                if listed.contains(key) || pending.contains(&state.name) {
                    return true;
                }
                // Unlisted while this process's own breaker is open with
                // cooldown to go: not closed by a probe (the fleet's cooldown
                // runs at least as long), but lost by Redis (a restart
                // without persistence, a flush). Kept, and published again.
                let own = match self.local.state(key) {
                    Some(State::Open { until_ms }) => Some(until_ms),
                    _ => state.told_open(now),
                };
                if let Some(until_ms) = own {
                    if until_ms > now {
                        state.open_until = Some(until_ms);
                        state.probing = false;
                        state.void_permits();
                        lost.push(Message::Open {
                            endpoint: state.name.clone(),
                            until_ms,
                            cooldown_ms: state.cooldown_ms,
                        });
                        return true;
                    }
                }
                closed.push(*key);
                false
            });
        }
        // closed fleet-wide: the local evidence described the outage
        for key in closed {
            self.local.remove(&key);
        }
        self.post(lost);
    }

    /// Queues `messages` for the sync task, as many as the outbox has room
    /// for ([`MAX_OUTBOX`]), and wakes it.
    fn post(&self, messages: Vec<Message>) {
        if messages.is_empty() {
            return;
        }
        let mut outbox = lock(&self.outbox);
        for message in messages {
            if outbox.len() < MAX_OUTBOX {
                outbox.push(message);
            }
        }
        drop(outbox);
        self.shared.wake.notify_one();
    }
}

/// The fleet's view of each endpoint's breaker, for a `RetryPolicy` that
/// keeps its own breakers (`Builder::with_shared_breaker`).
///
/// Through this seam the fleet breaker keeps no breaker of its own for an
/// endpoint: the policy's breaker already weighs every outcome of the
/// process, its run of failures feeds the policy's decisions, and a second
/// posterior on the same outcomes — with its own cooldown and its own
/// half-open probes — could only disagree with it: refuse a call the
/// policy's breaker admitted after its probe succeeded, or admit one its
/// breaker holds open. So the view holds only what the fleet says (the
/// openings it pulled from Redis, the probes it claimed) and what the
/// policy's breaker told it ([`publish`](FleetView::publish)): each opening
/// is published to the fleet at once, as [`record`](FleetBreaker::record)
/// publishes its own local breaker's. The standalone
/// [`check`](FleetBreaker::check) and [`record`](FleetBreaker::record) are
/// unchanged; a breaker should be driven through one or the other, not both.
///
/// - [`admit`](FleetView::admit) refuses an endpoint the fleet holds open,
///   until the fleet's end; once that has passed it admits only a probe
///   claimed from Redis (refusing until the next round, which claims one,
///   if none is held); otherwise it admits. It never waits for Redis.
/// - [`record`](FleetView::record) reports the outcome of each of its probes
///   to the fleet, in the round the probe was claimed in; other outcomes are
///   the policy's breaker's business.
/// - [`release_probe`](FleetView::release_probe) puts a claimed probe whose
///   attempt was never sent back among the probes held, for the next call —
///   unless the fleet has opened the endpoint again since, which ended the
///   probe's round: such a probe frees nothing of the next round.
/// - [`hold`](FleetView::hold) shares a server's hold with the fleet: kept
///   here at once, and published at once (the sync task is woken) as the
///   time it has left, which Redis turns into an end on its own clock, in
///   `{ns}:br:holds`, a hash whose time to live is raised to its latest
///   hold's, so that it ends by itself. A later end wins over an earlier
///   one, in Redis and here.
/// - [`held_until`](FleetView::held_until) answers from the holds this
///   process was told and the fleet's, which each sync round reads: another
///   process's hold holds this one **within one sync interval** of being
///   told (a round trip more at most), not sooner. While this process knows
///   of no hold it answers in one atomic load.
///
/// **While Redis is away**, no probe can be claimed: the view keeps refusing
/// an endpoint the fleet was last known to hold open, until the end it knew,
/// and admits everything else, leaving the endpoint to the policy's own
/// breaker (with its own half-open probes). An opening the policy's breaker
/// told it meanwhile is published when Redis is back, for the time it has
/// left, unless the policy's breaker closed first. So is a server's hold:
/// kept by the process it was told to meanwhile, and shared for the time it
/// has left.
///
/// **Clocks**: times come in and go out on the policy's clock, and are kept
/// on the fleet's ([`FleetConfig::with_clock`](crate::FleetConfig::with_clock)),
/// translated by the time left: the two need not agree.
impl FleetView for FleetBreaker {
    fn admit(&self, endpoint: &str, now_ms: u64) -> Admission {
        let now = self.clock.now_ms();
        let key = self.keys.hash_one(endpoint);
        let connected = self.shared.connected.load(Ordering::Acquire);
        match self.fleet_verdict(key, now, connected, true) {
            Some(Admission::Rejected { until_ms }) => Admission::Rejected {
                until_ms: now_ms.saturating_add(until_ms.saturating_sub(now)),
            },
            Some(verdict) => verdict,
            None => Admission::Allowed,
        }
    }

    fn record(&self, endpoint: &str, _now_ms: u64, success: bool, probe: Option<ProbeRound>) {
        let Some(id) = probe else {
            return;
        };
        let key = self.keys.hash_one(endpoint);
        let round = {
            let mut fleet = lock(&self.fleet);
            let Some(state) = fleet.get_mut(&key) else {
                return;
            };
            let Some(at) = state.probes_out.iter().position(|(out, ..)| *out == id) else {
                // given up on (too many out), or the fleet closed since
                return;
            };
            state.probes_out.remove(at).map(|(_, round, _)| round)
        };
        if let Some(round) = round {
            self.post(vec![self.probe_result(key, endpoint, success, round)]);
        }
    }

    fn publish(&self, endpoint: &str, now_ms: u64, transition: Transition) {
        let now = self.clock.now_ms();
        let key = self.keys.hash_one(endpoint);
        let (left, cooldown_ms) = match transition {
            Transition::Opened { until_ms } => {
                let left = until_ms.saturating_sub(now_ms);
                (left, left)
            }
            Transition::Reopened {
                until_ms,
                cooldown_ms,
            } => (until_ms.saturating_sub(now_ms), cooldown_ms),
            Transition::Closed => {
                // the policy's own probes found it back: nothing of its
                // opening is left to publish (the fleet closes on its own
                // probes' outcomes, which it is told of)
                if let Some(state) = lock(&self.fleet).get_mut(&key) {
                    state.told_open_until = None;
                }
                return;
            }
            _ => return,
        };
        if left == 0 {
            return;
        }
        let until_ms = now.saturating_add(left);
        {
            let mut fleet = lock(&self.fleet);
            // with no room to keep it, published all the same, as the
            // standalone record does
            if fleet.len() < MAX_ENDPOINTS || fleet.contains_key(&key) {
                let state = fleet.entry(key).or_insert_with(|| Fleetwide::new(endpoint));
                state.open_until = Some(state.open_until.map_or(until_ms, |t| t.max(until_ms)));
                state.probing = false;
                state.void_permits();
                state.cooldown_ms = cooldown_ms;
                state.told_open_until = Some(until_ms);
            }
        }
        self.post(vec![Message::Open {
            endpoint: endpoint.to_owned(),
            until_ms,
            cooldown_ms,
        }]);
    }

    fn release_probe(&self, endpoint: &str, round: ProbeRound) {
        let key = self.keys.hash_one(endpoint);
        let mut fleet = lock(&self.fleet);
        let Some(state) = fleet.get_mut(&key) else {
            return;
        };
        let Some(at) = state.probes_out.iter().position(|(out, ..)| *out == round) else {
            return;
        };
        if let Some((_, claimed, openings)) = state.probes_out.remove(at) {
            // still half-open for the fleet, in the round the probe was
            // claimed in: the next call may use it. A probe of a round an
            // opening has ended since is no probe of the round after it:
            // handed out again, it would go out uncounted by the fleet, and
            // Redis would ignore its outcome as of an ended round.
            if state.probing && state.open_until.is_none() && openings == state.openings {
                state.permits.push(claimed);
            }
        }
    }

    fn open_until(&self, endpoint: &str, now_ms: u64) -> Option<u64> {
        let now = self.clock.now_ms();
        let key = self.keys.hash_one(endpoint);
        let until_ms = lock(&self.fleet).get(&key)?.open_until?;
        (until_ms > now).then(|| now_ms.saturating_add(until_ms - now))
    }

    fn hold(&self, endpoint: &str, now_ms: u64, until_ms: u64) {
        let left = until_ms
            .saturating_sub(now_ms)
            .min(FleetBreaker::MAX_HOLD_MS);
        if left == 0 {
            return;
        }
        let until_ms = self.clock.now_ms().saturating_add(left);
        let key = self.keys.hash_one(endpoint);
        {
            let mut holds = lock(&self.holds);
            // with no room to keep it, shared all the same
            if holds.len() < MAX_ENDPOINTS || holds.contains_key(&key) {
                let held = holds.entry(key).or_insert(until_ms);
                *held = (*held).max(until_ms);
                self.holding.store(true, Ordering::Release);
            }
        }
        // one message per endpoint while Redis is away: a later end takes
        // the place of the one waiting
        let mut outbox = lock(&self.outbox);
        let waiting = outbox.iter_mut().find_map(|message| match message {
            Message::Hold {
                endpoint: held,
                until_ms,
            } if held == endpoint => Some(until_ms),
            _ => None,
        });
        if let Some(waiting) = waiting {
            *waiting = (*waiting).max(until_ms);
        } else if outbox.len() < MAX_OUTBOX {
            outbox.push(Message::Hold {
                endpoint: endpoint.to_owned(),
                until_ms,
            });
        }
        drop(outbox);
        self.shared.wake.notify_one();
    }

    fn held_until(&self, endpoint: &str, now_ms: u64) -> Option<u64> {
        // the usual case, no hold anywhere: one load
        if !self.holding.load(Ordering::Acquire) {
            return None;
        }
        let key = self.keys.hash_one(endpoint);
        let mut holds = lock(&self.holds);
        let until_ms = *holds.get(&key)?;
        let now = self.clock.now_ms();
        if until_ms > now {
            return Some(now_ms.saturating_add(until_ms - now));
        }
        // ended: let go here too, for a process whose rounds do not run
        // (Redis away), so that the load above answers again
        holds.remove(&key);
        if holds.is_empty() {
            self.holding.store(false, Ordering::Release);
        }
        None
    }
}
