//! Durations as whole nanoseconds in a `u128`, where no delay this crate computes
//! can overflow: `Duration::MAX` is below 2^94 ns, so sums and products of two such
//! counts with a 32-bit attempt number still fit.

use core::time::Duration;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// `d` in nanoseconds, exactly.
#[inline]
pub(crate) const fn of(d: Duration) -> u128 {
    d.as_nanos()
}

/// The duration of `n` nanoseconds, or `Duration::MAX` when `n` is longer.
#[inline]
pub(crate) fn to_duration(n: u128) -> Duration {
    // Below 2^64 ns (584 years), the division is a 64-bit one, which compiles to a
    // multiplication; a 128-bit division is a slow library call.
    if let Ok(n) = u64::try_from(n) {
        return from_u64(n);
    }
    let subsec = (n % NANOS_PER_SEC) as u32;
    match u64::try_from(n / NANOS_PER_SEC) {
        // `subsec` is below one second, so `Duration::new` cannot carry over.
        Ok(secs) => Duration::new(secs, subsec),
        Err(_) => Duration::MAX,
    }
}

/// The duration of `n` nanoseconds, as `Duration::from_nanos(n)`, without its
/// division when `n` is under a second: the first delays of a schedule
/// usually are, and the division (a multiplication by a reciprocal and a
/// correction) sits on the retry path right after the jitter's own
/// multiplication.
#[inline(always)]
pub(crate) fn from_u64(n: u64) -> Duration {
    match u32::try_from(n) {
        // below one second: no carry, `Duration::new` makes no division
        Ok(subsec) if u128::from(subsec) < NANOS_PER_SEC => Duration::new(0, subsec),
        _ => Duration::from_nanos(n),
    }
}

/// `lo + ⌊(hi - lo) · random / 2^64⌋`: a point of `[lo, hi)` chosen by `random`
/// (just `lo` when `hi <= lo`). Integer arithmetic throughout, so every `random`
/// maps to exactly one delay and equal inputs give equal delays on every target.
#[inline]
pub(crate) fn between(lo: u128, hi: u128, random: u64) -> u128 {
    lo + fraction(hi.saturating_sub(lo), random)
}

/// `⌊x · r / 2^64⌋` for a 64-bit `x`: the high word of one 64-by-64-bit
/// product, at most `x` and so exact in 64 bits.
#[inline]
pub(crate) fn fraction_u64(x: u64, r: u64) -> u64 {
    // the product is below 2^128 and its high word below 2^64
    ((u128::from(x) * u128::from(r)) >> 64) as u64
}

/// `⌊x · r / 2^64⌋`, which is at most `x`. Splitting `x` into 64-bit halves keeps
/// both products below 2^128.
#[inline]
fn fraction(x: u128, r: u64) -> u128 {
    let r = u128::from(r);
    let high = x >> 64;
    let low = x & u128::from(u64::MAX);
    high * r + ((low * r) >> 64)
}

#[cfg(test)]
mod tests {
    use super::{between, fraction, fraction_u64, from_u64, of, to_duration};
    use core::time::Duration;

    #[test]
    fn a_u64_count_is_the_duration_from_nanos_gives_on_both_sides_of_a_second() {
        let second = 1_000_000_000_u64;
        for n in [
            0,
            1,
            second - 1,
            second,
            second + 1,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            u64::MAX,
        ] {
            assert_eq!(from_u64(n), Duration::from_nanos(n), "{n} ns");
        }
    }

    #[test]
    fn durations_round_trip_through_nanoseconds() {
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(1500),
            Duration::MAX,
        ] {
            assert_eq!(to_duration(of(d)), d);
        }
        assert_eq!(to_duration(u128::MAX), Duration::MAX);
    }

    #[test]
    fn the_64_bit_fraction_is_the_128_bit_one() {
        for x in [0_u64, 1, 999, 1 << 40, u64::MAX - 1, u64::MAX] {
            for r in [0_u64, 1, 1 << 63, 0x9E37_79B9_7F4A_7C15, u64::MAX] {
                let wide = fraction(u128::from(x), r);
                assert_eq!(u128::from(fraction_u64(x, r)), wide, "{x} {r}");
            }
        }
    }

    #[test]
    fn between_covers_the_interval_and_never_reaches_its_top() {
        assert_eq!(between(10, 20, 0), 10);
        assert_eq!(between(10, 20, u64::MAX), 19);
        assert_eq!(between(10, 20, 1 << 63), 15);
        assert_eq!(between(20, 10, u64::MAX), 20);
        let top = of(Duration::MAX);
        assert!(between(0, top, u64::MAX) < top);
    }
}
