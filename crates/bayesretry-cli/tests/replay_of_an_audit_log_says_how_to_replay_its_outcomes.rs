//! `bayesretry replay` reads outcome tokens, not the JSON Lines of an audit
//! log: given a log, it says so and points to `replay --help`, whose recipe
//! (select the log's `outcome` entries of one context, print their
//! `success`) folds the log's outcomes in.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use bayesretry_audit::{Event, Fsync, JsonlWriter, Record};
use common::{arg, bayesretry, scratch};

/// An audit log of decisions and outcomes about two contexts: `api`
/// attempt 1 after a 503 (3 successes, 2 failures) and `db` (1 failure).
fn log(name: &str) -> std::path::PathBuf {
    let path = scratch(name);
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    let outcome = |endpoint: &str, success| Event::Outcome {
        endpoint: endpoint.to_owned(),
        attempt: 1,
        error_class: String::from("http-503"),
        success,
    };
    let decision = Event::Decision {
        endpoint: String::from("api"),
        attempt: 1,
        error_class: String::from("http-503"),
        retry: true,
        probability: 0.5,
        expected_value: 4.0,
        reason: String::from("positive_expected_value"),
    };
    let events = [
        decision.clone(),
        outcome("api", true),
        decision.clone(),
        outcome("api", false),
        outcome("db", false),
        decision,
        outcome("api", true),
        outcome("api", false),
        outcome("api", true),
    ];
    for (t, event) in (0..).zip(events) {
        writer.append(&Record::new(1_000 + t, event)).unwrap();
    }
    writer.flush().unwrap();
    drop(writer);
    path
}

#[test]
fn an_audit_log_given_to_replay_is_refused_pointing_to_the_recipe() {
    let path = log("replay-audit-log.jsonl");
    let run = bayesretry(&["replay", arg(&path)], b"");
    run.fails_with(
        65,
        &[
            "replay-audit-log.jsonl:1:1: bad outcome token",
            "audit log",
            "bayesretry replay --help",
        ],
    );
    let piped = bayesretry(&["replay"], &std::fs::read(&path).unwrap());
    piped.fails_with(65, &["<stdin>:1:1", "audit log"]);
}

#[test]
fn the_help_recipe_replays_the_outcomes_of_one_context_of_a_log() {
    let help = bayesretry(&["replay", "--help"], b"");
    assert_eq!(help.code, 0, "{help:#?}");
    let recipe = "jq -r 'select(.event == \"outcome\" and .endpoint == \"api\" \
                  and .attempt == 1 and .class == \"http-503\") | .success' decisions.jsonl \
                  | bayesretry replay";
    assert!(help.stdout.contains(recipe), "{}", help.stdout);
    // What the recipe does, done here on a log the audit crate wrote: its
    // field names and values are those of the log.
    let path = log("replay-audit-recipe.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut tokens = String::new();
    for line in text.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        let selected = entry["event"] == "outcome"
            && entry["endpoint"] == "api"
            && entry["attempt"] == 1
            && entry["class"] == "http-503";
        if selected {
            tokens.push_str(&entry["success"].to_string());
            tokens.push('\n');
        }
    }
    assert_eq!(tokens, "true\nfalse\ntrue\nfalse\ntrue\n");
    let run = bayesretry(&["replay"], tokens.as_bytes());
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .starts_with("outcomes      5 (3 successes, 2 failures)\n"),
        "{}",
        run.stdout
    );
}
