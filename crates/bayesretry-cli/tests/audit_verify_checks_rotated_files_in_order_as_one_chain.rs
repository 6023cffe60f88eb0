//! `bayesretry audit verify a.2 a.1 a`: the files of a rotated log, given in
//! the order written, verify as one chain; a file missing, out of order or
//! from another log is named, exit 65; a set whose oldest files were deleted
//! is refused unless `--partial` (or a seal) accepts where it starts.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::path::{Path, PathBuf};

use bayesretry_audit::{Event, Fsync, JsonlWriter, Record};
use common::{arg, bayesretry};

/// A log rotated into `files` files in `dir` (`a.jsonl.1`, ..., then the live
/// `a.jsonl`), `per_file` outcomes each; the files oldest first, and the seal.
fn rotated(dir: &Path, files: u64, per_file: u64) -> (Vec<PathBuf>, String) {
    let live = dir.join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    let mut paths = Vec::new();
    for file in 1..=files {
        for i in 0..per_file {
            let event = Event::Outcome {
                endpoint: String::from("api.example.com"),
                attempt: 1,
                error_class: String::from("http-503"),
                success: i % 2 == 0,
            };
            writer.append(&Record::new(file * 100 + i, event)).unwrap();
        }
        if file < files {
            let old = dir.join(format!("a.jsonl.{file}"));
            writer.rotate(&old).unwrap();
            paths.push(old);
        }
    }
    writer.sync().unwrap();
    paths.push(live);
    (paths, writer.seal().to_string())
}

fn verify(paths: &[PathBuf], extra: &[&str]) -> common::Run {
    let mut args = vec!["audit", "verify"];
    args.extend(paths.iter().map(|p| arg(p)));
    args.extend(extra);
    bayesretry(&args, b"")
}

#[test]
fn the_files_in_order_verify_against_the_seal_of_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, seal) = rotated(dir.path(), 3, 4);
    let run = verify(&paths, &["--seal", &seal]);
    assert_eq!(run.code, 0, "{run:#?}");
    // 12 outcomes and 2 links
    assert!(
        run.stdout
            .contains("valid: 14 entries (0 decisions, 12 outcomes)"),
        "{run:#?}"
    );
    assert!(run.stdout.contains(&format!("seal: {seal}")), "{run:#?}");
    assert!(!run.stdout.contains("starts:"), "{run:#?}");
}

#[test]
fn a_file_left_out_is_named_with_the_file_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut paths, _) = rotated(dir.path(), 3, 4);
    paths.remove(1);
    verify(&paths, &[]).fails_with(65, &[arg(&paths[1]), arg(&paths[0]), "missing"]);
}

#[test]
fn files_out_of_order_are_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let (mut paths, _) = rotated(dir.path(), 3, 4);
    paths.reverse();
    verify(&paths, &[]).fails_with(65, &[arg(&paths[1]), "out of order"]);
}

#[test]
fn a_set_whose_oldest_file_was_deleted_is_refused_unless_partial_and_says_where_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = rotated(dir.path(), 3, 4);
    // nothing given shows the link of its first file to be real
    verify(&paths[1..], &[]).fails_with(65, &[arg(&paths[1]), "starts at entry 4", "--partial"]);
    let run = verify(&paths[1..], &["--partial"]);
    assert_eq!(run.code, 0, "{run:#?}");
    // the 2 files hold the link and 4 outcomes each
    assert!(run.stdout.contains("valid: 10 entries"), "{run:#?}");
    assert!(run.stdout.contains("starts: at entry 4"), "{run:#?}");
    // the one live file alone too
    verify(&paths[2..], &[]).fails_with(65, &["starts at entry 9"]);
    let run = verify(&paths[2..], &["--partial"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("starts: at entry 9"), "{run:#?}");
}

#[test]
fn a_seal_of_the_whole_log_given_with_its_oldest_file_deleted_is_not_said_to_be_held_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, seal) = rotated(dir.path(), 3, 4);
    let run = verify(&paths[1..], &["--seal", &seal]);
    // the entries the files hold are the sealed ones: the chain reaches the
    // seal through the link, so the link is confirmed
    assert_eq!(run.code, 0, "{run:#?}");
    // but entries 0 to 3, in the deleted file, are not held
    assert!(!run.stdout.contains("holds the 14 entries"), "{run:#?}");
    assert!(
        run.stdout
            .contains("holds the last 10 of the 14 entries of the seal given"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("the 4 before them"), "{run:#?}");
    assert!(run.stdout.contains("starts: at entry 4"), "{run:#?}");
    assert!(
        run.stdout.contains("the seal given confirms the link"),
        "{run:#?}"
    );
}

#[test]
fn standard_input_is_refused_among_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let (mut paths, _) = rotated(dir.path(), 2, 2);
    paths.push(PathBuf::from("-"));
    verify(&paths, &[]).fails_with(64, &["standard input"]);
}
