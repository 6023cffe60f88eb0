#![doc = include_str!("../README.md")]

extern crate alloc;

pub mod anchors;
pub mod storm;
