//! The ratio budget in steady traffic, on a manual clock: once the window has
//! filled, retries settle at `percent` of first attempts plus the floor — never
//! above, and not far below when every call wants a retry.

use bayesretry_budget::{Budget, RatioBudget, RatioConfig};

/// Runs `seconds` of traffic at `calls_per_sec` evenly spaced first attempts, each
/// followed by a retry request. Returns (first attempts, retries granted) per second.
fn run(budget: &RatioBudget, seconds: u64, calls_per_sec: u64) -> Vec<(u64, u64)> {
    let gap = 1_000 / calls_per_sec;
    (0..seconds)
        .map(|second| {
            let mut granted = 0;
            for call in 0..calls_per_sec {
                let now = second * 1_000 + call * gap;
                budget.deposit(now);
                if budget.try_spend(now + 1, 1).is_ok() {
                    granted += 1;
                }
            }
            (calls_per_sec, granted)
        })
        .collect()
}

#[test]
fn after_warm_up_retries_settle_at_the_percentage_plus_the_floor() {
    let rules = RatioConfig::new()
        .with_percent(20.0)
        .with_ttl_ms(10_000)
        .with_min_per_sec(2)
        .build()
        .unwrap();
    let budget = RatioBudget::new(rules);
    let per_second = run(&budget, 120, 100);
    // Skip the warm-up (the first ttl, when the floor is all there is to spend).
    let steady = &per_second[20..];
    let first: u64 = steady.iter().map(|&(f, _)| f).sum();
    let retries: u64 = steady.iter().map(|&(_, r)| r).sum();
    // 20 % of 100/s plus 2/s: 22 retries per second.
    let per_sec = retries as f64 / steady.len() as f64;
    assert!((21.0..=22.0).contains(&per_sec), "{per_sec} retries/s");
    assert!(retries * 100 <= first * 22);
    // Every 10-second window respects the allowance.
    for w in per_second.windows(10) {
        let d: u64 = w.iter().map(|&(f, _)| f).sum();
        let r: u64 = w.iter().map(|&(_, r)| r).sum();
        assert!(r <= rules.allowance(d), "{r} > {}", rules.allowance(d));
    }
}

#[test]
fn with_no_traffic_the_floor_alone_is_granted() {
    let budget = RatioBudget::new(RatioConfig::new().with_min_per_sec(3).build().unwrap());
    // 3/s over 10 s: 30 retries in any window, without a single first attempt.
    let granted = (0..100).filter(|_| budget.try_spend(0, 1).is_ok()).count();
    assert_eq!(granted, 30);
    assert_eq!(budget.balance(0), 0);
    // They stay spent for the whole window, then return.
    assert!(budget.try_spend(9_999, 1).is_err());
    assert!(budget.try_spend(10_000, 1).is_ok());
}

#[test]
fn an_outage_caps_the_extra_load_at_the_percentage() {
    // Failing calls that all want 3 retries: the budget turns the 4x of
    // "retry 3 times" into 1.2x once the floor is small against the traffic.
    let budget = RatioBudget::new(
        RatioConfig::new()
            .with_percent(20.0)
            .with_min_per_sec(0)
            .build()
            .unwrap(),
    );
    let mut attempts = 0_u64;
    let calls = 10_000_u64;
    for call in 0..calls {
        let now = call * 3; // 333 calls/s for 30 s
        budget.deposit(now);
        attempts += 1;
        for _ in 0..3 {
            if Budget::try_spend(&budget, now, 1).is_err() {
                break;
            }
            attempts += 1;
        }
    }
    let amplification = attempts as f64 / calls as f64;
    assert!(amplification <= 1.2, "{amplification}");
    assert!(amplification > 1.15, "{amplification}");
}

#[test]
fn a_refused_retry_is_not_counted() {
    let budget = RatioBudget::new(
        RatioConfig::new()
            .with_percent(100.0)
            .with_min_per_sec(0)
            .build()
            .unwrap(),
    );
    budget.deposit(0);
    assert!(budget.try_spend(0, 2).is_err());
    assert!(budget.try_spend(0, 1).is_ok());
    assert_eq!(budget.balance(0), 0);
}
