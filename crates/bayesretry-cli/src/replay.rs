//! `bayesretry replay`: outcomes in, posterior and next-attempt decision out.

use bayesretry_beta::Beta;
use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, Decision};
use bayesretry_store::{Context, ErrorClass, PosteriorStore, StoreConfig, WriterId};
use serde::Serialize;

use crate::cli::ReplayArgs;
use crate::error::Error;
use crate::format::{num, prob, signed};
use crate::input;
use crate::outcomes::{Tally, read_outcomes};
use crate::output::{Output, write_json};

/// The mass of the credible interval printed.
const MASS: f64 = 0.95;

/// Runs `replay` and writes its report to `out`.
pub(crate) fn run(args: &ReplayArgs, out: &mut Output<'_>) -> Result<(), Error> {
    let input = input::open(args.file.as_deref())?;
    input.prompt(
        "replay",
        "outcomes (1, ok or true for a success; 0, fail or false for a failure)",
        "a FILE",
    );
    let tally = read_outcomes(input.reader, &input.name)?;
    let model = CostModel::new(args.costs.value, args.costs.cost)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let report = Report::new(args.prior, tally, model)?;
    if args.json {
        write_json(out, &report.json())
    } else {
        out.text(&report.text())
    }
}

/// What `replay` found.
#[derive(Debug)]
struct Report {
    tally: Tally,
    prior: Beta,
    posterior: Beta,
    interval: (f64, f64),
    model: CostModel,
    decision: Decision,
}

impl Report {
    /// Folds `tally` into `prior` and asks the decision engine about the next
    /// attempt, through a store that holds this one context.
    fn new(prior: Beta, tally: Tally, model: CostModel) -> Result<Report, Error> {
        let internal = |e: &dyn core::fmt::Display| Error::Internal(format!("replay: {e}"));
        // No hierarchy and no decay: the posterior is exactly prior + counts, and
        // the fixed writer and hash seed keep the run reproducible.
        let store = StoreConfig::new()
            .with_prior(prior)
            .with_hierarchical_priors(false)
            .without_decay()
            .with_writer(WriterId::new(1))
            .with_hash_seed(0)
            .with_max_contexts(1)
            .build()
            .map_err(|e| internal(&e))?;
        let ctx = Context::new("replay", 1, ErrorClass::Unknown);
        // Counts up to 2^53 convert to f64 exactly.
        store.observe_weighted(&ctx, tally.successes() as f64, tally.failures() as f64, 0);
        let posterior = store.posterior(&ctx, 0);
        let engine = Config::new(model).build().map_err(|e| internal(&e))?;
        let decision = engine.decide(&store, &ctx, &bayesretry_decision::Situation::new(), 0);
        Ok(Report {
            tally,
            prior,
            posterior,
            interval: posterior.credible_interval(MASS),
            model,
            decision,
        })
    }

    fn text(&self) -> String {
        let t = &self.tally;
        let (lo, hi) = self.interval;
        let verdict = if self.decision.retry() {
            "retry"
        } else {
            "stop"
        };
        let p = self.decision.probability();
        let v = self.model.success_value();
        let c = self.model.attempt_cost();
        let compare = if self.decision.retry() { ">" } else { "<=" };
        let break_even = self.model.break_even_probability();
        // c / V at or above 1 is no probability: no retry can pay.
        let threshold = if break_even < 1.0 {
            format!("p {compare} break-even {}", prob(break_even))
        } else if break_even == 1.0 {
            String::from("break-even c / V = 1: no retry can pay")
        } else if break_even.is_finite() {
            format!(
                "break-even c / V = {} > 1: no retry can pay",
                num(break_even)
            )
        } else {
            String::from("break-even c / V > 1: no retry can pay")
        };
        format!(
            "outcomes      {} ({}, {})\n\
             prior         Beta({}, {})\n\
             posterior     Beta({}, {})\n\
             mean          {}\n\
             95% interval  [{}, {}]\n\
             strength      {}\n\
             next attempt  {verdict}: {} (p * V - c = {} * {} - {} = {}; {threshold})\n",
            t.total(),
            counted(t.successes(), "success", "successes"),
            counted(t.failures(), "failure", "failures"),
            num(self.prior.alpha()),
            num(self.prior.beta()),
            num(self.posterior.alpha()),
            num(self.posterior.beta()),
            prob(self.posterior.mean()),
            prob(lo),
            prob(hi),
            num(self.posterior.strength()),
            self.decision.reason(),
            prob(p),
            num(v),
            num(c),
            signed(self.decision.expected_value()),
        )
    }

    fn json(&self) -> ReplayJson {
        let (lo, hi) = self.interval;
        ReplayJson {
            outcomes: self.tally.total(),
            successes: self.tally.successes(),
            failures: self.tally.failures(),
            prior: BetaJson::of(&self.prior),
            posterior: PosteriorJson {
                alpha: self.posterior.alpha(),
                beta: self.posterior.beta(),
                mean: self.posterior.mean(),
                interval_95: [lo, hi],
                strength: self.posterior.strength(),
            },
            decision: DecisionJson {
                retry: self.decision.retry(),
                reason: self.decision.reason().to_string(),
                reason_name: bayesretry_audit::reason_name(self.decision.reason()),
                probability: self.decision.probability(),
                expected_value: self.decision.expected_value(),
                value: self.model.success_value(),
                cost: self.model.attempt_cost(),
                break_even: self.model.break_even_probability(),
            },
        }
    }
}

#[derive(Serialize)]
struct ReplayJson {
    outcomes: u64,
    successes: u64,
    failures: u64,
    prior: BetaJson,
    posterior: PosteriorJson,
    decision: DecisionJson,
}

#[derive(Serialize)]
struct BetaJson {
    alpha: f64,
    beta: f64,
}

impl BetaJson {
    fn of(beta: &Beta) -> BetaJson {
        BetaJson {
            alpha: beta.alpha(),
            beta: beta.beta(),
        }
    }
}

#[derive(Serialize)]
struct PosteriorJson {
    alpha: f64,
    beta: f64,
    mean: f64,
    interval_95: [f64; 2],
    strength: f64,
}

#[derive(Serialize)]
struct DecisionJson {
    retry: bool,
    /// The reason in words, for people: it may be reworded.
    reason: String,
    /// The reason's name in the audit log (`positive_expected_value`), which
    /// never changes: the field a script matches.
    reason_name: &'static str,
    probability: f64,
    expected_value: f64,
    value: f64,
    cost: f64,
    break_even: f64,
}

/// `n` and the noun for it: "1 success", "0 successes".
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use bayesretry_beta::Beta;
    use bayesretry_cost::CostModel;

    use super::{Report, counted};
    use crate::outcomes::Tally;

    #[test]
    fn one_of_a_kind_is_singular() {
        assert_eq!(counted(1, "success", "successes"), "1 success");
        assert_eq!(counted(0, "success", "successes"), "0 successes");
        assert_eq!(counted(2, "failure", "failures"), "2 failures");
    }

    #[test]
    fn the_posterior_is_the_prior_plus_the_counts() {
        let model = CostModel::new(10.0, 1.0).unwrap();
        let report = Report::new(Beta::new(2.0, 0.5).unwrap(), Tally::new(3, 4), model).unwrap();
        assert_eq!(report.posterior.alpha(), 5.0);
        assert_eq!(report.posterior.beta(), 4.5);
    }

    #[test]
    fn the_decision_follows_the_sign_of_the_expected_value() {
        let model = CostModel::new(10.0, 1.0).unwrap();
        // mean 1/12 < 0.1: not worth it
        let poor = Report::new(Beta::uniform(), Tally::new(0, 10), model).unwrap();
        assert!(!poor.decision.retry());
        assert!(
            poor.text()
                .contains("next attempt  stop: expected value not positive")
        );
        // mean 2/12 > 0.1: worth it
        let fair = Report::new(Beta::uniform(), Tally::new(1, 9), model).unwrap();
        assert!(fair.decision.retry());
        assert!(fair.text().contains("retry: positive expected value"));
    }

    #[test]
    fn a_break_even_of_1_or_more_says_no_retry_can_pay() {
        let text = |value, cost| {
            let model = CostModel::new(value, cost).unwrap();
            Report::new(Beta::uniform(), Tally::new(9, 1), model)
                .unwrap()
                .text()
        };
        assert!(text(1.0, 5.0).contains("; break-even c / V = 5 > 1: no retry can pay)\n"));
        assert!(text(2.0, 2.0).contains("; break-even c / V = 1: no retry can pay)\n"));
        assert!(text(1e-320, 1e300).contains("; break-even c / V > 1: no retry can pay)\n"));
        assert!(text(4.0, 1.0).contains("; p > break-even 0.2500)\n"));
    }
}
