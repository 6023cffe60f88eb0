//! The one error type of this crate.

#[cfg(feature = "serde")]
use alloc::string::String;
use core::fmt;

use crate::writer::WriterId;

/// Why a `StoreConfig` or (with `serde`) a `Snapshot` was rejected.
///
/// Each variant carries the offending value so that the message names it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// `max_contexts` was zero.
    InvalidMaxContexts(usize),
    /// `shards` was zero, above 1024, or not a power of two.
    InvalidShards(usize),
    /// `max_borrowed` was NaN, infinite or negative.
    InvalidMaxBorrowed(f64),
    /// `max_endpoint_bytes` was zero.
    InvalidMaxEndpointBytes(usize),
    /// `writer` was [`WriterId::MIGRATED`], reserved for evidence that names no
    /// writer.
    ReservedWriter(WriterId),
    /// A snapshot's `version` is not one this crate reads.
    UnsupportedVersion(u32),
    /// A snapshot was not valid JSON of the expected shape, or held a value out
    /// of its domain; the message says where and what.
    #[cfg(feature = "serde")]
    InvalidSnapshot(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidMaxContexts(v) => write!(f, "max_contexts must be at least 1, got {v}"),
            Error::InvalidShards(v) => write!(
                f,
                "shards must be a power of two between 1 and 1024, got {v}"
            ),
            Error::InvalidMaxBorrowed(v) => {
                write!(f, "max_borrowed must be finite and >= 0, got {v}")
            }
            Error::InvalidMaxEndpointBytes(v) => {
                write!(f, "max_endpoint_bytes must be at least 1, got {v}")
            }
            Error::ReservedWriter(v) => write!(
                f,
                "writer {v} is reserved for migrated evidence; choose another id"
            ),
            Error::UnsupportedVersion(v) => {
                write!(f, "snapshot version must be 1, got {v}")
            }
            #[cfg(feature = "serde")]
            Error::InvalidSnapshot(why) => write!(f, "invalid snapshot: {why}"),
        }
    }
}

impl core::error::Error for Error {}
