//! A power cut right after a rotation created its new file, before the link
//! it wrote there (its first line) reached the disk, leaves that file holding
//! no whole line: NUL bytes where the file had grown but its data had not
//! been written, or the beginning of the link. `rotate` says that
//! `open_continuing`, from the seal of the renamed file, mends a new file that
//! lacks its link; it does so for these too, cutting what the crash left and
//! writing the link again, so that the two files verify as one chain. Any
//! other first bytes are still refused, and left as they are.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use bayesretry_audit::{Error, Fsync, JsonlWriter, Seal, Verifier};
use common::record;

/// A log rotated once, its writer gone: the renamed file, the new file, the
/// seal the rotation returned and the new file's first line (the link).
fn rotated(dir: &Path) -> (PathBuf, PathBuf, Seal, Vec<u8>) {
    let live = dir.join("decisions.jsonl");
    let old = dir.join("decisions.jsonl.1");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    for i in 0..3 {
        writer.append(&record(i)).unwrap();
    }
    let seal = writer.rotate(&old).unwrap();
    drop(writer);
    let link = fs::read(&live).unwrap();
    assert_eq!(link.iter().filter(|&&b| b == b'\n').count(), 1);
    (old, live, seal, link)
}

/// That `open_continuing` mends the new file holding `left`, and that the
/// two files then verify as one chain, the link included.
fn mends(left: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let (old, live, seal, _link) = rotated(dir.path());
    fs::write(&live, left).unwrap();
    let mut writer = JsonlWriter::open_continuing(&live, seal, Fsync::EveryEntry)
        .unwrap_or_else(|err| panic!("{} bytes left, not mended: {err}", left.len()));
    assert_eq!(writer.seal().entries(), seal.entries() + 1);
    writer.append(&record(3)).unwrap();
    drop(writer);
    let summary = Verifier::new().summarize_files([&old, &live]).unwrap();
    assert_eq!(summary.seal().entries(), seal.entries() + 2);
    assert_eq!(Verifier::new().summarize_file(&live).unwrap().start(), seal);
}

#[test]
fn a_new_file_of_nul_bytes_alone_is_given_its_link() {
    let dir = tempfile::tempdir().unwrap();
    let (_old, _live, _seal, link) = rotated(dir.path());
    mends(&vec![0; link.len()]);
    mends(&[0; 4096]);
}

#[test]
fn a_new_file_holding_the_beginning_of_its_link_is_given_the_whole_link() {
    let dir = tempfile::tempdir().unwrap();
    let (_old, _live, _seal, link) = rotated(dir.path());
    for cut in [1, 15, link.len() / 2, link.len() - 1] {
        mends(&link[..cut]);
        // and followed by the zeros of the rest of the line
        let mut zeros = link[..cut].to_vec();
        zeros.resize(link.len(), 0);
        mends(&zeros);
    }
}

#[test]
fn a_new_file_holding_anything_else_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let (_old, live, seal, link) = rotated(dir.path());
    // the link's beginning, but of another entry number
    let text = String::from_utf8(link[..link.len() / 2].to_vec()).unwrap();
    let wrong_seq = text.replacen(
        &format!("\"seq\":{}", seal.entries()),
        &format!("\"seq\":{}", seal.entries() + 1),
        1,
    );
    assert_ne!(wrong_seq, text);
    for left in [wrong_seq.as_bytes(), b"not a log line", b"\0\0x"] {
        fs::write(&live, left).unwrap();
        let refused = JsonlWriter::open_continuing(&live, seal, Fsync::EveryEntry);
        assert!(
            matches!(
                refused,
                Err(Error::IncompleteLine { .. } | Error::Malformed { .. })
            ),
            "{refused:?}"
        );
        assert_eq!(fs::read(&live).unwrap(), left);
    }
}
