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

use alloc::sync::Arc;
use std::sync::Mutex;

use bayesretry_budget::{FixedWindowBudget, FixedWindowConfig};
use bayesretry_decision::{Decision, Reason};
use bayesretry_policy::{
    CancelToken, HttpStatus, ManualClock, Observer, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper,
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

#[test]
fn the_observer_sees_only_the_budget_stop() {
    let one = FixedWindowConfig::new()
        .with_max_cost_per_window(1)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_budget(FixedWindowBudget::new(one))
        .with_observer(decisions.clone())
        .build()
        .unwrap();
    // the first call spends the budget's one retry
    let spent = policy.run_blocking("api", |attempt| {
        if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        }
    });
    assert_eq!(spent.ok(), Some(2));
    decisions.0.lock().unwrap().clear();

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
    let one = FixedWindowConfig::new()
        .with_max_cost_per_window(1)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_budget(FixedWindowBudget::new(one))
        .with_observer(decisions.clone())
        .build()
        .unwrap();

    let answer = policy.run_blocking("api", |attempt| {
        if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        }
    });
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
    let none = FixedWindowConfig::new()
        .with_max_cost_per_window(1)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_budget(FixedWindowBudget::new(none))
        .with_observer(decisions.clone())
        .build()
        .unwrap();
    // the budget's one retry is spent
    let spent = policy.run_blocking("api", |attempt| {
        if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        }
    });
    assert_eq!(spent.ok(), Some(2));
    decisions.0.lock().unwrap().clear();

    let token = CancelToken::new();
    let cancel = token.clone();
    let cancelled = policy.call("api").with_cancel(token).run_blocking(|_| {
        cancel.cancel("shutting down");
        Err::<u32, _>(HttpStatus(503))
    });
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
