//! Evidence 64 half-lives old is worth less than 2⁻⁶⁴ of itself, yet a store
//! that kept it would keep it for good: every process restarted under a new
//! random writer id would add an entry per context to the snapshots a fleet
//! passes around and to the file it saves, and a writer restarted under a
//! fixed id, its old entries forgotten, would number its updates from 1
//! again, below the old entries its peers still hold, which would win.
//!
//! A store with a half-life forgets such evidence: its snapshots leave it
//! out, and [`MemoryStore::merge_at`] neither takes it in nor lets it stand
//! in the way of a writer's newer entry.
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
const HALF_LIFE_MS: u64 = 60_000;
/// 64 half-lives: evidence older than this is forgotten.
const HORIZON_MS: u64 = 64 * HALF_LIFE_MS;
/// A moment well after 0, as on a clock that counts from the Unix epoch.
const T0: u64 = 1_000 * HORIZON_MS;
/// Back after an absence: `T0`'s evidence is forgotten by then.
const BACK: u64 = T0 + HORIZON_MS + 10;

fn store(writer: u64) -> MemoryStore {
    StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .with_hierarchical_priors(false)
        .with_half_life(HalfLife::from_ms(NonZeroU64::new(HALF_LIFE_MS).unwrap()))
        .build()
        .unwrap()
}

/// Writer 7's store (its life under that id), having seen `outcomes`
/// attempts of `CTX`, all successes or all failures, at `at_ms`.
fn life_of_7(outcomes: u32, success: bool, at_ms: u64) -> MemoryStore {
    let life = store(7);
    for _ in 0..outcomes {
        life.observe(&CTX, success, at_ms);
    }
    life
}

fn writers(store: &MemoryStore, now_ms: u64) -> Vec<u64> {
    store
        .snapshot(now_ms)
        .entries()
        .iter()
        .map(|e| e.writer().get())
        .collect()
}

#[test]
fn a_snapshot_leaves_out_entries_64_half_lives_old_and_keeps_younger_ones() {
    let ours = store(1);
    ours.observe(&CTX, false, T0);
    let old = store(2);
    old.observe(&CTX, true, T0);
    let young = store(3);
    young.observe(&CTX, true, T0 + 2);
    ours.merge_at(&old.snapshot(T0), T0);
    ours.merge_at(&young.snapshot(T0 + 2), T0 + 2);

    // Exactly 64 half-lives is not yet forgotten; a millisecond more is.
    assert_eq!(writers(&ours, T0 + HORIZON_MS), vec![1, 2, 3]);
    let later = ours.snapshot(T0 + HORIZON_MS + 1);
    assert_eq!(
        later
            .entries()
            .iter()
            .map(|e| e.writer().get())
            .collect::<Vec<_>>(),
        vec![3]
    );
    assert_eq!(later.forgotten_before(), Some(T0 + 1));
    assert_eq!(writers(&ours, T0 + HORIZON_MS + 3), Vec::<u64>::new());
}

#[test]
fn a_store_without_decay_forgets_nothing() {
    let ours = StoreConfig::new()
        .with_writer(WriterId::new(1))
        .without_decay()
        .build()
        .unwrap();
    ours.observe(&CTX, false, 0);
    let snapshot = ours.snapshot(u64::MAX);
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot.forgotten_before(), None);
    let other = StoreConfig::new().without_decay().build().unwrap();
    other.merge_at(&snapshot, u64::MAX);
    assert_eq!(other.evidence(&CTX, u64::MAX).failures(), 1.0);
}

#[test]
fn forgotten_evidence_is_not_merged_in() {
    let old = store(2);
    old.observe(&CTX, true, T0);
    let ours = store(1);
    ours.merge_at(&old.snapshot(T0), T0 + HORIZON_MS + 1);
    assert_eq!(ours.len(), 0, "no context is made for it");
    // Merged before it was forgotten, it is kept (with its tiny weight).
    ours.merge_at(&old.snapshot(T0), T0 + HORIZON_MS);
    assert_eq!(ours.len(), 1);
}

/// Writer 7 saved under a fixed id, stopped, and started again after its
/// entries had been forgotten; it numbers its updates from 1 again. A peer
/// that still holds its old entry, at sequence number 40, takes the new one.
#[test]
fn a_writer_restarted_under_its_id_after_being_forgotten_is_heard_by_its_peers() {
    let first_life = life_of_7(40, false, T0);
    let peer = store(1);
    peer.merge_at(&first_life.snapshot(T0), T0);
    assert_eq!(peer.snapshot(T0).entries()[0].seq(), 40);

    let second_life = life_of_7(3, true, BACK);
    peer.merge_at(&second_life.snapshot(BACK), BACK);
    let evidence = peer.evidence(&CTX, BACK);
    assert!((evidence.successes() - 3.0).abs() < 1e-12, "{evidence:?}");
    let entries = peer.snapshot(BACK).entries().to_vec();
    assert_eq!(entries.len(), 1);
    assert_eq!((entries[0].writer().get(), entries[0].seq()), (7, 3));

    // Writer 7's own store, holding its forgotten first life as its own
    // entry, likewise takes its second life's, loaded from a file.
    let reloaded = store(7);
    reloaded.merge_at(&first_life.snapshot(T0), T0);
    reloaded.merge_at(&second_life.snapshot(BACK), BACK);
    assert!((reloaded.evidence(&CTX, BACK).successes() - 3.0).abs() < 1e-12);
    assert_eq!(reloaded.snapshot(BACK).entries()[0].seq(), 3);
}

/// Restarted, the writer may reach the sequence number its forgotten entry
/// had: a new update all the same, with other evidence, and heard.
#[test]
fn a_restarted_writer_at_its_old_sequence_number_is_heard_too() {
    let first_life = life_of_7(3, false, T0);
    let peer = store(1);
    peer.merge_at(&first_life.snapshot(T0), T0);
    let second_life = life_of_7(3, true, BACK);
    peer.merge_at(&second_life.snapshot(BACK), BACK);
    let evidence = peer.evidence(&CTX, BACK);
    assert!((evidence.successes() - 3.0).abs() < 1e-12, "{evidence:?}");
}

/// The one update a peer cannot tell from a copy of the forgotten entry: the
/// same sequence number and the same counts. It is heard with the writer's
/// next update of the context, which carries all of its evidence.
#[test]
fn a_restarted_update_that_matches_the_forgotten_one_is_heard_with_the_next() {
    let other = Context::new("api", 2, ErrorClass::Http(429));
    let life = |at| {
        let s = store(7);
        for _ in 0..39 {
            s.observe(&other, true, at);
        }
        s.observe(&CTX, false, at);
        s
    };
    let peer = store(1);
    peer.merge_at(&life(T0).snapshot(T0), T0);
    let second_life = life(BACK);
    peer.merge_at(&second_life.snapshot(BACK), BACK);
    second_life.observe(&CTX, false, BACK + 1);
    peer.merge_at(&second_life.snapshot(BACK + 1), BACK + 1);
    let evidence = peer.evidence(&CTX, BACK + 1);
    assert!((evidence.failures() - 2.0).abs() < 1e-3, "{evidence:?}");
}

/// A writer restarted under its id that loads a file still holding its
/// forgotten entries does not take them in, but numbers its updates on from
/// them: its peers then hear its very first update, whatever it holds.
#[test]
fn a_restarted_writer_numbers_on_from_its_forgotten_entries() {
    let first_life = store(7);
    first_life.observe(&CTX, false, T0);
    let saved = first_life.snapshot(T0);
    let peer = store(1);
    peer.merge_at(&saved, T0);

    let second_life = store(7);
    second_life.merge_at(&saved, BACK);
    assert_eq!(second_life.len(), 0, "the forgotten entry is not taken in");
    second_life.observe(&CTX, false, BACK);
    let entries = second_life.snapshot(BACK).entries().to_vec();
    assert_eq!(entries[0].seq(), 2);
    peer.merge_at(&second_life.snapshot(BACK), BACK);
    let evidence = peer.evidence(&CTX, BACK);
    assert!((evidence.failures() - 1.0).abs() < 1e-12, "{evidence:?}");
}

/// While the old entry is live, sequence numbers decide as ever.
#[test]
fn a_live_entry_with_a_higher_sequence_number_still_wins() {
    let first_life = life_of_7(40, false, T0);
    let peer = store(1);
    peer.merge_at(&first_life.snapshot(T0), T0);
    let second_life = store(7);
    second_life.observe(&CTX, true, T0 + HORIZON_MS);
    peer.merge_at(&second_life.snapshot(T0 + HORIZON_MS), T0 + HORIZON_MS);
    assert_eq!(peer.snapshot(T0 + HORIZON_MS).entries()[0].seq(), 40);
}

/// A peer that restarts every hour under a new random id, for two days: the
/// store that merges each one's evidence as it arrives holds, per context,
/// only the writers of the last 64 half-lives, and so do its snapshots.
#[test]
fn writers_that_come_and_go_do_not_pile_up() {
    let ours = store(1);
    ours.observe(&CTX, true, T0);
    let hour = 60 * 60_000;
    let mut now = T0;
    for life in 0..48_u64 {
        now = T0 + life * hour;
        let peer = store(100 + life);
        peer.observe(&CTX, false, now);
        ours.merge_at(&peer.snapshot(now), now);
        ours.observe(&CTX, true, now);
    }
    let held = writers(&ours, now);
    // 64 one-minute half-lives are 64 minutes: our own and the last two peers
    assert_eq!(held, vec![1, 146, 147], "{held:?}");
}
