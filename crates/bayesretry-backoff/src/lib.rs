#![doc = include_str!("../README.md")]
#![no_std]

mod backoff;
mod config;
mod delays;
mod error;
mod jitter;
mod mix;
mod nanos;
mod power;
mod schedule;

pub use backoff::Backoff;
pub use config::Config;
pub use delays::Delays;
pub use error::Error;
pub use jitter::Jitter;
pub use schedule::{Constant, Exponential, Linear, Schedule};
