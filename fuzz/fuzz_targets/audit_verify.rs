//! Audit-log verification on arbitrary bytes: never a panic, in bounded memory;
//! a log that verifies also verifies against its own seal, and the same bytes
//! with their last line cut off never verify against that seal.
#![no_main]

use bayesretry_audit::Verifier;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // a small line bound, so that the bound's own path is reached too
    let verifier = Verifier::new().with_max_line_len(512);
    let Ok(seal) = verifier.verify_reader(data) else {
        return;
    };
    if let Err(err) = verifier.with_seal(seal).verify_reader(data) {
        panic!("a log that verifies fails against its own seal: {err}");
    }
    // drop the last complete line: the sealed head is gone
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    if let Some(cut) = body.iter().rposition(|&b| b == b'\n') {
        let shorter = &data[..=cut];
        assert!(
            verifier.with_seal(seal).verify_reader(shorter).is_err(),
            "a log cut short still verifies against the longer log's seal"
        );
    }
});
