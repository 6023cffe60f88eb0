//! The canonical form, the hashes and the file format agree byte for byte with
//! `tests/data/vectors.json` and `vectors.jsonl`, which `tests/data/gen_vectors.py`
//! produced from `docs/SPEC.md` with Python's hashlib, independently of this crate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

use bayesretry_audit::{AuditLog, Event, Fsync, Hash, JsonlWriter, Record, Seal, Verifier};
use serde_json::Value;

const VECTORS: &str = include_str!("data/vectors.json");
const LOG: &[u8] = include_bytes!("data/vectors.jsonl");

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string"))
}

fn number(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a u64"))
}

fn bits(value: &Value, key: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(text(value, key), 16).unwrap())
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The record the inputs of a vector describe.
fn record(input: &Value) -> Record {
    let event = match text(input, "event") {
        "decision" => {
            let probability = bits(input, "p_bits");
            let expected_value = bits(input, "ev_bits");
            // the readable decimal is the same number, where it is one
            for (value, repr) in [(probability, "p_repr"), (expected_value, "ev_repr")] {
                if value.is_finite() {
                    assert_eq!(
                        text(input, repr).parse::<f64>().unwrap().to_bits(),
                        value.to_bits()
                    );
                }
            }
            Event::Decision {
                endpoint: text(input, "endpoint").to_owned(),
                attempt: u32::try_from(number(input, "attempt")).unwrap(),
                error_class: text(input, "class").to_owned(),
                retry: input["retry"].as_bool().unwrap(),
                probability,
                expected_value,
                reason: text(input, "reason").to_owned(),
            }
        }
        "outcome" => Event::Outcome {
            endpoint: text(input, "endpoint").to_owned(),
            attempt: u32::try_from(number(input, "attempt")).unwrap(),
            error_class: text(input, "class").to_owned(),
            success: input["success"].as_bool().unwrap(),
        },
        "dropped" => Event::Dropped {
            count: number(input, "count"),
        },
        other => panic!("unknown event {other}"),
    };
    Record::new(number(input, "time_ms"), event)
}

/// One entry of the vectors: seq, record, canonical bytes, previous hash, hash.
type Case = (u64, Record, Vec<u8>, Hash, Hash);

fn vectors() -> (Vec<Case>, Seal) {
    let doc: Value = serde_json::from_str(VECTORS).unwrap();
    assert_eq!(
        text(&doc, "genesis").parse::<Hash>().unwrap(),
        Hash::GENESIS
    );
    let entries = doc["entries"].as_array().unwrap();
    assert!(entries.len() >= 9, "the vectors cover every kind of field");
    let cases = entries
        .iter()
        .map(|case| {
            let canonical = unhex(text(case, "canonical_utf8_hex"));
            assert_eq!(canonical, text(case, "canonical").as_bytes());
            (
                number(case, "seq"),
                record(&case["input"]),
                canonical,
                text(case, "prev").parse().unwrap(),
                text(case, "hash").parse().unwrap(),
            )
        })
        .collect();
    (cases, text(&doc, "seal").parse().unwrap())
}

#[test]
fn each_record_has_the_canonical_bytes_and_hash_of_its_vector() {
    let (cases, _) = vectors();
    for (seq, record, canonical, prev, hash) in cases {
        assert_eq!(
            String::from_utf8_lossy(&record.canonical(seq)),
            String::from_utf8_lossy(&canonical),
            "entry {seq}"
        );
        assert_eq!(Hash::chain(&prev, &canonical), hash, "entry {seq}");
    }
}

#[test]
fn the_chain_of_the_vectors_has_the_vectors_seal() {
    let (cases, seal) = vectors();
    let mut log = AuditLog::new();
    for (_, record, _, _, hash) in cases {
        assert_eq!(log.append(record), hash);
    }
    assert_eq!(log.seal(), seal);
    assert_eq!(log.verify_against(&seal), Ok(()));
}

#[test]
fn the_writer_produces_the_vector_file_byte_for_byte() {
    let (cases, seal) = vectors();
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    for (_, record, _, _, _) in &cases {
        writer.append(record).unwrap();
    }
    writer.flush().unwrap();
    assert_eq!(writer.seal(), seal);
    assert_eq!(
        String::from_utf8(writer.into_inner().unwrap()).unwrap(),
        String::from_utf8(LOG.to_vec()).unwrap()
    );
}

#[test]
fn the_vector_file_verifies_against_its_seal() {
    let (_, seal) = vectors();
    assert_eq!(
        Verifier::new().with_seal(seal).verify_reader(LOG).unwrap(),
        seal
    );
}
