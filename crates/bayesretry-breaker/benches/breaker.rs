//! `check` and `record` side by side with the `failsafe` crate's breaker, in the same
//! run.
//!
//! failsafe is the peer to beat: `is_call_permitted` is its check,
//! `on_success` / `on_error` its record, and `CircuitBreaker::call` the two around
//! a call. It is built with its default configuration (`Config::new().build()`),
//! the one its documentation starts from; that configuration reads the real clock
//! (`Instant::now`) on every recorded outcome, while this crate is told the time.
//!
//! Groups:
//! - `check/closed`: the hot path before every call to a healthy endpoint;
//! - `check/open`: refusing a call while the endpoint is down;
//! - `record/success`: a success on a closed breaker;
//! - `record/failure`: a failure on a closed breaker, healthy enough that the rule
//!   is settled by Cantelli's bound, and (`…-near-floor`) one close to opening,
//!   where the incomplete beta function is evaluated; each iteration starts from the
//!   same copied breaker;
//! - `call`: check then record a success, against failsafe's `call`.
//!
//! Run: `cargo bench -p bayesretry-breaker` (or `cargo xtask bench`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;
use core::num::NonZeroUsize;

use bayesretry_breaker::{Beta, Breaker, Config, KeyedBreaker, SharedBreaker, State};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use failsafe::CircuitBreaker;

const KEY: (&str, u32) = ("api.example.com", 7);

/// A closed breaker that has seen `successes` successes and `failures` failures.
fn warmed(config: Config, successes: u32, failures: u32) -> Breaker {
    let mut breaker = config.build().unwrap();
    for _ in 0..successes {
        let _ = breaker.record(0, true);
    }
    for _ in 0..failures {
        let _ = breaker.record(0, false);
    }
    assert_eq!(breaker.state(), State::Closed);
    breaker
}

/// A breaker that is open until far in the future.
fn opened() -> Breaker {
    let mut breaker = Config::new()
        .with_cooldown_ms(u64::MAX / 2)
        .with_max_cooldown_ms(u64::MAX / 2)
        .build()
        .unwrap();
    while breaker.record(1, false).is_none() {}
    breaker
}

fn failsafe_breaker() -> impl CircuitBreaker {
    failsafe::Config::new().build()
}

fn bench_check(c: &mut Criterion) {
    let mut g = c.benchmark_group("check/closed");
    let mut plain = warmed(Config::new(), 100, 3);
    g.bench_function("bayesretry", |b| b.iter(|| plain.check(black_box(1_000))));
    let shared = SharedBreaker::new(plain);
    g.bench_function("bayesretry-shared", |b| {
        b.iter(|| shared.check(black_box(1_000)))
    });
    let keyed = KeyedBreaker::new(plain, NonZeroUsize::new(1_024).unwrap());
    let _ = keyed.record(&KEY, 0, true);
    g.bench_function("bayesretry-keyed", |b| {
        b.iter(|| keyed.check(black_box(&KEY), black_box(1_000)))
    });
    let theirs = failsafe_breaker();
    g.bench_function("failsafe", |b| b.iter(|| theirs.is_call_permitted()));
    g.finish();

    let mut g = c.benchmark_group("check/open");
    let mut plain = opened();
    g.bench_function("bayesretry", |b| b.iter(|| plain.check(black_box(1_000))));
    let shared = SharedBreaker::new(plain);
    g.bench_function("bayesretry-shared", |b| {
        b.iter(|| shared.check(black_box(1_000)))
    });
    let theirs = failsafe_breaker();
    while theirs.is_call_permitted() {
        let _ = theirs.call(|| Err::<(), ()>(()));
    }
    g.bench_function("failsafe", |b| b.iter(|| theirs.is_call_permitted()));
    g.finish();
}

fn bench_record(c: &mut Criterion) {
    let mut g = c.benchmark_group("record/success");
    let mut plain = warmed(Config::new(), 100, 3);
    g.bench_function("bayesretry", |b| {
        b.iter(|| plain.record(black_box(1_000), black_box(true)))
    });
    let mut decaying = warmed(Config::new().with_half_life_ms(60_000), 100, 3);
    let mut now = 0_u64;
    g.bench_function("bayesretry-decay", |b| {
        b.iter(|| {
            now += 1;
            decaying.record(black_box(now), black_box(true))
        })
    });
    let shared = SharedBreaker::new(plain);
    g.bench_function("bayesretry-shared", |b| {
        b.iter(|| shared.record(black_box(1_000), black_box(true)))
    });
    // what the policy's run loop calls: counted without the lock or the time,
    // with a half-life too
    let shared_decaying = SharedBreaker::new(decaying);
    g.bench_function("bayesretry-shared-decay", |b| {
        b.iter(|| shared_decaying.record_success_with(|| black_box(1_000)))
    });
    let theirs = failsafe::Config::new().build();
    g.bench_function("failsafe", |b| b.iter(|| theirs.on_success()));
    g.finish();

    let mut g = c.benchmark_group("record/failure");
    let healthy = warmed(Config::new(), 100, 3);
    g.bench_function("bayesretry", |b| {
        b.iter_batched_ref(
            || healthy,
            |breaker| breaker.record(black_box(1_000), black_box(false)),
            BatchSize::SmallInput,
        )
    });
    // A prior that puts the success rate near the floor: every failure needs the
    // incomplete beta function (and none tips it over).
    let near_floor = Config::new().with_prior(Beta::new(3.0, 40.0).unwrap());
    let near = warmed(near_floor, 0, 10);
    g.bench_function("bayesretry-near-floor", |b| {
        b.iter_batched_ref(
            || near,
            |breaker| breaker.record(black_box(1_000), black_box(false)),
            BatchSize::SmallInput,
        )
    });
    // failsafe's default policy opens after five consecutive failures: alternate
    // with a success so that each measured failure is recorded on a closed breaker.
    let theirs = failsafe::Config::new().build();
    g.bench_function("failsafe-failure-then-success", |b| {
        b.iter(|| {
            theirs.on_error();
            theirs.on_success();
        })
    });
    let mut pair = warmed(Config::new(), 100, 3);
    g.bench_function("bayesretry-failure-then-success", |b| {
        b.iter(|| {
            let _ = pair.record(black_box(1_000), false);
            pair.record(black_box(1_000), true)
        })
    });
    g.finish();
}

fn bench_call(c: &mut Criterion) {
    let mut g = c.benchmark_group("call");
    let mut plain = warmed(Config::new(), 100, 3);
    g.bench_function("bayesretry", |b| {
        b.iter(|| {
            if plain.check(black_box(1_000)).is_allowed() {
                let _ = plain.record(black_box(1_000), black_box(true));
            }
        })
    });
    let shared = SharedBreaker::new(plain);
    g.bench_function("bayesretry-shared", |b| {
        b.iter(|| {
            if shared.check(black_box(1_000)).is_allowed() {
                let _ = shared.record(black_box(1_000), black_box(true));
            }
        })
    });
    let theirs = failsafe_breaker();
    g.bench_function("failsafe", |b| {
        b.iter(|| theirs.call(|| black_box(Ok::<(), ()>(()))))
    });
    g.finish();
}

criterion_group!(benches, bench_check, bench_record, bench_call);
criterion_main!(benches);
