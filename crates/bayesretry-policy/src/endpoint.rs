//! [`Endpoint`]: a handle on one endpoint of a policy, and the table of
//! per-endpoint state (the breaker) behind it.

use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::hash::BuildHasher;
use core::ops::Deref;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use bayesretry_breaker::{Breaker, SharedBreaker, State};
use bayesretry_store::{clip_name, same_name};

use crate::call::Call;
use crate::classify::{Classification, Classify};
use crate::error::RetryError;
use crate::policy::RetryPolicy;

/// Slots of the lock-free front table (a power of two).
const FRONT_SLOTS: usize = 1_024;
/// The most endpoints the overflow map holds at once.
const OVERFLOW_MAX: usize = 4_096;

/// What a policy keeps per endpoint: its breaker.
pub(crate) struct EndpointState {
    name: Box<str>,
    pub(crate) breaker: SharedBreaker,
    /// Set when the overflow map let go of this state: a handle holding it
    /// looks its endpoint up again.
    retired: AtomicBool,
    /// Until when (policy clock, ms) a server's Retry-After holds the
    /// endpoint; 0: no hold. See [`Builder::without_server_hold`](crate::Builder::without_server_hold).
    hold_until: AtomicU64,
}

impl EndpointState {
    /// The endpoint's name: what a shared breaker is asked about.
    #[inline(always)]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    fn new(name: &str, template: Breaker) -> EndpointState {
        EndpointState {
            name: name.into(),
            breaker: SharedBreaker::new(template),
            retired: AtomicBool::new(false),
            hold_until: AtomicU64::new(0),
        }
    }

    /// Whether a server's wait may hold the endpoint now: one relaxed load,
    /// for the fast path, which leaves a held endpoint to the general loop.
    #[inline(always)]
    pub(crate) fn may_be_held(&self) -> bool {
        self.hold_until.load(Ordering::Relaxed) != 0
    }

    /// The server asked its callers to wait until `until_ms`: no attempt at
    /// the endpoint starts before then. A later end than the one held wins.
    #[inline]
    pub(crate) fn hold(&self, until_ms: u64) {
        self.hold_until.fetch_max(until_ms, Ordering::Relaxed);
    }

    /// How long the endpoint stays held, if it is; `now_ms` is asked only
    /// when a hold was set. A hold that has run out is cleared, so that the
    /// fast path takes the endpoint again.
    #[inline(always)]
    pub(crate) fn held(&self, now_ms: impl FnOnce() -> u64) -> Option<Duration> {
        let until_ms = self.hold_until.load(Ordering::Relaxed);
        if until_ms == 0 {
            return None;
        }
        let now_ms = now_ms();
        if now_ms < until_ms {
            return Some(Duration::from_millis(until_ms - now_ms));
        }
        // a later hold set meanwhile stays
        let _ = self
            .hold_until
            .compare_exchange(until_ms, 0, Ordering::Relaxed, Ordering::Relaxed);
        None
    }
}

/// The per-endpoint state of a policy, found by name.
///
/// # Two tiers
///
/// Every call needs its endpoint's breaker, so finding it must cost next to
/// nothing. The front tier is a fixed table of slots, each set once and never
/// changed: an endpoint name is hashed (foldhash, with a seed drawn per policy)
/// to a slot, and the first name to reach a slot owns it for the life of the
/// policy. Finding a name there is one hash, one atomic load and one string
/// comparison, with no lock. The comparison makes the table exact: two names
/// never share state, whatever their hashes.
///
/// A name whose slot another name owns goes to the overflow tier, a map behind
/// a mutex, bounded at `OVERFLOW_MAX` names: when it is full, one entry is let
/// go — an arbitrary one, not the least recently used — and its breaker starts
/// over if the name comes back. A handle ([`Endpoint`]) finds its state once
/// and keeps it, so an overflow name pays for the lock only when the handle is
/// made — until the map lets its entry go: from then on every call through
/// that handle looks the name up again, under the lock.
///
/// A name owns its slot for good (slots are never freed, and a name goes to
/// the overflow map only when its slot is owned by another name), so a front
/// name always finds the same state. An overflow name finds the same state
/// until its entry is let go, then a fresh one. No name ever finds another
/// name's state.
///
/// # Names as the store keeps them
///
/// Every name is first cut as the policy's store cuts it, to its first
/// `max_endpoint_bytes` at a character boundary
/// ([`clip_name`](bayesretry_store::clip_name)): names the store holds as one
/// endpoint (a URL whose query string runs past the limit, say) share one
/// state here too, one breaker and one server's hold, and no entry holds more
/// than that many bytes of name, however long the names callers pass.
pub(crate) struct Endpoints {
    template: Breaker,
    /// The breakers of endpoints priced apart from the policy
    /// ([`Builder::with_endpoint_cost`](crate::Builder::with_endpoint_cost)),
    /// made from their own cost models: a new state of one of them starts
    /// from its own, every other endpoint's from `template`.
    priced: HashMap<Box<str>, Breaker>,
    /// The store's `max_endpoint_bytes`: the longest name kept.
    max_name_bytes: usize,
    hasher: foldhash::fast::FixedState,
    front: Box<[OnceLock<Arc<EndpointState>>]>,
    overflow: Mutex<HashMap<Box<str>, Arc<EndpointState>>>,
}

/// The state an [`Endpoint`] handle found, shared with the table: a call
/// through the handle reads its breaker in one step from the handle, not
/// through the policy and the table. A front state is never let go; an
/// overflow state may be (`retired`), and then the handle looks again.
#[derive(Clone)]
pub(crate) struct Site(Arc<EndpointState>);

/// An endpoint's state, found for one call.
pub(crate) enum Resolved<'a> {
    Borrowed(&'a EndpointState),
    Owned(Arc<EndpointState>),
}

impl Deref for Resolved<'_> {
    type Target = EndpointState;

    #[inline]
    fn deref(&self) -> &EndpointState {
        match self {
            Resolved::Borrowed(state) => state,
            Resolved::Owned(state) => state,
        }
    }
}

impl Endpoints {
    pub(crate) fn new(template: Breaker, seed: u64, max_name_bytes: usize) -> Endpoints {
        Endpoints {
            template,
            priced: HashMap::new(),
            max_name_bytes,
            hasher: foldhash::fast::FixedState::with_seed(seed),
            front: (0..FRONT_SLOTS).map(|_| OnceLock::new()).collect(),
            overflow: Mutex::new(HashMap::new()),
        }
    }

    /// These endpoints' breakers start from their own settings.
    /// Their names are cut as every name is ([`key`](Endpoints::key)).
    pub(crate) fn with_priced<'n>(
        mut self,
        priced: impl IntoIterator<Item = (&'n str, Breaker)>,
    ) -> Endpoints {
        self.priced = priced
            .into_iter()
            .map(|(name, breaker)| (Box::from(self.key(name)), breaker))
            .collect();
        self
    }

    /// The breaker a new state of `name` (a name cut already) starts from.
    fn template(&self, name: &str) -> Breaker {
        self.priced.get(name).copied().unwrap_or(self.template)
    }

    /// `name` as the store keeps it: cut to its first `max_name_bytes`, at a
    /// character boundary.
    #[inline(always)]
    pub(crate) fn key<'n>(&self, name: &'n str) -> &'n str {
        clip_name(name, self.max_name_bytes)
    }

    #[inline]
    fn slot(&self, name: &str) -> Option<&OnceLock<Arc<EndpointState>>> {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "only the low bits index the table"
        )]
        let at = self.hasher.hash_one(name) as usize & (FRONT_SLOTS - 1);
        self.front.get(at)
    }

    /// The state of `name`, made if need be. Inlined into every call by name:
    /// the hash, the slot and the comparison are a few instructions, and the
    /// overflow tier is out of line.
    #[inline(always)]
    pub(crate) fn resolve(&self, name: &str) -> Resolved<'_> {
        let name = self.key(name);
        if let Some(slot) = self.slot(name) {
            let state =
                slot.get_or_init(|| Arc::new(EndpointState::new(name, self.template(name))));
            if same_name(&state.name, name) {
                return Resolved::Borrowed(state);
            }
        }
        Resolved::Owned(self.overflow_entry(name))
    }

    /// Where the state of `name` lives, made if need be: for a handle.
    pub(crate) fn site(&self, name: &str) -> Site {
        let name = self.key(name);
        if let Some(slot) = self.slot(name) {
            let state =
                slot.get_or_init(|| Arc::new(EndpointState::new(name, self.template(name))));
            if same_name(&state.name, name) {
                return Site(Arc::clone(state));
            }
        }
        Site(self.overflow_entry(name))
    }

    /// The state a handle found, or, if the overflow map has let it go since,
    /// the state of `name` now.
    #[inline(always)]
    pub(crate) fn at<'a>(&'a self, site: &'a Site, name: &str) -> Resolved<'a> {
        match site {
            Site(state) if !state.retired.load(Ordering::Acquire) => Resolved::Borrowed(state),
            Site(_) => self.resolve_again(name),
        }
    }

    /// [`resolve`](Endpoints::resolve) for a handle whose overflow entry was
    /// let go: rare, and out of line, so that a call through a handle inlines
    /// only the check.
    #[cold]
    #[inline(never)]
    fn resolve_again(&self, name: &str) -> Resolved<'_> {
        self.resolve(name)
    }

    /// The breaker state of `name`, if the policy has state for it; makes none.
    pub(crate) fn peek(&self, name: &str) -> Option<State> {
        let name = self.key(name);
        if let Some(state) = self.slot(name).and_then(OnceLock::get) {
            if same_name(&state.name, name) {
                return Some(state.breaker.state());
            }
        }
        let state = self.lock().get(name).cloned()?;
        Some(state.breaker.state())
    }

    #[cold]
    #[inline(never)]
    fn overflow_entry(&self, name: &str) -> Arc<EndpointState> {
        let mut map = self.lock();
        if let Some(state) = map.get(name) {
            return Arc::clone(state);
        }
        if map.len() >= OVERFLOW_MAX {
            // full: let one entry go; a handle holding it will look again
            let evicted = map.keys().next().cloned();
            if let Some(state) = evicted.and_then(|key| map.remove(&key)) {
                state.retired.store(true, Ordering::Release);
            }
        }
        let state = Arc::new(EndpointState::new(name, self.template(name)));
        map.insert(name.into(), Arc::clone(&state));
        state
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Box<str>, Arc<EndpointState>>> {
        self.overflow.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A policy bound to one endpoint, made by [`RetryPolicy::endpoint`]: the same
/// [`run`](Endpoint::run) and [`run_blocking`](Endpoint::run_blocking), with
/// the endpoint's state found once instead of on every call.
///
/// A handle shares everything with its policy — the beliefs, the breaker, the
/// budget — and a call through it is the same call as
/// `policy.run(name, ..)`; it only skips finding the endpoint's breaker by its
/// name. Keep one per endpoint a hot path calls. Cheap to clone, `Send + Sync`.
///
/// # Long names
///
/// An endpoint is known by the first bytes of its name, as many as the
/// policy's store keeps (`max_endpoint_bytes`,
/// [`StoreConfig::with_max_endpoint_bytes`](bayesretry_store::StoreConfig::with_max_endpoint_bytes),
/// 256 by default), cut at a character boundary
/// ([`clip_name`](bayesretry_store::clip_name)). Names that differ only past
/// that are one endpoint for everything the policy keeps — its beliefs, the
/// breaker, a server's hold, a shared breaker — so no part of the policy
/// treats as two what another treats as one, and the policy holds at most
/// that many bytes of each name, however long the names it is given. Name an
/// endpoint by what fails together (a host, a route), not by a whole URL with
/// its query string: two URLs alike in their first 256 bytes share a
/// breaker, and a name made of request parameters gives each request an
/// endpoint of its own, whose evidence and breaker learn nothing from the
/// others'.
///
/// ```
/// use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy, VirtualSleeper};
///
/// let policy = RetryPolicy::builder()
///     .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
///     .build()?;
/// let provider = policy.endpoint("provider");
/// let answer = provider.run_blocking(|attempt| {
///     if attempt < 2 { Err(HttpStatus(503)) } else { Ok(42) }
/// });
/// assert_eq!(answer.ok(), Some(42));
/// assert_eq!(provider.breaker_state(), policy.breaker_state("provider"));
/// # Ok::<(), bayesretry_policy::Error>(())
/// ```
#[derive(Clone)]
pub struct Endpoint {
    policy: RetryPolicy,
    name: Box<str>,
    site: Option<Site>,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    pub(crate) fn new(policy: RetryPolicy, name: &str) -> Endpoint {
        let site = policy.inner.endpoints.as_ref().map(|t| t.site(name));
        Endpoint {
            policy,
            name: name.into(),
            site,
        }
    }

    /// The endpoint's name, as given to [`RetryPolicy::endpoint`]: whole, even
    /// when the policy knows the endpoint by its first bytes only (see
    /// [long names](Endpoint#long-names)).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The policy the handle calls through.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// [`RetryPolicy::run`] for this endpoint.
    #[inline]
    pub fn run<T, E, F, Fut>(&self, op: F) -> impl Future<Output = Result<T, RetryError<E>>>
    where
        E: Classify,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call().run(op)
    }

    /// [`RetryPolicy::run_blocking`] for this endpoint.
    #[inline]
    pub fn run_blocking<T, E, F>(&self, op: F) -> Result<T, RetryError<E>>
    where
        E: Classify,
        F: FnMut(u32) -> Result<T, E>,
    {
        self.call().run_blocking(op)
    }

    /// [`RetryPolicy::call`] for this endpoint: hooks and a cancellation token
    /// first.
    #[inline]
    pub fn call<E: Classify>(&self) -> Call<'_, E> {
        self.policy
            .call::<E>(&self.name)
            .at_site(self.site.as_ref())
    }

    /// [`RetryPolicy::call_with`] for this endpoint.
    pub fn call_with<'a, E>(
        &'a self,
        classify: impl Fn(&E) -> Classification + Send + Sync + 'a,
    ) -> Call<'a, E> {
        self.policy
            .call_with(&self.name, classify)
            .at_site(self.site.as_ref())
    }

    /// The endpoint's breaker state, if the policy has a breaker.
    pub fn breaker_state(&self) -> Option<State> {
        let table = self.policy.inner.endpoints.as_ref()?;
        let site = self.site.as_ref()?;
        Some(table.at(site, &self.name).breaker.state())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::{EndpointState, Endpoints, FRONT_SLOTS, OVERFLOW_MAX};
    use core::sync::atomic::Ordering;

    fn table() -> Endpoints {
        let template = bayesretry_breaker::Config::new().build().unwrap();
        Endpoints::new(template, 7, 256)
    }

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("endpoint-{i}")).collect()
    }

    #[test]
    fn every_name_finds_its_own_state_even_when_slots_collide() {
        let table = table();
        // more names than slots: collisions are certain
        let names = names(3 * FRONT_SLOTS);
        let first: Vec<*const EndpointState> = names
            .iter()
            .map(|name| core::ptr::from_ref(&*table.resolve(name)))
            .collect();
        let distinct: HashSet<_> = first.iter().collect();
        assert_eq!(distinct.len(), names.len());
        for (name, &state) in names.iter().zip(&first) {
            assert_eq!(core::ptr::from_ref(&*table.resolve(name)), state);
            let site = table.site(name);
            assert_eq!(core::ptr::from_ref(&*table.at(&site, name)), state);
            assert_eq!(&*table.resolve(name).name, name.as_str());
        }
        assert!(table.peek("never called").is_none());
    }

    #[test]
    fn no_entry_holds_more_of_a_name_than_the_store_keeps() {
        let table = table();
        let tail = "q".repeat(10_000);
        let names: Vec<String> = (0..FRONT_SLOTS + 600)
            .map(|i| format!("{i:0>8}{tail}"))
            .collect();
        for name in &names {
            let state = table.resolve(name);
            assert_eq!(state.name(), &name[..256]);
        }
        let overflow = table.lock();
        assert!(!overflow.is_empty(), "no name reached the overflow map");
        assert!(overflow.keys().all(|key| key.len() == 256));
        assert!(overflow.values().all(|state| state.name().len() == 256));
        assert!(
            table
                .front
                .iter()
                .filter_map(|slot| slot.get())
                .all(|state| state.name().len() == 256)
        );
    }

    #[test]
    fn a_handle_whose_overflow_entry_was_let_go_looks_again() {
        let table = table();
        let names = names(FRONT_SLOTS + OVERFLOW_MAX + 200);
        let sites: Vec<_> = names.iter().map(|name| table.site(name)).collect();
        assert!(table.lock().len() <= OVERFLOW_MAX);
        let mut retired = 0;
        for (name, site) in names.iter().zip(&sites) {
            retired += usize::from(site.0.retired.load(Ordering::Acquire));
            let state = table.at(site, name);
            assert_eq!(&*state.name, name.as_str());
            assert!(!state.retired.load(Ordering::Acquire));
        }
        assert!(retired > 0, "the overflow map never let an entry go");
    }
}
