//! [`FleetView`]: the role a breaker shared by many processes plays beside
//! each process's own breaker.

use crate::breaker::{Admission, ProbeRound, Transition};

/// A fleet's view of each endpoint's breaker: what every process calling an
/// endpoint has seen of it, consulted beside a process's own breaker.
///
/// # Why a second breaker, and why only a view
///
/// A breaker in each process trips on that process's share of the evidence.
/// Forty processes calling a provider that went down each need their own run
/// of failures before they stop, and each sends its own probes when its
/// cooldown ends: together they keep storming the provider they were meant to
/// protect. A breaker shared by the fleet — one process opens, every process
/// refuses; the fleet as a whole sends a bounded number of probes — fixes
/// that. But a process's own breaker is still the better judge of what it
/// sees: it reads every outcome at once, its run of failures feeds the retry
/// decisions, and it keeps working when the shared store does not.
///
/// So the shared breaker is a view, not a second posterior: the process keeps
/// its own breaker, and consults the view only after its own admits a call.
/// The view learns what it publishes from the process's breaker —
/// [`publish`](FleetView::publish) is told each opening and closing — and
/// from the outcomes of the attempts it admitted, a probe of its own above
/// all. A refusal by either breaker refuses the call.
///
/// # The calls, in order
///
/// For each attempt, a caller:
///
/// 1. asks its own breaker; if that refuses, the attempt is not made (and the
///    view may be asked, without effect, how long it holds the endpoint open:
///    [`open_until`](FleetView::open_until));
/// 2. asks [`admit`](FleetView::admit): [`Admission::Allowed`], a
///    [`Probe`](Admission::Probe) the view hands out (a fleet counts its
///    probes across every process), or [`Rejected`](Admission::Rejected)
///    until a time. On a refusal the attempt is not made, and a probe slot its
///    own breaker gave it goes back to that breaker;
/// 3. makes the attempt, and tells both breakers its outcome: the view by
///    [`record`](FleetView::record), with the round of the view's probe when
///    the view admitted it as one — or, if the attempt ended without an
///    outcome for a breaker (never sent, a permanent error, a dropped call),
///    hands the view's probe back with
///    [`release_probe`](FleetView::release_probe) instead;
/// 4. tells the view each [`Transition`] of its own breaker with
///    [`publish`](FleetView::publish), so that the fleet can hold the endpoint
///    open for everyone.
///
/// # A server's hold
///
/// A server that answers one caller "429, retry after 20 s" is, nearly
/// always, out of quota for every caller with the same key: every process of
/// the fleet, not only the one it answered. A caller that honours such a wait
/// for the whole endpoint tells the view with [`hold`](FleetView::hold), so
/// that the view can hold the endpoint for the fleet; and before asking
/// [`admit`](FleetView::admit) it asks [`held_until`](FleetView::held_until)
/// whether the fleet holds the endpoint. A hold is not an opening: the
/// endpoint is not down, it asked for quiet until a known time, and the
/// caller treats the answer as the server's own wait (it fails a first
/// attempt fast, and lets a retry it decided wait for it), not as an open
/// breaker, whose end is only the earliest time to ask again and whose
/// probes let one call through first. Two methods rather than an
/// [`Admission`] of its own: every user of this crate's breakers matches on
/// `Admission`, which none of them would ever answer with.
///
/// Both are provided: a view that knows nothing of holds tells nothing and
/// holds nothing, and a caller asks it for nothing it cannot answer.
///
/// # Clocks
///
/// The caller and the view may read different clocks: a policy its own (a
/// manual one in tests), a fleet its own, and the fleet's store a server's.
/// Every time that crosses this trait is on the **caller's** clock: the
/// `now_ms` passed in, the `until_ms` of a [`Transition`] the caller
/// publishes, the `until_ms` of a refusal the view answers, the end
/// [`open_until`](FleetView::open_until) gives, and the end of a server's
/// hold, told ([`hold`](FleetView::hold)) or answered
/// ([`held_until`](FleetView::held_until)). A view with a clock of its
/// own reads only *durations* across the seam: an opening until `until_ms`
/// told at `now_ms` lasts `until_ms - now_ms` on its clock, and an endpoint it
/// holds open until its own time `t` is answered as
/// `now_ms + (t - its_now)`. The two clocks then need to agree on nothing but
/// the length of a millisecond.
///
/// # Failing open
///
/// A view that cannot reach what it shares (its server is away) should admit
/// what it has no opinion on, and keep refusing what it last knew to be open:
/// the caller's own breaker still guards the endpoint, so a view that fails
/// open loses only the fleet's help, while one that failed closed would stop
/// every call of every process for an outage of the view's store.
///
/// Methods take `&self`: a view is shared by every call of a process, behind
/// an `Arc`, and is `Send + Sync` where a policy takes it.
///
/// ```
/// use core::sync::atomic::{AtomicU64, Ordering};
/// use bayesretry_breaker::{Admission, FleetView, ProbeRound, Transition};
///
/// /// A view that holds every endpoint open while the latest opening lasts.
/// #[derive(Default)]
/// struct LatestOpening { until_ms: AtomicU64 }
///
/// impl FleetView for LatestOpening {
///     fn admit(&self, _endpoint: &str, now_ms: u64) -> Admission {
///         match self.until_ms.load(Ordering::Acquire) {
///             until_ms if now_ms < until_ms => Admission::Rejected { until_ms },
///             _ => Admission::Allowed,
///         }
///     }
///     fn record(&self, _: &str, _: u64, _: bool, _: Option<ProbeRound>) {}
///     fn publish(&self, _endpoint: &str, _now_ms: u64, transition: Transition) {
///         if let Transition::Opened { until_ms } | Transition::Reopened { until_ms, .. } = transition {
///             self.until_ms.fetch_max(until_ms, Ordering::AcqRel);
///         }
///     }
///     fn release_probe(&self, _: &str, _: ProbeRound) {}
/// }
///
/// let view = LatestOpening::default();
/// view.publish("payments", 0, Transition::Opened { until_ms: 1_000 });
/// assert_eq!(view.admit("search", 10), Admission::Rejected { until_ms: 1_000 });
/// assert_eq!(view.admit("search", 1_000), Admission::Allowed);
/// ```
pub trait FleetView {
    /// Whether an attempt at `endpoint` may be made at `now_ms`, asked after
    /// the caller's own breaker admitted it.
    ///
    /// [`Admission::Allowed`] lets it go; [`Admission::Probe`] lets it go as
    /// one of the view's probes, whose `round` the caller hands back with the
    /// attempt's outcome ([`record`](FleetView::record)) or, if the attempt is
    /// not made or ends without an outcome, to
    /// [`release_probe`](FleetView::release_probe);
    /// [`Admission::Rejected`] refuses it until `until_ms`, on the caller's
    /// clock (see [Clocks](FleetView#clocks)): the earliest time at which
    /// asking again may be worth it, not a promise of admission then.
    fn admit(&self, endpoint: &str, now_ms: u64) -> Admission;

    /// The outcome of an attempt at `endpoint` that the view admitted,
    /// recorded at `now_ms`: `probe` is the round of the
    /// [`Admission::Probe`] that admitted it, `None` when it was admitted as
    /// [`Admission::Allowed`].
    ///
    /// Only attempts with an outcome for a breaker come here — a permanent
    /// error, an attempt never sent or a call dropped in flight says nothing
    /// about the endpoint, and hands its probe back instead.
    fn record(&self, endpoint: &str, now_ms: u64, success: bool, probe: Option<ProbeRound>);

    /// A change of the caller's own breaker for `endpoint`, at `now_ms`.
    ///
    /// An opening is what the fleet needs to hear: [`Transition::Opened`]
    /// until `until_ms`, a cooldown of `until_ms - now_ms` (the caller tells
    /// the view as the breaker opens); [`Transition::Reopened`] with its end
    /// and its backed-off cooldown. A view publishes it so that every process
    /// refuses the endpoint. [`Transition::Closed`] says the caller's own
    /// probes found the endpoint back; a view may take that as news, or wait
    /// for its own probes' outcomes, which it is told of too.
    fn publish(&self, endpoint: &str, now_ms: u64, transition: Transition);

    /// Takes back a probe of `round` for `endpoint` that the view handed out
    /// ([`admit`](FleetView::admit)) and whose attempt was never sent or
    /// ended without an outcome: a refusal by a later check, a cancellation
    /// seen before sending, a permanent error, a call dropped in flight. The
    /// view may give the slot to another call at once, rather than wait for
    /// the probe to be given up on.
    ///
    /// A round the view has moved on from frees nothing.
    fn release_probe(&self, endpoint: &str, round: ProbeRound);

    /// Until when the view holds `endpoint` open, as of `now_ms` on the
    /// caller's clock, if it does; asked without effect — no probe is handed
    /// out, nothing is claimed — when the caller's own breaker refused an
    /// attempt, or a retry is being decided, so that the caller can say the
    /// later of the two ends.
    ///
    /// The provided implementation knows nothing: `None`.
    #[inline]
    fn open_until(&self, endpoint: &str, now_ms: u64) -> Option<u64> {
        let _ = (endpoint, now_ms);
        None
    }

    /// A server asked the caller to send nothing to `endpoint` until
    /// `until_ms` (its Retry-After, at most the caller's limit on one), told
    /// at `now_ms`, both on the caller's clock: a wait of
    /// `until_ms - now_ms`. A view shares it with the fleet, so that every
    /// process holds the endpoint until then; a later end than one it holds
    /// wins, an earlier one changes nothing.
    ///
    /// Told as the caller sets the hold on itself, after the failure that
    /// carried the wait was [recorded](FleetView::record) — or, if that
    /// attempt was the view's probe, [handed back](FleetView::release_probe):
    /// a server that answers a probe with its wait is up, and no failure of
    /// the endpoint. Never waits for what the view shares. The provided
    /// implementation does nothing.
    #[inline]
    fn hold(&self, endpoint: &str, now_ms: u64, until_ms: u64) {
        let _ = (endpoint, now_ms, until_ms);
    }

    /// Until when, on the caller's clock as of `now_ms`, a server's wait
    /// holds `endpoint` for the fleet, if it does: a hold another process
    /// was told of ([`hold`](FleetView::hold)), as the view last heard. Asked
    /// before [`admit`](FleetView::admit), without effect, for an attempt
    /// the caller's own breaker and its own hold admitted; an answer of
    /// `now_ms` or earlier is no hold.
    ///
    /// Asked at every such attempt: an answer should cost no more than
    /// `admit`'s (a view that holds nothing should know it in one load).
    /// The provided implementation knows of no hold: `None`.
    #[inline]
    fn held_until(&self, endpoint: &str, now_ms: u64) -> Option<u64> {
        let _ = (endpoint, now_ms);
        None
    }
}

/// Forwards the trait through a pointer type, so a `&FleetBreaker` or an
/// `Arc<dyn FleetView>` is a view too: every method, the provided ones
/// included, goes to the view pointed at.
macro_rules! forward_through_pointer {
    ($($(#[$attr:meta])* $ptr:ty;)*) => {$(
        $(#[$attr])*
        impl<V: FleetView + ?Sized> FleetView for $ptr {
            #[inline]
            fn admit(&self, endpoint: &str, now_ms: u64) -> Admission {
                (**self).admit(endpoint, now_ms)
            }

            #[inline]
            fn record(&self, endpoint: &str, now_ms: u64, success: bool, probe: Option<ProbeRound>) {
                (**self).record(endpoint, now_ms, success, probe);
            }

            #[inline]
            fn publish(&self, endpoint: &str, now_ms: u64, transition: Transition) {
                (**self).publish(endpoint, now_ms, transition);
            }

            #[inline]
            fn release_probe(&self, endpoint: &str, round: ProbeRound) {
                (**self).release_probe(endpoint, round);
            }

            #[inline]
            fn open_until(&self, endpoint: &str, now_ms: u64) -> Option<u64> {
                (**self).open_until(endpoint, now_ms)
            }

            #[inline]
            fn hold(&self, endpoint: &str, now_ms: u64, until_ms: u64) {
                (**self).hold(endpoint, now_ms, until_ms);
            }

            #[inline]
            fn held_until(&self, endpoint: &str, now_ms: u64) -> Option<u64> {
                (**self).held_until(endpoint, now_ms)
            }
        }
    )*};
}

forward_through_pointer! {
    &V;
    #[cfg(feature = "std")]
    alloc::sync::Arc<V>;
}
