//! `bayesretry inspect` reads at most `--max-bytes` of its input (256 MiB by
//! default): a larger file is refused before it is read, and a stream that
//! goes on past the cap (`/dev/zero`, a pipe) once it has, with one line that
//! names the input and the cap, exit 65, instead of reading until memory runs
//! out.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use common::{arg, bayesretry};

const SNAPSHOT: &[u8] = br#"{"version":1,"taken_at_ms":5,"entries":[]}"#;

#[cfg(unix)]
#[test]
fn an_endless_device_is_refused_at_the_cap() {
    bayesretry(&["inspect", "/dev/zero", "--max-bytes", "4096"], b"")
        .fails_with(65, &["/dev/zero", "more than 4096 bytes", "--max-bytes"]);
}

#[test]
fn a_stream_longer_than_the_cap_is_refused_and_one_within_it_read() {
    let len = SNAPSHOT.len().to_string();
    let shorter = (SNAPSHOT.len() - 1).to_string();
    let run = bayesretry(&["inspect", "-", "--max-bytes", &len], SNAPSHOT);
    assert_eq!(run.code, 0, "{run:#?}");
    bayesretry(&["inspect", "-", "--max-bytes", &shorter], SNAPSHOT)
        .fails_with(65, &["<stdin>", &format!("more than {shorter} bytes")]);
}

#[test]
fn a_file_larger_than_the_default_cap_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    // sparse: 256 MiB and one byte, on disk a few blocks, and never read
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(256 * 1024 * 1024 + 1).unwrap();
    bayesretry(&["inspect", arg(&path)], b"")
        .fails_with(65, &["huge.json", "more than 268435456 bytes (256 MiB)"]);
}

#[test]
fn a_cap_of_zero_is_refused_on_the_command_line() {
    bayesretry(&["inspect", "-", "--max-bytes", "0"], SNAPSHOT)
        .is_refused_with(&["--max-bytes", "0 is not in 1.."]);
}
