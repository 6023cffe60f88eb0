//! `StoreConfig::build` checks every setting and names the rejected value.

use bayesretry_store::{Error, StoreConfig, WriterId};

#[test]
fn each_bad_setting_is_named() {
    let cases = [
        (
            StoreConfig::new().with_max_contexts(0),
            Error::InvalidMaxContexts(0),
        ),
        (StoreConfig::new().with_shards(0), Error::InvalidShards(0)),
        (StoreConfig::new().with_shards(3), Error::InvalidShards(3)),
        (
            StoreConfig::new().with_shards(2048),
            Error::InvalidShards(2048),
        ),
        (
            StoreConfig::new().with_max_borrowed(-1.0),
            Error::InvalidMaxBorrowed(-1.0),
        ),
        (
            StoreConfig::new().with_max_borrowed(f64::INFINITY),
            Error::InvalidMaxBorrowed(f64::INFINITY),
        ),
        (
            StoreConfig::new().with_max_endpoint_bytes(0),
            Error::InvalidMaxEndpointBytes(0),
        ),
    ];
    for (config, expected) in cases {
        assert_eq!(config.build().unwrap_err(), expected);
    }
    assert!(matches!(
        StoreConfig::new().with_max_borrowed(f64::NAN).build(),
        Err(Error::InvalidMaxBorrowed(v)) if v.is_nan()
    ));
    assert_eq!(
        StoreConfig::new()
            .with_shards(3)
            .build()
            .unwrap_err()
            .to_string(),
        "shards must be a power of two between 1 and 1024, got 3"
    );
}

#[test]
fn defaults_are_as_documented() {
    let config = StoreConfig::default();
    assert_eq!(config.max_contexts(), 100_000);
    assert!(config.hierarchical_priors());
    assert_eq!(config.max_borrowed(), 10.0);
    assert_eq!(config.shards(), 32);
    assert!(config.half_life().is_never());
    assert_eq!(config.writer(), None);
    let store = config.build().unwrap();
    assert_eq!(store.shards(), 32);
    // Fewer shards than contexts are never used: each shard holds at least one.
    let small = StoreConfig::new().with_max_contexts(5).build().unwrap();
    assert_eq!(small.shards(), 4);
}

#[test]
fn no_store_is_built_under_the_id_reserved_for_migrated_evidence() {
    assert_eq!(WriterId::MIGRATED, WriterId::new(u64::MAX));
    let refused = StoreConfig::new()
        .with_writer(WriterId::MIGRATED)
        .build()
        .unwrap_err();
    assert_eq!(refused, Error::ReservedWriter(WriterId::MIGRATED));
    assert!(refused.to_string().contains("reserved"), "{refused}");
    // Its neighbours, and the small ids a host or pod number gives, are fine.
    for id in [0, 1, u64::MAX - 1] {
        let store = StoreConfig::new().with_writer(WriterId::new(id)).build();
        assert_eq!(store.map(|s| s.writer()), Ok(WriterId::new(id)));
    }
}
