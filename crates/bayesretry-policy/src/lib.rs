#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod call;
mod cancel;
mod classify;
mod clock;
mod endpoint;
mod error;
mod observer;
mod policy;
mod readable;
mod retry_after;
mod rng;
mod run;
mod sleep;
mod timer;

pub use call::{Call, FailedAttempt, Retried};
pub use cancel::{CancelToken, Cancelled};
pub use classify::{
    Classification, Classify, HttpStatus, Permanent, classify_io_kind, classify_status, permanent,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use endpoint::Endpoint;
pub use error::{Error, RetryError, RetryErrorKind};
pub use observer::Observer;
pub use policy::{
    Builder, DEFAULT_ATTEMPT_COST, DEFAULT_BREAKER_HALF_LIFE, DEFAULT_BREAKER_MAX_COOLDOWN,
    DEFAULT_BREAKER_MIN_COOLDOWN, DEFAULT_EVIDENCE_HALF_LIFE, DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_RETRY_AFTER, DEFAULT_OPEN_BELOW_RANGE, DEFAULT_SUCCESS_VALUE,
    MAX_UNCOUNTED_FAILURES, RetryPolicy, WAIT_WHILE_OPEN_POLL, default_breaker, default_store,
};
pub use readable::ReadableDuration;
pub use retry_after::{
    parse_rate_limit_reset, parse_rate_limit_reset_at, parse_retry_after, parse_retry_after_ms,
};
#[cfg(feature = "tokio")]
pub use sleep::TokioSleeper;
pub use sleep::{BlockingSleeper, Sleeper, ThreadSleeper, VirtualSleeper};

pub use bayesretry_decision::{Decision, Reason, Strategy};
pub use bayesretry_store::{Context, ErrorClass};
