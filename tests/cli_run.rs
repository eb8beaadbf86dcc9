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

/// A run that starts from a model file (decoded once per process, each worker taking its
/// block of stages) predicts the same on 1 and 3 workers, and not as a fresh model would.
#[test]
fn run_from_a_model_file_is_identical_for_one_and_three_workers() {
    let dir = temp_dir("run-load");
    let model = dir.join("m.fbm");
    let model = model.to_str().unwrap();
    let base = [
        "run",
        "--generator",
        "binary",
        "--learners",
        "6",
        "--report-every",
        "0",
    ];
    let mut train = base.to_vec();
    train.extend([
        "--examples",
        "1500",
        "--output",
        "/dev/null",
        "--save-model",
        model,
    ]);
    let out = flowboost(&train);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut outputs = vec![];
    for (w, load) in [("1", true), ("3", true), ("1", false)] {
        let path = dir.join(format!("w{w}-{load}.jsonl"));
        let mut a = base.to_vec();
        a.extend(["--examples", "600", "--workers", w]);
        a.extend(["--output", path.to_str().unwrap()]);
        if load {
            a.extend(["--load-model", model]);
        }
        let out = flowboost(&a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(std::fs::read_to_string(&path).unwrap());
    }
    assert_eq!(outputs[0].lines().count(), 600);
    assert_eq!(
        outputs[0], outputs[1],
        "1 and 3 workers from the model file"
    );
    assert_ne!(outputs[0], outputs[2], "the model file was not used");
}
