//! `bayesretry inspect`: the header line counts a snapshot's entries as a
//! person would say them: `1 entry`, `0 entries`, `2 entries`.

mod common;

use common::{arg, bayesretry, scratch};

/// A snapshot of `n` entries (one context per writer) taken at 5000 ms.
fn snapshot_of(n: u64) -> String {
    let entries: Vec<String> = (1..=n)
        .map(|writer| {
            format!(
                r#"{{"endpoint":"api","attempt":1,"class":"timeout","writer":{writer},"seq":1,"successes":1,"failures":0,"updated_at_ms":4000}}"#
            )
        })
        .collect();
    format!(
        r#"{{"version":1,"taken_at_ms":5000,"entries":[{}]}}"#,
        entries.join(",")
    )
}

#[test]
fn the_header_says_1_entry_0_entries_and_2_entries() {
    for (n, words) in [(0, "0 entries"), (1, "1 entry"), (2, "2 entries")] {
        let path = scratch(&format!("inspect-count-{n}.json"));
        std::fs::write(&path, snapshot_of(n)).unwrap_or_else(|e| panic!("{e}"));
        let run = bayesretry(&["inspect", arg(&path)], b"");
        assert_eq!(run.code, 0, "{run:#?}");
        let header = run.stdout.lines().next().unwrap_or_default();
        assert!(
            header.contains(&format!(": {words}, taken at 5000 ms")),
            "{header}"
        );
    }
}
