#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod classify;
mod client;
mod config;
mod endpoint;
mod error;
mod exchange;
mod layer;
#[cfg(feature = "middleware")]
mod middleware;
mod request;
mod retry_after;

pub use classify::{classify_reqwest_error, classify_service_error};
pub use client::{RequestBuilder, RetryClient};
pub use config::{
    Config, DEFAULT_DRAIN_LIMIT, DEFAULT_DRAIN_TIMEOUT, DEFAULT_REFUSAL_STATUSES, IDEMPOTENCY_KEY,
    Idempotent, MaxElapsed, NotRetried, is_idempotent,
};
pub use endpoint::Target;
pub use error::{Error, Stop};
pub use layer::{ClassifyError, ResponseFuture, Retry, RetryLayer, Unclassified};
#[cfg(feature = "middleware")]
pub use middleware::{MiddlewareError, RetryMiddleware};
pub use request::Request;
/// The reqwest this crate wraps: a program whose own reqwest dependency is
/// another major version builds its [`RetryClient`] from this one.
pub use reqwest;
pub use retry_after::{
    ANTHROPIC_RATE_LIMIT_RESETS, RATE_LIMIT_RESETS, RETRY_AFTER_MS, parse_rate_limit_reset,
    parse_rate_limit_reset_at, parse_retry_after, parse_retry_after_ms, retry_after,
};
