//! A call's error, printed with its chain of causes as error reporters print
//! it, names each cause once: the message says what ended the call, the last
//! attempt's error is its source (typed, to downcast), and the `permanent`
//! mark adds no layer of its own.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::error::Error;
use core::fmt;

use bayesretry_backoff::Config;
use bayesretry_policy::{Classification, Classify, ErrorClass, RetryPolicy, permanent};

/// What went wrong underneath.
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection refused")
    }
}

impl Error for Refused {}

/// The operation's error, with a cause of its own.
#[derive(Debug)]
struct Upstream(Refused);

impl fmt::Display for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("upstream unavailable")
    }
}

impl Error for Upstream {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

impl Classify for Upstream {
    fn classify(&self) -> Classification {
        Classification::Retryable(ErrorClass::ConnectionRefused)
    }
}

/// The error and its causes, one message each, as `anyhow` prints with `{:#}`.
fn report(err: &dyn Error) -> Vec<String> {
    let mut messages = Vec::new();
    let mut next = Some(err);
    // a chain is finite; the cap only guards the test against a cycle
    while let Some(err) = next.filter(|_| messages.len() < 16) {
        messages.push(err.to_string());
        next = err.source();
    }
    messages
}

fn mentions(messages: &[String], needle: &str) -> usize {
    messages.iter().filter(|m| m.contains(needle)).count()
}

#[test]
fn a_call_that_gave_up_names_its_last_error_once_and_then_its_cause() {
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(2)
        .with_backoff(Config::new().with_base_delay(core::time::Duration::ZERO))
        .build()
        .unwrap();
    let err = policy
        .run_blocking("db", |_| Err::<(), _>(Upstream(Refused)))
        .unwrap_err();
    let messages = report(&err);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].starts_with("gave up after 2 attempt(s)"),
        "{messages:?}"
    );
    assert_eq!(
        mentions(&messages, "upstream unavailable"),
        1,
        "{messages:?}"
    );
    assert_eq!(mentions(&messages, "connection refused"), 1, "{messages:?}");
    // the source is the operation's own error, to downcast
    let source = err.source().unwrap();
    assert!(source.downcast_ref::<Upstream>().is_some());
}

#[test]
fn a_permanent_error_is_named_once() {
    let policy = RetryPolicy::fixed(3);
    let err = policy
        .run_blocking("db", |_| Err::<(), _>(permanent(Upstream(Refused))))
        .unwrap_err();
    let messages = report(&err);
    assert_eq!(
        messages,
        [
            "permanent error, not retried: tried again, it would fail the same way",
            "upstream unavailable",
            "connection refused"
        ]
    );
}
