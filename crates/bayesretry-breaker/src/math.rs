//! The float functions this crate needs beyond `bayesretry-beta`: `2^x` and the
//! square root, from the platform with `std` and from `libm` without it.

#[cfg(not(any(feature = "std", feature = "libm")))]
compile_error!(
    "bayesretry-breaker needs float math: enable the `std` feature (default) or the `libm` feature"
);

/// `2^x`.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn exp2(x: f64) -> f64 {
    x.exp2()
}

/// `2^x`.
#[cfg(all(not(feature = "std"), feature = "libm"))]
#[inline]
pub(crate) fn exp2(x: f64) -> f64 {
    libm::exp2(x)
}

/// The square root.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn sqrt(x: f64) -> f64 {
    x.sqrt()
}

/// The square root.
#[cfg(all(not(feature = "std"), feature = "libm"))]
#[inline]
pub(crate) fn sqrt(x: f64) -> f64 {
    libm::sqrt(x)
}
