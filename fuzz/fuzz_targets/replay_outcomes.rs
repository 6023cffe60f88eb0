//! The CLI's outcome reader (`bayesretry replay`) on arbitrary bytes: never a
//! panic; whatever it accepts adds up, and holds no more outcomes than the input
//! has room for tokens (each at least one byte, separated by whitespace).
#![no_main]

use bayesretry_cli::read_outcomes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(tally) = read_outcomes(data, "fuzz") else {
        return;
    };
    assert_eq!(tally.successes() + tally.failures(), tally.total());
    assert!(
        tally.total() <= (data.len() as u64).div_ceil(2),
        "{} outcomes from {} bytes",
        tally.total(),
        data.len()
    );
});
