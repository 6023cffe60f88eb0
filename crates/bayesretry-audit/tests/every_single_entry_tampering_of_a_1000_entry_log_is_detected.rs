//! For a 1000-entry log, every single-entry edit, deletion, insertion, adjacent
//! swap and truncation is detected, at every position: in memory by
//! `AuditLog::verify` / `verify_against`, and in a JSON Lines file by the
//! streaming `Verifier`. Deletions at the end and truncations need the seal;
//! everything else is caught by the chain alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use core::ops::Range;

use bayesretry_audit::{
    AuditLog, Break, Broken, Entry, Error, Event, Hash, Record, Seal, Verifier,
};
use common::{file_lines, join, memory_log};

const N: u64 = 1000;

/// Verifies file bytes against `seal`.
fn verify_file(bytes: &[u8], seal: Seal) -> Result<Seal, Error> {
    Verifier::new().with_seal(seal).verify_reader(bytes)
}

/// The break a file verification reports, with its line and entry checked to agree.
fn file_break(bytes: &[u8], seal: Seal) -> (u64, Break) {
    match verify_file(bytes, seal) {
        Err(Error::Broken { line, broken }) => {
            assert_eq!(line, broken.index() + 1, "line and entry disagree");
            (broken.index(), broken.why().clone())
        }
        other => panic!("expected a broken chain, got {other:?}"),
    }
}

/// `record` with one field changed; which one depends on `i`, so that every
/// field is edited somewhere in the log.
fn edited(record: &Record, i: u64) -> Record {
    let time_ms = record.time_ms();
    let event = match (record.event().clone(), i % 5) {
        (_, 0) => return Record::new(time_ms + 1, record.event().clone()),
        (
            Event::Decision {
                endpoint,
                attempt,
                error_class,
                retry,
                probability,
                expected_value,
                reason,
            },
            k,
        ) => {
            let mut e = (
                endpoint,
                attempt,
                error_class,
                retry,
                probability,
                expected_value,
                reason,
            );
            match k {
                1 => e.0.push('x'),
                2 => e.4 = f64::from_bits(e.4.to_bits() ^ 1),
                3 => e.3 = !e.3,
                _ => e.6 = "max_attempts".to_owned(),
            }
            Event::Decision {
                endpoint: e.0,
                attempt: e.1,
                error_class: e.2,
                retry: e.3,
                probability: e.4,
                expected_value: e.5,
                reason: e.6,
            }
        }
        (
            Event::Outcome {
                endpoint,
                attempt,
                error_class,
                success,
            },
            _,
        ) => Event::Outcome {
            endpoint,
            attempt: attempt + 1,
            error_class,
            success: !success,
        },
        (Event::Dropped { count }, _) => Event::Dropped { count: count + 1 },
        (other, _) => panic!("no edit for {other:?}"),
    };
    Record::new(time_ms, event)
}

fn hash_break_at(result: Result<(), Broken>, index: u64) {
    let broken = result.expect_err("the edit went unnoticed");
    assert_eq!(broken.index(), index);
    assert!(matches!(broken.why(), Break::Hash { .. }), "{broken}");
}

#[test]
fn every_edit_in_memory_breaks_the_hash_of_that_entry() {
    let mut entries = memory_log(N).into_entries();
    for i in 0..N as usize {
        let original = entries[i].clone();
        let (seq, record, hash) = original.clone().into_parts();
        assert_ne!(edited(&record, i as u64), record);
        entries[i] = Entry::new(seq, edited(&record, i as u64), hash);
        let log = AuditLog::from_entries(entries);
        hash_break_at(log.verify(), i as u64);
        entries = log.into_entries();
        entries[i] = original;
    }
}

#[test]
fn an_edit_with_its_own_hash_recomputed_breaks_the_next_entry_or_the_seal() {
    let log = memory_log(N);
    let seal = log.seal();
    let mut entries = log.into_entries();
    for i in 0..N {
        let original = entries[i as usize].clone();
        let prev = if i == 0 {
            Hash::GENESIS
        } else {
            entries[i as usize - 1].hash()
        };
        let record = edited(original.record(), i);
        let hash = Hash::chain(&prev, &record.canonical(i));
        entries[i as usize] = Entry::new(i, record, hash);
        let log = AuditLog::from_entries(entries);
        if i + 1 < N {
            hash_break_at(log.verify(), i + 1);
        } else {
            // the last entry, rehashed: consistent, and only the seal tells
            assert_eq!(log.verify(), Ok(()));
            let broken = log
                .verify_against(&seal)
                .expect_err("the seal missed a rewrite");
            assert_eq!(broken.index(), i);
            assert!(matches!(broken.why(), Break::Seal { .. }));
        }
        entries = log.into_entries();
        entries[i as usize] = original;
    }
}

#[test]
fn a_tail_rewritten_and_rehashed_from_any_entry_on_is_caught_by_the_seal() {
    let log = memory_log(N);
    let seal = log.seal();
    let entries = log.into_entries();
    for i in (0..N).step_by(7).chain([N - 1]) {
        let mut rewritten = AuditLog::from_entries(entries[..i as usize].to_vec());
        rewritten.append(edited(entries[i as usize].record(), i));
        for entry in &entries[i as usize + 1..] {
            rewritten.append(entry.record().clone());
        }
        assert_eq!(rewritten.verify(), Ok(()));
        let broken = rewritten
            .verify_against(&seal)
            .expect_err("rewrite unnoticed");
        assert_eq!(broken.index(), N - 1);
        assert!(matches!(broken.why(), Break::Seal { .. }));
    }
}

#[test]
fn every_deletion_insertion_and_swap_in_memory_is_detected() {
    let log = memory_log(N);
    let seal = log.seal();
    // tampered in place and put back after each check, so that no position
    // costs a copy of the log
    let mut entries = log.into_entries();
    for i in 0..N as usize {
        // deletion
        let removed = entries.remove(i);
        let log = AuditLog::from_entries(entries);
        let broken = log.verify_against(&seal).expect_err("deletion unnoticed");
        assert_eq!(broken.index(), i as u64);
        if i + 1 < N as usize {
            assert!(matches!(broken.why(), Break::Sequence { .. }), "{broken}");
            assert_eq!(log.verify(), Err(broken));
        } else {
            assert!(matches!(
                broken.why(),
                Break::Truncated {
                    entries: 999,
                    sealed: 1000
                }
            ));
        }
        entries = log.into_entries();
        entries.insert(i, removed);

        // insertion of a copy of entry i after it
        entries.insert(i + 1, entries[i].clone());
        let log = AuditLog::from_entries(entries);
        let broken = log.verify().expect_err("insertion unnoticed");
        assert_eq!(broken.index(), i as u64 + 1);
        assert!(matches!(broken.why(), Break::Sequence { .. }));
        entries = log.into_entries();
        entries.remove(i + 1);

        // swap with the next
        if i + 1 < N as usize {
            entries.swap(i, i + 1);
            let log = AuditLog::from_entries(entries);
            let broken = log.verify().expect_err("swap unnoticed");
            assert_eq!(broken.index(), i as u64);
            assert_eq!(
                broken.why(),
                &Break::Sequence {
                    expected: i as u64,
                    found: i as u64 + 1
                }
            );
            entries = log.into_entries();
            entries.swap(i, i + 1);
        }
    }
    assert_eq!(
        AuditLog::from_entries(entries).verify_against(&seal),
        Ok(())
    );
}

#[test]
fn every_truncation_in_memory_is_caught_by_the_seal() {
    let log = memory_log(N);
    let seal = log.seal();
    let mut entries = log.into_entries();
    // cut one more entry from the end each turn: every length from 999 to 0
    for kept in (0..N).rev() {
        entries.pop();
        let log = AuditLog::from_entries(entries);
        assert_eq!(log.verify(), Ok(()), "a prefix is a valid chain");
        let broken = log.verify_against(&seal).expect_err("truncation unnoticed");
        assert_eq!(broken.index(), kept);
        assert_eq!(
            broken.why(),
            &Break::Truncated {
                entries: kept,
                sealed: N
            }
        );
        entries = log.into_entries();
    }
    assert!(entries.is_empty());
}

/// The file of `lines` with the lines in `replaced` replaced by `with`, into `out`.
fn file_with(lines: &[Vec<u8>], replaced: Range<usize>, with: &[&[u8]], out: &mut Vec<u8>) {
    out.clear();
    for line in &lines[..replaced.start] {
        out.extend_from_slice(line);
    }
    for line in with {
        out.extend_from_slice(line);
    }
    for line in &lines[replaced.end..] {
        out.extend_from_slice(line);
    }
}

/// Replaces the first `from` in `line` by `to`.
fn replace(line: &[u8], from: &str, to: &str) -> Vec<u8> {
    let text = core::str::from_utf8(line).unwrap();
    assert!(text.contains(from), "{from} not in {text}");
    text.replacen(from, to, 1).into_bytes()
}

/// A textual edit of one field of a line that keeps it canonical.
fn edit_line(line: &[u8], i: u64) -> Vec<u8> {
    let text = core::str::from_utf8(line).unwrap();
    let time = format!("\"time_ms\":{}", 1_764_460_800_000 + 250 * i);
    let later = format!("\"time_ms\":{}", 1_764_460_800_000 + 250 * i + 1);
    match i % 3 {
        0 => replace(line, &time, &later),
        1 if text.contains("\"endpoint\":\"svc-") => {
            replace(line, "\"endpoint\":\"svc-", "\"endpoint\":\"svd-")
        }
        _ if text.contains("\"retry\":true") => replace(line, "\"retry\":true", "\"retry\":false"),
        _ if text.contains("\"retry\":false") => replace(line, "\"retry\":false", "\"retry\":true"),
        _ if text.contains("\"success\":true") => {
            replace(line, "\"success\":true", "\"success\":false")
        }
        _ if text.contains("\"success\":false") => {
            replace(line, "\"success\":false", "\"success\":true")
        }
        _ => replace(line, &time, &later),
    }
}

#[test]
fn every_edit_of_a_file_line_is_reported_at_its_line() {
    let lines = file_lines(N);
    let seal = verify_file(&join(&lines), Seal::new(0, Hash::GENESIS)).unwrap();
    assert_eq!(seal.entries(), N);
    let mut bytes = Vec::new();
    for i in 0..N {
        let edit = edit_line(&lines[i as usize], i);
        assert_ne!(edit, lines[i as usize]);
        file_with(&lines, i as usize..i as usize + 1, &[&edit], &mut bytes);
        let (index, why) = file_break(&bytes, seal);
        assert_eq!(index, i);
        assert!(matches!(why, Break::Hash { .. }), "{why}");
    }
}

#[test]
fn every_deletion_insertion_swap_and_truncation_of_file_lines_is_detected() {
    let lines = file_lines(N);
    let seal = Verifier::new()
        .verify_reader(join(&lines).as_slice())
        .unwrap();
    let mut bytes = Vec::new();
    for i in 0..N as usize {
        file_with(&lines, i..i + 1, &[], &mut bytes);
        let (index, why) = file_break(&bytes, seal);
        assert_eq!(index, i as u64);
        if i + 1 < N as usize {
            assert!(matches!(why, Break::Sequence { .. }), "{why}");
        } else {
            assert!(matches!(why, Break::Truncated { .. }), "{why}");
        }

        file_with(&lines, i..i + 1, &[&lines[i], &lines[i]], &mut bytes);
        let (index, why) = file_break(&bytes, seal);
        assert_eq!(index, i as u64 + 1);
        assert!(matches!(why, Break::Sequence { .. }), "{why}");

        if i + 1 < N as usize {
            file_with(&lines, i..i + 2, &[&lines[i + 1], &lines[i]], &mut bytes);
            let (index, why) = file_break(&bytes, seal);
            assert_eq!(index, i as u64);
            assert!(matches!(why, Break::Sequence { .. }), "{why}");
        }

        let (index, why) = file_break(&join(&lines[..i]), seal);
        assert_eq!(index, i as u64);
        assert_eq!(
            why,
            Break::Truncated {
                entries: i as u64,
                sealed: N
            }
        );
    }
    assert_eq!(verify_file(&join(&lines), seal).unwrap(), seal);
}
