//! Each schedule gives the delays its documentation states: constant, linear,
//! exponential (exact for integral factors) and a caller's function, with attempt 1
//! getting the base delay.

use core::time::Duration;

use bayesretry_backoff::{Config, Constant, Jitter, Linear};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn constant_gives_the_base_delay_every_time() {
    let backoff = Config::new()
        .with_schedule(Constant)
        .with_base_delay(ms(250))
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    for attempt in [0, 1, 2, 10, u32::MAX] {
        assert_eq!(backoff.delay(attempt, 0), ms(250));
    }
}

#[test]
fn linear_adds_one_step_per_attempt() {
    let backoff = Config::new()
        .with_schedule(Linear::new(ms(300)))
        .with_base_delay(ms(100))
        .with_max_delay(Duration::from_secs(1))
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    let delays: Vec<Duration> = (1..=5).map(|a| backoff.delay(a, 0)).collect();
    assert_eq!(delays, [ms(100), ms(400), ms(700), ms(1000), ms(1000)]);
}

#[test]
fn exponential_multiplies_by_the_factor_per_attempt() {
    let doubling = Config::new()
        .with_base_delay(ms(100))
        .with_max_delay(Duration::from_secs(10))
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    let delays: Vec<Duration> = (0..=9).map(|a| doubling.delay(a, 0)).collect();
    assert_eq!(
        delays,
        [
            ms(100),
            ms(100),
            ms(200),
            ms(400),
            ms(800),
            ms(1600),
            ms(3200),
            ms(6400),
            ms(10_000),
            ms(10_000)
        ]
    );

    let one_and_a_half = Config::new()
        .with_factor(1.5)
        .with_base_delay(ms(1024))
        .with_max_delay(Duration::from_secs(3600))
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    // 1.024 s · 1.5^10 = 59.049 s, exactly
    assert_eq!(one_and_a_half.delay(11, 0), ms(59_049));

    let tripling = Config::new()
        .with_factor(3.0)
        .with_base_delay(Duration::from_nanos(1))
        .with_max_delay(Duration::MAX)
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    // 3^40 ns, exact in integer arithmetic
    assert_eq!(
        tripling.delay(41, 0),
        Duration::from_nanos(12_157_665_459_056_928_801)
    );
}

#[test]
fn a_function_schedule_is_called_with_the_attempt_number() {
    fn table(attempt: u32) -> Duration {
        match attempt {
            0 | 1 => ms(10),
            2 => ms(50),
            _ => ms(5000),
        }
    }
    let backoff = Config::new()
        .with_schedule(table as fn(u32) -> Duration)
        .with_max_delay(Duration::from_secs(1))
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    assert_eq!(backoff.delay(1, 0), ms(10));
    assert_eq!(backoff.delay(2, 0), ms(50));
    assert_eq!(backoff.delay(3, 0), Duration::from_secs(1));
}

#[test]
fn a_capturing_closure_is_a_schedule() {
    let step = ms(7);
    let backoff = Config::new()
        .with_schedule(move |attempt: u32| step * attempt)
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    assert_eq!(backoff.delay(6, 0), ms(42));
    let delays: Vec<Duration> = backoff.delays(0).take(3).collect();
    assert_eq!(delays, [ms(7), ms(14), ms(21)]);
}

#[test]
fn the_default_config_is_half_a_second_doubling_to_thirty_with_full_jitter() {
    let config = Config::default();
    assert_eq!(config.base_delay(), ms(500));
    assert_eq!(config.max_delay(), Duration::from_secs(30));
    assert_eq!(config.schedule().factor(), 2.0);
    assert_eq!(config.jitter(), Jitter::Full);
    assert_eq!(config.max_retries(), None);
    assert_eq!(
        config.build().unwrap(),
        bayesretry_backoff::Backoff::default()
    );
}
