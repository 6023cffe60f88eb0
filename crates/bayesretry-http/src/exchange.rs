//! The retry loop every adapter shares: one request, sent under a policy, with
//! failure statuses classified, the server's hint attached, failed bodies drained
//! and the outcome mapped to a response or an [`Error`].

use core::future::{Future, poll_fn};
use core::pin::pin;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::Poll;
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bayesretry_cost::CostModel;
use bayesretry_policy::{
    Call, CancelToken, Classification, ErrorClass, Reason, RetryErrorKind, RetryPolicy,
    classify_status,
};
use bytes::Buf as _;
use http::{Extensions, HeaderMap, HeaderName, StatusCode};

use crate::config::{Config, MaxElapsed, NotRetried};
use crate::error::{Error, Stop};
use crate::retry_after::retry_after;

/// Most frames without body bytes (an empty data frame, trailers) a drain
/// reads. The byte limit bounds the frames that carry bytes, each of which
/// adds at least one, but not these, which a body could send without end.
/// A well-formed body sends one at most (its trailers).
const MAX_EMPTY_FRAMES: usize = 64;

/// What a drain has read so far, and whether it may read on.
///
/// The drain is bounded three ways: by bytes (the drain limit: a longer body
/// is dropped), by time (`drain_within`: a body that stalls is dropped), and
/// by frames, through those two and [`MAX_EMPTY_FRAMES`]. A bound on frames
/// alone would be the wrong one: a body far under the byte limit may come in
/// many small frames (a proxy that relays an upstream's error as it comes,
/// chunked encoding in small chunks), and a drain that gave up on it after a
/// fixed count would drop, and so close, a connection it could have reused,
/// to save work the byte limit already bounds.
#[derive(Debug)]
struct Tally {
    limit: usize,
    read: usize,
    empty: usize,
}

impl Tally {
    /// Nothing read yet, of a body that may be drained up to `limit` bytes.
    fn new(limit: usize) -> Tally {
        Tally {
            limit,
            read: 0,
            empty: 0,
        }
    }

    /// The most frames a drain reads: one per byte up to the limit, the
    /// frames without bytes, and the end. The loop's hard cap: [`Tally::more`]
    /// stops it first, unless the body ends.
    fn max_frames(&self) -> usize {
        self.limit
            .saturating_add(MAX_EMPTY_FRAMES)
            .saturating_add(1)
    }

    /// Counts a frame that carried `len` bytes: whether the drain may read
    /// another (false once the body is past the limit, or has sent too many
    /// frames without bytes).
    fn more(&mut self, len: usize) -> bool {
        if len == 0 {
            self.empty = self.empty.saturating_add(1);
            return self.empty <= MAX_EMPTY_FRAMES;
        }
        self.read = self.read.saturating_add(len);
        self.read <= self.limit
    }
}

/// A response, as the loop needs to see it.
pub(crate) trait Answer: Send + Sized {
    fn status(&self) -> StatusCode;
    fn headers(&self) -> &HeaderMap;
    fn extensions_mut(&mut self) -> &mut Extensions;
    /// Reads and discards the body, up to `limit` bytes, so that the connection
    /// can be reused; a longer body is dropped unread.
    fn drain(self, limit: usize) -> impl Future<Output = ()> + Send;
}

impl Answer for reqwest::Response {
    fn status(&self) -> StatusCode {
        reqwest::Response::status(self)
    }

    fn headers(&self) -> &HeaderMap {
        reqwest::Response::headers(self)
    }

    fn extensions_mut(&mut self) -> &mut Extensions {
        reqwest::Response::extensions_mut(self)
    }

    async fn drain(mut self, limit: usize) {
        let declared = self.content_length();
        if limit == 0 || declared.is_some_and(|len| len > limit as u64) {
            return;
        }
        let mut tally = Tally::new(limit);
        for _ in 0..tally.max_frames() {
            match self.chunk().await {
                Ok(Some(chunk)) => {
                    if !tally.more(chunk.len()) {
                        return;
                    }
                }
                Ok(None) | Err(_) => return,
            }
        }
    }
}

impl<B> Answer for http::Response<B>
where
    B: http_body::Body + Send,
{
    fn status(&self) -> StatusCode {
        http::Response::status(self)
    }

    fn headers(&self) -> &HeaderMap {
        http::Response::headers(self)
    }

    fn extensions_mut(&mut self) -> &mut Extensions {
        http::Response::extensions_mut(self)
    }

    async fn drain(self, limit: usize) {
        let body = self.into_body();
        let declared = body.size_hint().exact();
        if limit == 0 || declared.is_some_and(|len| len > limit as u64) {
            return;
        }
        let mut body = pin!(body);
        let mut tally = Tally::new(limit);
        for _ in 0..tally.max_frames() {
            if body.is_end_stream() {
                return;
            }
            match poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
                Some(Ok(frame)) => {
                    let len = frame.data_ref().map_or(0, |data| data.remaining());
                    if !tally.more(len) {
                        return;
                    }
                }
                Some(Err(_)) | None => return,
            }
        }
    }
}

/// How long a failed response's body may be drained before the retry: the
/// config's drain timeout, and at most half the policy's per-attempt timeout,
/// so that the drain, which runs inside the retry's attempt, can never use the
/// attempt up (see [`Config::with_drain_timeout`]).
fn drain_time(config: &Config, policy: &RetryPolicy) -> Duration {
    match policy.attempt_timeout() {
        Some(attempt) => config.drain_timeout.min(attempt / 2),
        None => config.drain_timeout,
    }
}

/// Drains `previous` for at most `within`, then drops what is left of it
/// (which closes its connection). A body that has already arrived is read
/// without a timer being set.
async fn drain_within<R: Answer>(previous: R, limit: usize, within: Duration) {
    let mut drain = pin!(previous.drain(limit));
    if poll_fn(|cx| Poll::Ready(drain.as_mut().poll(cx).is_ready())).await {
        return;
    }
    let Some(timer) = drain_timer(within) else {
        return;
    };
    let mut timer = pin!(timer);
    poll_fn(|cx| match drain.as_mut().poll(cx) {
        Poll::Ready(()) => Poll::Ready(()),
        Poll::Pending => timer.as_mut().poll(cx),
    })
    .await;
}

/// Drains `previous` as [`drain_within`] does, unless the call's `cancel`
/// token is cancelled first: the reason, if it was cancelled by the end of the
/// drain (what is left of the body is then dropped at once).
///
/// The drain runs inside the retry's attempt, after the policy's last look at
/// the token before that attempt; a cancellation that comes during it (a body
/// that stalls holds it for up to the drain timeout) would otherwise let the
/// retry go out after the caller said stop. The retry's request is not sent
/// when this returns a reason.
async fn drain_unless_cancelled<R: Answer>(
    previous: R,
    limit: usize,
    within: Duration,
    cancel: Option<&CancelToken>,
) -> Option<String> {
    let Some(token) = cancel else {
        drain_within(previous, limit, within).await;
        return None;
    };
    let mut drain = pin!(drain_within(previous, limit, within));
    let mut cancelled = pin!(token.cancelled());
    let reason = poll_fn(|cx| {
        if let Poll::Ready(reason) = cancelled.as_mut().poll(cx) {
            return Poll::Ready(Some(reason));
        }
        drain.as_mut().poll(cx).map(|()| None)
    })
    .await;
    reason.or_else(|| token.reason())
}

/// The timer of a drain: tokio's, inside a tokio runtime; none (the drain
/// ends at once) for a zero timeout or outside a runtime.
#[cfg(feature = "tokio")]
fn drain_timer(within: Duration) -> Option<tokio::time::Sleep> {
    if within.is_zero() || tokio::runtime::Handle::try_current().is_err() {
        return None;
    }
    Some(tokio::time::sleep(within))
}

/// The timer of a drain: none without the `tokio` feature, so the drain reads
/// only what has already arrived.
#[cfg(not(feature = "tokio"))]
fn drain_timer(_within: Duration) -> Option<core::future::Pending<()>> {
    None
}

/// The header with which the OpenAI and Anthropic APIs say whether a failed
/// request should be retried, `true` or `false`; their SDKs obey it before
/// they look at the status.
const SHOULD_RETRY: HeaderName = HeaderName::from_static("x-should-retry");

/// What a response's `x-should-retry` says: `Some(true)` or `Some(false)`
/// (either in any case, with spaces or tabs around), `None` for any other
/// value or none.
fn should_retry(headers: &HeaderMap) -> Option<bool> {
    let value = headers
        .get(SHOULD_RETRY)?
        .to_str()
        .ok()?
        .trim_matches([' ', '\t']);
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// The classification of a failure status: the caller's
/// ([`Config::with_status_classifier`]) when it gave one, otherwise the
/// policy's table ([`classify_status`]), unless `x-should-retry: true` makes a
/// status the table calls permanent retryable; with the server's wait attached.
///
/// `x-should-retry: false` does not change the class: a failure the table
/// calls retryable (a 503, say) is still the endpoint failing, learned and
/// counted by its breaker, and the call's veto ([`server_says_no`]) keeps it
/// from being retried.
fn classify_failure(
    status: StatusCode,
    retry_after: Option<Duration>,
    should_retry: Option<bool>,
    classified: Option<Classification>,
) -> Classification {
    let status = status.as_u16();
    let class = match (classified, should_retry, classify_status(status)) {
        (Some(class), _, _) => class,
        (None, Some(true), Classification::Permanent) => {
            Classification::Retryable(ErrorClass::from_status(status))
        }
        (None, _, class) => class,
    };
    match retry_after {
        Some(wait) => class.with_retry_after(wait),
        None => class,
    }
}

/// A failed attempt as the policy sees it: a failure status with the server's
/// hint, its `x-should-retry` and whether it answers a request a redirect led
/// to (the response itself waits in the loop's slot), or a transport error.
#[derive(Debug)]
pub(crate) enum Failed<E> {
    Status {
        status: StatusCode,
        retry_after: Option<Duration>,
        should_retry: Option<bool>,
        /// The caller's classification of the response, if it gave one.
        classified: Option<Classification>,
        /// The response answers another request than the one sent: one a
        /// redirect led to. Only looked at for a request not safe to replay.
        redirected: bool,
    },
    Transport(E),
    /// The call's token was cancelled while the failed response before this
    /// attempt was being drained: the attempt's request was not sent.
    Cancelled(String),
}

/// A request not safe to replay: why it is replayed only after a refusal,
/// and how its adapter tells a refusal of the request as it was sent.
pub(crate) struct OnlyRefusals<N, D> {
    /// Why the request is not replayed after any other failure.
    pub(crate) why: NotRetried,
    /// Whether a transport error came before the request was sent.
    pub(crate) never_sent: N,
    /// Whether a failure response answers another request than the one sent:
    /// one a redirect led to, such as the GET that a 303 after a POST makes.
    /// That request's refusal says nothing of the one sent, which the
    /// redirect shows was processed.
    pub(crate) redirected: D,
}

/// Whether the server said, with `x-should-retry: false`, not to send the
/// request again after this failure.
fn server_says_no<E>(failed: &Failed<E>) -> bool {
    matches!(
        failed,
        Failed::Status {
            should_retry: Some(false),
            ..
        }
    )
}

/// Whether a status ends the call: everything below 400 is an answer to return.
fn is_failure(status: StatusCode) -> bool {
    status.as_u16() >= 400
}

/// What a caller set for one call beside the policy: a cancellation token, a
/// time limit and a price of its own.
#[derive(Clone, Debug, Default)]
pub(crate) struct PerCall {
    /// Ends the call when cancelled.
    pub(crate) cancel: Option<CancelToken>,
    /// The call's own deadline ([`Call::with_max_elapsed`]).
    pub(crate) max_elapsed: Option<Duration>,
    /// The call's own price ([`Call::with_cost_model`]).
    pub(crate) cost_model: Option<CostModel>,
}

impl PerCall {
    /// What a request's extensions carry: a [`CancelToken`], a
    /// [`MaxElapsed`] and a [`CostModel`] (behind the layer and the
    /// middleware).
    pub(crate) fn from_extensions(extensions: &Extensions) -> PerCall {
        PerCall {
            cancel: extensions.get::<CancelToken>().cloned(),
            max_elapsed: extensions.get::<MaxElapsed>().map(|limit| limit.0),
            cost_model: extensions.get::<CostModel>().copied(),
        }
    }

    /// `call`, with what the caller set.
    fn apply<'a, E>(self, mut call: Call<'a, E>) -> Call<'a, E> {
        if let Some(token) = self.cancel {
            call = call.with_cancel(token);
        }
        if let Some(limit) = self.max_elapsed {
            call = call.with_max_elapsed(limit);
        }
        if let Some(cost_model) = self.cost_model {
            call = call.with_cost_model(cost_model);
        }
        call
    }
}

/// Sends a request that cannot be sent twice (its body is a stream): once,
/// outside the policy. A response is marked with the reason ([`NotRetried`] in
/// its extensions). A `cancel` token cancelled already keeps it from being
/// sent at all, as the policy's loop does before a first attempt; `attempt`
/// is then dropped unpolled.
pub(crate) async fn once<R, E>(
    endpoint: &str,
    why: NotRetried,
    cancel: Option<&CancelToken>,
    attempt: impl Future<Output = Result<R, E>>,
) -> Result<R, Error<E, R>>
where
    R: Answer,
{
    if let Some(reason) = cancel.and_then(CancelToken::reason) {
        return Err(Error::Cancelled {
            reason,
            attempts: 0,
        });
    }
    not_retried(endpoint, &why);
    match attempt.await {
        Ok(mut response) => {
            response.extensions_mut().insert(why);
            Ok(response)
        }
        Err(source) => Err(Error::Transport {
            source,
            attempts: 1,
            stop: Stop::NotRetried(why),
        }),
    }
}

/// The `debug` event of a request not sent again, with the reason.
fn not_retried(endpoint: &str, why: &NotRetried) {
    #[cfg(feature = "tracing")]
    tracing::debug!(endpoint, reason = %why, "request not retried");
    #[cfg(not(feature = "tracing"))]
    let _ = (endpoint, why);
}

/// Sends a request under `policy` and maps the outcome; `send` makes one
/// attempt's future. That future is first polled after the drain of the failed
/// response before it, so it must start nothing — a timer above all — until
/// then.
///
/// A request not safe to replay (`only_refusals`, with the reason) is
/// replayed only after a refusal: a refusal status
/// ([`Config::with_refusal_statuses`]) that answers the request as it was
/// sent, not one a redirect led to, or a transport error that `never_sent`
/// says came before the request was sent. Any other failure ends its call,
/// reported with the reason.
pub(crate) async fn exchange<R, E, C, N, D, F, Fut>(
    policy: &RetryPolicy,
    config: &Config,
    endpoint: &str,
    classify_transport: C,
    only_refusals: Option<OnlyRefusals<N, D>>,
    per_call: PerCall,
    mut send: F,
) -> Result<R, Error<E, R>>
where
    R: Answer,
    C: Fn(&E) -> Classification + Send + Sync,
    N: Fn(&E) -> bool + Sync,
    D: Fn(&R) -> bool + Sync,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<R, E>>,
{
    // for a request not safe to replay: whether a failure shows the request
    // was not processed, so that replaying it is safe after all
    let only_refusals = only_refusals.as_ref();
    let why = only_refusals.map(|only| &only.why);
    let refusal = only_refusals.map(|only| {
        move |failed: &Failed<E>| match failed {
            Failed::Status {
                status, redirected, ..
            } => !redirected && config.is_refusal(*status),
            Failed::Transport(err) => (only.never_sent)(err),
            Failed::Cancelled(_) => false,
        }
    });
    // The response of the last failed attempt: kept out of the policy's hands
    // so that it can be drained before a retry, or returned when none follows.
    let pending: Mutex<Option<R>> = Mutex::new(None);
    let attempts = AtomicU32::new(0);
    let limit = config.drain_limit;
    let within = drain_time(config, policy);
    let classify = move |failed: &Failed<E>| match failed {
        Failed::Status {
            status,
            retry_after,
            should_retry,
            classified,
            ..
        } => classify_failure(*status, *retry_after, *should_retry, *classified),
        Failed::Transport(err) => classify_transport(err),
        // not classified: the policy ends the call as cancelled first
        // (`cancelled_before_sending`); were it asked, nothing was sent, so
        // there is nothing to retry
        Failed::Cancelled(_) => Classification::Permanent,
    };
    // Vetoes, so that the failure is classified, learned and counted by the
    // breaker as it is: the server's `x-should-retry: false`, and for a
    // request not safe to replay, any failure but a refusal (an attempt cut
    // off by the policy's timeout, with no error, may have been processed,
    // and is not replayed either).
    let call = policy.call_with(endpoint, classify);
    let call = match &refusal {
        Some(refusal) => call.should_retry(move |failed| {
            failed
                .error
                .is_some_and(|error| !server_says_no(error) && refusal(error))
        }),
        None => call.should_retry(|failed| !failed.error.is_some_and(server_says_no)),
    };
    let cancel = per_call.cancel.clone();
    let cancel = cancel.as_ref();
    let mut call = per_call.apply(call);
    if cancel.is_some() {
        // a retry stopped in its drain was never sent: the policy neither
        // learns it nor counts it, and gives its budget charge back
        call = call.cancelled_before_sending(|failed| matches!(failed, Failed::Cancelled(_)));
    }
    let outcome = call
        .run(|attempt| {
            attempts.store(attempt, Ordering::Relaxed);
            let previous = take(&pending);
            let attempt = send();
            let pending = &pending;
            async move {
                if let Some(previous) = previous {
                    // here, not before the backoff: only now is the retry sure to
                    // go out, so the response is no longer the call's answer.
                    // Boxed: the failure path only, and it keeps every attempt's
                    // future (which the run loop holds) small. A cancellation
                    // that comes during the drain keeps the retry from going out.
                    let drained = drain_unless_cancelled(previous, limit, within, cancel);
                    if let Some(reason) = Box::pin(drained).await {
                        return Err(Failed::Cancelled(reason));
                    }
                }
                match attempt.await {
                    Ok(response) if !is_failure(response.status()) => Ok(response),
                    Ok(response) => {
                        let status = response.status();
                        let hint = retry_after(response.headers(), config.now())
                            .or_else(|| config.rate_limit_wait(status, response.headers()));
                        let should_retry = should_retry(response.headers());
                        let classified = config.classify_response(status, response.headers());
                        let redirected =
                            only_refusals.is_some_and(|only| (only.redirected)(&response));
                        *pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(response);
                        Err(Failed::Status {
                            status,
                            retry_after: hint,
                            should_retry,
                            classified,
                            redirected,
                        })
                    }
                    Err(err) => Err(Failed::Transport(err)),
                }
            }
        })
        .await;
    let attempts = attempts.load(Ordering::Relaxed);
    let stop = match outcome {
        Ok(mut response) => {
            // a request not safe to replay that succeeded at once was sent
            // once, and says so as one sent outside the policy does
            if let Some(why) = why.filter(|_| attempts == 1) {
                not_retried(endpoint, why);
                response.extensions_mut().insert(why.clone());
            }
            return Ok(response);
        }
        Err(stop) => stop,
    };
    // what the last attempt left and why the loop stopped
    let (last, reason) = match stop.into_kind() {
        RetryErrorKind::Exhausted {
            last_error,
            decision,
            ..
        } => (last_error, Stop::Policy(decision.reason())),
        RetryErrorKind::Permanent(last_error) => (last_error, Stop::Permanent),
        RetryErrorKind::DeadlineExceeded {
            last_error,
            decision,
            ..
        } => (last_error, Stop::Policy(decision.reason())),
        RetryErrorKind::BudgetExhausted {
            last_error: Some(last_error),
            ..
        } => (last_error, Stop::Policy(Reason::BudgetExhausted)),
        RetryErrorKind::CircuitOpen {
            last_error: Some(last_error),
            ..
        } => (last_error, Stop::Policy(Reason::CircuitOpen)),
        RetryErrorKind::CircuitOpen {
            endpoint,
            retry_after,
            last_error: None,
            attempts,
        } => {
            return Err(Error::CircuitOpen {
                endpoint,
                retry_after,
                attempts,
            });
        }
        RetryErrorKind::ServerHold {
            last_error: Some(last_error),
            retry_after,
            ..
        } => (last_error, Stop::ServerHold { retry_after }),
        RetryErrorKind::ServerHold {
            endpoint,
            retry_after,
            last_error: None,
            attempts,
        } => {
            return Err(Error::ServerHold {
                endpoint,
                retry_after,
                attempts,
            });
        }
        RetryErrorKind::AttemptTimedOut {
            timeout, attempts, ..
        } => return Err(Error::AttemptTimedOut { timeout, attempts }),
        // the caller's word: whatever the last attempt left is not wanted;
        // a retry stopped in its drain was not sent, and is not counted
        RetryErrorKind::Cancelled { reason, last_error } => {
            let attempts = match last_error {
                Some(Failed::Cancelled(_)) => attempts.saturating_sub(1),
                _ => attempts,
            };
            return Err(Error::Cancelled { reason, attempts });
        }
        other => match other.into_last_error() {
            Some(last_error) => (last_error, Stop::Other),
            // only an attempt cut off by the policy's timeout leaves no error
            // (here, one the budget would not retry)
            None => {
                return Err(Error::AttemptTimedOut {
                    timeout: policy.attempt_timeout().unwrap_or_default(),
                    attempts,
                });
            }
        },
    };
    // A request not safe to replay whose last failure was not a refusal is not
    // sent again whatever the policy said: that, and not the policy's reason
    // (its cap, a server's wait it would not honour), is why the call ends.
    // Not for a permanent failure, or one the server said not to retry,
    // which no request is sent again after, whatever its method: that is the
    // reason, as for a GET.
    let held_back = match (why, &refusal) {
        (Some(why), Some(refusal))
            if reason != Stop::Permanent && !server_says_no(&last) && !refusal(&last) =>
        {
            Some(why)
        }
        _ => None,
    };
    if let Some(why) = held_back {
        not_retried(endpoint, why);
        return match last {
            Failed::Transport(source) => Err(Error::Transport {
                source,
                attempts,
                stop: Stop::NotRetried(why.clone()),
            }),
            Failed::Status { .. } => {
                let mut response = take_last(&pending);
                response.extensions_mut().insert(why.clone());
                Ok(response)
            }
            Failed::Cancelled(reason) => Err(Error::Cancelled {
                reason,
                attempts: attempts.saturating_sub(1),
            }),
        };
    }
    match last {
        Failed::Transport(source) => Err(Error::Transport {
            source,
            attempts,
            stop: reason,
        }),
        // cancelled in the drain before the last attempt, which was not
        // sent (classified permanent: the policy stopped on it at once)
        Failed::Cancelled(reason) => Err(Error::Cancelled {
            reason,
            attempts: attempts.saturating_sub(1),
        }),
        // the server said not to retry: its wait is no reason to stop with an
        // error, the answer is the response
        Failed::Status {
            should_retry: Some(false),
            ..
        } => Ok(take_last(&pending)),
        Failed::Status { retry_after, .. } => {
            let response = take_last(&pending);
            match (reason, retry_after) {
                (Stop::Policy(Reason::RetryAfterBeyondLimit), Some(retry_after)) => {
                    Err(Error::RetryAfterBeyondLimit {
                        retry_after,
                        attempts,
                        response: Box::new(response),
                    })
                }
                // only when the server's wait, not the backoff, crossed the
                // deadline; otherwise the last response, as without a header
                (Stop::Policy(Reason::RetryAfterPastDeadline), Some(retry_after)) => {
                    Err(Error::RetryAfterPastDeadline {
                        retry_after,
                        attempts,
                        response: Box::new(response),
                    })
                }
                _ => Ok(response),
            }
        }
    }
}

/// The slot's response, if any.
fn take<R>(slot: &Mutex<Option<R>>) -> Option<R> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// The last failed attempt's response, after the loop stopped on it.
#[expect(
    clippy::expect_used,
    reason = "an attempt that fails with a status leaves its response in the slot, and the \
              slot is emptied only when a next attempt starts, which the policy does not do \
              after handing back that failure"
)]
fn take_last<R>(slot: &Mutex<Option<R>>) -> R {
    take(slot).expect("the last failed status left its response")
}

#[cfg(test)]
mod tests {
    use super::*;

    use alloc::sync::Arc;
    use core::pin::Pin;
    use core::sync::atomic::AtomicUsize;
    use core::task::{Context, Waker};

    use bytes::Bytes;
    use http_body::{Body, Frame};

    use crate::config::DEFAULT_DRAIN_LIMIT;

    /// A body of `frames` frames of `len` bytes each, then its end (`None`
    /// frames: endless), counting the frames polled.
    struct Frames {
        frames: Option<usize>,
        len: usize,
        polled: Arc<AtomicUsize>,
    }

    impl Body for Frames {
        type Data = Bytes;
        type Error = core::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            let polled = self.polled.fetch_add(1, Ordering::SeqCst);
            if self.frames.is_some_and(|frames| polled >= frames) {
                return Poll::Ready(None);
            }
            Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![b'x'; self.len])))))
        }
    }

    /// Drains a body of `frames` frames of `len` bytes, up to `limit` bytes:
    /// the frames polled, the end included.
    fn drain_frames(frames: Option<usize>, len: usize, limit: usize) -> usize {
        let polled = Arc::new(AtomicUsize::new(0));
        let body = Frames {
            frames,
            len,
            polled: Arc::clone(&polled),
        };
        let response = http::Response::new(body);
        let mut drain = pin!(Answer::drain(response, limit));
        // every frame is ready: one poll drains it all
        let polled_once = drain.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled_once.is_ready());
        polled.load(Ordering::SeqCst)
    }

    #[test]
    fn a_body_under_the_limit_is_read_to_its_end_however_many_frames_it_comes_in() {
        // one byte a frame, up to the limit exactly: every frame, then the end
        assert_eq!(drain_frames(Some(1000), 1, 1000), 1001);
        assert_eq!(drain_frames(Some(20_000), 1, DEFAULT_DRAIN_LIMIT), 20_001);
    }

    #[test]
    fn a_body_past_the_limit_is_left_at_the_frame_that_crosses_it() {
        assert_eq!(drain_frames(Some(1001), 1, 1000), 1001);
        assert_eq!(drain_frames(None, 1, 1000), 1001);
    }

    #[test]
    fn a_body_of_endless_empty_frames_is_left_after_the_cap() {
        assert_eq!(drain_frames(None, 0, 1000), MAX_EMPTY_FRAMES + 1);
        assert_eq!(drain_frames(None, 0, 0), 0);
    }

    #[test]
    fn the_tally_stops_a_body_that_does_not_end_before_the_frame_cap() {
        // the longest run the tally allows: every empty frame it takes and one
        // byte a frame, in either order; the frame past it is refused, and it
        // is still within the loop's cap
        for limit in [0, 1, 7, 1000] {
            for empty_first in [true, false] {
                let mut tally = Tally::new(limit);
                let cap = tally.max_frames();
                let len = |i: usize| match empty_first {
                    true => usize::from(i >= MAX_EMPTY_FRAMES),
                    false => usize::from(i < limit),
                };
                let stopped = (0..cap).position(|i| !tally.more(len(i)));
                assert_eq!(stopped, Some(cap - 1), "{limit} {empty_first}");
            }
        }
        assert_eq!(Tally::new(usize::MAX).max_frames(), usize::MAX);
    }
}
