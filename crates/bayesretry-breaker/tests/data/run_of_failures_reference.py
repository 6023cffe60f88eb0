#!/usr/bin/env python3
"""Independent reference for the figures the run-of-failures tests pin.

The breaker's change-point opening rule (docs/SPEC.md §6) and the decision's
mixture (§5) are written out here from the SPEC alone, in mpmath at 50
significant digits, and run on the same outcome streams as the Rust tests:

* ``tests/a_run_of_failures_is_weighed_against_the_rate_before_it.rs``
* ``tests/a_run_of_failures_opens_a_breaker_that_reads_it.rs``
* ``src/evidence.rs`` and ``src/breaker.rs`` (unit tests)
* ``bayesretry-policy/tests/a_run_of_failures_on_a_quiet_endpoint_stops_retries_too.rs``
* ``bayesretry-policy/tests/the_default_breaker_opens_below_break_even_and_forgets_old_successes.rs``

Each figure is printed twice where it matters: with ``p0`` the success rate
before the run (the rule) and with ``p0`` the mean of a posterior that holds the
run's own failures (the reading before it was fixed), so that a test's claim
about the old reading can be checked too.

Run: python3 run_of_failures_reference.py (needs mpmath; about a minute).
"""

from mpmath import mp, mpf, betainc, log

mp.dps = 50
DOWN_SHARE = mpf(1) / 2
CHANGE_HAZARD = mpf("0.01")
TAU_MS = 600_000


def moved_likelihood(k):
    """m_k = prod_{j<k} (1/2 + j) / (1 + j)."""
    r = mpf(1)
    for j in range(k):
        r *= (mpf(1) / 2 + j) / (1 + j)
    return r


def change_point(k, p0, hazard):
    """(w, down) of SPEC §5."""
    lik = DOWN_SHARE + (1 - DOWN_SHARE) * moved_likelihood(k)
    unchanged = (1 - hazard) * (1 - p0) ** k
    return hazard * lik / (hazard * lik + unchanged), DOWN_SHARE / lik


def sf(a, b, x):
    return betainc(a, b, x, 1, regularized=True)


def cdf(a, b, x):
    return betainc(a, b, 0, x, regularized=True)


def mixture_above(k, a, b, p0, hazard, floor):
    """(1 - w) S(floor) + w (1 - down) S_k(floor) of SPEC §6."""
    w, down = change_point(k, p0, hazard)
    jeffreys = sf(mpf(1) / 2, mpf(1) / 2 + k, floor)
    return (1 - w) * sf(a, b, floor) + w * (1 - down) * jeffreys


def traffic_per_ms(strength, age_ms, half_life):
    ages = mpf(max(age_ms, 1)) / half_life
    return strength * log(2) / (half_life * (1 - mpf(2) ** (-ages)))


def hazard_per_run(runs_per_ms):
    if runs_per_ms > 0:
        return min(1 / (runs_per_ms * TAU_MS), CHANGE_HAZARD)
    return CHANGE_HAZARD


def first_opening(outcomes, half_life=None, floor=mpf("0.1"), conf=mpf("0.95"),
                  min_strength=10, diluted=False, least=None):
    """A closed breaker (prior Beta(1, 1)) fed (t_ms, ok) outcomes from fresh:
    the index of the outcome that first opens it, the run then and the rule
    that opened it; and the least mixture seen (k >= 6), when none does."""
    s = f = mpf(0)
    at = since = None
    run = 0
    before = mpf(1) / 2
    worst = None
    for i, (t, ok) in enumerate(outcomes):
        if half_life is not None:
            since = t if since is None else since
            if at is not None and t > at:
                fade = mpf(2) ** (-mpf(t - at) / half_life)
                s, f = s * fade, f * fade
        at = t
        if not ok and run == 0:
            before = (1 + s) / (2 + s + f)
        s, f = (s + 1, f) if ok else (s, f + 1)
        run = 0 if ok else run + 1
        if ok or s + f < min_strength:
            continue
        a, b = 1 + s, 1 + f
        if cdf(a, b, floor) > conf:
            return i, run, "bound"
        p0 = a / (a + b) if diluted else before
        if half_life is None:
            hazard = CHANGE_HAZARD
        else:
            # the hazard's rate before the run: p0, as the breaker reads it
            # (the old reading took the run's failures out of the current
            # posterior at full weight, floored at the prior's)
            p = a / (a + max(b - run, mpf(1))) if diluted else p0
            rate = traffic_per_ms(s + f, t - since, half_life)
            hazard = hazard_per_run(rate * p * (1 - p))
        above = mixture_above(run, a, b, p0, hazard, floor)
        if run >= 6 and (worst is None or above < worst):
            worst = above
        if above < 1 - conf:
            return i, run, "run"
    return None, worst


def main():
    floor = mpf("0.1")
    print("== a few successes, then every call fails (no half-life, floor 0.1)")
    for s in (3, 5):
        stream = [(1000 * i, i < s) for i in range(200)]
        print(f"  {s} successes: opens at {first_opening(stream)}; "
              f"old reading {first_opening(stream, diluted=True)}")
    for k in (5, 6, 7):
        print(f"  3 successes, run {k}: mixture "
              f"{mp.nstr(mixture_above(k, 4, 1 + k, mpf(4) / 5, CHANGE_HAZARD, floor), 6)}")
    for k in (5, 6):
        print(f"  5 successes, run {k}: mixture "
              f"{mp.nstr(mixture_above(k, 6, 1 + k, mpf(6) / 7, CHANGE_HAZARD, floor), 6)}")
    for k in (67, 68):
        print(f"  3 successes, run {k}, old reading: mixture "
              f"{mp.nstr(mixture_above(k, 4, 1 + k, mpf(4) / (5 + k), CHANGE_HAZARD, floor), 6)}")
    print(f"  cdf of Beta(4, 8) at 0.1: {mp.nstr(cdf(4, 8, floor), 6)}")
    for p0, name in ((mpf(4) / 11, "old"), (mpf(4) / 5, "new")):
        print(f"  weight of a change after 6 at p0 = {name}: "
              f"{mp.nstr(change_point(6, p0, CHANGE_HAZARD)[0], 8)}")

    print("== unit tests of run_says_down (posterior with the run, p0 before it)")
    for k in (5, 6):
        print(f"  Beta(1000, 2), run {k}: "
              f"{mp.nstr(mixture_above(k, 1000, 2 + k, mpf(1000) / 1002, CHANGE_HAZARD, floor), 6)}")
    busy = hazard_per_run(mpf("0.19"))
    for k in (28, 29, 52, 53):
        print(f"  Beta(250, 750), run {k}: per run "
              f"{mp.nstr(mixture_above(k, 250, 750 + k, mpf(1) / 4, CHANGE_HAZARD, floor), 6)}, "
              f"busy {mp.nstr(mixture_above(k, 250, 750 + k, mpf(1) / 4, busy, floor), 6)}")

    print("== one call a second under a 10 s half-life, two healthy minutes, then down")
    stream = [(1000 * i, True) for i in range(120)]
    stream += [(120_000 + 1000 * i, False) for i in range(200)]
    print(f"  opens at {first_opening(stream, 10_000)} "
          f"(index 125 is the 6th failure); old reading {first_opening(stream, 10_000, diluted=True)}")
    faded = sum(mpf(2) ** (-mpf(j) / 10) for j in range(1, 121))
    print(f"  faded successes {mp.nstr(faded, 8)}, usual rate {mp.nstr((1 + faded) / (2 + faded), 8)}")

    print("== the flaky stream (9 successes, 21 failures, 10 calls a second, 10 s half-life)")
    flaky = [(100 * i, i % 30 < 9) for i in range(6000)]
    print(f"  fresh: {first_opening(flaky, 10_000)}; old reading {first_opening(flaky, 10_000, diluted=True)}")
    learning = [(100 * i, (i % 10) in (0, 3, 6)) for i in range(600)]
    later = [(60_000 + 100 * i, i % 30 < 9) for i in range(6000)]
    print(f"  after a minute of learning: {first_opening(learning + later, 10_000)}")

    print("== the default policy breaker, fresh, every call fails, 10 a second")
    down = [(100 * i, False) for i in range(100)]
    print(f"  opens at {first_opening(down, 10_000)}; old reading {first_opening(down, 10_000, diluted=True)}")

    print("== the policy on a quiet endpoint (a call every 5 s), decisions at V/c 10")
    # 60 successes from t = 0 counted without the lock and folded in at the
    # first failure (t = 300 s) as if spread evenly since the fold at t = 0
    folded = mpf(2) ** -30 + 59 * (1 - mpf(2) ** -30) / (30 * log(2))
    before = (1 + folded) / (2 + folded)
    print(f"  faded successes {mp.nstr(folded, 8)}, usual rate {mp.nstr(before, 8)}")
    for k in range(1, 13):
        t = 300_000 + 5000 * (k - 1)
        s = folded * mpf(2) ** (-mpf(t - 300_000) / 10_000)
        f = sum(mpf(2) ** (-mpf(5000 * j) / 10_000) for j in range(k))
        for diluted in (False, True):
            p0 = (1 + s) / (2 + s + f) if diluted else before
            p = (1 + s) / (1 + s + max(1 + f - k, mpf(1))) if diluted else p0
            hazard = hazard_per_run(traffic_per_ms(s + f, t, 10_000) * p * (1 - p))
            w, down_share = change_point(k, p0, hazard)
            q = mpf(1) / 2  # a retry context at its uniform prior
            changed = (1 - down_share) * q / (k + 1)
            q = min(q, (1 - w) * q + w * changed)
            label = "old" if diluted else "new"
            print(f"  failure {k:2d} {label}: p0 {mp.nstr(p0, 6)} hazard {mp.nstr(hazard, 4)} "
                  f"probability {mp.nstr(q, 17)}")


if __name__ == "__main__":
    main()
