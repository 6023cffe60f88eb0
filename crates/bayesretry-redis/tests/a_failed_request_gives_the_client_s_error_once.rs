//! A failed request to Redis says so, and the Redis client's error is its
//! `source()` only, so that a report printing the chain of causes (anyhow,
//! eyre, a log line with the error's sources) shows it once. A rejected
//! breaker setting is named in the message itself, which has no source.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use core::error::Error as _;

use bayesretry_redis::{Error, Fleet, FleetConfig};

/// The messages of `error` and of each of its causes, in order.
fn chain(error: &Error) -> Vec<String> {
    let mut messages = vec![error.to_string()];
    let mut next = error.source();
    while let Some(cause) = next.filter(|_| messages.len() < 8) {
        messages.push(cause.to_string());
        next = cause.source();
    }
    messages
}

#[tokio::test]
async fn an_unreachable_redis_is_a_failed_request_whose_source_is_the_client_error() {
    // Nothing listens on port 1: the connection is refused at once.
    let fleet = Fleet::without_evidence(FleetConfig::new("redis://127.0.0.1:1/0")).unwrap();
    let error = fleet.pull().await.unwrap_err();
    let Error::Redis(client) = &error else {
        panic!("not a redis error: {error:?}");
    };
    let cause = client.to_string();
    assert_eq!(error.to_string(), "a request to redis failed");
    let chain = chain(&error);
    assert_eq!(chain.get(1), Some(&cause), "{chain:?}");
    assert!(!chain[0].contains(&cause), "{chain:?}");
}

#[tokio::test]
async fn a_rejected_breaker_setting_is_named_in_the_message_alone() {
    let fleet = Fleet::without_evidence(FleetConfig::new("redis://127.0.0.1:1/0")).unwrap();
    let error = fleet
        .breaker(bayesretry_breaker::Config::new().with_confidence(2.0))
        .unwrap_err();
    assert!(matches!(error, Error::InvalidBreaker(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "invalid breaker config: confidence must be strictly between 0 and 1, got 2"
    );
    assert!(error.source().is_none(), "{:?}", chain(&error));
}
