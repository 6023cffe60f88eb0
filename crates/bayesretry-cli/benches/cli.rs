//! Speed of the `bayesretry` subcommands, in-process.
//!
//! - `replay` is bounded by its outcome reader: reading ten million outcomes
//!   (20 MB of `1 0 ...`) from memory.
//! - `simulate --n 1000000`: the whole command (three policies over a million
//!   simulated calls, on two threads when the machine has them), output to a
//!   buffer.
//!
//! The targets for the whole commands are 2 s each.

use core::hint::black_box;

use bayesretry_cli::{Exit, read_outcomes, run};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Ten million outcomes, a pseudo-random mix of successes and failures.
fn ten_million_outcomes() -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut text = Vec::with_capacity(20_000_000);
    for i in 0..10_000_000_u64 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push(if state % 3 == 0 { b'0' } else { b'1' });
        text.push(if i % 20 == 19 { b'\n' } else { b' ' });
    }
    text
}

fn replay(c: &mut Criterion) {
    let text = ten_million_outcomes();
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.throughput(Throughput::Elements(10_000_000));
    group.bench_function("read_outcomes/10M", |b| {
        b.iter(|| read_outcomes(black_box(&text[..]), "<bench>"));
    });
    group.finish();
}

fn simulate(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1_000_000));
    group.bench_function("outage/1M calls", |b| {
        b.iter(|| {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let args = ["bayesretry", "simulate", "--n", "1000000", "--seed", "1"];
            let exit = run(black_box(args), &mut out, &mut err);
            assert_eq!(exit, Exit::Ok, "{}", String::from_utf8_lossy(&err));
            out
        });
    });
    group.finish();
}

criterion_group!(benches, replay, simulate);
criterion_main!(benches);
