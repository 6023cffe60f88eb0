#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "alloc")]
extern crate alloc;

mod error;
mod lookup;
mod model;
#[cfg(feature = "alloc")]
mod table;

pub use error::Error;
pub use lookup::{CostLookup, EndpointCosts, NoOverrides};
pub use model::{CostModel, expected_value_of_retry};
#[cfg(feature = "alloc")]
pub use table::CostTable;
