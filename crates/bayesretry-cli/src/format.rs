//! How numbers and tables are printed for a person.

use core::fmt::Write as _;

/// `x` as short as it reads exactly enough: whole numbers without a fraction
/// (`4`, not `4.0000`), others to four decimals with trailing zeros dropped, and
/// values too small for that or too large to read as digits (1e15 and beyond,
/// up to 309 of them) in scientific notation: `1.234e-5`, `1e300`.
pub(crate) fn num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        // never "-0"
        return String::from("0");
    }
    if x.abs() >= 1e15 {
        return scientific(x);
    }
    if x.fract() == 0.0 {
        return format!("{x:.0}");
    }
    let fixed = format!("{x:.4}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "0" || trimmed == "-0" {
        scientific(x)
    } else {
        trimmed.to_owned()
    }
}

/// `x` in scientific notation to four significant digits, trailing zeros of
/// the mantissa dropped: `1e300`, `1.5e20`, `-1.234e-5`.
fn scientific(x: f64) -> String {
    let text = format!("{x:.3e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{mantissa}e{exponent}")
        }
        None => text,
    }
}

/// A probability to four decimals.
pub(crate) fn prob(p: f64) -> String {
    format!("{p:.4}")
}

/// A signed amount, with an explicit `+` for gains.
pub(crate) fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", num(x))
    } else {
        num(x)
    }
}

/// Which side of its column a cell sits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A plain-text table: a header row, a rule, then the rows, columns two spaces
/// apart and padded to their widest cell.
#[derive(Debug)]
pub(crate) struct Table {
    columns: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            columns: columns
                .iter()
                .map(|(name, align)| ((*name).to_owned(), *align))
                .collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells print empty, extra ones are dropped.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self) -> String {
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(i))
                    .map(|cell| cell.chars().count())
                    .chain([name.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|(n, _)| n.clone()).collect();
        self.line(&mut out, &header, &widths);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        self.line(&mut out, &rule, &widths);
        for row in &self.rows {
            self.line(&mut out, row, &widths);
        }
        out
    }

    fn line(&self, out: &mut String, cells: &[String], widths: &[usize]) {
        let mut line = String::new();
        for (i, ((_, align), width)) in self.columns.iter().zip(widths).enumerate() {
            let cell = cells.get(i).map_or("", String::as_str);
            if i > 0 {
                line.push_str("  ");
            }
            // Writing into a String cannot fail.
            let _ = match align {
                Align::Left => write!(line, "{cell:<width$}"),
                Align::Right => write!(line, "{cell:>width$}"),
            };
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::{Align, Table, num, signed};

    #[test]
    fn numbers_print_as_short_as_they_read_exactly() {
        assert_eq!(num(4.0), "4");
        assert_eq!(num(4.5), "4.5");
        assert_eq!(num(1.0 / 3.0), "0.3333");
        assert_eq!(num(0.00001234), "1.234e-5");
        assert_eq!(num(0.00001), "1e-5");
        assert_eq!(num(999_999_999_999_999.0), "999999999999999");
        assert_eq!(num(1e15), "1e15");
        assert_eq!(num(-2.5e20), "-2.5e20");
        assert_eq!(num(123_456_789_012_345_680.0), "1.235e17");
        assert_eq!(num(1e300), "1e300");
        assert_eq!(num(f64::MAX), "1.798e308");
        assert_eq!(num(-2.0), "-2");
        assert_eq!(num(-0.0), "0");
        assert_eq!(signed(-0.0), "0");
        assert_eq!(signed(3.25), "+3.25");
        assert_eq!(signed(-0.5), "-0.5");
    }

    #[test]
    fn columns_line_up_on_their_widest_cell() {
        let mut table = Table::new(&[("policy", Align::Left), ("rate", Align::Right)]);
        table.row(vec!["adaptive".into(), "0.9".into()]);
        table.row(vec!["none".into(), "0.75".into()]);
        assert_eq!(
            table.render(),
            "policy    rate\n--------  ----\nadaptive   0.9\nnone      0.75\n"
        );
    }
}
