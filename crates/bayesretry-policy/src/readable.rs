//! A duration written for a person.

use core::fmt;
use core::time::Duration;

/// A duration as a person reads it, in the unit that fits its size: `120 ms`
/// and `0.5 ms` below a second, `2.5 s` below a minute, and from a minute up
/// days, hours, minutes and seconds, the parts that are zero left out (`1 h`,
/// `1 h 30 min`, `2 min 5.5 s`); seconds and milliseconds to three decimals at
/// most, trailing zeros dropped. A wait of more than a year, which no one will
/// make (a server's hint saturated at the largest value, say), is "longer than
/// a year".
///
/// This crate's and the HTTP adapter's error texts write their durations this
/// way, and a hook or an observer that logs a delay can too. A count of
/// milliseconds alone (`3600000 ms` for a server's hour) makes the reader
/// count digits to learn the one thing the text is for: how long.
///
/// ```
/// use core::time::Duration;
/// use bayesretry_policy::ReadableDuration;
///
/// assert_eq!(ReadableDuration(Duration::from_millis(3_600_000)).to_string(), "1 h");
/// assert_eq!(ReadableDuration(Duration::from_millis(2_500)).to_string(), "2.5 s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReadableDuration(pub Duration);

impl fmt::Display for ReadableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);
        let wait = self.0;
        if wait > YEAR {
            return f.write_str("longer than a year");
        }
        let secs = wait.as_secs();
        if secs == 0 {
            return thousandths(f, u64::from(wait.subsec_micros()), "ms");
        }
        let millis_of_minute = (secs % 60) * 1_000 + u64::from(wait.subsec_millis());
        if secs < 60 {
            return thousandths(f, millis_of_minute, "s");
        }
        let parts = [
            (secs / 86_400, "d"),
            (secs / 3_600 % 24, "h"),
            (secs / 60 % 60, "min"),
        ];
        let mut first = true;
        for (count, unit) in parts.into_iter().filter(|(count, _)| *count > 0) {
            if !first {
                f.write_str(" ")?;
            }
            write!(f, "{count} {unit}")?;
            first = false;
        }
        if millis_of_minute > 0 {
            f.write_str(" ")?;
            thousandths(f, millis_of_minute, "s")?;
        }
        Ok(())
    }
}

/// Writes `count` thousandths of `unit` as a decimal number of `unit`,
/// without trailing zeros: 2500 thousandths of `s` is `2.5 s`.
fn thousandths(f: &mut fmt::Formatter<'_>, count: u64, unit: &str) -> fmt::Result {
    let (whole, mut fraction) = (count / 1_000, count % 1_000);
    write!(f, "{whole}")?;
    if fraction > 0 {
        let mut places = 3;
        // at most twice: the fraction is below 1000 and not zero
        for _ in 0..2 {
            if fraction % 10 != 0 {
                break;
            }
            fraction /= 10;
            places -= 1;
        }
        write!(f, ".{fraction:0places$}")?;
    }
    write!(f, " {unit}")
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn a_duration_is_written_in_the_unit_that_fits_it() {
        let cases = [
            (Duration::ZERO, "0 ms"),
            (Duration::from_nanos(1), "0 ms"),
            (Duration::from_micros(500), "0.5 ms"),
            (Duration::from_micros(1_250), "1.25 ms"),
            (Duration::from_millis(120), "120 ms"),
            (Duration::from_millis(999), "999 ms"),
            (Duration::from_secs(1), "1 s"),
            (Duration::from_millis(1_500), "1.5 s"),
            (Duration::from_millis(2_505), "2.505 s"),
            (Duration::from_secs(30), "30 s"),
            (Duration::from_secs(60), "1 min"),
            (Duration::from_millis(125_500), "2 min 5.5 s"),
            (Duration::from_secs(360), "6 min"),
            (Duration::from_secs(3_600), "1 h"),
            (Duration::from_secs(5_400), "1 h 30 min"),
            (Duration::from_secs(3_601), "1 h 1 s"),
            (Duration::from_secs(90_000), "1 d 1 h"),
            (Duration::from_secs(365 * 86_400), "365 d"),
            (Duration::from_secs(365 * 86_400 + 1), "longer than a year"),
            (Duration::MAX, "longer than a year"),
        ];
        for (wait, text) in cases {
            assert_eq!(ReadableDuration(wait).to_string(), text, "{wait:?}");
        }
    }
}
