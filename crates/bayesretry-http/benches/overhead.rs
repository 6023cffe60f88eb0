//! What the wrapper costs on a request that succeeds at once: a GET to a hyper
//! server on loopback, through plain reqwest and through `RetryClient`, side by
//! side in one run, on one current-thread tokio runtime that serves both.
//!
//! The policy is `RetryPolicy::new()`, learning and breaker on, as a user gets
//! it; the two clients are separate reqwest clients with their own connection
//! pools, each warmed before measuring.
//!
//! The machine these run on is shared, and its load swings within seconds, far
//! more than the few per cent measured here. So the two are measured in pairs:
//! each iteration of either benchmark times one request of each client, in
//! alternating order, and hands criterion the time of its own. A swing in load
//! then falls on both sides alike, instead of on whichever benchmark happened to
//! run during it. Every pair is also summed, and after the group the bench prints
//! the paired ratio, wrapped over plain, over all pairs of both benchmarks: the
//! number to read on a busy machine.

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]
#![allow(
    clippy::expect_used,
    reason = "bench setup: a server that cannot start must stop the bench"
)]

extern crate alloc;

#[path = "../tests/support/mod.rs"]
mod support;

use alloc::sync::Arc;
use core::future::Future;
use core::hint::black_box;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::time::Instant;

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
            get_plain(&plain, &url).await;
            get_wrapped(&wrapped, &url).await;
        }
    });

    let totals = Arc::new(Totals::default());
    let mut group = c.benchmark_group("loopback_get_200");
    for (name, wrapped_side) in [("reqwest", false), ("bayesretry_http", true)] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter_custom(|iters| {
                let (plain, wrapped, url) = (plain.clone(), wrapped.clone(), url.clone());
                let totals = Arc::clone(&totals);
                async move {
                    let (mut plain_time, mut wrapped_time) = (Duration::ZERO, Duration::ZERO);
                    for i in 0..iters {
                        let (p, w) = if i % 2 == 0 {
                            let p = timed(get_plain(&plain, &url)).await;
                            (p, timed(get_wrapped(&wrapped, &url)).await)
                        } else {
                            let w = timed(get_wrapped(&wrapped, &url)).await;
                            (timed(get_plain(&plain, &url)).await, w)
                        };
                        plain_time += p;
                        wrapped_time += w;
                    }
                    totals.add(plain_time, wrapped_time, iters);
                    if wrapped_side {
                        wrapped_time
                    } else {
                        plain_time
                    }
                }
            });
        });
    }
    group.finish();
    totals.print();
}

/// Every pair timed, over both benchmarks.
#[derive(Default)]
struct Totals {
    plain_ns: AtomicU64,
    wrapped_ns: AtomicU64,
    pairs: AtomicU64,
}

impl Totals {
    fn add(&self, plain: Duration, wrapped: Duration, pairs: u64) {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.plain_ns.fetch_add(ns(plain), Ordering::Relaxed);
        self.wrapped_ns.fetch_add(ns(wrapped), Ordering::Relaxed);
        self.pairs.fetch_add(pairs, Ordering::Relaxed);
    }

    fn print(&self) {
        let pairs = self.pairs.load(Ordering::Relaxed).max(1) as f64;
        let plain = self.plain_ns.load(Ordering::Relaxed) as f64 / pairs / 1_000.0;
        let wrapped = self.wrapped_ns.load(Ordering::Relaxed) as f64 / pairs / 1_000.0;
        println!(
            "paired over {pairs} pairs: reqwest {plain:.2} µs, bayesretry_http {wrapped:.2} µs, \
             ratio {:.4}",
            wrapped / plain
        );
    }
}

/// How long `request` takes.
async fn timed(request: impl Future<Output = ()>) -> Duration {
    let start = Instant::now();
    request.await;
    start.elapsed()
}

/// One GET through plain reqwest, body read.
async fn get_plain(client: &reqwest::Client, url: &str) {
    let response = client.get(url).send().await.expect("a response");
    black_box(response.bytes().await.expect("a body"));
}

/// One GET through the wrapper, body read.
async fn get_wrapped(client: &RetryClient, url: &str) {
    let response = client.get(url).send().await.expect("a response");
    black_box(response.bytes().await.expect("a body"));
}

criterion_group!(benches, loopback_get);
criterion_main!(benches);
