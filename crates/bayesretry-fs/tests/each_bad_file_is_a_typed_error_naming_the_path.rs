//! Every kind of bad snapshot file is its own error, naming the file and what
//! is wrong with it; none panics, and none reads as an empty snapshot.

use std::fs;
use std::path::Path;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, PosteriorStore, Snapshot, StoreConfig, WriterId};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A valid snapshot of a few contexts, as its file bytes.
fn good_file() -> Result<String, Box<dyn core::error::Error>> {
    let store = StoreConfig::new().with_writer(WriterId::new(9)).build()?;
    for (i, class) in [
        ErrorClass::Http(429),
        ErrorClass::Timeout,
        ErrorClass::Custom("quota"),
    ]
    .into_iter()
    .enumerate()
    {
        let ctx = Context::new("api.example.com", 2, class);
        store.observe(&ctx, i % 2 == 0, 1_000 + i as u64);
        store.observe(&ctx, true, 1_500);
    }
    Ok(format!("{}\n", store.snapshot(2_000).to_json()))
}

/// The error of loading `bytes` from a fresh file, and that file's path.
fn load_bytes(bytes: &[u8]) -> Result<(Error, std::path::PathBuf), Box<dyn core::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    fs::write(&path, bytes)?;
    let store = FileStore::open(&path)?;
    match store.load() {
        Ok(snapshot) => Err(format!("loaded {} entries from {bytes:?}", snapshot.len()).into()),
        Err(error) => {
            assert_eq!(error.path(), Some(path.as_path()));
            assert!(
                error.to_string().contains(&path.display().to_string()),
                "the message must name the file: {error}"
            );
            Ok((error, path))
        }
    }
}

fn assert_names(error: &Error, path: &Path, words: &[&str]) {
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    for word in words {
        assert!(message.contains(word), "{message:?} should say {word:?}");
    }
}

#[test]
fn a_missing_file_is_missing_and_nothing_else() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("never-saved.json");
    let error = FileStore::open(&path)?
        .load()
        .err()
        .ok_or("loaded a missing file")?;
    assert!(matches!(&error, Error::Missing { path: p } if p == &path));
    assert!(error.is_missing());
    assert_names(&error, &path, &["does not exist"]);
    Ok(())
}

#[test]
fn an_empty_or_blank_file_is_empty() -> TestResult {
    for bytes in [&b""[..], b"\n", b"  \r\n\t "] {
        let (error, path) = load_bytes(bytes)?;
        assert!(matches!(error, Error::Empty { .. }), "{bytes:?}: {error:?}");
        assert_names(&error, &path, &["is empty"]);
    }
    Ok(())
}

#[test]
fn every_cut_of_a_good_file_is_truncated() -> TestResult {
    let good = good_file()?;
    let document = good.trim_end();
    // Every strict prefix that is not blank: a write cut short anywhere.
    for cut in 1..document.len() {
        let (error, path) = load_bytes(&document.as_bytes()[..cut])?;
        match &error {
            Error::Truncated { line, column, .. } => {
                assert_eq!(*line, 1);
                assert!(*column <= cut, "cut {cut}: column {column}");
            }
            other => return Err(format!("cut at {cut}: {other:?}").into()),
        }
        if cut == 1 {
            assert_names(&error, &path, &["truncated"]);
        }
    }
    // A document that is not an object is truncated too when it is cut.
    for cut in ["[1, 9,", "\"evid", "nul", "-"] {
        let (error, _) = load_bytes(cut.as_bytes())?;
        assert!(matches!(error, Error::Truncated { .. }), "{cut}: {error:?}");
    }
    Ok(())
}

#[test]
fn a_file_that_is_not_json_says_where() -> TestResult {
    let cases: [(&[u8], usize, usize); 6] = [
        (b"version = 1\n", 1, 1),
        (b"[1, 9] []", 1, 8),
        (b"nothing", 1, 2),
        (
            b"{\"version\":1,\n \"taken_at_ms\":5 \"entries\":[]}",
            2,
            18,
        ),
        (
            b"{\"version\":1,\"taken_at_ms\":5,\"entries\":[]} trailing",
            1,
            44,
        ),
        (b"<html>503 Service Unavailable</html>", 1, 1),
    ];
    for (bytes, line, column) in cases {
        let (error, path) = load_bytes(bytes)?;
        match &error {
            Error::NotJson {
                line: l, column: c, ..
            } => assert_eq!((*l, *c), (line, column), "{error}"),
            other => return Err(format!("{bytes:?}: {other:?}").into()),
        }
        assert_names(&error, &path, &["is not JSON", &format!("line {line}")]);
    }
    let (error, path) = load_bytes(b"{\"version\":1,\"taken_at_ms\":\xff}")?;
    assert!(matches!(error, Error::NotJson { .. }), "{error:?}");
    assert_names(&error, &path, &["invalid UTF-8 at byte 27"]);
    Ok(())
}

#[test]
fn json_that_is_not_a_snapshot_is_a_schema_error_saying_what_is_wrong() -> TestResult {
    let entry = |field: &str, value: &str| {
        let mut fields = vec![
            ("endpoint", "\"a\""),
            ("attempt", "1"),
            ("class", "\"timeout\""),
            ("writer", "3"),
            ("seq", "1"),
            ("successes", "1.0"),
            ("failures", "0.0"),
            ("updated_at_ms", "5"),
        ];
        for (name, v) in &mut fields {
            if *name == field {
                *v = value;
            }
        }
        let body: Vec<String> = fields.iter().map(|(n, v)| format!("\"{n}\":{v}")).collect();
        format!(
            "{{\"version\":1,\"taken_at_ms\":9,\"entries\":[{{{}}}]}}",
            body.join(",")
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            "[1, 9, []]".into(),
            "the document is an array, where a snapshot is an object",
        ),
        ("\n[]\n".into(), "the document is an array,"),
        ("42".into(), "the document is a number,"),
        ("-0.5e3".into(), "the document is a number,"),
        ("\"evidence\"".into(), "the document is a string,"),
        ("true".into(), "the document is a boolean,"),
        ("false".into(), "the document is a boolean,"),
        ("null".into(), "the document is null,"),
        (
            "{\"taken_at_ms\":9,\"entries\":[]}".into(),
            "missing field `version`",
        ),
        (
            "{\"version\":\"1\",\"taken_at_ms\":9,\"entries\":[]}".into(),
            "`version` must be a whole number",
        ),
        (
            "{\"version\":-1,\"entries\":[]}".into(),
            "`version` must be a whole number",
        ),
        ("{\"version\":1,\"taken_at_ms\":9}".into(), "entries"),
        ("{\"version\":1,\"entries\":[]}".into(), "taken_at_ms"),
        (
            "{\"version\":1,\"version\":1,\"taken_at_ms\":9,\"entries\":[]}".into(),
            "duplicate field `version`",
        ),
        (entry("successes", "-1.0"), "-1"),
        (entry("seq", "0"), "seq must be at least 1"),
        (entry("class", "\"teapot\""), "unknown class \"teapot\""),
        (
            entry("attempt", "\"first\""),
            "string \"first\", expected u32",
        ),
    ];
    for (json, needle) in cases {
        let (error, path) = load_bytes(json.as_bytes())?;
        match &error {
            Error::Schema { why, .. } => assert!(why.contains(needle), "{json}: {why}"),
            other => return Err(format!("{json}: {other:?}").into()),
        }
        assert_names(&error, &path, &["is JSON but not a snapshot"]);
    }
    Ok(())
}

#[test]
fn a_newer_format_version_is_named_with_the_newest_this_release_reads() -> TestResult {
    let newer = u64::from(Snapshot::VERSION) + 1;
    for found in [newer, u64::from(u32::MAX) + 7] {
        let json =
            format!("{{\"version\":{found},\"taken_at_ms\":0,\"entries\":[],\"writers\":{{}}}}");
        let (error, path) = load_bytes(json.as_bytes())?;
        match &error {
            Error::FutureVersion {
                found: f,
                supported,
                ..
            } => assert_eq!((*f, *supported), (found, Snapshot::VERSION)),
            other => return Err(format!("{json}: {other:?}").into()),
        }
        assert_names(&error, &path, &[&format!("format version {found}")]);
    }
    Ok(())
}

#[test]
fn a_good_file_loads_exactly_what_was_saved() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let good = good_file()?;
    fs::write(&path, &good)?;
    let loaded = FileStore::open(&path)?.load()?;
    assert_eq!(loaded, Snapshot::from_json(good.trim_end())?);
    assert_eq!(loaded.len(), 3);
    Ok(())
}

#[test]
fn a_byte_order_mark_an_editor_added_is_skipped() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let good = good_file()?;
    fs::write(&path, format!("\u{feff}{good}"))?;
    let loaded = FileStore::open(&path)?.load()?;
    assert_eq!(loaded, Snapshot::from_json(good.trim_end())?);
    // a file holding the mark alone is as empty as one holding nothing, and
    // a bad file after the mark is still told apart, its place counted from
    // after the mark
    let (error, _) = load_bytes("\u{feff}\n".as_bytes())?;
    assert!(matches!(error, Error::Empty { .. }), "{error:?}");
    let (error, _) = load_bytes("\u{feff}{\"version\":1,".as_bytes())?;
    assert!(matches!(error, Error::Truncated { .. }), "{error:?}");
    let (error, _) = load_bytes("\u{feff}{oops}".as_bytes())?;
    assert!(
        matches!(
            error,
            Error::NotJson {
                line: 1,
                column: 2,
                ..
            }
        ),
        "{error:?}"
    );
    Ok(())
}

#[test]
fn a_path_without_a_file_name_or_directory_is_refused_when_opened() -> TestResult {
    let dir = tempfile::tempdir()?;
    let error = FileStore::open(dir.path().join("no-such-dir").join("evidence.json"))
        .err()
        .ok_or("opened a file in a missing directory")?;
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("no-such-dir"), "{error}");
    assert!(FileStore::open("/").is_err());
    Ok(())
}
