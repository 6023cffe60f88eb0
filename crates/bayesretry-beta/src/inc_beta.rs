//! The regularized incomplete beta function `I_x(a, b)` and its complement.
//!
//! # Method
//!
//! The algorithm follows the region map of DiDonato and Morris, *Significant digit
//! computation of the incomplete beta function ratios* (ACM TOMS 18, 1992,
//! "Algorithm 708"): depending on `a`, `b` and `x` it picks the power series, the
//! continued fraction, a finite shift of one parameter followed by the asymptotic
//! expansion for one large parameter, or Temme's uniform asymptotic expansion for
//! two large parameters, so that every method is only used where it converges fast
//! and without cancellation. Each routine returns the *smaller* of `I` and `1 - I`
//! where it can, and the other is formed as `1 - w` only when it is at least ~0.1.
//!
//! Where this implementation departs from the paper is the prefactor
//! `x^a (1-x)^b / B(a, b)` that multiplies every series. Its logarithm is a sum of
//! terms much larger than itself (for `a = b = 1e6` they reach 1e7 while the log is
//! of order 1), and in plain doubles every unit of absolute error in that logarithm
//! becomes a unit of relative error in the result: this is where Boost and TOMS 708
//! lose their last two to three digits for large parameters. Here the logarithm is
//! carried in double-double arithmetic (`crate::dd`) from exactly rounded logs of
//! the inputs, so only the final `exp` rounds.
//!
//! The argument `x` is taken as exact; `y = 1 - x` is then exact whenever `x >= 1/2`.
//! All routines receive both and compute `ln x` and `ln y` from whichever is exact
//! (the smaller), so an `x` close to 1 never loses bits to the rounding of `1 - x`.

use crate::coefficients::LN_2PI_HALF;
use crate::dd::{Dd, exp_dd, ln_1p_dd, ln_dd, ln_of_dd, two_prod, two_sum};
use crate::erf::erfcx;
use crate::gamma::{EULER, ln_beta_dd, ln_gamma};
use crate::inc_gamma::grat1;
use crate::math;

/// Target relative accuracy of the series and continued fractions.
const EPS: f64 = 1e-17;

/// Below this, `exp` underflows to zero.
const LN_MIN: f64 = -745.2;

/// `ln x` as a double-double, from whichever of `x`, `y = 1 - x` is exact.
#[inline]
fn ln_x(x: f64, y: f64) -> Dd {
    if x <= y { ln_dd(x) } else { ln_1p_dd(-y) }
}

/// `ln(a B(a, b) / x^a)` negated: `a ln x - ln a - ln B(a, b)`, the log of the
/// power-series prefactor.
#[inline]
fn ln_series_prefactor(a: Dd, b: Dd, lnx: Dd) -> Dd {
    lnx.mul(a).sub(ln_of_dd(a)).sub(ln_beta_dd(a, b))
}

/// `a ln x + b ln y - ln B(a, b)`: the log of `x^a y^b / B(a, b)`.
#[inline]
fn ln_power_terms(a: Dd, b: Dd, lnx: Dd, lny: Dd) -> Dd {
    lnx.mul(a).add(lny.mul(b)).sub(ln_beta_dd(a, b))
}

/// `x - ln(1 + x)`, accurate for small `|x|`.
pub(crate) fn rlog1(x: f64) -> f64 {
    if x.abs() <= 0.5 {
        let t = x / (2.0 + x);
        let t2 = t * t;
        let mut s = 0.0;
        let mut k = 41.0;
        while k >= 3.0 {
            s = s * t2 + 1.0 / k;
            k -= 2.0;
        }
        x * t - 2.0 * t * t2 * s
    } else {
        x - math::ln_1p(x)
    }
}

/// `I_x(a, b)` and `1 - I_x(a, b)` for `a, b > 0`, `x + y = 1` with the smaller of
/// `x`, `y` exact, both in [0, 1].
pub(crate) fn inc_beta_pair(a: f64, b: f64, x: f64, y: f64) -> (f64, f64) {
    if x == 0.0 {
        return (0.0, 1.0);
    }
    if y == 0.0 {
        return (1.0, 0.0);
    }
    let (w, w1, swapped) = if a.min(b) <= 1.0 {
        small_min(a, b, x, y)
    } else {
        large_min(a, b, x, y)
    };
    let (w, w1) = (clamp01(w), clamp01(w1));
    if swapped { (w1, w) } else { (w, w1) }
}

#[inline]
fn clamp01(v: f64) -> f64 {
    v.clamp(0.0, 1.0)
}

/// min(a, b) <= 1. Returns (w, w1, swapped).
fn small_min(a: f64, b: f64, x: f64, y: f64) -> (f64, f64, bool) {
    let swapped = x > 0.5;
    let (a0, b0, x0, y0) = if swapped { (b, a, y, x) } else { (a, b, x, y) };
    let eps: f64 = 1e-15;
    if b0 < eps.min(eps * a0) && b0 * x0 <= 1.0 {
        let w = fpser(a0, b0, x0, y0);
        return (w, 1.0 - w, swapped);
    }
    if a0 < eps.min(eps * b0) && b0 * x0 <= 1.0 {
        let w1 = apser(a0, b0, x0, y0);
        return (1.0 - w1, w1, swapped);
    }
    let from_w = |w: f64| (w, 1.0 - w, swapped);
    let from_w1 = |w1: f64| (1.0 - w1, w1, swapped);
    if a0.max(b0) > 1.0 {
        if b0 <= 1.0 {
            return from_w(bpser(a0, b0, x0, y0));
        }
        if x0 >= 0.29 {
            return from_w1(bpser(b0, a0, y0, x0));
        }
        if x0 < 0.1 && math::exp(a0 * math::ln(x0 * b0)) <= 0.7 {
            return from_w(bpser(a0, b0, x0, y0));
        }
        if b0 > 15.0 {
            return from_w1(bgrat(Dd::from(b0), a0, y0, x0, 0.0));
        }
    } else {
        if a0 >= 0.2f64.min(b0) {
            return from_w(bpser(a0, b0, x0, y0));
        }
        if math::exp(a0 * math::ln(x0)) <= 0.9 {
            return from_w(bpser(a0, b0, x0, y0));
        }
        if x0 >= 0.3 {
            return from_w1(bpser(b0, a0, y0, x0));
        }
    }
    // shift b0 up by 20, then the asymptotic expansion in the large parameter
    let n = 20;
    let bd = Dd::from(b0);
    let w1 = bup(bd, a0, y0, x0, n);
    let w1 = bgrat(bd.add_f64(n as f64), a0, y0, x0, w1);
    from_w1(w1)
}

/// a, b > 1. Returns (w, w1, swapped).
fn large_min(a: f64, b: f64, x: f64, y: f64) -> (f64, f64, bool) {
    let lambda = lambda_of(a, b, x, y);
    let swapped = lambda < 0.0;
    let (a0, b0, x0, y0, lambda) = if swapped {
        (b, a, y, x, -lambda)
    } else {
        (a, b, x, y, lambda)
    };
    let from_w = |w: f64| (w, 1.0 - w, swapped);

    if b0 < 40.0 {
        if b0 * x0 <= 0.7 {
            return from_w(bpser(a0, b0, x0, y0));
        }
        // b0 = n + fractional part in (0, 1]: I_x(a, b) = I_x(a, b - n) + [difference]
        let mut n = math::floor(b0) as usize;
        let mut bf = b0 - n as f64;
        if bf == 0.0 {
            n -= 1;
            bf = 1.0;
        }
        let mut w = bup(Dd::from(bf), a0, y0, x0, n);
        if x0 <= 0.7 {
            w += bpser(a0, bf, x0, y0);
            return from_w(w);
        }
        let mut ad = Dd::from(a0);
        if a0 <= 15.0 {
            let k = 20;
            w += bup(ad, bf, x0, y0, k);
            ad = ad.add_f64(k as f64);
        }
        return from_w(bgrat(ad, bf, x0, y0, w));
    }
    let use_basym = if a0 > b0 {
        !(b0 <= 100.0 || lambda > 0.03 * b0)
    } else {
        !(a0 <= 100.0 || lambda > 0.03 * a0)
    };
    if use_basym {
        from_w(basym(a0, b0, lambda, x0, y0))
    } else {
        from_w(bfrac(a0, b0, x0, y0, lambda))
    }
}

/// `λ = a - (a + b) x = (a + b) y - b`, computed from the exact one of x, y with
/// error-free transformations, so that it is accurate even when the two terms
/// nearly cancel (x at the mean of a huge-parameter distribution).
fn lambda_of(a: f64, b: f64, x: f64, y: f64) -> f64 {
    let (s, s_err) = two_sum(a, b);
    if x <= y {
        // a - s x - s_err x
        let (p, p_err) = two_prod(s, x);
        Dd::from(a)
            .sub(Dd::new(p, p_err))
            .add_f64(-s_err * x)
            .to_f64()
    } else {
        // s y + s_err y - b
        let (p, p_err) = two_prod(s, y);
        Dd::new(p, p_err).add_f64(-b).add_f64(s_err * y).to_f64()
    }
}

/// Power series for `I_x(a, b)`, for `b <= 1` or `b x <= 0.7`:
/// `x^a / (a B(a, b)) [1 + a Σ_{j>=1} (1-b)(2-b)...(j-b) x^j / (j! (a + j))]`.
fn bpser(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let lnp = ln_series_prefactor(Dd::from(a), Dd::from(b), ln_x(x, y));
    if lnp.hi < LN_MIN {
        return 0.0;
    }
    let pref = exp_dd(lnp);
    let mut sum = 0.0;
    let mut c = 1.0;
    let mut n = 0.0;
    let mut guard = 0;
    loop {
        n += 1.0;
        c *= (1.0 - b / n) * x;
        let w = c / (a + n);
        sum += w;
        guard += 1;
        if (a * w).abs() <= EPS * (1.0 + a * sum).abs() || guard >= 5000 {
            break;
        }
    }
    pref * (1.0 + a * sum)
}

/// `I_x(a, b) - I_x(a + n, b)`, a sum of `n` terms
/// `x^(a+i) y^b / ((a+i) B(a+i, b))`. The prefactor is taken at the largest term
/// and the others reached by ratios no larger than one, so nothing overflows.
fn bup(a: Dd, b: f64, x: f64, y: f64, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let ah = a.hi;
    let apb = ah + b;
    // d_{i+1} / d_i = (a + b + i) x / (a + i + 1) > 1  <=>  i < ((a + b) x - a - 1) / y
    let t = (apb * x - ah - 1.0) / y;
    let last = n - 1;
    let istar = if t > 0.0 {
        let f = math::floor(t) + 1.0;
        if f >= last as f64 { last } else { f as usize }
    } else {
        0
    };
    let ai = a.add_f64(istar as f64);
    let lnp = ln_power_terms(ai, Dd::from(b), ln_x(x, y), ln_x(y, x)).sub(ln_of_dd(ai));
    if lnp.hi < LN_MIN {
        return 0.0;
    }
    let pref = exp_dd(lnp);
    let mut sum = 1.0;
    let mut d = 1.0;
    for i in istar..last {
        let fi = i as f64;
        d *= (apb + fi) * x / (ah + fi + 1.0);
        sum += d;
        if d <= EPS * sum {
            break;
        }
    }
    d = 1.0;
    for i in (1..=istar).rev() {
        let fi = i as f64;
        d *= (ah + fi) / ((apb + fi - 1.0) * x);
        sum += d;
        if d <= EPS * sum {
            break;
        }
    }
    pref * sum
}

/// Continued fraction for `I_x(a, b)` with `a, b > 1` and `λ = a - (a+b)x >= 0`:
/// the even part of the classical fraction
/// `x^a y^b / (a B(a,b)) · 1/(1 + d1/(1 + d2/(1 + ...)))`, whose partial numerators
/// and denominators are positive (no cancellation in the recurrence) and whose
/// denominators are written in terms of λ so they stay accurate near the mean.
fn bfrac(a: f64, b: f64, x: f64, y: f64, lambda: f64) -> f64 {
    let lnp = ln_power_terms(Dd::from(a), Dd::from(b), ln_x(x, y), ln_x(y, x));
    if lnp.hi < LN_MIN {
        return 0.0;
    }
    let pref = exp_dd(lnp);
    let apb = a + b;
    let x2 = x * x;
    let lp1 = lambda + 1.0;
    let am1 = a - 1.0;
    let apb_am1 = apb * am1;
    // convergents of 1/(β0 + α1/(β1 + α2/(β2 + ...)))
    let beta0 = lp1 / (a + 1.0);
    let mut a_prev = 1.0; // A_0 scaled
    let mut a_cur = 0.0;
    let mut b_prev = 0.0;
    let mut b_cur = 1.0;
    // first step: A_1 = 1, B_1 = β0
    let (an, bn) = (beta0 * a_cur + a_prev, beta0 * b_cur + b_prev);
    a_prev = a_cur;
    b_prev = b_cur;
    a_cur = an;
    b_cur = bn;
    let mut r = a_cur / b_cur;
    let mut n = 1.0f64;
    let mut guard = 0;
    loop {
        let s = a + 2.0 * n;
        let alpha = (a + n - 1.0) * (apb + n - 1.0) * n * (b - n) * x2
            / ((s - 2.0) * (s - 1.0) * (s - 1.0) * s);
        let beta = (lp1 * apb_am1
            + 2.0 * n * (lambda * (a + n) + a * a + 2.0 * a * b + a * n + 2.0 * b * n))
            / (apb * (s - 1.0) * (s + 1.0));
        let an = beta * a_cur + alpha * a_prev;
        let bn = beta * b_cur + alpha * b_prev;
        a_prev = a_cur / bn;
        b_prev = b_cur / bn;
        a_cur = an / bn;
        b_cur = 1.0;
        let r0 = r;
        r = a_cur;
        guard += 1;
        if (r - r0).abs() <= EPS * r.abs() || guard >= 10_000 {
            break;
        }
        n += 1.0;
    }
    pref * r / a
}

/// Asymptotic expansion of `I_x(a, b)` for large `a` and `b <= 1`
/// (DiDonato and Morris §9), added to `w`. `a` may carry extra bits (`Dd`) when it
/// was reached by shifting a smaller parameter with `bup`.
fn bgrat(a: Dd, b: f64, x: f64, y: f64, w: f64) -> f64 {
    let bm1 = b - 1.0;
    let nu = a.add_f64(0.5 * bm1);
    let lnx_dd = ln_x(x, y);
    let lnx = lnx_dd.to_f64();
    let z = -nu.hi * lnx;
    if !(b * z > 0.0) {
        return w;
    }
    // u = x^nu (-ln x)^b / B(a, b), in double-double
    let ln_u = lnx_dd
        .mul(nu)
        .add(ln_of_dd(lnx_dd.neg()).mul_f64(b))
        .sub(ln_beta_dd(a, Dd::from(b)));
    if ln_u.hi < LN_MIN {
        return w;
    }
    let u = exp_dd(ln_u);
    // r = exp(-z) z^b / Γ(b)
    let r = math::exp(-z + b * math::ln(z) - ln_gamma(b));
    if !(r > 0.0) {
        return w;
    }
    let (_, q) = grat1(b, z, r);
    let v = 0.25 / (nu.hi * nu.hi);
    let t2 = 0.25 * lnx * lnx;
    let l = w / u;
    let mut j = q / r;
    let mut sum = j;
    let mut t = 1.0;
    let mut cn = 1.0;
    let mut n2 = 0.0;
    let mut c = [0.0f64; 30];
    let mut d = [0.0f64; 30];
    for n in 1..=30usize {
        let bp2n = b + n2;
        j = (bp2n * (bp2n + 1.0) * j + (z + bp2n + 1.0) * t) * v;
        n2 += 2.0;
        t *= t2;
        cn /= n2 * (n2 + 1.0);
        c[n - 1] = cn;
        let mut s = 0.0;
        if n > 1 {
            let mut coef = b - n as f64;
            for i in 1..n {
                s += coef * c[i - 1] * d[n - 1 - i];
                coef += b;
            }
        }
        d[n - 1] = bm1 * cn + s / n as f64;
        let dj = d[n - 1] * j;
        sum += dj;
        if sum <= 0.0 {
            return w;
        }
        if dj.abs() <= EPS * (sum + l) {
            break;
        }
    }
    w + u * sum
}

/// Temme's uniform asymptotic expansion of `I_x(a, b)` for large `a` and `b` with
/// `x` near the mean (`0 <= λ <= 0.03 min(a, b)`), in the form of DiDonato and
/// Morris §4. The factor `exp(-f)` of the paper is replaced by the exact
/// double-double prefactor (`x^a y^b / B(a,b)` times the inverse Stirling factor).
fn basym(a: f64, b: f64, lambda: f64, x: f64, y: f64) -> f64 {
    const E0: f64 = core::f64::consts::FRAC_2_SQRT_PI;
    const E1: f64 = 0.353_553_390_593_273_8; // 2^(-3/2)
    const NUM: usize = 20;
    let (h, r0, r1, w0) = if a < b {
        let h = a / b;
        (
            h,
            1.0 / (1.0 + h),
            (b - a) / b,
            1.0 / math::sqrt(a * (1.0 + h)),
        )
    } else {
        let h = b / a;
        (
            h,
            1.0 / (1.0 + h),
            (b - a) / a,
            1.0 / math::sqrt(b * (1.0 + h)),
        )
    };
    let f = a * rlog1(-lambda / a) + b * rlog1(lambda / b);
    // exp(-f - bcorr(a, b)) = x^a y^b / B(a, b) * sqrt(2 pi (a + b) / (a b))
    let ad = Dd::from(a);
    let bd = Dd::from(b);
    let stirling = ln_of_dd(ad.add(bd))
        .sub(ln_dd(a))
        .sub(ln_dd(b))
        .mul_f64(0.5)
        .add(Dd::new(LN_2PI_HALF.0, LN_2PI_HALF.1));
    let lnt = ln_power_terms(ad, bd, ln_x(x, y), ln_x(y, x)).add(stirling);
    if lnt.hi < LN_MIN {
        return 0.0;
    }
    let tu = exp_dd(lnt);
    let z0 = math::sqrt(f.max(0.0));
    let z = 0.5 * (z0 / E1);
    let z2 = f + f;

    let mut a0 = [0.0f64; NUM + 1];
    let mut b0 = [0.0f64; NUM + 1];
    let mut c = [0.0f64; NUM + 1];
    let mut d = [0.0f64; NUM + 1];
    a0[0] = 2.0 / 3.0 * r1;
    c[0] = -0.5 * a0[0];
    d[0] = -c[0];
    let mut j0 = 0.5 / E0 * erfcx(z0);
    let mut j1 = E1;
    let mut sum = j0 + d[0] * w0 * j1;
    let mut s = 1.0;
    let h2 = h * h;
    let mut hn = 1.0;
    let mut w = w0;
    let mut znm1 = z;
    let mut zn = z2;
    let mut n = 2;
    while n <= NUM {
        hn *= h2;
        a0[n - 1] = 2.0 * r0 * (1.0 + h * hn) / (n as f64 + 2.0);
        let np1 = n + 1;
        s += hn;
        a0[np1 - 1] = 2.0 * r1 * s / (n as f64 + 3.0);
        for i in n..=np1 {
            let r = -0.5 * (i as f64 + 1.0);
            b0[0] = r * a0[0];
            for m in 2..=i {
                let mut bsum = 0.0;
                for jj in 1..m {
                    let mmj = m - jj;
                    bsum += (jj as f64 * r - mmj as f64) * a0[jj - 1] * b0[mmj - 1];
                }
                b0[m - 1] = r * a0[m - 1] + bsum / m as f64;
            }
            c[i - 1] = b0[i - 1] / (i as f64 + 1.0);
            let mut dsum = 0.0;
            for jj in 1..i {
                dsum += d[i - jj - 1] * c[jj - 1];
            }
            d[i - 1] = -(dsum + c[i - 1]);
        }
        j0 = E1 * znm1 + (n as f64 - 1.0) * j0;
        j1 = E1 * zn + n as f64 * j1;
        znm1 *= z2;
        zn *= z2;
        w *= w0;
        let t0 = d[n - 1] * w * j0;
        w *= w0;
        let t1 = d[np1 - 1] * w * j1;
        sum += t0 + t1;
        if t0.abs() + t1.abs() <= EPS * sum {
            break;
        }
        n += 2;
    }
    E0 * tu * sum
}

/// `1 - I_x(a, b) = I_y(b, a)` for `a <= 1e-15 min(1, b)`, `b x <= 1`, `x <= 1/2`.
fn apser(a: f64, b: f64, x: f64, y: f64) -> f64 {
    let bx = b * x;
    let mut t = x - bx;
    let c = if b * 1e-15 <= 0.02 {
        ln_x(x, y).to_f64() + crate::gamma::digamma(b) + EULER + t
    } else {
        math::ln(bx) + EULER + t
    };
    let tol = 5.0 * EPS * c.abs();
    let mut j = 1.0;
    let mut s = 0.0;
    let mut guard = 0;
    loop {
        j += 1.0;
        t *= x - bx / j;
        let aj = t / j;
        s += aj;
        guard += 1;
        if aj.abs() <= tol || guard >= 5000 {
            break;
        }
    }
    -a * (c + s)
}

/// `I_x(a, b)` for `b <= 1e-15 min(1, a)`, `b x <= 1`, `x <= 1/2`.
fn fpser(a: f64, b: f64, x: f64, y: f64) -> f64 {
    let mut ans = 1.0;
    if a > 1e-18 {
        let t = a * ln_x(x, y).to_f64();
        if t < LN_MIN {
            return 0.0;
        }
        ans = math::exp(t);
    }
    ans *= b / a;
    let tol = EPS / a;
    let mut an = a + 1.0;
    let mut t = x;
    let mut s = t / an;
    let mut guard = 0;
    loop {
        an += 1.0;
        t *= x;
        let c = t / an;
        s += c;
        guard += 1;
        if c.abs() <= tol || guard >= 5000 {
            break;
        }
    }
    ans * (1.0 + a * s)
}

/// Validates the arguments shared by the public incomplete-beta functions.
#[inline]
pub(crate) fn valid(a: f64, b: f64, x: f64) -> bool {
    a > 0.0 && b > 0.0 && a < f64::INFINITY && b < f64::INFINITY && (0.0..=1.0).contains(&x)
}

/// The regularized incomplete beta function `I_x(a, b)`: the probability that a
/// Beta(a, b) variable is at most `x`.
///
/// Accurate to a few machine epsilons of relative error across `a, b` from 1e-3 to
/// 1e6 (see `docs/ACCURACY.md` for the measured table); never loops without bound.
///
/// Returns NaN when `a` or `b` is not a finite positive number or `x` lies outside
/// `[0, 1]` (or is NaN).
///
/// ```
/// use bayesretry_beta::inc_beta;
/// // I_x(1, 1) is the uniform CDF
/// assert!((inc_beta(1.0, 1.0, 0.3) - 0.3).abs() < 1e-16);
/// // I_x(a, 1) = x^a
/// assert!((inc_beta(3.0, 1.0, 0.5) - 0.125).abs() < 1e-16);
/// assert!(inc_beta(-1.0, 1.0, 0.5).is_nan());
/// ```
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if !valid(a, b, x) {
        return f64::NAN;
    }
    inc_beta_pair(a, b, x, 1.0 - x).0
}

/// The complement `1 - I_x(a, b)`, computed directly rather than by subtraction, so
/// that it keeps its relative accuracy where `I_x(a, b)` is close to 1 (the upper
/// tail that a credible upper bound reads).
///
/// Returns NaN on the same out-of-domain arguments as [`inc_beta`].
///
/// ```
/// use bayesretry_beta::{inc_beta, inc_beta_complement};
/// // 1 - I_x rounds to 0 here; the complement keeps every digit.
/// let c = inc_beta_complement(2.0, 200.0, 0.5);
/// let exact = 101.0 * 0.5f64.powi(200); // I_{1/2}(200, 2) = x^200 (1 + 200 (1 - x))
/// assert!((c / exact - 1.0).abs() < 1e-14);
/// assert_eq!(1.0 - inc_beta(2.0, 200.0, 0.5), 0.0);
/// ```
pub fn inc_beta_complement(a: f64, b: f64, x: f64) -> f64 {
    if !valid(a, b, x) {
        return f64::NAN;
    }
    inc_beta_pair(a, b, x, 1.0 - x).1
}
