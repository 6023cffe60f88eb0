//! Elementary float functions: the platform's intrinsics with `std`, the pure-Rust
//! `libm` crate without it. Everything else in the crate calls these, never `f64`
//! methods directly, so the crate builds the same way on every target.

#[cfg(not(any(feature = "std", feature = "libm")))]
compile_error!(
    "bayesretry-beta needs float math: enable the `std` feature (default) or the `libm` feature"
);

#[cfg(feature = "std")]
mod imp {
    #[inline]
    pub(crate) fn exp(x: f64) -> f64 {
        x.exp()
    }
    #[inline]
    pub(crate) fn exp_m1(x: f64) -> f64 {
        x.exp_m1()
    }
    #[inline]
    pub(crate) fn ln(x: f64) -> f64 {
        x.ln()
    }
    #[inline]
    pub(crate) fn ln_1p(x: f64) -> f64 {
        x.ln_1p()
    }
    #[inline]
    pub(crate) fn sqrt(x: f64) -> f64 {
        x.sqrt()
    }
    #[inline]
    pub(crate) fn floor(x: f64) -> f64 {
        x.floor()
    }
    #[inline]
    #[cfg(target_feature = "fma")]
    pub(crate) fn fma(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

#[cfg(all(not(feature = "std"), feature = "libm"))]
mod imp {
    #[inline]
    pub(crate) fn exp(x: f64) -> f64 {
        libm::exp(x)
    }
    #[inline]
    pub(crate) fn exp_m1(x: f64) -> f64 {
        libm::expm1(x)
    }
    #[inline]
    pub(crate) fn ln(x: f64) -> f64 {
        libm::log(x)
    }
    #[inline]
    pub(crate) fn ln_1p(x: f64) -> f64 {
        libm::log1p(x)
    }
    #[inline]
    pub(crate) fn sqrt(x: f64) -> f64 {
        libm::sqrt(x)
    }
    #[inline]
    pub(crate) fn floor(x: f64) -> f64 {
        libm::floor(x)
    }
    #[inline]
    #[cfg(target_feature = "fma")]
    pub(crate) fn fma(a: f64, b: f64, c: f64) -> f64 {
        libm::fma(a, b, c)
    }
}

#[cfg(target_feature = "fma")]
pub(crate) use imp::fma;
pub(crate) use imp::{exp, exp_m1, floor, ln, ln_1p, sqrt};
