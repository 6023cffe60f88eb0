//! What the wrapper costs on a request that succeeds at once: a GET to a hyper
//! server on loopback, through plain reqwest and through `RetryClient`, side by
//! side in one run, on one current-thread tokio runtime that serves both.
//!
//! The policy is `RetryPolicy::new()`, learning and breaker on, as a user gets
//! it; the two clients are separate reqwest clients with their own connection
//! pools, each warmed before measuring.

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]
#![allow(
    clippy::expect_used,
    reason = "bench setup: a server that cannot start must stop the bench"
)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::hint::black_box;

use bayesretry_http::RetryClient;
use bayesretry_policy::RetryPolicy;
use criterion::{Criterion, criterion_group, criterion_main};
use support::{answer, serve};

fn loopback_get(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = runtime.block_on(serve(|_| answer(200, &[])));
    let url = server.url("/v1/models");
    let plain = reqwest::Client::new();
    let wrapped = RetryClient::new(reqwest::Client::new(), RetryPolicy::new());
    runtime.block_on(async {
        for _ in 0..100 {
            let a = plain.get(&url).send().await.expect("plain warm-up");
            let _ = a.bytes().await;
            let b = wrapped.get(&url).send().await.expect("wrapped warm-up");
            let _ = b.bytes().await;
        }
    });

    let mut group = c.benchmark_group("loopback_get_200");
    group.bench_function("reqwest", |b| {
        b.to_async(&runtime).iter(|| async {
            let response = plain.get(&url).send().await.expect("a response");
            black_box(response.bytes().await.expect("a body"))
        });
    });
    group.bench_function("bayesretry_http", |b| {
        b.to_async(&runtime).iter(|| async {
            let response = wrapped.get(&url).send().await.expect("a response");
            black_box(response.bytes().await.expect("a body"))
        });
    });
    group.finish();
}

criterion_group!(benches, loopback_get);
criterion_main!(benches);
