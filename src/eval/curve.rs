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
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0.0f64);
    for &(x, y) in all {
        if x.is_finite() && y.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
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
