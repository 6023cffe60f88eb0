//! What a retry policy believes after a run of outcomes, and what that belief says.
//!
//! An endpoint has answered 1 1 0 1 0 0 0 (1 = the retry succeeded). Starting from the
//! uniform prior, the Beta posterior after each outcome is printed with its mean, its
//! 95 % equal-tailed credible interval and its 95 % upper bound — the number a
//! posterior-calibrated circuit breaker compares against its floor. Then the same
//! belief after a sustained outage (2 successes in 200 attempts) and after a long
//! healthy run, to show how evidence tightens the bounds.
//!
//! Run: cargo run --release -p bayesretry-examples --example posterior

use bayesretry::Beta;

fn row(label: &str, b: &Beta) {
    let (lo, hi) = b.credible_interval(0.95);
    println!(
        "{label:<22} {:<16} mean {:.4}   95% CI [{:.4}, {:.4}]   95% upper bound {:.4}",
        b.to_string(),
        b.mean(),
        lo,
        hi,
        b.upper_bound(0.95)
    );
}

fn main() {
    println!("Learning from outcomes, starting at the uniform prior:\n");
    let mut belief = Beta::uniform();
    row("prior", &belief);
    for (i, outcome) in [true, true, false, true, false, false, false]
        .into_iter()
        .enumerate()
    {
        belief = belief.observe(outcome);
        let label = format!("after #{} ({})", i + 1, if outcome { "ok" } else { "fail" });
        row(&label, &belief);
    }

    println!("\nThe breaker's question: is the success rate surely below a 5 % floor?\n");
    let floor = 0.05;
    for (label, b) in [
        ("outage: 2 ok / 200", Beta::uniform().update(2.0, 198.0)),
        ("flaky: 60 ok / 100", Beta::uniform().update(60.0, 40.0)),
        ("healthy: 9990 / 1e4", Beta::uniform().update(9990.0, 10.0)),
    ] {
        let ub = b.upper_bound(0.99);
        println!(
            "{label:<22} 99% upper bound {ub:.5}  ->  {}",
            if ub < floor {
                "open the breaker"
            } else {
                "keep calling"
            }
        );
    }

    println!("\nTail precision: the 1e-12 quantile of Beta(0.01, 1) is 1e-1200, below any double;");
    println!(
        "the 1e-3 quantile is {:e} (the true root is 1e-300 to 15 digits).",
        Beta::new(0.01, 1.0)
            .map(|b| b.quantile(1e-3))
            .unwrap_or(f64::NAN)
    );
}
