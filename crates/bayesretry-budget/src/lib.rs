#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "std")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod budget;
mod denied;
mod error;
mod fixed_window;
mod ratio;
mod word;

pub use budget::Budget;
pub use denied::{Denied, Reason};
pub use error::Error;
#[cfg(feature = "std")]
pub use fixed_window::FixedWindowBudget;
pub use fixed_window::{FixedWindow, FixedWindowConfig, FixedWindowLedger};
#[cfg(feature = "std")]
pub use ratio::RatioBudget;
pub use ratio::{BUCKETS, Ratio, RatioConfig, RatioLedger};
