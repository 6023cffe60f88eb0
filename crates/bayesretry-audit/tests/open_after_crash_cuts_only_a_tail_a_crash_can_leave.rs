//! `JsonlWriter::open_after_crash` cuts what follows the last whole line only
//! if a crash of a writer could have left it: the beginning of the entry that
//! was due, at most a line of it, and NUL bytes after it or alone (what a power
//! cut leaves where the file grew but its data never reached the disk). Any
//! other tail is refused as `Error::StrayTail`, naming its line, and the file
//! is left as it is.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::fs;
use std::path::Path;

use bayesretry_audit::{Error, Fsync, JsonlWriter, MAX_LINE_LEN, Verifier};
use common::{file_lines, join};

/// A log of three entries at `path`, then `tail`.
fn three_entries_then(path: &Path, tail: &[u8]) {
    let mut bytes = join(&file_lines(3));
    bytes.extend_from_slice(tail);
    fs::write(path, bytes).unwrap();
}

/// The line entry 3 of the log would be, newline excluded.
fn next_line() -> Vec<u8> {
    let mut line = file_lines(4).pop().unwrap();
    line.pop();
    line
}

/// `open_after_crash` refuses the file as a stray tail on line 4 and leaves
/// it as it was.
fn refused(path: &Path) -> String {
    let before = fs::read(path).unwrap();
    let refusal = JsonlWriter::open_after_crash(path, Fsync::EveryEntry).map(|(_, cut)| cut);
    let message = match refusal {
        Err(err @ Error::StrayTail { line: 4, .. }) => err.to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(fs::read(path).unwrap(), before, "the file was changed");
    message
}

/// `open_after_crash` cuts `cut` bytes and records the loss after the three
/// entries.
fn cut(path: &Path, cut: usize) {
    let (writer, was_cut) = JsonlWriter::open_after_crash(path, Fsync::EveryEntry).unwrap();
    assert_eq!(was_cut, cut as u64);
    assert_eq!(writer.seal().entries(), 4, "the three entries and the loss");
    drop(writer);
    assert_eq!(Verifier::new().verify_file(path).unwrap().entries(), 4);
}

#[test]
fn a_tail_longer_than_a_line_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    three_entries_then(&path, &vec![b'x'; 1 << 20]);
    let message = refused(&path);
    assert!(message.contains("more than a line holds"), "{message}");

    // even one that begins as the next entry would, with a long endpoint name
    let next = next_line();
    let name = br#""endpoint":""#;
    let at = next.windows(name.len()).position(|w| w == name).unwrap();
    let mut long = next[..at + name.len()].to_vec();
    long.resize(MAX_LINE_LEN + 1, b'a');
    three_entries_then(&path, &long);
    refused(&path);
    // a whole line's worth is what a crash can leave
    long.truncate(MAX_LINE_LEN);
    three_entries_then(&path, &long);
    cut(&path, MAX_LINE_LEN);
}

#[test]
fn a_tail_that_does_not_begin_as_the_next_entry_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let next = String::from_utf8(next_line()).unwrap();
    let cases = [
        "x".to_owned(),
        "garbage that was never an entry".to_owned(),
        " {\"v\":1".to_owned(),
        "{\"v\":2,".to_owned(),
        // entry 7 where 3 was due, or entry 3 of another numbering
        next.replacen("\"seq\":3,", "\"seq\":7,", 1),
        next.replacen("\"seq\":3,", "\"seq\":30,", 1),
        next.replacen("\"seq\":3,", "\"seq\":03,", 1),
        // a NUL inside the text
        format!("{}\0{}", &next[..10], &next[10..20]),
        // a line that lost only its newline is cut (below); one with
        // something after it is not
        format!("{next}{next}"),
        format!("{next}x"),
    ];
    for case in &cases {
        three_entries_then(&path, case.as_bytes());
        let message = refused(&path);
        assert!(!message.is_empty(), "{case}");
    }
}

#[test]
fn a_tail_that_strays_from_the_canonical_form_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let next = String::from_utf8(next_line()).unwrap();
    let time = next.find(",\"event\"").unwrap();
    let hash = next.find(",\"hash\"").unwrap();
    // each begins as entry 3 would, then goes where no writer's line goes
    let cases = [
        format!("{}}}junk", &next[..time]),
        format!("{},\"hash\":\"", &next[..time]),
        format!("{},\"event\":\"dropped\",\"count\":3}}}}}}", &next[..time]),
        format!("{} ,", &next[..time]),
        format!("{},\"event\":\"decided\"", &next[..time]),
        // the entry whole but for a byte changed to one the form never has
        next[..hash].replacen("\"attempt\":", "\"attempt\": ", 1),
        format!("{}\\n", &next[..hash - 10]),
        format!("{}\"}}", &next[..hash]),
    ];
    for case in &cases {
        three_entries_then(&path, case.as_bytes());
        let message = refused(&path);
        assert!(message.contains("canonical"), "{case}: {message}");
    }
}

#[test]
fn the_start_of_the_next_entry_and_nul_bytes_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let next = next_line();
    let zeros = |n: usize| vec![0_u8; n];
    let cases: Vec<Vec<u8>> = vec![
        // the line cut anywhere, the whole line but its newline included
        next[..1].to_vec(),
        next[..14].to_vec(),
        next[..15].to_vec(),
        next[..next.len() / 2].to_vec(),
        next.clone(),
        // NUL bytes alone: a few, a block, more than a line
        zeros(1),
        zeros(4096),
        zeros(3 * MAX_LINE_LEN),
        // the start of the line, then NUL bytes
        [&next[..20], &zeros(4076)].concat(),
    ];
    for tail in &cases {
        three_entries_then(&path, tail);
        cut(&path, tail.len());
    }
}
