//! How a (context, writer) entry is written in Redis: a hash field naming the
//! context and a value holding the writer's version of it.
//!
//! The field is `{attempt}:{class length}:{class}{endpoint}`: the endpoint
//! comes last and unescaped, so any endpoint name (colons, tabs, non-ASCII)
//! reads back as it was, and the class is length-prefixed for the same
//! reason. The value is `{seq} {updated_at_ms} {successes} {failures}`, the
//! floats in Rust's shortest round-trip form, which Lua's `tonumber` reads for
//! the scripts' comparisons.

use bayesretry_store::{Evidence, SnapshotEntry, WriterId};

/// The hash field of an entry's context.
pub(crate) fn field(entry: &SnapshotEntry) -> String {
    let class = entry.class();
    format!(
        "{}:{}:{}{}",
        entry.attempt(),
        class.len(),
        class,
        entry.endpoint()
    )
}

/// The value of an entry: its version and counts.
pub(crate) fn value(entry: &SnapshotEntry) -> [String; 4] {
    let evidence = entry.evidence();
    [
        entry.seq().to_string(),
        entry.updated_at_ms().to_string(),
        evidence.successes().to_string(),
        evidence.failures().to_string(),
    ]
}

/// The writer as it appears in keys: 16 lowercase hex digits.
pub(crate) fn writer(writer: WriterId) -> String {
    writer.to_string()
}

/// A part of a script's reply as text. Bytes that are not UTF-8 (written by
/// hand, or by a tool sharing the namespace: never by a fleet) read as the
/// replacement character, which no number, name or epoch a fleet writes
/// holds: a number then fails to parse as any malformed one does, and an
/// epoch reads as one more epoch.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An entry read back from a log member (`{writer}\t{field}`) and its value,
/// as the bytes Redis holds; `None` for anything this crate does not write (a
/// key edited by hand, bytes that are not UTF-8, a value from another
/// version), which is skipped rather than trusted.
pub(crate) fn decode(member: &[u8], value: &[u8]) -> Option<SnapshotEntry> {
    let (member, value) = (
        core::str::from_utf8(member).ok()?,
        core::str::from_utf8(value).ok()?,
    );
    let (writer, field) = member.split_once('\t')?;
    let writer = WriterId::new(u64::from_str_radix(writer, 16).ok()?);
    let (attempt, rest) = field.split_once(':')?;
    let (class_len, rest) = rest.split_once(':')?;
    let class_len: usize = class_len.parse().ok()?;
    let class = rest.get(..class_len)?;
    let endpoint = rest.get(class_len..)?;
    let mut parts = value.split(' ');
    let seq: u64 = parts.next()?.parse().ok()?;
    let updated_at_ms: u64 = parts.next()?.parse().ok()?;
    let successes: f64 = parts.next()?.parse().ok()?;
    let failures: f64 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    let evidence = Evidence::new(successes, failures).ok()?;
    SnapshotEntry::new(
        endpoint,
        attempt.parse().ok()?,
        class,
        writer,
        seq,
        evidence,
        updated_at_ms,
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use bayesretry_store::{Evidence, SnapshotEntry, WriterId};

    use super::{decode, field, value, writer};

    #[test]
    fn entries_read_back_as_written_whatever_the_endpoint() {
        for endpoint in ["api.example.com", "a:b\t12:3", "", "ünïcode/ø"] {
            for class in ["http-429", "custom:a:b", "timeout"] {
                let evidence = Evidence::new(2.5, 0.1).unwrap();
                let entry =
                    SnapshotEntry::new(endpoint, 3, class, WriterId::new(0xabc), 7, evidence, 99)
                        .unwrap();
                let member = format!("{}\t{}", writer(entry.writer()), field(&entry));
                let value = value(&entry).join(" ");
                assert_eq!(decode(member.as_bytes(), value.as_bytes()), Some(entry));
            }
        }
    }

    #[test]
    fn anything_else_is_skipped() {
        let member = "00000000000000ab\t1:7:timeoutdb";
        assert!(decode(member.as_bytes(), b"1 2 3 4").is_some());
        for (member, value) in [
            ("zz\t1:7:timeoutdb", "1 2 3 4"),
            ("00000000000000ab\t1:99:timeoutdb", "1 2 3 4"),
            ("00000000000000ab\t1:5:weirddb", "1 2 3 4"),
            (member, "0 2 3 4"),
            (member, "1 2 -3 4"),
            (member, "1 2 3 4 5"),
            (member, "1 2 NaN 4"),
            ("no tab", "1 2 3 4"),
        ] {
            assert_eq!(
                decode(member.as_bytes(), value.as_bytes()),
                None,
                "{member} {value}"
            );
        }
        // the same entry with a byte that is not UTF-8 in either part
        assert_eq!(
            decode(b"00000000000000ab\t1:7:timeoutd\xff", b"1 2 3 4"),
            None
        );
        assert_eq!(decode(member.as_bytes(), b"1 2 3 \x804"), None);
    }
}
