//! An endpoint's cooldown in `{ns}:br` that no script wrote (a hand edit, a
//! tool sharing the namespace, a corrupted restore): `inf`, `nan`, `-1`,
//! `1e400` or text. The probe claim set the probe counter's time to live from
//! it: `inf`, `nan` and `1e400` failed the `PEXPIRE` after the counter was
//! counted, so the counter kept no expiry, every later claim found the
//! round's probes taken, and the fleet refused every call to the endpoint
//! until its entry went stale (ten minutes); `-1` made a round one
//! millisecond long, so that the fleet's probes were no longer limited; text
//! read as a closed endpoint to the claim while the state kept listing it
//! open. A cooldown that is not a whole number of milliseconds now reads as
//! the claiming process's own base cooldown (one longer than its longest is
//! cut to it): the round lasts that long, a failed probe backs off from it,
//! and an opening over it keeps its own.
//!
//! A counter left without an expiry all the same (by a process of an earlier
//! version, whose claim fails the same way) is given one at the next claim.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_breaker::Admission;
use bayesretry_redis::{Fleet, FleetBreaker};

/// The cooldown of the tests' breakers, in ms.
const COOLDOWN_MS: i64 = 300;

/// A fleet whose breaker has `payments` open, on a namespace of its own.
struct Opened {
    url: String,
    namespace: String,
    fleet: Fleet,
    breaker: Arc<FleetBreaker>,
}

impl Opened {
    async fn new(test: &str, short: &str) -> Option<Opened> {
        let url = common::server_url(test)?;
        let namespace = common::namespace(short);
        let config = common::manual_rounds(url.clone(), namespace.clone());
        let fleet = Fleet::without_evidence(config).unwrap();
        let breaker = fleet
            .breaker(common::one_probe_rules(COOLDOWN_MS.unsigned_abs()))
            .unwrap();
        fleet.sync_now().await.unwrap();
        let opened = (0..100).any(|_| breaker.record("payments", false).is_some());
        assert!(opened, "the breaker opens on failures");
        fleet.sync_now().await.unwrap();
        assert!(breaker.is_open_fleetwide("payments"));
        Some(Opened {
            url,
            namespace,
            fleet,
            breaker,
        })
    }

    fn admin(&self) -> redis::Connection {
        common::admin(&self.url)
    }

    /// The endpoint's fields in `{ns}:br`.
    fn entry(&self) -> Vec<String> {
        let held: Option<String> = redis::cmd("HGET")
            .arg(format!("{{{}}}:br", self.namespace))
            .arg("payments")
            .query(&mut self.admin())
            .unwrap();
        held.map(|v| v.split(' ').map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Replaces the endpoint's cooldown in `{ns}:br` with `cooldown`, its
    /// `open until` and probe successes kept.
    fn garble_cooldown(&self, cooldown: &str) {
        let fields = self.entry();
        let [until, _, successes] = fields.as_slice() else {
            panic!("an opening's three fields: {fields:?}");
        };
        let () = redis::cmd("HSET")
            .arg(format!("{{{}}}:br", self.namespace))
            .arg("payments")
            .arg(format!("{until} {cooldown} {successes}"))
            .query(&mut self.admin())
            .unwrap();
    }

    /// The probe counter's time to live: -1 for none, -2 for no counter.
    fn probe_counter_ttl(&self) -> i64 {
        redis::cmd("PTTL")
            .arg(format!("{{{}}}:br:p:payments", self.namespace))
            .query(&mut self.admin())
            .unwrap()
    }

    /// Rounds until the breaker hands out a probe for `payments`, at most
    /// 20; whether it did. A round's error is not the test's concern here.
    async fn claim_probe(&self) -> bool {
        for _ in 0..20 {
            if let Admission::Probe { .. } = self.breaker.check("payments") {
                return true;
            }
            let _ = self.fleet.sync_now().await;
        }
        false
    }
}

/// The endpoint opened, its cooldown garbled to `cooldown` and over: the
/// probe claimed gets a round of the base cooldown, and its failure reopens
/// the endpoint with a cooldown backed off from that.
async fn garbled_cooldown_gets_a_round(test: &str, short: &str, cooldown: &str) {
    let Some(opened) = Opened::new(test, short).await else {
        return;
    };
    opened.garble_cooldown(cooldown);
    tokio::time::sleep(Duration::from_millis(350)).await;
    let probed = opened.claim_probe().await;
    let ttl = opened.probe_counter_ttl();
    assert!(
        ttl > 1 && ttl <= COOLDOWN_MS,
        "cooldown {cooldown:?}: the probe counter's time to live is {ttl} ms \
         (-1: none, the endpoint gets no probe until its entry goes stale)"
    );
    assert!(probed, "cooldown {cooldown:?}: no probe handed out");

    // The probe fails: reopened, backed off from the base cooldown (the
    // rules' factor is 2), every field a whole number.
    opened.breaker.record("payments", false);
    opened.fleet.sync_now().await.unwrap();
    assert!(opened.breaker.is_open_fleetwide("payments"));
    let fields = opened.entry();
    assert!(
        fields.iter().all(|f| f.parse::<u64>().is_ok()),
        "cooldown {cooldown:?}: reopened as {fields:?}"
    );
    assert_eq!(
        fields.get(1).map(String::as_str),
        Some("600"),
        "cooldown {cooldown:?}: reopened as {fields:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_cooldown_gets_a_probe_round_of_the_base_cooldown() {
    garbled_cooldown_gets_a_round(
        "an_infinite_cooldown_gets_a_probe_round_of_the_base_cooldown",
        "cooldown-inf",
        "inf",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_that_is_not_a_number_gets_a_probe_round_of_the_base_cooldown() {
    garbled_cooldown_gets_a_round(
        "a_cooldown_that_is_not_a_number_gets_a_probe_round_of_the_base_cooldown",
        "cooldown-nan",
        "nan",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negative_cooldown_gets_a_probe_round_of_the_base_cooldown() {
    garbled_cooldown_gets_a_round(
        "a_negative_cooldown_gets_a_probe_round_of_the_base_cooldown",
        "cooldown-negative",
        "-1",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_past_a_double_gets_a_probe_round_of_the_base_cooldown() {
    garbled_cooldown_gets_a_round(
        "a_cooldown_past_a_double_gets_a_probe_round_of_the_base_cooldown",
        "cooldown-1e400",
        "1e400",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_of_text_gets_a_probe_round_of_the_base_cooldown() {
    garbled_cooldown_gets_a_round(
        "a_cooldown_of_text_gets_a_probe_round_of_the_base_cooldown",
        "cooldown-text",
        "restored",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_too_long_for_an_expiry_is_cut_to_the_longest() {
    // twenty-one digits: a whole number, but past what PEXPIRE takes
    let Some(opened) = Opened::new(
        "a_cooldown_too_long_for_an_expiry_is_cut_to_the_longest",
        "cooldown-huge",
    )
    .await
    else {
        return;
    };
    opened.garble_cooldown("100000000000000000000");
    tokio::time::sleep(Duration::from_millis(350)).await;
    let probed = opened.claim_probe().await;
    let ttl = opened.probe_counter_ttl();
    // the rules' longest cooldown is the default, 300 000 ms
    assert!(
        ttl > 1 && ttl <= 300_000,
        "the probe counter's time to live is {ttl} ms"
    );
    assert!(probed, "no probe handed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_over_a_garbled_cooldown_writes_its_own() {
    let Some(opened) = Opened::new(
        "an_opening_over_a_garbled_cooldown_writes_its_own",
        "cooldown-reopened",
    )
    .await
    else {
        return;
    };
    for garbled in ["inf", "1e400", "nan", "-1", "restored"] {
        opened.garble_cooldown(garbled);
        // another process opens the endpoint too: its opening meets the
        // garbled cooldown
        let config = common::manual_rounds(opened.url.clone(), opened.namespace.clone());
        let other = Fleet::without_evidence(config).unwrap();
        let breaker = other
            .breaker(common::one_probe_rules(COOLDOWN_MS.unsigned_abs()))
            .unwrap();
        other.sync_now().await.unwrap();
        assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
        other.sync_now().await.unwrap();
        let fields = opened.entry();
        assert_eq!(
            fields.get(1).map(String::as_str),
            Some("300"),
            "opened over {garbled:?} as {fields:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_counter_left_without_an_expiry_is_given_one() {
    let Some(opened) = Opened::new(
        "a_probe_counter_left_without_an_expiry_is_given_one",
        "counter-no-expiry",
    )
    .await
    else {
        return;
    };
    // as an earlier version's claim leaves it, after its PEXPIRE failed
    let () = redis::cmd("SET")
        .arg(format!("{{{}}}:br:p:payments", opened.namespace))
        .arg("1")
        .query(&mut opened.admin())
        .unwrap();
    tokio::time::sleep(Duration::from_millis(350)).await;
    // this round's probe was taken; the claim gives the round an end
    assert!(matches!(
        opened.breaker.check("payments"),
        Admission::Rejected { .. }
    ));
    opened.fleet.sync_now().await.unwrap();
    let ttl = opened.probe_counter_ttl();
    assert!(
        ttl > 1 && ttl <= COOLDOWN_MS,
        "the probe counter's time to live is {ttl} ms"
    );
}
