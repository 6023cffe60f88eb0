#![doc = include_str!("../README.md")]
#![no_std]

mod change;
mod config;
mod decision;
mod engine;
mod error;
mod situation;
mod strategy;

pub use change::{CHANGE_HAZARD, DOWN_SHARE};
pub use config::Config;
pub use decision::{Decision, Reason};
pub use engine::DecisionEngine;
pub use error::Error;
pub use situation::Situation;
pub use strategy::Strategy;
