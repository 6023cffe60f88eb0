//! `bayesretry replay`: outcomes from standard input or a file become a Beta
//! posterior and a decision about the next attempt.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use common::{arg, bayesretry, scratch};

#[test]
fn the_issue_example_shows_beta_4_5_from_the_uniform_prior() {
    let run = bayesretry(&["replay"], b"1 1 0 1 0 0 0\n");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stderr.is_empty(), "{run:#?}");
    assert!(
        run.stdout.contains("prior         Beta(1, 1)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("posterior     Beta(4, 5)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("mean          0.4444\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("95% interval  [0.1570, 0.7551]\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("strength      9\n"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("next attempt  retry: positive expected value"),
        "{}",
        run.stdout
    );
}

#[test]
fn words_newlines_and_comments_read_like_digits() {
    let text = b"# from the incident log\nok OK true\nFAIL\tfalse\n\n0  1 # last one\n0";
    let run = bayesretry(&["replay", "--json"], text);
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["successes"], 4);
    assert_eq!(json["failures"], 4);
    assert_eq!(json["posterior"]["alpha"], 5.0);
    assert_eq!(json["posterior"]["beta"], 5.0);
}

#[test]
fn a_file_argument_is_read_instead_of_stdin() {
    let path = scratch("replay-file.txt");
    std::fs::write(&path, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
    // stdin holds successes that must be ignored
    let run = bayesretry(&["replay", arg(&path), "--json"], b"1 1 1 1");
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["failures"], 20);
    assert_eq!(json["successes"], 0);
    // mean 1/22 is below the break-even 1/10: stop
    assert_eq!(json["decision"]["retry"], false);
    assert_eq!(json["decision"]["reason"], "expected value not positive");
}

#[test]
fn value_cost_and_prior_change_the_numbers_and_the_decision() {
    // Beta(2 + 1, 2 + 9) has mean 3/14 = 0.214: worth a retry at V/c = 10,
    // not at V/c = 4 (break-even 0.25).
    let outcomes = b"1 0 0 0 0 0 0 0 0 0";
    let cheap = bayesretry(&["replay", "--prior", "2,2", "--json"], outcomes);
    let dear = bayesretry(
        &[
            "replay", "--prior", "2,2", "--value", "4", "--cost", "1", "--json",
        ],
        outcomes,
    );
    for run in [&cheap, &dear] {
        assert_eq!(run.code, 0, "{run:#?}");
    }
    let cheap: serde_json::Value = serde_json::from_str(&cheap.stdout).unwrap();
    let dear: serde_json::Value = serde_json::from_str(&dear.stdout).unwrap();
    assert_eq!(cheap["posterior"]["alpha"], 3.0);
    assert_eq!(cheap["posterior"]["beta"], 11.0);
    assert_eq!(cheap["decision"]["retry"], true);
    assert_eq!(dear["decision"]["retry"], false);
    assert_eq!(dear["decision"]["break_even"], 0.25);
}

#[test]
fn an_empty_stream_leaves_the_prior_as_it_was() {
    let run = bayesretry(&["replay", "--prior", "3,7"], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .contains("outcomes      0 (0 successes, 0 failures)")
    );
    assert!(run.stdout.contains("posterior     Beta(3, 7)"));
}

#[test]
fn a_million_outcomes_stream_through() {
    let text: Vec<u8> = (0..1_000_000_u32)
        .flat_map(|i| [if i % 4 == 0 { b'0' } else { b'1' }, b'\n'])
        .collect();
    let run = bayesretry(&["replay", "--json"], &text);
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["successes"], 750_000);
    assert_eq!(json["failures"], 250_000);
}

#[test]
fn a_huge_prior_prints_in_scientific_notation_and_one_beyond_1e300_is_refused() {
    let run = bayesretry(&["replay", "--prior", "1e300,1"], b"1 0");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains("prior         Beta(1e300, 1)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("posterior     Beta(1e300, 2)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("strength      1e300\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.lines().all(|l| l.len() < 120), "{}", run.stdout);
    bayesretry(&["replay", "--prior", "1e308,1e308"], b"").is_refused_with(&[
        "invalid value '1e308,1e308' for '--prior <A,B>'",
        "alpha must be at most 1e300",
    ]);
    bayesretry(&["replay", "--value", "1e301"], b"").is_refused_with(&[
        "'--value <V>'",
        "must be at most 1e300",
        "1e301",
    ]);
}

#[test]
fn a_cost_above_the_value_says_no_retry_can_pay() {
    let run = bayesretry(&["replay", "--value", "1", "--cost", "5"], b"1 1 1");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains(
            "next attempt  stop: expected value not positive (p * V - c = 0.8000 * 1 - 5 \
             = -4.2; break-even c / V = 5 > 1: no retry can pay)\n"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("5.0000"), "{}", run.stdout);
}

#[test]
fn a_file_saved_with_a_byte_order_mark_reads_as_one_without() {
    // as Notepad or PowerShell's `Out-File -Encoding utf8` save it
    let path = scratch("replay-bom.txt");
    std::fs::write(&path, b"\xEF\xBB\xBF1\r\n1\r\n0\r\n").unwrap();
    let run = bayesretry(&["replay", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .starts_with("outcomes      3 (2 successes, 1 failure)\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_comment_starts_only_where_a_token_would_as_the_help_says() {
    let help = bayesretry(&["replay", "--help"], b"");
    assert!(
        help.stdout
            .contains("A '#' at the start of a\nline or after a space or tab starts a comment"),
        "{}",
        help.stdout
    );
    let run = bayesretry(&["replay", "--json"], b"1 # from prod\n#0\n0");
    assert_eq!(run.code, 0, "{run:#?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (json["successes"].as_u64(), json["failures"].as_u64()),
        (Some(1), Some(1))
    );
    bayesretry(&["replay"], b"1# from prod\n").fails_with(65, &["<stdin>:1:1", "\"1#\""]);
}
