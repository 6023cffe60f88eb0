//! Snapshot loading on arbitrary bytes: never a panic; whatever loads writes back to
//! JSON that loads to the same snapshot, and merging a snapshot into itself changes
//! nothing.
#![no_main]

use bayesretry_store::Snapshot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let Ok(snapshot) = Snapshot::from_json(text) else {
        return;
    };
    let json = snapshot.to_json();
    let again = match Snapshot::from_json(&json) {
        Ok(again) => again,
        Err(err) => panic!("a loaded snapshot wrote JSON that does not load: {err}"),
    };
    assert_eq!(
        again.to_json(),
        json,
        "writing is not stable across a round trip"
    );
    assert_eq!(
        snapshot.clone().merged(&snapshot).to_json(),
        json,
        "merge is not idempotent"
    );
});
