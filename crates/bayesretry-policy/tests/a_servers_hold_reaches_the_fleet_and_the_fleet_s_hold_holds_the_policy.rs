//! A server's hold through the shared breaker (`Builder::with_shared_breaker`):
//! a hold a failure sets is told to the fleet's view with its end
//! (`FleetView::hold`), and a hold the view says the fleet keeps
//! (`FleetView::held_until`) holds the policy as a server's wait does — a
//! first attempt fails fast as `ServerHold` with the fleet's time left, a
//! retry already decided waits for it within the Retry-After limit and the
//! deadline — and is set on the endpoint, so that the calls after it fail
//! fast without asking. `without_server_hold()` neither tells nor obeys.
//! Virtual time throughout, and a fake view that keeps what it was told.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::future::ready;
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_breaker::{Admission, FleetView, ProbeRound, Transition};
use bayesretry_policy::{Builder, Clock, ManualClock, RetryError, RetryPolicy, VirtualSleeper};
use common::{Reply, block_on, classify_reply, held_for, told_to_wait};

/// The policy's Retry-After limit in these tests.
const LIMIT: Duration = Duration::from_secs(10);
/// The policy's clock at the start of each test.
const START_MS: u64 = 1_000;

/// What the fake was told or asked, in order.
#[derive(Clone, Debug, PartialEq)]
enum Told {
    Hold {
        endpoint: String,
        now_ms: u64,
        until_ms: u64,
    },
    HeldUntil(u64),
    Admit(u64),
}

/// A view that holds every endpoint until the time the test sets, and keeps
/// what it hears.
#[derive(Default)]
struct Fake {
    held_until: Mutex<Option<u64>>,
    told: Mutex<Vec<Told>>,
}

impl Fake {
    fn holding_until(&self, until_ms: Option<u64>) {
        *self.held_until.lock().unwrap() = until_ms;
    }

    fn told(&self) -> Vec<Told> {
        self.told.lock().unwrap().clone()
    }

    fn holds(&self) -> Vec<Told> {
        self.told()
            .into_iter()
            .filter(|t| matches!(t, Told::Hold { .. }))
            .collect()
    }

    fn asked(&self) -> usize {
        self.told()
            .iter()
            .filter(|t| matches!(t, Told::HeldUntil(_)))
            .count()
    }
}

impl FleetView for Fake {
    fn admit(&self, _: &str, now_ms: u64) -> Admission {
        self.told.lock().unwrap().push(Told::Admit(now_ms));
        Admission::Allowed
    }

    fn record(&self, _: &str, _: u64, _: bool, _: Option<ProbeRound>) {}

    fn publish(&self, _: &str, _: u64, _: Transition) {}

    fn release_probe(&self, _: &str, _: ProbeRound) {}

    fn hold(&self, endpoint: &str, now_ms: u64, until_ms: u64) {
        self.told.lock().unwrap().push(Told::Hold {
            endpoint: endpoint.to_owned(),
            now_ms,
            until_ms,
        });
    }

    fn held_until(&self, _: &str, now_ms: u64) -> Option<u64> {
        self.told.lock().unwrap().push(Told::HeldUntil(now_ms));
        *self.held_until.lock().unwrap()
    }
}

/// The default policy on virtual time with a Retry-After limit of 10 s and
/// `fake` as its shared breaker, as `configure` changes it; its sleeper.
fn policy(
    fake: &Arc<Fake>,
    configure: impl FnOnce(Builder) -> Builder,
) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(START_MS));
    let shared: Arc<dyn FleetView + Send + Sync> = fake.clone();
    let builder = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_retry_after(LIMIT)
        .with_shared_breaker(shared)
        .with_seed(5);
    (configure(builder).build().unwrap(), sleeper)
}

/// A call to "api" that succeeds if it is let go: its result and how many
/// attempts it made.
fn call(policy: &RetryPolicy) -> (Result<(), RetryError<Reply>>, u32) {
    let mut made = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        made += 1;
        Ok::<(), Reply>(())
    });
    (result, made)
}

#[test]
fn a_hold_set_by_a_failure_is_told_to_the_view_with_its_end() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy(&fake, |b| b);
    sleeper.clock().advance(Duration::from_millis(500));
    told_to_wait(&policy, Duration::from_secs(4));
    assert_eq!(
        fake.holds(),
        [Told::Hold {
            endpoint: "api".to_owned(),
            now_ms: START_MS + 500,
            until_ms: START_MS + 500 + 4_000,
        }]
    );
    // a failure without a wait, or with one beyond the limit (which holds
    // nothing here either), tells nothing
    let _ = policy
        .call_with("other", classify_reply)
        .should_retry(|_| false)
        .run_blocking(|_| Err::<(), Reply>((503, None)));
    let _ = policy
        .call_with("far", classify_reply)
        .run_blocking(|_| Err::<(), Reply>((429, Some(Duration::from_secs(3_600)))));
    assert_eq!(fake.holds().len(), 1, "{:?}", fake.told());
}

#[test]
fn a_first_attempt_the_fleet_holds_fails_fast_with_the_fleet_s_time_left() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy(&fake, |b| b.with_wait_while_open(Duration::from_secs(30)));
    fake.holding_until(Some(START_MS + 3_000));
    let (result, made) = call(&policy);
    assert_eq!(made, 0, "no attempt while the fleet is held");
    assert_eq!(
        held_for(&result),
        Some((Duration::from_secs(3), 0)),
        "a server's hold, not an open breaker: {result:?}"
    );
    assert!(sleeper.delays().is_empty(), "a first attempt does not wait");
    assert!(
        !fake.told().contains(&Told::Admit(START_MS)),
        "held before the breaker is asked: {:?}",
        fake.told()
    );
    assert_eq!(
        result.unwrap_err().to_string(),
        "endpoint `api` held by the server's Retry-After, no attempt made (for 3 s more)"
    );
    // the async loop alike (the local hold now answers first)
    let result = block_on(
        policy
            .call_with("api", classify_reply)
            .run(|_| ready(Ok::<u8, Reply>(7))),
    );
    assert_eq!(held_for(&result), Some((Duration::from_secs(3), 0)));
}

#[test]
fn an_async_call_the_fleet_holds_fails_fast_too() {
    let fake = Arc::new(Fake::default());
    let (policy, _) = policy(&fake, |b| b);
    fake.holding_until(Some(START_MS + 2_000));
    let result = block_on(
        policy
            .call_with("api", classify_reply)
            .run(|_| ready(Ok::<u8, Reply>(7))),
    );
    assert_eq!(held_for(&result), Some((Duration::from_secs(2), 0)));
    assert_eq!(fake.asked(), 1);
}

#[test]
fn the_fleet_s_hold_is_set_here_so_the_calls_after_it_fail_fast_without_asking() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy(&fake, |b| b);
    fake.holding_until(Some(START_MS + 3_000));
    let _ = call(&policy);
    let asked = fake.asked();
    assert_eq!(asked, 1);
    // the view forgets it (a Redis flush, say): this process still holds
    fake.holding_until(None);
    sleeper.clock().advance(Duration::from_secs(1));
    let (result, made) = call(&policy);
    assert_eq!(
        (held_for(&result), made),
        (Some((Duration::from_secs(2), 0)), 0)
    );
    assert_eq!(fake.asked(), asked, "the local hold answered first");
    // until it ends
    sleeper.clock().advance(Duration::from_secs(2));
    let (result, made) = call(&policy);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(made, 1);
}

#[test]
fn a_retry_decided_waits_for_the_fleet_s_hold_then_goes_out() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy(&fake, |b| b);
    let clock = sleeper.clock().clone();
    let mut made = Vec::new();
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|attempt| {
            made.push(clock.now_ms() - START_MS);
            if attempt == 1 {
                // while this call fails, another process is told to wait
                fake.holding_until(Some(clock.now_ms() + 8_000));
                Err((500, None))
            } else {
                Ok(())
            }
        });
    assert!(result.is_ok(), "{result:?}");
    // the retry waited its backoff, then the rest of the fleet's hold
    assert_eq!(made, [0, 8_000]);
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 2, "the backoff, then the hold: {delays:?}");
    let slept: Duration = delays.iter().sum();
    assert!(
        slept.abs_diff(Duration::from_secs(8)) < Duration::from_millis(1),
        "{delays:?}"
    );
}

#[test]
fn a_retry_the_fleet_s_hold_would_carry_past_the_deadline_ends_the_call_held() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy(&fake, |b| b.with_max_elapsed(Duration::from_secs(3)));
    let clock = sleeper.clock().clone();
    let mut attempts = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        attempts += 1;
        fake.holding_until(Some(clock.now_ms() + 8_000));
        Err::<(), Reply>((500, None))
    });
    let (left, made) = held_for(&result).unwrap_or_else(|| panic!("{result:?}"));
    assert_eq!((made, attempts), (1, 1));
    assert!(
        left > Duration::from_secs(7) && left < Duration::from_secs(8),
        "{left:?}"
    );
}

#[test]
fn a_fleet_s_hold_beyond_the_limit_is_taken_for_none() {
    let fake = Arc::new(Fake::default());
    let (policy, _) = policy(&fake, |b| b);
    fake.holding_until(Some(START_MS + 60_000));
    let (result, made) = call(&policy);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(made, 1);
}

#[test]
fn without_the_hold_the_policy_neither_tells_nor_obeys() {
    let fake = Arc::new(Fake::default());
    let (policy, _) = policy(&fake, Builder::without_server_hold);
    told_to_wait(&policy, Duration::from_secs(4));
    fake.holding_until(Some(START_MS + 3_000));
    let (result, made) = call(&policy);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(made, 1);
    assert!(fake.holds().is_empty(), "{:?}", fake.told());
    assert_eq!(fake.asked(), 0);
}

#[test]
fn without_a_shared_breaker_the_hold_is_the_process_s_own_as_before() {
    let sleeper = VirtualSleeper::new(ManualClock::new(START_MS));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_retry_after(LIMIT)
        .with_seed(5)
        .build()
        .unwrap();
    told_to_wait(&policy, Duration::from_secs(4));
    let (result, made) = call(&policy);
    assert_eq!(
        (held_for(&result), made),
        (Some((Duration::from_secs(4), 0)), 0)
    );
    sleeper.clock().advance(Duration::from_secs(4));
    let (result, made) = call(&policy);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(made, 1);
}
