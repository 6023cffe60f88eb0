//! A snapshot written as JSON reads back equal, every `f64` to the bit, and
//! writes out to the same bytes again; malformed snapshots are rejected with a
//! reason.
#![cfg(feature = "serde")]

use bayesretry_store::{
    Context, Error, ErrorClass, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};
use proptest::prelude::*;

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.1),
        Just(1.0 / 3.0),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(f64::MAX / 4.0),
        Just(f64::EPSILON),
        (0.0_f64..1e-300),
        (0.0_f64..1e300),
        any::<f64>().prop_filter("finite, not negative", |x| x.is_finite() && *x >= 0.0),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_float_reads_back_to_the_bit(
        weights in proptest::collection::vec((weight(), weight(), 0..4_u32, any::<u64>()), 1..20),
    ) {
        let store = StoreConfig::new().with_writer(WriterId::new(u64::MAX - 1)).build().unwrap();
        for (i, &(s, f, class, now)) in weights.iter().enumerate() {
            let class = [
                ErrorClass::Http(529),
                ErrorClass::ConnectionReset,
                ErrorClass::Custom("timeout"),
                ErrorClass::Unknown,
            ][class as usize];
            let endpoint = format!("endpoint \"{i}\" ünïcode");
            store.observe_weighted(&Context::new(&endpoint, i as u32, class), s, f, now);
        }
        let snapshot = store.snapshot(u64::MAX);
        let json = snapshot.to_json();
        let back = Snapshot::from_json(&json).unwrap();
        prop_assert_eq!(&back, &snapshot);
        prop_assert_eq!(back.to_json(), json);
        for (x, y) in back.entries().iter().zip(snapshot.entries()) {
            prop_assert_eq!(x.evidence().successes().to_bits(), y.evidence().successes().to_bits());
            prop_assert_eq!(x.evidence().failures().to_bits(), y.evidence().failures().to_bits());
        }
        // Loading it into a fresh store gives the same snapshot back.
        let loaded = StoreConfig::new().with_writer(WriterId::new(u64::MAX - 1)).build().unwrap();
        loaded.load(&back);
        prop_assert_eq!(loaded.snapshot(u64::MAX), snapshot);
    }
}

#[test]
fn the_format_is_versioned_and_readable() {
    let store = StoreConfig::new()
        .with_writer(WriterId::new(7))
        .build()
        .unwrap();
    store.observe(&Context::new("api", 1, ErrorClass::Http(429)), true, 5);
    store.observe(
        &Context::new("api", 1, ErrorClass::Custom("quota")),
        false,
        6,
    );
    let json = store.snapshot(10).to_json();
    assert_eq!(
        json,
        concat!(
            r#"{"version":1,"taken_at_ms":10,"entries":["#,
            r#"{"endpoint":"api","attempt":1,"class":"custom:quota","writer":7,"seq":2,"#,
            r#""successes":0.0,"failures":1.0,"updated_at_ms":6},"#,
            r#"{"endpoint":"api","attempt":1,"class":"http-429","writer":7,"seq":1,"#,
            r#""successes":1.0,"failures":0.0,"updated_at_ms":5}]}"#
        )
    );
}

#[test]
fn malformed_snapshots_are_rejected_with_a_reason() {
    let entry = |class: &str, seq: u64, successes: &str| {
        format!(
            r#"{{"version":1,"taken_at_ms":0,"entries":[{{"endpoint":"a","attempt":1,"class":"{class}","writer":1,"seq":{seq},"successes":{successes},"failures":0.0,"updated_at_ms":0}}]}}"#
        )
    };
    assert!(Snapshot::from_json(&entry("http-429", 1, "1.5")).is_ok());
    assert_eq!(
        Snapshot::from_json(r#"{"version":2,"taken_at_ms":0,"entries":[]}"#),
        Err(Error::UnsupportedVersion(2))
    );
    for (bad, why) in [
        (
            entry("http-429", 1, "-1.0"),
            "evidence must be finite and >= 0, got -1",
        ),
        (entry("teapot", 1, "1.0"), "unknown class"),
        (entry("http-429", 0, "1.0"), "seq must be at least 1"),
        (entry("http-429", 1, "1e999"), "invalid snapshot"),
        ("{".to_owned(), "invalid snapshot"),
    ] {
        let err = Snapshot::from_json(&bad).unwrap_err();
        assert!(matches!(err, Error::InvalidSnapshot(_)), "{bad}: {err:?}");
        assert!(err.to_string().contains(why), "{bad}: {err}");
    }
}

#[test]
fn duplicate_entries_in_a_file_keep_the_winning_version() {
    let json = r#"{"version":1,"taken_at_ms":0,"entries":[
        {"endpoint":"a","attempt":1,"class":"timeout","writer":1,"seq":3,"successes":3.0,"failures":0.0,"updated_at_ms":0},
        {"endpoint":"a","attempt":1,"class":"timeout","writer":1,"seq":9,"successes":1.0,"failures":0.0,"updated_at_ms":0}]}"#;
    let snapshot = Snapshot::from_json(json).unwrap();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot.entries()[0].seq(), 9);
    let store = MemoryStore::new();
    store.merge(&snapshot);
    let ctx = Context::new("a", 1, ErrorClass::Timeout);
    assert_eq!(store.evidence(&ctx, 0).successes(), 1.0);
    assert_eq!(
        snapshot.entries()[0].error_class(),
        Some(ErrorClass::Timeout)
    );
}

#[test]
fn a_store_s_snapshot_names_its_writer_which_json_does_not_carry() -> Result<(), Error> {
    let store = StoreConfig::new().with_writer(WriterId::new(4)).build()?;
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    let snapshot = store.snapshot(0);
    assert_eq!(snapshot.taken_by(), Some(WriterId::new(4)));
    let read = Snapshot::from_json(&snapshot.to_json())?;
    assert_eq!(read.taken_by(), None);
    // Who took it is not part of what it holds.
    assert_eq!(read, snapshot);
    assert_eq!(Snapshot::new().merged(&snapshot).taken_by(), None);
    assert_eq!(snapshot.merged(&read).taken_by(), Some(WriterId::new(4)));
    Ok(())
}
