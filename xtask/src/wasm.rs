//! `cargo xtask wasm`: the edge build of the core, compiled to
//! `wasm32-unknown-unknown` for size and run in Node.
//!
//! The module is `bayesretry-wasm-smoke` (the facade with default features off plus
//! a few exported functions), built with the `wasm` profile of the workspace
//! (opt-level "z", LTO, one codegen unit, abort on panic): what a user shipping the
//! core to a browser or an edge runtime would build. `wasm-smoke/smoke.mjs` then
//! loads it in Node, makes real decisions with it and checks them, and fails if the
//! module is larger than [`MAX_BYTES`].

use std::path::PathBuf;

use crate::step::Step;

/// The size the edge build must stay within: 64 KiB.
pub(crate) const MAX_BYTES: u32 = 64 * 1024;

const TARGET: &str = "wasm32-unknown-unknown";

/// Build the module, then run the Node check on it.
pub(crate) fn steps() -> Vec<Step> {
    let module = target_dir()
        .join(TARGET)
        .join("wasm")
        .join("bayesretry_wasm_smoke.wasm");
    vec![
        Step::cargo(
            "wasm build",
            [
                "build",
                "-p",
                "bayesretry-wasm-smoke",
                "--target",
                TARGET,
                "--profile",
                "wasm",
            ],
        )
        .hint("add the target with `rustup target add wasm32-unknown-unknown`"),
        Step::program(
            "wasm smoke test (node)",
            "node",
            [
                "wasm-smoke/smoke.mjs".into(),
                module.into_os_string(),
                "--max-bytes".into(),
                MAX_BYTES.to_string().into(),
            ],
        )
        .hint("Node.js is required: `apt-get install nodejs`"),
    ]
}

/// Cargo's target directory: `CARGO_TARGET_DIR` if set (relative to the workspace
/// root, where every step runs), else `target`.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from)
}
