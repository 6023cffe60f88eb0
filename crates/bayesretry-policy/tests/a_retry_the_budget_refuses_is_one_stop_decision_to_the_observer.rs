//! When every check passes but the retry budget then refuses the retry, the
//! observer sees one decision for that failure — the stop the call really
//! made — and not a retry that never happened followed by the stop. A retry the
//! caller vetoes is likewise one stop, with the reason `Vetoed`. A
//! cancellation is not a decision: a call cancelled during its attempt reports
//! the retry the policy decided, without asking the budget, then ends
//! `Cancelled`.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use std::sync::Mutex;

use bayesretry_decision::{Decision, Reason};
use bayesretry_policy::{
    HttpStatus, ManualClock, Observer, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};
use bayesretry_store::Context;

#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<(Reason, bool)>>>);

impl Observer for Decisions {
    fn on_decision(&self, decision: &Decision, _: &Context<'_>) {
        self.0
            .lock()
            .unwrap()
            .push((decision.reason(), decision.retry()));
    }
}

/// A classic policy whose budget grants one retry an hour, telling
/// `decisions` what it decides.
fn one_retry_of_budget_seen_by(decisions: &Decisions) -> RetryPolicy {
    common::one_retry_of_budget()
        .with_observer(decisions.clone())
        .build()
        .unwrap()
}

/// A call that fails once spends the budget's one retry; what `decisions`
/// saw of it is forgotten.
fn spend_the_one_retry(policy: &RetryPolicy, decisions: &Decisions) {
    let spent = policy.run_blocking("api", common::fails_once);
    assert_eq!(spent.ok(), Some(2));
    decisions.0.lock().unwrap().clear();
}

#[test]
fn the_observer_sees_only_the_budget_stop() {
    let decisions = Decisions::default();
    let policy = one_retry_of_budget_seen_by(&decisions);
    // the first call spends the budget's one retry
    spend_the_one_retry(&policy, &decisions);

    let refused = policy.run_blocking("api", |_| Err::<u32, _>(HttpStatus(503)));
    assert!(
        matches!(
            refused.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::BudgetExhausted { attempts: 1, .. })
        ),
        "{refused:?}"
    );
    let seen = decisions.0.lock().unwrap().clone();
    assert_eq!(seen, [(Reason::BudgetExhausted, false)]);
}

#[test]
fn a_retry_the_budget_allows_is_seen_once_as_a_retry() {
    let decisions = Decisions::default();
    let policy = one_retry_of_budget_seen_by(&decisions);

    let answer = policy.run_blocking("api", common::fails_once);
    assert_eq!(answer.ok(), Some(2));
    let seen = decisions.0.lock().unwrap().clone();
    assert_eq!(seen, [(Reason::Fixed, true)]);
}

#[test]
fn a_vetoed_retry_is_seen_once_as_a_vetoed_stop() {
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_observer(decisions.clone())
        .build()
        .unwrap();

    let vetoed = policy
        .call("api")
        .should_retry(|_| false)
        .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
    assert!(
        matches!(
            vetoed.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Stopped { attempts: 1, .. })
        ),
        "{vetoed:?}"
    );
    let seen = decisions.0.lock().unwrap().clone();
    assert_eq!(seen, [(Reason::Vetoed, false)]);
}

#[test]
fn a_call_cancelled_during_its_attempt_reports_the_retry_it_will_not_make() {
    let decisions = Decisions::default();
    let policy = one_retry_of_budget_seen_by(&decisions);
    // the budget's one retry is spent
    spend_the_one_retry(&policy, &decisions);

    let cancelled = common::cancelled_during_its_attempt(&policy);
    assert!(
        matches!(
            cancelled.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Cancelled { .. })
        ),
        "{cancelled:?}"
    );
    let seen = decisions.0.lock().unwrap().clone();
    assert_eq!(seen, [(Reason::Fixed, true)]);
}
