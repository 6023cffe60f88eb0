//! [`Record`] and [`Event`]: what one entry of the log says.

use bayesretry_decision::{Decision, Reason};
use bayesretry_store::{Context, ErrorClass};

use crate::canonical::{self, View};
use crate::hash::Hash;

/// One thing that happened, as the log keeps it: a time and an [`Event`].
///
/// Records hold plain owned values (strings and numbers), not the policy's types,
/// because a log outlives the program that wrote it: a record read back from a
/// file in another process, or by a verifier in another language, must mean the
/// same without the types that made it.
///
/// ```
/// use bayesretry_audit::{Event, Record};
/// use bayesretry_decision::{Decision, Reason};
/// use bayesretry_store::{Context, ErrorClass};
///
/// let ctx = Context::new("api.example.com", 2, ErrorClass::Http(503));
/// let record = Record::decision(1_700_000_000_000, &ctx, &Decision::stop(Reason::MaxAttempts));
/// match record.event() {
///     Event::Decision { endpoint, attempt, error_class, retry, reason, .. } => {
///         assert_eq!((endpoint.as_str(), *attempt, error_class.as_str()), ("api.example.com", 2, "http-503"));
///         assert!(!retry);
///         assert_eq!(reason, "max_attempts");
///     }
///     _ => unreachable!(),
/// }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    time_ms: u64,
    event: Event,
}

/// What a [`Record`] says happened.
///
/// The fields are named as in the canonical form (`docs/SPEC.md`, "Audit log").
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The policy decided whether to retry after attempt `attempt` to `endpoint`
    /// failed with `error_class`.
    Decision {
        /// The endpoint, as the caller named it.
        endpoint: String,
        /// The attempt that just failed, 1-based.
        attempt: u32,
        /// How it failed: the class's display name (`http-429`, `timeout`, ...).
        error_class: String,
        /// Whether one more attempt was decided.
        retry: bool,
        /// The success probability the decision rested on (`0.0` for a hard check).
        probability: f64,
        /// The expected value of retrying (`0.0` for a hard check).
        expected_value: f64,
        /// Why, as a snake_case name ([`reason_name`]).
        reason: String,
    },
    /// The attempt after (`endpoint`, `attempt`, `error_class`) ended and the
    /// policy learned from it.
    Outcome {
        /// The endpoint, as the caller named it.
        endpoint: String,
        /// The attempt that had failed before the one that ended, 1-based.
        attempt: u32,
        /// How that attempt had failed.
        error_class: String,
        /// Whether the attempt after it succeeded.
        success: bool,
    },
    /// `count` records were lost before reaching the log (the queue of an
    /// [`AuditTrail`](crate::AuditTrail) was full, or its writer had stopped).
    ///
    /// The log says so itself, so that a reader of the file alone knows it is
    /// incomplete, and by how much.
    Dropped {
        /// How many records were lost since the previous `Dropped` entry.
        count: u64,
    },
    /// The log goes on from another file: this entry is the first of a file
    /// that continues the chain of the file before it, whose last entry has
    /// hash `prev` (and whose entries number this entry's sequence number).
    ///
    /// It exists for rotation ([`JsonlWriter::rotate`](crate::JsonlWriter::rotate)):
    /// a log's entries only carry their own hash, so without it the first
    /// entry of a rotated-to file could be checked only by someone holding
    /// the file before it, and a file deleted or swapped from the middle of a
    /// set would leave no trace. With it, each file says where it starts, a
    /// file alone verifies from that link on, and a set verified in order
    /// ([`Verifier::verify_files`](crate::Verifier::verify_files)) checks each
    /// link against the end of the file before it.
    ///
    /// Entries of this kind appear in logs written by this version on; a
    /// verifier of an earlier version refuses them as an unknown event.
    Continues {
        /// The hash of the last entry of the file before.
        prev: Hash,
    },
}

impl Record {
    /// A record of `event` at `time_ms`, milliseconds since the Unix epoch.
    pub const fn new(time_ms: u64, event: Event) -> Record {
        Record { time_ms, event }
    }

    /// A record of the policy's `decision` for `ctx`.
    pub fn decision(time_ms: u64, ctx: &Context<'_>, decision: &Decision) -> Record {
        Record::new(
            time_ms,
            Event::Decision {
                endpoint: ctx.endpoint().to_owned(),
                attempt: ctx.attempt(),
                error_class: class_name(ctx.error_class()),
                retry: decision.retry(),
                probability: decision.probability(),
                expected_value: decision.expected_value(),
                reason: reason_name(decision.reason()).to_owned(),
            },
        )
    }

    /// A record of the outcome of the attempt after `ctx`.
    pub fn outcome(time_ms: u64, ctx: &Context<'_>, success: bool) -> Record {
        Record::new(
            time_ms,
            Event::Outcome {
                endpoint: ctx.endpoint().to_owned(),
                attempt: ctx.attempt(),
                error_class: class_name(ctx.error_class()),
                success,
            },
        )
    }

    /// When it happened: milliseconds since the Unix epoch (or whatever the
    /// writer's clock counts; the log only requires a `u64`).
    pub const fn time_ms(&self) -> u64 {
        self.time_ms
    }

    /// What happened.
    pub const fn event(&self) -> &Event {
        &self.event
    }

    /// The canonical form of this record as entry `seq` of a log: the exact
    /// bytes that are hashed (`docs/SPEC.md`, "Audit log").
    ///
    /// ```
    /// use bayesretry_audit::{Event, Record};
    ///
    /// let record = Record::new(5, Event::Dropped { count: 3 });
    /// assert_eq!(
    ///     record.canonical(0),
    ///     br#"{"v":1,"seq":0,"time_ms":5,"event":"dropped","count":3}"#,
    /// );
    /// ```
    pub fn canonical(&self, seq: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        canonical::write(seq, &self.view(), &mut out);
        out
    }

    /// The borrowed view the canonical writer reads.
    pub(crate) fn view(&self) -> View<'_> {
        View {
            time_ms: self.time_ms,
            event: match &self.event {
                Event::Decision {
                    endpoint,
                    attempt,
                    error_class,
                    retry,
                    probability,
                    expected_value,
                    reason,
                } => canonical::EventView::Decision {
                    endpoint,
                    attempt: *attempt,
                    class: error_class,
                    retry: *retry,
                    p_bits: probability.to_bits(),
                    ev_bits: expected_value.to_bits(),
                    reason,
                },
                Event::Outcome {
                    endpoint,
                    attempt,
                    error_class,
                    success,
                } => canonical::EventView::Outcome {
                    endpoint,
                    attempt: *attempt,
                    class: error_class,
                    success: *success,
                },
                Event::Dropped { count } => canonical::EventView::Dropped { count: *count },
                Event::Continues { prev } => canonical::EventView::Continues { prev: *prev },
            },
        }
    }
}

/// The name a [`Reason`] has in the log: its variant in snake_case
/// (`positive_expected_value`, `max_attempts`, `circuit_open`, ...).
///
/// Not the reason's `Display` text, which is prose meant for people and may be
/// reworded; these names are part of the log format and never change.
pub fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::PositiveExpectedValue => "positive_expected_value",
        Reason::NegativeExpectedValue => "negative_expected_value",
        Reason::MaxAttempts => "max_attempts",
        Reason::Deadline => "deadline",
        Reason::CircuitOpen => "circuit_open",
        Reason::BudgetExhausted => "budget_exhausted",
        Reason::PermanentError => "permanent_error",
        Reason::RetryAfterBeyondLimit => "retry_after_beyond_limit",
        Reason::RetryAfterPastDeadline => "retry_after_past_deadline",
        Reason::Fixed => "fixed",
        Reason::Vetoed => "vetoed",
        // a reason added to the decision crate after this one was written
        _ => "other",
    }
}

/// The name an [`ErrorClass`] has in the log: its display name (`http-429`,
/// `timeout`, `connection-refused`, a custom class's own name, ...).
pub fn class_name(class: ErrorClass) -> String {
    match class {
        ErrorClass::Custom(name) => name.to_owned(),
        other => other.to_string(),
    }
}
