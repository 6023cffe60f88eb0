//! Runnable programs for newcomers to BayesRetry; see `examples/` in this package and
//! run one with `cargo run --release -p bayesretry-examples --example NAME`.
