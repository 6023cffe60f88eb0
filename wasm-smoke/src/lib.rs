//! BayesRetry's no_std core, compiled to `wasm32-unknown-unknown` and exercised from
//! Node: the proof that the core runs where there is no operating system.
//!
//! The facade `bayesretry` with `default-features = false` is the edge build: the
//! Beta special functions, the decision engine, the breaker, the budget, the backoff,
//! decay and the store's context types, all `no_std`, with `libm` for float math and
//! no allocator. This crate exports a handful of plain functions over numbers (the
//! wasm ABI has nothing else) that make real decisions with those crates, and
//! `smoke.mjs` loads the module in Node and checks what they answer. `cargo xtask
//! wasm` builds it for size (opt-level "z", LTO), reports the module's size, fails
//! if it grows past 64 KiB, and runs the Node check.
//!
//! The store here is a fixed table of atomic counters behind the
//! [`PosteriorStore`](bayesretry::store::PosteriorStore) trait, which is what an
//! edge user without an allocator would write; with `std`, `MemoryStore` takes its
//! place.
//!
//! The functions are ordinary Rust too, so the same checks run natively as unit
//! tests:
//!
//! ```
//! use bayesretry_wasm_smoke as smoke;
//! smoke::smoke_reset();
//! for _ in 0..18 { smoke::smoke_observe(429, 1, 1); }
//! for _ in 0..2 { smoke::smoke_observe(429, 1, 0); }
//! assert_eq!(smoke::smoke_decide(429, 1, 10.0, 1.0), 1);
//! assert!((smoke::smoke_last_probability() - 19.0 / 22.0).abs() < 1e-12);
//! ```

#![cfg_attr(target_arch = "wasm32", no_std)]

mod exports;
mod table;

pub use exports::*;

/// On wasm a panic traps: the host sees a `RuntimeError: unreachable`. None of the
/// exported functions panics on any input; this only makes the module link.
#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}
