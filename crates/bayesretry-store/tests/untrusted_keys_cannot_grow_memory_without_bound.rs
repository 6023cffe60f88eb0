//! Keys taken from untrusted input — endpoint names, attempt numbers, custom
//! class names — cannot grow the store past `max_contexts`: the least recently
//! updated context goes, with its name and parents, and the heap stays flat.

use bayesretry_store::{Context, ErrorClass, PosteriorStore, StoreConfig};

#[test]
fn a_flood_of_new_endpoints_stays_within_max_contexts() {
    let store = StoreConfig::new()
        .with_max_contexts(1_000)
        .with_shards(8)
        .build()
        .unwrap();
    let mut heap_after = Vec::new();
    for round in 0..5_u64 {
        for i in 0..20_000_u64 {
            let name = format!("attacker-{round}-{i}-{}", "x".repeat((i % 50) as usize));
            // Classes come from the program, a handful; names and attempts from
            // the attacker.
            let class = ErrorClass::from_status([429, 500, 502, 503, 529][(i % 5) as usize]);
            let ctx = Context::new(&name, (i % 7) as u32, class);
            store.observe(&ctx, i % 3 == 0, round * 20_000 + i);
        }
        assert!(store.len() <= 1_000, "{} contexts", store.len());
        heap_after.push(store.heap_bytes().0);
    }
    // The heap after the first round is what it stays at (within a margin for
    // an arena that has not been compacted yet).
    let first = heap_after[0];
    for &later in &heap_after[1..] {
        assert!(later < first * 2, "heap grew from {first} to {later}");
    }
    assert!(first < 1_000 * 600, "{first} bytes for 1 000 contexts");
}

#[test]
fn huge_endpoint_names_are_cut() {
    let store = StoreConfig::new()
        .with_max_contexts(10)
        .with_max_endpoint_bytes(16)
        .build()
        .unwrap();
    let long = "é".repeat(100_000);
    let ctx = Context::new(&long, 1, ErrorClass::Timeout);
    store.observe(&ctx, true, 0);
    let (_, names) = store.heap_bytes();
    assert!(names <= 64, "{names} bytes of names");
    // The cut name is the key: a name with the same first 16 bytes shares it.
    let same_start = format!("{}tail", "é".repeat(8));
    assert_eq!(
        store.posterior(&Context::new(&same_start, 1, ErrorClass::Timeout), 0),
        store.posterior(&ctx, 0)
    );
}

#[test]
fn reads_of_unknown_keys_create_nothing() {
    let store = StoreConfig::new().with_max_contexts(100).build().unwrap();
    for i in 0..10_000 {
        let name = format!("probe-{i}");
        let _ = store.posterior(&Context::new(&name, i, ErrorClass::Unknown), 0);
    }
    assert!(store.is_empty());
}

#[test]
fn run_time_class_names_are_bounded_too() {
    let store = StoreConfig::new().with_shards(1).build().unwrap();
    for i in 0..3_000 {
        // A program that leaks a fresh name per error: the store files the
        // excess as `Unknown` once it holds 1 024 classes.
        let name: &'static str = Box::leak(format!("class-{i}").into_boxed_str());
        store.observe(&Context::new("api", 1, ErrorClass::Custom(name)), false, 0);
    }
    assert!(store.len() <= 1_025, "{}", store.len());
}
