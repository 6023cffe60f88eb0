//! What a file given to the wrong command is: a store snapshot handed to
//! `audit verify`, an audit log handed to `inspect`. Their parse errors alone
//! ("a line without a newline", "trailing characters at line 2") would not
//! make the mistake plain, so each command, when its input fails, asks these
//! and names the command that reads it.

/// `bytes` without a UTF-8 byte-order mark, which an editor may have added.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Whether `head`, the first bytes of an input, open a store snapshot: a JSON
/// object whose first key is `version`, with `taken_at_ms` or `entries`
/// among the keys read so far (an audit entry's first key is `v`).
pub(crate) fn is_snapshot(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(without_bom(head));
    let Some(object) = text.trim_start().strip_prefix('{') else {
        return false;
    };
    object.trim_start().starts_with("\"version\"")
        && (object.contains("\"taken_at_ms\"") || object.contains("\"entries\""))
}

/// Whether `bytes` open with a line that is an audit log's entry (an object
/// with the entry's `v`, `seq`, `event` and `hash`).
pub(crate) fn is_audit_log(bytes: &[u8]) -> bool {
    let first = without_bom(bytes)
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default();
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(first).is_ok_and(|entry| {
        ["v", "seq", "event", "hash"]
            .iter()
            .all(|key| entry.contains_key(*key))
    })
}
