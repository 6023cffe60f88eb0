//! Side-by-side benches of bayesretry-beta and statrs on identical inputs.
//!
//! Each benchmark evaluates one function over a fixed set of points (the same set
//! for both crates) and reports throughput in elements, so criterion's time per
//! element is the time per call. The sets are drawn from the accuracy grid of
//! `tests/data/` and split by parameter size; points where statrs returns NaN or
//! panics are left out of both sides so the comparison stays like for like.
//!
//! Run: `cargo bench -p bayesretry-beta` (or `cargo xtask bench`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;
use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand::distr::Distribution;
use rand::rngs::StdRng;

const GRID: [f64; 14] = [
    1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0, 1e3, 1e4, 1e5, 1e6,
];
const XS: [f64; 9] = [1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999];
const PS: [f64; 8] = [1e-10, 1e-3, 0.025, 0.05, 0.5, 0.95, 0.975, 0.999];

fn region(a: f64, b: f64) -> &'static str {
    let m = a.max(b);
    if m <= 10.0 {
        "small"
    } else if m < 1e4 {
        "moderate"
    } else {
        "large"
    }
}

fn statrs_ok(f: impl Fn() -> f64) -> bool {
    matches!(catch_unwind(AssertUnwindSafe(f)), Ok(v) if v.is_finite())
}

/// (a, b, x) points of one region where both libraries give a finite answer,
/// with x at fixed points and at the mean.
fn cdf_points(reg: &str) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for &a in &GRID {
        for &b in &GRID {
            if region(a, b) != reg {
                continue;
            }
            let mean = a / (a + b);
            for x in XS.iter().copied().chain([mean]) {
                if statrs_ok(|| statrs::function::beta::beta_reg(a, b, x)) {
                    out.push((a, b, x));
                }
            }
        }
    }
    out
}

fn inv_points(reg: &str) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for &a in &GRID {
        for &b in &GRID {
            if region(a, b) != reg {
                continue;
            }
            for &p in &PS {
                if statrs_ok(|| statrs::function::beta::inv_beta_reg(a, b, p)) {
                    out.push((a, b, p));
                }
            }
        }
    }
    out
}

fn bench_ln_gamma(c: &mut Criterion) {
    let xs: Vec<f64> = (0..200)
        .map(|i| 10f64.powf(-8.0 + 20.0 * i as f64 / 199.0))
        .collect();
    let mut g = c.benchmark_group("ln_gamma");
    g.throughput(Throughput::Elements(xs.len() as u64));
    g.bench_function("bayesretry", |bench| {
        bench.iter(|| {
            xs.iter()
                .map(|&x| bayesretry_beta::ln_gamma(black_box(x)))
                .sum::<f64>()
        })
    });
    g.bench_function("statrs", |bench| {
        bench.iter(|| {
            xs.iter()
                .map(|&x| statrs::function::gamma::ln_gamma(black_box(x)))
                .sum::<f64>()
        })
    });
    g.finish();
}

fn bench_inc_beta(c: &mut Criterion) {
    let mut g = c.benchmark_group("inc_beta");
    for reg in ["small", "moderate", "large"] {
        let pts = cdf_points(reg);
        g.throughput(Throughput::Elements(pts.len() as u64));
        g.bench_with_input(BenchmarkId::new("bayesretry", reg), &pts, |bench, pts| {
            bench.iter(|| {
                pts.iter()
                    .map(|&(a, b, x)| bayesretry_beta::inc_beta(black_box(a), b, x))
                    .sum::<f64>()
            })
        });
        g.bench_with_input(BenchmarkId::new("statrs", reg), &pts, |bench, pts| {
            bench.iter(|| {
                pts.iter()
                    .map(|&(a, b, x)| statrs::function::beta::beta_reg(black_box(a), b, x))
                    .sum::<f64>()
            })
        });
    }
    g.finish();
}

fn bench_inc_beta_inv(c: &mut Criterion) {
    let mut g = c.benchmark_group("inc_beta_inv");
    for reg in ["small", "moderate", "large"] {
        let pts = inv_points(reg);
        g.throughput(Throughput::Elements(pts.len() as u64));
        g.bench_with_input(BenchmarkId::new("bayesretry", reg), &pts, |bench, pts| {
            bench.iter(|| {
                pts.iter()
                    .map(|&(a, b, p)| bayesretry_beta::inc_beta_inv(black_box(a), b, p))
                    .sum::<f64>()
            })
        });
        g.bench_with_input(BenchmarkId::new("statrs", reg), &pts, |bench, pts| {
            bench.iter(|| {
                pts.iter()
                    .map(|&(a, b, p)| statrs::function::beta::inv_beta_reg(black_box(a), b, p))
                    .sum::<f64>()
            })
        });
    }
    // The slowest single points of the grid for bayesretry (found with the
    // accuracy_report example): each must stay under 3 µs.
    for &(a, b, p) in WORST_INV {
        let id = format!("a={a:e},b={b:e},p={p:e}");
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("bayesretry-worst", id), |bench| {
            bench.iter(|| bayesretry_beta::inc_beta_inv(black_box(a), black_box(b), black_box(p)))
        });
    }
    g.finish();
}

/// Slowest grid points of `inc_beta_inv` as measured by `examples/accuracy_report.rs`.
const WORST_INV: &[(f64, f64, f64)] = &[
    (2.0, 0.1, 0.05),
    (0.01, 50.0, 0.999),
    (50.0, 0.01, 1e-3),
    (1e6, 1e6, 0.5),
];

fn bench_sample(c: &mut Criterion) {
    let params = [
        (0.01, 0.01),
        (0.5, 0.5),
        (2.0, 5.0),
        (50.0, 30.0),
        (1e4, 2e4),
    ];
    let mut g = c.benchmark_group("sample");
    for &(a, b) in &params {
        let id = format!("{a}_{b}");
        let ours = bayesretry_beta::Beta::new(a, b).unwrap();
        let theirs = statrs::distribution::Beta::new(a, b).unwrap();
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("bayesretry", &id), |bench| {
            let mut rng = StdRng::seed_from_u64(42);
            bench.iter(|| ours.sample(&mut rng))
        });
        g.bench_function(BenchmarkId::new("statrs", &id), |bench| {
            let mut rng = StdRng::seed_from_u64(42);
            bench.iter(|| theirs.sample(&mut rng))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_ln_gamma,
    bench_inc_beta,
    bench_inc_beta_inv,
    bench_sample
);
criterion_main!(benches);
