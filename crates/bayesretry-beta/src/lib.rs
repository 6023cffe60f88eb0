#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "std")]
extern crate std;

mod beta;
mod change;
mod coefficients;
mod dd;
mod erf;
mod error;
mod gamma;
mod inc_beta;
mod inc_gamma;
mod inverse;
mod math;
#[cfg(feature = "rand")]
mod sample;

pub use beta::Beta;
pub use change::{
    CHANGE_HAZARD, ChangePoint, DOWN_SHARE, MEAN_TIME_BETWEEN_CHANGES_MS, hazard_per_run,
};
pub use error::Error;
pub use gamma::{ln_beta, ln_gamma};
pub use inc_beta::{inc_beta, inc_beta_complement};
pub use inverse::{inc_beta_inv, inc_beta_inv_complement};
