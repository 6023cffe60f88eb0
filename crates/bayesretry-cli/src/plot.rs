//! [`Picture`] and [`write_svg`]: a simulation run over time, drawn with
//! plotters' SVG backend.
//!
//! Three panels share the time axis, so that one glance down the page reads
//! cause and effect: the outage (shaded in every panel) makes the success rate
//! of every policy fall; the adaptive policy's belief (its posterior mean, with
//! the credible band) follows the truth down; and its retry rate falls with it,
//! while fixed-3 keeps retrying into the outage.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::Error;

/// The size of the picture, in pixels.
const SIZE: (u32, u32) = (1000, 960);

/// The shade of an outage window.
const OUTAGE: RGBColor = RGBColor(214, 39, 40);

/// One policy's lines: success rate and retries per call over time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PolicyLines {
    /// The name in the legend.
    pub(crate) name: String,
    /// (time in seconds, rolling success rate).
    pub(crate) success: Vec<(f64, f64)>,
    /// (time in seconds, rolling retries per call).
    pub(crate) retries: Vec<(f64, f64)>,
}

/// What the adaptive policy believed over time, and what was true.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Belief {
    /// What the belief is about, for the panel's title.
    pub(crate) about: String,
    /// (time in seconds, posterior mean).
    pub(crate) mean: Vec<(f64, f64)>,
    /// (time in seconds, lower bound, upper bound) of the credible band.
    pub(crate) band: Vec<(f64, f64, f64)>,
    /// (time in seconds, the true probability), when the model knows it.
    pub(crate) truth: Vec<(f64, f64)>,
}

/// Everything drawn.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Picture {
    /// The title over the three panels.
    pub(crate) title: String,
    /// The end of the time axis, in seconds.
    pub(crate) x_max: f64,
    /// Outage windows to shade, in seconds.
    pub(crate) outages: Vec<(f64, f64)>,
    /// The policies, in legend order; the first is drawn on top.
    pub(crate) policies: Vec<PolicyLines>,
    /// The adaptive policy's belief.
    pub(crate) belief: Belief,
}

/// The colour of the `i`-th policy (a colour-blind-safe palette).
fn colour(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 5] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(127, 127, 127),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    PALETTE.get(i % PALETTE.len()).copied().unwrap_or(BLACK)
}

/// Checks, before a run, that a plot can be written at `path`, so that a
/// missing directory or a denied permission is reported before the run rather
/// than after it. An existing file is opened for writing and left as it is (the
/// plot overwrites it after the run); a new one is created and removed again.
pub(crate) fn check_writable(path: &Path) -> Result<(), Error> {
    let failed = |error| Error::Write {
        path: path.display().to_string(),
        error,
    };
    match OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(_) => std::fs::remove_file(path).map_err(failed),
                // a link to a file not there yet: the write will create it
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
                Err(error) => Err(failed(error)),
            }
        }
        Err(error) => Err(failed(error)),
    }
}

/// Draws `picture` into an SVG file at `path`.
pub(crate) fn write_svg(path: &Path, picture: &Picture) -> Result<(), Error> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, picture).map_err(drawing_failed)?;
        root.present().map_err(drawing_failed)?;
    }
    save(path, &svg)
}

/// Writes the SVG text `svg` to `path`, replacing any file there. The picture
/// is drawn in memory and written here, rather than by plotters' file backend,
/// so that a failed write (a full disk) has the operating system's error as
/// its cause, not plotters' text of it.
fn save(path: &Path, svg: &str) -> Result<(), Error> {
    std::fs::write(path, svg).map_err(|error| Error::Write {
        path: path.display().to_string(),
        error,
    })
}

/// A picture that cannot be drawn in memory: a bug, as nothing is written yet.
fn drawing_failed(error: DrawingAreaErrorKind<io::Error>) -> Error {
    Error::Internal(format!("cannot draw the plot: {error}"))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Result2<'a> = Result<(), DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>>;

fn draw<'a>(root: &Area<'a>, picture: &Picture) -> Result2<'a> {
    root.fill(&WHITE)?;
    let root = root.titled(&picture.title, ("sans-serif", 22))?;
    let panels = root.split_evenly((3, 1));
    let x_max = if picture.x_max > 0.0 {
        picture.x_max
    } else {
        1.0
    };
    if let [success, belief, retries] = panels.as_slice() {
        draw_success(success, picture, x_max)?;
        draw_belief(belief, picture, x_max)?;
        draw_retries(retries, picture, x_max)?;
    }
    Ok(())
}

/// Shades the outage windows between `0` and `y_max`, the first with a legend
/// entry.
fn shade<'a, 'b>(
    chart: &mut ChartContext<'b, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    outages: &[(f64, f64)],
    y_max: f64,
) -> Result2<'a>
where
    'a: 'b,
{
    for (i, &(from, to)) in outages.iter().enumerate() {
        let rect = Rectangle::new([(from, 0.0), (to, y_max)], OUTAGE.mix(0.12).filled());
        let drawn = chart.draw_series(core::iter::once(rect))?;
        if i == 0 {
            drawn.label("outage").legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], OUTAGE.mix(0.25).filled())
            });
        }
    }
    Ok(())
}

fn draw_success<'a>(area: &Area<'a>, picture: &Picture, x_max: f64) -> Result2<'a> {
    let mut chart = ChartBuilder::on(area)
        .caption("Success rate per call (rolling window)", ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..x_max, 0.0..1.05)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("success rate")
        .light_line_style(WHITE)
        .draw()?;
    shade(&mut chart, &picture.outages, 1.05)?;
    for (i, policy) in picture.policies.iter().enumerate().rev() {
        let style = colour(i).stroke_width(2);
        chart
            .draw_series(LineSeries::new(policy.success.iter().copied(), style))?
            .label(policy.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight)
}

fn draw_belief<'a>(area: &Area<'a>, picture: &Picture, x_max: f64) -> Result2<'a> {
    let belief = &picture.belief;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "What the adaptive policy believes: {} (posterior mean, 95% band)",
                belief.about
            ),
            ("sans-serif", 16),
        )
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..x_max, 0.0..1.05)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("P(next attempt succeeds)")
        .light_line_style(WHITE)
        .draw()?;
    shade(&mut chart, &picture.outages, 1.05)?;
    let blue = colour(0);
    if !belief.band.is_empty() {
        let outline: Vec<(f64, f64)> = belief
            .band
            .iter()
            .map(|&(t, _, hi)| (t, hi))
            .chain(belief.band.iter().rev().map(|&(t, lo, _)| (t, lo)))
            .collect();
        chart
            .draw_series(core::iter::once(Polygon::new(
                outline,
                blue.mix(0.2).filled(),
            )))?
            .label("95% credible band")
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], blue.mix(0.3).filled())
            });
    }
    if !belief.truth.is_empty() {
        let style = BLACK.stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                belief.truth.iter().copied(),
                6,
                4,
                style,
            ))?
            .label("true probability")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    let style = blue.stroke_width(2);
    chart
        .draw_series(LineSeries::new(belief.mean.iter().copied(), style))?
        .label("posterior mean")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    legend(&mut chart, SeriesLabelPosition::LowerRight)
}

fn draw_retries<'a>(area: &Area<'a>, picture: &Picture, x_max: f64) -> Result2<'a> {
    let top = picture
        .policies
        .iter()
        .flat_map(|p| p.retries.iter().map(|&(_, r)| r))
        .fold(0.0_f64, f64::max);
    let y_max = (top * 1.1).max(0.1);
    let mut chart = ChartBuilder::on(area)
        .caption("Retries per call (rolling window)", ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("retries per call")
        .light_line_style(WHITE)
        .draw()?;
    shade(&mut chart, &picture.outages, y_max)?;
    for (i, policy) in picture.policies.iter().enumerate().rev() {
        let style = colour(i).stroke_width(2);
        chart
            .draw_series(LineSeries::new(policy.retries.iter().copied(), style))?
            .label(policy.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

/// Draws the legend at `position`: where the lines leave room (rates near 1
/// leave the lower right free, retry counts near 0 the upper right).
fn legend<'a, 'b>(
    chart: &mut ChartContext<'b, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    position: SeriesLabelPosition,
) -> Result2<'a>
where
    'a: 'b,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
}

/// One policy's regret against V/c.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SweepLine {
    /// The policy's id.
    pub(crate) name: String,
    /// (V/c, regret to the DP oracle per 1000 calls).
    pub(crate) points: Vec<(f64, f64)>,
}

/// A scenario's regret sweep: BayesRetry's strategies and the baselines.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Sweep {
    /// The title.
    pub(crate) title: String,
    /// BayesRetry's strategies, drawn bold and named in the legend.
    pub(crate) bayes: Vec<SweepLine>,
    /// The baselines, drawn thin and grey, each named at its right end.
    pub(crate) baselines: Vec<SweepLine>,
}

/// Draws `sweep` into an SVG file at `path`: regret to the DP oracle (per 1000
/// calls, lower is better, the oracle itself at 0) against V/c on a log axis.
pub(crate) fn write_sweep_svg(path: &Path, sweep: &Sweep) -> Result<(), Error> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 600)).into_drawing_area();
        draw_sweep(&root, sweep).map_err(drawing_failed)?;
        root.present().map_err(drawing_failed)?;
    }
    save(path, &svg)
}

fn draw_sweep<'a>(root: &Area<'a>, sweep: &Sweep) -> Result2<'a> {
    root.fill(&WHITE)?;
    let xs = sweep
        .bayes
        .iter()
        .chain(&sweep.baselines)
        .flat_map(|l| l.points.iter().map(|p| p.0));
    let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (x_min, x_max) = if x_min.is_finite() && x_min > 0.0 && x_max > x_min {
        (x_min, x_max * 1.6)
    } else {
        (1.0, 320.0)
    };
    let (y_min, y_top) = sweep_range(sweep);
    let mut chart = ChartBuilder::on(root)
        .caption(&sweep.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d((x_min..x_max).log_scale(), y_min..y_top)?;
    chart
        .configure_mesh()
        .x_desc("V/c: what a success is worth, in attempts")
        .y_desc("regret to the DP oracle per 1000 calls")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE)
        .draw()?;
    let dp = BLACK.stroke_width(1);
    chart
        .draw_series(DashedLineSeries::new(
            [(x_min, 0.0), (x_max, 0.0)],
            6,
            4,
            dp,
        ))?
        .label("DP oracle (knows the truth)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], dp));
    let grey = RGBColor(150, 150, 150);
    let style = grey.stroke_width(1);
    let mut named: Vec<f64> = Vec::new();
    for (i, line) in sweep.baselines.iter().enumerate() {
        let (points, off_chart) = below(&line.points, y_top);
        let drawn = chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        if i == 0 {
            drawn
                .label("baselines (named at their right end)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        // A name is written only where it does not sit on another one.
        let Some(&(x, y)) = points.last() else {
            continue;
        };
        if named
            .iter()
            .any(|&v| (v - y).abs() < 0.03 * (y_top - y_min))
        {
            continue;
        }
        named.push(y);
        let name = if off_chart {
            format!("{} (off the chart)", line.name)
        } else {
            line.name.clone()
        };
        chart.draw_series(core::iter::once(Text::new(
            name,
            (x * 1.05, y),
            ("sans-serif", 11).into_font().color(&grey),
        )))?;
    }
    for (i, line) in sweep.bayes.iter().enumerate() {
        let style = colour(if i == 0 { 0 } else { i + 2 }).stroke_width(3);
        let (points, _) = below(&line.points, y_top);
        chart
            .draw_series(LineSeries::new(points, style))?
            .label(line.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
}

/// The y range of a sweep: everything BayesRetry's lines reach, and the
/// baselines up to twice the typical baseline's worst point, so that one
/// baseline far off does not squash every other line flat at 0.
fn sweep_range(sweep: &Sweep) -> (f64, f64) {
    let ys = |lines: &[SweepLine]| -> Vec<f64> {
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .filter(|y| y.is_finite())
            .collect()
    };
    let bayes = ys(&sweep.bayes);
    let mut worst: Vec<f64> = sweep
        .baselines
        .iter()
        .filter_map(|l| {
            l.points
                .iter()
                .map(|p| p.1)
                .filter(|y| y.is_finite())
                .reduce(f64::max)
        })
        .collect();
    worst.sort_by(f64::total_cmp);
    let typical = worst.get(worst.len() / 2).copied().unwrap_or(0.0);
    let top = bayes
        .iter()
        .copied()
        .chain([2.0 * typical, 0.0])
        .fold(0.0_f64, f64::max);
    let bottom = bayes
        .iter()
        .copied()
        .chain(ys(&sweep.baselines))
        .fold(0.0_f64, f64::min);
    let pad = ((top - bottom) * 0.05).max(1.0);
    (bottom - pad, top + pad)
}

/// The part of a line below `top`: up to where it first crosses it (the
/// crossing interpolated on the log axis), and whether it was cut.
fn below(points: &[(f64, f64)], top: f64) -> (Vec<(f64, f64)>, bool) {
    let mut kept = Vec::with_capacity(points.len());
    for pair in points.windows(2) {
        let (&(x0, y0), &(x1, y1)) = match pair {
            [a, b] => (a, b),
            _ => continue,
        };
        if kept.is_empty() {
            if y0 > top {
                return (kept, true);
            }
            kept.push((x0, y0));
        }
        if y1 > top {
            let f = (top - y0) / (y1 - y0);
            let x = (x0.ln() + f * (x1.ln() - x0.ln())).exp();
            kept.push((x, top));
            return (kept, true);
        }
        kept.push((x1, y1));
    }
    if points.len() == 1 {
        kept.extend(points.iter().copied().filter(|p| p.1 <= top));
    }
    (kept, false)
}

#[cfg(test)]
mod tests {
    use super::{
        Belief, Picture, PolicyLines, Sweep, SweepLine, check_writable, write_svg, write_sweep_svg,
    };

    #[test]
    fn a_picture_is_written_as_well_formed_svg_with_every_label() {
        let path = std::env::temp_dir().join(format!("bayesretry-plot-{}.svg", std::process::id()));
        let line = |level: f64| vec![(0.0, level), (50.0, level / 2.0), (100.0, level)];
        let picture = Picture {
            title: String::from("outage, seed 1"),
            x_max: 100.0,
            outages: vec![(25.0, 50.0)],
            policies: vec![
                PolicyLines {
                    name: String::from("adaptive"),
                    success: line(0.9),
                    retries: line(0.2),
                },
                PolicyLines {
                    name: String::from("fixed-3"),
                    success: line(0.8),
                    retries: line(1.5),
                },
            ],
            belief: Belief {
                about: String::from("attempt 2 after a 503"),
                mean: line(0.7),
                band: vec![(0.0, 0.5, 0.9), (100.0, 0.6, 0.8)],
                truth: line(0.95),
            },
        };
        write_svg(&path, &picture).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        for label in [
            "outage, seed 1",
            "adaptive",
            "fixed-3",
            "outage",
            "posterior mean",
        ] {
            assert!(
                texts.iter().any(|t| t.contains(label)),
                "{label}: {texts:?}"
            );
        }
    }

    #[test]
    fn an_unwritable_path_is_a_write_error_naming_it() {
        let err = write_svg(
            std::path::Path::new("/no/such/dir/plot.svg"),
            &Picture::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/no/such/dir/plot.svg: write failed"),
            "{err}"
        );
    }

    #[test]
    fn a_plot_path_is_checked_without_leaving_a_file_or_touching_one() {
        let dir = std::env::temp_dir();
        let new = dir.join(format!("bayesretry-check-{}.svg", std::process::id()));
        check_writable(&new).unwrap();
        assert!(!new.exists());
        std::fs::write(&new, "an older plot").unwrap();
        check_writable(&new).unwrap();
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "an older plot");
        let _ = std::fs::remove_file(&new);
        let err = check_writable(std::path::Path::new("/no/such/dir/plot.svg")).unwrap_err();
        assert_eq!(
            err.report(),
            "/no/such/dir/plot.svg: write failed: no such file or directory"
        );
        let err = check_writable(&dir).unwrap_err();
        assert!(
            err.report().ends_with("write failed: is a directory"),
            "{err}"
        );
    }

    #[test]
    fn a_line_is_cut_where_it_leaves_the_chart() {
        let (kept, cut) = super::below(&[(1.0, 0.0), (10.0, 5.0), (100.0, 50.0)], 10.0);
        assert!(cut);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[2].1, 10.0);
        // 10 lies a ninth of the way from 5 to 50, on the log axis from 10 to 100
        assert!((kept[2].0 - 10.0_f64 * 10.0_f64.powf(1.0 / 9.0)).abs() < 1e-9);
        let (all, cut) = super::below(&[(1.0, 0.0), (10.0, 5.0)], 10.0);
        assert_eq!((all.len(), cut), (2, false));
    }

    #[test]
    fn a_sweep_is_written_on_a_log_axis_with_every_policy_named() {
        let path =
            std::env::temp_dir().join(format!("bayesretry-sweep-{}.svg", std::process::id()));
        let line = |name: &str, slope: f64| SweepLine {
            name: name.to_owned(),
            points: [1.0, 10.0, 200.0].iter().map(|&v| (v, slope * v)).collect(),
        };
        let sweep = Sweep {
            title: String::from("S5, 2 seeds"),
            bayes: vec![line("BR-G", 0.5)],
            baselines: vec![line("B0", 3.0), line("B1", 2.0)],
        };
        write_sweep_svg(&path, &sweep).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        for label in [
            "S5, 2 seeds",
            "BR-G",
            "B0",
            "B1",
            "DP oracle (knows the truth)",
            "200",
        ] {
            assert!(
                texts.iter().any(|t| t.contains(label)),
                "{label}: {texts:?}"
            );
        }
    }
}
