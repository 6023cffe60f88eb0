//! The `reqwest_retry_after` example's calls, on virtual time: a GET and a
//! POST refused with a 429 are sent again after the wait the server asked for,
//! a POST without an idempotency key that meets a 503 is sent once and says
//! why, the same POST with a key is refused in the client while the 503's
//! wait holds the origin and retried once it has run out, and an hour's
//! Retry-After stops the call.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

#[allow(
    dead_code,
    reason = "the example's `main` runs on real time; this test runs its calls on virtual time"
)]
#[path = "../examples/reqwest_retry_after.rs"]
mod example;

use core::time::Duration;

use bayesretry::RetryPolicy;
use bayesretry::http::{Error, RetryClient};
use bayesretry::policy::{ManualClock, VirtualSleeper};

#[tokio::test(flavor = "current_thread")]
async fn each_call_of_the_example_ends_as_it_says() {
    let (base, answered) = example::start_provider().await.unwrap();
    let time = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(time.clone())
        .with_seed(1)
        .build()
        .unwrap();
    let client = RetryClient::new(reqwest::Client::new(), policy);
    let clock = time.clock().clone();
    let tour = example::tour(&client, &base, &answered, |wait| {
        clock.advance(wait);
        core::future::ready(())
    })
    .await;
    assert_eq!(tour.get, (200, 2), "{tour:?}");
    assert_eq!(tour.refused_post, (200, 2), "{tour:?}");
    assert_eq!(
        (tour.unkeyed_post.0, tour.unkeyed_post.1),
        (503, 1),
        "{tour:?}"
    );
    let why = tour.unkeyed_post.2.as_ref().unwrap().to_string();
    assert!(why.contains("no idempotency key"), "{why}");
    // sent at once after the 503, the keyed POST met the whole of its wait
    assert_eq!(tour.held_for, Some(Duration::from_millis(300)), "{tour:?}");
    assert_eq!(tour.keyed_post, (200, 2), "{tour:?}");
    match &tour.batch {
        Err(err @ Error::RetryAfterBeyondLimit { .. }) => {
            assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
        }
        other => panic!("expected a Retry-After stop, got {other:?}"),
    }
    // the three retries each waited at least the 300 ms the server asked for
    let delays = time.delays();
    assert_eq!(delays.len(), 3, "{delays:?}");
    assert!(
        delays.iter().all(|d| *d >= Duration::from_millis(300)),
        "{delays:?}"
    );
}
