#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod canonical;
mod chain;
mod error;
mod hash;
mod jsonl;
mod lock;
mod log;
mod record;
mod scan;
mod seal;
mod summary;
mod trail;
mod verify;

pub use error::{Break, Broken, Discontinuity, Error, ParseError};
pub use hash::Hash;
pub use jsonl::{Durable, Fsync, JsonlWriter};
pub use log::{AuditLog, Entry};
pub use record::{Event, Record, class_name, reason_name};
pub use seal::Seal;
pub use summary::Summary;
pub use trail::{AuditObserver, AuditTrail, DEFAULT_CAPACITY, Sink, UnixClock};
pub use verify::{MAX_LINE_LEN, Verifier};
