#!/usr/bin/env python3
"""Generate high-precision known-answer tables for the bayesretry-beta tests.

Files written next to this script:

* ``inc_beta.csv``      regularized incomplete beta I_x(a, b) and its
                        complement 1 - I_x(a, b) on a grid of (a, b, x).
* ``inc_beta_inv.csv``  the quantile: x with I_x(a, b) = p, together with
                        y = 1 - x of the same root.
* ``ln_gamma.csv``      ln Gamma(x).

Every value is written as a double-double pair (hi, lo): ``hi`` is the double
nearest the true value and ``lo`` the double nearest (true - hi), so hi + lo
carries the value to about 1e-32 relative (less where lo is subnormal).  For
complementary pairs (I and 1 - I, x and 1 - x) the larger member is split
using the smaller one, so that 1 - 1e-200 is written as hi = 1.0,
lo = -1e-200; ``lo`` is set to 0.0 where the remainder is below 1e-75 of the
value (e.g. I = 1/2 exactly).  The inputs a, b, x and p are doubles printed
with Python's ``repr``; every reference value is computed for exactly that
double (1 - x is formed in multiple precision, never in floating point).

Precision
---------
The incomplete beta function and its inverse are computed with mpmath at 100
significant decimal digits (``DPS``; the prefactor
exp(a ln x + b ln(1-x) - ln B(a, b)) loses at most ~10 of them for a, b up to
1e6), ln Gamma at 60 digits.  The incomplete beta function is evaluated with its continued
fraction (modified Lentz) on the side where it converges quickly, using the
symmetry I_x(a, b) = 1 - I_{1-x}(b, a) for the other side.  When the side that
was evaluated is close to 1, so that the other side would lose digits in
1 - s, the evaluation is repeated at a precision raised by the number of digits
that would be lost; both I and its complement therefore keep full relative
precision even when they are far below the double range (such values are
recorded as hi = 0.0 together with their log10).  The quantile is found by a
bracketed, bisection-safeguarded Newton iteration on ln I, carried out in ln x
(or in ln(1 - x) when the root lies above 1/2), so that roots such as 1e-10000
are resolved to full relative precision.  ln Gamma comes from
``mpmath.loggamma``.

Verification (the script exits non-zero and writes nothing if a check fails)
----------------------------------------------------------------------------
inc_beta.csv
  * every point is recomputed at 140 digits; I and 1 - I must agree with the
    100-digit values to 1e-35 relative;
  * every point with max(a, b) <= 1000 is compared with
    ``mpmath.betainc(a, b, 0, x, regularized=True)`` and the complement with
    ``mpmath.betainc(b, a, 0, 1 - x, regularized=True)`` at 60 digits
    (agreement required: 1e-35 relative);
  * every point with max(a, b) > 1000 is compared with an independent
    method: where it converges within 400000 terms, the positive-term
    hypergeometric series
    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 2F1(a + b, 1; a + 1; x)
    (prefactor computed with mpmath.power and mpmath.beta) on the side where
    its terms decrease, at 100 digits; elsewhere (large a with x close to 1,
    or the mirror case) numerical integration with mpmath.quad of
    I_x(a, b) = x^a y^(b-1)/(a B(a,b)) int_0^inf e^-v (1 - x expm1(-v/a)/y)^(b-1) dv
    (y = 1 - x) for the smaller of I and 1 - I, at 60 digits (agreement
    required: 1e-35 relative).
inc_beta_inv.csv
  * each root is substituted back at 140 digits: |I(root) - p| (for p > 1/2
    the complement equation 1 - I(root) = 1 - p is used, which is stricter)
    must be below 1e-45 relative to the target and below 1e-45 relative to
    min(x, 1 - x) * pdf(root), i.e. the root is correct to ~1e-45 relative in
    both x and 1 - x;
  * for max(a, b) <= 1000 the same residual is also computed with
    ``mpmath.betainc`` at 60 digits and must be below 1e-35 relative.
ln_gamma.csv
  * values at 60 digits are compared with an independent 100-digit evaluation:
    ln(mpmath.gamma(x)) for x < 100, a Stirling series with 40 Bernoulli terms
    for x >= 100, and the closed forms for integers and half-integers
    (agreement required: 1e-45 relative; exactly 0 at x = 1 and x = 2).

Running
-------
    python3 crates/bayesretry-beta/tests/data/generate_reference.py [TABLE ...]

TABLE is any of ``inc_beta``, ``inc_beta_inv``, ``ln_gamma`` (default: all).
Requires mpmath (1.3 tested).  gmpy2 is optional; mpmath uses it when it is
installed, which roughly halves the run time (about 3 minutes on one core with
gmpy2, about 6 without).  The output is deterministic and does not depend on
whether gmpy2 is present.  Progress and the verification summary go to
stderr.
"""

import math
import os
import sys
import time

import mpmath
from mpmath import mp, mpf

DPS = 100          # main working precision (decimal digits)
DPS_CHECK = 140    # precision of the stability re-computation
DPS_MPMATH = 60    # precision of the mpmath.betainc cross-check
TOL_CROSS = mpf("1e-35")
TOL_ROOT = mpf("1e-45")
TOL_LNGAMMA = mpf("1e-45")
LO_FLOOR = mpf("1e-75")     # |value - hi| below this (relative) is noise: lo = 0
RAISE_BELOW = mpf("1e-20")  # 1 - s below this is recomputed at raised precision

HERE = os.path.dirname(os.path.abspath(__file__))

PARAMS = [1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0,
          1e3, 1e4, 1e5, 1e6]
X_GRID = [1e-12, 1e-6, 1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999,
          1 - 1e-6]
P_GRID = [1e-10, 1e-6, 1e-3, 0.025, 0.05, 0.5, 0.95, 0.975, 0.999, 1 - 1e-6]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Conversion of multiple-precision values to doubles
# ---------------------------------------------------------------------------

def nearest_double(v):
    """The double nearest the mpf v (round half to even, subnormals exact)."""
    if v == 0:
        return 0.0
    sign = -1.0 if v < 0 else 1.0
    man, exp = abs(v).man_exp
    man = int(man)
    top = exp + man.bit_length() - 1          # floor(log2 |v|)
    if top < -1076:
        return 0.0                            # below half the least subnormal
    if top > 1023:
        raise OverflowError("value outside the double range")
    lsb = max(top - 52, -1074)                # exponent of the last kept bit
    shift = lsb - exp
    if shift <= 0:
        n = man << (-shift)
    else:
        n = man >> shift
        rem = man - (n << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and (n & 1)):
            n += 1
    r = sign * math.ldexp(float(n), lsb)
    return r if r != 0 else 0.0


def hi_lo(v):
    """Split v into (hi, lo): hi nearest double, lo nearest double to v - hi."""
    hi = nearest_double(v)
    rest = v - mpf(hi)
    if abs(rest) <= abs(v) * LO_FLOOR:
        # below the accuracy of the reference value itself (e.g. exactly 1/2)
        return hi, 0.0
    return hi, nearest_double(rest)


def split_complementary(s):
    """Double-double splits of s and of 1 - s, plus both log10 values.

    s (0 < s <= 1/2 in practice) must carry full relative precision; the
    members of 1 - s are derived from it, so that e.g. for s = 1e-200 the
    complement is written as hi = 1.0, lo = -1e-200 rather than 1.0, 0.0.
    Returns ((hi_s, lo_s, log10_s), (hi_c, lo_c, log10_c)).
    """
    hi_s, lo_s = hi_lo(s)
    if s < mpf(2) ** -100:
        hi_c = 1.0
    else:
        hi_c = nearest_double(mpmath.fsub(1, s, exact=True))
    gap = mpmath.fsub(1, mpf(hi_c), exact=True)           # exact
    rest = gap - s if gap == 0 else mpmath.fsub(gap, s, exact=True)
    if abs(rest) <= s * LO_FLOOR:
        lo_c = 0.0
    else:
        lo_c = nearest_double(rest)
    log10_s = mpmath.log10(s)
    log10_c = mpmath.log1p(-s) / mpmath.log(10)
    return (hi_s, lo_s, log10_s), (hi_c, lo_c, log10_c)


def fmt(f):
    return repr(float(f))


def fmt_log10(v):
    """v is the log10 of a value (an mpf); -inf for an exact zero value."""
    if v is None:
        return "-inf"
    return repr(float(v) + 0.0)          # + 0.0 turns -0.0 into 0.0


# ---------------------------------------------------------------------------
# Regularized incomplete beta function
# ---------------------------------------------------------------------------

_LBETA_CACHE = {}


def lbeta(a, b):
    """ln B(a, b) at the current precision (cached)."""
    key = (a, b, mp.prec) if a <= b else (b, a, mp.prec)
    v = _LBETA_CACHE.get(key)
    if v is None:
        v = mpmath.loggamma(a) + mpmath.loggamma(b) - mpmath.loggamma(a + b)
        _LBETA_CACHE[key] = v
    return v


class ContinuedFractionError(ArithmeticError):
    pass


def _cf_lower(a, b, x, lx, ly, max_iter=200000):
    """I_x(a, b) from the continued fraction; intended for x < (a+1)/(a+b+2).

    lx = ln x and ly = ln(1 - x) at the current precision.  Returns
    (value, number of iterations).
    """
    one = mpf(1)
    eps = mpf(2) ** (-(mp.prec - 34))         # ~10 decimal guard digits
    tiny = mpf(2) ** (-4 * mp.prec)
    qab = a + b
    qap = a + 1
    qam = a - 1
    c = one
    d = one - qab * x / qap
    if d == 0:
        d = tiny
    d = one / d
    h = d
    m = 0
    converged = False
    while m < max_iter:
        m += 1
        m2 = 2 * m
        # even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = one + aa * d
        if d == 0:
            d = tiny
        c = one + aa / c
        if c == 0:
            c = tiny
        d = one / d
        h *= d * c
        # odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = one + aa * d
        if d == 0:
            d = tiny
        c = one + aa / c
        if c == 0:
            c = tiny
        d = one / d
        delta = d * c
        h *= delta
        if abs(delta - one) < eps:
            converged = True
            break
    if not converged:
        raise ContinuedFractionError(
            "continued fraction did not converge: a=%s b=%s x=%s"
            % (mpmath.nstr(a, 8), mpmath.nstr(b, 8), mpmath.nstr(x, 8)))
    lpre = a * lx + b * ly - lbeta(a, b) - mpmath.log(a)
    return mpmath.exp(lpre) * h, m


STATS = {"raised_precision": 0, "max_cf_iter": 0}


def ibeta_pair(a, b, x, y, lx=None, ly=None):
    """(I_x(a, b), 1 - I_x(a, b)) at the current precision.

    x and y = 1 - x are given separately (the smaller of the two must be
    exact, the larger correct to working precision).  lx, ly are optional
    logarithms of x and y.  Both results have full relative precision.
    """
    if lx is None:
        lx = mpmath.log(x)
    if ly is None:
        ly = mpmath.log(y)
    direct = x * (a + b + 2) < a + 1
    if direct:
        s, it = _cf_lower(a, b, x, lx, ly)
    else:
        s, it = _cf_lower(b, a, y, ly, lx)
    STATS["max_cf_iter"] = max(STATS["max_cf_iter"], it)
    other = 1 - s
    if other < RAISE_BELOW:
        # 1 - s cancels: redo the evaluated side with enough extra digits.
        STATS["raised_precision"] += 1
        lost = int(-mpmath.log10(other)) + 15 if other > 0 else mp.dps
        with mp.workdps(mp.dps + lost):
            lx2 = mpmath.log(x)
            ly2 = mpmath.log(y)
            if direct:
                s2, _ = _cf_lower(a, b, x, lx2, ly2)
            else:
                s2, _ = _cf_lower(b, a, y, ly2, lx2)
            other = 1 - s2
        other = +other
        if other <= 0:
            raise ContinuedFractionError("complement lost after raising precision")
    if direct:
        return s, other
    return other, s


def series_lower(a, b, x, y, max_terms=400000):
    """I_x(a, b) from x^a y^b/(a B(a,b)) * sum (a+b)_n/(a+1)_n x^n.

    Returns None when the series would need more than max_terms terms.
    Intended for (a + b) x < a + 1 (decreasing terms).
    """
    # rough term count: terms decay like r_n = (a+b+n) x / (a+1+n)
    if x >= 1:
        return None
    digits = mp.dps + 5
    tail_rate = -mpmath.log(x)
    if tail_rate * max_terms < digits * math.log(10):
        # the ratio tends to x; if even that would be too slow, give up
        return None
    eps = mpf(10) ** (-digits)
    total = mpf(1)
    term = mpf(1)
    apb = a + b
    ap1 = a + 1
    n = 0
    while True:
        term = term * (apb + n) * x / (ap1 + n)
        total += term
        n += 1
        if term < eps * total:
            # remaining terms are bounded by a geometric tail with ratio r
            r = (apb + n) * x / (ap1 + n)
            if r < 1 and term * r / (1 - r) < eps * total:
                break
        if n > max_terms:
            return None
    pre = mpmath.power(x, a) * mpmath.power(y, b) / (a * mpmath.beta(a, b))
    return pre * total


def quad_lower(a, b, x, y):
    """I_x(a, b) by numerical integration (mpmath.quad, tanh-sinh).

    With t = x exp(-v/a) in the integral of t^(a-1) (1-t)^(b-1),
      I_x(a, b) = x^a y^(b-1) / (a B(a, b))
                  * int_0^inf exp(-v) (1 - x expm1(-v/a) / y)^(b-1) dv,
    whose integrand equals 1 at v = 0 and is smooth.  Used as an independent
    check where the series is too slow.  Returns (value, error estimate).
    """
    def f(v):
        return mpmath.exp(-v) * (1 - x * mpmath.expm1(-v / a) / y) ** (b - 1)
    scale = a * y / x
    top = b + 40 * mpmath.sqrt(b) + 100
    pts = {mpf(0)}
    s = scale
    while s < top:
        if s > 0:
            pts.add(s)
        s *= 10
    for k in range(1, 21):
        pts.add(top * k / 20)
    pts = sorted(pts) + [mpmath.inf]
    val, err = mpmath.quad(f, pts, error=True, maxdegree=10)
    pre = (mpmath.power(x, a) * mpmath.power(y, b - 1)
           / (a * mpmath.beta(a, b)))
    return pre * val, err / val


def rel_diff(u, v):
    if u == v:
        return mpf(0)
    return abs(u - v) / max(abs(u), abs(v))


# ---------------------------------------------------------------------------
# inc_beta.csv
# ---------------------------------------------------------------------------

def x_points(a_f, b_f):
    """Grid x values for the pair (a, b): fixed grid plus mean and mean +- 3 sd."""
    xs = set(X_GRID)
    with mp.workdps(DPS):
        a = mpf(a_f)
        b = mpf(b_f)
        mean = a / (a + b)
        sd = mpmath.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        for v in (mean, mean - 3 * sd, mean + 3 * sd):
            if 0 < v < 1:
                d = nearest_double(v)
                if 0.0 < d < 1.0:
                    xs.add(d)
    return sorted(xs)


def make_inc_beta():
    rows = []
    failures = []
    n_mpmath = 0
    worst_mpmath = mpf(0)
    n_series = 0
    n_quad = 0
    worst_quad = mpf(0)
    worst_series = mpf(0)
    worst_stab = mpf(0)
    underflow_i = 0
    underflow_c = 0
    t0 = time.time()
    for ia, a_f in enumerate(PARAMS):
        for b_f in PARAMS:
            for x_f in x_points(a_f, b_f):
                a = mpf(a_f)
                b = mpf(b_f)
                with mp.workdps(DPS):
                    x = mpf(x_f)
                    y = mpmath.fsub(1, x, exact=True)
                    i_v, c_v = ibeta_pair(a, b, x, y)
                with mp.workdps(DPS_CHECK):
                    x = mpf(x_f)
                    y = mpmath.fsub(1, x, exact=True)
                    i_2, c_2 = ibeta_pair(a, b, x, y)
                    d = max(rel_diff(i_v, i_2), rel_diff(c_v, c_2))
                worst_stab = max(worst_stab, d)
                if not d < TOL_CROSS:
                    failures.append("inc_beta stability a=%r b=%r x=%r: %s"
                                    % (a_f, b_f, x_f, mpmath.nstr(d, 3)))
                if max(a_f, b_f) <= 1000:
                    with mp.workdps(DPS_MPMATH):
                        x = mpf(x_f)
                        y = mpmath.fsub(1, x, exact=True)
                        ri = mpmath.betainc(a, b, 0, x, regularized=True)
                        rc = mpmath.betainc(b, a, 0, y, regularized=True)
                        d = max(rel_diff(i_v, ri), rel_diff(c_v, rc))
                    n_mpmath += 1
                    worst_mpmath = max(worst_mpmath, d)
                    if not d < TOL_CROSS:
                        failures.append("inc_beta vs mpmath a=%r b=%r x=%r: %s"
                                        % (a_f, b_f, x_f, mpmath.nstr(d, 3)))
                else:
                    with mp.workdps(DPS):
                        x = mpf(x_f)
                        y = mpmath.fsub(1, x, exact=True)
                        if x * (a + b) < a + 1:
                            s = series_lower(a, b, x, y)
                            ref = i_v
                        else:
                            s = series_lower(b, a, y, x)
                            ref = c_v
                        d = None if s is None else rel_diff(ref, s)
                    if d is None:
                        with mp.workdps(DPS_MPMATH):
                            x = mpf(x_f)
                            y = mpmath.fsub(1, x, exact=True)
                            if i_v <= c_v:
                                s, _ = quad_lower(a, b, x, y)
                                d = rel_diff(i_v, s)
                            else:
                                s, _ = quad_lower(b, a, y, x)
                                d = rel_diff(c_v, s)
                        n_quad += 1
                        worst_quad = max(worst_quad, d)
                        if not d < TOL_CROSS:
                            failures.append(
                                "inc_beta vs quadrature a=%r b=%r x=%r: %s"
                                % (a_f, b_f, x_f, mpmath.nstr(d, 3)))
                    else:
                        n_series += 1
                        worst_series = max(worst_series, d)
                        if not d < TOL_CROSS:
                            failures.append(
                                "inc_beta vs series a=%r b=%r x=%r: %s"
                                % (a_f, b_f, x_f, mpmath.nstr(d, 3)))
                if i_v < mpf("1e-300"):
                    underflow_i += 1
                if c_v < mpf("1e-300"):
                    underflow_c += 1
                with mp.workdps(DPS):
                    if i_v <= c_v:
                        (ih, il, li), (ch, cl, lc) = split_complementary(i_v)
                    else:
                        (ch, cl, lc), (ih, il, li) = split_complementary(c_v)
                rows.append(",".join([
                    fmt(a_f), fmt(b_f), fmt(x_f), fmt(ih), fmt(il), fmt(ch),
                    fmt(cl), fmt_log10(li), fmt_log10(lc)]))
        log("inc_beta: a=%r done (%d rows, %.0f s)"
            % (a_f, len(rows), time.time() - t0))
    summary = [
        "inc_beta: %d rows; I < 1e-300 at %d points, 1 - I < 1e-300 at %d points"
        % (len(rows), underflow_i, underflow_c),
        "inc_beta: stability %d vs %d digits, %d points, worst rel diff %s"
        % (DPS, DPS_CHECK, len(rows), mpmath.nstr(worst_stab, 3)),
        "inc_beta: mpmath.betainc check (max(a,b) <= 1000), %d points, "
        "worst rel diff %s" % (n_mpmath, mpmath.nstr(worst_mpmath, 3)),
        "inc_beta: series check (max(a,b) > 1000), %d points, worst rel diff %s"
        % (n_series, mpmath.nstr(worst_series, 3)),
        "inc_beta: quadrature check (max(a,b) > 1000, series too slow), %d "
        "points, worst rel diff %s" % (n_quad, mpmath.nstr(worst_quad, 3)),
    ]
    header = [
        "# Regularized incomplete beta function I_x(a,b) and its complement 1 - I_x(a,b).",
        "# Generated by generate_reference.py (mpmath, %d digits); do not edit by hand." % DPS,
        "# a, b, x: exact double inputs. i_hi + i_lo = I_x(a,b), c_hi + c_lo = 1 - I_x(a,b)",
        "# (hi = nearest double, lo = nearest double to the remainder).",
        "# log10_i, log10_c: log10 of the true values (meaningful when hi underflows to 0).",
        "a,b,x,i_hi,i_lo,c_hi,c_lo,log10_i,log10_c",
    ]
    return header + rows, summary, failures


# ---------------------------------------------------------------------------
# inc_beta_inv.csv
# ---------------------------------------------------------------------------

class RootError(ArithmeticError):
    pass


def _point(mode, u):
    """(x, y, ln x, ln y) for the parameter u of the given mode."""
    e = mpmath.exp(u)
    c = -mpmath.expm1(u)
    lc = mpmath.log1p(-e)
    if mode == "t":          # u = ln x
        return e, c, u, lc
    return c, e, lc, u       # u = ln(1 - x)


def solve_lower(a, b, q):
    """Root of I_x(a, b) = q for 0 < q <= 1/2 at the current precision.

    Returns (mode, u, iterations) where u = ln x for mode 't' (root <= 1/2)
    and u = ln(1 - x) for mode 's' (root > 1/2).
    """
    half = mpf(0.5)
    lhalf = mpmath.log(half)
    i_half, _ = ibeta_pair(a, b, half, half, lhalf, lhalf)
    mode = "t" if i_half >= q else "s"
    lq = mpmath.log(q)
    lb = lbeta(a, b)
    tol = mpf(10) ** (-(mp.dps - 25))

    def H(u):
        x, y, lx, ly = _point(mode, u)
        i_v, _ = ibeta_pair(a, b, x, y, lx, ly)
        li = mpmath.log(i_v)
        lpdf = (a - 1) * lx + (b - 1) * ly - lb
        if mode == "t":
            return li - lq, mpmath.exp(lpdf + lx - li)
        return lq - li, mpmath.exp(lpdf + ly - li)

    # Candidate starting points.
    cands = []
    if mode == "t":
        g = (lq + mpmath.log(a) + lb) / a            # x^a/(a B) = q
    else:
        g = (mpmath.log(1 - q) + mpmath.log(b) + lb) / b   # (1-x)^b/(b B) = 1-q
    if g < lhalf:
        cands.append(g)
    mean = a / (a + b)
    sd = mpmath.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    z = -mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * q)
    xn = mean + z * sd
    if mode == "t" and 0 < xn < half:
        cands.append(mpmath.log(xn))
    if mode == "s" and half < xn < 1:
        cands.append(mpmath.log(1 - xn))
    if not cands:
        cands.append(lhalf - 1)
    cands.append(lhalf)              # the root may sit at x = 1/2 (a = b, p = 1/2)

    lo = None
    hi = lhalf                       # H(hi) >= 0 by the choice of mode
    evals = {}
    best = None
    for u in cands:
        h, dh = H(u)
        evals[u] = (h, dh)
        if h < 0:
            if lo is None or u > lo:
                lo = u
        elif u < hi:
            hi = u
        if best is None or abs(h) < abs(evals[best][0]):
            best = u
    # Extend the bracket downwards if needed.
    step = max(mpf(1), abs(min(cands)))
    u = min(cands)
    n_ext = 0
    while lo is None:
        u = u - step
        step *= 2
        n_ext += 1
        if n_ext > 80:
            raise RootError("could not bracket the root")
        h, dh = H(u)
        evals[u] = (h, dh)
        if h < 0:
            lo = u
        else:
            hi = min(hi, u)
    if not (lo <= best <= hi):
        best = lo
    u = best
    h, dh = evals[u]
    # Safeguarded Newton (bisection whenever the Newton step leaves the
    # bracket or does not at least halve the previous step).
    step_old = hi - lo
    step = step_old
    it = 0
    while True:
        it += 1
        if it > 400:
            raise RootError("root iteration did not converge")
        if h == 0:
            break
        if dh > 0 and abs(h / dh) <= tol * (1 + abs(u)):
            u = u - h / dh           # converged: final (quadratic) correction
            break
        if h < 0:
            lo = max(lo, u)
        else:
            hi = min(hi, u)
        newton_ok = dh > 0
        if newton_ok:
            un = u - h / dh
            newton_ok = (lo < un < hi) and abs(2 * h) <= abs(step_old * dh)
        if newton_ok:
            step_old = step
            step = un - u
        else:
            un = (lo + hi) / 2
            step_old = step
            step = un - u
        if abs(step) <= tol * (1 + abs(u)):
            u = un
            break
        u = un
        h, dh = H(u)
    return mode, u, it


def make_inc_beta_inv():
    rows = []
    failures = []
    worst_p = mpf(0)
    worst_x = mpf(0)
    worst_mpmath = mpf(0)
    n_mpmath = 0
    underflow = 0
    max_it = 0
    t0 = time.time()
    for a_f in PARAMS:
        for b_f in PARAMS:
            for p_f in P_GRID:
                a = mpf(a_f)
                b = mpf(b_f)
                with mp.workdps(DPS):
                    p = mpf(p_f)
                    if p_f <= 0.5:
                        al, be, q, swap = a, b, p, False
                    else:
                        al, be, q, swap = b, a, mpmath.fsub(1, p, exact=True), True
                    mode, u, it = solve_lower(al, be, q)
                    max_it = max(max_it, it)
                    # r = root of the solved problem, rc = 1 - r
                    r, rc, lr, lrc = _point(mode, u)
                    if swap:
                        x, y, lx = rc, r, lrc
                    else:
                        x, y, lx = r, rc, lr
                # Residual at higher precision.
                with mp.workdps(DPS_CHECK):
                    r2, rc2, lr2, lrc2 = _point(mode, u)
                    i_v, _ = ibeta_pair(al, be, r2, rc2, lr2, lrc2)
                    res = abs(i_v - q)
                    lpdf = ((al - 1) * lr2 + (be - 1) * lrc2 - lbeta(al, be))
                    scale = mpmath.exp(lpdf + min(lr2, lrc2))
                    dp = res / q
                    dx = res / scale
                worst_p = max(worst_p, dp)
                worst_x = max(worst_x, dx)
                if not (dp < TOL_ROOT and dx < TOL_ROOT):
                    failures.append("inc_beta_inv residual a=%r b=%r p=%r: %s %s"
                                    % (a_f, b_f, p_f, mpmath.nstr(dp, 3),
                                       mpmath.nstr(dx, 3)))
                if max(a_f, b_f) <= 1000:
                    with mp.workdps(DPS_MPMATH):
                        # small-side value of the solved equation
                        if r <= 0.5:
                            v = mpmath.betainc(al, be, 0, r, regularized=True)
                        else:
                            v = 1 - mpmath.betainc(be, al, 0, rc,
                                                   regularized=True)
                        d = abs(v - q) / q
                    n_mpmath += 1
                    worst_mpmath = max(worst_mpmath, d)
                    if not d < TOL_CROSS:
                        failures.append(
                            "inc_beta_inv vs mpmath a=%r b=%r p=%r: %s"
                            % (a_f, b_f, p_f, mpmath.nstr(d, 3)))
                if min(x, y) < mpf("1e-300"):
                    underflow += 1
                with mp.workdps(DPS):
                    if x <= y:
                        (xh, xl, log10_x), (yh, yl, _) = split_complementary(x)
                    else:
                        (yh, yl, _), (xh, xl, log10_x) = split_complementary(y)
                rows.append(",".join([
                    fmt(a_f), fmt(b_f), fmt(p_f), fmt(xh), fmt(xl), fmt(yh),
                    fmt(yl), fmt_log10(log10_x)]))
        log("inc_beta_inv: a=%r done (%d rows, %.0f s)"
            % (a_f, len(rows), time.time() - t0))
    summary = [
        "inc_beta_inv: %d rows; min(x, 1-x) < 1e-300 at %d points"
        % (len(rows), underflow),
        "inc_beta_inv: residual at %d digits: worst |I-p|/p %s, worst "
        "|I-p|/(min(x,1-x) pdf) %s; max solver iterations %d"
        % (DPS_CHECK, mpmath.nstr(worst_p, 3), mpmath.nstr(worst_x, 3), max_it),
        "inc_beta_inv: mpmath.betainc residual (max(a,b) <= 1000), %d roots, "
        "worst |I-p|/p %s" % (n_mpmath, mpmath.nstr(worst_mpmath, 3)),
    ]
    header = [
        "# Quantile of the Beta(a,b) distribution: x with I_x(a,b) = p.",
        "# Generated by generate_reference.py (mpmath, %d digits); do not edit by hand." % DPS,
        "# a, b, p: exact double inputs. x_hi + x_lo = x, y_hi + y_lo = 1 - x of the true root",
        "# (hi = nearest double, lo = nearest double to the remainder).",
        "# log10_x: log10 of the true root (meaningful when x_hi underflows to 0).",
        "a,b,p,x_hi,x_lo,y_hi,y_lo,log10_x",
    ]
    return header + rows, summary, failures


# ---------------------------------------------------------------------------
# ln_gamma.csv
# ---------------------------------------------------------------------------

def lngamma_points():
    pts = set()
    with mp.workdps(DPS):
        n = 400
        for k in range(n):
            pts.add(nearest_double(mpf(10) ** (-8 + mpf(20) * k / (n - 1))))
        for k in range(1, 31):
            pts.add(float(k))
            pts.add(k - 0.5)
        pts.add(30.5)
        for k in range(101):
            pts.add((950 + k) / 1000)
            pts.add((1950 + k) / 1000)
        xmin = mpmath.findroot(mpmath.digamma, mpf("1.4616"))
        xm = nearest_double(xmin)
        pts.add(xm)
        for k in (1, 2, 3):
            pts.add(_step(xm, -k))
            pts.add(_step(xm, k))
        for d in (1e-8, 1e-4, 1e-2):
            pts.add(nearest_double(xmin * (1 + mpf(d))))
            pts.add(nearest_double(xmin * (1 - mpf(d))))
        for c in ("1e-300", "1e-100", "1e-20"):
            cm = mpf(c)
            for f in ("0.5", "1", "2", "3.14159"):
                pts.add(nearest_double(cm * mpf(f)))
    return sorted(pts)


def _step(x, k):
    """x moved by k units in the last place (x a positive normal double)."""
    for _ in range(abs(k)):
        x = math.nextafter(x, math.inf if k > 0 else 0.0)
    return x


def _lngamma_reference(x):
    """Independent ln Gamma(x) at the current precision."""
    if x == int(x) and x <= 200:
        return mpmath.log(mpmath.factorial(int(x) - 1))
    if 2 * x == int(2 * x) and x <= 200:
        n = int(x - mpf(0.5))
        return (mpmath.log(mpmath.factorial(2 * n)) + mpmath.log(mpmath.pi) / 2
                - n * mpmath.log(4) - mpmath.log(mpmath.factorial(n)))
    if x < 100:
        return mpmath.log(mpmath.gamma(x))
    s = (x - mpf(0.5)) * mpmath.log(x) - x + mpmath.log(2 * mpmath.pi) / 2
    x2 = x * x
    xp = x
    for k in range(1, 41):
        s += mpmath.bernoulli(2 * k) / ((2 * k) * (2 * k - 1) * xp)
        xp *= x2
    return s


def make_ln_gamma():
    rows = []
    failures = []
    worst = mpf(0)
    for x_f in lngamma_points():
        with mp.workdps(60):
            x = mpf(x_f)
            v = mpmath.loggamma(x)
        with mp.workdps(DPS):
            ref = _lngamma_reference(mpf(x_f))
        if x_f in (1.0, 2.0):
            ok = v == 0 and abs(ref) < mpf("1e-90")
            d = mpf(0)
            v = mpf(0)
        else:
            d = rel_diff(v, ref)
            ok = d < TOL_LNGAMMA
        worst = max(worst, d)
        if not ok:
            failures.append("ln_gamma x=%r: %s" % (x_f, mpmath.nstr(d, 3)))
        with mp.workdps(60):
            h, l = hi_lo(v)
        rows.append(",".join([fmt(x_f), fmt(h), fmt(l)]))
    summary = ["ln_gamma: %d rows; worst rel diff vs independent reference %s"
               % (len(rows), mpmath.nstr(worst, 3))]
    header = [
        "# ln Gamma(x) for x > 0.",
        "# Generated by generate_reference.py (mpmath, 60 digits); do not edit by hand.",
        "# x: exact double input. hi + lo = ln Gamma(x) (hi = nearest double, lo = nearest",
        "# double to the remainder); exactly 0 at x = 1 and x = 2.",
        "x,hi,lo",
    ]
    return header + rows, summary, failures


# ---------------------------------------------------------------------------

TABLES = {
    "inc_beta": ("inc_beta.csv", make_inc_beta),
    "inc_beta_inv": ("inc_beta_inv.csv", make_inc_beta_inv),
    "ln_gamma": ("ln_gamma.csv", make_ln_gamma),
}


def main(argv):
    names = argv[1:] or ["ln_gamma", "inc_beta", "inc_beta_inv"]
    for name in names:
        if name not in TABLES:
            log("unknown table %r; choose from %s" % (name, ", ".join(TABLES)))
            return 2
    log("mpmath %s, backend %s" % (mpmath.__version__, mpmath.libmp.BACKEND))
    start = time.time()
    all_summary = []
    all_failures = []
    outputs = []
    for name in names:
        fname, fn = TABLES[name]
        t = time.time()
        lines, summary, failures = fn()
        summary.append("%s: %.0f s" % (name, time.time() - t))
        for s in summary:
            log(s)
        all_summary += summary
        all_failures += failures
        outputs.append((fname, lines))
    log("raised-precision complement evaluations: %d; max continued-fraction "
        "iterations: %d" % (STATS["raised_precision"], STATS["max_cf_iter"]))
    if all_failures:
        log("VERIFICATION FAILED (%d):" % len(all_failures))
        for f in all_failures[:50]:
            log("  " + f)
        log("no files written")
        return 1
    for fname, lines in outputs:
        path = os.path.join(HERE, fname)
        tmp = path + ".tmp"
        with open(tmp, "w", newline="\n") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
        log("wrote %s (%d data rows)" % (path, sum(
            1 for l in lines if l and not l.startswith("#")) - 1))
    log("all checks passed; total %.0f s" % (time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
