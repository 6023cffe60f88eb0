//! A context that stops receiving outcomes decays too: its posterior widens back
//! toward the prior, so a context written off during an outage gets tried again.
#![allow(clippy::unwrap_used, reason = "test helpers build known-good values")]

use core::num::NonZeroU64;

use bayesretry_decay::{Beta, Decay, Evidence, HalfLife, Stamped};

fn decay() -> Decay {
    Decay::new(HalfLife::from_ms(NonZeroU64::new(30_000).unwrap()))
}

#[test]
fn an_outage_verdict_fades_without_new_outcomes() {
    let decay = decay();
    let prior = Beta::uniform();
    let mut seen = Stamped::EMPTY;
    for now in 0..50 {
        seen = decay.observe(seen, now, false);
    }
    // Right after the outage: confidently below 10 %.
    let verdict = decay.posterior(prior, seen, 50);
    assert!(verdict.upper_bound(0.95) < 0.1);
    // Nothing is observed for five minutes (ten half-lives): the upper bound is
    // back above one half, and the variance close to the prior's.
    let later = decay.posterior(prior, seen, 300_050);
    assert!(later.upper_bound(0.95) > 0.5);
    assert!((later.variance() - prior.variance()).abs() < 0.01);
    // The stored evidence itself is untouched: decay happens on read.
    assert_eq!(seen.evidence().failures() as u32, 49);
}

#[test]
fn new_outcomes_are_added_at_full_weight_after_decaying_the_old() {
    let decay = decay();
    let seen = Stamped::new(Evidence::new(8.0, 8.0).unwrap(), 0);
    let next = decay.observe(seen, 60_000, true);
    assert_eq!(next.at_ms(), 60_000);
    assert_eq!(next.evidence(), Evidence::new(3.0, 2.0).unwrap());
    // From a lagging clock: added undecayed, the stamp stays.
    let lagging = decay.observe(next, 10_000, false);
    assert_eq!(lagging.at_ms(), 60_000);
    assert_eq!(lagging.evidence(), Evidence::new(3.0, 3.0).unwrap());
}
