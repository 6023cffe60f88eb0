//! [`Run`]: the future of an async call — its first attempt in place, the
//! retries boxed.
//!
//! # Why not one `async fn`
//!
//! Most calls succeed at their first attempt, so that attempt is what an async
//! call must make cheap. An `async fn` holding the whole loop is a state machine
//! whose every poll runs through the states of all its awaits (timeouts,
//! sleeps, a sleep raced with a cancellation, the retries), and whose size is
//! what the largest of them holds: an executor moves it before running it, and
//! the first poll pays for the rest of the loop it never reaches. So the first
//! attempt is polled here, in a small future of its own that holds the call,
//! the operation, what the admission found and the attempt's future; only when
//! that attempt fails (or the first step cannot take the fast path, see
//! [`Call::first`](crate::Call)) is the retry loop — an `async fn` — made, in a
//! box: one allocation, on the path that is about to back off anyway.
//!
//! The operation is called at the first poll, not when the future is made,
//! exactly as the `async fn` it replaces: a future that is never polled makes
//! no attempt.

use alloc::boxed::Box;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use crate::call::{Attempts, Call, First};
use crate::error::RetryError;
use crate::policy::{Inner, RetryPolicy};

pin_project! {
    /// The future of [`Call::run`]: see the module documentation. `M` makes the
    /// retry loop's future `R` (it is [`Call::retry_loop`], a zero-sized
    /// function item), so that the loop's type can be named here.
    pub(crate) struct Run<'a, E, F, Fut, M, R> {
        call: Option<Call<'a, E>>,
        op: Option<F>,
        first: Option<First<'a>>,
        #[pin]
        attempt: Option<Fut>,
        rest: Option<Pin<Box<R>>>,
        make_rest: M,
    }
}

impl<'a, E, F, Fut, M, R> Run<'a, E, F, Fut, M, R> {
    /// The call `call` of `op`, not started.
    pub(crate) fn new(call: Call<'a, E>, op: F, make_rest: M) -> Self {
        Run {
            call: Some(call),
            op: Some(op),
            first: None,
            attempt: None,
            rest: None,
            make_rest,
        }
    }
}

impl<'a, T, E, F, Fut, M, R> Future for Run<'a, E, F, Fut, M, R>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    M: Fn(Call<'a, E>, F, Attempts<'a>, Option<E>) -> R,
    R: Future<Output = Result<T, RetryError<E>>>,
{
    type Output = Result<T, RetryError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Some(rest) = this.rest.as_mut() {
            let out = ready!(rest.as_mut().poll(cx));
            // a finished loop is not polled again
            *this.rest = None;
            return Poll::Ready(out);
        }
        if this.attempt.is_none() {
            // The first poll (or a poll after the end, which finds no call and
            // stays pending: a finished future must not be polled again).
            let Some(call) = this.call.as_ref() else {
                return Poll::Pending;
            };
            match (call.first(), this.op.as_mut()) {
                (Some(first), Some(op)) => {
                    *this.first = Some(first);
                    this.attempt.set(Some(op(1)));
                }
                _ => {
                    return start_rest(this.call, this.op, None, this.rest, this.make_rest, cx);
                }
            }
        }
        let Some(attempt) = this.attempt.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        let outcome = ready!(attempt.poll(cx));
        this.attempt.set(None);
        match outcome {
            Ok(value) => {
                if let (Some(call), Some(first)) = (this.call.take(), this.first.take()) {
                    first.succeeded(inner_of(&call));
                    call.finish();
                }
                *this.op = None;
                Poll::Ready(Ok(value))
            }
            Err(err) => start_rest(
                this.call,
                this.op,
                this.first.take().map(|first| (first, err)),
                this.rest,
                this.make_rest,
                cx,
            ),
        }
    }
}

/// Makes the retry loop, in a box, and polls it: after the first attempt,
/// admitted as `after.0`, failed with `after.1`, or from the start when
/// `after` is `None`. Out of line: the first attempt's success path stays small
/// enough to inline into the caller.
#[cold]
#[inline(never)]
fn start_rest<'a, T, E, F, Fut, M, R>(
    call: &mut Option<Call<'a, E>>,
    op: &mut Option<F>,
    after: Option<(First<'a>, E)>,
    rest: &mut Option<Pin<Box<R>>>,
    make_rest: &M,
    cx: &mut Context<'_>,
) -> Poll<Result<T, RetryError<E>>>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    M: Fn(Call<'a, E>, F, Attempts<'a>, Option<E>) -> R,
    R: Future<Output = Result<T, RetryError<E>>>,
{
    let (Some(call), Some(op)) = (call.take(), op.take()) else {
        return Poll::Pending;
    };
    let inner = inner_of(&call);
    let (attempts, last) = match after {
        Some((first, err)) => (
            Attempts::after_first(inner, call.endpoint(), first),
            Some(err),
        ),
        None => (Attempts::new(inner, call.endpoint(), call.site()), None),
    };
    let loop_ = rest.insert(Box::pin(make_rest(call, op, attempts, last)));
    let out = ready!(loop_.as_mut().poll(cx));
    // a finished loop is not polled again
    *rest = None;
    Poll::Ready(out)
}

/// The policy state a call runs under, for as long as the call's policy borrow.
fn inner_of<'a, E>(call: &Call<'a, E>) -> &'a Inner {
    let policy: &'a RetryPolicy = call.policy();
    &policy.inner
}
