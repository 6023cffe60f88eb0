//! `Builder::with_shared_breaker`: a breaker shared by a fleet is asked after
//! the endpoint's own breaker admits an attempt. Its refusal makes no attempt
//! and ends the call `CircuitOpen` with its end (or is waited out under
//! `with_wait_while_open`), and while it holds the endpoint open no retry is
//! decided; it hears every outcome of an attempt it admitted,
//! whether that attempt was its probe, and each opening of the policy's own
//! breaker; a probe of its whose attempt was never sent goes back to it. A
//! policy without a breaker of its own refuses to take one. Virtual time
//! throughout, and a fake shared breaker that keeps what it was told.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::future::{Future, ready};
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_breaker::{Admission, FleetView, ProbeRound, State, Transition};
use bayesretry_policy::{
    CancelToken, Classification, Classify, Clock, Error, HttpStatus, ManualClock, RetryError,
    RetryErrorKind, RetryPolicy, VirtualSleeper,
};
use common::block_on;

/// What the fake was told, in order.
#[derive(Clone, Debug, PartialEq)]
enum Told {
    Admit(u64),
    Record {
        now_ms: u64,
        success: bool,
        probe: Option<ProbeRound>,
    },
    Publish(u64, Transition),
    Release(ProbeRound),
}

/// A shared breaker that answers what the test sets and keeps what it hears.
#[derive(Default)]
struct Fake {
    /// Refuse until this time (the policy's clock), if set.
    refuse_until: Mutex<Option<u64>>,
    /// Hand out probes of this round, if set (and not refusing).
    probe: Mutex<Option<ProbeRound>>,
    told: Mutex<Vec<Told>>,
}

impl Fake {
    fn refusing_until(until_ms: u64) -> Arc<Fake> {
        let fake = Arc::new(Fake::default());
        *fake.refuse_until.lock().unwrap() = Some(until_ms);
        fake
    }

    fn probing(round: u64) -> Arc<Fake> {
        let fake = Arc::new(Fake::default());
        *fake.probe.lock().unwrap() = Some(ProbeRound::numbered(round));
        fake
    }

    fn told(&self) -> Vec<Told> {
        self.told.lock().unwrap().clone()
    }

    fn admits(&self) -> usize {
        self.told()
            .iter()
            .filter(|t| matches!(t, Told::Admit(_)))
            .count()
    }

    fn records(&self) -> Vec<(bool, Option<ProbeRound>)> {
        self.told()
            .iter()
            .filter_map(|t| match t {
                Told::Record { success, probe, .. } => Some((*success, *probe)),
                _ => None,
            })
            .collect()
    }
}

impl FleetView for Fake {
    fn admit(&self, endpoint: &str, now_ms: u64) -> Admission {
        assert_eq!(endpoint, "api");
        self.told.lock().unwrap().push(Told::Admit(now_ms));
        match (
            *self.refuse_until.lock().unwrap(),
            *self.probe.lock().unwrap(),
        ) {
            (Some(until_ms), _) if now_ms < until_ms => Admission::Rejected { until_ms },
            (_, Some(round)) => Admission::Probe {
                half_opened: false,
                round,
            },
            _ => Admission::Allowed,
        }
    }

    fn record(&self, endpoint: &str, now_ms: u64, success: bool, probe: Option<ProbeRound>) {
        assert_eq!(endpoint, "api");
        self.told.lock().unwrap().push(Told::Record {
            now_ms,
            success,
            probe,
        });
    }

    fn publish(&self, endpoint: &str, now_ms: u64, transition: Transition) {
        assert_eq!(endpoint, "api");
        self.told
            .lock()
            .unwrap()
            .push(Told::Publish(now_ms, transition));
    }

    fn release_probe(&self, endpoint: &str, round: ProbeRound) {
        assert_eq!(endpoint, "api");
        self.told.lock().unwrap().push(Told::Release(round));
    }

    fn open_until(&self, _endpoint: &str, now_ms: u64) -> Option<u64> {
        (*self.refuse_until.lock().unwrap()).filter(|&until_ms| now_ms < until_ms)
    }
}

/// The default policy on virtual time from 0, with `fake` as its shared
/// breaker, waiting up to `wait` while open if given; its sleeper.
fn policy_with(fake: &Arc<Fake>, wait: Option<Duration>) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let shared: Arc<dyn FleetView + Send + Sync> = fake.clone();
    let mut builder = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_shared_breaker(shared)
        .with_seed(3);
    if let Some(wait) = wait {
        builder = builder.with_wait_while_open(wait);
    }
    (builder.build().unwrap(), sleeper)
}

/// The kind of a call's error.
fn kind<T: core::fmt::Debug>(
    result: Result<T, RetryError<HttpStatus>>,
) -> RetryErrorKind<HttpStatus> {
    result.unwrap_err().into_kind()
}

#[test]
fn a_call_the_shared_breaker_refuses_makes_no_attempt_and_says_until_when() {
    let fake = Fake::refusing_until(7_000);
    let (policy, _) = policy_with(&fake, None);
    let mut attempts = 0;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        Ok::<(), HttpStatus>(())
    });
    assert_eq!(attempts, 0, "no attempt was made");
    let RetryErrorKind::CircuitOpen {
        retry_after,
        attempts,
        last_error,
        ..
    } = kind(result)
    else {
        panic!("refused as open");
    };
    assert_eq!(retry_after, Some(Duration::from_secs(7)), "the shared end");
    assert_eq!((attempts, last_error), (0, None));
    assert_eq!(fake.admits(), 1);
    assert!(fake.records().is_empty(), "no outcome to tell");
    // the policy's own breaker is untouched: nothing was sent
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));

    // the async loop refuses the same way
    let result = block_on(policy.run("api", |_| ready(Ok::<u32, HttpStatus>(1))));
    assert!(
        matches!(kind(result), RetryErrorKind::CircuitOpen { retry_after: Some(d), .. } if d == Duration::from_secs(7))
    );
    // and a handle on the endpoint too
    let result = policy
        .endpoint("api")
        .run_blocking(|_| Ok::<(), HttpStatus>(()));
    assert!(matches!(kind(result), RetryErrorKind::CircuitOpen { .. }));
}

#[test]
fn every_outcome_goes_to_both_and_a_local_opening_is_told_with_its_end() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy_with(&fake, None);
    let mut made = 0;
    let mut opened = None;
    for _ in 0..1_000 {
        let _ = policy.run_blocking("api", |_| {
            made += 1;
            Err::<(), _>(HttpStatus(503))
        });
        if let Some(State::Open { until_ms }) = policy.breaker_state("api") {
            opened = Some(until_ms);
            break;
        }
        sleeper.clock().advance(Duration::from_millis(100));
    }
    let until_ms = opened.expect("a dead endpoint opens the policy's breaker");
    let records = fake.records();
    assert_eq!(records.len(), made, "one outcome per attempt made");
    assert!(records.iter().all(|&r| r == (false, None)), "{records:?}");
    let published: Vec<(u64, Transition)> = fake
        .told()
        .into_iter()
        .filter_map(|t| match t {
            Told::Publish(now_ms, transition) => Some((now_ms, transition)),
            _ => None,
        })
        .collect();
    let [(at, Transition::Opened { until_ms: told })] = published[..] else {
        panic!("one opening told: {published:?}");
    };
    assert_eq!(told, until_ms, "the opening's end, on the policy's clock");
    assert!(at < told, "told as it opened, with its cooldown to run");
    // the opening is told after the failure that caused it
    let last = fake.told().into_iter().rev().nth(1);
    assert!(
        matches!(last, Some(Told::Record { success: false, now_ms, .. }) if now_ms == at),
        "{last:?}"
    );

    // while the policy's own breaker is open, the shared one is not asked
    let admits = fake.admits();
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    assert!(matches!(kind(result), RetryErrorKind::CircuitOpen { .. }));
    assert_eq!(fake.admits(), admits);
}

#[test]
fn the_later_of_the_two_ends_is_the_call_s() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy_with(&fake, None);
    let until_ms = (0..1_000)
        .find_map(|_| {
            let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
            sleeper.clock().advance(Duration::from_millis(100));
            match policy.breaker_state("api") {
                Some(State::Open { until_ms }) => Some(until_ms),
                _ => None,
            }
        })
        .expect("the breaker opens");
    // the fleet holds the endpoint open a minute past the own breaker's end
    *fake.refuse_until.lock().unwrap() = Some(until_ms + 60_000);
    let now = sleeper.clock().now_ms();
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    let RetryErrorKind::CircuitOpen { retry_after, .. } = kind(result) else {
        panic!("refused");
    };
    assert_eq!(
        retry_after,
        Some(Duration::from_millis(until_ms + 60_000 - now))
    );
}

#[test]
fn a_probe_the_shared_breaker_admitted_is_told_as_its_probe() {
    let fake = Fake::probing(7);
    let (policy, _) = policy_with(&fake, None);
    assert!(
        policy
            .run_blocking("api", |_| Ok::<(), HttpStatus>(()))
            .is_ok()
    );
    assert_eq!(fake.records(), [(true, Some(ProbeRound::numbered(7)))]);

    // a failed probe and then its retry, each the shared breaker's probe
    let mut attempt = 0;
    let result = block_on(policy.run("api", |_| {
        attempt += 1;
        ready(if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(())
        })
    }));
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(
        fake.records()[1..],
        [
            (false, Some(ProbeRound::numbered(7))),
            (true, Some(ProbeRound::numbered(7)))
        ]
    );

    // admitted without a probe: told as no probe
    *fake.probe.lock().unwrap() = None;
    assert!(
        policy
            .run_blocking("api", |_| Ok::<(), HttpStatus>(()))
            .is_ok()
    );
    assert_eq!(fake.records()[3..], [(true, None)]);
    assert!(!fake.told().iter().any(|t| matches!(t, Told::Release(_))));
}

/// An attempt that saw its call cancelled before it sent anything, and
/// stopped.
#[derive(Debug, PartialEq)]
struct Unsent;

impl Classify for Unsent {
    fn classify(&self) -> Classification {
        Classification::Permanent
    }
}

#[test]
fn a_shared_probe_whose_attempt_was_never_sent_goes_back() {
    let fake = Fake::probing(11);
    let (policy, _) = policy_with(&fake, None);
    let token = CancelToken::new();
    let result = policy
        .call::<Unsent>("api")
        .with_cancel(token.clone())
        .cancelled_before_sending(|_| true)
        .run_blocking(|_| {
            // the attempt sees the cancellation before it sends, and stops
            token.cancel("shutting down");
            Err::<(), _>(Unsent)
        });
    assert!(matches!(
        result.unwrap_err().kind(),
        RetryErrorKind::Cancelled { .. }
    ));
    assert!(fake.records().is_empty(), "nothing was sent: no outcome");
    assert_eq!(
        fake.told().last(),
        Some(&Told::Release(ProbeRound::numbered(11)))
    );

    // a permanent error says nothing of the endpoint: the probe goes back too
    let result = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(401)));
    assert!(matches!(
        result.unwrap_err().kind(),
        RetryErrorKind::Permanent(_)
    ));
    assert!(fake.records().is_empty());
    let released = fake
        .told()
        .iter()
        .filter(|t| **t == Told::Release(ProbeRound::numbered(11)))
        .count();
    assert_eq!(released, 2);

    // and so does the probe of an async call dropped while its attempt is
    // in flight (an outer timeout)
    let mut call =
        Box::pin(policy.run("api", |_| core::future::pending::<Result<(), HttpStatus>>()));
    let waker = core::task::Waker::noop();
    let mut cx = core::task::Context::from_waker(waker);
    assert!(call.as_mut().poll(&mut cx).is_pending());
    drop(call);
    let released = fake
        .told()
        .iter()
        .filter(|t| **t == Told::Release(ProbeRound::numbered(11)))
        .count();
    assert_eq!(released, 3);
    assert!(fake.records().is_empty());
}

#[test]
fn a_waiting_call_waits_out_a_shared_refusal_on_the_policy_s_clock() {
    let fake = Fake::refusing_until(1_050);
    let (policy, sleeper) = policy_with(&fake, Some(Duration::from_secs(10)));
    let mut attempts = 0;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        Ok::<(), HttpStatus>(())
    });
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(attempts, 1);
    // one wait, to the end the shared breaker gave, then asked again
    assert_eq!(sleeper.clock().now_ms(), 1_050);
    assert_eq!(sleeper.delays(), [Duration::from_millis(1_050)]);
    assert_eq!(fake.told()[..2], [Told::Admit(0), Told::Admit(1_050)]);
    assert_eq!(fake.records(), [(true, None)]);

    // the async loop waits the same way
    let fake = Fake::refusing_until(400);
    let (policy, sleeper) = policy_with(&fake, Some(Duration::from_secs(10)));
    let result = block_on(policy.run("api", |_| ready(Ok::<u32, HttpStatus>(5))));
    assert_eq!(result.ok(), Some(5));
    assert_eq!(sleeper.delays(), [Duration::from_millis(400)]);

    // a refusal longer than the wait allowed fails at once, with its end
    let fake = Fake::refusing_until(60_000);
    let (policy, sleeper) = policy_with(&fake, Some(Duration::from_secs(10)));
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    let RetryErrorKind::CircuitOpen { retry_after, .. } = kind(result) else {
        panic!("refused");
    };
    assert_eq!(retry_after, Some(Duration::from_secs(60)));
    assert_eq!(
        sleeper.clock().now_ms(),
        0,
        "no wait that cannot end in time"
    );
}

#[test]
fn a_policy_without_a_breaker_of_its_own_refuses_a_shared_one() {
    let shared: Arc<dyn FleetView + Send + Sync> = Arc::new(Fake::default());
    let refused = RetryPolicy::builder()
        .without_breaker()
        .with_shared_breaker(Arc::clone(&shared))
        .build();
    assert_eq!(refused.unwrap_err(), Error::SharedBreakerWithoutBreaker);
    let classic = RetryPolicy::builder()
        .classic()
        .with_shared_breaker(Arc::clone(&shared))
        .build();
    assert_eq!(classic.unwrap_err(), Error::SharedBreakerWithoutBreaker);
    // a classic policy given a breaker of its own takes it
    let classic = RetryPolicy::builder()
        .classic()
        .with_breaker(bayesretry_breaker::Config::new())
        .with_shared_breaker(shared)
        .build();
    assert!(classic.is_ok());
}

#[test]
fn no_retry_is_decided_while_the_shared_breaker_holds_the_endpoint_open() {
    let fake = Arc::new(Fake::default());
    let (policy, sleeper) = policy_with(&fake, None);
    let mut attempts = 0;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        // the fleet opens the endpoint while the attempt fails
        *fake.refuse_until.lock().unwrap() = Some(30_000);
        Err::<(), _>(HttpStatus(503))
    });
    assert_eq!(attempts, 1);
    let RetryErrorKind::CircuitOpen {
        retry_after,
        attempts,
        last_error,
        ..
    } = kind(result)
    else {
        panic!("stopped as open");
    };
    assert_eq!(
        (retry_after, attempts, last_error),
        (Some(Duration::from_secs(30)), 1, Some(HttpStatus(503)))
    );
    assert!(
        sleeper.delays().is_empty(),
        "no backoff slept for a retry the fleet would refuse"
    );
    assert_eq!(fake.records(), [(false, None)]);
}
