//! Two processes, each with a `RetryPolicy` that takes its fleet's breaker
//! as its shared one (`Builder::with_shared_breaker`): A's policy opens an
//! endpoint on a run of failures and tells its fleet breaker, which publishes
//! the opening; after a round of each, B's policy refuses calls to it without
//! making an attempt, though B's own breaker never saw a failure. Once the
//! fleet's cooldown ends, B's fleet breaker claims the fleet's one probe, B's
//! policy sends it, and its success closes the endpoint for both fleets.
//!
//! Two fleets in one test process stand for the two processes: each has its
//! own connection, sync task and fleet breaker, and shares only Redis. The
//! policies run on manual clocks; the fleets on the system's, as the
//! cooldowns Redis holds do.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_breaker::{FleetView, State};
use bayesretry_policy::{HttpStatus, ManualClock, RetryErrorKind, RetryPolicy, VirtualSleeper};
use bayesretry_redis::{Fleet, FleetBreaker};

/// A policy of one attempt per call on a manual clock, with `rules` as its
/// own breaker and `shared` as its shared one; its clock.
fn policy_with(
    rules: bayesretry_breaker::Config,
    shared: &Arc<FleetBreaker>,
) -> (RetryPolicy, ManualClock) {
    let clock = ManualClock::new(1_000_000);
    let shared: Arc<dyn FleetView + Send + Sync> = shared.clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_breaker(rules)
        .with_shared_breaker(shared)
        .with_max_attempts(1)
        .build()
        .unwrap();
    (policy, clock)
}

/// Calls `endpoint` once, succeeding; how many attempts were made, and
/// whether the call was refused as open.
fn call_ok(policy: &RetryPolicy, endpoint: &str) -> (u32, bool) {
    let mut made = 0;
    let result = policy.run_blocking(endpoint, |_| {
        made += 1;
        Ok::<(), HttpStatus>(())
    });
    let refused = matches!(
        result.as_ref().map_err(|e| e.kind()),
        Err(RetryErrorKind::CircuitOpen { .. })
    );
    assert!(result.is_ok() || refused, "{result:?}");
    (made, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_one_policy_s_breaker_opens_is_refused_by_every_process_s_policy() {
    let Some(url) = common::server_url(
        "an_endpoint_one_policy_s_breaker_opens_is_refused_by_every_process_s_policy",
    ) else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("policy-seam"));
    let rules = common::one_probe_rules(1_000);
    let (fleet_a, fleet_b) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let (breaker_a, breaker_b) = (
        fleet_a.breaker(rules).unwrap(),
        fleet_b.breaker(rules).unwrap(),
    );
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    let (policy_a, clock_a) = policy_with(rules, &breaker_a);
    let (policy_b, _) = policy_with(rules, &breaker_b);
    assert_eq!(call_ok(&policy_b, "payments"), (1, false));

    // A's calls to payments fail until A's own breaker opens.
    let mut opened = None;
    for _ in 0..100 {
        let _ = policy_a.run_blocking("payments", |_| Err::<(), _>(HttpStatus(503)));
        if let Some(State::Open { until_ms }) = policy_a.breaker_state("payments") {
            opened = Some(until_ms);
            break;
        }
        clock_a.advance(Duration::from_millis(10));
    }
    let until_ms = opened.expect("a run of failures opens A's breaker");
    assert!(
        breaker_a.is_open_fleetwide("payments"),
        "A's policy told its fleet breaker"
    );
    assert!(
        !breaker_b.is_open_fleetwide("payments"),
        "not yet published"
    );

    // A round publishes it; B's round reads it.
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    assert!(breaker_b.is_open_fleetwide("payments"));
    let mut made = 0;
    let result = policy_b.run_blocking("payments", |_| {
        made += 1;
        Ok::<(), HttpStatus>(())
    });
    assert_eq!(made, 0, "B's policy made no attempt");
    let Err(RetryErrorKind::CircuitOpen { retry_after, .. }) = result.map_err(|e| e.into_kind())
    else {
        panic!("B's policy refused the call as open");
    };
    let retry_after = retry_after.expect("the fleet's end");
    assert!(
        retry_after > Duration::ZERO && retry_after <= Duration::from_millis(1_000),
        "{retry_after:?}"
    );
    assert_eq!(
        policy_b.breaker_state("payments"),
        Some(State::Closed),
        "B's own breaker saw no failure"
    );
    // other endpoints are untouched
    assert_eq!(call_ok(&policy_b, "search"), (1, false));

    // Past the fleet's cooldown (held on the server's clock), B's fleet
    // breaker claims the fleet's one probe at a round, and B's policy sends
    // it. A's policy is refused meanwhile by its own breaker, whose clock
    // has not moved.
    let mut probes = 0;
    for _ in 0..500 {
        let (made, refused) = call_ok(&policy_b, "payments");
        probes += made;
        if !refused {
            break;
        }
        assert_eq!(call_ok(&policy_a, "payments"), (0, true));
        fleet_b.sync_now().await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(probes, 1, "B sent the fleet's one probe");

    // Its success, reported at B's next round, closes payments for both.
    fleet_b.sync_now().await.unwrap();
    fleet_a.sync_now().await.unwrap();
    assert!(!breaker_a.is_open_fleetwide("payments"));
    assert!(!breaker_b.is_open_fleetwide("payments"));
    assert!(breaker_a.admit("payments", policy_a.now_ms()).is_allowed());
    assert_eq!(call_ok(&policy_b, "payments"), (1, false));
    // A's own breaker ends its cooldown on its own clock, and the fleet now
    // admits its probe: A is back too.
    clock_a.set(until_ms);
    assert_eq!(call_ok(&policy_a, "payments"), (1, false));
    assert_eq!(policy_a.breaker_state("payments"), Some(State::Closed));
}
