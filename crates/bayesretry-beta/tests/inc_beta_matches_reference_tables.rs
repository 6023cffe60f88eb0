//! `inc_beta` and `inc_beta_complement` against the mpmath tables: the accuracy gates
//! of the crate (median at most 2 epsilon per region; max relative error 1e-13 below
//! max(a, b) = 1e4 and 1e-12 up to 1e6, wherever the true value is at least 1e-300),
//! plus the identities every evaluation must keep.

mod common;

use bayesretry_beta::{inc_beta, inc_beta_complement};
use common::{EPS, Region, inc_beta_rows, stats};

/// The smallest true value the relative-error gates apply to.
const FLOOR: f64 = 1e-300;

fn gate(a: f64, b: f64) -> f64 {
    if a.max(b) < 1e4 { 1e-13 } else { 1e-12 }
}

#[test]
fn relative_error_within_gates_in_every_region() {
    let rows = inc_beta_rows();
    let mut failures = Vec::new();
    for region in Region::ALL {
        let mut errs = Vec::new();
        for r in rows.iter().filter(|r| Region::of(r.a, r.b) == region) {
            for (name, exact, got) in [
                ("I", r.i, inc_beta(r.a, r.b, r.x)),
                ("1-I", r.c, inc_beta_complement(r.a, r.b, r.x)),
            ] {
                if exact.hi < FLOOR {
                    continue;
                }
                let e = exact.rel_err(got);
                errs.push(e);
                if !(e <= gate(r.a, r.b)) {
                    failures.push(format!(
                        "{name}(a={}, b={}, x={}): got {got:e}, want {:e}, rel err {e:.2e}",
                        r.a, r.b, r.x, exact.hi
                    ));
                }
            }
        }
        let n = errs.len();
        let (median, max) = stats(&mut errs);
        println!(
            "{:<34} n = {n:4}  median {:.2} eps  max {:.1} eps",
            region.name(),
            median / EPS,
            max / EPS
        );
        if !(median <= 2.0 * EPS) {
            failures.push(format!(
                "{}: median error {:.2} eps > 2 eps",
                region.name(),
                median / EPS
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn never_nan_and_complements_sum_to_one() {
    for r in inc_beta_rows() {
        let i = inc_beta(r.a, r.b, r.x);
        let c = inc_beta_complement(r.a, r.b, r.x);
        assert!(
            !i.is_nan() && !c.is_nan(),
            "NaN at a={}, b={}, x={}",
            r.a,
            r.b,
            r.x
        );
        assert!((0.0..=1.0).contains(&i) && (0.0..=1.0).contains(&c));
        assert!(
            ((i + c) - 1.0).abs() <= 4.0 * EPS,
            "I + (1 - I) = {} at a={}, b={}, x={}",
            i + c,
            r.a,
            r.b,
            r.x
        );
    }
}

#[test]
fn monotone_in_x_for_every_parameter_pair() {
    let mut rows = inc_beta_rows();
    rows.sort_by(|p, q| {
        p.a.total_cmp(&q.a)
            .then(p.b.total_cmp(&q.b))
            .then(p.x.total_cmp(&q.x))
    });
    for w in rows.windows(2) {
        let (p, q) = (w[0], w[1]);
        if p.a != q.a || p.b != q.b {
            continue;
        }
        let (ip, iq) = (inc_beta(p.a, p.b, p.x), inc_beta(q.a, q.b, q.x));
        let (cp, cq) = (
            inc_beta_complement(p.a, p.b, p.x),
            inc_beta_complement(q.a, q.b, q.x),
        );
        assert!(
            ip <= iq,
            "I decreases between x={} and x={} (a={}, b={}): {ip} > {iq}",
            p.x,
            q.x,
            p.a,
            p.b
        );
        assert!(
            cp >= cq,
            "1-I increases between x={} and x={} (a={}, b={})",
            p.x,
            q.x,
            p.a,
            p.b
        );
    }
}

#[test]
fn out_of_domain_arguments_give_nan() {
    for (a, b, x) in [
        (0.0, 1.0, 0.5),
        (1.0, -1.0, 0.5),
        (f64::NAN, 1.0, 0.5),
        (1.0, f64::INFINITY, 0.5),
        (1.0, 1.0, -0.1),
        (1.0, 1.0, 1.1),
        (1.0, 1.0, f64::NAN),
    ] {
        assert!(inc_beta(a, b, x).is_nan());
        assert!(inc_beta_complement(a, b, x).is_nan());
    }
    assert_eq!(inc_beta(2.0, 3.0, 0.0), 0.0);
    assert_eq!(inc_beta(2.0, 3.0, 1.0), 1.0);
    assert_eq!(inc_beta_complement(2.0, 3.0, 0.0), 1.0);
}
