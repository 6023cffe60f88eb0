//! A retry rule of the simulator's own (the baselines and the oracles) and the
//! loop that runs one call under it.

use core::cell::RefCell;

use crate::environment::{CallSpec, DEADLINE_US, Environment, Failure};
use crate::timeline::Timeline;
use crate::trace::RunLog;

/// Where a call stands after a failed attempt: what a rule may read.
#[derive(Clone, Copy, Debug)]
pub struct CallState {
    /// The call.
    pub call: CallSpec,
    /// Attempts made so far.
    pub attempts: u32,
    /// The failure of the last attempt.
    pub last: Failure,
    /// When the failure was seen, microseconds.
    pub now_us: u64,
    /// Product of `1 − s(t)` over the call's informative failures (the oracles' weight).
    pub fail_weight: f64,
    /// A slot a rule may keep per-call state in (B3's last retry cost).
    pub scratch: f64,
}

/// A retry rule: breaker or throttle admission, bookkeeping of outcomes, and
/// the decision after a failure.
pub trait Rule {
    /// The rule's name (B0, B2r, DP, ...).
    fn name(&self) -> &str;

    /// Attempts in all, the first included.
    fn max_attempts(&self) -> u32;

    /// Whether attempt `attempt` (1-based) of `call` may go out now; `false`
    /// fails the call without an attempt (a breaker or throttle refused it).
    fn admit(&mut self, call: &CallSpec, attempt: u32, now_us: u64) -> bool {
        let _ = (call, attempt, now_us);
        true
    }

    /// The outcome of an attempt (`success`), with the call's state.
    fn record(&mut self, state: &mut CallState, success: bool, now_us: u64) {
        let _ = (state, success, now_us);
    }

    /// After a failure: `Some(delay)` in microseconds to retry, `None` to stop.
    fn retry(&mut self, env: &Environment, state: &mut CallState) -> Option<u64>;

    /// Whether the rule's breaker for `endpoint` is open (a throttle is not a
    /// breaker: its refusals are probabilistic and happen outside outages too).
    fn breaker_open(&self, endpoint: u8) -> bool {
        let _ = endpoint;
        false
    }

    /// The predicted success probability of the retry just decided, for the
    /// calibration metric (oracles only).
    fn predicted(&self) -> Option<f64> {
        None
    }
}

/// Runs one call under `rule`, in virtual time, and logs it.
pub(crate) async fn drive(
    env: &Environment,
    timeline: &Timeline,
    rule: &RefCell<dyn Rule + '_>,
    call: CallSpec,
    log: &RefCell<RunLog>,
) {
    let deadline = call.arrival_us.saturating_add(DEADLINE_US);
    let max_attempts = rule.borrow().max_attempts().max(1);
    let mut state = CallState {
        call,
        attempts: 0,
        last: Failure::Transient5xx(500),
        now_us: call.arrival_us,
        fail_weight: 1.0,
        scratch: 0.0,
    };
    let mut success = false;
    let mut refused = false;
    let mut failed_retries = 0;
    let mut early = 0;
    let mut ra_expiry = 0_u64;
    let mut predicted: Option<f64> = None;
    // bounded by max_attempts
    for attempt in 1..=max_attempts {
        let now = timeline.now_us();
        if attempt > 1 && now > deadline {
            break;
        }
        if !rule.borrow_mut().admit(&call, attempt, now) {
            refused = true;
            log.borrow_mut().refusals.push((now, call.endpoint));
            break;
        }
        if attempt > 1 {
            let mut l = log.borrow_mut();
            l.retries.push((now, call.endpoint));
            if now < ra_expiry {
                early += 1;
            }
        }
        let outcome = env.attempt(&call, attempt, now);
        timeline.wait_us(outcome.latency_us).await;
        let end = timeline.now_us();
        state.attempts = attempt;
        state.now_us = end;
        let ok = outcome.failure.is_none();
        if let Some(p) = predicted.take() {
            log.borrow_mut().note_brier(call.endpoint, p, ok);
        }
        rule.borrow_mut().record(&mut state, ok, end);
        if !ok && rule.borrow().breaker_open(call.endpoint) {
            log.borrow_mut().breaker_opens.push((end, call.endpoint));
        }
        let Some(failure) = outcome.failure else {
            success = true;
            break;
        };
        if attempt > 1 {
            failed_retries += 1;
        }
        state.fail_weight *= env.failure_factor(&call, now);
        state.last = failure;
        if let Failure::RateLimited429 {
            retry_after_s: Some(s),
        } = failure
        {
            ra_expiry = end.saturating_add(s.saturating_mul(crate::scenario::SECOND));
        }
        if attempt >= max_attempts {
            break;
        }
        let decision = rule.borrow_mut().retry(env, &mut state);
        let Some(delay) = decision else {
            break;
        };
        if end.saturating_add(delay) > deadline {
            break;
        }
        predicted = rule.borrow().predicted();
        if delay > 0 {
            timeline.wait_us(delay).await;
        }
    }
    let end = timeline.now_us();
    let mut l = log.borrow_mut();
    if let Some(rec) = l.call_mut(call.id) {
        *rec = crate::trace::CallRecord {
            endpoint: call.endpoint,
            shard: call.shard,
            arrival_us: call.arrival_us,
            end_us: end,
            attempts: state.attempts,
            success,
            failed_retries,
            early_retries: early,
            refused,
            done: true,
        };
    }
}
