//! `inc_beta_inv` against the mpmath tables: relative error in x at most 1e-12 below
//! max(a, b) = 1e4 and 1e-10 up to 1e6, for true roots down to 1e-300; roots below
//! the double range come back as (at most) a subnormal, never a floor value, NaN or
//! a hang; the quantile is monotone in p and inverts `inc_beta`.

mod common;

use bayesretry_beta::{inc_beta, inc_beta_complement, inc_beta_inv, inc_beta_inv_complement};
use common::{EPS, Region, inv_rows, stats};

fn gate(a: f64, b: f64) -> f64 {
    if a.max(b) < 1e4 { 1e-12 } else { 1e-10 }
}

#[test]
fn relative_error_in_x_within_gates_including_roots_near_1e_minus_300() {
    let mut failures = Vec::new();
    let rows = inv_rows();
    let mut tiny_roots = 0;
    for region in Region::ALL {
        let mut errs = Vec::new();
        let mut worst: Option<String> = None;
        let mut worst_err = 0.0;
        for r in rows.iter().filter(|r| Region::of(r.a, r.b) == region) {
            let got = inc_beta_inv(r.a, r.b, r.p);
            if r.x.log10 < -307.0 {
                // the true root is below the normal range of doubles
                if !(0.0..1e-300).contains(&got) {
                    failures.push(format!(
                        "a={}, b={}, p={}: root 1e{:.0} returned as {got:e}",
                        r.a, r.b, r.p, r.x.log10
                    ));
                }
                continue;
            }
            if r.x.hi < 1e-250 {
                tiny_roots += 1;
            }
            let e = r.x.rel_err(got);
            errs.push(e);
            if e > worst_err {
                worst_err = e;
                worst = Some(format!("a={}, b={}, p={}", r.a, r.b, r.p));
            }
            if !(e <= gate(r.a, r.b)) {
                failures.push(format!(
                    "a={}, b={}, p={}: got {got:e}, want {:e}, rel err {e:.2e}",
                    r.a, r.b, r.p, r.x.hi
                ));
            }
        }
        let n = errs.len();
        let (median, max) = stats(&mut errs);
        println!(
            "{:<34} n = {n:4}  median {:.2} eps  max {:.2e}",
            region.name(),
            median / EPS,
            max
        );
        if let Some(w) = worst {
            println!("    worst at {w}");
        }
    }
    println!("roots below 1e-250 checked to full precision: {tiny_roots}");
    assert!(
        tiny_roots > 0,
        "the table should exercise roots near 1e-300"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn quantile_is_monotone_in_p_and_inverts_the_cdf() {
    let mut rows = inv_rows();
    rows.sort_by(|p, q| {
        p.a.total_cmp(&q.a)
            .then(p.b.total_cmp(&q.b))
            .then(p.p.total_cmp(&q.p))
    });
    for w in rows.windows(2) {
        let (p, q) = (w[0], w[1]);
        if p.a != q.a || p.b != q.b {
            continue;
        }
        let (xp, xq) = (inc_beta_inv(p.a, p.b, p.p), inc_beta_inv(q.a, q.b, q.p));
        assert!(
            xp <= xq,
            "quantile decreases from p={} to p={} (a={}, b={}): {xp} > {xq}",
            p.p,
            q.p,
            p.a,
            p.b
        );
    }
    for r in inv_rows() {
        let x = inc_beta_inv(r.a, r.b, r.p);
        if x > 1e-300 && x < 1.0 {
            // the cdf at the returned root is the target, up to the root's rounding
            let i = if r.p <= 0.5 {
                inc_beta(r.a, r.b, x)
            } else {
                1.0 - inc_beta_complement(r.a, r.b, x)
            };
            let (lo, hi) = (
                f64::from_bits(x.to_bits() - 1),
                f64::from_bits(x.to_bits() + 1),
            );
            let (ilo, ihi) = (inc_beta(r.a, r.b, lo), inc_beta(r.a, r.b, hi));
            assert!(
                ilo <= r.p * (1.0 + 1e-13) && ihi >= r.p * (1.0 - 1e-13),
                "a={}, b={}, p={}: root {x:e} is not bracketed by its neighbours (I = {i:e})",
                r.a,
                r.b,
                r.p
            );
        }
    }
}

#[test]
fn upper_tail_quantile_matches_the_complement_table() {
    // inc_beta_inv_complement(a, b, 1 - p) is the same root; check it on the rows
    // where 1 - p is exact (p >= 1/2).
    let mut worst: f64 = 0.0;
    for r in inv_rows()
        .into_iter()
        .filter(|r| r.p >= 0.5 && r.x.log10 > -300.0)
    {
        let got = inc_beta_inv_complement(r.a, r.b, 1.0 - r.p);
        let e = r.x.rel_err(got);
        worst = worst.max(e);
        assert!(
            e <= gate(r.a, r.b),
            "a={}, b={}, q={}: rel err {e:e}",
            r.a,
            r.b,
            1.0 - r.p
        );
    }
    println!(
        "inc_beta_inv_complement worst relative error {worst:.2e} ({:.1} eps)",
        worst / EPS
    );
}

#[test]
fn out_of_domain_arguments_give_nan_and_the_ends_are_exact() {
    for (a, b, p) in [
        (0.0, 1.0, 0.5),
        (1.0, -2.0, 0.5),
        (1.0, 1.0, -0.1),
        (1.0, 1.0, 1.5),
        (1.0, 1.0, f64::NAN),
    ] {
        assert!(inc_beta_inv(a, b, p).is_nan());
        assert!(inc_beta_inv_complement(a, b, p).is_nan());
    }
    assert_eq!(inc_beta_inv(2.0, 3.0, 0.0), 0.0);
    assert_eq!(inc_beta_inv(2.0, 3.0, 1.0), 1.0);
    assert_eq!(inc_beta_inv_complement(2.0, 3.0, 0.0), 1.0);
    assert_eq!(inc_beta_inv_complement(2.0, 3.0, 1.0), 0.0);
}
