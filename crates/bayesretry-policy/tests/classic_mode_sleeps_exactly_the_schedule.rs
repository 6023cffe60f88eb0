//! Classic mode: a fixed count, the exact delay schedule, the cap, the jitter's
//! bounds — checked on virtual time.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{
    Classification, Clock, ErrorClass, HttpStatus, ManualClock, Reason, RetryError, RetryErrorKind,
    RetryPolicy, VirtualSleeper,
};

fn classic(backoff: Config, attempts: u32) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_backoff(backoff)
        .with_virtual_time(sleeper.clone())
        .with_seed(3)
        .build()
        .unwrap();
    (policy, sleeper)
}

#[test]
fn three_attempts_200_ms_factor_2_sleep_exactly_200_then_400_ms() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_millis(200))
        .with_factor(2.0)
        .with_jitter(Jitter::None);
    let (policy, sleeper) = classic(backoff, 3);
    let mut made = 0;
    let result: Result<(), _> = policy.run_blocking("db", |_| {
        made += 1;
        Err(HttpStatus(500))
    });
    assert_eq!(made, 3);
    assert_eq!(
        sleeper.delays(),
        [Duration::from_millis(200), Duration::from_millis(400)]
    );
    assert_eq!(sleeper.clock().now_ms(), 600);
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::Exhausted {
            attempts, decision, ..
        }) => {
            assert_eq!(attempts, 3);
            assert_eq!(decision.reason(), Reason::MaxAttempts);
        }
        other => panic!("expected exhaustion, got {other:?}"),
    }
}

#[test]
fn fixed_never_learns_and_always_retries_to_the_count() {
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_sleeper(|_| core::future::ready(()))
        .with_blocking_sleeper(VirtualSleeper::default())
        .build()
        .unwrap();
    for _ in 0..50 {
        let mut made = 0;
        let _: Result<(), _> = policy.run_blocking("down", |_| {
            made += 1;
            Err(HttpStatus(500))
        });
        assert_eq!(made, 3, "no learning, no breaker: always the full count");
    }
    let mut made = 0;
    let _: Result<(), _> = RetryPolicy::fixed(2).call("x").run_blocking(|_| {
        made += 1;
        Err(HttpStatus(401))
    });
    assert_eq!(
        made, 1,
        "a permanent error is never retried, even in classic mode"
    );
}

#[test]
fn the_cap_clamps_the_delays() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_millis(200))
        .with_factor(2.0)
        .with_max_delay(Duration::from_millis(500))
        .with_jitter(Jitter::None);
    let (policy, sleeper) = classic(backoff, 5);
    let _: Result<(), _> = policy.run_blocking("db", |_| Err(HttpStatus(503)));
    let ms: Vec<u128> = sleeper.delays().iter().map(Duration::as_millis).collect();
    assert_eq!(ms, [200, 400, 500, 500]);
}

#[test]
fn a_server_wait_beyond_the_backoff_cap_is_slept_whole_up_to_the_retry_after_limit() {
    // the backoff's cap bounds the backoff, not the server's wait: a retry
    // sent before the Retry-After would only be refused again
    let backoff = Config::new()
        .with_base_delay(Duration::from_millis(200))
        .with_max_delay(Duration::from_millis(500))
        .with_jitter(Jitter::None);
    let (policy, sleeper) = classic(backoff, 3);
    let hinted = |wait_ms: u64| {
        move |_: &u16| {
            Classification::Retryable(ErrorClass::Http(429))
                .with_retry_after(Duration::from_millis(wait_ms))
        }
    };
    let _: Result<(), _> = policy
        .call_with("api", hinted(45_000))
        .run_blocking(|_| Err(429));
    assert_eq!(
        sleeper.delays(),
        [Duration::from_secs(45), Duration::from_secs(45)]
    );

    // a wait beyond the limit (60 s by default) is not made at all
    let over: Result<(), _> = policy
        .call_with("api", hinted(61_000))
        .run_blocking(|_| Err(429));
    assert_eq!(sleeper.delays().len(), 2, "nothing more was slept");
    assert!(
        matches!(
            over.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Exhausted { decision, .. })
                if decision.reason() == Reason::RetryAfterBeyondLimit
        ),
        "{over:?}"
    );
}

#[test]
fn full_jitter_stays_within_its_bounds() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_millis(200))
        .with_factor(2.0)
        .with_max_delay(Duration::from_secs(1))
        .with_jitter(Jitter::Full);
    let (policy, sleeper) = classic(backoff, 6);
    for _ in 0..50 {
        let _: Result<(), _> = policy.run_blocking("db", |_| Err(HttpStatus(503)));
    }
    let delays = sleeper.delays();
    assert!(
        delays.len() > 200,
        "zero delays are not slept; the rest are recorded"
    );
    for (i, delay) in delays.iter().enumerate() {
        assert!(*delay <= Duration::from_secs(1), "delay {i}: {delay:?}");
    }
    assert!(
        delays.iter().any(|d| *d < Duration::from_millis(200)),
        "full jitter spreads low"
    );
}
