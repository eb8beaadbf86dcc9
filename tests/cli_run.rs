//! `flowboost run`, the main job, through the binary.

mod common;

use common::{flowboost, temp_dir};

#[test]
fn run_writes_one_prediction_line_per_event_and_a_summary() {
    let out = flowboost(&[
        "run",
        "--generator",
        "binary",
        "--examples",
        "2500",
        "--learners",
        "4",
        "--workers",
        "2",
        "--report-every",
        "1000",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2500);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["id"], i as u64);
        assert!(l["prediction"].as_u64().unwrap() <= 1);
        assert_eq!(l["scores"].as_array().unwrap().len(), 1);
        let e = l["expert"].as_u64().unwrap();
        assert!((1..=4).contains(&e));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("2000 examples, progressive accuracy"),
        "{stderr}"
    );
    assert!(stderr.contains("done:"), "{stderr}");
}

#[test]
fn run_output_file_is_identical_for_one_and_two_workers_and_multilabel_has_sets() {
    let dir = temp_dir("run");
    let mut outputs = vec![];
    for w in ["1", "2"] {
        let path = dir.join(format!("w{w}.jsonl"));
        let out = flowboost(&[
            "run",
            "--generator",
            "multilabel",
            "--examples",
            "800",
            "--workers",
            w,
            "--output",
            path.to_str().unwrap(),
            "--report-every",
            "0",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(std::fs::read_to_string(&path).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    let first: serde_json::Value =
        serde_json::from_str(outputs[0].lines().next().unwrap()).unwrap();
    assert!(first["labels"].is_array(), "{first}");
}
