//! Accuracy of bayesretry-beta and statrs on the mpmath tables, side by side, and
//! the slowest quantile points of the grid.
//!
//! Prints Markdown tables (the ones in docs/ACCURACY.md):
//! `cargo run --release -p bayesretry-beta --example accuracy_report`
//!
//! statrs is called on every point; a panic or a NaN from it is counted as a
//! failure of that point rather than stopping the report.

#![allow(clippy::unwrap_used, reason = "a report over fixed tables")]

#[path = "../tests/common/mod.rs"]
mod common;

use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;
use std::time::Instant;

use common::{EPS, Region, inc_beta_rows, inv_rows, ln_gamma_rows, stats};

fn guarded(f: impl Fn() -> f64) -> f64 {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(f64::NAN)
}

#[derive(Default)]
struct Tally {
    errs: Vec<f64>,
    bad: usize,
}

impl Tally {
    fn push(&mut self, e: f64) {
        if e.is_finite() {
            self.errs.push(e);
        } else {
            self.bad += 1;
        }
    }
    fn row(&mut self) -> String {
        let n = self.errs.len() + self.bad;
        let (median, max) = stats(&mut self.errs);
        let in_eps = |v: f64| {
            if v / EPS < 1e6 {
                format!("{:.2}", v / EPS)
            } else {
                format!("{:.1e}", v / EPS)
            }
        };
        format!(
            "{} | {:.2e} | {} | {}/{}",
            in_eps(median),
            max,
            in_eps(max),
            self.bad,
            n
        )
    }
}

fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    println!("### ln_gamma (x from 1e-8 to 1e12)\n");
    println!("| library | median (eps) | max rel | max (eps) | NaN/panic |");
    println!("|---|---:|---:|---:|---:|");
    let mut ours = Tally::default();
    let mut theirs = Tally::default();
    for r in ln_gamma_rows()
        .into_iter()
        .filter(|r| (1e-8..=1e12).contains(&r.x) && r.v.hi != 0.0)
    {
        ours.push(r.v.rel_err(bayesretry_beta::ln_gamma(r.x)));
        theirs.push(r.v.rel_err(guarded(|| statrs::function::gamma::ln_gamma(r.x))));
    }
    println!("| bayesretry-beta | {} |", ours.row());
    println!("| statrs | {} |\n", theirs.row());

    println!("### inc_beta / inc_beta_complement (true value >= 1e-300)\n");
    println!("| region | library | median (eps) | max rel | max (eps) | NaN/panic |");
    println!("|---|---|---:|---:|---:|---:|");
    let rows = inc_beta_rows();
    for region in Region::ALL {
        let mut ours = Tally::default();
        let mut ours_i = Tally::default();
        let mut theirs = Tally::default();
        let mut theirs_i = Tally::default();
        for r in rows.iter().filter(|r| Region::of(r.a, r.b) == region) {
            if r.i.hi >= 1e-300 {
                let e = r.i.rel_err(bayesretry_beta::inc_beta(r.a, r.b, r.x));
                ours.push(e);
                ours_i.push(e);
                let e =
                    r.i.rel_err(guarded(|| statrs::function::beta::beta_reg(r.a, r.b, r.x)));
                theirs.push(e);
                theirs_i.push(e);
            }
            if r.c.hi >= 1e-300 {
                ours.push(r.c.rel_err(bayesretry_beta::inc_beta_complement(r.a, r.b, r.x)));
                // statrs has no complement: 1 - I is what its users get
                theirs.push(
                    r.c.rel_err(1.0 - guarded(|| statrs::function::beta::beta_reg(r.a, r.b, r.x))),
                );
            }
        }
        println!(
            "| {} | bayesretry-beta, I and 1-I | {} |",
            region.name(),
            ours.row()
        );
        println!(
            "| {} | bayesretry-beta, I only | {} |",
            region.name(),
            ours_i.row()
        );
        println!(
            "| {} | statrs, I and 1-I | {} |",
            region.name(),
            theirs.row()
        );
        println!(
            "| {} | statrs, I only | {} |",
            region.name(),
            theirs_i.row()
        );
    }

    println!("\n### inc_beta_inv (true root >= 1e-300)\n");
    println!("| region | library | median (eps) | max rel | max (eps) | NaN/panic |");
    println!("|---|---|---:|---:|---:|---:|");
    let rows = inv_rows();
    let mut timings = Vec::new();
    for region in Region::ALL {
        let mut ours = Tally::default();
        let mut theirs = Tally::default();
        for r in rows
            .iter()
            .filter(|r| Region::of(r.a, r.b) == region && r.x.log10 > -300.0)
        {
            ours.push(r.x.rel_err(bayesretry_beta::inc_beta_inv(r.a, r.b, r.p)));
            theirs.push(r.x.rel_err(guarded(|| {
                statrs::function::beta::inv_beta_reg(r.a, r.b, r.p)
            })));
        }
        println!("| {} | bayesretry-beta | {} |", region.name(), ours.row());
        println!("| {} | statrs | {} |", region.name(), theirs.row());
    }
    // time every grid point (median of 7 runs of 200 calls) to find the slowest
    for r in &rows {
        let mut runs: Vec<f64> = (0..7)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..200 {
                    core::hint::black_box(bayesretry_beta::inc_beta_inv(
                        core::hint::black_box(r.a),
                        r.b,
                        r.p,
                    ));
                }
                t.elapsed().as_secs_f64() / 200.0
            })
            .collect();
        runs.sort_by(f64::total_cmp);
        timings.push((runs[3], r.a, r.b, r.p));
    }
    timings.sort_by(|x, y| y.0.total_cmp(&x.0));
    println!(
        "\n### slowest inc_beta_inv grid points (bayesretry-beta, wall clock, this machine)\n"
    );
    println!("| a | b | p | ns per call |");
    println!("|---:|---:|---:|---:|");
    for &(t, a, b, p) in timings.iter().take(8) {
        println!("| {a:e} | {b:e} | {p:e} | {:.0} |", t * 1e9);
    }
}
