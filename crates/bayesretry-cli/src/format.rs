//! How numbers and tables are printed for a person.

use core::fmt::Write as _;

/// `x` as short as it reads exactly enough: whole numbers without a fraction
/// (`4`, not `4.0000`), others to four decimals with trailing zeros dropped, and
/// values too small for that in scientific notation.
pub(crate) fn num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        // never "-0"
        return String::from("0");
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let fixed = format!("{x:.4}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "0" || trimmed == "-0" {
        format!("{x:.3e}")
    } else {
        trimmed.to_owned()
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
