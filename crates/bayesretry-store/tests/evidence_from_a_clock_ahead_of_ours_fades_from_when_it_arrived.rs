//! Every writer stamps its evidence with its own clock, and stores that share
//! evidence add each writer's up as of the latest stamp. A writer whose clock
//! runs ahead of ours (a host's wall clock set wrong, a clock of another
//! origin) stamps its evidence in our future. Merged as it is, that stamp
//! would become the context's: our own evidence would be decayed by the
//! difference — a day fast, and every other outcome is gone — and the
//! newcomer's would not fade until our clock caught up with it.
//!
//! [`MemoryStore::merge_at`] takes evidence stamped after the merge as
//! arriving then: it adds up with ours at its full weight, and fades from
//! that moment, however often it is merged again.
#![cfg(feature = "serde")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use core::num::NonZeroU64;

use bayesretry_store::{
    Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, StoreConfig, WriterId,
};

const CTX: Context<'static> = Context::new("api", 1, ErrorClass::Http(429));
const MINUTE_MS: u64 = 60_000;
const DAY_MS: u64 = 24 * 60 * MINUTE_MS;

fn store(writer: u64) -> MemoryStore {
    StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .with_hierarchical_priors(false)
        .with_half_life(HalfLife::from_ms(NonZeroU64::new(10 * MINUTE_MS).unwrap()))
        .build()
        .unwrap()
}

/// Ours: 50 failures at `now`. Theirs: 10 successes stamped a day ahead.
fn ours_and_theirs(now: u64) -> (MemoryStore, MemoryStore) {
    let ours = store(1);
    for _ in 0..50 {
        ours.observe(&CTX, false, now);
    }
    let theirs = store(2);
    for _ in 0..10 {
        theirs.observe(&CTX, true, now + DAY_MS);
    }
    (ours, theirs)
}

#[test]
fn our_evidence_is_not_wiped_out_by_a_writer_a_day_ahead() {
    let now = 1_000_000;
    let (ours, theirs) = ours_and_theirs(now);
    ours.merge_at(&theirs.snapshot(now + DAY_MS), now);
    let evidence = ours.evidence(&CTX, now);
    assert!((evidence.failures() - 50.0).abs() < 1e-9, "{evidence:?}");
    assert!((evidence.successes() - 10.0).abs() < 1e-9, "{evidence:?}");
}

#[test]
fn evidence_from_ahead_fades_from_when_it_arrived_however_often_merged() {
    let now = 1_000_000;
    let (ours, theirs) = ours_and_theirs(now);
    let snapshot = theirs.snapshot(now + DAY_MS);
    // merged again every minute for an hour, as a fleet's sync would
    for minute in 0..=60 {
        ours.merge_at(&snapshot, now + minute * MINUTE_MS);
    }
    // an hour is six half-lives: both sides are down to 1/64
    let evidence = ours.evidence(&CTX, now + 60 * MINUTE_MS);
    assert!(
        (evidence.failures() - 50.0 / 64.0).abs() < 1e-9,
        "{evidence:?}"
    );
    assert!(
        (evidence.successes() - 10.0 / 64.0).abs() < 1e-9,
        "{evidence:?}"
    );
}

#[test]
fn our_own_evidence_from_ahead_of_a_clock_set_back_fades_too() {
    // a store restarted under its writer after the clock was set back an
    // hour loads its own entries stamped an hour ahead
    let now = 1_000_000 + DAY_MS;
    let before = store(1);
    for _ in 0..8 {
        before.observe(&CTX, false, now + 60 * MINUTE_MS);
    }
    let after = store(1);
    after.merge_at(&before.snapshot(now + 60 * MINUTE_MS), now);
    after.merge_at(&before.snapshot(now + 60 * MINUTE_MS), now + 10 * MINUTE_MS);
    let evidence = after.evidence(&CTX, now + 10 * MINUTE_MS);
    assert!((evidence.failures() - 4.0).abs() < 1e-9, "{evidence:?}");
}

#[test]
fn evidence_stamped_in_the_past_merges_as_it_always_did() {
    let now = 1_000_000;
    let ours = store(1);
    let theirs = store(2);
    for _ in 0..10 {
        theirs.observe(&CTX, true, now - 10 * MINUTE_MS);
    }
    ours.merge_at(&theirs.snapshot(now), now);
    let plain = store(1);
    plain.merge(&theirs.snapshot(now));
    assert_eq!(ours.evidence(&CTX, now), plain.evidence(&CTX, now));
    assert!((ours.evidence(&CTX, now).successes() - 5.0).abs() < 1e-9);
}

#[test]
fn evidence_from_ahead_is_not_restored_once_our_clock_passes_its_stamp() {
    let now = 1_000_000;
    let (ours, theirs) = ours_and_theirs(now);
    let snapshot = theirs.snapshot(now + DAY_MS);
    ours.merge_at(&snapshot, now);
    // a day and a minute later, the same snapshot again (a file loaded, a
    // fleet resynced): its stamp is now in our past, and it is the same update
    let later = now + DAY_MS + MINUTE_MS;
    ours.merge_at(&snapshot, later);
    let evidence = ours.evidence(&CTX, later);
    assert!(evidence.successes() < 1e-30, "{evidence:?}");
}

#[test]
fn copies_of_one_update_clamped_apart_merge_alike_in_either_order() {
    let now = 1_000_000;
    let (_, theirs) = ours_and_theirs(now);
    let original = theirs.snapshot(now + DAY_MS);
    // a peer took the update as arriving at `now` and passes on its copy
    let peer = store(3);
    peer.merge_at(&original, now);
    let copy = peer.snapshot(now);

    let (a, b) = (store(1), store(1));
    let at = now + 10 * MINUTE_MS;
    a.merge_at(&original, at);
    a.merge_at(&copy, at);
    b.merge_at(&copy, at);
    b.merge_at(&original, at);
    assert_eq!(a.evidence(&CTX, at), b.evidence(&CTX, at));
    assert_eq!(a.snapshot(at), b.snapshot(at));
    // the earliest arrival holds: ten minutes, one half-life, of fading
    assert!((a.evidence(&CTX, at).successes() - 5.0).abs() < 1e-9);
}
