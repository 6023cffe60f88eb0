//! [`CancelToken`]: an explicit signal that ends a pending retry at once.

use alloc::sync::Arc;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// A cancellation signal shared between a call and whoever may cancel it.
///
/// Dropping a call's future already cancels it; a token is for the other side of
/// a program — a shutdown, a user pressing stop — to end a call that is waiting
/// out a long backoff *now*, and to say why. The call then returns
/// [`RetryErrorKind::Cancelled`](crate::RetryErrorKind::Cancelled) with the reason. The
/// first reason given wins. Clones share one signal.
///
/// ```
/// use bayesretry_policy::CancelToken;
///
/// let token = CancelToken::new();
/// let other = token.clone();
/// other.cancel("shutting down");
/// other.cancel("ignored: already cancelled");
/// assert_eq!(token.reason().as_deref(), Some("shutting down"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelToken {
    inner: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the threads blocked in [`CancelToken::wait_timeout`].
    cancelled: Condvar,
}

#[derive(Debug, Default)]
struct State {
    reason: Option<String>,
    /// The wakers of the pending [`Cancelled`] futures, by registration. A
    /// future takes its own out when dropped, so a token that lives as long as
    /// the program (one shutdown signal for every call) holds only the wakers
    /// of the calls waiting now, not one for every sleep it ever ended.
    wakers: Vec<(u64, Waker)>,
    /// The next registration number.
    next: u64,
}

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels, with a reason a person can read; wakes every waiting call. Only
    /// the first cancellation counts.
    pub fn cancel(&self, reason: impl Into<String>) {
        let wakers = {
            let mut state = self.lock();
            if state.reason.is_some() {
                return;
            }
            state.reason = Some(reason.into());
            core::mem::take(&mut state.wakers)
        };
        self.inner.cancelled.notify_all();
        for (_, waker) in wakers {
            waker.wake();
        }
    }

    /// Whether [`cancel`](CancelToken::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.lock().reason.is_some()
    }

    /// The reason given to [`cancel`](CancelToken::cancel), if it was called.
    pub fn reason(&self) -> Option<String> {
        self.lock().reason.clone()
    }

    /// Blocks the calling thread until the token is cancelled or `timeout` has
    /// passed, whichever comes first; the reason if it was cancelled. The
    /// blocking run loop sleeps on this, so that a cancellation ends a pending
    /// blocking sleep at once.
    ///
    /// ```
    /// use bayesretry_policy::CancelToken;
    /// use std::time::Duration;
    ///
    /// let token = CancelToken::new();
    /// let other = token.clone();
    /// let waiter = std::thread::spawn(move || other.wait_timeout(Duration::from_secs(3_600)));
    /// token.cancel("shutting down");
    /// assert_eq!(waiter.join().unwrap().as_deref(), Some("shutting down"));
    /// ```
    pub fn wait_timeout(&self, timeout: Duration) -> Option<String> {
        let state = self.lock();
        let (state, _) = self
            .inner
            .cancelled
            .wait_timeout_while(state, timeout, |state| state.reason.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        state.reason.clone()
    }

    /// A future that completes with the reason when the token is cancelled.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            token: self,
            registered: None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The future of [`CancelToken::cancelled`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Cancelled<'a> {
    token: &'a CancelToken,
    /// This future's registration among the token's wakers, once polled.
    registered: Option<u64>,
}

impl Future for Cancelled<'_> {
    type Output = String;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        let this = self.get_mut();
        this.token.poll_registered(&mut this.registered, cx)
    }
}

impl Drop for Cancelled<'_> {
    /// Takes this future's waker out of the token: a call whose sleep ended
    /// without a cancellation leaves nothing behind.
    fn drop(&mut self) {
        self.token.deregister(self.registered);
    }
}

/// [`Cancelled`] with a token of its own (a clone: one more reference to the
/// shared signal): for a future that keeps it beside the call it belongs to,
/// which a borrow of the call's token could not do.
#[derive(Debug)]
pub(crate) struct OwnedCancelled {
    token: CancelToken,
    registered: Option<u64>,
}

impl OwnedCancelled {
    pub(crate) fn new(token: &CancelToken) -> OwnedCancelled {
        OwnedCancelled {
            token: token.clone(),
            registered: None,
        }
    }
}

impl Future for OwnedCancelled {
    type Output = String;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        let this = self.get_mut();
        this.token.poll_registered(&mut this.registered, cx)
    }
}

impl Drop for OwnedCancelled {
    /// As [`Cancelled`]'s.
    fn drop(&mut self) {
        self.token.deregister(self.registered);
    }
}

impl CancelToken {
    /// Polls for the cancellation on behalf of a future registered as
    /// `registered` (none yet: registers it).
    fn poll_registered(&self, registered: &mut Option<u64>, cx: &mut Context<'_>) -> Poll<String> {
        let mut state = self.lock();
        if let Some(reason) = &state.reason {
            return Poll::Ready(reason.clone());
        }
        let current = registered.and_then(|id| state.wakers.iter_mut().find(|(at, _)| *at == id));
        match current {
            Some((_, waker)) => waker.clone_from(cx.waker()),
            None => {
                let id = state.next;
                state.next = state.next.wrapping_add(1);
                state.wakers.push((id, cx.waker().clone()));
                *registered = Some(id);
            }
        }
        Poll::Pending
    }

    /// Takes the waker of a future registered as `registered` out of the token.
    fn deregister(&self, registered: Option<u64>) {
        if let Some(id) = registered {
            let mut state = self.lock();
            if let Some(at) = state.wakers.iter().position(|(at, _)| *at == id) {
                drop(state.wakers.swap_remove(at));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::sync::Arc;
    use alloc::task::Wake;
    use core::future::Future;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};

    use super::CancelToken;

    /// A waker of its own, so that no two are alike.
    struct Task;

    impl Wake for Task {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn a_long_lived_token_keeps_only_the_wakers_of_pending_futures() {
        let token = CancelToken::new();
        for _ in 0..1_000 {
            let waker = Waker::from(Arc::new(Task));
            let mut cx = Context::from_waker(&waker);
            let mut cancelled = pin!(token.cancelled());
            assert!(cancelled.as_mut().poll(&mut cx).is_pending());
            // polled again, by another task: still one registration
            let other = Waker::from(Arc::new(Task));
            assert!(
                cancelled
                    .as_mut()
                    .poll(&mut Context::from_waker(&other))
                    .is_pending()
            );
            assert_eq!(token.lock().wakers.len(), 1);
        }
        assert_eq!(token.lock().wakers.len(), 0);

        // a pending future is still woken, and sees the reason
        let waker = Waker::from(Arc::new(Task));
        let mut cx = Context::from_waker(&waker);
        let mut cancelled = pin!(token.cancelled());
        assert!(cancelled.as_mut().poll(&mut cx).is_pending());
        token.cancel("stop");
        assert_eq!(
            cancelled.as_mut().poll(&mut cx),
            Poll::Ready(String::from("stop"))
        );
    }

    #[test]
    fn an_async_call_dropped_in_its_sleep_leaves_no_waker_in_its_token() {
        let policy = crate::RetryPolicy::builder()
            .classic()
            .with_backoff(
                bayesretry_backoff::Config::new().with_jitter(bayesretry_backoff::Jitter::None),
            )
            .with_sleeper(|_| core::future::pending::<()>())
            .build()
            .unwrap();
        let token = CancelToken::new();
        let waker = Waker::from(Arc::new(Task));
        let mut cx = Context::from_waker(&waker);
        for _ in 0..3 {
            let mut call = pin!(
                policy
                    .call::<crate::HttpStatus>("api")
                    .with_cancel(token.clone())
                    .run(|_| async { Err::<(), _>(crate::HttpStatus(503)) })
            );
            // the first attempt fails; the call sleeps, racing the token
            assert!(call.as_mut().poll(&mut cx).is_pending());
            assert!(call.as_mut().poll(&mut cx).is_pending());
            assert_eq!(token.lock().wakers.len(), 1);
        }
        assert_eq!(token.lock().wakers.len(), 0);
    }
}
