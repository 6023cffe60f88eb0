//! The seed's example: forty observations at attempt 1 of endpoint "provider"
//! teach that a 429 recovers and a 500 does not.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

use bayesretry_policy::{Context, ErrorClass, Reason, RetryPolicy};

#[test]
fn forty_observations_teach_that_429_recovers_and_500_does_not() {
    let policy = RetryPolicy::builder().with_seed(1).build().unwrap();
    let rate_limited = Context::new("provider", 1, ErrorClass::Http(429));
    let server_error = Context::new("provider", 1, ErrorClass::Http(500));
    for i in 0..20 {
        // 429 recovers 18 times in 20, 500 once in 20
        policy.observe(&rate_limited, i % 10 != 0);
        policy.observe(&server_error, i == 0);
    }

    let yes = policy.should_retry(&rate_limited);
    assert!(yes.retry(), "{yes}");
    assert_eq!(yes.reason(), Reason::PositiveExpectedValue);
    assert!(yes.probability() > 0.8, "{yes}");

    let no = policy.should_retry(&server_error);
    assert!(!no.retry(), "{no}");
    assert_eq!(no.reason(), Reason::NegativeExpectedValue);
    assert!(no.probability() < 0.1, "{no}");
}
