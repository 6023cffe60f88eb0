//! [`FleetBreaker`]: a breaker per endpoint whose open state is the fleet's.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::fmt;
use core::num::NonZeroUsize;
use std::collections::{HashMap, HashSet};
use std::hash::RandomState;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_breaker::{Admission, Breaker, KeyedBreaker, ProbeRound, State, Transition};
use bayesretry_policy::Clock;
use core::hash::BuildHasher;
use core::sync::atomic::{AtomicU64, Ordering};
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
    /// Probes handed out whose outcome has not been recorded, by round,
    /// oldest first: an outcome is taken for the oldest's.
    probes_out: VecDeque<String>,
    /// The full cooldown of this process's last local opening (0: none):
    /// what an opening published again asks the fleet to back off from.
    cooldown_ms: u64,
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
            cooldown_ms: 0,
        }
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
            Message::Open { endpoint, .. } | Message::ProbeResult { endpoint, .. } => endpoint,
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
/// endpoint (the posterior rule of `bayesretry-breaker`). When one opens, the
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
/// A `RetryPolicy` keeps a breaker of its own; put a fleet breaker around its
/// calls — check before, record after:
///
/// ```
/// use std::time::Duration;
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
            shared,
            clock,
        })
    }

    /// May a call to `endpoint` be made now? Never waits for Redis.
    pub fn check(&self, endpoint: &str) -> Admission {
        let now = self.clock.now_ms();
        let key = self.keys.hash_one(endpoint);
        let connected = self.shared.connected.load(Ordering::Acquire);
        {
            let mut fleet = lock(&self.fleet);
            if let Some(state) = fleet.get_mut(&key) {
                if let Some(until_ms) = state.open_until {
                    if now < until_ms {
                        return Admission::Rejected { until_ms };
                    }
                    // The cooldown ended since the last round: the endpoint
                    // is half-open for the fleet, not closed, until Redis
                    // says otherwise. Taken for closed, every process would
                    // admit all its calls until its next round.
                    state.open_until = None;
                    state.probing = true;
                }
                if state.probing && connected {
                    if let Some(round) = state.permits.pop() {
                        if state.probes_out.len() >= MAX_PROBES_OUT {
                            state.probes_out.pop_front();
                        }
                        state.probes_out.push_back(round);
                        // the fleet's probe, claimed from Redis: no round of
                        // the local breaker's, which it could hand back
                        return Admission::Probe {
                            half_opened: false,
                            round: ProbeRound::NONE,
                        };
                    }
                    if !state.want_permit && now >= state.claim_after_ms {
                        state.want_permit = true;
                        self.shared.wake.notify_one();
                    }
                    let interval =
                        u64::try_from(self.shared.interval.as_millis()).unwrap_or(u64::MAX);
                    return Admission::Rejected {
                        until_ms: now.saturating_add(interval),
                    };
                }
            }
        }
        if connected {
            Admission::Allowed
        } else {
            self.local.check(&key, now)
        }
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
                if let Some(round) = state.probes_out.pop_front() {
                    // unique to this report: the count of reports, hashed
                    // with keys drawn at random for this breaker
                    let n = self.reports.fetch_add(1, Ordering::Relaxed);
                    let token = format!("{:016x}", self.keys.hash_one((key, n)));
                    messages.push(Message::ProbeResult {
                        endpoint: endpoint.to_owned(),
                        success,
                        round,
                        token,
                    });
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
                    state.permits.clear();
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
                    // cooldown for the backoff.
                    let now = self.clock.now_ms();
                    let key = self.keys.hash_one(endpoint.as_str());
                    let open_here = matches!(self.local.state(&key), Some(State::Open { .. }));
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
        Ok(())
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
                    state.permits.clear();
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
                if let Some(State::Open { until_ms }) = self.local.state(key) {
                    if until_ms > now {
                        state.open_until = Some(until_ms);
                        state.probing = false;
                        state.permits.clear();
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
