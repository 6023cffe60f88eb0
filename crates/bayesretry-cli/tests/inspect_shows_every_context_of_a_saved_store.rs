//! `bayesretry inspect`: the contexts of a snapshot written by a real store, with
//! their posteriors, filtered and sorted; corrupt snapshots are data errors.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use bayesretry_store::{Context, ErrorClass, PosteriorStore, StoreConfig, WriterId};
use common::{arg, bayesretry, scratch};

/// A snapshot of two writers' evidence about three contexts, written to `name`.
fn saved_store(name: &str) -> std::path::PathBuf {
    let a = StoreConfig::new()
        .with_writer(WriterId::new(1))
        .build()
        .unwrap();
    let b = StoreConfig::new()
        .with_writer(WriterId::new(2))
        .build()
        .unwrap();
    let limited = Context::new("llm.example.com", 1, ErrorClass::Http(429));
    let down = Context::new("db.internal", 1, ErrorClass::ConnectionRefused);
    let later = Context::new("llm.example.com", 2, ErrorClass::Timeout);
    for t in 0..8 {
        a.observe(&limited, t % 4 != 0, 1_000 + t); // 6 successes, 2 failures
        b.observe(&down, false, 2_000 + t); // 8 failures
    }
    b.observe(&limited, true, 4_000); // a second writer on the same context
    a.observe(&later, true, 3_000);
    let mut snapshot = a.snapshot(5_000);
    snapshot.merge(&b.snapshot(5_000));
    let path = scratch(name);
    std::fs::write(&path, snapshot.to_json()).unwrap();
    path
}

#[test]
fn every_context_is_listed_with_its_posterior() {
    let path = saved_store("inspect-all.json");
    let run = bayesretry(&["inspect", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].contains("4 entries, taken at 5000 ms"),
        "{}",
        run.stdout
    );
    assert!(lines[1].starts_with("endpoint"), "{}", run.stdout);
    // header, rule, three contexts in context order
    let rows = &lines[3..];
    assert_eq!(rows.len(), 3, "{}", run.stdout);
    assert!(rows[0].starts_with("db.internal "), "{}", run.stdout);
    assert!(rows[1].contains(" http-429 "), "{}", run.stdout);
    assert!(rows[2].contains(" timeout "), "{}", run.stdout);
    // 7 successes and 2 failures from two writers: Beta(8, 3), mean 8/11
    let limited: Vec<&str> = rows[1].split_whitespace().collect();
    assert_eq!(limited[3..6], ["7", "2", "0.7273"], "{}", rows[1]);
    assert!(rows[1].contains(" 2  "), "two writers: {}", rows[1]);
    assert!(rows[1].ends_with("1.0 s before snapshot"), "{}", rows[1]);
    // 5000 ms is no Unix time: no date is made up for it
    assert!(!lines[0].contains("GMT"), "{}", run.stdout);
}

#[test]
fn a_unix_time_reads_as_a_utc_date_and_updates_are_timed_from_the_snapshot() {
    let taken = 1_796_085_024_623_u64;
    let store = StoreConfig::new()
        .with_writer(WriterId::new(1))
        .build()
        .unwrap();
    let context = Context::new("api.example.com", 1, ErrorClass::Http(503));
    store.observe(&context, false, taken - 90_000);
    let path = scratch("inspect-unix-time.json");
    std::fs::write(&path, store.snapshot(taken).to_json()).unwrap();
    let run = bayesretry(&["inspect", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].contains("taken at 1796085024623 ms (Tue, 01 Dec 2026 00:30:24 GMT);"),
        "{}",
        run.stdout
    );
    assert!(lines[1].ends_with("last update"), "{}", run.stdout);
    assert!(
        lines[3].ends_with(" 1.5 min before snapshot"),
        "{}",
        run.stdout
    );
    let json = bayesretry(&["inspect", arg(&path), "--json"], b"");
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["taken_at_ms"], taken);
    assert_eq!(json["contexts"][0]["updated_at_ms"], taken - 90_000);
}

/// Inspecting saves nothing: a file whose name leaves no room for a save's
/// backup beside it (on Unix, more than 247 bytes) is read as any other.
#[cfg(unix)]
#[test]
fn a_file_whose_name_is_too_long_to_save_beside_is_still_read() {
    let name = format!("{}.json", "e".repeat(245));
    let path = saved_store(&name);
    let run = bayesretry(&["inspect", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("4 entries"), "{}", run.stdout);
}

#[test]
fn json_output_carries_every_number() {
    let path = saved_store("inspect-json.json");
    let run = bayesretry(&["inspect", arg(&path), "--json", "--prior", "2,2"], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["taken_at_ms"], 5000);
    let contexts = json["contexts"].as_array().unwrap();
    assert_eq!(contexts.len(), 3);
    let down = &contexts[0];
    assert_eq!(down["endpoint"], "db.internal");
    assert_eq!(down["class"], "connection-refused");
    assert_eq!(down["alpha"], 2.0);
    assert_eq!(down["beta"], 10.0);
    assert_eq!(down["updated_at_ms"], 2007);
    let interval = down["interval_95"].as_array().unwrap();
    assert!(interval[0].as_f64().unwrap() < down["mean"].as_f64().unwrap());
}

#[test]
fn endpoint_filters_and_sort_orders() {
    let path = saved_store("inspect-sort.json");
    let run = bayesretry(
        &[
            "inspect",
            arg(&path),
            "--endpoint",
            "llm.example.com",
            "--sort",
            "mean",
            "--json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let classes: Vec<&str> = json["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    // lowest mean first: the timeout context, Beta(2, 1) = 0.67, before the 429s, 8/11 = 0.73
    assert_eq!(classes, ["timeout", "http-429"]);

    let run = bayesretry(
        &["inspect", arg(&path), "--sort", "strength", "--json"],
        b"",
    );
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let endpoints: Vec<&str> = json["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(
        endpoints,
        ["llm.example.com", "db.internal", "llm.example.com"]
    );

    let run = bayesretry(&["inspect", arg(&path), "--endpoint", "nowhere"], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("no context has endpoint \"nowhere\""));
}

#[test]
fn a_corrupt_snapshot_is_a_data_error_naming_the_fault() {
    let truncated = scratch("inspect-truncated.json");
    std::fs::write(&truncated, "{\"version\":1,\"taken_at_ms\":5,\"entries\":[").unwrap();
    bayesretry(&["inspect", arg(&truncated)], b"")
        .fails_with(65, &["inspect-truncated.json", "truncated", "line 1"]);

    let future = scratch("inspect-version.json");
    std::fs::write(&future, "{\"version\":9,\"taken_at_ms\":5,\"entries\":[]}").unwrap();
    bayesretry(&["inspect", arg(&future)], b"").fails_with(65, &["format version 9"]);

    let negative = scratch("inspect-negative.json");
    std::fs::write(
        &negative,
        "{\"version\":1,\"taken_at_ms\":5,\"entries\":[{\"endpoint\":\"a\",\"attempt\":1,\
         \"class\":\"timeout\",\"writer\":1,\"seq\":1,\"successes\":-1,\"failures\":0,\
         \"updated_at_ms\":1}]}",
    )
    .unwrap();
    bayesretry(&["inspect", arg(&negative)], b"").fails_with(65, &["-1"]);

    let binary = scratch("inspect-binary.json");
    std::fs::write(&binary, [0x89, b'P', b'N', b'G', 0xff]).unwrap();
    bayesretry(&["inspect", arg(&binary)], b"").fails_with(65, &["not JSON", "UTF-8"]);

    let empty = scratch("inspect-empty.json");
    std::fs::write(&empty, "\n").unwrap();
    bayesretry(&["inspect", arg(&empty)], b"").fails_with(65, &["inspect-empty.json", "empty"]);

    let syntax = scratch("inspect-syntax.json");
    std::fs::write(&syntax, "{\"version\":1,\n\"taken_at_ms\": five}").unwrap();
    bayesretry(&["inspect", arg(&syntax)], b"").fails_with(65, &["not JSON", "line 2"]);
}

#[test]
fn json_that_is_not_an_object_is_a_data_error_saying_what_the_file_holds() {
    for (json, holds) in [
        ("[]\n", "an array"),
        (
            "[{\"version\":1,\"taken_at_ms\":5,\"entries\":[]}]",
            "an array",
        ),
        ("\"evidence\"", "a string"),
        ("17", "a number"),
        ("true", "a boolean"),
        ("null", "null"),
    ] {
        let path = scratch("inspect-not-an-object.json");
        std::fs::write(&path, json).unwrap();
        let run = bayesretry(&["inspect", arg(&path)], b"");
        run.fails_with(
            65,
            &[&format!(
                "error: snapshot file {} is JSON but not a snapshot: the document is {holds}, \
                     where a snapshot is an object\n",
                path.display()
            )],
        );
        assert!(!run.stderr.contains("invalid type"), "{run:#?}");
        assert!(!run.stderr.contains("column"), "{run:#?}");
    }
}

#[test]
fn a_snapshot_piped_in_reads_as_the_same_file_does() {
    let path = saved_store("inspect-piped.json");
    let bytes = std::fs::read(&path).unwrap();
    let from_file = bayesretry(&["inspect", arg(&path)], b"");
    assert_eq!(from_file.code, 0, "{from_file:#?}");
    let table = |out: &str| out.lines().skip(1).collect::<Vec<_>>().join("\n");
    let mut ways = vec!["-"];
    // a pipe by name, as `<(ssh host cat store.json)` gives one
    if cfg!(target_os = "linux") {
        ways.push("/dev/stdin");
    }
    for way in ways {
        let piped = bayesretry(&["inspect", way], &bytes);
        assert_eq!(piped.code, 0, "{way}: {piped:#?}");
        let shown = if way == "-" { "<stdin>" } else { way };
        assert!(
            piped
                .stdout
                .starts_with(&format!("{shown}: 4 entries, taken at 5000 ms")),
            "{way}: {piped:#?}"
        );
        assert_eq!(table(&piped.stdout), table(&from_file.stdout), "{way}");
    }
    let json = bayesretry(&["inspect", "-", "--json"], &bytes);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["contexts"].as_array().unwrap().len(), 3);
}

#[test]
fn a_bad_snapshot_piped_in_is_a_data_error_naming_stdin() {
    bayesretry(
        &["inspect", "-"],
        b"{\"version\":1,\"taken_at_ms\":5,\"entries\":[",
    )
    .fails_with(65, &["<stdin>", "truncated"]);
    bayesretry(&["inspect", "-"], b"").fails_with(65, &["<stdin>", "empty"]);
    bayesretry(
        &["inspect", "-"],
        b"{\"version\":9,\"taken_at_ms\":5,\"entries\":[]}",
    )
    .fails_with(65, &["<stdin>", "format version 9"]);
}
