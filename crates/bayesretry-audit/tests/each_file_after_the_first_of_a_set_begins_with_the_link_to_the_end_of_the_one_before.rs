//! In a set of files verified in order (`Verifier::summarize_files`), each
//! file after the first must begin with the `continues` entry linking it to
//! where the file before ends (docs/SPEC.md, section 11.6): a file that
//! chains on without it, or one whose link is taken on trust after an empty
//! file, is named as not continuing the one before. And a `continues` entry
//! at entry 0 links to nothing but the genesis hash.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use bayesretry_audit::{Break, Error, Fsync, Hash, JsonlWriter, Seal, Verifier};
use common::record;

/// Two files: `a.jsonl.1` with entries 0..10, `a.jsonl` with the link and 10
/// more. Returns them oldest first.
fn rotated_pair(dir: &Path) -> Vec<PathBuf> {
    let live = dir.join("a.jsonl");
    let old = dir.join("a.jsonl.1");
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    for i in 0..10 {
        writer.append(&record(i)).unwrap();
    }
    writer.rotate(&old).unwrap();
    for i in 10..20 {
        writer.append(&record(i)).unwrap();
    }
    writer.sync().unwrap();
    vec![old, live]
}

#[test]
fn a_file_cut_in_two_without_a_link_between_the_halves_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let paths = rotated_pair(dir.path());
    let text = fs::read_to_string(&paths[0]).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (head, tail) = (dir.path().join("head.jsonl"), dir.path().join("tail.jsonl"));
    fs::write(&head, lines[..5].concat()).unwrap();
    fs::write(&tail, lines[5..].concat()).unwrap();

    let err = Verifier::new()
        .verify_files([&head, &tail, &paths[1]])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Discontinuous(gap)
            if gap.path() == tail && gap.previous() == head && gap.link().is_none()),
        "{err:?}"
    );
}

#[test]
fn a_file_linked_elsewhere_after_an_empty_first_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let paths = rotated_pair(dir.path());
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, b"").unwrap();

    let err = Verifier::new()
        .verify_files([&empty, &paths[1]])
        .unwrap_err();
    match &err {
        Error::Discontinuous(gap) => {
            assert_eq!(gap.path(), paths[1]);
            assert_eq!(gap.previous(), empty);
            assert_eq!(gap.ends(), Seal::new(0, Hash::GENESIS));
            assert_eq!(gap.link().map(|link| link.entries()), Some(10));
        }
        other => panic!("{other:?}"),
    }
    // the file alone still verifies from its link
    assert_eq!(
        Verifier::new()
            .summarize_files([&paths[1]])
            .unwrap()
            .start()
            .entries(),
        10
    );
}

#[test]
fn a_link_at_entry_0_to_anything_but_the_genesis_hash_breaks_the_chain() {
    let elsewhere = Hash::from_bytes([7; 32]);
    let mut writer =
        JsonlWriter::continuing(Vec::new(), Seal::new(0, elsewhere), Fsync::Never).unwrap();
    writer.append(&record(1)).unwrap();
    let bytes = writer.into_inner().unwrap();
    let err = Verifier::new()
        .summarize_reader(bytes.as_slice())
        .unwrap_err();
    assert!(
        matches!(&err, Error::Broken { line: 1, broken }
            if matches!(broken.why(), Break::Link { expected, found }
                if *expected == Hash::GENESIS && *found == elsewhere)),
        "{err:?}"
    );

    // one that links to the genesis hash (a log rotated before its first
    // entry) is a log from its beginning
    let mut writer =
        JsonlWriter::continuing(Vec::new(), Seal::new(0, Hash::GENESIS), Fsync::Never).unwrap();
    writer.append(&record(1)).unwrap();
    let bytes = writer.into_inner().unwrap();
    let summary = Verifier::new().summarize_reader(bytes.as_slice()).unwrap();
    assert_eq!(summary.start(), Seal::new(0, Hash::GENESIS));
    assert_eq!(summary.seal().entries(), 2);
}
