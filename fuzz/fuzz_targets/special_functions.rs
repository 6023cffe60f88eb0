//! The Beta special functions on arbitrary inputs: never a panic or a hang; for
//! in-domain inputs, never NaN, always in range, and the complement pairs agree.
#![no_main]

use bayesretry_beta::{inc_beta, inc_beta_complement, inc_beta_inv, ln_beta, ln_gamma};
use libfuzzer_sys::fuzz_target;

/// Four f64s from the input's bytes, zero-padded.
fn numbers(data: &[u8]) -> [f64; 4] {
    let mut out = [0.0; 4];
    for (value, chunk) in out.iter_mut().zip(data.chunks(8)) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        *value = f64::from_le_bytes(bytes);
    }
    out
}

/// A shape parameter in (0, 1e7]: the raw value if it is one, else a value folded
/// into that range, so most inputs reach the in-domain checks.
fn shape(raw: f64) -> f64 {
    if raw > 0.0 && raw <= 1e7 {
        raw
    } else if raw.is_finite() && raw != 0.0 {
        let folded = raw.abs() % 1e7;
        if folded > 0.0 { folded } else { 1.0 }
    } else {
        1.0
    }
}

/// A probability in [0, 1].
fn unit(raw: f64) -> f64 {
    if (0.0..=1.0).contains(&raw) {
        raw
    } else if raw.is_finite() {
        raw.abs().fract()
    } else {
        0.5
    }
}

fuzz_target!(|data: &[u8]| {
    let [ra, rb, rx, rp] = numbers(data);

    // Anything at all: no panic, whatever comes back.
    let _ = inc_beta(ra, rb, rx);
    let _ = inc_beta_inv(ra, rb, rp);
    let _ = ln_gamma(ra);

    let (a, b, x, p) = (shape(ra), shape(rb), unit(rx), unit(rp));
    let lower = inc_beta(a, b, x);
    let upper = inc_beta_complement(a, b, x);
    assert!((0.0..=1.0).contains(&lower), "I_{x}({a}, {b}) = {lower}");
    assert!(
        (0.0..=1.0).contains(&upper),
        "1 - I_{x}({a}, {b}) = {upper}"
    );
    assert!(
        (lower + upper - 1.0).abs() < 1e-12,
        "I + (1 - I) = {} at x={x} a={a} b={b}",
        lower + upper
    );

    let q = inc_beta_inv(a, b, p);
    assert!((0.0..=1.0).contains(&q), "quantile({a}, {b}, {p}) = {q}");

    assert!(ln_gamma(a).is_finite(), "ln_gamma({a})");
    assert!(ln_beta(a, b).is_finite(), "ln_beta({a}, {b})");
});
