//! With the `rand` feature, `delay_from_rng` takes exactly one word from the
//! caller's generator and gives the delay the `u64` form gives for that word.

#![cfg(feature = "rand")]

use bayesretry_backoff::Config;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn one_word_per_delay_and_the_same_delay_as_the_u64_form() {
    let backoff = Config::new().build().unwrap();
    let mut rng = StdRng::seed_from_u64(2024);
    let mut twin = StdRng::seed_from_u64(2024);
    for attempt in 1..=50 {
        let delay = backoff.delay_from_rng(attempt, &mut rng);
        assert_eq!(delay, backoff.delay(attempt, twin.next_u64()));
    }
}

#[test]
fn a_trait_object_generator_works_too() {
    let backoff = Config::new().build().unwrap();
    let mut rng = StdRng::seed_from_u64(1);
    let rng: &mut dyn rand::Rng = &mut rng;
    assert!(backoff.delay_from_rng(3, rng) <= backoff.config().max_delay());
}
