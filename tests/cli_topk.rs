//! `flowboost eval` with the top-k boosters through the binary: the learning-curve picture
//! (`--curve`, one line per k, `--curve-runs` for a mean with a one-sd band).

mod common;
use common::{flowboost, last_json, temp_dir};

fn curve_run(dir: &std::path::Path, runs: &str) -> (serde_json::Value, String) {
    let svg = dir.join(format!("curve-{runs}.svg"));
    let out = flowboost(&[
        "eval",
        "--generator",
        "multilabel",
        "--examples",
        "400",
        "--algo",
        "topk-bbm",
        "--learners",
        "4",
        "--k",
        "1,3",
        "--curve",
        svg.to_str().unwrap(),
        "--curve-runs",
        runs,
        "--json",
    ]);
    let report = last_json(&out);
    let text = std::fs::read_to_string(&svg).expect("the curve was written");
    (report, text)
}

#[test]
fn curve_has_one_line_per_k_and_a_band_per_line_when_averaged() {
    let dir = temp_dir("topk-curve");
    let (one, svg1) = curve_run(&dir, "1");
    let (three, svg3) = curve_run(&dir, "3");
    for svg in [&svg1, &svg3] {
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(
            svg.contains("k = 1") && svg.contains("k = 3"),
            "legend: {svg}"
        );
    }
    assert_eq!(svg1.matches("fill-opacity").count(), 0, "one run: no band");
    assert_eq!(svg3.matches("fill-opacity").count(), 2, "a band per line");
    // The reports are the first seed's, whatever the number of curve runs.
    assert_eq!(one["rank_loss"], three["rank_loss"]);
    assert_eq!(one["gamma_grid"].as_array().map(|g| g.len()), Some(2));
}

#[test]
fn curve_runs_need_a_curve_to_draw() {
    let dir = temp_dir("topk-curve-bad");
    let svg = dir.join("c.svg");
    let out = flowboost(&[
        "eval",
        "--generator",
        "multilabel",
        "--examples",
        "50",
        "--algo",
        "topk-bbm",
        "--learners",
        "2",
        "--curve",
        svg.to_str().unwrap(),
        "--curve-runs",
        "0",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--curve-runs"));
}
