//! Migrations of older snapshot formats up to [`Snapshot::VERSION`].
//!
//! Each step turns a document of one version into the next, as a JSON value.
//! When the store's format moves to version `n + 1`, the step from `n` is added
//! to [`STEPS`] and every older file keeps loading: a file of version `v` goes
//! through steps `v, v + 1, ..., n` in turn, then through the store's own
//! checks, so a migrated file is held to the same rules as a current one.

use bayesretry_store::{Snapshot, WriterId};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// A migration from one format version to the next; the second argument is
/// the file's text (after any byte order mark), which a step may need to
/// name what the file held.
type Step = fn(Map<String, Value>, &[u8]) -> Result<Map<String, Value>, String>;

/// `STEPS[v]` turns version `v` into version `v + 1`; there is one step per
/// version below [`Snapshot::VERSION`].
const STEPS: [Step; Snapshot::VERSION as usize] = [v0_to_v1];

/// `document`, of version `from`, read from the bytes `text`, brought up to
/// [`Snapshot::VERSION`].
///
/// `from` must be below the current version; the loop runs at most once per
/// version.
pub(crate) fn migrate(from: u32, document: Value, text: &[u8]) -> Result<Value, String> {
    let Value::Object(mut object) = document else {
        return Err(String::from("expected a JSON object"));
    };
    let first = usize::try_from(from).unwrap_or(usize::MAX);
    for (version, step) in STEPS.iter().enumerate().skip(first) {
        object = step(object, text).map_err(|why| format!("version {version}: {why}"))?;
    }
    object.insert(String::from("version"), Value::from(Snapshot::VERSION));
    Ok(Value::Object(object))
}

/// Version 0, the single-writer layout, to version 1.
///
/// Version 0 held one process's evidence and no writer identity:
/// `{"version":0,"saved_at_ms":T,"contexts":[{"endpoint","attempt","class",
/// "successes","failures","updated_at_ms"}]}`. Version 1 keeps every writer's
/// contribution apart, with a sequence number per (context, writer). Each
/// context becomes one entry of the writer [`v0_writer`] names after the
/// file's content (the version 0 file had one writer and did not name it)
/// with sequence number 1, and `saved_at_ms` becomes `taken_at_ms`. Evidence
/// is carried over unchanged.
///
/// The writer is named after the content so that merging is additive, as it
/// is for live stores: two version 0 files of different processes become
/// two writers, and a merge of them sums their evidence, where one writer
/// shared by every migrated file kept one file's entry per context and
/// dropped the other's. The same file migrated twice (by two processes that
/// each loaded it) gives the same writer, and its evidence counts once.
fn v0_to_v1(mut v0: Map<String, Value>, text: &[u8]) -> Result<Map<String, Value>, String> {
    let saved_at = v0
        .remove("saved_at_ms")
        .ok_or_else(|| String::from("missing field `saved_at_ms`"))?;
    let contexts = match v0.remove("contexts") {
        Some(Value::Array(contexts)) => contexts,
        Some(other) => return Err(format!("`contexts` must be an array, got {other}")),
        None => return Err(String::from("missing field `contexts`")),
    };
    let mut entries = Vec::with_capacity(contexts.len());
    for (index, context) in contexts.into_iter().enumerate() {
        let Value::Object(mut entry) = context else {
            return Err(format!("context {index} must be an object"));
        };
        entry.insert(String::from("writer"), Value::from(v0_writer(text).get()));
        entry.insert(String::from("seq"), Value::from(1_u64));
        entries.push(Value::Object(entry));
    }
    let mut v1 = Map::new();
    v1.insert(String::from("version"), Value::from(1_u32));
    v1.insert(String::from("taken_at_ms"), saved_at);
    v1.insert(String::from("entries"), Value::Array(entries));
    Ok(v1)
}

/// The writer the evidence of a version 0 file with the bytes `text` is
/// given: the first eight bytes of SHA-256 over `text`, big-endian; the one
/// value that is [`WriterId::MIGRATED`] (which files migrated by earlier
/// releases use) becomes the number below it.
///
/// SHA-256 rather than a faster hash because the number is part of the
/// format (`docs/SPEC.md`, section 10.5): another implementation migrating
/// the same file must give it the same writer, with nothing but a standard
/// hash. Like a drawn writer id, it could equal a live store's id by chance
/// (one in 2⁶⁴ for a drawn id); a store never writes under it otherwise.
pub(crate) fn v0_writer(text: &[u8]) -> WriterId {
    let digest = Sha256::digest(text);
    let mut first = [0_u8; 8];
    for (to, from) in first.iter_mut().zip(digest.iter()) {
        *to = *from;
    }
    match u64::from_be_bytes(first) {
        u64::MAX => WriterId::new(u64::MAX - 1),
        id => WriterId::new(id),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{migrate, v0_writer};

    #[test]
    fn the_writer_of_a_version_0_file_is_the_start_of_its_sha_256() {
        // SHA-256("abc") = ba7816bf8f01cfea...
        assert_eq!(v0_writer(b"abc").get(), 0xba78_16bf_8f01_cfea);
        assert_ne!(v0_writer(b"abc"), v0_writer(b"abd"));
    }

    #[test]
    fn version_0_contexts_become_entries_of_the_writer_named_after_the_file() {
        let v0 = json!({
            "version": 0,
            "saved_at_ms": 500,
            "contexts": [{"endpoint": "a", "attempt": 1, "class": "timeout",
                          "successes": 2.0, "failures": 1.0, "updated_at_ms": 400}]
        });
        let v1 = migrate(0, v0, b"the file");
        let writer = v0_writer(b"the file").get();
        let expected = json!({
            "version": 1,
            "taken_at_ms": 500,
            "entries": [{"endpoint": "a", "attempt": 1, "class": "timeout", "writer": writer,
                         "seq": 1, "successes": 2.0, "failures": 1.0, "updated_at_ms": 400}]
        });
        assert_eq!(v1, Ok(expected));
    }

    #[test]
    fn a_version_0_document_of_the_wrong_shape_is_rejected_with_the_reason() {
        let cases: [(Value, &str); 4] = [
            (json!([]), "expected a JSON object"),
            (json!({"version": 0, "contexts": []}), "saved_at_ms"),
            (
                json!({"version": 0, "saved_at_ms": 1, "contexts": 3}),
                "`contexts` must be an array",
            ),
            (
                json!({"version": 0, "saved_at_ms": 1, "contexts": [7]}),
                "context 0 must be an object",
            ),
        ];
        for (document, needle) in cases {
            let why = migrate(0, document.clone(), b"").err().unwrap_or_default();
            assert!(why.contains(needle), "{document}: {why}");
        }
    }
}
