//! [`Call`]: one call's hooks and cancellation, and the async and blocking run
//! loops; [`Retried`], a function bound to a policy.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::Poll;
use core::time::Duration;

use bayesretry_breaker::{Admission, FailureCount, ProbeRound, Transition};
use bayesretry_cost::CostModel;
use bayesretry_decision::{Decision, Reason, Situation};
use bayesretry_store::{Context, ErrorClass};

use crate::cancel::CancelToken;
use crate::classify::{Classification, Classify};
use crate::endpoint::{EndpointState, Resolved, Site};
use crate::error::{RetryError, RetryErrorKind};
use crate::policy::{Inner, MAX_UNCOUNTED_FAILURES, RetryPolicy, WAIT_WHILE_OPEN_POLL};
use crate::run::Run;
use crate::sleep::BoxSleep;

/// A failed attempt, as the hooks see it.
#[derive(Debug)]
#[non_exhaustive]
pub struct FailedAttempt<'a, E> {
    /// The attempt's error, or `None` when the attempt was cut off by the
    /// per-attempt timeout ([`Builder::with_attempt_timeout`](crate::Builder::with_attempt_timeout)):
    /// a timed-out attempt has no error value of its own, and its
    /// [`error_class`](FailedAttempt::error_class) is [`ErrorClass::Timeout`].
    pub error: Option<&'a E>,
    /// The attempt's number, 1-based, counting every attempt made.
    pub attempt: u32,
    /// Retries the attempt cap still allows (failures that did not consume a
    /// retry are not counted).
    pub retries_left: u32,
    /// The delay before the next attempt, or `None` if the policy stops.
    pub next_delay: Option<Duration>,
    /// The error's class.
    pub error_class: ErrorClass,
    /// The policy's decision.
    pub decision: Decision,
}

type ClassifyFn<'a, E> = Box<dyn Fn(&E) -> Classification + Send + Sync + 'a>;

/// How a call classifies its errors: the error type's [`Classify`] impl, as a
/// plain function pointer (nothing to allocate or drop), or a caller's closure.
pub(crate) enum Classifier<'a, E> {
    Impl(fn(&E) -> Classification),
    Closure(ClassifyFn<'a, E>),
}

impl<E> Classifier<'_, E> {
    #[inline]
    fn classify(&self, err: &E) -> Classification {
        match self {
            Classifier::Impl(f) => f(err),
            Classifier::Closure(f) => f(err),
        }
    }
}
type ConsumeHook<'a, E> = Box<dyn FnMut(&E, u32) -> bool + Send + 'a>;
type AttemptHook<'a, E> = Box<dyn FnMut(&FailedAttempt<'_, E>) + Send + 'a>;
type VetoHook<'a, E> = Box<dyn FnMut(&FailedAttempt<'_, E>) -> bool + Send + 'a>;
type ExhaustedHook<'a, E> = Box<dyn FnMut(&RetryError<E>) + Send + 'a>;
type UnsentHook<'a, E> = Box<dyn Fn(&E) -> bool + Send + 'a>;

/// One call to make under a policy: its hooks, its cancellation token, then
/// [`run`](Call::run) or [`run_blocking`](Call::run_blocking).
///
/// The hooks run in p-retry's order after each failed attempt that is not
/// permanent:
///
/// 1. `should_consume_retry(error, attempt)`: `false` and the failure does not
///    count against the attempt cap (a rate limit, say). Such failures are still
///    bounded: at most [`MAX_UNCOUNTED_FAILURES`] per call. An attempt cut off by
///    the per-attempt timeout has no error to show this hook, and always counts.
/// 2. `on_failed_attempt(info)`: the error, the attempt, the retries left and
///    the next delay (`None` when the policy stops).
/// 3. `should_retry(info)`: a veto, asked only when the policy would retry;
///    `false` stops the call with [`RetryErrorKind::Stopped`]. It can never force a
///    retry past the cap, a permanent error, the breaker, the budget or the
///    deadline.
///
///    The retry budget, if the policy has one, is charged only after this hook,
///    when the retry is really going to be made: a vetoed retry spends nothing,
///    and neither does one whose call was cancelled while the attempt was
///    under way (the call ends with [`RetryErrorKind::Cancelled`] instead).
///    A retry that is charged and then not made after all — its call
///    cancelled, or its future dropped, during the backoff; stopped after the
///    wait when judged again, by the breaker or by the deadline — gives its
///    charge back ([`Budget::refund`](bayesretry_budget::Budget::refund)), so
///    that cancellations and timeouts do not drain the budget of the calls
///    that go on.
///    So the decision the hooks see is the engine's, before the budget; if the
///    budget then refuses, the call stops with [`RetryErrorKind::BudgetExhausted`]
///    and `on_exhausted` sees that. The policy's observer
///    ([`Observer::on_decision`](crate::Observer::on_decision)) is told once per
///    failure, after the veto and the budget, of the decision the call acts on:
///    a retry the budget refuses reaches it as that stop, a vetoed one as a stop
///    with [`Reason::Vetoed`], never as a retry. A retry stopped after its
///    wait, before it goes out, reaches it a second time, as the stop: judged
///    again on a longer run of failures, or refused by a breaker that opened
///    meanwhile ([`Reason::CircuitOpen`]) or by a server's hold that the call
///    cannot wait out ([`Reason::RetryAfterBeyondLimit`],
///    [`Reason::RetryAfterPastDeadline`]). A cancellation is not a
///    decision: a call cancelled while the attempt was under way reports the
///    retry the policy decided (the budget not asked, so as a retry even when
///    the budget had none left), then ends [`RetryErrorKind::Cancelled`]
///    before that retry goes out.
/// 4. `on_exhausted(error)`: once, when the call gives up after a retryable
///    failure (not for a permanent error or a cancellation).
///
/// A hook that panics is not contained, as an observer's panic is: an
/// observer is the policy's, shared by every call, while a hook is the
/// caller's own code, and its panic unwinds out of `run_blocking` (or the
/// poll of `run`'s future) to the caller, and ends the call (its future,
/// polled again, stays pending and runs nothing). Nothing the policy holds is
/// left half done: the failed attempt has been counted by the breaker and learned
/// by the store before any hook runs, and the retry budget, charged after
/// the hooks, is not spent.
///
/// A permanent error ends the call before any hook runs. It is not a failure
/// of the endpoint, so the breaker does not count it; if the attempt was a
/// half-open breaker's probe, the probe's slot is handed back
/// ([`SharedBreaker::release_probe`](bayesretry_breaker::SharedBreaker::release_probe)),
/// so the next call may probe at once. So is the slot of a probe that ends
/// with no outcome at all: its call's future dropped while the attempt was in
/// flight (an outer timeout), its operation unwinding (a blocking one, an
/// async one in making its future or in a poll of it), the call's
/// classifier unwinding on its error (before the breaker counted it), or a
/// shared breaker ([`Builder::with_shared_breaker`](crate::Builder::with_shared_breaker))
/// unwinding as it is asked to admit the attempt. The
/// slot goes back once, however often the call unwinds, and it goes back to the probe's own round: a probe of a round the breaker has
/// since given up on frees no slot of the current one.
#[must_use = "a call does nothing until run"]
pub struct Call<'a, E> {
    policy: &'a RetryPolicy,
    endpoint: &'a str,
    /// Where the endpoint's state lives, when a handle found it already.
    site: Option<&'a Site>,
    classify: Classifier<'a, E>,
    /// The hooks, the cancellation token and the call's own time limit,
    /// boxed together: a call without them carries one null pointer, which
    /// keeps the call's future small and its drop one test.
    hooks: Option<Box<Hooks<'a, E>>>,
}

/// The four hooks of a call, its cancellation token and its own time limit.
struct Hooks<'a, E> {
    consume: Option<ConsumeHook<'a, E>>,
    on_failed: Option<AttemptHook<'a, E>>,
    veto: Option<VetoHook<'a, E>>,
    on_exhausted: Option<ExhaustedHook<'a, E>>,
    cancel: Option<CancelToken>,
    /// Which errors say the attempt stopped, unsent, for the cancellation.
    unsent: Option<UnsentHook<'a, E>>,
    max_elapsed: Option<Duration>,
    /// The call's own price, in place of the policy's for the endpoint.
    cost_model: Option<CostModel>,
}

impl<E> Default for Hooks<'_, E> {
    fn default() -> Self {
        Hooks {
            consume: None,
            on_failed: None,
            veto: None,
            on_exhausted: None,
            cancel: None,
            unsent: None,
            max_elapsed: None,
            cost_model: None,
        }
    }
}

impl<E> fmt::Debug for Call<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("endpoint", &self.endpoint)
            .field("cancel", &self.cancel())
            .field(
                "max_elapsed",
                &self.hooks.as_ref().and_then(|hooks| hooks.max_elapsed),
            )
            .finish_non_exhaustive()
    }
}

/// Why [`Call::begin`] did not start an attempt: wait this long for the
/// breaker and ask again, or stop.
pub(crate) enum Refusal<E> {
    Wait(Duration),
    Stop(RetryError<E>),
}

/// Why the next attempt may not start now.
pub(crate) enum Refused {
    /// The breaker refused it: how long until it may admit one, if known.
    Breaker(Option<Duration>),
    /// A server's Retry-After holds the endpoint for this long still: told
    /// to this process, or to the fleet its shared breaker shares.
    Held(Duration),
}

/// The most waits for an open breaker one call makes: with the 100 ms poll,
/// more than a day of waiting, far beyond any sensible `max_wait`.
const MAX_WAITS: u32 = 1_000_000;

/// How an attempt failed: with its own error, or cut off by the per-attempt
/// timeout.
pub(crate) enum Failure<E> {
    Error(E),
    TimedOut(Duration),
}

impl<'a, E> Call<'a, E> {
    pub(crate) fn new(
        policy: &'a RetryPolicy,
        endpoint: &'a str,
        classify: Classifier<'a, E>,
    ) -> Call<'a, E> {
        Call {
            policy,
            endpoint,
            site: None,
            classify,
            hooks: None,
        }
    }

    /// The call of a handle, whose endpoint's state is already found.
    #[inline]
    pub(crate) fn at_site(mut self, site: Option<&'a Site>) -> Self {
        self.site = site;
        self
    }

    /// Ends the call, even in the middle of a sleep, when `token` is cancelled.
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.hooks.get_or_insert_with(Box::default).cancel = Some(token);
        self
    }

    /// Tells the call which errors of an attempt mean that the attempt saw
    /// the call's token cancelled before it sent anything, and stopped: an
    /// attempt that does some work of its own before it sends (an HTTP client
    /// that first reads what is left of the last failed response, so that
    /// its connection can be reused) may watch the token meanwhile, and should
    /// not send once it is cancelled.
    ///
    /// Such a failure, when the call's token is indeed cancelled, is not a
    /// failure of the endpoint or of the retry it was to be: it is not
    /// classified, the breaker does not count it, the store does not learn
    /// the retry as failed, no decision is made or told, a half-open breaker's
    /// probe slot goes back, and the retry budget gets back what it was
    /// charged for the retry — as when the cancellation ends the backoff
    /// before the attempt. The call ends with
    /// [`RetryErrorKind::Cancelled`], the error as its last. An error the hook
    /// picks while the token is not cancelled is an ordinary failure.
    ///
    /// Without it, such an error would be classified (say as permanent, to
    /// stop the call), and the store would learn the retry that never went
    /// out as a failed one.
    ///
    /// Pick only the errors of attempts that sent nothing: an error picked
    /// here while the token is cancelled is learned by nobody, so an attempt
    /// that did reach the endpoint and failed would go unlearned, uncounted
    /// by the breaker, and its retry's budget charge refunded.
    pub fn cancelled_before_sending(mut self, unsent: impl Fn(&E) -> bool + Send + 'a) -> Self {
        self.hooks.get_or_insert_with(Box::default).unsent = Some(Box::new(unsent));
        self
    }

    /// The reason of the call's cancellation, when its token is cancelled
    /// and `err` is, by [`cancelled_before_sending`](Call::cancelled_before_sending),
    /// an attempt that stopped unsent for it.
    fn unsent_reason(&self, err: &E) -> Option<String> {
        let hooks = self.hooks.as_ref()?;
        let unsent = hooks.unsent.as_ref()?;
        let reason = hooks.cancel.as_ref()?.reason()?;
        unsent(err).then_some(reason)
    }

    /// The call's cancellation token, if it has one.
    #[inline]
    pub(crate) fn cancel(&self) -> Option<&CancelToken> {
        self.hooks.as_ref().and_then(|hooks| hooks.cancel.as_ref())
    }

    /// Gives this call at most `max_elapsed`, counted on the policy's clock
    /// from the moment it starts: the call's own deadline, for a caller that
    /// knows how long it has (an agent's step with 12 s left, a request whose
    /// client set a timeout upstream).
    ///
    /// It is the policy's [`max_elapsed`](crate::Builder::with_max_elapsed)
    /// for this call, and works the same way: no attempt starts after it, a
    /// retry whose wait would cross it is not slept, and the call ends with
    /// [`DeadlineExceeded`](crate::RetryErrorKind::DeadlineExceeded), carrying
    /// the last error and any `Retry-After` the server sent. With the policy's
    /// own limit too, the earlier of the two holds. Unlike dropping the call's
    /// future under a timeout, the call keeps what it learned and returns its
    /// last error. An attempt under way when the time runs out is not cut off
    /// (that is [`with_attempt_timeout`](crate::Builder::with_attempt_timeout)'s
    /// job).
    ///
    /// ```
    /// # use core::time::Duration;
    /// # use bayesretry_backoff::{Config, Jitter};
    /// # use bayesretry_policy::{Clock, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper};
    /// let sleeper = VirtualSleeper::new(ManualClock::new(0));
    /// let policy = RetryPolicy::builder()
    ///     .classic()
    ///     .with_max_attempts(10)
    ///     .with_backoff(Config::new().with_base_delay(Duration::from_secs(1)).with_jitter(Jitter::None))
    ///     .with_virtual_time(sleeper.clone())
    ///     .build()?;
    /// // waits of 1 s, 2 s, 4 s...: with 5 s, the third wait would end past it
    /// let out: Result<(), RetryError<HttpStatus>> = policy
    ///     .call("provider")
    ///     .with_max_elapsed(Duration::from_secs(5))
    ///     .run_blocking(|_| Err(HttpStatus(503)));
    /// assert!(matches!(
    ///     out.unwrap_err().kind(),
    ///     RetryErrorKind::DeadlineExceeded { attempts: 3, .. }
    /// ));
    /// assert_eq!(sleeper.clock().now_ms(), 3_000);
    /// # Ok::<(), bayesretry_policy::Error>(())
    /// ```
    pub fn with_max_elapsed(mut self, max_elapsed: Duration) -> Self {
        self.hooks.get_or_insert_with(Box::default).max_elapsed = Some(max_elapsed);
        self
    }

    /// Prices this call's retries with its own success value and attempt
    /// cost, in place of the policy's cost model for the endpoint
    /// ([`with_cost_model`](crate::Builder::with_cost_model),
    /// [`with_endpoint_cost`](crate::Builder::with_endpoint_cost)).
    ///
    /// Calls to one endpoint are not all worth the same: an answer a user is
    /// waiting for against a background job's, a long generation against a
    /// short one, a request whose result is cached against one that is not.
    /// What the endpoint has taught about its odds is the same for all of
    /// them, so they share one policy and its posteriors; the call's price
    /// decides what those odds are worth: a retry is made while
    /// `p · value − cost > 0` at this price. The breaker, which stands for
    /// the whole endpoint, keeps the endpoint's price, and so do the attempt
    /// cap, the deadline and the budget, which no price overrides. A classic
    /// policy does not price its retries, and ignores it.
    ///
    /// ```
    /// # use bayesretry_cost::CostModel;
    /// # use bayesretry_policy::{HttpStatus, ManualClock, RetryError, RetryPolicy, VirtualSleeper};
    /// let policy = RetryPolicy::builder()
    ///     .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
    ///     .without_breaker()
    ///     .build()?;
    /// // the policy's price (a success worth 10 attempts) retries a 503 never seen before
    /// let mut attempts = 0;
    /// let dear: Result<(), RetryError<HttpStatus>> = policy
    ///     .run_blocking("llm", |_| { attempts += 1; Err(HttpStatus(503)) });
    /// assert!(dear.is_err());
    /// assert_eq!(attempts, 4);
    /// // a prefetch worth little more than one attempt is not retried at those odds
    /// let mut attempts = 0;
    /// let cheap: Result<(), RetryError<HttpStatus>> = policy
    ///     .call("llm")
    ///     .with_cost_model(CostModel::new(1.2, 1.0).unwrap())
    ///     .run_blocking(|_| { attempts += 1; Err(HttpStatus(503)) });
    /// assert!(cheap.is_err());
    /// assert_eq!(attempts, 1);
    /// # Ok::<(), bayesretry_policy::Error>(())
    /// ```
    pub fn with_cost_model(mut self, cost_model: CostModel) -> Self {
        self.hooks.get_or_insert_with(Box::default).cost_model = Some(cost_model);
        self
    }

    /// The call's own price, if it has one.
    #[inline(always)]
    pub(crate) fn cost_model(&self) -> Option<CostModel> {
        self.hooks.as_ref().and_then(|hooks| hooks.cost_model)
    }

    /// How long the call may take: the shorter of the policy's limit and the
    /// call's own, if either is set.
    #[inline(always)]
    pub(crate) fn max_elapsed(&self) -> Option<Duration> {
        let policy = self.policy.inner.max_elapsed;
        match self.hooks.as_ref().and_then(|hooks| hooks.max_elapsed) {
            Some(own) => Some(policy.map_or(own, |policy| policy.min(own))),
            None => policy,
        }
    }

    /// Hook 1: whether a failure counts against the attempt cap.
    pub fn should_consume_retry(mut self, hook: impl FnMut(&E, u32) -> bool + Send + 'a) -> Self {
        self.hooks.get_or_insert_with(Box::default).consume = Some(Box::new(hook));
        self
    }

    /// Hook 2: told of every failed attempt that is not permanent.
    pub fn on_failed_attempt(
        mut self,
        hook: impl FnMut(&FailedAttempt<'_, E>) + Send + 'a,
    ) -> Self {
        self.hooks.get_or_insert_with(Box::default).on_failed = Some(Box::new(hook));
        self
    }

    /// Hook 3: may veto a retry the policy would make.
    pub fn should_retry(
        mut self,
        hook: impl FnMut(&FailedAttempt<'_, E>) -> bool + Send + 'a,
    ) -> Self {
        self.hooks.get_or_insert_with(Box::default).veto = Some(Box::new(hook));
        self
    }

    /// Hook 4: told once when the call gives up after a retryable failure.
    pub fn on_exhausted(mut self, hook: impl FnMut(&RetryError<E>) + Send + 'a) -> Self {
        self.hooks.get_or_insert_with(Box::default).on_exhausted = Some(Box::new(hook));
        self
    }
}

/// The state of one call's loop, shared by the async and blocking runners.
///
/// It does not hold the endpoint's name: the call does, and lends it to each
/// step that needs it (a copy here of the name the caller has just stored
/// would be read back across two narrower stores, which stalls the load).
pub(crate) struct Attempts<'a> {
    inner: &'a Inner,
    /// The endpoint's state (its breaker), if the policy has a breaker.
    state: Option<Resolved<'a>>,
    deadline_ms: Option<u64>,
    /// Attempts made.
    attempt: u32,
    /// Attempts that count against the cap.
    counted: u32,
    /// The context of the last failure, whose next attempt is pending: its
    /// class, and its attempt number in `previous_attempt`. Two fields, each
    /// written from where it lies: a tuple of the two would be assembled on
    /// the stack in other widths and read back whole, which stalls the load.
    previous_class: Option<ErrorClass>,
    previous_attempt: u32,
    /// The round of probes the attempt under way belongs to, if it is a
    /// half-open breaker's probe ([`ProbeRound::NONE`] if not): what hands
    /// its slot back to that round, and to no later one.
    probe: ProbeRound,
    /// What the shared breaker ([`Builder::with_shared_breaker`](crate::Builder::with_shared_breaker))
    /// said of the last attempt: always [`SharedTurn::Plain`] for a policy
    /// without one. One field, so that a call's state is set up with one
    /// store more, not two.
    shared: SharedTurn,
    /// The retry decided after the last failure, with the failure run it was
    /// judged on, while it waits to go out (learning with a breaker only).
    pending: Option<Pending>,
    /// When the retry budget was charged for the retry decided after the
    /// last failure (`None` if it was not): what gives the charge back if
    /// that retry is not made after all (see [`Attempts::give_back_retry`]).
    /// Written only by a policy with a budget, on its failures; read only
    /// once a retry is decided and before its attempt begins.
    charged_ms: Option<u64>,
    /// Milliseconds waited for the breaker so far, and how many waits (for
    /// the breaker and for a server's hold).
    waited_ms: u64,
    waits: u32,
    /// Milliseconds waited for a server's hold on the endpoint so far: a
    /// budget of its own (the Retry-After limit), apart from the breaker's
    /// `max_wait`.
    held_ms: u64,
    /// The breaker's count of failures when the attempt under way began: its
    /// success ends the run of failures only if the run began before it did
    /// (see [`SharedBreaker::record_success_since`](bayesretry_breaker::SharedBreaker::record_success_since)).
    failures_before: FailureCount,
}

/// An attempt under way, its error being classified, or its admission by the
/// shared breaker: dropped only if the operation (or the classifier, or the
/// shared breaker) unwinds — the loop forgets it once they return — when a
/// probe's slot is handed back ([`Attempts::hand_back_probe`]).
struct InFlight<'g, 'a>(&'g mut Attempts<'a>);

impl Drop for InFlight<'_, '_> {
    fn drop(&mut self) {
        self.0.hand_back_probe();
    }
}

/// The blocking loop's state from a retry's decision to its attempt:
/// dropped only if the sleeper or a step of the admission unwinds (it is
/// forgotten once they return), when the retry's charge goes back to the
/// budget ([`Attempts::give_back_retry`]), as the async loop does for a call
/// that ends in its `Sleeping` or `Begin` step.
struct Unmade<'g, 'a>(&'g mut Attempts<'a>);

impl Drop for Unmade<'_, '_> {
    fn drop(&mut self) {
        self.0.give_back_retry();
    }
}

/// A retry decided on a failure run, waiting for its delay: judged again
/// before it goes out if the run grew meanwhile (see [`Attempts::recheck`]).
#[derive(Clone, Copy)]
struct Pending {
    run: u32,
    /// The breaker's count of failures when the retry was decided: while it
    /// reads the same, the run has not grown and the lock is not taken.
    failures_seen: FailureCount,
    /// The wait the server asked for with the failure, for the error if the
    /// retry is stopped after all.
    retry_after: Option<Duration>,
}

/// What a call's fast first attempt found, for the loop that goes on after
/// it fails.
#[derive(Clone, Copy)]
pub(crate) struct First<'a> {
    state: Option<&'a EndpointState>,
    deadline_ms: Option<u64>,
    /// The breaker's count of failures when the attempt began.
    failures_before: FailureCount,
}

impl First<'_> {
    /// Whether the fast path found no breaker: looked at before
    /// [`Call::is_plain`] after a failure, so that a call with a breaker
    /// (every learning call) tells it is not plain from what it holds in
    /// registers, without reading the policy.
    #[inline(always)]
    pub(crate) fn without_breaker(&self) -> bool {
        self.state.is_none()
    }

    /// What the fast path finds for a policy without a breaker, deadline or
    /// budget.
    #[inline(always)]
    fn none() -> First<'static> {
        First {
            state: None,
            deadline_ms: None,
            failures_before: FailureCount::default(),
        }
    }

    /// The first attempt succeeded: the breaker counts it, as the end of a
    /// run of failures only if the run began before the attempt did.
    #[inline(always)]
    pub(crate) fn succeeded(&self, inner: &Inner) {
        if let Some(state) = &self.state {
            let _ = state
                .breaker
                .record_success_since(self.failures_before, || inner.now_ms());
        }
    }
}

impl<'a> Attempts<'a> {
    /// A call's state. The clock is read only if the call has a deadline
    /// (`max_elapsed`, the call's or the policy's: [`Call::max_elapsed`]).
    #[inline(always)]
    pub(crate) fn new(
        inner: &'a Inner,
        endpoint: &'a str,
        site: Option<&'a Site>,
        max_elapsed: Option<Duration>,
    ) -> Attempts<'a> {
        let deadline_ms = max_elapsed.map(|d| inner.now_ms().saturating_add(millis(d)));
        let state = inner.endpoints.as_ref().map(|table| match site {
            Some(site) => table.at(site, endpoint),
            None => table.resolve(endpoint),
        });
        Attempts {
            inner,
            state,
            deadline_ms,
            attempt: 0,
            counted: 0,
            previous_class: None,
            previous_attempt: 0,
            probe: ProbeRound::NONE,
            shared: SharedTurn::Plain,
            pending: None,
            charged_ms: None,
            waited_ms: 0,
            waits: 0,
            held_ms: 0,
            failures_before: FailureCount::default(),
        }
    }

    /// The state of a call whose first attempt was made on the fast path
    /// ([`Call::first`]): admitted by a closed breaker, so not a probe.
    #[inline(always)]
    pub(crate) fn after_first(inner: &'a Inner, first: First<'a>) -> Attempts<'a> {
        Attempts {
            inner,
            state: first.state.map(Resolved::Borrowed),
            deadline_ms: first.deadline_ms,
            attempt: 1,
            counted: 0,
            previous_class: None,
            previous_attempt: 0,
            probe: ProbeRound::NONE,
            shared: SharedTurn::Plain,
            pending: None,
            charged_ms: None,
            waited_ms: 0,
            waits: 0,
            held_ms: 0,
            failures_before: first.failures_before,
        }
    }

    /// The state of a plain call ([`Call::is_plain`]) after `attempt`
    /// attempts, `counted` of them against the cap, the last of them failed
    /// or under way: what the general loop goes on from when a plain loop
    /// must wait, and what the error that ends a plain call is made from.
    #[inline(always)]
    pub(crate) fn plain(inner: &'a Inner, attempt: u32, counted: u32) -> Attempts<'a> {
        let mut attempts = Attempts::after_first(inner, First::none());
        attempts.attempt = attempt;
        attempts.counted = counted;
        attempts
    }

    /// Asks a server's hold on the endpoint, then the breaker; on admission,
    /// starts the next attempt and returns its number, otherwise what refused
    /// it. A closed breaker on an endpoint no server holds admits without the
    /// clock being read.
    #[inline(always)]
    fn start(&mut self) -> Result<u32, Refused> {
        let inner = self.inner;
        if let Some(state) = &self.state {
            let mut now = None;
            // asked first: a probe the breaker handed out would be held back
            if let Some(left) = state.held(|| *now.get_or_insert_with(|| inner.now_ms())) {
                return Err(Refused::Held(left));
            }
            match state
                .breaker
                .check_with(|| *now.get_or_insert_with(|| inner.now_ms()))
            {
                Admission::Rejected { until_ms } => {
                    let now_ms = now.unwrap_or_else(|| inner.now_ms());
                    let until_ms = match &inner.shared {
                        None => until_ms,
                        Some(_) => {
                            // refused by the own breaker, not the shared one
                            self.shared = SharedTurn::Plain;
                            later_end(inner, state.name(), now_ms, Some(until_ms))
                                .unwrap_or(until_ms)
                        }
                    };
                    return Err(Refused::Breaker(Some(Duration::from_millis(
                        until_ms.saturating_sub(now_ms),
                    ))));
                }
                Admission::Probe { round, .. } => self.probe = round,
                _ => self.probe = ProbeRound::NONE,
            }
            self.failures_before = state.breaker.failures_recorded();
            if inner.shared.is_some() {
                self.admit_shared(now)?;
            }
        }
        if self.attempt == 0 {
            if let Some(budget) = &inner.budget {
                budget.deposit(inner.now_ms());
            }
        }
        self.attempt = self.attempt.saturating_add(1);
        Ok(self.attempt)
    }

    /// The attempt at `endpoint` succeeded. The clock is read only if
    /// something needs the time: a breaker that is not closed (or decays), or
    /// a failure to learn from.
    #[inline(always)]
    pub(crate) fn succeeded(&mut self, endpoint: &str) {
        let inner = self.inner;
        if let Some(state) = &self.state {
            let transition = state
                .breaker
                .record_success_since(self.failures_before, || inner.now_ms());
            if inner.shared.is_some() {
                self.tell_shared(true, transition, inner.now_ms());
            }
        }
        if let Some((attempt, class)) = self.take_previous() {
            let now_ms = inner.now_ms();
            inner.observe(&Context::new(endpoint, attempt, class), true, now_ms);
        }
    }

    /// The attempt failed: its error is in `last`, or, when the per-attempt
    /// timeout `timed_out` cut it off, `last` is `None`. Classifies, learns,
    /// decides and asks the hooks: `Ok(delay)` to sleep before the next attempt
    /// (the error stays in `last`, for a cancellation or a breaker that stops
    /// the call before that attempt), or the error that ends the call (the
    /// attempt's error taken out of `last`).
    ///
    /// Out of line, and lean: a policy pays only for what it has. The clock is
    /// read only when something reads the time (learning, a breaker, a deadline,
    /// a budget); a context is observed only when the policy learns or has an
    /// observer; the hooks' view of the failure is made only for hooks; the
    /// error that ends a call is made out of line. The result is a `Duration`
    /// or a pointer, so it comes back in registers.
    ///
    /// A plain classic policy (no breaker, deadline, budget or observer) and a
    /// call without hooks take a path of their own, which reads only the count
    /// (see [`failed_plain`](Attempts::failed_plain)).
    #[inline(always)]
    pub(crate) fn failed<E>(
        &mut self,
        last: &mut Option<E>,
        timed_out: Option<Duration>,
        call: &mut Call<'_, E>,
    ) -> Result<Duration, RetryError<E>> {
        if self.inner.plain && call.hooks.is_none() {
            return self.failed_plain(last, timed_out, call);
        }
        self.failed_full(last, timed_out, call)
    }

    /// The classification of a probe's error. A classifier that unwinds
    /// leaves the attempt without an outcome (the breaker counts it after):
    /// the probe's slot goes back. Out of line, and only for a probe, so that
    /// the guard's unwinding path stays off every other failure.
    #[cold]
    #[inline(never)]
    fn classify_probe<E>(&mut self, classify: &Classifier<'_, E>, err: &E) -> Classification {
        let unwinding = InFlight(self);
        let classification = classify.classify(err);
        core::mem::forget(unwinding);
        classification
    }

    /// [`failed`](Attempts::failed), for every policy and call.
    #[inline(never)]
    fn failed_full<E>(
        &mut self,
        last: &mut Option<E>,
        timed_out: Option<Duration>,
        call: &mut Call<'_, E>,
    ) -> Result<Duration, RetryError<E>> {
        let inner = self.inner;
        if call.hooks.is_some() {
            if let Some(reason) = last.as_ref().and_then(|err| call.unsent_reason(err)) {
                return Err(self.unsent(reason, last.take()));
            }
        }
        let classification = match last.as_ref() {
            Some(err) if self.probe == ProbeRound::NONE && !self.shared.is_probe() => {
                call.classify.classify(err)
            }
            Some(err) => self.classify_probe(&call.classify, err),
            None => Classification::Retryable(ErrorClass::Timeout),
        };
        let needs_time = inner.learning
            || self.state.is_some()
            || self.deadline_ms.is_some()
            || inner.budget.is_some();
        // nothing below reads `now_ms` unless `needs_time` says so
        let now_ms = if needs_time { inner.now_ms() } else { 0 };
        // The class is borrowed where the classifier wrote it, and copied out
        // only for whoever reads it (the store, the observer, the hooks): a
        // classic policy that tells no one never copies it (a copy of what the
        // classifier has just stored, in other widths, stalls the load).
        let (class, hint) = match &classification {
            Classification::Retryable(class) => (class, None),
            Classification::RetryAfter(class, hint) => (class, Some(*hint)),
            Classification::Permanent => match last.take() {
                Some(err) => return Err(self.permanent(err, call.endpoint, now_ms)),
                // only an error is classified: a timeout is retryable above
                None => (&ErrorClass::Timeout, None),
            },
        };
        // a learning decision weighs the run this failure extends: read with
        // the record, under the same lock
        let mut reading = None;
        if hint.is_some() && self.is_probe() && self.holds(hint) {
            // A probe the server answered with its wait (a 429 or a 503 with
            // a Retry-After the policy honours) found the endpoint up and
            // asking for time, not down: it is no outcome for a breaker, whose
            // slot goes back, and the hold set below keeps every call off the
            // endpoint for the time asked. Counted a failure, it reopened the
            // breaker for another cooldown, as long as the breaker's settings
            // make it (and longer after each failed probe) whatever the server
            // asked, just as the endpoint came back under the load of every
            // client at once.
            self.hand_back_probe();
        } else if let Some(state) = &self.state {
            let transition = if inner.learning {
                let (transition, run) = state
                    .breaker
                    .record_failure_and_read(self.failures_before, now_ms);
                reading = Some(run);
                transition
            } else {
                state
                    .breaker
                    .record_failure_since(self.failures_before, now_ms)
            };
            if inner.shared.is_some() {
                self.tell_shared(false, transition, now_ms);
            }
        }
        // the retry this failure ends is learned before any hook runs: a hook
        // that panics leaves nothing half done
        let observes = inner.observes();
        if observes {
            if let Some((attempt, class)) = self.previous() {
                inner.observe(&Context::new(call.endpoint, attempt, class), false, now_ms);
            }
        }
        let consumed = match (
            call.hooks.as_mut().and_then(|h| h.consume.as_mut()),
            last.as_ref(),
        ) {
            (Some(hook), Some(err)) => hook(err, self.attempt),
            _ => true,
        };
        if consumed {
            self.counted = self.counted.saturating_add(1);
        }
        let (endpoint, counted) = (call.endpoint, self.counted);
        let ctx = || Context::new(endpoint, counted, *class);
        // the context whose next attempt is pending, kept only for someone to tell
        if observes {
            self.previous_class = Some(*class);
            self.previous_attempt = counted;
        }

        let backoff = inner
            .backoff
            .delay(self.counted.max(1), inner.rng.next_u64());
        let delay = hint.map_or(backoff, |hint| hint.max(backoff));
        // the server's wait holds the endpoint for every call, when the
        // policy honours it (a longer one stops this call, and holds nothing)
        if let (Some(state), Some(hint)) = (&self.state, hint) {
            if self.holds(Some(hint)) {
                let until_ms = now_ms.saturating_add(millis(hint));
                state.hold(until_ms);
                // and for the fleet, when the policy shares a breaker
                if let (Some(shared), true) = (&inner.shared, until_ms > now_ms) {
                    shared.hold(state.name(), now_ms, until_ms);
                }
            }
        }
        let mut breaker_until = self
            .state
            .as_ref()
            .and_then(|state| state.breaker.open_until());
        if let (Some(_), Some(state)) = (&inner.shared, &self.state) {
            // open for the fleet is open for the decision too
            breaker_until = later_end(inner, state.name(), now_ms, breaker_until);
        }
        // A policy that waits for its breaker waits for it on a retry as on a
        // first attempt: the open breaker is no stop here (the next attempt's
        // admission waits it out, or ends the call when it cannot come in
        // time), and the run of failures it opened on is the breaker's to act
        // on, by the probe it admits, not counted a second time against the
        // retry. Stopped here, the call whose probe failed (the 1 attempt in
        // 20 that fails on an endpoint back at 95 %) failed fast while every
        // call behind it waited for the next probe and went through.
        //
        // Only when the breaker can admit the retry in time: by the end of
        // what is left of `max_wait` after the retry's delay, and by the
        // deadline. Otherwise the wait would end in a refusal anyway, and the
        // call stops now on the open breaker rather than sleep its delay in
        // vain.
        let waits_for_breaker = match (breaker_until, inner.wait_while_open) {
            (Some(until_ms), Some(max_wait)) => {
                let wait_ms = until_ms.saturating_sub(now_ms.saturating_add(millis(delay)));
                wait_ms <= millis(max_wait).saturating_sub(self.waited_ms)
                    && self
                        .deadline_ms
                        .is_none_or(|deadline_ms| until_ms <= deadline_ms)
            }
            _ => false,
        };
        let mut situation = Situation::new()
            .with_delay_ms(millis(backoff))
            .with_max_retry_after_ms(millis(inner.max_retry_after))
            .with_breaker_open(breaker_until.is_some() && !waits_for_breaker);
        if let Some(hint) = hint {
            situation = situation.with_retry_after_ms(millis(hint));
        }
        if let Some(deadline_ms) = self.deadline_ms {
            situation = situation.with_deadline_ms(deadline_ms);
        }
        if let Some(cost_model) = call.cost_model() {
            situation = situation.with_cost_model(cost_model);
        }
        // The run read with the failure's record (only a learning policy with
        // a breaker has one) goes in with the rest, as the situation is built:
        // set in the learning branch below, the situation was copied out and
        // back in whole (some 30 instructions of every learning failure).
        if let Some(run) = &reading {
            situation = if waits_for_breaker {
                situation.with_failure_run(0, run.usual_success_rate)
            } else {
                situation
                    .with_failure_run(run.failures, run.usual_success_rate)
                    .with_change_hazard(run.hazard)
            };
        }
        let hard_cap = inner.max_attempts.saturating_add(MAX_UNCOUNTED_FAILURES);
        // The observer is told below, once, of the decision the call acts on.
        let mut decision = if self.attempt >= hard_cap {
            Decision::stop(Reason::MaxAttempts)
        } else if !inner.learning {
            // `judge`'s classic branch, which reads only the count
            inner.engine.decide_fixed(self.counted, &situation, now_ms)
        } else {
            let breaker = self.state.as_ref().map(|state| &state.breaker);
            if reading.is_none() {
                situation = inner.with_failure_run(&ctx(), &situation, now_ms, breaker);
            }
            inner.judge(&ctx(), &situation, now_ms, breaker)
        };
        let vetoed = match &mut call.hooks {
            Some(hooks) => self.ask_hooks(hooks, last.as_ref(), *class, &decision, delay),
            None => false,
        };
        if vetoed {
            // the observer and the log see the stop that happens, not the retry
            // the engine proposed
            decision = Decision::stop(Reason::Vetoed);
        }
        if decision.retry() {
            // charged only now that the retry is really made: a veto spends
            // nothing, nor does a retry that a cancellation which came during
            // the attempt stops before it goes out; and one that is stopped
            // after all before it goes out gives its charge back
            if let Some(budget) = &inner.budget {
                self.charged_ms = None;
                if !call.cancel().is_some_and(CancelToken::is_cancelled) {
                    match budget.try_spend(now_ms, 1) {
                        Ok(()) => self.charged_ms = Some(now_ms),
                        // every hard check passed, so the budget is the first to stop it
                        Err(_) => decision = Decision::stop(Reason::BudgetExhausted),
                    }
                }
            }
        }
        if inner.observer.is_some() {
            inner.report(&decision, &ctx());
        }
        #[cfg(feature = "tracing")]
        tracing::event!(
            tracing::Level::DEBUG,
            endpoint,
            attempt = self.attempt,
            error_class = %class,
            retry = decision.retry(),
            reason = %decision.reason(),
            vetoed,
            probability = decision.probability(),
            expected_value = decision.expected_value(),
            delay_ms = millis(delay),
            "retry decision"
        );
        if decision.retry() {
            let failures_seen = self
                .state
                .as_ref()
                .map_or(FailureCount::default(), |state| {
                    state.breaker.failures_recorded()
                });
            // a retry that waits for the breaker is judged again by its probe
            self.pending = situation
                .failure_run()
                .filter(|_| !delay.is_zero() && !waits_for_breaker)
                .map(|(run, _)| Pending {
                    run,
                    failures_seen,
                    retry_after: hint,
                });
            return Ok(delay);
        }
        let stop = Stop {
            decision,
            vetoed,
            breaker_until,
            now_ms,
            timed_out,
            retry_after: hint,
        };
        Err(self.stop(last.take(), stop, call))
    }

    /// [`failed`](Attempts::failed) for a plain classic policy
    /// ([`Inner::plain`](crate::policy::Inner)) and a call without hooks: the
    /// same decision on the same count, with the same draw of the jitter, but
    /// nothing built that no one reads — no clock, no context, no breaker.
    /// Every hard check that could stop the retry is the attempt cap or a
    /// Retry-After beyond the limit; the engine's classic rule judges both.
    #[inline(never)]
    fn failed_plain<E>(
        &mut self,
        last: &mut Option<E>,
        timed_out: Option<Duration>,
        call: &mut Call<'_, E>,
    ) -> Result<Duration, RetryError<E>> {
        let inner = self.inner;
        let classification = last.as_ref().map(|err| call.classify.classify(err));
        let hint = match classification {
            Some(Classification::Retryable(_)) | None => None,
            Some(Classification::RetryAfter(_, hint)) => Some(hint),
            Some(Classification::Permanent) => match last.take() {
                // no clock: nothing in a plain policy reads the time
                Some(err) => return Err(self.permanent(err, call.endpoint, 0)),
                None => None,
            },
        };
        // no hook to say a failure is free: every failure counts
        self.counted = self.counted.saturating_add(1);
        let (delay, decision) = plain_verdict(inner, self.attempt, self.counted, hint);
        #[cfg(feature = "tracing")]
        trace_plain(
            call.endpoint,
            self.attempt,
            classification.as_ref(),
            &decision,
            delay,
        );
        if decision.retry() {
            return Ok(delay);
        }
        let stop = Stop {
            decision,
            vetoed: false,
            breaker_until: None,
            now_ms: 0,
            timed_out,
            retry_after: hint,
        };
        Err(self.stop(last.take(), stop, call))
    }

    /// Hooks 2 and 3 after a failure the call may retry: `on_failed_attempt`
    /// sees it, then `should_retry` may veto a retry the policy would make.
    /// Whether it did.
    #[inline(never)]
    fn ask_hooks<E>(
        &self,
        hooks: &mut Hooks<'_, E>,
        error: Option<&E>,
        error_class: ErrorClass,
        decision: &Decision,
        delay: Duration,
    ) -> bool {
        if hooks.on_failed.is_none() && hooks.veto.is_none() {
            return false;
        }
        let info = FailedAttempt {
            error,
            attempt: self.attempt,
            retries_left: self.inner.max_attempts.saturating_sub(self.counted),
            next_delay: decision.retry().then_some(delay),
            error_class,
            decision: *decision,
        };
        if let Some(hook) = hooks.on_failed.as_mut() {
            hook(&info);
        }
        decision.retry() && hooks.veto.as_mut().is_some_and(|hook| !hook(&info))
    }

    /// The context of the last failure, if someone is to be told of its
    /// next attempt: its attempt number and class.
    #[inline(always)]
    fn previous(&self) -> Option<(u32, ErrorClass)> {
        self.previous_class
            .map(|class| (self.previous_attempt, class))
    }

    /// Whether the attempt under way is a probe of the policy's breaker or of
    /// the shared one.
    #[inline(always)]
    fn is_probe(&self) -> bool {
        self.probe != ProbeRound::NONE || self.shared.is_probe()
    }

    /// Whether a failure with the server's wait `hint` holds its endpoint:
    /// the policy honours holds (it has a breaker, and did not turn them
    /// off) and the wait is within its Retry-After limit.
    #[inline(always)]
    fn holds(&self, hint: Option<Duration>) -> bool {
        self.state.is_some()
            && self.inner.server_hold
            && hint.is_some_and(|hint| hint <= self.inner.max_retry_after)
    }

    /// [`previous`](Attempts::previous), forgotten.
    #[inline(always)]
    fn take_previous(&mut self) -> Option<(u32, ErrorClass)> {
        self.previous_class
            .take()
            .map(|class| (self.previous_attempt, class))
    }

    /// Whether dropping this state would release nothing: its endpoint's
    /// state is borrowed (or there is none), and nothing else in it owns
    /// anything: the async loop forgets such a state when its call ends,
    /// rather than call its drop glue.
    #[inline(always)]
    pub(crate) fn owns_nothing(&self) -> bool {
        !matches!(self.state, Some(Resolved::Owned(_)))
    }

    /// The attempt under way ended without an outcome for the breaker — a
    /// permanent error, a call dropped while the attempt was in flight, an
    /// operation that panicked: if it was a half-open breaker's probe, its slot
    /// is handed back, so the next call may probe at once instead of being
    /// refused until the probe round is given up, a cooldown later. Handed
    /// back to the probe's own round: if that round was given up on or ended
    /// meanwhile, this frees no slot of the current one. Handed back once: the
    /// attempt is no longer a probe after, so a second call (a future polled
    /// again after a panic, and dropped) frees no slot another call holds.
    pub(crate) fn hand_back_probe(&mut self) {
        if let (true, Some(state)) = (self.probe != ProbeRound::NONE, &self.state) {
            state.breaker.release_probe(self.probe);
            self.probe = ProbeRound::NONE;
        }
        if let SharedTurn::Probe(round) = self.shared {
            self.shared = SharedTurn::Plain;
            self.hand_back_shared_probe(round);
        }
    }

    /// Hands the shared breaker's probe of `round` back: its attempt was
    /// never sent, or ended without an outcome.
    #[cold]
    #[inline(never)]
    fn hand_back_shared_probe(&self, round: ProbeRound) {
        if let (Some(shared), Some(state)) = (&self.inner.shared, &self.state) {
            shared.release_probe(state.name(), round);
        }
    }

    /// After the endpoint's own breaker admitted the next attempt, asks the
    /// shared breaker ([`Builder::with_shared_breaker`](crate::Builder::with_shared_breaker)),
    /// with the time `now` if the own check read it: on a refusal, the own
    /// breaker's probe goes back (the attempt is not made) and the wait until
    /// the shared end is returned, as [`start`](Attempts::start) returns the
    /// own breaker's.
    ///
    /// A policy that honours a server's hold asks first whether the fleet
    /// holds the endpoint ([`FleetView::held_until`](bayesretry_breaker::FleetView::held_until)):
    /// a hold with at most the Retry-After limit left is the server's wait,
    /// refused as the policy's own hold is ([`Refused::Held`]), and set on
    /// the endpoint, so that the calls after this one fail fast without
    /// asking. One with more left is taken as a server's wait beyond the
    /// limit is: it holds nothing.
    ///
    /// Out of line: only a policy with a shared breaker calls it, and the
    /// call is its one cost to [`start`](Attempts::start) for every other.
    ///
    /// A shared breaker that unwinds in `held_until` or `admit` leaves the
    /// attempt unmade: a probe the own breaker has just handed out for it
    /// goes back, as when an operation unwinds ([`InFlight`]).
    #[inline(never)]
    fn admit_shared(&mut self, now: Option<u64>) -> Result<(), Refused> {
        let inner = self.inner;
        self.shared = SharedTurn::Plain;
        let Some(shared) = &inner.shared else {
            return Ok(());
        };
        let unwinding = InFlight(self);
        let now_ms = now.unwrap_or_else(|| inner.now_ms());
        // the view's answers, under the guard: the fleet's hold (only asked
        // by a policy that honours holds), else its admission
        let answer = unwinding.0.state.as_ref().map(|state| {
            let name = state.name();
            let held = if inner.server_hold {
                shared
                    .held_until(name, now_ms)
                    .map(|until_ms| until_ms.saturating_sub(now_ms))
                    .filter(|&left| left > 0 && left <= millis(inner.max_retry_after))
            } else {
                None
            };
            match held {
                Some(left) => Err(left),
                None => Ok(shared.admit(name, now_ms)),
            }
        });
        core::mem::forget(unwinding);
        let admission = match answer {
            None => Admission::Allowed,
            Some(Ok(admission)) => admission,
            Some(Err(left)) => {
                if let Some(state) = &self.state {
                    state.hold(now_ms.saturating_add(left));
                }
                // not made: a probe of the own breaker goes back to it
                self.hand_back_probe();
                return Err(Refused::Held(Duration::from_millis(left)));
            }
        };
        match admission {
            Admission::Rejected { until_ms } => {
                // not made: a probe of the own breaker goes back to it
                self.hand_back_probe();
                self.shared = SharedTurn::Refused;
                Err(Refused::Breaker(Some(Duration::from_millis(
                    until_ms.saturating_sub(now_ms),
                ))))
            }
            Admission::Probe { round, .. } => {
                self.shared = SharedTurn::Probe(round);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Tells the shared breaker the outcome of the attempt it admitted (with
    /// its probe's round, if it was its probe) and the own breaker's
    /// `transition` on it, if any, at `now_ms`.
    #[inline(never)]
    fn tell_shared(&mut self, success: bool, transition: Option<Transition>, now_ms: u64) {
        let (Some(shared), Some(state)) = (&self.inner.shared, &self.state) else {
            return;
        };
        let endpoint = state.name();
        let probe = match core::mem::replace(&mut self.shared, SharedTurn::Plain) {
            SharedTurn::Probe(round) => Some(round),
            _ => None,
        };
        shared.record(endpoint, now_ms, success, probe);
        if let Some(transition) = transition {
            shared.publish(endpoint, now_ms, transition);
        }
    }

    /// The retry decided after the last failure will not be made after all —
    /// the call was cancelled or dropped before it went out, or the recheck,
    /// the breaker or the deadline stopped it after its wait: the retry budget
    /// gets back what it was charged for it
    /// ([`Budget::refund`](bayesretry_budget::Budget::refund)), at the time it
    /// was charged, so that the charge comes off the window it went to.
    ///
    /// A budget exists to bound the retries a client makes. A charge kept for
    /// a retry never sent would let every cancellation and timeout during a
    /// backoff — an agent runtime cancels calls all the time — drain the
    /// budget with no load on the endpoint at all, and every other call of
    /// the policy would get fewer retries than configured.
    ///
    /// Called only between a retry's decision and its attempt (the charge is
    /// not cleared when the attempt begins, which keeps that store off the
    /// path of every retry); given back once.
    #[cold]
    #[inline(never)]
    pub(crate) fn give_back_retry(&mut self) {
        if let (Some(charged_ms), Some(budget)) = (self.charged_ms.take(), &self.inner.budget) {
            budget.refund(charged_ms, 1);
        }
    }

    /// An attempt that stopped unsent for the call's cancellation
    /// ([`Call::cancelled_before_sending`]) ends the call as a cancellation
    /// before it began would: its probe slot and its retry's charge go back,
    /// and the retry it was is not learned, as it was never made.
    #[cold]
    #[inline(never)]
    fn unsent<E>(&mut self, reason: String, last: Option<E>) -> RetryError<E> {
        self.hand_back_probe();
        self.give_back_retry();
        let _ = self.take_previous();
        RetryErrorKind::Cancelled {
            reason,
            last_error: last,
        }
        .into()
    }

    /// A permanent error ends the call: before any hook, and not a failure of
    /// the endpoint.
    #[cold]
    #[inline(never)]
    fn permanent<E>(&mut self, err: E, endpoint: &str, now_ms: u64) -> RetryError<E> {
        // A permanent error says nothing about whether the endpoint is back: a
        // probe's slot is handed back, not spent.
        self.hand_back_probe();
        if let Some((attempt, class)) = self.take_previous() {
            self.inner
                .observe(&Context::new(endpoint, attempt, class), false, now_ms);
        }
        RetryErrorKind::Permanent(err).into()
    }

    /// The error that ends a call the policy (or a hook, or the budget) stopped
    /// after a failure, with `last` the attempt's error; `on_exhausted` sees it.
    #[cold]
    #[inline(never)]
    fn stop<E>(&self, last: Option<E>, stop: Stop, call: &mut Call<'_, E>) -> RetryError<E> {
        let Stop {
            decision,
            vetoed,
            breaker_until,
            now_ms,
            timed_out,
            retry_after,
        } = stop;
        let attempts = self.attempt;
        let stop: RetryError<E> = match (last, decision.reason()) {
            (Some(err), _) if vetoed => RetryErrorKind::Stopped {
                last_error: err,
                attempts,
            },
            (last_error, Reason::BudgetExhausted) if !vetoed => RetryErrorKind::BudgetExhausted {
                last_error,
                attempts,
            },
            (last_error, Reason::CircuitOpen) if !vetoed => RetryErrorKind::CircuitOpen {
                endpoint: call.endpoint.to_owned(),
                retry_after: breaker_until
                    .map(|until| Duration::from_millis(until.saturating_sub(now_ms))),
                last_error,
                attempts,
            },
            (Some(err), Reason::Deadline | Reason::RetryAfterPastDeadline) => {
                RetryErrorKind::DeadlineExceeded {
                    last_error: err,
                    attempts,
                    decision,
                    retry_after,
                }
            }
            (Some(err), _) => RetryErrorKind::Exhausted {
                last_error: err,
                attempts,
                decision,
                retry_after,
            },
            (None, _) => RetryErrorKind::AttemptTimedOut {
                timeout: timed_out.unwrap_or_default(),
                attempts,
                decision,
                vetoed,
            },
        }
        .into();
        if let Some(hook) = call.hooks.as_mut().and_then(|h| h.on_exhausted.as_mut()) {
            hook(&stop);
        }
        stop
    }

    /// After a server's hold refused the next attempt, `left` before it ends:
    /// how long to wait before asking again, if the call waits for it. A retry
    /// already decided waits, within the policy's Retry-After limit and the
    /// deadline: it was to wait for a server anyway, and this is the server's
    /// wait too. A first attempt never waits, even under
    /// [`Builder::with_wait_while_open`](crate::Builder::with_wait_while_open):
    /// the calls that waited would all go the moment the hold ends, and meet
    /// the server's refusal together (no probe lets one through first, as the
    /// breaker's does). Counts the wait, apart from the waits for the breaker,
    /// whose `max_wait` it does not spend. When the call does not wait: why,
    /// as the reason of the stop a retry's observer is told of (see
    /// [`refused_retry`](Attempts::refused_retry)) — the server's waits
    /// beyond the limit, or past the deadline.
    fn hold_step(&mut self, left: Duration) -> Result<Duration, Reason> {
        let inner = self.inner;
        if self.attempt == 0 || self.waits >= MAX_WAITS {
            return Err(Reason::RetryAfterBeyondLimit);
        }
        let step_ms = millis(left).max(1);
        if self.held_ms.saturating_add(step_ms) > millis(inner.max_retry_after) {
            return Err(Reason::RetryAfterBeyondLimit);
        }
        if let Some(deadline_ms) = self.deadline_ms {
            if inner.now_ms().saturating_add(step_ms) > deadline_ms {
                return Err(Reason::RetryAfterPastDeadline);
            }
        }
        self.held_ms = self.held_ms.saturating_add(step_ms);
        self.waits = self.waits.saturating_add(1);
        Ok(Duration::from_millis(step_ms))
    }

    /// A retry decided after a failure is refused before it goes out — the
    /// breaker opened, or a server's hold came, during its wait, and the call
    /// cannot wait that out: the observer, which was told of the retry, is
    /// told of the stop that ends the call instead, with `reason`, in the
    /// failure's context, as a retry judged again is
    /// ([`recheck`](Attempts::recheck)); so is `tracing`. Nothing is told
    /// before a first attempt, for which nothing was decided.
    #[cold]
    #[inline(never)]
    fn refused_retry(&self, endpoint: &str, reason: Reason) {
        if self.attempt == 0 {
            return;
        }
        let decision = Decision::stop(reason);
        if let Some((attempt, class)) = self.previous() {
            self.inner
                .report(&decision, &Context::new(endpoint, attempt, class));
        }
        // the fields of every decision's event, as `failed` writes them: the
        // delay is zero, as the call ends now, with no wait before it
        #[cfg(feature = "tracing")]
        tracing::event!(
            tracing::Level::DEBUG,
            endpoint,
            attempt = self.attempt,
            error_class = self.previous().map(|(_, class)| class).map(tracing::field::display),
            retry = false,
            reason = %reason,
            vetoed = false,
            probability = decision.probability(),
            expected_value = decision.expected_value(),
            delay_ms = 0_u64,
            "retry refused before it went out"
        );
    }

    /// After the breaker refused the next attempt, `retry_after` before it may
    /// admit one: how long to wait before asking again, if the policy waits
    /// for the breaker ([`Builder::with_wait_while_open`](crate::Builder::with_wait_while_open))
    /// and the admission can come within what is left of its `max_wait` and
    /// of the deadline, and the attempt waited for is worth making at the
    /// endpoint's success rate as the breaker now reads it, at the call's
    /// price (see [`worth_waiting_for`](Attempts::worth_waiting_for)). Counts
    /// the wait.
    fn wait_step(
        &mut self,
        retry_after: Option<Duration>,
        endpoint: &str,
        cost_model: Option<CostModel>,
    ) -> Option<Duration> {
        let inner = self.inner;
        let max_wait = millis(inner.wait_while_open?);
        if self.waits >= MAX_WAITS {
            return None;
        }
        let until_ms = retry_after.map_or(0, millis);
        // open: the cooldown's end, when this call may probe; half-open with
        // the probe out: look again soon, the probe's answer may close it. A
        // shared breaker's refusal gives the earliest time worth asking again
        // (see `FleetView::admit`): waited out whole, as an opening is.
        let open = self.shared == SharedTurn::Refused
            || self
                .state
                .as_ref()
                .is_some_and(|state| state.breaker.open_until().is_some());
        let step_ms = if open {
            until_ms
        } else {
            until_ms.min(millis(WAIT_WHILE_OPEN_POLL))
        }
        .max(1);
        if self.waited_ms.saturating_add(step_ms) > max_wait {
            return None;
        }
        let now_ms = inner.now_ms();
        if let Some(deadline_ms) = self.deadline_ms {
            if now_ms.saturating_add(step_ms) > deadline_ms {
                return None;
            }
        }
        if !self.worth_waiting_for(endpoint, now_ms, cost_model) {
            return None;
        }
        self.waited_ms = self.waited_ms.saturating_add(step_ms);
        self.waits = self.waits.saturating_add(1);
        Some(Duration::from_millis(step_ms))
    }

    /// Whether an attempt at `endpoint` is worth waiting for the breaker: its
    /// expected value `p · V − c` is positive, the rule the engine applies to
    /// a retry, where `p` is the endpoint's success rate before its current
    /// run of failures ([`RunReading::usual_success_rate`](bayesretry_breaker::RunReading)),
    /// and the price is the call's own (`cost_model`), or else the
    /// endpoint's, or else the policy's, as for a retry.
    ///
    /// Waiting costs no attempt, but it leads to one: a call the breaker
    /// admits after the wait makes an attempt and pays for it. The wait is for
    /// the endpoint to come back, so the attempt is judged at the rate the
    /// endpoint has when it is not in the run the breaker opened on — not at
    /// the outage's rate, which would end every wait in a long outage just
    /// before the endpoint returns. Where even that attempt does not pay — at
    /// `V ≤ c` never, at `V/c = 2` on an endpoint that succeeds half the time
    /// or less, on a rate-limited endpoint that serves one attempt in ten at
    /// `V/c < 10` — a call refused at once loses nothing and saves the attempt,
    /// so it fails fast as it would without the option.
    fn worth_waiting_for(
        &self,
        endpoint: &str,
        now_ms: u64,
        cost_model: Option<CostModel>,
    ) -> bool {
        let Some(state) = &self.state else {
            return true;
        };
        let p = state.breaker.run_reading(now_ms).usual_success_rate;
        self.inner.price(endpoint, cost_model).retry_pays(p)
    }

    /// Before a retry decided on a failure run goes out, after its wait: if
    /// the endpoint's run grew meanwhile (other calls failed), judges the
    /// retry again on the longer run, and returns the decision that stops it,
    /// if it is no longer worth making, with the wait the server asked for
    /// with the failure. The observer is told of that decision.
    ///
    /// A retry waits for its backoff; in the first seconds of an outage every
    /// call fails its first attempt during that wait, and the evidence that
    /// decided the retry is stale by the time it is sent. Acting on the latest
    /// evidence costs one atomic load per retry when learning, and the
    /// breaker's lock only when a failure was recorded during the wait.
    /// Judging again can only stop a retry that was decided: the hooks that
    /// approved it are not asked again; the budget it was charged gets the
    /// charge back if it is stopped ([`Attempts::give_back_retry`]).
    #[inline(always)]
    pub(crate) fn recheck(
        &mut self,
        endpoint: &str,
        cost_model: Option<CostModel>,
    ) -> Option<(Decision, Option<Duration>)> {
        // only a learning policy's retry decided on a run is ever pending
        let pending = self.pending.take()?;
        // No failure since the decision, the common case: the run cannot have
        // grown. Looked at here, in line, so that a retry whose run did not
        // grow — nearly every one — pays one atomic load and no call (out of
        // line, the call and the spills around it were some 40 instructions
        // of every learning retry).
        if self
            .state
            .as_ref()
            .is_some_and(|state| state.breaker.failures_recorded() == pending.failures_seen)
        {
            return None;
        }
        self.recheck_pending(pending, endpoint, cost_model)
            .map(|decision| (decision, pending.retry_after))
    }

    /// [`recheck`](Attempts::recheck) of a retry that is pending.
    #[inline(never)]
    fn recheck_pending(
        &mut self,
        pending: Pending,
        endpoint: &str,
        cost_model: Option<CostModel>,
    ) -> Option<Decision> {
        // a pending retry is a learning policy's, which keeps the context of
        // the failure it follows
        let (attempt, class) = self.previous()?;
        let state = self.state.as_ref()?;
        if state.breaker.failures_recorded() == pending.failures_seen {
            // no failure since the decision: the run cannot have grown
            // (`recheck` looked already; this keeps the function whole)
            return None;
        }
        let inner = self.inner;
        let now_ms = inner.now_ms();
        let reading = state.breaker.run_reading(now_ms);
        let run = reading.failures;
        if run <= pending.run {
            return None;
        }
        // the wait (backoff or Retry-After) is over: the retry is judged as of
        // now, against the deadline; the breaker's admission is asked next, by
        // the caller, whatever this says
        let mut situation = Situation::new()
            .with_max_retry_after_ms(millis(inner.max_retry_after))
            .with_failure_run(run, reading.usual_success_rate)
            .with_change_hazard(reading.hazard);
        if let Some(deadline_ms) = self.deadline_ms {
            situation = situation.with_deadline_ms(deadline_ms);
        }
        if let Some(cost_model) = cost_model {
            situation = situation.with_cost_model(cost_model);
        }
        let ctx = Context::new(endpoint, attempt, class);
        let decision = inner.judge(&ctx, &situation, now_ms, Some(&state.breaker));
        if decision.retry() {
            return None;
        }
        inner.report(&decision, &ctx);
        // the fields of every decision's event, as `failed` writes them: the
        // delay is zero, as the call ends now, with no wait before it
        #[cfg(feature = "tracing")]
        tracing::event!(
            tracing::Level::DEBUG,
            endpoint,
            attempt = self.attempt,
            error_class = %class,
            retry = false,
            reason = %decision.reason(),
            vetoed = false,
            probability = decision.probability(),
            expected_value = decision.expected_value(),
            delay_ms = 0_u64,
            failure_run = run,
            "retry judged again before it went out"
        );
        Some(decision)
    }
}

/// What the shared breaker said of a call's last attempt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SharedTurn {
    /// Admitted, not as a probe; or not asked (no shared breaker, the own
    /// breaker refused, the attempt's outcome already told).
    Plain,
    /// Admitted as its probe of this round: told with the outcome, or handed
    /// back if there is none.
    Probe(ProbeRound),
    /// Refused: its end is waited out whole ([`Attempts::wait_step`]).
    Refused,
}

impl SharedTurn {
    #[inline(always)]
    fn is_probe(self) -> bool {
        matches!(self, SharedTurn::Probe(_))
    }
}

/// The later of `own` (the end of the endpoint's own breaker's opening, if
/// open) and the end of the shared breaker's, as it gives it at `now_ms`
/// without effect ([`FleetView::open_until`](bayesretry_breaker::FleetView::open_until));
/// `own` when the policy has no shared breaker.
#[inline(never)]
fn later_end(inner: &Inner, endpoint: &str, now_ms: u64, own: Option<u64>) -> Option<u64> {
    let shared = inner
        .shared
        .as_ref()
        .and_then(|shared| shared.open_until(endpoint, now_ms));
    match (own, shared) {
        (Some(own), Some(shared)) => Some(own.max(shared)),
        (own, shared) => own.or(shared),
    }
}

/// A plain classic policy's verdict on a failure that is not permanent,
/// after `attempt` attempts of which `counted` count against the cap, with
/// the server's `hint`: the delay before the next attempt (the jitter's word
/// drawn here) and the decision, on the counts alone (see
/// [`Attempts::failed_plain`]).
#[inline(always)]
fn plain_verdict(
    inner: &Inner,
    attempt: u32,
    counted: u32,
    hint: Option<Duration>,
) -> (Duration, Decision) {
    let backoff = inner.backoff.delay(counted, inner.rng.next_u64());
    let delay = hint.map_or(backoff, |hint| hint.max(backoff));
    let hard_cap = inner.max_attempts.saturating_add(MAX_UNCOUNTED_FAILURES);
    let decision = if attempt >= hard_cap {
        Decision::stop(Reason::MaxAttempts)
    } else if counted < inner.max_attempts && hint.is_none() {
        // the cap is the engine's, and nothing else can stop the retry
        Decision::retry_fixed()
    } else {
        let mut situation = Situation::new().with_max_retry_after_ms(millis(inner.max_retry_after));
        if let Some(hint) = hint {
            situation = situation.with_retry_after_ms(millis(hint));
        }
        inner.engine.decide_fixed(counted, &situation, 0)
    };
    (delay, decision)
}

/// The event of a plain classic policy's decision.
#[cfg(feature = "tracing")]
fn trace_plain(
    endpoint: &str,
    attempt: u32,
    classification: Option<&Classification>,
    decision: &Decision,
    delay: Duration,
) {
    tracing::event!(
        tracing::Level::DEBUG,
        endpoint,
        attempt,
        error_class = %classification
            .and_then(Classification::error_class)
            .unwrap_or(ErrorClass::Timeout),
        retry = decision.retry(),
        reason = %decision.reason(),
        vetoed = false,
        probability = decision.probability(),
        expected_value = decision.expected_value(),
        delay_ms = millis(delay),
        "retry decision"
    );
}

/// Why [`Attempts::failed`] stops a call, for the error it makes.
pub(crate) struct Stop {
    decision: Decision,
    vetoed: bool,
    breaker_until: Option<u64>,
    now_ms: u64,
    timed_out: Option<Duration>,
    /// The wait the server asked for with the last failure, if it asked.
    retry_after: Option<Duration>,
}

/// Polls `attempt` (pinned by the caller) with a timer of `timeout` beside it,
/// timed by the policy's own sleeper, so that the timeout follows virtual time
/// as every other wait does.
///
/// The attempt is polled first, and the timer is made only when the attempt
/// first has to wait: an attempt that finishes at once never starts a timer
/// (and, under a [`VirtualSleeper`](crate::VirtualSleeper), never moves the
/// clock). When the timer fires first, the caller drops the attempt's future,
/// which cancels it. The attempt is borrowed rather than moved in, so that the
/// call's future holds it once.
pub(crate) fn poll_within<T, E, Fut>(
    inner: &Inner,
    timeout: Duration,
    attempt: Pin<&mut Fut>,
    timer: &mut Option<Option<BoxSleep>>,
    cx: &mut core::task::Context<'_>,
) -> Poll<Result<T, Failure<E>>>
where
    Fut: Future<Output = Result<T, E>>,
{
    if let Poll::Ready(outcome) = attempt.poll(cx) {
        return Poll::Ready(outcome.map_err(Failure::Error));
    }
    // `None` inside: the sleeper's timer finished as it was made
    let timer = timer.get_or_insert_with(|| inner.sleeper.sleep_boxed(timeout));
    match timer.as_mut() {
        Some(timer) => timer
            .as_mut()
            .poll(cx)
            .map(|()| Err(Failure::TimedOut(timeout))),
        None => Poll::Ready(Err(Failure::TimedOut(timeout))),
    }
}

/// The span of one call, around its attempts, sleeps and decisions.
#[cfg(feature = "tracing")]
fn call_span(endpoint: &str) -> tracing::Span {
    tracing::debug_span!("bayesretry.call", endpoint)
}

/// A duration in whole milliseconds, saturating.
///
/// In 64-bit arithmetic: the same value as `d.as_millis()` saturated to
/// `u64`, without its 128-bit multiplication (a failure converts three).
#[inline]
pub(crate) fn millis(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000)
        .saturating_add(u64::from(d.subsec_millis()))
}

impl<'a, E> Call<'a, E> {
    /// Runs `op` until it succeeds or the policy stops; `op` gets the 1-based
    /// attempt number. Dropping the future cancels the call.
    ///
    /// A poll in which the operation, its attempt, a hook or the classifier
    /// panics ends the call, as its output would: polled again, the future
    /// stays pending and calls nothing — it does not start the call over, so a
    /// request that went out is not sent again.
    ///
    /// With the `tracing` feature the call runs in a `DEBUG` span named
    /// `bayesretry.call` with the endpoint as a field, and each decision is an
    /// event inside it, with the fields the crate's features list (endpoint,
    /// attempt, error class, retry, reason, probability, expected value,
    /// delay).
    pub fn run<T, F, Fut>(self, op: F) -> impl Future<Output = Result<T, RetryError<E>>>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        #[cfg(feature = "tracing")]
        {
            use tracing::Instrument as _;
            let span = call_span(self.endpoint);
            Run::new(self, op).instrument(span)
        }
        #[cfg(not(feature = "tracing"))]
        Run::new(self, op)
    }

    /// The policy the call runs under.
    #[inline(always)]
    pub(crate) fn policy(&self) -> &'a RetryPolicy {
        self.policy
    }

    /// The endpoint called.
    #[inline(always)]
    pub(crate) fn endpoint(&self) -> &'a str {
        self.endpoint
    }

    /// Where the endpoint's state lives, if a handle found it.
    #[inline(always)]
    pub(crate) fn site(&self) -> Option<&'a Site> {
        self.site
    }

    /// The first attempt's admission, on the fast path: `None` when the call
    /// must take the general loop from the start — it is cancelled already,
    /// the breaker is not closed (it may hand out a probe), attempts have a
    /// timeout (whose timer the general loop runs), or a shared breaker must
    /// admit each attempt (both read from one flag, `first_in_loop`). Otherwise this is the
    /// general loop's first step, in the same order: the deadline is set from
    /// the clock; a closed breaker admits; the budget gets its deposit. Only what a call needs is done: no clock read unless a
    /// deadline or a budget needs the time.
    #[inline(always)]
    pub(crate) fn first(&self) -> Option<First<'a>> {
        let policy: &'a RetryPolicy = self.policy;
        let inner = &*policy.inner;
        // a cancelled call is ended by the general loop's first step
        if inner.first_in_loop || self.cancel().is_some_and(CancelToken::is_cancelled) {
            return None;
        }
        let state = match (inner.endpoints.as_ref(), self.site) {
            (None, _) => None,
            (Some(table), Some(site)) => Some(table.at(site, self.endpoint)),
            (Some(table), None) => Some(table.resolve(self.endpoint)),
        };
        // the endpoint's state as a plain reference: an overflow endpoint
        // (shared ownership) takes the general loop
        let state = match state {
            None => None,
            Some(Resolved::Borrowed(state))
                if state.breaker.is_closed() && !state.may_be_held() =>
            {
                Some(state)
            }
            Some(_) => return None,
        };
        let max_elapsed = self.max_elapsed();
        let mut deadline_ms = None;
        if max_elapsed.is_some() || inner.budget.is_some() {
            let now_ms = inner.now_ms();
            deadline_ms = max_elapsed.map(|d| now_ms.saturating_add(millis(d)));
            if let Some(budget) = &inner.budget {
                budget.deposit(now_ms);
            }
        }
        let failures_before = state.map_or(FailureCount::default(), |state| {
            state.breaker.failures_recorded()
        });
        Some(First {
            state,
            deadline_ms,
            failures_before,
        })
    }

    /// Before each attempt, in both loops: a cancellation ends the call, then the
    /// breaker admits the next attempt (its number) or the call fails fast.
    #[inline(always)]
    pub(crate) fn begin(
        &mut self,
        attempts: &mut Attempts<'_>,
        last: &mut Option<E>,
    ) -> Result<u32, Refusal<E>> {
        if let Some(reason) = self.cancel().and_then(CancelToken::reason) {
            // the retry decided before the wait is not made
            attempts.give_back_retry();
            return Err(Refusal::Stop(
                RetryErrorKind::Cancelled {
                    reason,
                    last_error: last.take(),
                }
                .into(),
            ));
        }
        // a retry is pending after any failure, an attempt cut off by its
        // timeout (which left no error) too; never before the first attempt,
        // which the test keeps free of the look
        if attempts.attempt > 0 {
            if let Some((decision, retry_after)) =
                attempts.recheck(self.endpoint, self.cost_model())
            {
                // the error that ends the call, as after any failure: a
                // deadline that passed during the wait is `DeadlineExceeded`
                let stop = Stop {
                    decision,
                    vetoed: false,
                    breaker_until: None,
                    now_ms: 0,
                    // no error: the last attempt ran out of the policy's timeout
                    timed_out: attempts.inner.attempt_timeout.filter(|_| last.is_none()),
                    retry_after,
                };
                attempts.give_back_retry();
                return Err(Refusal::Stop(attempts.stop(last.take(), stop, self)));
            }
        }
        match attempts.start() {
            Ok(attempt) => Ok(attempt),
            Err(Refused::Held(left)) => match attempts.hold_step(left) {
                Ok(wait) => Err(Refusal::Wait(wait)),
                Err(reason) => {
                    attempts.refused_retry(self.endpoint, reason);
                    attempts.give_back_retry();
                    Err(Refusal::Stop(self.server_hold(
                        left,
                        last.take(),
                        attempts.attempt,
                    )))
                }
            },
            Err(Refused::Breaker(retry_after)) => {
                match attempts.wait_step(retry_after, self.endpoint, self.cost_model()) {
                    Some(wait) => Err(Refusal::Wait(wait)),
                    None => {
                        attempts.refused_retry(self.endpoint, Reason::CircuitOpen);
                        attempts.give_back_retry();
                        Err(Refusal::Stop(self.circuit_open(
                            retry_after,
                            last.take(),
                            attempts.attempt,
                        )))
                    }
                }
            }
        }
    }

    /// Sleeps `delay` on the policy's blocking sleeper; a cancellation ends
    /// the sleep at once (and is seen by [`begin`](Call::begin)).
    fn pause_blocking(&self, inner: &Inner, delay: Duration) {
        if delay.is_zero() {
            return;
        }
        match self.cancel() {
            None => inner.blocking.sleep_blocking(delay),
            Some(token) => inner.blocking.sleep_blocking_cancellable(delay, token),
        }
    }

    /// [`run`](Call::run) on the calling thread, with the blocking sleeper.
    ///
    /// A cancellation is seen before each attempt, and ends a pending sleep at
    /// once: the loop sleeps with
    /// [`BlockingSleeper::sleep_blocking_cancellable`](crate::BlockingSleeper::sleep_blocking_cancellable),
    /// which [`ThreadSleeper`](crate::ThreadSleeper) implements by waiting on
    /// the token. The running function itself cannot be interrupted, so the
    /// per-attempt timeout does not apply here: a late success is a success
    /// and a late error is classified as itself (see
    /// [`Builder::with_attempt_timeout`](crate::Builder::with_attempt_timeout)).
    #[inline]
    pub fn run_blocking<T, F>(mut self, mut op: F) -> Result<T, RetryError<E>>
    where
        F: FnMut(u32) -> Result<T, E>,
    {
        #[cfg(feature = "tracing")]
        let _span = call_span(self.endpoint).entered();
        let inner = &*self.policy.inner;
        // Read before the operation runs, while the compiler still knows what
        // the call's fields hold: after it, any call the compiler cannot see
        // into (the operation's I/O, the bench's `black_box`) makes it load
        // them again to end a call that succeeded.
        let owns_nothing = self.owns_nothing();
        // The first attempt, inline: most calls end here, and a caller's
        // compiler sees the whole of it.
        if let Some(first) = self.first() {
            return match op(1) {
                Ok(value) => {
                    first.succeeded(inner);
                    self.finish_owning(owns_nothing);
                    Ok(value)
                }
                Err(err) if first.without_breaker() && self.is_plain() => {
                    let out = self.retry_plain_blocking(op, err);
                    self.finish();
                    out
                }
                Err(err) => {
                    // made here, where the endpoint is at hand, and lent
                    let mut attempts = Attempts::after_first(inner, first);
                    let out = self.retry_blocking(op, &mut attempts, Some(err));
                    self.finish();
                    out
                }
            };
        }
        let mut attempts = Attempts::new(inner, self.endpoint, self.site, self.max_elapsed());
        let out = self.retry_blocking(op, &mut attempts, None);
        self.finish();
        out
    }

    /// Ends a call, once its outcome is known. A call that owns nothing — no hooks, no
    /// cancellation token, its error type's own classifier — is forgotten
    /// rather than dropped: it holds only references and a function pointer,
    /// so nothing leaks, and the call skips the out-of-line drop glue
    /// of the hooks it does not have.
    #[inline(always)]
    pub(crate) fn finish(self) {
        if self.hooks.is_none() && matches!(self.classify, Classifier::Impl(_)) {
            core::mem::forget(self);
        }
    }

    /// Whether the call owns nothing: no hooks, no cancellation token, its
    /// error type's own classifier (see [`finish`](Call::finish)).
    #[inline(always)]
    fn owns_nothing(&self) -> bool {
        self.hooks.is_none() && matches!(self.classify, Classifier::Impl(_))
    }

    /// [`finish`](Call::finish), with [`owns_nothing`](Call::owns_nothing)
    /// read already.
    #[inline(always)]
    fn finish_owning(self, owns_nothing: bool) {
        if owns_nothing {
            core::mem::forget(self);
        }
    }

    /// The attempts of [`run_blocking`](Call::run_blocking) after the first
    /// one failed with `last` (all of them, from the first, when `last` is
    /// `None`). The call and the loop's state are borrowed, not moved: what
    /// the caller built stays where it is (a copy of what was just stored, in
    /// other widths, stalls the load).
    #[inline(never)]
    fn retry_blocking<T, F>(
        &mut self,
        mut op: F,
        attempts: &mut Attempts<'_>,
        mut last: Option<E>,
    ) -> Result<T, RetryError<E>>
    where
        F: FnMut(u32) -> Result<T, E>,
    {
        let inner = &*self.policy.inner;
        // whether an attempt has failed and awaits its decision
        let mut failed = last.is_some();
        // the sleep before the next attempt: its backoff, or a wait for the breaker
        let mut pause = Duration::ZERO;
        // bounded: `failed` stops at the hard cap on attempts
        loop {
            if failed {
                pause = attempts.failed(&mut last, None, self)?;
            }
            // from the decision to the attempt, a sleeper (or a step of the
            // admission) that unwinds gives the retry's charge back
            let unmade = Unmade(&mut *attempts);
            self.pause_blocking(inner, pause);
            let begun = self.begin(unmade.0, &mut last);
            core::mem::forget(unmade);
            let attempt = match begun {
                Ok(attempt) => attempt,
                Err(Refusal::Stop(stop)) => return Err(stop),
                Err(Refusal::Wait(wait)) => {
                    pause = wait;
                    // the failure is decided: only the admission is asked again
                    failed = false;
                    continue;
                }
            };
            // an operation that unwinds hands a probe's slot back
            let in_flight = InFlight(attempts);
            let outcome = op(attempt);
            core::mem::forget(in_flight);
            match outcome {
                Ok(value) => {
                    attempts.succeeded(self.endpoint);
                    return Ok(value);
                }
                Err(err) => last = Some(err),
            }
            failed = true;
        }
    }

    /// [`retry_blocking`](Call::retry_blocking) after a first attempt that
    /// failed with `err`, for a plain call ([`Call::is_plain`]): the same
    /// attempts, decisions and sleeps, without the steps that have nothing to
    /// do for such a call. There is no breaker to admit an attempt or count
    /// its outcome, no budget to charge or refund, no deadline, no retry
    /// pending a second look (only a learning policy's is), no cancellation
    /// to look for and no context to tell anyone of; a failure is judged by
    /// [`plain_failure`](Call::plain_failure) as
    /// [`Attempts::failed_plain`] judges it in the general loop. So the
    /// loop's state is the number of attempts made and the number counted
    /// against the cap, and no guard is needed for a sleeper or an operation
    /// that unwinds: there is no probe's slot and no charge to hand back.
    ///
    /// The general loop, entered with its state (`Attempts`, some 100 bytes
    /// made field by field), its guards and each step's look for what a plain
    /// call does not have, and the failure judged in a call of its own, cost
    /// a blocking classic failure 336 instructions; with this loop the call
    /// costs 230 (the bench's call, under callgrind). The property test
    /// `a_plain_classic_call_decides_as_the_full_loop_does` runs it beside
    /// the full loop.
    #[inline(never)]
    fn retry_plain_blocking<T, F>(&mut self, mut op: F, err: E) -> Result<T, RetryError<E>>
    where
        F: FnMut(u32) -> Result<T, E>,
    {
        let inner = &*self.policy.inner;
        // The loop's state is two counts, in registers: no `Attempts` is
        // made unless the call ends in an error, whose making reads it.
        let (mut attempt, mut counted, mut err) = (1_u32, 0_u32, err);
        // bounded: `plain_verdict` stops at the hard cap on attempts
        loop {
            // no hook to say a failure is free: every failure counts (a
            // permanent error, which ends the call, is not asked about it)
            counted = counted.saturating_add(1);
            let delay = match self.plain_failure(inner, attempt, counted, &err) {
                Ok(delay) => delay,
                Err(end) => return Err(self.plain_end(err, attempt, counted, end)),
            };
            if !delay.is_zero() {
                inner.blocking.sleep_blocking(delay);
            }
            // `Attempts::start` with no breaker, after the first attempt
            attempt = attempt.saturating_add(1);
            err = match op(attempt) {
                Ok(value) => return Ok(value),
                Err(err) => err,
            };
        }
    }

    /// Whether the call is plain: a plain classic policy
    /// ([`Inner::plain`](crate::policy::Inner)) and no hooks, no
    /// cancellation token and no time limit of its own. After a first attempt
    /// on the fast path, such a call's loop is two counts
    /// ([`plain_failure`](Call::plain_failure)).
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        self.policy.inner.plain && self.hooks.is_none()
    }

    /// The failure of attempt `attempt` of a plain call with `err`, `counted`
    /// attempts counted against the cap with it: classified and judged, as [`Attempts::failed_plain`] does, on the counts alone.
    /// `Ok(delay)` to sleep before the next attempt, or why the call ends
    /// (see [`plain_end`](Call::plain_end)): `None` for a permanent error. The
    /// error is borrowed, so it is not moved on the way to the next attempt.
    #[inline(always)]
    pub(crate) fn plain_failure(
        &self,
        inner: &Inner,
        attempt: u32,
        counted: u32,
        err: &E,
    ) -> Result<Duration, Option<Stop>> {
        let classification = self.classify.classify(err);
        let hint = match classification {
            Classification::Retryable(_) => None,
            Classification::RetryAfter(_, hint) => Some(hint),
            Classification::Permanent => return Err(None),
        };
        let (delay, decision) = plain_verdict(inner, attempt, counted, hint);
        #[cfg(feature = "tracing")]
        trace_plain(
            self.endpoint,
            attempt,
            Some(&classification),
            &decision,
            delay,
        );
        if decision.retry() {
            return Ok(delay);
        }
        Err(Some(Stop {
            decision,
            vetoed: false,
            breaker_until: None,
            now_ms: 0,
            timed_out: None,
            retry_after: hint,
        }))
    }

    /// The error that ends a plain call after `attempt` attempts, `counted`
    /// of them against the cap: `err` is permanent (`stop` is `None`) or the
    /// policy stopped. Made as the general loop makes it, from the loop's
    /// state.
    #[cold]
    #[inline(never)]
    pub(crate) fn plain_end(
        &mut self,
        err: E,
        attempt: u32,
        counted: u32,
        stop: Option<Stop>,
    ) -> RetryError<E> {
        let mut attempts = Attempts::plain(&self.policy.inner, attempt, counted);
        match stop {
            None => attempts.permanent(err, self.endpoint, 0),
            Some(stop) => attempts.stop(Some(err), stop, self),
        }
    }

    /// A server's hold on the endpoint refused an attempt, `left` before it
    /// ends, after `attempts` were made: `on_exhausted` sees it if one was
    /// (the last may have been cut off by its timeout, and left no error).
    fn server_hold(&mut self, left: Duration, last: Option<E>, attempts: u32) -> RetryError<E> {
        let stop: RetryError<E> = RetryErrorKind::ServerHold {
            endpoint: self.endpoint.to_owned(),
            retry_after: left,
            last_error: last,
            attempts,
        }
        .into();
        if attempts > 0 {
            if let Some(hook) = self.hooks.as_mut().and_then(|h| h.on_exhausted.as_mut()) {
                hook(&stop);
            }
        }
        stop
    }

    /// The breaker refused an attempt, after `attempts` were made:
    /// `on_exhausted` sees it if one was (the last may have been cut off by
    /// its timeout, and left no error).
    fn circuit_open(
        &mut self,
        retry_after: Option<Duration>,
        last: Option<E>,
        attempts: u32,
    ) -> RetryError<E> {
        let had_attempt = attempts > 0;
        let stop: RetryError<E> = RetryErrorKind::CircuitOpen {
            endpoint: self.endpoint.to_owned(),
            retry_after,
            last_error: last,
            attempts,
        }
        .into();
        if had_attempt {
            if let Some(hook) = self.hooks.as_mut().and_then(|h| h.on_exhausted.as_mut()) {
                hook(&stop);
            }
        }
        stop
    }
}

/// A function bound to a policy and an endpoint, made by
/// [`RetryPolicy::wrap`]: every call retries it.
#[derive(Clone, Debug)]
pub struct Retried<F> {
    policy: RetryPolicy,
    endpoint: String,
    f: F,
}

impl<F> Retried<F> {
    pub(crate) fn new(policy: RetryPolicy, endpoint: String, f: F) -> Retried<F> {
        Retried {
            policy,
            endpoint,
            f,
        }
    }

    /// The endpoint the calls are made to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Runs the function under the policy, asynchronously.
    pub async fn call<T, E, Fut>(&self) -> Result<T, RetryError<E>>
    where
        E: Classify,
        F: Fn(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.policy.run(&self.endpoint, &self.f).await
    }

    /// Runs the function under the policy, on the calling thread.
    pub fn call_blocking<T, E>(&self) -> Result<T, RetryError<E>>
    where
        E: Classify,
        F: Fn(u32) -> Result<T, E>,
    {
        self.policy.run_blocking(&self.endpoint, &self.f)
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::millis;

    #[test]
    fn millis_saturates_as_the_128_bit_conversion_does() {
        let cases = [
            Duration::ZERO,
            Duration::from_nanos(999_999),
            Duration::from_nanos(1_000_000),
            Duration::new(1, 999_999_999),
            Duration::from_millis(123_456_789),
            Duration::new(u64::MAX / 1_000, 999_000_000),
            Duration::new(u64::MAX / 1_000 + 1, 0),
            Duration::MAX,
        ];
        for d in cases {
            let wide = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            assert_eq!(millis(d), wide, "{d:?}");
        }
    }
}
