//! Tampering with a log file byte by byte, and by whole lines that look right:
//!
//! - every bit flipped in every byte of every line (the newline included) —
//!   whatever the byte was, a digit, a key, a hex digit of a hash, a quote, a
//!   multi-byte character — makes the verifier fail, naming that very line;
//! - a line appended with a hash recomputed over its content but chained to
//!   the wrong previous hash is a hash break at that line;
//! - two logs spliced, the head of one and the tail of another at the same
//!   entry count, are a hash break at the first line of the tail, though every
//!   line on its own is a well-formed entry with the right sequence number.
//!
//! The entry-level edits, deletions, insertions, swaps and truncations are in
//! `every_single_entry_tampering_of_a_1000_entry_log_is_detected`; these are
//! the byte-level and cross-log ones.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use bayesretry_audit::{Break, Error, Event, Fsync, Hash, JsonlWriter, Record, Seal, Verifier};
use common::record;

/// The records of the test log: every kind of entry, and a string with a
/// quote, a newline escape and a character of several bytes.
fn records() -> Vec<Record> {
    let mut records: Vec<Record> = (0..8).map(record).collect();
    records.push(record(96)); // a `dropped` entry
    records.push(Record::new(
        1_764_460_900_000,
        Event::Outcome {
            endpoint: "api.exämple.com/v1/\u{1F600}".to_owned(),
            attempt: 3,
            error_class: "quota \"x\"\n".to_owned(),
            success: false,
        },
    ));
    records
}

/// The log file of `records`, as lines with their newlines.
fn lines_of(records: &[Record]) -> Vec<Vec<u8>> {
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    for record in records {
        writer.append(record).unwrap();
    }
    let bytes = writer.into_inner().unwrap();
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// The line an error names, if it names one.
fn line_named(error: &Error) -> Option<u64> {
    match error {
        Error::Broken { line, .. }
        | Error::Malformed { line, .. }
        | Error::NotCanonical { line, .. }
        | Error::IncompleteLine { line }
        | Error::LineTooLong { line, .. }
        | Error::UnsupportedVersion { line, .. } => Some(*line),
        _ => None,
    }
}

#[test]
fn every_bit_flipped_anywhere_in_a_line_is_named_at_that_line() {
    let lines = lines_of(&records());
    let bytes = lines.concat();
    let seal = Verifier::new().verify_reader(bytes.as_slice()).unwrap();
    let mut start = 0;
    let mut flips = 0;
    for (index, line) in lines.iter().enumerate() {
        let number = index as u64 + 1;
        for at in start..start + line.len() {
            for bit in 0..8 {
                let mut tampered = bytes.clone();
                tampered[at] ^= 1 << bit;
                // against the seal, and without it: the chain alone catches it
                for verifier in [Verifier::new(), Verifier::new().with_seal(seal)] {
                    match verifier.verify_reader(tampered.as_slice()) {
                        Err(error) => assert_eq!(
                            line_named(&error),
                            Some(number),
                            "bit {bit} of byte {} of line {number} ({:?}) flipped: {error}",
                            at - start,
                            char::from(bytes[at]),
                        ),
                        Ok(seal) => panic!(
                            "bit {bit} of byte {} of line {number} flipped and the log \
                             verifies, as {seal}",
                            at - start
                        ),
                    }
                }
                flips += 1;
            }
        }
        start += line.len();
    }
    assert_eq!(flips, bytes.len() * 8);
}

#[test]
fn a_line_appended_with_its_hash_recomputed_over_the_wrong_previous_hash_is_a_hash_break() {
    let records = records();
    let lines = lines_of(&records);
    let n = lines.len();
    // the forger appends entry n, hashed as if the entry before were another
    let wrong_prev = Hash::chain(&Hash::GENESIS, b"not the last entry");
    let mut forger = JsonlWriter::resume(Vec::new(), Seal::new(n as u64, wrong_prev), Fsync::Never);
    forger.append(&record(1000)).unwrap();
    let forged = forger.into_inner().unwrap();
    assert!(
        forged.starts_with(format!("{{\"v\":1,\"seq\":{n},").as_bytes()),
        "{}",
        String::from_utf8_lossy(&forged)
    );
    let mut bytes = lines.concat();
    bytes.extend_from_slice(&forged);
    match Verifier::new().verify_reader(bytes.as_slice()) {
        Err(Error::Broken { line, broken }) => {
            assert_eq!(line, n as u64 + 1);
            assert!(matches!(broken.why(), Break::Hash { .. }), "{broken}");
        }
        other => panic!("a forged line verified: {other:?}"),
    }
}

#[test]
fn two_logs_spliced_at_the_same_entry_count_break_at_the_first_line_of_the_second() {
    let ours = records();
    // another log of as many entries, from other records
    let theirs: Vec<Record> = (0..ours.len() as u64).map(|i| record(i + 500)).collect();
    let (ours, theirs) = (lines_of(&ours), lines_of(&theirs));
    for at in 1..ours.len() {
        let spliced = [&ours[..at], &theirs[at..]].concat().concat();
        match Verifier::new().verify_reader(spliced.as_slice()) {
            Err(Error::Broken { line, broken }) => {
                assert_eq!(line, at as u64 + 1, "spliced at {at}");
                assert!(matches!(broken.why(), Break::Hash { .. }), "{broken}");
            }
            other => panic!("two logs spliced at {at} verified: {other:?}"),
        }
    }
}
