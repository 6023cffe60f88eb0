//! `--help` of the tool and of every subcommand shows examples; `--version`
//! prints the version; both succeed on stdout.

mod common;

use common::bayesretry;

/// The subcommands `bayesretry --help` lists.
fn subcommands() -> Vec<String> {
    let run = bayesretry(&["--help"], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    run.stdout
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_subcommand_has_examples_in_its_help() {
    let names = subcommands();
    assert!(names.iter().any(|n| n == "replay"), "{names:?}");
    assert!(names.iter().any(|n| n == "inspect"), "{names:?}");
    assert!(names.iter().any(|n| n == "audit"), "{names:?}");
    assert!(names.iter().any(|n| n == "simulate"), "{names:?}");
    assert!(names.iter().any(|n| n == "bench"), "{names:?}");
    for name in &names {
        for flag in ["-h", "--help"] {
            let run = bayesretry(&[name, flag], b"");
            assert_eq!(run.code, 0, "{run:#?}");
            assert!(
                run.stdout.contains("Examples:\n"),
                "{name} {flag}: {run:#?}"
            );
            assert!(
                run.stdout.contains(&format!("bayesretry {name}")),
                "{name} {flag}: {run:#?}"
            );
        }
    }
    let verify = bayesretry(&["audit", "verify", "--help"], b"");
    assert_eq!(verify.code, 0, "{verify:#?}");
    assert!(
        verify
            .stdout
            .contains("Examples:\n  bayesretry audit verify ")
    );
    let top = bayesretry(&["--help"], b"");
    assert!(top.stdout.contains("Examples:\n"));
    assert!(top.stdout.contains("Exit status:"));
}

#[test]
fn version_prints_the_package_version() {
    let run = bayesretry(&["--version"], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.stdout.trim(),
        format!("bayesretry {}", env!("CARGO_PKG_VERSION"))
    );
}
