//! How long an open breaker waits before its next probe when the cooldown is
//! paced by the value of a success ([`Config::with_value_paced_cooldown`]).
//!
//! # The trade
//!
//! An open breaker does not know when the endpoint comes back; only a probe can
//! tell it. Each probe made while the endpoint is still down costs an attempt,
//! `c`. Each call refused after the endpoint is back loses what the call would
//! have earned, `V − c`. Probing every `T` milliseconds, with calls arriving at
//! `r` per millisecond:
//!
//! - while the endpoint stays down, the probes cost `c / T` per millisecond;
//! - once it is back, on average `r · T / 2` calls are refused before the next
//!   probe closes the breaker: a loss of `r · T · (V − c) / 2`, once.
//!
//! If the outage still has `D` milliseconds to run, the total `D · c / T +
//! r · T · (V − c) / 2` is smallest at
//!
//! ```text
//! T = sqrt(2 · D · c / (r · (V − c)))
//! ```
//!
//! The breaker knows neither `D` nor, while it refuses calls, `r`. For `D` it
//! takes the scale-free guess that an outage will last about as long again as
//! it has lasted so far: the time since the breaker opened plus one half-life
//! of its evidence (the span the evidence that opened it describes). So the
//! probes start close together and spread out as the outage drags on, as
//! `sqrt(τ)` — gentler than doubling. For `r` it takes the call rate it
//! measured before it opened: with a half-life `h`, the decayed evidence is an
//! exponentially weighted count of outcomes, which after counting for a time
//! `a` at a steady rate weighs `r · h · (1 − 2^(−a/h)) / ln 2`; so
//! `r ≈ strength · ln 2 / (h · (1 − 2^(−a/h)))` at the moment it opens — the
//! plain count over `a` for a young count, `strength · ln 2 / h` for a settled
//! one.
//!
//! The consequences are the ones a user wants: a busy endpoint is probed often
//! in time but rarely per call (its refused calls would be many), a quiet one
//! seldom; a call worth a hundred attempts is probed for far more eagerly than
//! one worth two; and at `V ≤ c`, where a refused call loses nothing, the
//! breaker waits its longest cooldown. The result is clamped to
//! [`cooldown_ms`, `max_cooldown_ms`]: the floor keeps a probe's result time to
//! arrive, the ceiling bounds the wait on a quiet endpoint.
//!
//! [`Config::with_value_paced_cooldown`]: crate::Config::with_value_paced_cooldown

use crate::math;

/// `ln 2`, for the call rate that a decayed count of outcomes stands for.
const LN_2: f64 = core::f64::consts::LN_2;

/// The call rate, per millisecond, that decayed evidence of total weight
/// `strength`, counted for `age_ms` under a half-life of `half_life_ms`, stands
/// for; 0 without a half-life (a count that never decays measures no rate). An
/// age under 1 ms is read as 1 ms.
pub(crate) fn traffic_per_ms(strength: f64, age_ms: u64, half_life_ms: Option<u64>) -> f64 {
    match half_life_ms {
        Some(h) if h > 0 && strength > 0.0 => {
            let h = h as f64;
            let ages = age_ms.max(1) as f64 / h;
            // past 64 half-lives 2^(−a/h) is below half an ulp of 1, and 1
            // minus it is exactly 1: a settled count skips the power
            let filled = if ages >= 64.0 {
                1.0
            } else {
                1.0 - math::exp2(-ages)
            };
            // filled > 0 for any age ≥ 1 ms below ~2^52 half-lives; at worst the
            // settled reading
            if filled > 0.0 {
                strength * LN_2 / (h * filled)
            } else {
                strength * LN_2 / h
            }
        }
        _ => 0.0,
    }
}

/// The cooldown `T = sqrt(2 · D / (r · (V/c − 1)))` of the module documentation,
/// with `D = open_for_ms + half_life_ms`, clamped to `[floor_ms, ceiling_ms]`;
/// `None` when no call rate was measured (the caller falls back to its fixed
/// schedule). `success_value` is `V / c`.
pub(crate) fn paced_cooldown_ms(
    success_value: f64,
    open_for_ms: u64,
    half_life_ms: Option<u64>,
    traffic_per_ms: f64,
    floor_ms: u64,
    ceiling_ms: u64,
) -> Option<u64> {
    let half_life = half_life_ms?;
    if !(traffic_per_ms > 0.0) {
        return None;
    }
    let gain = success_value - 1.0;
    if !(gain > 0.0) {
        return Some(ceiling_ms);
    }
    let remaining = open_for_ms.saturating_add(half_life) as f64;
    let t = math::sqrt(2.0 * remaining / (traffic_per_ms * gain));
    // NaN cannot arise (every operand is finite and positive); an overflow to
    // infinity lands on the ceiling.
    if t >= ceiling_ms as f64 {
        Some(ceiling_ms)
    } else {
        Some((t as u64).max(floor_ms).min(ceiling_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::{paced_cooldown_ms, traffic_per_ms};

    #[test]
    fn the_rate_is_read_back_from_a_settled_count() {
        // 10 calls/s under a 10 s half-life settle at 10 · 10 / ln 2 ≈ 144.3.
        let strength = 10.0 * 10.0 / core::f64::consts::LN_2;
        let r = traffic_per_ms(strength, u64::MAX, Some(10_000));
        assert!((r - 0.01).abs() < 1e-12, "{r}");
        assert_eq!(traffic_per_ms(strength, 1_000, None), 0.0);
        assert_eq!(traffic_per_ms(0.0, 1_000, Some(10_000)), 0.0);
        // from 64 half-lives on the power is skipped, and the reading is the
        // one it would give: 1 − 2^(−64) is 1 in floating point
        assert_eq!(1.0 - crate::math::exp2(-64.0), 1.0);
        let settled = strength * core::f64::consts::LN_2 / 10_000.0;
        assert_eq!(traffic_per_ms(strength, 640_000, Some(10_000)), settled);
        let young = traffic_per_ms(strength, 639_999, Some(10_000));
        assert_eq!(young, settled, "2^(−63.9999) is below half an ulp too");
    }

    #[test]
    fn a_young_count_is_read_as_count_over_age() {
        // 30 outcomes in 3 s, barely decayed: about 10 a second
        let strength = 30.0 * (1.0 - 0.5_f64.powf(0.3)) / (0.3 * core::f64::consts::LN_2);
        let r = traffic_per_ms(strength, 3_000, Some(10_000));
        assert!((r - 0.01).abs() < 1e-12, "{r}");
        // a burst at one instant reads as a very high rate, not as no rate
        assert!(traffic_per_ms(5.0, 0, Some(10_000)) > 1.0);
    }

    #[test]
    fn the_cooldown_is_the_square_root_rule() {
        // r = 0.01/ms, V/c = 10, D = 0 + 10 000: sqrt(20 000 / 0.09) = 471.4
        assert_eq!(
            paced_cooldown_ms(10.0, 0, Some(10_000), 0.01, 1, 10_000),
            Some(471)
        );
        // four times as long to go (D = 40 000): twice the cooldown
        assert_eq!(
            paced_cooldown_ms(10.0, 30_000, Some(10_000), 0.01, 1, 10_000),
            Some(942)
        );
        // a success worth more is probed for sooner
        let dear = paced_cooldown_ms(100.0, 0, Some(10_000), 0.01, 1, 10_000);
        assert_eq!(dear, Some(142));
    }

    #[test]
    fn the_clamp_and_the_fallbacks_hold() {
        assert_eq!(paced_cooldown_ms(10.0, 0, None, 0.01, 1, 10_000), None);
        assert_eq!(
            paced_cooldown_ms(10.0, 0, Some(10_000), 0.0, 1, 10_000),
            None
        );
        // V ≤ c: nothing is lost by refusing, wait the longest
        assert_eq!(
            paced_cooldown_ms(1.0, 0, Some(10_000), 0.01, 1, 10_000),
            Some(10_000)
        );
        assert_eq!(
            paced_cooldown_ms(1e6, 0, Some(10_000), 10.0, 250, 10_000),
            Some(250)
        );
        assert_eq!(
            paced_cooldown_ms(1.5, u64::MAX, Some(10_000), 1e-9, 1, 10_000),
            Some(10_000)
        );
    }
}
