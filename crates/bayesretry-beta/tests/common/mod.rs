//! Readers for the mpmath known-answer tables in `tests/data/` and the error
//! arithmetic the accuracy tests share.
#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(
    clippy::panic,
    reason = "test support: a missing or broken table must stop the test loudly"
)]

use std::path::PathBuf;

pub(crate) const EPS: f64 = f64::EPSILON;

/// A reference value carried as hi + lo (about 106 bits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exact {
    pub(crate) hi: f64,
    pub(crate) lo: f64,
    /// log10 of the true value (meaningful when hi underflows)
    pub(crate) log10: f64,
}

impl Exact {
    /// Relative error of `got` against the exact value, measured below one ulp.
    pub(crate) fn rel_err(&self, got: f64) -> f64 {
        if self.hi == 0.0 && self.lo == 0.0 {
            return got.abs();
        }
        (((got - self.hi) - self.lo) / self.hi).abs()
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct IncBetaRow {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) x: f64,
    pub(crate) i: Exact,
    pub(crate) c: Exact,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct InvRow {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) p: f64,
    pub(crate) x: Exact,
    pub(crate) y: Exact,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct LnGammaRow {
    pub(crate) x: f64,
    pub(crate) v: Exact,
}

fn data(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", name]
        .iter()
        .collect();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn rows(name: &str) -> Vec<Vec<f64>> {
    let text = data(name);
    let mut out = Vec::new();
    let mut header_seen = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !header_seen {
            header_seen = true;
            continue;
        }
        let vals: Vec<f64> = line
            .split(',')
            .map(|f| {
                f.trim()
                    .parse::<f64>()
                    .unwrap_or_else(|e| panic!("{name}: bad number {f:?}: {e}"))
            })
            .collect();
        out.push(vals);
    }
    assert!(!out.is_empty(), "{name} holds no rows");
    out
}

pub(crate) fn inc_beta_rows() -> Vec<IncBetaRow> {
    rows("inc_beta.csv")
        .into_iter()
        .map(|v| IncBetaRow {
            a: v[0],
            b: v[1],
            x: v[2],
            i: Exact {
                hi: v[3],
                lo: v[4],
                log10: v[7],
            },
            c: Exact {
                hi: v[5],
                lo: v[6],
                log10: v[8],
            },
        })
        .collect()
}

pub(crate) fn inv_rows() -> Vec<InvRow> {
    rows("inc_beta_inv.csv")
        .into_iter()
        .map(|v| InvRow {
            a: v[0],
            b: v[1],
            p: v[2],
            x: Exact {
                hi: v[3],
                lo: v[4],
                log10: v[7],
            },
            y: Exact {
                hi: v[5],
                lo: v[6],
                log10: f64::NAN,
            },
        })
        .collect()
}

pub(crate) fn ln_gamma_rows() -> Vec<LnGammaRow> {
    rows("ln_gamma.csv")
        .into_iter()
        .map(|v| LnGammaRow {
            x: v[0],
            v: Exact {
                hi: v[1],
                lo: v[2],
                log10: f64::NAN,
            },
        })
        .collect()
}

/// The parameter regions the accuracy gates are stated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Region {
    /// max(a, b) <= 10
    Small,
    /// 10 < max(a, b) < 1e4
    Moderate,
    /// 1e4 <= max(a, b) <= 1e6
    Large,
}

impl Region {
    pub(crate) fn of(a: f64, b: f64) -> Region {
        let m = a.max(b);
        if m <= 10.0 {
            Region::Small
        } else if m < 1e4 {
            Region::Moderate
        } else {
            Region::Large
        }
    }

    pub(crate) const ALL: [Region; 3] = [Region::Small, Region::Moderate, Region::Large];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Region::Small => "small (max(a,b) <= 10)",
            Region::Moderate => "moderate (10 < max(a,b) < 1e4)",
            Region::Large => "large (1e4 <= max(a,b) <= 1e6)",
        }
    }
}

/// Median and maximum of a list of errors.
pub(crate) fn stats(errs: &mut [f64]) -> (f64, f64) {
    if errs.is_empty() {
        return (0.0, 0.0);
    }
    errs.sort_by(f64::total_cmp);
    let n = errs.len();
    let median = if n % 2 == 1 {
        errs[n / 2]
    } else {
        0.5 * (errs[n / 2 - 1] + errs[n / 2])
    };
    (median, errs[n - 1])
}
