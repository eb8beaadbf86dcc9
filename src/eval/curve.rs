//! Learning curves: the running mean of a per-event loss over the whole stream, written as
//! an SVG picture (no plotting dependency).

use std::fmt::Write as _;
use std::path::Path;

/// A running mean of per-event losses, sampled for plotting.
#[derive(Clone, Debug, Default)]
pub struct Curve {
    sum: f64,
    count: u64,
    /// `(events, running mean)` after every event (thinned when drawn).
    pub points: Vec<(u64, f64)>,
}

impl Curve {
    /// Adds one event's loss.
    pub fn push(&mut self, loss: f64) {
        self.sum += loss;
        self.count += 1;
        self.points.push((self.count, self.sum / self.count as f64));
    }
}

/// One line of a picture.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend.
    pub name: String,
    /// The points `(x, y)`.
    pub points: Vec<(f64, f64)>,
    /// A band around the line: one standard deviation `sd` per point (drawn as
    /// `y +- sd`), when the line is a mean over several runs.
    pub band: Option<Vec<f64>>,
}

impl Series {
    /// The line of one curve, or the pointwise mean of several curves of the same length
    /// with a band of one (sample) standard deviation. Curves of different lengths are cut
    /// to the shortest.
    pub fn mean_of(name: String, curves: &[Curve]) -> Series {
        let n = curves.iter().map(|c| c.points.len()).min().unwrap_or(0);
        let runs = curves.len() as f64;
        let mut points = Vec::with_capacity(n);
        let mut band = Vec::with_capacity(n);
        for j in 0..n {
            let x = curves[0].points[j].0 as f64;
            let mean = curves.iter().map(|c| c.points[j].1).sum::<f64>() / runs;
            let var = if curves.len() > 1 {
                curves
                    .iter()
                    .map(|c| (c.points[j].1 - mean).powi(2))
                    .sum::<f64>()
                    / (runs - 1.0)
            } else {
                0.0
            };
            points.push((x, mean));
            band.push(var.sqrt());
        }
        let band = (curves.len() > 1).then_some(band);
        Series { name, points, band }
    }
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// Writes `series` as an SVG line chart (at most 400 points per line) with axes, ticks and
/// a legend.
pub fn write_svg(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let (w, h, left, right, top, bottom) = (760.0, 480.0, 70.0, 170.0, 40.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0.0f64);
    for s in series {
        for (j, &(x, y)) in s.points.iter().enumerate() {
            let sd = s.band.as_ref().map_or(0.0, |b| b[j]);
            if x.is_finite() && y.is_finite() && sd.is_finite() {
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y - sd);
                y1 = y1.max(y + sd);
            }
        }
    }
    if !x0.is_finite() {
        return Err("the learning curve has no points".into());
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    y1 *= 1.05;
    let sx = |x: f64| left + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| top + ph - (y - y0) / (y1 - y0) * ph;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        left + pw / 2.0,
        escape(title)
    );
    // Axes and ticks.
    let _ = writeln!(
        svg,
        r#"<path d="M{left} {top} V{} H{}" stroke="black" fill="none"/>"#,
        top + ph,
        left + pw
    );
    for i in 0..=5 {
        let fx = x0 + (x1 - x0) * i as f64 / 5.0;
        let fy = y0 + (y1 - y0) * i as f64 / 5.0;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            sx(fx),
            top + ph + 18.0,
            fx.round()
        );
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{:.3}</text>"##,
            left + pw,
            sy(fy),
            sy(fy),
            left - 6.0,
            sy(fy) + 4.0,
            fy
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        h - 10.0,
        escape(x_label)
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        top + ph / 2.0,
        escape(y_label)
    );
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let step = s.points.len().div_ceil(400).max(1);
        if let Some(band) = &s.band {
            // The band: along the upper edge, then back along the lower edge.
            let kept: Vec<usize> = (0..s.points.len())
                .filter(|&j| j % step == 0 || j + 1 == s.points.len())
                .filter(|&j| s.points[j].0.is_finite() && s.points[j].1.is_finite())
                .collect();
            let mut d = String::new();
            for (n, &j) in kept.iter().chain(kept.iter().rev()).enumerate() {
                let (x, y) = s.points[j];
                let y = if n < kept.len() {
                    y + band[j]
                } else {
                    y - band[j]
                };
                let _ = write!(
                    d,
                    "{}{:.1} {:.1}",
                    if d.is_empty() { "M" } else { " L" },
                    sx(x),
                    sy(y)
                );
            }
            if !d.is_empty() {
                let _ = writeln!(
                    svg,
                    r#"<path d="{d} Z" fill="{color}" fill-opacity="0.15" stroke="none"/>"#
                );
            }
        }
        let mut d = String::new();
        for (j, &(x, y)) in s.points.iter().enumerate() {
            if (j % step == 0 || j + 1 == s.points.len()) && x.is_finite() && y.is_finite() {
                let _ = write!(
                    d,
                    "{}{:.1} {:.1}",
                    if d.is_empty() { "M" } else { " L" },
                    sx(x),
                    sy(y)
                );
            }
        }
        let _ = writeln!(
            svg,
            r#"<path d="{d}" stroke="{color}" stroke-width="1.6" fill="none"/>"#
        );
        let ly = top + 10.0 + 18.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            left + pw + 12.0,
            left + pw + 36.0,
            left + pw + 42.0,
            ly + 4.0,
            escape(&s.name)
        );
    }
    svg.push_str("</svg>\n");
    std::fs::write(path, svg)
        .map_err(|e| format!("{}: cannot write the curve: {e}", path.display()))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_of_curves_by_hand() {
        let mut a = Curve::default();
        let mut b = Curve::default();
        for (x, y) in [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
            a.push(x);
            b.push(y);
        }
        // Running means: a = 1, 0.5, 2/3; b = 0, 0.5, 2/3.
        let s = Series::mean_of("m".into(), &[a.clone(), b]);
        let ys: Vec<f64> = s.points.iter().map(|p| p.1).collect();
        assert_eq!(ys, vec![0.5, 0.5, 2.0 / 3.0]);
        let band = s.band.unwrap();
        assert!((band[0] - 0.5f64.sqrt()).abs() < 1e-15, "{band:?}");
        assert_eq!(band[1], 0.0);
        assert!(Series::mean_of("one".into(), &[a]).band.is_none());
    }
}
