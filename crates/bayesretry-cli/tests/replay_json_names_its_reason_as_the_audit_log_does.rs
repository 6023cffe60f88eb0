//! `bayesretry replay --json` gives the decision's reason as people read it
//! (`reason`, prose that may be reworded) and by the name the audit log gives
//! it (`reason_name`, snake_case, part of the log format): a script matches
//! the name, and the same name in a decision log.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use bayesretry_decision::Reason;
use common::bayesretry;

fn decision(outcomes: &[u8]) -> serde_json::Value {
    let run = bayesretry(&["replay", "--json"], outcomes);
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    json["decision"].clone()
}

#[test]
fn the_reason_has_its_audit_log_name_beside_its_text() {
    let retry = decision(b"1 1 0");
    assert_eq!(retry["retry"], true);
    assert_eq!(retry["reason"], "positive expected value");
    assert_eq!(
        retry["reason_name"],
        bayesretry_audit::reason_name(Reason::PositiveExpectedValue)
    );
    assert_eq!(retry["reason_name"], "positive_expected_value");
    let stop = decision(b"0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0");
    assert_eq!(stop["retry"], false);
    assert_eq!(stop["reason_name"], "negative_expected_value");
}
