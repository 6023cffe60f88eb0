//! `bayesretry simulate` opens with `scenario  NAME: WHAT IT DOES`: the name
//! as `--scenario` takes it, once, then a description that does not say the
//! name again ("degrading: degrading: ...").

mod common;

use common::bayesretry;

#[test]
fn every_scenario_is_named_once_in_the_first_line() {
    for name in ["outage", "flaky", "rate-limited", "hard-down", "degrading"] {
        let run = bayesretry(&["simulate", "--n", "20", "--scenario", name], b"");
        assert_eq!(run.code, 0, "{run:#?}");
        let first = run.stdout.lines().next().unwrap_or_default();
        let prefix = format!("scenario  {name}: ");
        assert!(first.starts_with(&prefix), "{first}");
        let description = first.get(prefix.len()..).unwrap_or_default();
        let opening: String = description.chars().take(24).collect();
        assert!(
            !opening.replace('-', " ").contains(&name.replace('-', " ")),
            "{name} said twice: {first}"
        );
    }
}
