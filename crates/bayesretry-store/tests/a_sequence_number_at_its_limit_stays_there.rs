//! A snapshot may carry a store's own entry at the largest sequence number
//! (a hand-edited file, a peer that wrote garbage): the store's next update
//! neither panics nor wraps its numbering to 0, and its evidence stays in its
//! snapshots.
#![cfg(feature = "serde")]

use bayesretry_store::{Context, ErrorClass, PosteriorStore, Snapshot, StoreConfig, WriterId};

#[test]
fn an_update_after_the_last_sequence_number_is_kept_in_the_snapshot() {
    let json = r#"{"version":1,"taken_at_ms":0,"entries":[{"endpoint":"api","attempt":1,"class":"timeout","writer":5,"seq":18446744073709551615,"successes":1.0,"failures":0.0,"updated_at_ms":0}]}"#;
    let store = StoreConfig::new()
        .with_writer(WriterId::new(5))
        .build()
        .unwrap();
    store.load(&Snapshot::from_json(json).unwrap());
    let ctx = Context::new("api", 1, ErrorClass::Timeout);
    store.observe(&ctx, false, 10);

    let snapshot = store.snapshot(10);
    assert_eq!(snapshot.len(), 1);
    let entry = &snapshot.entries()[0];
    assert_eq!(entry.writer(), WriterId::new(5));
    assert_eq!(entry.seq(), u64::MAX);
    assert_eq!(
        (entry.evidence().successes(), entry.evidence().failures()),
        (1.0, 1.0)
    );
    assert_eq!(entry.updated_at_ms(), 10);
    // and the store reads what it holds
    assert_eq!(store.evidence(&ctx, 10).strength(), 2.0);
}
