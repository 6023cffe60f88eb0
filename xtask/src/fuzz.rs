//! `cargo xtask fuzz [--seconds N] [TARGET]...`: the cargo-fuzz targets of `fuzz/`,
//! each run for a fixed time.
//!
//! The targets live in a workspace of their own (`fuzz/`), built with nightly and
//! libFuzzer's sanitizer flags; their corpora are committed under
//! `fuzz/corpus/<target>/`, so every run starts from what earlier runs found.
//! CI runs each target for [`SMOKE_SECONDS`]; a campaign runs them for ten minutes
//! or more (`--seconds 600`). A crash fails the step and leaves the input under
//! `fuzz/artifacts/<target>/`.

use crate::step::Step;

/// Every target of `fuzz/Cargo.toml`, in the order they run.
pub(crate) const TARGETS: &[&str] = &[
    "special_functions",
    "snapshot_json",
    "audit_verify",
    "replay_outcomes",
    "retry_after",
];

/// How long CI runs each target.
pub(crate) const SMOKE_SECONDS: u32 = 30;

/// What `cargo xtask fuzz` was asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Options {
    /// Seconds per target.
    pub(crate) seconds: u32,
    /// The targets to run; all of them when empty.
    pub(crate) targets: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: SMOKE_SECONDS,
            targets: Vec::new(),
        }
    }
}

impl Options {
    /// Reads `[--seconds N] [TARGET]...`.
    pub(crate) fn parse(args: &[&str]) -> Result<Self, String> {
        let mut options = Self::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if *arg == "--seconds" {
                let value = args.next().ok_or("`--seconds` needs a value")?;
                options.seconds = value
                    .parse()
                    .ok()
                    .filter(|&seconds| seconds > 0)
                    .ok_or_else(|| format!("`--seconds {value}` is not a positive number"))?;
            } else if TARGETS.contains(arg) {
                options.targets.push((*arg).to_owned());
            } else {
                return Err(format!(
                    "`{arg}` is not a fuzz target; the targets are {}",
                    TARGETS.join(", ")
                ));
            }
        }
        Ok(options)
    }
}

/// One `cargo +nightly fuzz run` per target.
pub(crate) fn steps(options: &Options) -> Vec<Step> {
    let chosen: Vec<&str> = if options.targets.is_empty() {
        TARGETS.to_vec()
    } else {
        options.targets.iter().map(String::as_str).collect()
    };
    chosen
        .into_iter()
        .map(|target| {
            Step::program(
                format!("fuzz {target} ({} s)", options.seconds),
                "cargo",
                [
                    "+nightly".to_owned(),
                    "fuzz".to_owned(),
                    "run".to_owned(),
                    "--fuzz-dir".to_owned(),
                    "fuzz".to_owned(),
                    target.to_owned(),
                    "--".to_owned(),
                    format!("-max_total_time={}", options.seconds),
                    "-timeout=10".to_owned(),
                    "-print_final_stats=1".to_owned(),
                ],
            )
            .hint(
                "cargo fuzz needs nightly and cargo-fuzz: `rustup toolchain install nightly` \
                 and `cargo install --locked cargo-fuzz`",
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Options, SMOKE_SECONDS, TARGETS};

    #[test]
    fn reads_seconds_and_targets_and_rejects_the_rest() {
        assert_eq!(Options::parse(&[]), Ok(Options::default()));
        assert_eq!(Options::default().seconds, SMOKE_SECONDS);
        let options = Options::parse(&["--seconds", "600", "snapshot_json"]);
        assert_eq!(
            options,
            Ok(Options {
                seconds: 600,
                targets: vec!["snapshot_json".to_owned()],
            })
        );
        assert!(Options::parse(&["--seconds", "0"]).is_err());
        assert!(Options::parse(&["--seconds"]).is_err());
        assert!(Options::parse(&["no_such_target"]).is_err());
    }

    #[test]
    fn every_target_is_a_bin_of_the_fuzz_manifest() {
        let manifest = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/Cargo.toml"),
        )
        .unwrap_or_default();
        let bins: Vec<&str> = manifest
            .lines()
            .filter_map(|line| line.strip_prefix("name = \""))
            .filter_map(|rest| rest.strip_suffix('"'))
            .filter(|name| *name != "bayesretry-fuzz")
            .collect();
        assert_eq!(bins, TARGETS);
    }
}
