//! A log rotated by renaming (`JsonlWriter::rotate`, `AuditTrail::rotate`)
//! stays one chain across its files: each new file begins with a `continues`
//! entry linking it to the end of the one before. Verified in order
//! (`Verifier::summarize_files`), a file missing from the middle, given out of
//! order or swapped in from another log is named with what it looks like; a
//! file verified alone says where it starts; and a log file written before
//! rotation existed verifies as it did.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use bayesretry_audit::{
    AuditTrail, Break, Error, Event, Fsync, Hash, JsonlWriter, Record, Seal, Verifier,
};
use common::record;

/// A log of `files` files at `dir/<name>.jsonl`, rotated to `<name>.jsonl.1`,
/// `.2`, ...: `per_file` records in each, from record `first`. Returns the
/// files oldest first (the live one last) and the seal of the whole.
fn rotated_set(
    dir: &Path,
    name: &str,
    files: usize,
    per_file: u64,
    first: u64,
) -> (Vec<PathBuf>, Seal) {
    let live = dir.join(format!("{name}.jsonl"));
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    let mut paths = Vec::new();
    let mut i = first;
    for file in 0..files {
        for _ in 0..per_file {
            writer.append(&record(i)).unwrap();
            i += 1;
        }
        if file + 1 < files {
            let old = dir.join(format!("{name}.jsonl.{}", file + 1));
            let seal = writer.rotate(&old).unwrap();
            assert_eq!(Verifier::new().verify_file(&old).unwrap(), seal);
            paths.push(old);
        }
    }
    writer.sync().unwrap();
    let seal = writer.seal();
    paths.push(live);
    (paths, seal)
}

#[test]
fn rotated_files_verified_in_order_are_one_chain_and_each_alone_says_where_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, seal) = rotated_set(dir.path(), "a", 4, 25, 0);
    // 100 records and 3 links
    assert_eq!(seal.entries(), 103);

    let summary = Verifier::new()
        .with_seal(seal)
        .summarize_files(&paths)
        .unwrap();
    assert_eq!(summary.seal(), seal);
    assert_eq!(summary.start(), Seal::new(0, Hash::GENESIS));
    let alone: Vec<_> = paths
        .iter()
        .map(|path| Verifier::new().summarize_file(path).unwrap())
        .collect();
    let recorded =
        |s: &bayesretry_audit::Summary| s.decisions() + s.outcomes() + s.dropped_entries();
    assert_eq!(recorded(&summary), 100);
    assert_eq!(alone.iter().map(recorded).sum::<u64>(), 100);
    // each file starts where the one before ends
    assert_eq!(alone[0].start(), Seal::new(0, Hash::GENESIS));
    for pair in alone.windows(2) {
        assert_eq!(pair[1].start(), pair[0].seal());
    }
}

#[test]
fn a_file_missing_from_the_middle_is_named_with_the_entries_it_held() {
    let dir = tempfile::tempdir().unwrap();
    let (mut paths, _) = rotated_set(dir.path(), "a", 4, 10, 0);
    let removed = paths.remove(1);
    let held = Verifier::new().summarize_file(&removed).unwrap();
    let err = Verifier::new().verify_files(&paths).unwrap_err();
    match &err {
        Error::Discontinuous(gap) => {
            assert_eq!(gap.path(), paths[1]);
            assert_eq!(gap.previous(), paths[0]);
            assert_eq!(gap.ends(), held.start());
            assert_eq!(gap.link(), Some(held.seal()));
        }
        other => panic!("a missing file not named: {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("missing"), "{text}");
    assert!(text.contains("the 11 entries between"), "{text}");
}

#[test]
fn files_given_out_of_order_are_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let (mut paths, _) = rotated_set(dir.path(), "a", 3, 10, 0);
    paths.swap(1, 2);
    let err = Verifier::new().verify_files(&paths).unwrap_err();
    assert!(
        matches!(&err, Error::Discontinuous(gap)
            if gap.path() == paths[1] && gap.link().is_some_and(|l| l.entries() > gap.ends().entries())),
        "{err:?}"
    );
    // the newest first: the second file given already ends before the first
    let (mut paths, _) = rotated_set(dir.path(), "b", 3, 10, 0);
    paths.reverse();
    let err = Verifier::new().verify_files(&paths).unwrap_err();
    assert!(
        matches!(&err, Error::Discontinuous(gap)
            if gap.path() == paths[1] && gap.link().is_some_and(|l| l.entries() < gap.ends().entries())),
        "{err:?}"
    );
    assert!(err.to_string().contains("out of order"), "{err}");
}

#[test]
fn a_file_swapped_in_from_another_log_is_named_as_another_log() {
    let dir = tempfile::tempdir().unwrap();
    // two logs of the same shape, with other records
    let (mut ours, _) = rotated_set(dir.path(), "ours", 3, 10, 0);
    let (theirs, _) = rotated_set(dir.path(), "theirs", 3, 10, 500);
    ours[1].clone_from(&theirs[1]);
    let err = Verifier::new().verify_files(&ours).unwrap_err();
    match &err {
        Error::Discontinuous(gap) => {
            assert_eq!(gap.path(), theirs[1]);
            let link = gap.link().unwrap();
            assert_eq!(link.entries(), gap.ends().entries());
            assert_ne!(link.head(), gap.ends().head());
        }
        other => panic!("a swapped file not named: {other:?}"),
    }
    assert!(err.to_string().contains("another log"), "{err}");
}

#[test]
fn a_log_of_its_own_or_an_empty_file_after_another_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (mut paths, _) = rotated_set(dir.path(), "a", 2, 5, 0);
    let (own, _) = rotated_set(dir.path(), "own", 1, 5, 0);
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, b"").unwrap();
    for stranger in [&own[0], &empty] {
        paths.push(stranger.clone());
        let err = Verifier::new().verify_files(&paths).unwrap_err();
        assert!(
            matches!(&err, Error::Discontinuous(gap) if gap.path() == stranger && gap.link().is_none()),
            "{err:?}"
        );
        paths.pop();
    }
}

#[test]
fn a_damaged_line_in_one_file_of_a_set_is_named_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = rotated_set(dir.path(), "a", 3, 10, 0);
    let text = fs::read_to_string(&paths[1]).unwrap();
    let forged = text.replacen("\"seq\":14,\"time_ms\":17", "\"seq\":14,\"time_ms\":18", 1);
    assert_ne!(forged, text);
    fs::write(&paths[1], forged).unwrap();
    let err = Verifier::new().verify_files(&paths).unwrap_err();
    match &err {
        Error::InFile { path, source } => {
            assert_eq!(path, &paths[1]);
            // entry 14 is the 5th line of the file whose link is entry 10
            assert!(
                matches!(**source, Error::Broken { line: 5, ref broken } if matches!(broken.why(), Break::Hash { .. })),
                "{source:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("a.jsonl.2: line 5"), "{err}");
}

#[test]
fn a_set_whose_oldest_files_were_deleted_verifies_from_the_link_of_the_first_given() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, seal) = rotated_set(dir.path(), "a", 4, 10, 0);
    let first_kept = Verifier::new().summarize_file(&paths[0]).unwrap().seal();
    let summary = Verifier::new().summarize_files(&paths[1..]).unwrap();
    assert_eq!(summary.start(), first_kept);
    assert_eq!(summary.seal(), seal);
    // a seal of entries only the deleted files held cannot be checked
    let err = Verifier::new()
        .with_seal(Seal::new(5, Hash::GENESIS))
        .verify_files(&paths[1..])
        .unwrap_err();
    assert!(
        matches!(&err, Error::InFile { source, .. }
            if matches!(**source, Error::Broken { ref broken, .. }
                if matches!(broken.why(), Break::SealBeforeStart { sealed: 5, start: 10 }))),
        "{err:?}"
    );
    // a seal of exactly where it starts is checked against the link
    let wrong = Seal::new(first_kept.entries(), Hash::GENESIS);
    assert!(
        Verifier::new()
            .with_seal(wrong)
            .verify_files(&paths[1..])
            .is_err()
    );
    assert!(
        Verifier::new()
            .with_seal(first_kept)
            .verify_files(&paths[1..])
            .is_ok()
    );
}

#[test]
fn a_seal_of_the_whole_set_catches_entries_cut_from_the_last_file() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, seal) = rotated_set(dir.path(), "a", 3, 10, 0);
    let live = paths.last().unwrap();
    let text = fs::read_to_string(live).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    fs::write(live, lines[..lines.len() - 2].join("\n") + "\n").unwrap();
    let err = Verifier::new()
        .with_seal(seal)
        .verify_files(&paths)
        .unwrap_err();
    match &err {
        Error::InFile { path, source } => {
            assert_eq!(path, live);
            // the live file held 11 lines: the link and 10 entries
            assert!(
                matches!(**source, Error::Broken { line: 10, ref broken }
                    if matches!(broken.why(), Break::Truncated { entries: 30, sealed: 32 })),
                "{source:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_log_written_before_rotation_existed_verifies_alone_and_as_a_set_of_one() {
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vectors.jsonl");
    let alone = Verifier::new().summarize_file(&old).unwrap();
    let as_set = Verifier::new().summarize_files([&old]).unwrap();
    assert_eq!(alone, as_set);
    assert_eq!(alone.start(), Seal::new(0, Hash::GENESIS));
    assert_eq!(alone.seal().entries(), 9);
    assert_eq!(
        Verifier::new().verify_files(Vec::<PathBuf>::new()).unwrap(),
        Seal::new(0, Hash::GENESIS)
    );
}

#[test]
fn a_rotation_never_overwrites_an_old_file_and_leaves_the_writer_going() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let old = dir.path().join("a.jsonl.1");
    fs::write(&old, b"kept\n").unwrap();
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    let err = writer.rotate(&old).unwrap_err();
    assert!(err.to_string().contains("rotate"), "{err}");
    assert_eq!(fs::read(&old).unwrap(), b"kept\n");
    writer.append(&record(1)).unwrap();
    drop(writer);
    assert_eq!(Verifier::new().verify_file(&live).unwrap().entries(), 2);
}

#[test]
fn a_rotated_writer_keeps_its_file_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.rotate(dir.path().join("a.jsonl.1")).unwrap();
    assert!(matches!(
        JsonlWriter::open(&live, Fsync::EveryEntry),
        Err(Error::Locked { .. })
    ));
    drop(writer);
    assert!(JsonlWriter::open(&live, Fsync::EveryEntry).is_ok());
}

#[test]
fn open_continuing_links_an_empty_file_and_resumes_only_a_file_with_that_link() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a.jsonl.1");
    let next = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&first, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    writer.append(&record(1)).unwrap();
    let end = writer.seal();
    drop(writer);

    let mut writer = JsonlWriter::open_continuing(&next, end, Fsync::EveryEntry).unwrap();
    writer.append(&record(2)).unwrap();
    drop(writer);
    // again, as after a crash: the link is there, and the file goes on
    let mut writer = JsonlWriter::open_continuing(&next, end, Fsync::EveryEntry).unwrap();
    writer.append(&record(3)).unwrap();
    drop(writer);
    assert_eq!(
        Verifier::new()
            .verify_files([&first, &next])
            .unwrap()
            .entries(),
        5
    );
    // from another end: refused, the file left as it was
    let before = fs::read(&next).unwrap();
    let err = JsonlWriter::open_continuing(&next, Seal::new(2, Hash::GENESIS), Fsync::EveryEntry)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Broken { line: 1, broken } if matches!(broken.why(), Break::Link { .. })),
        "{err:?}"
    );
    let err = JsonlWriter::open_continuing(&next, Seal::new(1, end.head()), Fsync::EveryEntry)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Broken { line: 1, broken } if matches!(broken.why(), Break::Sequence { expected: 1, found: 2 })),
        "{err:?}"
    );
    assert_eq!(fs::read(&next).unwrap(), before);
}

#[test]
fn a_continues_entry_that_does_not_link_to_the_entry_before_it_breaks_the_chain() {
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    writer.append(&record(0)).unwrap();
    writer
        .append(&Record::new(
            1,
            Event::Continues {
                prev: Hash::GENESIS,
            },
        ))
        .unwrap();
    let bytes = writer.into_inner().unwrap();
    let err = Verifier::new().verify_reader(bytes.as_slice()).unwrap_err();
    assert!(
        matches!(&err, Error::Broken { line: 2, broken } if matches!(broken.why(), Break::Link { .. })),
        "{err:?}"
    );
}

#[test]
fn a_trail_rotates_between_records_and_the_set_verifies_against_its_last_seal() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let trail = AuditTrail::spawn(JsonlWriter::open(&live, Fsync::Never).unwrap()).unwrap();
    let mut paths = Vec::new();
    let mut seals = Vec::new();
    for file in 1..=3 {
        let old = dir.path().join(format!("a.jsonl.{file}"));
        seals.push(trail.rotate(&old).unwrap());
        paths.push(old);
    }
    // rotating onto a file that exists fails, and the trail goes on
    assert!(trail.rotate(&paths[0]).is_err());
    let seal = trail.sync().unwrap();
    drop(trail.finish().unwrap());
    paths.push(live);
    assert_eq!(
        Verifier::new()
            .with_seal(seal)
            .verify_files(&paths)
            .unwrap(),
        seal
    );
    for (path, sealed) in paths.iter().zip(&seals) {
        assert_eq!(Verifier::new().verify_file(path).unwrap(), *sealed);
    }
}

/// What logrotate does without `copytruncate`: renames the log to `to`
/// and, with `create`, leaves an empty file at its path.
fn logrotate_create(path: &Path, to: &Path) {
    fs::rename(path, to).unwrap();
    fs::File::create(path).unwrap();
}

#[test]
fn a_writer_reopened_after_logrotate_renamed_its_file_links_the_new_file_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let old = dir.path().join("a.jsonl.1");
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    for i in 0..5 {
        writer.append(&record(i)).unwrap();
    }
    logrotate_create(&live, &old);
    // until told, the writer goes on in the renamed file
    writer.append(&record(5)).unwrap();
    let seal = writer.reopen().unwrap();
    assert_eq!(seal.entries(), 6);
    writer.append(&record(6)).unwrap();
    writer.sync().unwrap();
    let end = writer.seal();
    drop(writer);
    assert_eq!(Verifier::new().verify_file(&old).unwrap(), seal);
    assert_eq!(Verifier::new().summarize_file(&live).unwrap().start(), seal);
    assert_eq!(
        Verifier::new()
            .with_seal(end)
            .verify_files([&old, &live])
            .unwrap(),
        end
    );
}

#[test]
fn a_reopen_with_nothing_renamed_or_another_log_at_the_path_is_refused_and_the_writer_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    #[cfg(unix)]
    {
        let err = writer.reopen().unwrap_err();
        assert!(err.to_string().contains("reopen"), "{err}");
        assert!(
            core::error::Error::source(&err)
                .is_some_and(|cause| cause.to_string().contains("nothing renamed it")),
            "{err:?}"
        );
        writer.append(&record(1)).unwrap();
    }
    // renamed, but something else already wrote at the path
    fs::rename(&live, dir.path().join("a.jsonl.1")).unwrap();
    fs::write(&live, b"not ours\n").unwrap();
    assert!(writer.reopen().is_err());
    assert_eq!(fs::read(&live).unwrap(), b"not ours\n");
    writer.append(&record(2)).unwrap();
}

#[test]
fn a_trail_reopened_after_logrotate_writes_later_records_to_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let old = dir.path().join("a.jsonl.1");
    let trail = AuditTrail::spawn(JsonlWriter::open(&live, Fsync::Never).unwrap()).unwrap();
    let first = trail.sync().unwrap();
    logrotate_create(&live, &old);
    let seal = trail.reopen().unwrap();
    assert_eq!(seal, first);
    let end = trail.sync().unwrap();
    drop(trail.finish().unwrap());
    assert_eq!(end.entries(), seal.entries() + 1);
    assert_eq!(
        Verifier::new()
            .with_seal(end)
            .verify_files([&old, &live])
            .unwrap(),
        end
    );
}
