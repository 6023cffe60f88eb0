//! With the `tracing` feature, every call runs in a `DEBUG` span named
//! `bayesretry.call` with its endpoint, and every decision the call acts on is
//! an event inside that span with the endpoint, the attempt, the error class,
//! whether it retries, the reason, whether a hook vetoed it, the probability,
//! the expected value and the delay — on every path a call can take: a
//! learning policy, a classic one through the general loop, and a plain
//! classic one through its fast loops, async and blocking.
//!
//! What the events say is checked against what the policy's observer is told
//! (the decision and its context), and the delays against the sleeps the
//! virtual sleeper recorded. A plain classic policy has no observer (one would
//! take it off its fast loops), so its events are checked against those of the
//! same policy with an observer, which runs the general loop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]
#![cfg(feature = "tracing")]

extern crate alloc;

mod common;

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use core::fmt;
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bayesretry_backoff::Jitter;
use bayesretry_policy::{
    Builder, Classification, Classify, Context, Decision, ErrorClass, HttpStatus, ManualClock,
    Observer, Reason, RetryPolicy, VirtualSleeper,
};
use common::block_on;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The fields of a span or an event, each written as text: a string as it
/// is, anything else as its `Debug` form (for a value given as `%value`, its
/// `Display` form).
type Fields = BTreeMap<&'static str, String>;

struct FieldVisitor<'a>(&'a mut Fields);

impl Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
}

#[derive(Debug)]
struct SpanSeen {
    name: &'static str,
    fields: Fields,
}

#[derive(Debug)]
struct EventSeen {
    /// The span the event was in (1-based, as the ids given out), if any.
    span: Option<u64>,
    fields: Fields,
}

#[derive(Debug, Default)]
struct Seen {
    spans: Vec<SpanSeen>,
    events: Vec<EventSeen>,
    /// The spans entered and not yet left, innermost last.
    entered: Vec<u64>,
}

/// A subscriber that keeps every span and event, for one thread's test.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Seen>>);

impl Capture {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields::new();
        span.record(&mut FieldVisitor(&mut fields));
        let mut seen = self.seen();
        seen.spans.push(SpanSeen {
            name: span.metadata().name(),
            fields,
        });
        Id::from_u64(seen.spans.len() as u64)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut FieldVisitor(&mut fields));
        let mut seen = self.seen();
        let span = match event.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if event.is_contextual() => seen.entered.last().copied(),
            None => None,
        };
        seen.events.push(EventSeen { span, fields });
    }

    fn enter(&self, span: &Id) {
        self.seen().entered.push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut seen = self.seen();
        if let Some(at) = seen.entered.iter().rposition(|id| *id == span.into_u64()) {
            seen.entered.remove(at);
        }
    }
}

/// A decision the observer was told of, with its context.
#[derive(Clone, Debug)]
struct Told {
    decision: Decision,
    endpoint: String,
    attempt: u32,
    class: ErrorClass,
}

#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<Told>>>);

impl Observer for Decisions {
    fn on_decision(&self, decision: &Decision, ctx: &Context<'_>) {
        self.0.lock().unwrap().push(Told {
            decision: *decision,
            endpoint: ctx.endpoint().to_owned(),
            attempt: ctx.attempt(),
            class: ctx.error_class(),
        });
    }
}

impl Decisions {
    fn take(&self) -> Vec<Told> {
        core::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A failure that says when to retry: a 429 with a server's wait.
#[derive(Debug)]
struct Busy(Duration);

impl Classify for Busy {
    fn classify(&self) -> Classification {
        Classification::RetryAfter(ErrorClass::Http(429), self.0)
    }
}

/// An operation's failure: a status, or a 429 with a wait.
#[derive(Debug)]
enum Failure {
    Status(HttpStatus),
    Busy(Busy),
}

impl Classify for Failure {
    fn classify(&self) -> Classification {
        match self {
            Failure::Status(status) => status.classify(),
            Failure::Busy(busy) => busy.classify(),
        }
    }
}

/// The failure of attempt `attempt` of the test calls: a 503, then a 429
/// asking for 300 ms, then 503s; the fourth attempt succeeds.
fn failure(attempt: u32) -> Result<u32, Failure> {
    match attempt {
        1 | 3 => Err(Failure::Status(HttpStatus(503))),
        2 => Err(Failure::Busy(Busy(Duration::from_millis(300)))),
        _ => Ok(attempt),
    }
}

/// Every attempt fails with a 503.
fn always_503(_attempt: u32) -> Result<u32, Failure> {
    Err(Failure::Status(HttpStatus(503)))
}

/// A classic policy's builder: `attempts` in all, a backoff without jitter.
fn classic(attempts: u32) -> Builder {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_backoff(
            bayesretry_backoff::Config::new()
                .with_base_delay(Duration::from_millis(100))
                .with_jitter(Jitter::None),
        )
}

/// What one call traced: the fields of its span, and the fields of each
/// decision event, in order.
#[derive(Debug)]
struct Traced {
    span: Fields,
    decisions: Vec<Fields>,
}

/// How one call runs.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Async,
    Blocking,
}

/// Runs one call of `op` at `endpoint` under `policy`, in `mode`, with
/// `capture` as the thread's subscriber; what it traced, after checking that
/// it made exactly one span, the call's, and that every event it made is
/// inside it.
fn traced_call(
    capture: &Capture,
    policy: &RetryPolicy,
    endpoint: &str,
    mode: Mode,
    op: fn(u32) -> Result<u32, Failure>,
) -> Traced {
    let (spans_before, events_before) = {
        let seen = capture.seen();
        (seen.spans.len(), seen.events.len())
    };
    tracing::subscriber::with_default(capture.clone(), || match mode {
        Mode::Async => {
            let _ = block_on(policy.run(endpoint, |attempt| async move { op(attempt) }));
        }
        Mode::Blocking => {
            let _ = policy.run_blocking(endpoint, op);
        }
    });
    let seen = capture.seen();
    let spans = &seen.spans[spans_before..];
    assert_eq!(
        spans.len(),
        1,
        "{mode:?} {endpoint}: one span a call: {spans:?}"
    );
    let span = &spans[0];
    assert_eq!(span.name, "bayesretry.call", "{mode:?}");
    assert_eq!(
        span.fields.get("endpoint").map(String::as_str),
        Some(endpoint)
    );
    let id = (spans_before + 1) as u64;
    let events = &seen.events[events_before..];
    for event in events {
        assert_eq!(
            event.span,
            Some(id),
            "{mode:?} {endpoint}: an event outside the call's span: {event:?}"
        );
    }
    Traced {
        span: span.fields.clone(),
        decisions: events
            .iter()
            .filter(|event| event.fields.contains_key("reason"))
            .map(|event| event.fields.clone())
            .collect(),
    }
}

/// The fields every decision event carries, each with the value of the
/// decision the observer was told of.
fn assert_event_is_decision(event: &Fields, told: &Told, context: &str) {
    let field = |name: &str| {
        event
            .get(name)
            .unwrap_or_else(|| panic!("{context}: no `{name}` in {event:?}"))
            .as_str()
    };
    assert_eq!(field("endpoint"), told.endpoint, "{context}");
    assert_eq!(field("attempt"), told.attempt.to_string(), "{context}");
    assert_eq!(field("error_class"), told.class.to_string(), "{context}");
    assert_eq!(
        field("retry"),
        told.decision.retry().to_string(),
        "{context}"
    );
    assert_eq!(
        field("reason"),
        told.decision.reason().to_string(),
        "{context}"
    );
    // a veto turns the decision the observer is told into a stop for that reason
    assert_eq!(
        field("vetoed"),
        (told.decision.reason() == Reason::Vetoed).to_string(),
        "{context}"
    );
    assert_eq!(
        field("probability"),
        format!("{:?}", told.decision.probability()),
        "{context}"
    );
    assert_eq!(
        field("expected_value"),
        format!("{:?}", told.decision.expected_value()),
        "{context}"
    );
    assert!(
        field("delay_ms").parse::<u64>().is_ok(),
        "{context}: {event:?}"
    );
}

/// The delays of a call's retries, as its events give them: every retry's
/// `delay_ms`, which must be what the sleeper then slept, in whole
/// milliseconds (see [`whole_millis`]).
fn retry_delays(traced: &Traced) -> Vec<Duration> {
    traced
        .decisions
        .iter()
        .filter(|event| event.get("retry").map(String::as_str) == Some("true"))
        .map(|event| Duration::from_millis(event["delay_ms"].parse().unwrap()))
        .collect()
}

/// `delays` in whole milliseconds, as an event's `delay_ms` gives them (a
/// learning policy's jittered backoff has a fraction).
fn whole_millis(delays: &[Duration]) -> Vec<Duration> {
    delays
        .iter()
        .map(|delay| Duration::from_millis(u64::try_from(delay.as_millis()).unwrap()))
        .collect()
}

/// Runs the test calls on a policy with an observer, in `mode`: each
/// decision the observer is told of is one event, in the call's span, with
/// the decision's values, and each retry's delay is the sleep that followed.
/// The traces, for a comparison.
fn calls_match_the_observer(builder: Builder, endpoint: &str, mode: Mode) -> Vec<Traced> {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let decisions = Decisions::default();
    let policy = builder
        .with_virtual_time(sleeper.clone())
        .with_seed(7)
        .with_observer(decisions.clone())
        .build()
        .unwrap();
    let capture = Capture::default();
    let mut traces = Vec::new();
    for op in [failure as fn(u32) -> Result<u32, Failure>, always_503] {
        let slept_before = sleeper.delays().len();
        let traced = traced_call(&capture, &policy, endpoint, mode, op);
        let told = decisions.take();
        assert!(!told.is_empty(), "{mode:?} {endpoint}: no decision made");
        assert_eq!(
            traced.decisions.len(),
            told.len(),
            "{mode:?} {endpoint}: one event per decision: {:?} against {told:?}",
            traced.decisions
        );
        for (at, (event, told)) in traced.decisions.iter().zip(&told).enumerate() {
            let context = format!("{mode:?} {endpoint}, decision {at}");
            assert_event_is_decision(event, told, &context);
        }
        assert_eq!(
            retry_delays(&traced),
            whole_millis(&sleeper.delays()[slept_before..]),
            "{mode:?} {endpoint}: each retry's delay is the sleep that followed"
        );
        traces.push(traced);
    }
    traces
}

#[test]
fn a_learning_policy_traces_every_call_and_decision() {
    for mode in [Mode::Async, Mode::Blocking] {
        calls_match_the_observer(RetryPolicy::builder(), "learning", mode);
    }
}

#[test]
fn a_classic_policy_through_the_general_loop_traces_every_call_and_decision() {
    for mode in [Mode::Async, Mode::Blocking] {
        let traces = calls_match_the_observer(classic(4), "classic", mode);
        // the first call succeeds at its fourth attempt after three retries;
        // the second fails four times, and the fourth failure is a stop
        let counts: Vec<usize> = traces.iter().map(|traced| traced.decisions.len()).collect();
        assert_eq!(counts, [3, 4], "{mode:?}");
    }
}

#[test]
fn a_plain_classic_policy_s_fast_loops_trace_as_the_general_loop_does() {
    for mode in [Mode::Async, Mode::Blocking] {
        // the same policy with an observer runs the general loop, checked
        // against what its observer is told
        let general = calls_match_the_observer(classic(4), "classic", mode);
        // without one, the plain policy runs its fast loops
        let sleeper = VirtualSleeper::new(ManualClock::new(0));
        let policy = classic(4)
            .with_virtual_time(sleeper.clone())
            .with_seed(7)
            .build()
            .unwrap();
        let capture = Capture::default();
        for (op, expected) in [failure as fn(u32) -> Result<u32, Failure>, always_503]
            .into_iter()
            .zip(&general)
        {
            let slept_before = sleeper.delays().len();
            let traced = traced_call(&capture, &policy, "classic", mode, op);
            assert_eq!(traced.span, expected.span, "{mode:?}");
            assert_eq!(
                traced.decisions, expected.decisions,
                "{mode:?}: the fast loop's events are the general loop's"
            );
            assert_eq!(
                retry_delays(&traced),
                whole_millis(&sleeper.delays()[slept_before..])
            );
        }
    }
}

#[test]
fn a_server_s_wait_is_the_delay_of_its_event() {
    // the 429 of the second attempt asks for 300 ms, more than the backoff
    let traces = calls_match_the_observer(classic(4), "classic", Mode::Blocking);
    assert_eq!(
        retry_delays(&traces[0]),
        [
            Duration::from_millis(100),
            Duration::from_millis(300),
            Duration::from_millis(400)
        ]
    );
    assert_eq!(traces[0].decisions[1]["error_class"], "http-429");
}

#[test]
fn an_attempt_cut_off_by_its_timeout_is_a_decision_event_of_the_timeout_class() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let decisions = Decisions::default();
    let policy = classic(3)
        .with_attempt_timeout(Duration::from_secs(2))
        .with_virtual_time(sleeper)
        .with_observer(decisions.clone())
        .build()
        .unwrap();
    let capture = Capture::default();
    tracing::subscriber::with_default(capture.clone(), || {
        // the first attempt never ends: the timer, on virtual time, cuts it off
        let _ = block_on(policy.run("slow", |attempt| async move {
            if attempt == 1 {
                core::future::pending::<()>().await;
            }
            Ok::<_, HttpStatus>(attempt)
        }));
    });
    let told = decisions.take();
    let seen = capture.seen();
    assert_eq!(seen.spans.len(), 1);
    let events: Vec<&EventSeen> = seen
        .events
        .iter()
        .filter(|event| event.fields.contains_key("reason"))
        .collect();
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].class, ErrorClass::Timeout);
    assert_eq!(events.len(), 1, "{:?}", seen.events);
    assert_eq!(events[0].span, Some(1));
    assert_event_is_decision(&events[0].fields, &told[0], "timed out");
}

/// A blocking sleeper on a manual clock that, during the first wait of the
/// call it serves, runs `others` calls to the same endpoint that fail: the
/// failure run the waiting retry was decided on grows, and the retry is
/// judged again before it goes out.
struct FailuresDuringTheWait {
    clock: ManualClock,
    policy: std::sync::OnceLock<RetryPolicy>,
    others: u32,
    busy: core::sync::atomic::AtomicBool,
}

/// `Arc<FailuresDuringTheWait>` as the policy's blocking sleeper.
struct Shared(Arc<FailuresDuringTheWait>);

impl bayesretry_policy::BlockingSleeper for Shared {
    fn sleep_blocking(&self, delay: Duration) {
        use core::sync::atomic::Ordering;
        let this = &self.0;
        this.clock.advance(delay);
        if this.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(policy) = this.policy.get() {
            for _ in 0..this.others {
                let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
                this.clock.advance(Duration::from_millis(10));
            }
        }
    }
}

#[test]
fn a_retry_judged_again_before_it_went_out_is_a_decision_event_too() {
    let clock = ManualClock::new(0);
    let sleeper = Arc::new(FailuresDuringTheWait {
        clock: clock.clone(),
        policy: std::sync::OnceLock::new(),
        others: 6,
        busy: core::sync::atomic::AtomicBool::new(false),
    });
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .with_clock(clock.clone())
        .with_blocking_sleeper(Shared(Arc::clone(&sleeper)))
        .with_observer(decisions.clone())
        .with_seed(5)
        .build()
        .unwrap();
    common::healthy_minute(&policy, &clock);
    assert!(sleeper.policy.set(policy.clone()).is_ok());
    let _ = decisions.take();
    let capture = Capture::default();

    let mut attempts = 0_u32;
    tracing::subscriber::with_default(capture.clone(), || {
        let _ = policy.run_blocking("api", |_| {
            attempts += 1;
            Err::<(), _>(HttpStatus(503))
        });
    });

    // the outer call's retry never went out: judged again, it stopped
    assert_eq!(attempts, 1);
    let told = decisions.take();
    // the outer call's decisions: the retry, told before the wait, and the
    // stop it was judged again into, told last (the calls during the wait
    // were told in between)
    let (first, last) = (told.first().unwrap(), told.last().unwrap());
    assert!(first.decision.retry() && !last.decision.retry(), "{told:?}");
    // the outer call's span is the first made; the others' came after it
    assert_eq!(capture.seen().spans.len(), 7);
    assert_retry_then_its_stop(&capture, first, last, "the retry judged again");
}

/// The events of the first call `capture` saw (the others ran inside it,
/// during its wait, each in its own span): two decisions, the retry and the
/// stop that ended the call before the retry went out, each with the fields
/// the observer was told, the stop with no wait before it (it was not slept).
fn assert_retry_then_its_stop(capture: &Capture, retry: &Told, stop: &Told, what: &str) {
    let seen = capture.seen();
    let outer: Vec<&EventSeen> = seen
        .events
        .iter()
        .filter(|event| event.span == Some(1) && event.fields.contains_key("reason"))
        .collect();
    assert_eq!(outer.len(), 2, "{:?}", seen.events);
    assert_event_is_decision(&outer[0].fields, retry, "the retry");
    assert_event_is_decision(&outer[1].fields, stop, what);
    assert_eq!(outer[1].fields["delay_ms"], "0");
}

#[test]
fn a_retry_a_hook_vetoed_is_a_decision_event_that_says_so() {
    for mode in [Mode::Async, Mode::Blocking] {
        let decisions = Decisions::default();
        let policy = classic(4)
            .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
            .with_observer(decisions.clone())
            .build()
            .unwrap();
        let capture = Capture::default();
        tracing::subscriber::with_default(capture.clone(), || {
            let call = policy.call::<Failure>("vetoed").should_retry(|_| false);
            let _ = match mode {
                Mode::Async => block_on(call.run(|attempt| async move { always_503(attempt) })),
                Mode::Blocking => call.run_blocking(always_503),
            };
        });
        let told = decisions.take();
        let seen = capture.seen();
        let events: Vec<&EventSeen> = seen
            .events
            .iter()
            .filter(|event| event.fields.contains_key("reason"))
            .collect();
        assert_eq!(told.len(), 1, "{mode:?}: {told:?}");
        assert_eq!(told[0].decision.reason(), Reason::Vetoed, "{mode:?}");
        assert_eq!(events.len(), 1, "{mode:?}: {:?}", seen.events);
        assert_eq!(events[0].span, Some(1), "{mode:?}");
        assert_event_is_decision(&events[0].fields, &told[0], "vetoed");
        assert_eq!(events[0].fields["vetoed"], "true", "{mode:?}");
    }
}

#[test]
fn a_retry_a_server_s_hold_refuses_after_its_wait_is_a_decision_event_too() {
    let decisions = Decisions::default();
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(1_000)))
        .with_max_elapsed(Duration::from_secs(5))
        .with_observer(decisions.clone())
        .with_seed(5)
        .build()
        .unwrap();
    let capture = Capture::default();
    let mut attempts = 0_u32;
    tracing::subscriber::with_default(capture.clone(), || {
        let _ = policy.run_blocking("api", |_| {
            attempts += 1;
            // meanwhile another call is told to wait 9 s, past this call's
            // deadline: the hold refuses the retry this 429 is about to get
            let _ = policy
                .call::<Failure>("api")
                .run_blocking(|_| Err::<u32, _>(Failure::Busy(Busy(Duration::from_secs(9)))));
            Err::<u32, _>(Failure::Busy(Busy(Duration::from_secs(1))))
        });
    });
    assert_eq!(attempts, 1, "the retry never went out");
    let told = decisions.take();
    // the other call's stop, then this call's retry and its refusal
    assert_eq!(told.len(), 3, "{told:?}");
    let (retry, refused) = (&told[1], &told[2]);
    assert!(retry.decision.retry(), "{told:?}");
    assert_eq!(refused.decision.reason(), Reason::RetryAfterPastDeadline);
    // the outer call's span is the first made, the other call's the second
    assert_eq!(capture.seen().spans.len(), 2);
    assert_retry_then_its_stop(&capture, retry, refused, "the retry refused");
}
