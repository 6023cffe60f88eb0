//! A command line `bayesretry` cannot run is refused with status 64 and clap's
//! whole message: the flag or value at fault, the possible values or a similar
//! flag when there is one, and the usage — never squeezed onto one line.

mod common;

use common::bayesretry;

#[test]
fn a_missing_argument_is_named() {
    let run = bayesretry(&["inspect"], b"");
    run.is_refused_with(&[
        "error: the following required arguments were not provided:\n  <STORE.json>\n",
        "Usage: bayesretry inspect <STORE.json>",
    ]);
}

#[test]
fn a_value_that_is_not_one_of_the_choices_lists_the_choices() {
    bayesretry(&["simulate", "--scenario", "nope"], b"").is_refused_with(&[
        "invalid value 'nope' for '--scenario <SCENARIO>'",
        "[possible values: outage, flaky, rate-limited, hard-down, degrading]",
    ]);
    bayesretry(&["inspect", "x.json", "--sort", "colour"], b"").is_refused_with(&[
        "invalid value 'colour' for '--sort <SORT>'",
        "[possible values: context, mean, lower, strength, updated]",
    ]);
}

#[test]
fn a_misspelt_flag_gets_the_flag_meant() {
    bayesretry(&["bench", "--sceanrio", "S5"], b"").is_refused_with(&[
        "unexpected argument '--sceanrio' found",
        "tip: a similar argument exists: '--scenario'",
        "Usage: bayesretry bench",
    ]);
}

#[test]
fn a_negative_count_is_a_value_out_of_range_not_an_unknown_flag() {
    bayesretry(&["simulate", "--n", "-5"], b"")
        .is_refused_with(&["invalid value '-5' for '--n <N>': -5 is not in 1..=10000000"]);
    bayesretry(&["simulate", "--seed", "-1"], b"")
        .is_refused_with(&["invalid value '-1' for '--seed <SEED>'"]);
    bayesretry(&["bench", "--seeds", "-2"], b"")
        .is_refused_with(&["invalid value '-2' for '--seeds <SEEDS>': -2 is not in 1..=1000"]);
    bayesretry(&["bench", "--max-attempts", "-3"], b"").is_refused_with(&[
        "invalid value '-3' for '--max-attempts <MAX_ATTEMPTS>': -3 is not in 1..=10",
    ]);
}

#[test]
fn an_unknown_flag_or_subcommand_is_refused_with_the_usage() {
    bayesretry(&["replay", "--frobnicate"], b"").is_refused_with(&[
        "unexpected argument '--frobnicate' found",
        "Usage: bayesretry replay [OPTIONS] [FILE]",
    ]);
    bayesretry(&["teleport"], b"").is_refused_with(&[
        "unrecognized subcommand 'teleport'",
        "Usage: bayesretry <COMMAND>",
    ]);
}

#[test]
fn values_out_of_range_are_refused_naming_the_flag_and_the_value() {
    bayesretry(&["replay", "--prior", "0,1"], b"").is_refused_with(&["--prior", "0,1", "alpha"]);
    bayesretry(&["replay", "--prior", "1"], b"").is_refused_with(&["--prior", "A,B"]);
    bayesretry(&["replay", "--value", "-3"], b"").is_refused_with(&["--value", "-3"]);
    bayesretry(&["replay", "--cost", "nan"], b"").is_refused_with(&["--cost", "nan"]);
}

#[test]
fn no_subcommand_prints_the_help_and_is_a_usage_error() {
    let run = bayesretry(&[], b"");
    assert_eq!(run.code, 64, "{run:#?}");
    assert!(
        run.stderr.contains("Usage: bayesretry <COMMAND>"),
        "{run:#?}"
    );
    assert!(run.stdout.is_empty());
}
