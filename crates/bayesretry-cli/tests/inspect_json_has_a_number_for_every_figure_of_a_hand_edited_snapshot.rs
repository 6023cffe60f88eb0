//! `bayesretry inspect --json` of a snapshot whose counts were edited by hand
//! to the edge of what a snapshot holds (any finite count is valid): every
//! figure is still a JSON number. Two writers' `1e308` successes add up past
//! the largest `f64`, which the store's evidence holds at that largest value;
//! the strength of such a posterior is that value too, not `null` (JSON has
//! no infinity), which a program reading the output would take for a missing
//! field or fail on.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use common::{arg, bayesretry, scratch};

const HUGE: &str = r#"{"version":1,"taken_at_ms":5000,"entries":[
{"endpoint":"a","attempt":1,"class":"timeout","writer":1,"seq":1,"successes":1e308,"failures":1e308,"updated_at_ms":10},
{"endpoint":"a","attempt":1,"class":"timeout","writer":2,"seq":1,"successes":1e308,"failures":1e308,"updated_at_ms":10},
{"endpoint":"b","attempt":1,"class":"timeout","writer":1,"seq":1,"successes":1.7976931348623157e308,"failures":0,"updated_at_ms":10}
]}"#;

/// Every value under `value`, depth first.
fn leaves(value: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match value {
        serde_json::Value::Array(items) => items.iter().for_each(|item| leaves(item, out)),
        serde_json::Value::Object(fields) => fields.values().for_each(|item| leaves(item, out)),
        other => out.push(other.clone()),
    }
}

#[test]
fn every_figure_of_every_context_is_a_number() {
    let path = scratch("inspect-huge.json");
    std::fs::write(&path, HUGE).unwrap();
    let run = bayesretry(&["inspect", "--json", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let contexts = json["contexts"].as_array().unwrap();
    assert_eq!(contexts.len(), 2, "{}", run.stdout);
    let mut all = Vec::new();
    leaves(&json, &mut all);
    assert!(
        !all.iter().any(serde_json::Value::is_null),
        "{}",
        run.stdout
    );
    for context in contexts {
        let strength = context["strength"].as_f64().unwrap();
        assert!(strength >= 1e308, "{}", run.stdout);
    }
}

#[test]
fn the_table_shows_the_same_figures() {
    let path = scratch("inspect-huge-table.json");
    std::fs::write(&path, HUGE).unwrap();
    let run = bayesretry(&["inspect", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(!run.stdout.contains("inf"), "{}", run.stdout);
    assert!(!run.stdout.contains("NaN"), "{}", run.stdout);
}
