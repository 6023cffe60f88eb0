//! [`Run`]: the future of an async call — a state machine written by hand,
//! with the first attempt on a fast path and the retry loop's state made only
//! after a failure.
//!
//! # Why not one `async fn`
//!
//! Most calls succeed at their first attempt, so that attempt is what an async
//! call must make cheap; and a call that fails once should cost little more
//! than its decision. An `async fn` holding the whole loop is a generator that
//! copies its arguments into its state and again into the locals of its first
//! state, runs every poll through the states of all its awaits (timeouts,
//! sleeps, a sleep raced with a cancellation), and nests the attempt's own
//! future in the future of a helper. Its first version here polled the first
//! attempt in a small future and made that `async fn` only after a failure, in
//! a box: one allocation and some hundred bytes of copies per failed call.
//!
//! So the loop is this future's own state machine: the call, the operation
//! and the attempt's future are fields, set once and borrowed in place; the
//! first attempt runs on the fast path ([`Call::first`](crate::Call)), and
//! after a failure the general loop's steps (decide, sleep, begin an attempt,
//! await it) run on a state made once per failed call. The success of a first
//! attempt is one branch away from its poll, and the general loop is out of
//! line, so the fast path stays small enough to inline into the caller.
//!
//! That state — the loop's counters, the breaker it found, the last error,
//! the sleep, the timer, the cancellation — is not a field of the future, on
//! purpose: it is about 190 bytes, and every executor moves a future at least
//! once (into its task, into `block_on`). A future of up to 128 bytes moves in
//! a few inline stores; held inline, the state made the call's future 280
//! bytes, moved by a call to `memmove` that cost a call which succeeds at once
//! more than its own work (more than twice backon's time in the bench). The
//! loop runs on the state on its own stack, and boxes it only when it must
//! wait — on a path that is about to back off anyway — so the future stays at
//! 104 bytes, and a retry that never waits (a zero delay or a sleeper whose
//! future is `Ready<()>`, and an attempt that answers at once) allocates
//! nothing.
//!
//! The operation is called at the first poll, not when the future is made,
//! exactly as the `async fn` it replaces: a future that is never polled makes
//! no attempt.

use alloc::boxed::Box;
use core::future::Future;
use core::mem::ManuallyDrop;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::call::{Attempts, Call, Failure, First, Refusal, poll_within};
use crate::cancel::OwnedCancelled;
use crate::error::{RetryError, RetryErrorKind};
use crate::policy::{Inner, RetryPolicy};
use crate::sleep::BoxSleep;

pin_project! {
    /// The future of [`Call::run`]: see the module documentation.
    ///
    /// The phase is read from which fields are set, not from an enum: not
    /// polled yet (no attempt, no loop); the first attempt on the fast path
    /// (`attempt`, and `first` once that attempt has returned `Pending` — one
    /// that answers at once is judged on what the poll found, in registers;
    /// `first` is never cleared); the general loop (`looping`); finished (no
    /// call, no attempt), or ended by a panic in a poll (no call: see
    /// [`Ending`]). `first` is `Copy`, so setting it never drops anything.
    pub(crate) struct Run<'a, E, F, Fut> {
        call: Option<Call<'a, E>>,
        op: F,
        first: Option<First<'a>>,
        looping: LoopSlot<'a, E>,
        #[pin]
        attempt: Option<Fut>,
    }
    impl<'a, E, F, Fut> PinnedDrop for Run<'a, E, F, Fut> {
        #[inline(always)]
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(lp) = this.looping.take() {
                drop_looping(lp, this.attempt.is_some());
            }
        }
    }
}

/// The general loop's state once it had to wait: `Some` only while a call
/// that waited is unfinished.
///
/// Dropped by hand, in [`Run`]'s `drop`: the drop glue of an
/// `Option<Box<Looping>>` is too large to inline, so left to the compiler,
/// every call's future — one that succeeded at its first attempt too — ended
/// in an out-of-line call to it (about a tenth of a classic call's time in
/// the bench). Here the common case is one inlined test of a pointer, and
/// the drop itself is out of line.
type LoopSlot<'a, E> = ManuallyDrop<Option<Box<Looping<'a, E>>>>;

/// Drops a loop state that had to wait, with the call. An attempt still in
/// flight (`in_flight`) ends without an outcome: if it was a half-open
/// breaker's probe, the probe's slot is handed back, so the next call may probe
/// at once rather than be refused until the probe round is given up. An outer
/// timeout that drops a call in its probe is the common case. A call dropped
/// in its backoff (the other common case) will not make the retry it waited
/// for: the retry budget gets that retry's charge back.
#[cold]
#[inline(never)]
fn drop_looping<E>(mut lp: Box<Looping<'_, E>>, in_flight: bool) {
    // `Attempting` without an attempt: the operation unwound making it
    if in_flight || matches!(lp.step, Step::Attempting) {
        lp.attempts.hand_back_probe();
    }
    lp.give_back_unmade_retry();
    drop(lp);
}

/// A fresh loop state while [`drive`] runs it on the stack: dropped only if
/// the operation unwinds (it is forgotten once `drive` returns), when the slot
/// of a probe under way is handed back, as [`drop_looping`] does for a boxed
/// state.
struct Unwinding<'g, 'a, E>(&'g mut Looping<'a, E>);

impl<E> Drop for Unwinding<'_, '_, E> {
    fn drop(&mut self) {
        if matches!(self.0.step, Step::Attempting) {
            self.0.attempts.hand_back_probe();
        }
        self.0.give_back_unmade_retry();
    }
}

/// The call's slot while a poll runs the caller's code — the operation, its
/// attempt, the loop's steps with their hooks and classifier: dropped only if
/// that code unwinds (it is forgotten once it returns), when it ends the call.
///
/// A future polled again after a panic (by a loop that caught it) then finds
/// no call and stays pending, as a finished one does, and runs nothing again.
/// Left with its call, it started the call over — the operation called again
/// for a request that had gone out, the budget deposited again — or ran the
/// failure's hooks and classifier again, or took an attempt that panicked,
/// polled again, for the first attempt's outcome. The `Future` contract lets
/// a future polled after a panic pend or panic; pending is what a finished
/// call already does, and it costs the fast path no store (a marker for a
/// panic of its own would be a field written by every call).
struct Ending<'g, 'a, E>(&'g mut Option<Call<'a, E>>);

impl<E> Drop for Ending<'_, '_, E> {
    #[cold]
    fn drop(&mut self) {
        drop(self.0.take());
    }
}

/// The general loop's state.
struct Looping<'a, E> {
    attempts: Attempts<'a>,
    /// The last attempt's error (`None` after a timed-out attempt or before
    /// the first).
    last: Option<E>,
    /// The per-attempt timeout the last attempt ran out of, if it did.
    timed_out: Option<Duration>,
    step: Step,
    /// The sleep before the next attempt, while it lasts.
    sleep: Option<BoxSleep>,
    /// The call's cancellation, raced with the sleep, once polled.
    cancelled: Option<OwnedCancelled>,
    /// The timer of the attempt under way, once it had to wait (`None`
    /// inside: the timer finished as it was made).
    timer: Option<Option<BoxSleep>>,
}

/// The general loop's step.
#[derive(Clone, Copy)]
enum Step {
    /// An attempt failed: decide.
    Failed,
    /// Sleeping before the next attempt.
    Sleeping,
    /// About to begin the next attempt.
    Begin,
    /// Awaiting the attempt.
    Attempting,
}

/// How the general loop is entered.
enum Entry<'a, E> {
    /// From the start: the first attempt could not take the fast path.
    Start,
    /// After the first attempt, admitted as `First`, failed with `E`.
    AfterFirst(First<'a>, E),
    /// Again, in the loop already.
    Resume,
}

impl<'a, E, F, Fut> Run<'a, E, F, Fut> {
    /// The call `call` of `op`, not started.
    pub(crate) fn new(call: Call<'a, E>, op: F) -> Self {
        Run {
            call: Some(call),
            op,
            first: None,
            looping: ManuallyDrop::new(None),
            attempt: None,
        }
    }
}

impl<'a, T, E, F, Fut> Future for Run<'a, E, F, Fut>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Output = Result<T, RetryError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if this.looping.is_some() {
            return general(
                this.call,
                this.op,
                this.looping,
                this.attempt,
                Entry::Resume,
                cx,
            );
        }
        let first = match *this.first {
            // the first attempt waited: this poll resumes it (or, after the
            // end, finds no call or no attempt and stays pending: an attempt
            // that panicked is not polled again)
            Some(first) => {
                if this.call.is_none() {
                    return Poll::Pending;
                }
                first
            }
            None => {
                // The first poll (or a poll after the end, which finds no call
                // and stays pending: a finished future must not be polled again).
                let Some(call) = this.call.as_ref() else {
                    return Poll::Pending;
                };
                let Some(first) = call.first() else {
                    return general(
                        this.call,
                        this.op,
                        this.looping,
                        this.attempt,
                        Entry::Start,
                        cx,
                    );
                };
                let ending = Ending(&mut *this.call);
                this.attempt.set(Some((this.op)(1)));
                core::mem::forget(ending);
                first
            }
        };
        let Some(attempt) = this.attempt.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        let ending = Ending(&mut *this.call);
        let polled = attempt.poll(cx);
        core::mem::forget(ending);
        // what the fast path found is kept in the future only if the attempt
        // must wait; an attempt that answers at once reads it where it was made
        let Poll::Ready(outcome) = polled else {
            *this.first = Some(first);
            return Poll::Pending;
        };
        this.attempt.set(None);
        match outcome {
            Ok(value) => {
                // the call is read where it is, then let go without a copy
                if let Some(call) = this.call.as_ref() {
                    first.succeeded(inner_of(call));
                }
                if let Some(call) = this.call.take() {
                    call.finish();
                }
                Poll::Ready(Ok(value))
            }
            // a plain call's loop is two counts (see `plain`)
            Err(err)
                if first.without_breaker() && this.call.as_ref().is_some_and(Call::is_plain) =>
            {
                plain(this.call, this.op, this.looping, this.attempt, err, cx)
            }
            Err(err) => general(
                this.call,
                this.op,
                this.looping,
                this.attempt,
                Entry::AfterFirst(first, err),
                cx,
            ),
        }
    }
}

/// The general loop: entered as `entry` says, run until it must wait or the
/// call ends. Out of line: the first attempt's success path stays small
/// enough to inline into the caller.
///
/// A loop entered afresh runs on a state on the stack, and the state is boxed
/// only if the loop must wait (a sleep or an attempt that is not ready). A
/// retry whose delay is zero, or whose sleeper's future is
/// [`Ready<()>`](core::future::Ready) (`|_| ready(())`, the
/// [`VirtualSleeper`](crate::VirtualSleeper)), and whose attempt answers at
/// once then allocates nothing; any other sleep is boxed on its own
/// ([`DynSleeper::sleep_boxed`](crate::sleep::DynSleeper)).
///
/// Moving the state after it was polled is sound because nothing in it is
/// pinned where it sits: the sleeps and the timer are pinned in boxes of their
/// own, the cancellation is polled through `Pin::new` (so it must be `Unpin`,
/// and it finds its waker by an id, not by its address), and the rest is
/// references, counters and the last error, which is never pinned.
#[inline(never)]
fn general<'a, T, E, F, Fut>(
    call_slot: &mut Option<Call<'a, E>>,
    op: &mut F,
    looping: &mut LoopSlot<'a, E>,
    attempt: Pin<&mut Option<Fut>>,
    entry: Entry<'a, E>,
    cx: &mut Context<'_>,
) -> Poll<Result<T, RetryError<E>>>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // a step that unwinds (the operation, its attempt, a hook) ends the call
    let ending = Ending(&mut *call_slot);
    let Some(call) = ending.0.as_mut() else {
        core::mem::forget(ending);
        return Poll::Pending;
    };
    let inner = inner_of(call);
    let fresh = match entry {
        Entry::Resume => None,
        Entry::AfterFirst(first, err) => Some(Looping::new(
            Attempts::after_first(inner, first),
            Some(err),
            Step::Failed,
        )),
        Entry::Start => Some(Looping::new(
            Attempts::new(inner, call.endpoint(), call.site(), call.max_elapsed()),
            None,
            Step::Begin,
        )),
    };
    let out = match fresh {
        None => {
            let Some(lp) = looping.as_mut() else {
                core::mem::forget(ending);
                return Poll::Pending;
            };
            let poll = drive(lp, call, inner, op, attempt, cx);
            core::mem::forget(ending);
            let Poll::Ready(out) = poll else {
                return Poll::Pending;
            };
            **looping = None;
            out
        }
        // a fresh state runs where it was made, and moves into the box only
        // if the loop must wait
        Some(mut lp) => {
            let unwinding = Unwinding(&mut lp);
            let poll = drive(unwinding.0, call, inner, op, attempt, cx);
            core::mem::forget(unwinding);
            core::mem::forget(ending);
            match poll {
                Poll::Pending => {
                    **looping = Some(Box::new(lp));
                    return Poll::Pending;
                }
                Poll::Ready(out) => {
                    lp.let_go();
                    out
                }
            }
        }
    };
    // finished: what the loop held has gone, the call goes last
    if let Some(call) = call_slot.take() {
        call.finish();
    }
    Poll::Ready(out)
}

/// The attempts after a first one that failed with `err`, for a plain call
/// ([`Call::is_plain`]: a plain classic policy, no hooks, no cancellation
/// token), while they need not wait. Out of line, as [`general`] is.
///
/// Such a call has no breaker, budget, deadline, probe, pending retry,
/// cancellation or context to tell anyone of, and attempts without a
/// timeout (a policy with one never takes the fast path that leads here): its
/// loop is the number of attempts made and the number counted against the
/// cap, kept in registers, and each failure is judged by
/// [`Call::plain_failure`] as [`Attempts::failed_plain`] judges it in the
/// general loop. Nothing is built for steps with nothing to do: through the
/// general loop, its state (about 190 bytes, made and let go on every failed
/// call) and the plain step called from it, an async classic failure cost 492
/// instructions; with this loop, 299 (the bench's call, under callgrind).
///
/// When the loop must wait — a sleep that is not finished as it is made, or
/// an attempt that is not ready — the general loop takes over, from the
/// state this loop has reached ([`Attempts::plain`]), in the step it is in:
/// boxed, as the general loop boxes any state that must wait. The property
/// test `a_plain_classic_call_decides_as_the_full_loop_does` runs this loop
/// beside the full one.
#[inline(never)]
fn plain<'a, T, E, F, Fut>(
    call_slot: &mut Option<Call<'a, E>>,
    op: &mut F,
    looping: &mut LoopSlot<'a, E>,
    mut attempt: Pin<&mut Option<Fut>>,
    err: E,
    cx: &mut Context<'_>,
) -> Poll<Result<T, RetryError<E>>>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // a step that unwinds (the operation, its attempt, the classifier, the
    // sleeper) ends the call
    let ending = Ending(&mut *call_slot);
    let Some(call) = ending.0.as_mut() else {
        core::mem::forget(ending);
        return Poll::Pending;
    };
    let inner = inner_of(call);
    let (mut number, mut counted, mut err) = (1_u32, 0_u32, err);
    // bounded: `plain_failure` stops at the hard cap on attempts
    let out = loop {
        // no hook to say a failure is free: every failure counts (a
        // permanent error, which ends the call, is not asked about it)
        counted = counted.saturating_add(1);
        let delay = match call.plain_failure(inner, number, counted, &err) {
            Ok(delay) => delay,
            Err(end) => break Err(call.plain_end(err, number, counted, end)),
        };
        if !delay.is_zero() {
            if let Some(sleep) = inner.sleeper.sleep_boxed(delay) {
                // the sleep must be waited for: the general loop goes on
                // from it, with the error kept as it keeps it
                let mut lp = Looping::new(
                    Attempts::plain(inner, number, counted),
                    Some(err),
                    Step::Sleeping,
                );
                lp.sleep = Some(sleep);
                **looping = Some(Box::new(lp));
                core::mem::forget(ending);
                return general(call_slot, op, looping, attempt, Entry::Resume, cx);
            }
        }
        // `Attempts::start` with no breaker, after the first attempt
        number = number.saturating_add(1);
        attempt.set(Some(op(number)));
        let Some(pending) = attempt.as_mut().as_pin_mut() else {
            core::mem::forget(ending);
            return Poll::Pending;
        };
        let Poll::Ready(outcome) = pending.poll(cx) else {
            // the attempt must be waited for: the general loop goes on
            // awaiting it, with the last error kept as it keeps it
            let lp = Looping::new(
                Attempts::plain(inner, number, counted),
                Some(err),
                Step::Attempting,
            );
            **looping = Some(Box::new(lp));
            core::mem::forget(ending);
            return Poll::Pending;
        };
        attempt.set(None);
        err = match outcome {
            Ok(value) => {
                // what the loop held goes before the call, as in `general`
                drop(err);
                break Ok(value);
            }
            Err(next) => next,
        };
    };
    core::mem::forget(ending);
    // finished: the call goes last
    if let Some(call) = call_slot.take() {
        call.finish();
    }
    Poll::Ready(out)
}

/// The general loop's steps on `lp`, until it must wait or the call ends.
///
/// Inlined into both of its call sites in [`general`] (a fresh state and a
/// boxed one): measured against one call site fed from either (the fresh state
/// kept in a local `Option`), the two inlined copies took an async classic
/// failure from 29 to 21 ns, and against a call out of line from 23 to 21 ns
/// (on the bench's earlier harness, whose figures docs/SPEED.md explains).
/// The copies live in `general`, which is out of line, so the fast path does
/// not grow.
#[inline(always)]
fn drive<'a, T, E, F, Fut>(
    lp: &mut Looping<'a, E>,
    call: &mut Call<'a, E>,
    inner: &'a Inner,
    op: &mut F,
    mut attempt: Pin<&mut Option<Fut>>,
    cx: &mut Context<'_>,
) -> Poll<Result<T, RetryError<E>>>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // bounded: `failed` stops at the hard cap on attempts
    loop {
        match lp.step {
            Step::Failed => {
                let delay = match lp.attempts.failed(&mut lp.last, lp.timed_out, call) {
                    Ok(delay) => delay,
                    Err(stop) => return Poll::Ready(Err(stop)),
                };
                // decided (and charged): a sleeper that unwinds making the
                // sleep ends the call before the attempt, which gives the
                // charge back
                lp.step = Step::Begin;
                // `None`: the sleep finished as it was made (a ready future)
                lp.sleep = match delay.is_zero() {
                    true => None,
                    false => inner.sleeper.sleep_boxed(delay),
                };
                lp.step = match lp.sleep {
                    Some(_) => Step::Sleeping,
                    None => Step::Begin,
                };
            }
            Step::Sleeping => {
                if let Some(token) = call.cancel() {
                    let cancelled = lp
                        .cancelled
                        .get_or_insert_with(|| OwnedCancelled::new(token));
                    if let Poll::Ready(reason) = Pin::new(cancelled).poll(cx) {
                        // the retry this sleep waited for is not made
                        lp.attempts.give_back_retry();
                        return Poll::Ready(Err(RetryErrorKind::Cancelled {
                            reason,
                            last_error: lp.last.take(),
                        }
                        .into()));
                    }
                }
                if let Some(sleep) = lp.sleep.as_mut() {
                    ready!(sleep.as_mut().poll(cx));
                }
                lp.sleep = None;
                lp.cancelled = None;
                lp.step = Step::Begin;
            }
            Step::Begin => {
                let number = match call.begin(&mut lp.attempts, &mut lp.last) {
                    Ok(number) => number,
                    Err(Refusal::Stop(stop)) => return Poll::Ready(Err(stop)),
                    Err(Refusal::Wait(wait)) => {
                        // a wait for the breaker, then its admission asked again
                        lp.sleep = inner.sleeper.sleep_boxed(wait);
                        lp.step = match lp.sleep {
                            Some(_) => Step::Sleeping,
                            None => Step::Begin,
                        };
                        continue;
                    }
                };
                lp.timer = None;
                // under way from here: a probe whose operation unwinds in
                // making its future hands its slot back
                lp.step = Step::Attempting;
                attempt.set(Some(op(number)));
            }
            Step::Attempting => {
                let Some(pending) = attempt.as_mut().as_pin_mut() else {
                    return Poll::Pending;
                };
                let outcome = match inner.attempt_timeout {
                    None => ready!(pending.poll(cx)).map_err(Failure::Error),
                    Some(timeout) => {
                        ready!(poll_within(inner, timeout, pending, &mut lp.timer, cx))
                    }
                };
                // the attempt's future goes first (a timed-out one is cancelled)
                attempt.set(None);
                lp.timer = None;
                match outcome {
                    Ok(value) => {
                        lp.attempts.succeeded(call.endpoint());
                        return Poll::Ready(Ok(value));
                    }
                    Err(Failure::Error(err)) => (lp.last, lp.timed_out) = (Some(err), None),
                    Err(Failure::TimedOut(timeout)) => {
                        (lp.last, lp.timed_out) = (None, Some(timeout));
                    }
                }
                lp.step = Step::Failed;
            }
        }
    }
}

impl<'a, E> Looping<'a, E> {
    /// The call ends without the attempt it was about to begin (dropped, or
    /// unwinding): if a retry was decided and charged to the budget, the
    /// charge goes back. Between a decision and the attempt it leads to, the
    /// step is `Sleeping` or `Begin`; in the other steps the charge noted is
    /// that of a retry already made.
    fn give_back_unmade_retry(&mut self) {
        if matches!(self.step, Step::Sleeping | Step::Begin) {
            self.attempts.give_back_retry();
        }
    }

    /// Lets go of a state that ran where it was made, once its call has
    /// ended. Such a call usually holds no sleep, no cancellation and no
    /// timer (its sleeps finished as they were made, or the loop would have
    /// waited), and its endpoint's state is borrowed from the handle or the
    /// table: then only the last error is dropped, in line, and the rest,
    /// which owns nothing, is forgotten. Left to the compiler, every async
    /// call that failed ended in an out-of-line call to the state's drop glue
    /// (22 instructions, a twentieth of an async classic failure). Any other
    /// state (a call cancelled in its sleep, say) is dropped in full. A field
    /// that owns something, added to the state, must be tested here too.
    #[inline(always)]
    fn let_go(mut self) {
        if self.sleep.is_none()
            && self.cancelled.is_none()
            && self.timer.is_none()
            && self.attempts.owns_nothing()
        {
            drop(self.last.take());
            core::mem::forget(self);
        } else {
            drop_in_full(self);
        }
    }

    fn new(attempts: Attempts<'a>, last: Option<E>, step: Step) -> Self {
        Looping {
            attempts,
            last,
            timed_out: None,
            step,
            sleep: None,
            cancelled: None,
            timer: None,
        }
    }
}

/// Drops a loop state that holds more than its last error (see
/// [`Looping::let_go`]).
#[cold]
#[inline(never)]
fn drop_in_full<E>(lp: Looping<'_, E>) {
    drop(lp);
}

/// The policy state a call runs under, for as long as the call's policy borrow.
fn inner_of<'a, E>(call: &Call<'a, E>) -> &'a Inner {
    let policy: &'a RetryPolicy = call.policy();
    &policy.inner
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::sync::Arc;
    use alloc::vec::Vec;

    use super::{Looping, Step};
    use crate::RetryPolicy;
    use crate::call::Attempts;
    use crate::endpoint::Resolved;

    #[test]
    fn a_loop_state_let_go_gives_back_its_last_error_and_an_overflow_endpoint_s_share() {
        let policy = RetryPolicy::builder().with_seed(7).build().unwrap();
        let inner = &*policy.inner;
        let table = inner.endpoints.as_ref().unwrap();
        // more names than the front table has slots: some go to the overflow
        // map, whose states a call holds a share of
        let names: Vec<String> = (0..2_048).map(|i| format!("endpoint-{i}")).collect();
        let (mut borrowed, mut owned) = (None, None);
        for name in &names {
            match table.resolve(name) {
                Resolved::Borrowed(_) => borrowed = borrowed.or(Some(name)),
                Resolved::Owned(state) => owned = owned.or(Some((name, state))),
            }
        }
        let (borrowed, (owned, state)) = (borrowed.unwrap(), owned.unwrap());
        let error = Arc::new(());

        // a state that owns nothing but its last error: the error goes
        let lp = Looping::new(
            Attempts::new(inner, borrowed, None, None),
            Some(Arc::clone(&error)),
            Step::Begin,
        );
        assert_eq!(Arc::strong_count(&error), 2);
        lp.let_go();
        assert_eq!(Arc::strong_count(&error), 1, "the last error was dropped");

        // a state that holds a share of its endpoint's state gives it back
        let before = Arc::strong_count(&state);
        let lp = Looping::new(
            Attempts::new(inner, owned, None, None),
            Some(Arc::clone(&error)),
            Step::Begin,
        );
        assert_eq!(Arc::strong_count(&state), before + 1);
        lp.let_go();
        assert_eq!(
            Arc::strong_count(&state),
            before,
            "the share was given back"
        );
        assert_eq!(Arc::strong_count(&error), 1, "the last error was dropped");
    }
}
