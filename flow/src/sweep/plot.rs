//! A sweep's charts as SVG: area against training time
//! (`area_time.svg`) and accuracy or loss against training time
//! (`quality_time.svg`), one series per population N, points labeled by
//! their block counts P.

use std::collections::BTreeMap;
use std::ops::Range;

use super::grid::list;
use super::results::PointResult;
use super::training::Baseline;
use super::SweepError;

/// One plotted point: x (the iteration time in ns), y and the Ps it
/// stands for (points of one N that coincide, such as P beyond T, share a
/// marker).
pub type Pt = (f64, f64, Vec<usize>);

/// The successful points with a y value, per N, in order of P.
pub fn series(results: &[PointResult], y: impl Fn(&PointResult) -> Option<f64>) -> Vec<(usize, Vec<Pt>)> {
    let mut by_n: BTreeMap<usize, Vec<(f64, f64, usize)>> = BTreeMap::new();
    for r in results {
        if let (Some(t), Some(v)) = (&r.time, y(r)) {
            by_n.entry(r.population).or_default().push((1e3 * t.iteration_us, v, r.blocks));
        }
    }
    by_n.into_iter()
        .map(|(n, mut v)| {
            v.sort_by_key(|p| p.2);
            let mut pts: Vec<Pt> = Vec::new();
            for (x, y, p) in v {
                match pts.iter_mut().find(|q| q.0 == x && q.1 == y) {
                    Some(q) => q.2.push(p),
                    None => pts.push((x, y, vec![p])),
                }
            }
            (n, pts)
        })
        .collect()
}

/// A logarithmic axis range over whole decades around `values` (positive
/// ones), so that it has labeled ticks; 1 to 10 without any.
pub fn log_range(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = values.filter(|v| *v > 0.0).fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi == 0.0 {
        return 1.0..10.0;
    }
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    if hi > lo {
        lo..hi
    } else {
        lo..lo * 10.0
    }
}

/// The time axis: every point's iteration time, in ns (plotters labels
/// a logarithmic axis of values below 1 poorly).
pub fn time_range(results: &[PointResult]) -> Range<f64> {
    log_range(results.iter().filter_map(|r| r.time.as_ref()).map(|t| 1e3 * t.iteration_us))
}

/// `v` with at most 3 significant digits after the point, without
/// trailing zeros.
pub fn tick_number(v: f64) -> String {
    let digits = if v == 0.0 { 0 } else { (2 - v.abs().log10().floor() as i32).max(0) as usize };
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A duration in nanoseconds as a tick label, in ns, us, ms or s.
pub fn tick_duration(ns: f64) -> String {
    let (v, unit) = match ns {
        x if x >= 1e9 => (x / 1e9, "s"),
        x if x >= 1e6 => (x / 1e6, "ms"),
        x if x >= 1e3 => (x / 1e3, "us"),
        x => (x, "ns"),
    };
    format!("{} {unit}", tick_number(v))
}

/// LUTs against iteration time, one series per N, points labeled by P.
pub fn plot_area(name: &str, results: &[PointResult]) -> Result<String, SweepError> {
    let s = series(results, |r| r.area.as_ref().map(|a| a.luts as f64).filter(|v| *v > 0.0));
    let points = s.iter().flat_map(|(_, v)| v.iter());
    let x = time_range(results);
    let y = log_range(points.map(|p| p.1));
    let chart = Chart { title: &format!("{name}: area vs training time"), ylabel: "LUTs (yosys estimate)", x, y, log_y: true };
    chart.draw(&s, None, Corner::UpperRight)
}

/// Accuracy (with labels) or buffer loss after training against
/// iteration time, with a line at the value `before` training; without
/// data (`trained` false), an empty chart that says so.
pub fn plot_quality(
    name: &str,
    results: &[PointResult],
    trained: bool,
    labels: bool,
    before: Option<Baseline>,
) -> Result<String, SweepError> {
    let s = series(results, |r| {
        let q = r.training.as_ref()?;
        if labels {
            q.accuracy.map(|a| 100.0 * a)
        } else {
            Some(f64::from(q.loss))
        }
    });
    let x = time_range(results);
    let base = before.and_then(|b| if labels { b.accuracy.map(|a| 100.0 * a) } else { Some(f64::from(b.loss)) });
    let (title, ylabel, y, corner) = if !trained {
        (format!("{name}: no --data, no accuracy or loss"), "accuracy or loss", 0.0..1.0, Corner::UpperRight)
    } else if labels {
        (format!("{name}: accuracy after training vs training time"), "accuracy on all samples (%)", 0.0..100.0, Corner::LowerRight)
    } else {
        let top = s.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)).chain(base).fold(0.0f64, f64::max);
        let y = 0.0..(top * 1.1).max(1.0);
        (format!("{name}: buffer loss after training vs training time"), "buffer loss (raw codes)", y, Corner::UpperRight)
    };
    Chart { title: &title, ylabel, x, y, log_y: false }.draw(&s, base, corner)
}

/// Where a chart's legend goes.
#[derive(Debug, Clone, Copy)]
enum Corner {
    UpperRight,
    LowerRight,
}

/// A chart's frame: a logarithmic time axis `x` (ns) and a `y` axis,
/// logarithmic if `log_y`.
struct Chart<'a> {
    title: &'a str,
    ylabel: &'a str,
    x: Range<f64>,
    y: Range<f64>,
    log_y: bool,
}

impl Chart<'_> {
    /// Draws the chart as SVG text: one line per N with its points labeled
    /// by P, and a horizontal line at `baseline` (the value before
    /// training); the legend in `corner`.
    fn draw(self, series: &[(usize, Vec<Pt>)], baseline: Option<f64>, corner: Corner) -> Result<String, SweepError> {
        use plotters::prelude::*;

        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, (900, 600)).into_drawing_area();
            area.fill(&WHITE)?;
            let y = self.y.clone();
            if self.log_y {
                self.draw_on(&area, y.log_scale(), series, baseline, corner)?;
            } else {
                self.draw_on(&area, y, series, baseline, corner)?;
            }
            area.present()?;
        }
        Ok(svg)
    }

    /// Draws onto `area` with the y axis `y`.
    fn draw_on<Y>(
        &self,
        area: &plotters::prelude::DrawingArea<plotters::prelude::SVGBackend<'_>, plotters::coord::Shift>,
        y: Y,
        series: &[(usize, Vec<Pt>)],
        baseline: Option<f64>,
        corner: Corner,
    ) -> Result<(), SweepError>
    where
        Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        use plotters::prelude::*;

        let xr = self.x.clone();
        let mut chart = ChartBuilder::on(area)
            .caption(self.title, ("sans-serif", 20))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(self.x.clone().log_scale(), y)?;
        chart
            .configure_mesh()
            .x_desc("time per training iteration (generated trainer's schedule, log scale)")
            .y_desc(self.ylabel)
            .x_labels(12)
            .x_label_formatter(&|v| tick_duration(*v))
            .y_label_formatter(&|v| tick_number(*v))
            .draw()?;
        for (i, (n, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))?
                .label(format!("N = {n}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| {
                EmptyElement::at((p.0, p.1))
                    + Circle::new((0, 0), 4, color.filled())
                    + Text::new(format!("P={}", list(&p.2)), (6, -16), ("sans-serif", 12))
            }))?;
        }
        if let Some(b) = baseline {
            let grey = RGBColor(128, 128, 128);
            chart
                .draw_series(LineSeries::new([(xr.start, b), (xr.end, b)], grey.stroke_width(1)))?
                .label("before training")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
        }
        if !series.is_empty() || baseline.is_some() {
            let position = match corner {
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            };
            chart
                .configure_series_labels()
                .position(position)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::results::{Area, Quality, Time};

    /// A point (N, P) whose iteration takes `us` microseconds, with `luts`
    /// and, if given, a training result.
    fn point(n: usize, p: usize, us: f64, luts: u64, trained: Option<(u32, f64)>) -> PointResult {
        let mut r = PointResult::new(n, p);
        r.time = Some(Time {
            groups: 1,
            blocks_built: p,
            passes_per_image: n as u64,
            cycles_per_iteration: 100,
            iteration_us: us,
            us_per_image: us / 4.0,
        });
        r.area = Some(Area {
            luts,
            ffs: 1,
            carry: 0,
            carry_cell: "CARRY8".into(),
            dsps: 0,
            bram36: 0.0,
            logic_levels: 1,
            shares: None,
        });
        r.training = trained.map(|(loss, acc)| Quality { iterations: 2, loss, accuracy: Some(acc) });
        r
    }

    /// N 2 at P 6 and P 8 (the same design: one marker "P=6,8"), N 4 at P 6,
    /// N 3 failed.
    fn results() -> Vec<PointResult> {
        let mut failed = PointResult::new(3, 6);
        failed.fail("configuration", "odd".into());
        vec![
            point(2, 6, 0.25, 300, Some((40, 0.5))),
            point(2, 8, 0.25, 300, Some((40, 0.5))),
            point(4, 6, 0.5, 500, Some((30, 0.75))),
            failed,
        ]
    }

    /// An SVG document whose text elements are closed.
    fn assert_svg(svg: &str) {
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }

    #[test]
    fn coinciding_points_of_one_n_share_a_marker() {
        let s = series(&results(), |r| r.area.as_ref().map(|a| a.luts as f64));
        assert_eq!(s, vec![(2, vec![(250.0, 300.0, vec![6, 8])]), (4, vec![(500.0, 500.0, vec![6])])]);
    }

    #[test]
    fn the_area_chart_has_a_series_per_n_and_p_labels() {
        let svg = plot_area("tiny", &results()).expect("svg");
        assert_svg(&svg);
        for w in ["tiny: area vs training time", "LUTs (yosys estimate)", "N = 2", "N = 4", "P=6,8", "P=6"] {
            assert!(svg.contains(w), "{w:?}");
        }
        assert!(!svg.contains("N = 3"), "a failed point has no series");
    }

    #[test]
    fn the_accuracy_chart_has_the_baseline() {
        let before = Some(Baseline { loss: 50, accuracy: Some(0.25) });
        let svg = plot_quality("tiny", &results(), true, true, before).expect("svg");
        assert_svg(&svg);
        for w in ["accuracy after training", "accuracy on all samples (%)", "N = 2", "N = 4", "P=6,8", "before training"] {
            assert!(svg.contains(w), "{w:?}");
        }
    }

    #[test]
    fn the_loss_chart_without_labels() {
        let svg = plot_quality("tiny", &results(), true, false, Some(Baseline { loss: 50, accuracy: None })).expect("svg");
        assert_svg(&svg);
        for w in ["buffer loss after training", "buffer loss (raw codes)", "N = 2", "before training"] {
            assert!(svg.contains(w), "{w:?}");
        }
    }

    #[test]
    fn without_data_the_chart_says_so() {
        let mut untrained = results();
        untrained.iter_mut().for_each(|r| r.training = None);
        let svg = plot_quality("tiny", &untrained, false, false, None).expect("svg");
        assert_svg(&svg);
        assert!(svg.contains("tiny: no --data, no accuracy or loss"));
        assert!(!svg.contains("N = 2") && !svg.contains("before training"), "no series, no legend");
    }

    #[test]
    fn log_ranges_cover_whole_decades() {
        assert_eq!(log_range([3.0, 450.0].into_iter()), 1.0..1000.0);
        let r = log_range([0.02, 0.5].into_iter());
        assert!((r.start - 0.01).abs() < 1e-15 && r.end == 1.0, "{r:?}");
        assert_eq!(log_range([10.0].into_iter()), 10.0..100.0, "one decade at least");
        assert_eq!(log_range([0.0, -5.0].into_iter()), 1.0..10.0, "no positive value");
        assert_eq!(log_range(std::iter::empty()), 1.0..10.0);
    }

    #[test]
    fn the_time_axis_is_in_nanoseconds() {
        // 0.25 us and 0.5 us: 250 ns and 500 ns, within 100 ns to 1 us.
        assert_eq!(time_range(&results()), 100.0..1000.0);
        assert_eq!(time_range(&[]), 1.0..10.0);
    }

    #[test]
    fn tick_numbers_have_three_significant_digits_at_most() {
        let cases = [(0.0, "0"), (5.0, "5"), (12.345, "12.3"), (0.012345, "0.0123"), (0.5, "0.5"), (1234.6, "1235"), (-2.5, "-2.5")];
        for (v, want) in cases {
            assert_eq!(tick_number(v), want, "{v}");
        }
    }

    #[test]
    fn tick_durations_pick_their_unit() {
        for (ns, want) in [(250.0, "250 ns"), (1500.0, "1.5 us"), (20e6, "20 ms"), (3e9, "3 s")] {
            assert_eq!(tick_duration(ns), want, "{ns}");
        }
    }
}
