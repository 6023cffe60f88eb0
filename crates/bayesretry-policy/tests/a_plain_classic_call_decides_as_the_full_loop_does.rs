//! Property: a classic policy with nothing that reads the time or hears of a
//! decision (no breaker, deadline, budget or observer) takes a short path after
//! a failed attempt. It must decide exactly as the full loop does — the same
//! attempts, the same delays, drawn from the same jitter words, the same error
//! at the end — whatever the errors say: retryable, with a Retry-After inside
//! or beyond the limit, permanent. The full loop is forced by an observer that
//! listens and does nothing.
//!
//! An async call's short path hands over to the full loop when it must wait:
//! the calls are also run with sleeps, attempts or both that are pending at
//! their first poll, so that the full loop goes on from each step the short
//! path can leave it in — a sleep (pending sleeps), or an attempt after a
//! sleep that was over as it was made (pending attempts alone: with pending
//! sleeps too, the short path hands over at its first sleep, and an attempt
//! it begins itself is pending only after a zero delay, which the backoff
//! hardly ever draws).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{
    Classification, Classify, ErrorClass, ManualClock, Observer, RetryPolicy, Sleeper,
    VirtualSleeper,
};
use proptest::prelude::*;

mod common;
use common::block_on;

/// What an attempt fails with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Failure {
    Busy,
    /// A server hint, in milliseconds.
    Wait(u64),
    Bad,
}

impl Classify for Failure {
    fn classify(&self) -> Classification {
        match *self {
            Failure::Busy => Classification::Retryable(ErrorClass::Http(503)),
            Failure::Wait(ms) => {
                Classification::RetryAfter(ErrorClass::Http(429), Duration::from_millis(ms))
            }
            Failure::Bad => Classification::Permanent,
        }
    }
}

/// Listens and does nothing: its presence alone sends failures down the full path.
struct Silent;

impl Observer for Silent {}

/// Pending at its first poll (waking its task), ready at the next.
struct PendOnce(bool);

impl Future for PendOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn failure() -> impl Strategy<Value = Failure> {
    prop_oneof![
        Just(Failure::Busy),
        // around the 2 s limit set below, to the millisecond
        (0_u64..=4_000).prop_map(Failure::Wait),
        Just(Failure::Wait(2_000)),
        Just(Failure::Wait(2_001)),
        Just(Failure::Bad),
    ]
}

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
    ]
}

fn policy(
    attempts: u32,
    jitter: Jitter,
    seed: u64,
    observed: bool,
    sleeps_wait: bool,
) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let mut builder = RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_millis(100))
                .with_jitter(jitter),
        )
        .with_max_retry_after(Duration::from_secs(2))
        .with_virtual_time(sleeper.clone())
        .with_seed(seed);
    if observed {
        builder = builder.with_observer(Silent);
    }
    if sleeps_wait {
        // the virtual sleeper records the delay and moves the clock; the
        // sleep is then pending once
        let virtual_time = sleeper.clone();
        builder = builder.with_sleeper(move |delay| {
            drop(virtual_time.sleep(delay));
            PendOnce(false)
        });
    }
    (builder.build().unwrap(), sleeper)
}

/// One call failing with `script` in turn (then succeeding), through either
/// loop: the attempts made, the delays slept and the outcome, as text.
fn run(
    policy: &RetryPolicy,
    sleeper: &VirtualSleeper,
    script: &[Failure],
    blocking: bool,
    attempts_wait: bool,
) -> String {
    let attempt = |n: u32| -> Result<u32, Failure> {
        match usize::try_from(n - 1).ok().and_then(|i| script.get(i)) {
            Some(&failure) => Err(failure),
            None => Ok(n),
        }
    };
    let outcome = if blocking {
        policy.run_blocking("api", attempt)
    } else if attempts_wait {
        block_on(policy.run("api", |n| async move {
            PendOnce(false).await;
            attempt(n)
        }))
    } else {
        block_on(policy.run("api", |n| core::future::ready(attempt(n))))
    };
    let outcome = outcome.map_err(|e| format!("{:?}", e.kind()));
    format!("{outcome:?} after {:?}", sleeper.delays())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_short_path_and_the_full_loop_agree(
        script in prop::collection::vec(failure(), 0..8),
        attempts in 1_u32..=6,
        jitter in jitter(),
        seed: u64,
        blocking: bool,
        sleeps_wait: bool,
        attempts_wait: bool,
    ) {
        let (plain, plain_sleeper) = policy(attempts, jitter, seed, false, sleeps_wait);
        let (full, full_sleeper) = policy(attempts, jitter, seed, true, sleeps_wait);
        // twice each: the second call draws later jitter words
        for _ in 0..2 {
            prop_assert_eq!(
                run(&plain, &plain_sleeper, &script, blocking, attempts_wait),
                run(&full, &full_sleeper, &script, blocking, attempts_wait)
            );
        }
    }
}
