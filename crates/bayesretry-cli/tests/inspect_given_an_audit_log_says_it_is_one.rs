//! `bayesretry inspect` given an audit log (JSON Lines) in place of a store
//! snapshot says that is what it was given and which command reads it,
//! rather than "not JSON: trailing characters at line 2".

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use bayesretry_audit::{Event, Fsync, JsonlWriter, Record};
use common::{arg, bayesretry, scratch};

#[test]
fn an_audit_log_is_named_as_one_with_the_command_that_reads_it() {
    let path = scratch("inspect-an-audit-log.jsonl");
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    for success in [true, false] {
        let event = Event::Outcome {
            endpoint: String::from("api"),
            attempt: 1,
            error_class: String::from("timeout"),
            success,
        };
        writer.append(&Record::new(5, event)).unwrap();
    }
    writer.flush().unwrap();
    drop(writer);
    let shown = path.display().to_string();
    let run = bayesretry(&["inspect", arg(&path)], b"");
    run.fails_with(
        65,
        &[
            &format!("snapshot file {shown}"),
            "an audit log",
            &format!("bayesretry audit verify {shown}"),
        ],
    );
    assert!(!run.stderr.contains("trailing characters"), "{run:#?}");
    // From standard input too, and a log of one line (valid JSON) as well.
    let first = std::fs::read_to_string(&path).unwrap();
    let first = first.lines().next().unwrap().to_owned() + "\n";
    for input in [std::fs::read(&path).unwrap(), first.into_bytes()] {
        let run = bayesretry(&["inspect", "-"], &input);
        run.fails_with(
            65,
            &["<stdin>", "an audit log", "bayesretry audit verify -"],
        );
    }
}
