//! [`Picture`] and [`write_svg`]: a simulation run over time, drawn with
//! plotters' SVG backend.
//!
//! Three panels share the time axis, so that one glance down the page reads
//! cause and effect: the outage (shaded in every panel) makes the success rate
//! of every policy fall; the adaptive policy's belief (its posterior mean, with
//! the credible band) follows the truth down; and its retry rate falls with it,
//! while fixed-3 keeps retrying into the outage.

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

/// Draws `picture` into an SVG file at `path`.
pub(crate) fn write_svg(path: &Path, picture: &Picture) -> Result<(), Error> {
    let shown = path.display().to_string();
    let failed = |e: &dyn core::fmt::Display| Error::Write {
        path: shown.clone(),
        error: io::Error::other(e.to_string()),
    };
    // plotters reports a file it cannot create only when the picture is
    // presented; creating it first gives the operating system's own reason.
    std::fs::File::create(path).map_err(|error| Error::Write {
        path: shown.clone(),
        error,
    })?;
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    draw(&root, picture).map_err(|e| failed(&e))?;
    root.present().map_err(|e| failed(&e))
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
    legend(&mut chart)
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
    legend(&mut chart)
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
    legend(&mut chart)
}

fn legend<'a, 'b>(
    chart: &mut ChartContext<'b, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
) -> Result2<'a>
where
    'a: 'b,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
}

#[cfg(test)]
mod tests {
    use super::{Belief, Picture, PolicyLines, write_svg};

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
}
