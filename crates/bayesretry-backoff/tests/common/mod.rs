//! Strategies shared by the property tests.

use bayesretry_backoff::Jitter;
use proptest::prelude::*;

/// Every jitter, with its parameters drawn over their whole range.
pub(crate) fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        (0.0..=1.0_f64).prop_map(Jitter::Proportional),
        any::<u64>().prop_map(|key| Jitter::Hashed { key }),
    ]
}
