//! The retry budget is charged when a retry is decided, before its backoff;
//! a retry that is then not made after all — the call cancelled during the
//! backoff, the future dropped while it sleeps, the breaker refusing the
//! attempt after the wait, the retry judged again and stopped, the deadline
//! passing during the wait — gives its charge back. Otherwise every
//! cancellation and timeout would drain the budget without a retry going out,
//! and every other call would get fewer retries than configured.
//!
//! Each test gives the policy a budget with room for exactly one retry in a
//! long window, and checks that the room is still there after the call.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::future::{Future, ready};
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::OnceLock;

use bayesretry_breaker::State;
use bayesretry_budget::{FixedWindowBudget, FixedWindowConfig};
use bayesretry_policy::{
    BlockingSleeper, Builder, CancelToken, HttpStatus, ManualClock, RetryError, RetryErrorKind,
    RetryPolicy, VirtualSleeper,
};

/// A budget with room for one retry in an hour.
fn one_retry() -> Arc<FixedWindowBudget> {
    let rules = FixedWindowConfig::new()
        .with_max_cost_per_window(1)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    Arc::new(FixedWindowBudget::new(rules))
}

/// A classic policy of three attempts on `clock`, sharing `budget`, with the
/// blocking sleeper of virtual time: what is left to set, then build.
fn classic(clock: &ManualClock, budget: &Arc<FixedWindowBudget>) -> Builder {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_shared_budget(Arc::clone(budget) as _)
}

/// The call ended `Cancelled` after its one attempt.
fn assert_cancelled(out: &Result<u32, RetryError<HttpStatus>>) {
    assert!(
        matches!(
            out.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Cancelled {
                last_error: Some(HttpStatus(503)),
                ..
            })
        ),
        "{out:?}"
    );
}

/// The budget's one retry is there: for the next call, and to be read.
fn assert_the_retry_is_back(budget: &FixedWindowBudget, clock: &ManualClock) {
    use bayesretry_policy::Clock as _;
    assert_eq!(
        budget.remaining(clock.now_ms()),
        1,
        "the retry that was not made kept its charge"
    );
}

/// A blocking sleeper that moves the clock and cancels `token` in its sleep.
struct CancelsInItsSleep {
    clock: ManualClock,
    token: CancelToken,
}

impl BlockingSleeper for CancelsInItsSleep {
    fn sleep_blocking(&self, delay: Duration) {
        self.clock.advance(delay);
        self.token.cancel("shutting down");
    }
}

#[test]
fn a_blocking_call_cancelled_during_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let token = CancelToken::new();
    let policy = classic(&clock, &budget)
        .with_blocking_sleeper(CancelsInItsSleep {
            clock: clock.clone(),
            token: token.clone(),
        })
        .build()
        .unwrap();
    let out = policy
        .call("api")
        .with_cancel(token)
        .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
    assert_cancelled(&out);
    assert_the_retry_is_back(&budget, &clock);

    // and the next call's failure gets it
    let next = policy.run_blocking("api", common::fails_once);
    assert_eq!(next.ok(), Some(2));
}

#[test]
fn an_async_call_cancelled_during_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget)
        .with_sleeper(common::advances_and_yields_once(&clock))
        .build()
        .unwrap();
    let token = CancelToken::new();
    let mut call = pin!(
        policy
            .call("api")
            .with_cancel(token.clone())
            .run(|_| ready(Err::<u32, _>(HttpStatus(503))))
    );
    let mut cx = Context::from_waker(Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending(), "asleep");
    token.cancel("shutting down");
    let Poll::Ready(out) = call.as_mut().poll(&mut cx) else {
        panic!("a cancellation ends the sleep at once");
    };
    assert_cancelled(&out);
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn an_async_call_cancelled_as_its_backoff_ends_gives_its_retry_back() {
    // the sleep is over as it is made: the cancellation is seen before the
    // next attempt, not in the sleep
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let token = CancelToken::new();
    let sleeper = {
        let (clock, token) = (clock.clone(), token.clone());
        move |delay: Duration| {
            clock.advance(delay);
            token.cancel("shutting down");
            ready(())
        }
    };
    let policy = classic(&clock, &budget)
        .with_sleeper(sleeper)
        .build()
        .unwrap();
    let out = common::block_on(
        policy
            .call("api")
            .with_cancel(token)
            .run(|_| ready(Err::<u32, _>(HttpStatus(503)))),
    );
    assert_cancelled(&out);
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn an_async_call_dropped_during_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget)
        .with_sleeper(common::advances_and_yields_once(&clock))
        .build()
        .unwrap();
    {
        let mut call = Box::pin(
            policy
                .call("api")
                .run(|_| ready(Err::<u32, _>(HttpStatus(503)))),
        );
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "asleep");
        // an outer timeout gives up on the call here
    }
    assert_the_retry_is_back(&budget, &clock);
}

/// Fails calls to `api` with their retries vetoed (which spends no budget)
/// until its breaker opens.
fn open_the_breaker(policy: &RetryPolicy) {
    for _ in 0..100 {
        if matches!(policy.breaker_state("api"), Some(State::Open { .. })) {
            return;
        }
        let _ = policy
            .call::<HttpStatus>("api")
            .should_retry(|_| false)
            .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
    }
    panic!("the breaker did not open");
}

/// The call ended `CircuitOpen` after its one attempt.
fn assert_refused(out: &Result<u32, RetryError<HttpStatus>>) {
    assert!(
        matches!(
            out.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::CircuitOpen { attempts: 1, .. })
        ),
        "{out:?}"
    );
}

#[test]
fn an_async_retry_the_breaker_refuses_after_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget)
        .with_breaker(bayesretry_breaker::Config::new())
        .with_sleeper(common::advances_and_yields_once(&clock))
        .build()
        .unwrap();
    let mut call = pin!(
        policy
            .call("api")
            .run(|_| ready(Err::<u32, _>(HttpStatus(503))))
    );
    let mut cx = Context::from_waker(Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending(), "asleep");
    open_the_breaker(&policy);
    let Poll::Ready(out) = call.as_mut().poll(&mut cx) else {
        panic!("an open breaker refuses at once");
    };
    assert_refused(&out);
    assert_the_retry_is_back(&budget, &clock);
}

/// A blocking sleeper that moves the clock and, in the first sleep of the
/// call under test, opens the breaker of `api` with other calls.
struct OpensTheBreakerInItsSleep {
    clock: ManualClock,
    policy: Arc<OnceLock<RetryPolicy>>,
}

impl BlockingSleeper for OpensTheBreakerInItsSleep {
    fn sleep_blocking(&self, delay: Duration) {
        self.clock.advance(delay);
        // the calls that open it have their retries vetoed: they never sleep
        if let Some(policy) = self.policy.get() {
            open_the_breaker(policy);
        }
    }
}

#[test]
fn a_blocking_retry_the_breaker_refuses_after_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let slot = Arc::new(OnceLock::new());
    let policy = classic(&clock, &budget)
        .with_breaker(bayesretry_breaker::Config::new())
        .with_blocking_sleeper(OpensTheBreakerInItsSleep {
            clock: clock.clone(),
            policy: Arc::clone(&slot),
        })
        .build()
        .unwrap();
    assert!(slot.set(policy.clone()).is_ok());
    let out = policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503)));
    assert_refused(&out);
    assert_the_retry_is_back(&budget, &clock);
}

/// A blocking sleeper that moves the clock and, in its first sleep, fails six
/// other calls to `api` (their retries vetoed), then lets `overshoot` pass.
struct FailsOthersInItsSleep {
    clock: ManualClock,
    policy: Arc<OnceLock<RetryPolicy>>,
    overshoot: Duration,
}

impl BlockingSleeper for FailsOthersInItsSleep {
    fn sleep_blocking(&self, delay: Duration) {
        self.clock.advance(delay);
        if let Some(policy) = self.policy.get() {
            for _ in 0..6 {
                let _ = policy
                    .call::<HttpStatus>("api")
                    .should_retry(|_| false)
                    .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
                self.clock.advance(Duration::from_millis(10));
            }
        }
        self.clock.advance(self.overshoot);
    }
}

/// The default (learning) policy after a healthy minute at `api`, sharing
/// `budget`, whose call's first wait fails six others and lets `overshoot`
/// pass: the call's result.
fn judged_again(
    budget: &Arc<FixedWindowBudget>,
    clock: &ManualClock,
    overshoot: Duration,
    max_elapsed: Option<Duration>,
) -> Result<u32, RetryError<HttpStatus>> {
    let slot = Arc::new(OnceLock::new());
    let mut builder = RetryPolicy::builder()
        .with_clock(clock.clone())
        .with_blocking_sleeper(FailsOthersInItsSleep {
            clock: clock.clone(),
            policy: Arc::clone(&slot),
            overshoot,
        })
        .with_shared_budget(Arc::clone(budget) as _)
        .with_seed(5);
    if let Some(max_elapsed) = max_elapsed {
        builder = builder.with_max_elapsed(max_elapsed);
    }
    let policy = builder.build().unwrap();
    common::healthy_minute(&policy, clock);
    assert!(slot.set(policy.clone()).is_ok());
    policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503)))
}

#[test]
fn a_retry_judged_again_and_stopped_after_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let out = judged_again(&budget, &clock, Duration::ZERO, None);
    assert!(
        matches!(
            out.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Exhausted { attempts: 1, .. })
        ),
        "{out:?}"
    );
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn a_retry_whose_deadline_passed_during_its_backoff_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let out = judged_again(
        &budget,
        &clock,
        Duration::from_secs(3),
        Some(Duration::from_secs(2)),
    );
    assert!(
        matches!(
            out.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::DeadlineExceeded { attempts: 1, .. })
        ),
        "{out:?}"
    );
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn a_retry_that_is_made_keeps_its_charge() {
    // the other side: a retry that goes out is paid for, and the next call's
    // retry is refused
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget).build().unwrap();
    assert_eq!(policy.run_blocking("api", common::fails_once).ok(), Some(2));
    use bayesretry_policy::Clock as _;
    assert_eq!(budget.remaining(clock.now_ms()), 0);
    let refused = policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503)));
    assert!(
        matches!(
            refused.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::BudgetExhausted { attempts: 1, .. })
        ),
        "{refused:?}"
    );
}

/// Runs `f`, which must panic.
fn panics<R>(f: impl FnOnce() -> R) {
    let out = std::panic::catch_unwind(core::panic::AssertUnwindSafe(f));
    assert!(out.is_err(), "it did not panic");
}

#[test]
fn an_async_call_whose_sleeper_panics_making_its_backoff_gives_its_retry_back() {
    // the retry is charged, then the sleep before it cannot be made: the call
    // unwinds (a caller's sleeper, a runtime without timers) with no retry sent
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget)
        .with_sleeper(|_: Duration| -> core::future::Ready<()> { panic!("no timer here") })
        .build()
        .unwrap();
    panics(|| {
        common::block_on(
            policy
                .call("api")
                .run(|_| ready(Err::<u32, _>(HttpStatus(503)))),
        )
    });
    assert_the_retry_is_back(&budget, &clock);
}

/// A blocking sleeper that cannot sleep.
struct PanicsInItsSleep;

impl BlockingSleeper for PanicsInItsSleep {
    fn sleep_blocking(&self, _delay: Duration) {
        panic!("no sleeping here");
    }
}

#[test]
fn a_blocking_call_whose_sleeper_panics_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget)
        .with_blocking_sleeper(PanicsInItsSleep)
        .build()
        .unwrap();
    panics(|| policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503))));
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn a_blocking_call_whose_sleeper_panics_before_a_retry_already_made_refunds_nothing() {
    // the first retry is made (and paid for); the second is refused by the
    // budget, so nothing sleeps again: the made retry's charge stays
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget).build().unwrap();
    let out = policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503)));
    assert!(
        matches!(
            out.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::BudgetExhausted { attempts: 2, .. })
        ),
        "{out:?}"
    );
    use bayesretry_policy::Clock as _;
    assert_eq!(budget.remaining(clock.now_ms()), 0);
}

/// A classic policy of three attempts on `clock` with a breaker, that waits
/// up to a minute for it while it is open, sharing `budget`; its async sleeps
/// yield once.
fn waits_for_the_breaker(clock: &ManualClock, budget: &Arc<FixedWindowBudget>) -> RetryPolicy {
    classic(clock, budget)
        .with_breaker(bayesretry_breaker::Config::new())
        .with_sleeper(common::advances_and_yields_once(clock))
        .with_wait_while_open(Duration::from_secs(60))
        .build()
        .unwrap()
}

#[test]
fn an_async_call_cancelled_while_it_waits_for_the_breaker_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = waits_for_the_breaker(&clock, &budget);
    let token = CancelToken::new();
    let mut call = pin!(
        policy
            .call("api")
            .with_cancel(token.clone())
            .run(|_| ready(Err::<u32, _>(HttpStatus(503))))
    );
    let mut cx = Context::from_waker(Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending(), "in its backoff");
    open_the_breaker(&policy);
    assert!(
        call.as_mut().poll(&mut cx).is_pending(),
        "waiting for the breaker"
    );
    token.cancel("shutting down");
    let Poll::Ready(out) = call.as_mut().poll(&mut cx) else {
        panic!("a cancellation ends the wait at once");
    };
    assert_cancelled(&out);
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn an_async_call_dropped_while_it_waits_for_the_breaker_gives_its_retry_back() {
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = waits_for_the_breaker(&clock, &budget);
    {
        let mut call = Box::pin(
            policy
                .call("api")
                .run(|_| ready(Err::<u32, _>(HttpStatus(503)))),
        );
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "in its backoff");
        open_the_breaker(&policy);
        assert!(
            call.as_mut().poll(&mut cx).is_pending(),
            "waiting for the breaker"
        );
    }
    assert_the_retry_is_back(&budget, &clock);
}

#[test]
fn an_async_retry_dropped_while_under_way_keeps_its_charge() {
    // the retry went out: an outer timeout that drops the call during it
    // leaves it paid for
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = classic(&clock, &budget)
        .with_sleeper(common::advances_and_yields_once(&clock))
        .build()
        .unwrap();
    {
        let mut call = Box::pin(policy.call("api").run(|attempt| async move {
            if attempt == 1 {
                return Err::<u32, _>(HttpStatus(503));
            }
            core::future::pending().await
        }));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "in its backoff");
        assert!(
            call.as_mut().poll(&mut cx).is_pending(),
            "the retry under way"
        );
    }
    use bayesretry_policy::Clock as _;
    assert_eq!(
        budget.remaining(clock.now_ms()),
        0,
        "a retry made was refunded"
    );
}

#[test]
fn an_async_retry_the_breaker_admits_after_a_wait_and_that_is_dropped_keeps_its_charge() {
    // the wait for the breaker ends in an admission (a probe): the retry goes
    // out, and the call dropped during it leaves it paid for
    let clock = ManualClock::new(0);
    let budget = one_retry();
    let policy = waits_for_the_breaker(&clock, &budget);
    {
        let mut call = Box::pin(policy.call("api").run(|attempt| async move {
            if attempt == 1 {
                return Err::<u32, _>(HttpStatus(503));
            }
            core::future::pending().await
        }));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "in its backoff");
        open_the_breaker(&policy);
        for _ in 0..1_000 {
            assert!(call.as_mut().poll(&mut cx).is_pending());
            if matches!(policy.breaker_state("api"), Some(State::HalfOpen { .. })) {
                break;
            }
        }
        assert!(
            matches!(policy.breaker_state("api"), Some(State::HalfOpen { .. })),
            "{:?}",
            policy.breaker_state("api")
        );
        assert!(
            call.as_mut().poll(&mut cx).is_pending(),
            "the probe under way"
        );
    }
    use bayesretry_policy::Clock as _;
    assert_eq!(
        budget.remaining(clock.now_ms()),
        0,
        "a retry made was refunded"
    );
}
