//! Memory per context stays under 128 bytes besides the interned endpoint
//! names: a 64-byte slot, its index entry, and its share of its endpoint's
//! group. (The `memory` example measures a million contexts.)

use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig};

#[test]
fn the_slot_is_64_bytes() {
    assert_eq!(MemoryStore::CONTEXT_SLOT_BYTES, 64);
}

#[test]
fn a_full_store_costs_at_most_128_bytes_a_context_besides_names() {
    const N: usize = 100_000;
    let store = StoreConfig::new().with_max_contexts(N).build().unwrap();
    let classes = [
        ErrorClass::Http(429),
        ErrorClass::Http(503),
        ErrorClass::Timeout,
        ErrorClass::Http(500),
    ];
    let mut made = 0;
    'fill: for e in 0.. {
        let endpoint = format!("service-{e}.example.com/v1/endpoint");
        for class in classes {
            for attempt in 1..=5 {
                store.observe(
                    &Context::new(&endpoint, attempt, class),
                    attempt % 2 == 0,
                    0,
                );
                made += 1;
                if made == N {
                    break 'fill;
                }
            }
        }
    }
    let held = store.len();
    assert!(held > N * 9 / 10, "{held}");
    let (total, names) = store.heap_bytes();
    let per_context = (total - names) as f64 / held as f64;
    assert!(per_context <= 128.0, "{per_context:.1} bytes per context");
}
