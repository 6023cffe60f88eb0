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
/// [`RetryError::Cancelled`](crate::RetryError::Cancelled) with the reason. The
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
    wakers: Vec<Waker>,
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
        for waker in wakers {
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
        Cancelled { token: self }
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
}

impl Future for Cancelled<'_> {
    type Output = String;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        let mut state = self.token.lock();
        if let Some(reason) = &state.reason {
            return Poll::Ready(reason.clone());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
