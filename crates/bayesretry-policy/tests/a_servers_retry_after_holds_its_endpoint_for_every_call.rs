//! A server's Retry-After holds its endpoint: until the wait runs out no call
//! of the policy starts an attempt there. A first attempt fails fast (even
//! under `with_wait_while_open`); a retry already decided waits, within the
//! Retry-After limit and the deadline. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::ready;
use core::time::Duration;

use bayesretry_policy::{
    Builder, Clock, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

mod common;
use common::{Reply, block_on, classify_reply, held_for, told_to_wait};

/// The policy's Retry-After limit in these tests.
const LIMIT: Duration = Duration::from_secs(10);

/// The default policy on virtual time, with a Retry-After limit of 10 s, as
/// `configure` changes it; its sleeper.
fn policy(configure: impl FnOnce(Builder) -> Builder) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(1_000));
    let builder = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_retry_after(LIMIT)
        .with_seed(5);
    (configure(builder).build().unwrap(), sleeper)
}

#[test]
fn another_call_fails_fast_until_the_wait_runs_out_then_goes_through() {
    let (policy, sleeper) = policy(|b| b);
    told_to_wait(&policy, LIMIT);
    let mut attempts = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        attempts += 1;
        Ok::<(), Reply>(())
    });
    assert_eq!(held_for(&result), Some((LIMIT, 0)), "{result:?}");
    assert_eq!(attempts, 0, "no attempt while the server's wait runs");
    // another endpoint is not held
    let other = policy
        .call_with("other", classify_reply)
        .run_blocking(|_| Ok::<(), Reply>(()));
    assert!(other.is_ok());
    sleeper.clock().advance(LIMIT - Duration::from_millis(1));
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|_| Ok::<(), Reply>(()));
    assert_eq!(held_for(&result), Some((Duration::from_millis(1), 0)));
    sleeper.clock().advance(Duration::from_millis(1));
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|_| Ok::<(), Reply>(()));
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn the_text_says_why_and_for_how_long() {
    let (policy, _) = policy(|b| b);
    told_to_wait(&policy, Duration::from_millis(2_500));
    let err = policy
        .call_with("api", classify_reply)
        .run_blocking(|_| Ok::<(), Reply>(()))
        .unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_millis(2_500)));
    assert_eq!(
        err.to_string(),
        "endpoint `api` held by the server's Retry-After, no attempt made (for 2.5 s more)"
    );
}

#[test]
fn a_retry_decided_before_the_hold_waits_for_it_to_end() {
    let (policy, sleeper) = policy(|b| b);
    let start = sleeper.clock().now_ms();
    let mut made = Vec::new();
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|attempt| {
            made.push(sleeper.clock().now_ms() - start);
            if attempt == 1 {
                // while this call fails, another is told to wait a minute
                told_to_wait(&policy, LIMIT);
                Err((500, None))
            } else {
                Ok(())
            }
        });
    assert!(result.is_ok(), "{result:?}");
    // the retry waited its backoff, then the rest of the hold, and went out
    // the moment the hold ended
    assert_eq!(made, [0, 10_000]);
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 2, "{delays:?}");
    assert!(
        delays[0] < Duration::from_secs(1),
        "the backoff: {delays:?}"
    );
    let slept: Duration = delays.iter().sum();
    assert!(
        slept.abs_diff(LIMIT) < Duration::from_millis(1),
        "{delays:?}"
    );
}

#[test]
fn a_retry_the_hold_would_carry_past_the_deadline_ends_the_call_held() {
    let (policy, _) = policy(|b| b.with_max_elapsed(Duration::from_secs(3)));
    let mut attempts = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        attempts += 1;
        told_to_wait(&policy, LIMIT);
        Err::<(), Reply>((500, None))
    });
    let (left, made) = held_for(&result).unwrap_or_else(|| panic!("{result:?}"));
    assert_eq!(made, 1);
    assert_eq!(attempts, 1);
    assert!(left > Duration::from_secs(7), "{left:?}");
    assert_eq!(
        result.unwrap_err().kind().last_error(),
        Some(&(500, None)),
        "the last attempt's error is kept"
    );
}

#[test]
fn a_first_attempt_does_not_wait_for_the_hold_even_when_calls_wait_while_open() {
    let (policy, sleeper) = policy(|b| b.with_wait_while_open(Duration::from_secs(30)));
    told_to_wait(&policy, Duration::from_secs(4));
    let slept = sleeper.delays().len();
    let result = block_on(
        policy
            .call_with("api", classify_reply)
            .run(|_| ready(Ok::<u8, Reply>(7))),
    );
    assert_eq!(held_for(&result), Some((Duration::from_secs(4), 0)));
    assert_eq!(sleeper.delays().len(), slept, "no wait");
}

#[test]
fn without_the_hold_another_call_goes_out() {
    let (policy, _) = policy(Builder::without_server_hold);
    told_to_wait(&policy, LIMIT);
    let mut attempts = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        attempts += 1;
        Ok::<(), Reply>(())
    });
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(attempts, 1);
}

#[test]
fn a_policy_without_a_breaker_holds_nothing() {
    for (name, configure) in [
        (
            "no breaker",
            Builder::without_breaker as fn(Builder) -> Builder,
        ),
        ("classic", |b: Builder| b.classic().with_max_attempts(3)),
    ] {
        let (policy, _) = policy(configure);
        told_to_wait(&policy, LIMIT);
        let result = policy
            .call_with("api", classify_reply)
            .run_blocking(|_| Ok::<(), Reply>(()));
        assert!(result.is_ok(), "{name}: {result:?}");
    }
}

#[test]
fn a_later_wait_extends_the_hold_and_an_earlier_one_does_not_shorten_it() {
    let (policy, sleeper) = policy(|b| b.with_max_attempts(1));
    let told = |wait: u64| {
        let _ = policy
            .call_with("api", classify_reply)
            .run_blocking(|_| Err::<(), Reply>((429, Some(Duration::from_secs(wait)))));
    };
    told(3);
    told(1);
    let left = |policy: &RetryPolicy| {
        held_for(
            &policy
                .call_with("api", classify_reply)
                .run_blocking(|_| Ok::<(), Reply>(())),
        )
    };
    assert_eq!(left(&policy), Some((Duration::from_secs(3), 0)));
    sleeper.clock().advance(Duration::from_secs(1));
    // the refused calls above made no attempt, so told nothing
    assert_eq!(left(&policy), Some((Duration::from_secs(2), 0)));
}

#[test]
fn a_wait_beyond_the_limit_stops_its_call_and_holds_nothing() {
    let (policy, _) = policy(|b| b);
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|_| Err::<(), Reply>((429, Some(Duration::from_secs(3_600)))));
    assert!(
        matches!(
            result.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Exhausted { .. })
        ),
        "{result:?}"
    );
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|_| Ok::<(), Reply>(()));
    assert!(result.is_ok(), "{result:?}");
}
