//! A probe that a fleet breaker claimed from Redis and handed to a policy's
//! attempt comes back to it when the attempt is never sent (its call was
//! cancelled before sending, `Call::cancelled_before_sending`): the next
//! call of the process takes it, without another round, and its success
//! closes the endpoint for the fleet. Kept by the attempt that never went
//! out, the probe would hold the fleet's one slot until Redis gave the round
//! up, a cooldown later, and every process would refuse the endpoint
//! meanwhile.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_breaker::FleetView;
use bayesretry_policy::{
    CancelToken, Classification, Classify, HttpStatus, ManualClock, RetryErrorKind, RetryPolicy,
    VirtualSleeper,
};

/// An attempt that saw its call cancelled before it sent anything.
#[derive(Debug)]
struct Unsent;

impl Classify for Unsent {
    fn classify(&self) -> Classification {
        Classification::Permanent
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_probe_whose_attempt_was_never_sent_goes_to_the_next_call() {
    let Some(url) =
        common::server_url("a_fleet_probe_whose_attempt_was_never_sent_goes_to_the_next_call")
    else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("unsent-probe"));
    let rules = common::one_probe_rules(1_000);
    let (fleet_a, fleet_b, breaker_a, breaker_b) =
        common::payments_opened_by_a(config, rules).await;
    fleet_b.sync_now().await.unwrap();
    assert!(breaker_b.is_open_fleetwide("payments"));
    let shared: Arc<dyn FleetView + Send + Sync> = breaker_b.clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_breaker(rules)
        .with_shared_breaker(shared)
        .with_max_attempts(1)
        .build()
        .unwrap();

    // Past the fleet's cooldown (on the server's clock), a round claims the
    // fleet's one probe; B's next call takes it and stops before sending.
    let token = CancelToken::new();
    let mut sent = 0;
    let mut unsent = None;
    for _ in 0..500 {
        let result = policy
            .call::<Unsent>("payments")
            .with_cancel(token.clone())
            .cancelled_before_sending(|_| true)
            .run_blocking(|_| {
                token.cancel("the caller went away");
                Err::<(), _>(Unsent)
            });
        match result.unwrap_err().into_kind() {
            RetryErrorKind::CircuitOpen { attempts: 0, .. } => {}
            kind => {
                unsent = Some(kind);
                break;
            }
        }
        fleet_b.sync_now().await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        matches!(
            unsent,
            Some(RetryErrorKind::Cancelled {
                last_error: Some(Unsent),
                ..
            })
        ),
        "the probe's attempt ran and stopped unsent: {unsent:?}"
    );

    // No round since: the probe the unsent attempt gave back is the next
    // call's, and its success closes payments for the fleet.
    let result = policy.run_blocking("payments", |_| {
        sent += 1;
        Ok::<(), HttpStatus>(())
    });
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(sent, 1);
    fleet_b.sync_now().await.unwrap();
    fleet_a.sync_now().await.unwrap();
    assert!(!breaker_b.is_open_fleetwide("payments"));
    assert!(!breaker_a.is_open_fleetwide("payments"));
}
