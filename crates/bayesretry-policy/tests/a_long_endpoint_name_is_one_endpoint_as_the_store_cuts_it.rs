//! The store keeps an endpoint name's first `max_endpoint_bytes` (256 by
//! default), cut at a character boundary, so names that differ only beyond
//! it are one context. The policy's breaker and a server's hold take the
//! same cut: names the store holds as one endpoint are one endpoint for
//! every part of the policy. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_policy::{
    Classification, ErrorClass, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper,
};
use bayesretry_store::StoreConfig;

/// A server's reply: its status and the wait it asked for.
type Reply = (u16, Option<Duration>);

fn classify_reply(reply: &Reply) -> Classification {
    let class = Classification::Retryable(ErrorClass::Http(reply.0));
    match reply.1 {
        Some(wait) => class.with_retry_after(wait),
        None => class,
    }
}

fn policy(store: StoreConfig) -> RetryPolicy {
    RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(1_000)))
        .with_max_retry_after(Duration::from_secs(10))
        .with_store_config(store)
        .with_seed(3)
        .build()
        .unwrap()
}

/// A URL with a query string that runs past 256 bytes, ending in `tail`.
fn long_url(tail: &str) -> String {
    let mut url = String::from("https://search.example.com/v1/query?q=");
    while url.len() < 300 {
        url.push_str("retry+policy+");
    }
    url.push_str(tail);
    url
}

/// Fails every call to `endpoint` until its breaker refuses one; the call
/// that was refused.
fn open_breaker(policy: &RetryPolicy, endpoint: &str) -> usize {
    for call in 0..200 {
        let result = policy.run_blocking(endpoint, |_| Err::<(), _>(HttpStatus(500)));
        if matches!(
            result.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::CircuitOpen { .. })
        ) {
            return call;
        }
    }
    panic!("the breaker of {endpoint:?} never opened");
}

/// A call to `endpoint` answered 429 with a wait of 5 s, not retried: the
/// endpoint is held for 5 s.
fn told_to_wait(policy: &RetryPolicy, endpoint: &str) {
    let result = policy
        .call_with(endpoint, classify_reply)
        .should_retry(|_| false)
        .run_blocking(|_| Err::<(), Reply>((429, Some(Duration::from_secs(5)))));
    assert!(result.is_err(), "{result:?}");
}

/// Whether a call to `endpoint` is refused, no attempt made, by a hold.
fn held(policy: &RetryPolicy, endpoint: &str) -> bool {
    let result = policy
        .call_with(endpoint, classify_reply)
        .run_blocking(|_| Ok::<(), Reply>(()));
    matches!(
        result.as_ref().map_err(RetryError::kind),
        Err(RetryErrorKind::ServerHold { attempts: 0, .. })
    )
}

#[test]
fn names_alike_in_their_first_256_bytes_share_one_breaker() {
    let policy = policy(StoreConfig::new());
    let (page_1, page_2) = (long_url("&page=1"), long_url("&page=2"));
    open_breaker(&policy, &page_1);

    assert!(matches!(
        policy.breaker_state(&page_2),
        Some(State::Open { .. })
    ));
    let mut attempts = 0;
    let result = policy.run_blocking(&page_2, |_| {
        attempts += 1;
        Ok::<(), HttpStatus>(())
    });
    assert_eq!(attempts, 0, "{result:?}");
    assert!(matches!(
        result.as_ref().map_err(RetryError::kind),
        Err(RetryErrorKind::CircuitOpen { attempts: 0, .. })
    ));
    // a handle on the other name finds the same breaker
    assert_eq!(
        policy.endpoint(&page_2).breaker_state(),
        policy.breaker_state(&page_1)
    );
    // a name that differs within the first 256 bytes is another endpoint
    let other = long_url("&page=1").replacen("search", "lookup", 1);
    assert_eq!(policy.breaker_state(&other), None);
}

#[test]
fn a_servers_wait_holds_every_name_the_store_holds_as_one() {
    let policy = policy(StoreConfig::new());
    told_to_wait(&policy, &long_url("&page=1"));
    assert!(held(&policy, &long_url("&page=2")));
    assert!(!held(&policy, "https://search.example.com/v1/health"));
}

#[test]
fn the_cut_falls_at_a_character_boundary_as_the_store_s_does() {
    // byte 256 falls inside a two-byte character: the store keeps 255 bytes
    let ascii = "a".repeat(255);
    let (e_acute, u_umlaut) = (format!("{ascii}é-1"), format!("{ascii}ü-2"));
    let policy = policy(StoreConfig::new());
    told_to_wait(&policy, &e_acute);
    assert!(held(&policy, &u_umlaut));
    assert!(held(&policy, &ascii));
}

#[test]
fn the_store_s_own_limit_is_the_policy_s() {
    let policy = policy(StoreConfig::new().with_max_endpoint_bytes(16));
    open_breaker(&policy, "api.example.com/v1/chat");
    assert!(matches!(
        policy.breaker_state("api.example.com/v2/embed"),
        Some(State::Open { .. })
    ));
    assert_eq!(policy.breaker_state("api.example.org/v1/chat"), None);
}
