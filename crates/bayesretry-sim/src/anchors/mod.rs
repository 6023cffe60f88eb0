//! The external anchors of the benchmark specification §7: two published
//! simulations, reproduced to check the simulator and the backoff code against
//! results nobody on this project produced.
//!
//! - [A1](a1): jitter under contention (AWS Architecture Blog, 2015);
//! - [A2](a2): retry strategies against the failure rate (Brooker, 2022), then
//!   BayesRetry in the same model.

pub mod a1;
pub mod a2;
pub(crate) mod bayes;
pub(crate) mod queue;
pub(crate) mod rng;
