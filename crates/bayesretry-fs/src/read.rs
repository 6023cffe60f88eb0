//! Reading a snapshot file: every way it can be bad, told apart.

use core::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use bayesretry_store::Snapshot;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::error::Category;

use crate::error::Error;
use crate::identity::FileId;
use crate::migrate::migrate;
use crate::target::not_regular;

/// A snapshot read from a file.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The snapshot, in the current format.
    pub(crate) snapshot: Snapshot,
    /// The format version the file was written in, if older than the current.
    pub(crate) migrated_from: Option<u32>,
    /// The file that was read, to recognise it later without reading it again.
    pub(crate) id: FileId,
}

/// Reads and checks the snapshot at `path`, refusing a file of more than
/// `limit` bytes ([`Error::TooLarge`]) before reading it.
///
/// The length the file has when it is opened is checked first, so that a
/// huge file (a log, a disk image) is refused without a byte of it read.
/// The read itself stops one byte past `limit`, so a file that grows after
/// that check (a log still written to) is refused as well, with at most
/// `limit + 1` bytes in memory.
pub(crate) fn read_file(path: &Path, limit: u64) -> Result<Loaded, Error> {
    let (file, metadata) = open_regular(path)?;
    let too_large = |size: u64| Error::TooLarge {
        path: path.into(),
        size,
        limit,
    };
    if metadata.is_file() && metadata.len() > limit {
        return Err(too_large(metadata.len()));
    }
    let Some(bytes) =
        read_at_most(&file, metadata.len(), limit).map_err(|e| Error::io("read", path, e))?
    else {
        // grown since it was opened: its length now, or at least what was read
        let now = file.metadata().map_or(0, |m| m.len());
        return Err(too_large(now.max(limit.saturating_add(1))));
    };
    let (snapshot, migrated_from) = parse(path, &bytes)?;
    Ok(Loaded {
        snapshot,
        migrated_from,
        id: FileId::of(&metadata),
    })
}

/// All of `reader`, if it ends within `limit` bytes; `None` once it has gone
/// one byte past, so that at most `limit + 1` bytes are ever held. `hint` is
/// the length the reader is expected to have, reserved up front (up to
/// `limit`).
fn read_at_most(reader: impl Read, hint: u64, limit: u64) -> io::Result<Option<Vec<u8>>> {
    // The hint is only a hint, and a file's to claim: a failed reservation
    // is an error like any failed read.
    let capacity = usize::try_from(hint.min(limit)).unwrap_or(usize::MAX);
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(capacity)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    Ok((read <= limit).then_some(bytes))
}

/// Opens the file at `path` to read it, with its metadata, refusing a
/// device, a FIFO or a socket (see
/// [`check_regular`](crate::target::check_regular)).
///
/// The check is made on the file opened, not on the path before opening it:
/// a FIFO or a device put at the path between such a check and the open
/// would pass it, and the open then wait for a writer, or a device's endless
/// stream (`/dev/zero`) be read as a snapshot. So on Unix the open never
/// waits (`O_NONBLOCK`, which changes nothing for a regular file) and never
/// makes a terminal the process's controlling one (`O_NOCTTY`).
fn open_regular(path: &Path) -> Result<(File, Metadata), Error> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = options.open(path).map_err(|e| Error::io("read", path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io("read", path, e))?;
    if !(metadata.is_file() || metadata.is_dir()) {
        return Err(not_regular(path, "read"));
    }
    Ok((file, metadata))
}

/// The snapshot in `bytes`, checked and migrated as
/// [`FileStore::load`](crate::FileStore::load) checks and migrates the file
/// it reads; `name` names the bytes in errors (a path, or `<stdin>`).
///
/// For a snapshot that does not come from a file a [`FileStore`](crate::FileStore)
/// can open: standard input, a pipe, a download.
///
/// # Errors
///
/// [`Error::Empty`], [`Error::Truncated`], [`Error::NotJson`],
/// [`Error::Schema`] or [`Error::FutureVersion`], naming `name` and what is
/// wrong.
///
/// ```
/// use bayesretry_fs::{Error, parse_snapshot};
///
/// let snapshot = parse_snapshot("<stdin>", br#"{"version":1,"taken_at_ms":5,"entries":[]}"#)?;
/// assert_eq!(snapshot.taken_at_ms(), 5);
/// let cut = parse_snapshot("<stdin>", br#"{"version":1,"taken_at"#).unwrap_err();
/// assert!(matches!(cut, Error::Truncated { .. }));
/// assert!(cut.to_string().contains("<stdin>"), "{cut}");
/// # Ok::<(), Error>(())
/// ```
pub fn parse_snapshot(name: impl AsRef<Path>, bytes: &[u8]) -> Result<Snapshot, Error> {
    parse(name.as_ref(), bytes).map(|(snapshot, _)| snapshot)
}

/// The snapshot in `bytes`, read from `path` (named in errors), and the
/// version it was migrated from. A UTF-8 byte order mark at the start is
/// skipped.
///
/// A good file of the current version is read once, by the store's own
/// reader. Anything else — a bad file, an older or newer version — is then
/// read by a probe that checks the JSON syntax and reads only `version`
/// (skipping the rest without building it): the probe is what tells a
/// truncated file from a syntax error from a wrong shape, and a future or past
/// version from all of them, which the store's reader reports alike.
pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<(Snapshot, Option<u32>), Error> {
    // A UTF-8 byte order mark, which some editors put at the start of every
    // file they save: RFC 8259 lets a reader ignore it, so a file a person
    // edited reads as what it says rather than as not JSON at line 1, column 1.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::Empty { path: path.into() });
    }
    let text = core::str::from_utf8(bytes).map_err(|e| Error::NotJson {
        path: path.into(),
        line: 0,
        column: 0,
        why: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
    })?;
    // The store's reader would take a JSON array for the top-level struct;
    // the format is an object, so only an object takes the fast path.
    if text.trim_start().starts_with('{') {
        if let Ok(snapshot) = Snapshot::from_json(text) {
            return Ok((snapshot, None));
        }
    }
    if let Some(kind) = not_an_object(text) {
        // The whole text is checked first: one cut short or broken is that,
        // whatever it starts with.
        serde_json::from_str::<IgnoredAny>(text).map_err(|e| classify(path, text, &e))?;
        return Err(schema(
            path,
            &format!("the document is {kind}, where a snapshot is an object"),
        ));
    }
    let probe: Probe = serde_json::from_str(text).map_err(|e| classify(path, text, &e))?;
    let version = match probe.version {
        None => return Err(schema(path, "missing field `version`")),
        Some(Value::Number(n)) => n.as_u64(),
        Some(_) => None,
    };
    let Some(version) = version else {
        return Err(schema(path, "`version` must be a whole number"));
    };
    let current = u64::from(Snapshot::VERSION);
    if version > current {
        return Err(Error::FutureVersion {
            path: path.into(),
            found: version,
            supported: Snapshot::VERSION,
        });
    }
    if version == current {
        let snapshot = Snapshot::from_json(text).map_err(|e| schema(path, &e.to_string()))?;
        return Ok((snapshot, None));
    }
    // Below the current version, hence below `u32::MAX`.
    let from = u32::try_from(version).unwrap_or(0);
    let document: Value = serde_json::from_str(text).map_err(|e| classify(path, text, &e))?;
    let migrated = migrate(from, document, text.as_bytes())
        .map_err(|why| schema(path, &format!("cannot migrate from version {from}: {why}")))?;
    let snapshot = serde_json::from_value::<Snapshot>(migrated)
        .map_err(|e| schema(path, &format!("after migration from version {from}: {e}")))?;
    Ok((snapshot, Some(from)))
}

/// What the JSON value `text` starts is, if it is not an object: `"an
/// array"`, `"a string"`, `"a number"`, `"a boolean"` or `"null"`. `None` for
/// an object, and for text that starts no JSON value at all (which the parser
/// reports as not JSON).
fn not_an_object(text: &str) -> Option<&'static str> {
    let start = text.trim_start_matches([' ', '\t', '\n', '\r']);
    match start.as_bytes().first()? {
        b'[' => Some("an array"),
        b'"' => Some("a string"),
        b'-' | b'0'..=b'9' => Some("a number"),
        b't' | b'f' => Some("a boolean"),
        b'n' => Some("null"),
        _ => None,
    }
}

fn schema(path: &Path, why: &str) -> Error {
    Error::Schema {
        path: path.into(),
        why: why.trim_start_matches("invalid snapshot: ").into(),
    }
}

/// A parse error, by kind.
fn classify(path: &Path, text: &str, error: &serde_json::Error) -> Error {
    let path = path.into();
    match error.classify() {
        Category::Syntax if cut_in_a_number(text, error) => Error::Truncated {
            path,
            line: error.line(),
            column: error.column(),
        },
        Category::Eof => Error::Truncated {
            path,
            line: error.line(),
            column: error.column(),
        },
        Category::Syntax | Category::Io => Error::NotJson {
            path,
            line: error.line(),
            column: error.column(),
            why: error.to_string(),
        },
        Category::Data => Error::Schema {
            path,
            why: error.to_string(),
        },
    }
}

/// Whether `error` is at the very last byte of `text`, and that byte is one
/// that a number can go on after but cannot end with (`2.`, `1e`, `1e-`,
/// `-`): the document was cut in the middle of a number, which the parser
/// reports as an invalid number rather than an early end.
fn cut_in_a_number(text: &str, error: &serde_json::Error) -> bool {
    let Some(&last) = text.as_bytes().last() else {
        return false;
    };
    let line = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = text
        .rfind('\n')
        .map_or(text.len(), |at| text.len() - at - 1);
    matches!(last, b'.' | b'e' | b'E' | b'+' | b'-')
        && (error.line(), error.column()) == (line, column)
}

/// The `version` of a snapshot document, every other field skipped unbuilt.
/// Only a JSON object is accepted (serde would take an array for a struct).
struct Probe {
    version: Option<Value>,
}

impl<'de> Deserialize<'de> for Probe {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Probe, D::Error> {
        deserializer.deserialize_map(ProbeVisitor)
    }
}

struct ProbeVisitor;

impl<'de> Visitor<'de> for ProbeVisitor {
    type Value = Probe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a snapshot object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe, A::Error> {
        let mut version = None;
        // Each key is consumed with its value, so the loop ends with the
        // object; the count of keys is bounded by the document's length.
        while let Some(key) = map.next_key::<KeyName>()? {
            match key {
                KeyName::Version => {
                    if version.is_some() {
                        return Err(de::Error::duplicate_field("version"));
                    }
                    version = Some(map.next_value::<Value>()?);
                }
                KeyName::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Probe { version })
    }
}

/// A key of the top-level object: `version`, or another one.
enum KeyName {
    Version,
    Other,
}

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KeyName, D::Error> {
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = KeyName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<KeyName, E> {
        Ok(if key == "version" {
            KeyName::Version
        } else {
            KeyName::Other
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use core::time::Duration;
    use std::fs::OpenOptions;
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::thread;

    use super::*;

    /// Whether `opened` is the refusal of a file that is no regular one.
    fn refused(opened: &Result<(File, Metadata), Error>) -> bool {
        matches!(
            opened,
            Err(Error::Io { source, .. })
                if source.kind() == io::ErrorKind::InvalidInput
                    && source.to_string().contains("not a regular file")
        )
    }

    /// [`open_regular`] of the FIFO at `fifo`, on another thread; if it has
    /// not returned within 20 seconds (it waits for a writer), the FIFO is
    /// opened for writing and closed so that it returns, and `None` is
    /// returned.
    fn open_fifo(fifo: PathBuf) -> Option<bool> {
        let (done, returned) = mpsc::channel();
        let path = fifo.clone();
        let worker = thread::spawn(move || {
            let _ = done.send(refused(&open_regular(&path)));
        });
        let refused = returned.recv_timeout(Duration::from_secs(20)).ok();
        if refused.is_none() {
            drop(OpenOptions::new().read(true).write(true).open(&fifo));
        }
        let _ = worker.join();
        refused
    }

    // A file that grows after its length was checked is read no further
    // than one byte past the limit: an endless reader stands for it.
    #[test]
    fn a_read_stops_one_byte_past_the_limit_whatever_the_length_claimed() {
        let read = |bytes: &[u8], hint, limit| {
            read_at_most(bytes, hint, limit).unwrap_or_else(|e| panic!("{e}"))
        };
        let ten = [b'{'; 10];
        assert_eq!(read(&ten, 10, 10).map(|b| b.len()), Some(10));
        assert_eq!(read(&ten, 0, 10).map(|b| b.len()), Some(10));
        assert_eq!(read(&ten, 4, 9), None);
        assert_eq!(read(&[], u64::MAX, 0).map(|b| b.len()), Some(0));
        let endless = io::repeat(b' ');
        assert_eq!(read_at_most(endless, 0, 1 << 16).ok(), Some(None));
    }

    // The path check before the open is not what refuses: a FIFO or a
    // device put at the path between a check of the path and the open would
    // pass it. The open itself must not wait, and the opened file be checked.
    #[test]
    fn the_opened_file_is_checked_and_opening_a_fifo_does_not_wait() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fifo = dir.path().join("evidence.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap_or_else(|e| panic!("mkfifo: {e}"));
        assert!(made.success(), "mkfifo failed: {made}");
        assert_eq!(open_fifo(fifo), Some(true), "waited on the FIFO");
        // read only: opening /dev/null cannot change it
        assert!(refused(&open_regular(Path::new("/dev/null"))));
    }
}
