//! `bayesretry audit verify` of a log whose first entry is a `continues`
//! link to files not given — a later file of a rotated set given alone, or
//! a file made to look like one, its link written by hand — does not pass
//! it as a whole log: nothing given verifies the entries before the link,
//! nor the link. It exits 65 saying where the log starts and what would
//! confirm it; `--partial` accepts a log that starts there (exit 0, the
//! `starts:` line says so), and a seal of that point or later confirms the
//! link.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use bayesretry_audit::{Event, Fsync, Hash, JsonlWriter, Record, Seal};
use common::{arg, bayesretry, scratch};

/// A file that claims to continue a log of 5 entries ending in a hash that
/// no file holds, then holds 2 outcomes: its link and the start it states.
fn forged(name: &str) -> (std::path::PathBuf, Seal) {
    let start = Seal::new(5, Hash::from_bytes([7; 32]));
    let mut writer = JsonlWriter::continuing(Vec::new(), start, Fsync::Never).unwrap();
    for i in 0..2 {
        let event = Event::Outcome {
            endpoint: String::from("api.example.com"),
            attempt: 1,
            error_class: String::from("http-503"),
            success: i == 1,
        };
        writer.append(&Record::new(100 + i, event)).unwrap();
    }
    let path = scratch(name);
    std::fs::write(&path, writer.into_inner().unwrap()).unwrap();
    (path, start)
}

#[test]
fn a_file_with_a_hand_made_link_alone_exits_65_saying_where_it_starts() {
    let (path, start) = forged("forged-link.jsonl");
    let run = bayesretry(&["audit", "verify", arg(&path)], b"");
    run.fails_with(
        65,
        &[
            arg(&path),
            "starts at entry 5",
            "files not given",
            &start.to_string(),
            "--partial",
        ],
    );
    assert!(!run.stdout.contains("valid"), "{run:#?}");

    // read from standard input, the same
    let bytes = std::fs::read(&path).unwrap();
    let run = bayesretry(&["audit", "verify", "-"], &bytes);
    run.fails_with(65, &["<stdin>", "starts at entry 5"]);
}

#[test]
fn partial_accepts_it_and_says_where_it_starts() {
    let (path, _) = forged("forged-link-partial.jsonl");
    let run = bayesretry(&["audit", "verify", "--partial", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    // the link and the 2 outcomes
    assert!(run.stdout.contains("valid: 3 entries"), "{run:#?}");
    assert!(run.stdout.contains("starts: at entry 5"), "{run:#?}");
    assert!(
        run.stdout.contains("which nothing given verifies"),
        "{run:#?}"
    );
}

#[test]
fn a_seal_of_where_it_starts_confirms_the_link_or_refuses_it() {
    let (path, start) = forged("forged-link-sealed.jsonl");
    let run = bayesretry(
        &["audit", "verify", arg(&path), "--seal", &start.to_string()],
        b"",
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains("the seal given confirms the link"),
        "{run:#?}"
    );
    let other = Seal::new(5, Hash::GENESIS).to_string();
    bayesretry(&["audit", "verify", arg(&path), "--seal", &other], b"").fails_with(65, &["line 1"]);
}
