#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "std")]
extern crate std;

mod decay;
mod error;
mod evidence;
mod half_life;
mod math;

pub use bayesretry_beta::Beta;
pub use decay::Decay;
pub use error::Error;
pub use evidence::{Evidence, Stamped};
pub use half_life::HalfLife;
