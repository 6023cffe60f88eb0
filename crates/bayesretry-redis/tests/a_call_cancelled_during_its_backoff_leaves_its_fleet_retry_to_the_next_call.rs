//! A policy charges its fleet budget for a retry when it decides it, before
//! the backoff. A call cancelled during that backoff makes no retry, and the
//! unit goes back to the process's lease: the next call's retry is granted
//! from it, where it would otherwise find the fleet's window spent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::future::{Future, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_policy::{
    BlockingSleeper, Builder, CancelToken, HttpStatus, ManualClock, RetryError, RetryErrorKind,
    RetryPolicy, VirtualSleeper,
};
use bayesretry_redis::{Fleet, FleetBudget, FleetBudgetConfig};

/// A fleet on `clock` whose budget's window holds a single retry, leased to
/// this process.
async fn one_fleet_retry(test: &str, clock: &ManualClock) -> Option<(Fleet, Arc<FleetBudget>)> {
    let url = common::server_url(test)?;
    // A window with a day to go on the server's clock, whatever the time of
    // day: the backoffs, on virtual time, are far shorter. (A day's window
    // ends at 00:00 UTC: a lease taken just before has less left than the
    // backoff, and its units go void before the refund.)
    let window = common::window_clear_of_its_end(&url, Duration::from_secs(86_400));
    let config = common::manual_rounds(url, common::namespace(test)).with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("one", 1, window).with_lease(1))
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 1);
    Some((fleet, budget))
}

/// A classic policy of three attempts on `clock`, spending from `budget`.
fn classic(clock: &ManualClock, budget: &Arc<FleetBudget>) -> Builder {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_shared_budget(Arc::clone(budget) as Arc<dyn Budget + Send + Sync>)
}

/// The first attempt fails with a 503; the second answers its number.
fn fails_once(attempt: u32) -> Result<u32, HttpStatus> {
    if attempt == 1 {
        Err(HttpStatus(503))
    } else {
        Ok(attempt)
    }
}

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

/// A sleep that moves the clock on by its delay and yields once before it
/// ends: a call polled once is asleep.
struct YieldOnce(bool);

impl Future for YieldOnce {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_call_cancelled_during_its_backoff_leaves_its_fleet_retry_to_the_next_call() {
    let clock = ManualClock::new(1_000_000);
    let Some((_fleet, budget)) = one_fleet_retry("cancelled-async", &clock).await else {
        return;
    };
    let sleeps = clock.clone();
    let policy = classic(&clock, &budget)
        .with_sleeper(move |delay: Duration| {
            sleeps.advance(delay);
            YieldOnce(false)
        })
        .build()
        .unwrap();

    let token = CancelToken::new();
    {
        let mut call = pin!(
            policy
                .call("api")
                .with_cancel(token.clone())
                .run(|_| ready(Err::<u32, _>(HttpStatus(503))))
        );
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending(), "asleep");
        assert_eq!(
            budget.leased(),
            0,
            "the retry was charged before its backoff"
        );
        token.cancel("shutting down");
        let Poll::Ready(out) = call.as_mut().poll(&mut cx) else {
            panic!("a cancellation ends the sleep at once");
        };
        assert_cancelled(&out);
    }
    assert_eq!(
        budget.leased(),
        1,
        "the retry that was not made kept its unit"
    );

    // the next call's retry is granted from it, with no refill
    let next = policy
        .run("api", |attempt| ready(fails_once(attempt)))
        .await;
    assert_eq!(next.ok(), Some(2));
    assert_eq!((budget.leased(), budget.spent()), (0, 1));
}

/// A blocking sleeper that moves the clock on and cancels `token` in its
/// sleep.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_call_cancelled_during_its_backoff_leaves_its_fleet_retry_to_the_next_call() {
    let clock = ManualClock::new(1_000_000);
    let Some((_fleet, budget)) = one_fleet_retry("cancelled-blocking", &clock).await else {
        return;
    };
    let token = CancelToken::new();
    let cancelling = classic(&clock, &budget)
        .with_blocking_sleeper(CancelsInItsSleep {
            clock: clock.clone(),
            token: token.clone(),
        })
        .build()
        .unwrap();
    let out = cancelling
        .call("api")
        .with_cancel(token)
        .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
    assert_cancelled(&out);
    assert_eq!(
        budget.leased(),
        1,
        "the retry that was not made kept its unit"
    );

    let policy = classic(&clock, &budget).build().unwrap();
    let next = policy.run_blocking("api", fails_once);
    assert_eq!(next.ok(), Some(2));
    assert_eq!((budget.leased(), budget.spent()), (0, 1));
}
