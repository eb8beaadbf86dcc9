//! Model files through the binary: `eval` and `run` with `--save-model`, `--save-every`,
//! `--load-model` and `--resume`; `flowboost predict` and `flowboost inspect`; options and
//! streams that do not fit a model; damaged model files.

mod common;

use common::{flowboost, last_json, temp_dir};
use std::path::{Path, PathBuf};

/// A deterministic binary LIBSVM stream (a noisy linear concept on 8 sparse features).
fn write_libsvm(path: &Path, n: usize, dim: usize, seed: u64) {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    for _ in 0..n {
        let x: Vec<f64> = (0..dim).map(|_| next()).collect();
        let margin = x[0] + 0.5 * x[1] - x[2] + 0.3 * (next() - 0.5);
        text.push_str(if margin > 0.0 { "+1" } else { "-1" });
        for (j, v) in x.iter().enumerate() {
            if *v > 0.3 {
                text.push_str(&format!(" {}:{v:.4}", j + 1));
            }
        }
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn failure(args: &[&str]) -> String {
    let out = flowboost(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "expected exit code 2: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

struct Files {
    dir: PathBuf,
    full: PathBuf,
}

fn files(name: &str) -> Files {
    let dir = temp_dir(name);
    let full = dir.join("stream.libsvm");
    write_libsvm(&full, 3000, 8, 7);
    Files { dir, full }
}

/// The uninterrupted run and a run that crashes at a bad line after saving every 1,000
/// events, then resumes from the saved model: the resumed predictions are the
/// uninterrupted run's, byte for byte, and so is the final report.
fn crash_and_resume(extra: &[&str], resume_engine: &[&str], name: &str) {
    let f = files(name);
    let base = ["eval", "--algo", "adaboost-ol", "--learners", "5", "--json"];
    // The same stream with line 2,500 broken: the run stops there with an error, after
    // saving at 1,000 and 2,000 events.
    let text = std::fs::read_to_string(&f.full).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2499] = "+1 3:oops";
    let bad = f.dir.join("broken.libsvm");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let model = f.dir.join("model.fbm");
    let mut crash: Vec<&str> = base.to_vec();
    crash.extend([
        "--data",
        s(&bad),
        "--save-model",
        s(&model),
        "--save-every",
        "1000",
    ]);
    crash.extend(extra);
    let err = failure(&crash);
    assert!(err.contains("broken.libsvm:2500"), "{err}");
    resumes_as_the_uninterrupted_run(&f, &model, extra, resume_engine);
}

/// The uninterrupted run of `f`'s stream, and a run resumed on it from `model` (saved
/// after 2,000 events): the resumed predictions are the uninterrupted run's, byte for
/// byte, and so is the final report.
fn resumes_as_the_uninterrupted_run(f: &Files, model: &Path, extra: &[&str], engine: &[&str]) {
    let full_pred = f.dir.join("full.jsonl");
    let base = ["eval", "--algo", "adaboost-ol", "--learners", "5", "--json"];
    let mut full_args: Vec<&str> = base.to_vec();
    full_args.extend(["--data", s(&f.full), "--predictions", s(&full_pred)]);
    full_args.extend(extra);
    let full = last_json(&flowboost(&full_args));
    let inspect = last_json(&flowboost(&["inspect", s(model), "--json"]));
    assert_eq!(inspect["position"]["events"], 2000, "{inspect}");
    // Resume on the whole stream: the first 2,000 events are skipped.
    let rest_pred = f.dir.join("rest.jsonl");
    let mut resume: Vec<&str> = vec!["eval", "--json", "--load-model", s(model), "--resume"];
    resume.extend(["--data", s(&f.full), "--predictions", s(&rest_pred)]);
    resume.extend(extra);
    resume.extend(engine);
    let resumed = last_json(&flowboost(&resume));
    let full_text = std::fs::read_to_string(&full_pred).unwrap();
    let tail: Vec<&str> = full_text.lines().skip(2000).collect();
    let rest_text = std::fs::read_to_string(&rest_pred).unwrap();
    let rest: Vec<&str> = rest_text.lines().collect();
    assert_eq!(rest.len(), 1000);
    assert!(
        rest == tail,
        "the resumed predictions differ from the uninterrupted run's"
    );
    for key in ["accuracy", "examples", "evaluated", "feedback"] {
        assert_eq!(resumed[key], full[key], "{key}: {resumed} vs {full}");
    }
}

#[test]
fn a_crashed_eval_resumes_from_its_last_save_exactly() {
    crash_and_resume(&[], &[], "model-resume");
}

#[test]
fn a_resumed_eval_is_exact_on_the_dataflow_engine_with_feedback_pending() {
    crash_and_resume(
        &["--feedback-delay", "40", "--pending-ttl", "30"],
        &["--engine", "dataflow", "--workers", "2", "--batch", "16"],
        "model-resume-feedback",
    );
}

/// A model file of format version 3 (written by flowboost at commit 3cc8610, before the
/// events waiting in the feedback join named their model: `tests/data/`), saved by the
/// crash run of the test above after 2,000 events with 58 events waiting for their
/// feedback, resumes exactly as the uninterrupted run goes on, on both engines.
#[test]
fn an_older_format_with_feedback_pending_resumes_exactly() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v3-feedback-pending.fbm");
    let inspect = last_json(&flowboost(&["inspect", s(&fixture), "--json"]));
    assert_eq!(inspect["format"], 3, "{inspect}");
    assert_eq!(inspect["pending"], 58, "{inspect}");
    let extra = ["--feedback-delay", "40", "--pending-ttl", "30"];
    let f = files("model-v3-resume");
    resumes_as_the_uninterrupted_run(&f, &fixture, &extra, &[]);
    let f = files("model-v3-resume-dataflow");
    let engine = ["--engine", "dataflow", "--workers", "2", "--batch", "16"];
    resumes_as_the_uninterrupted_run(&f, &fixture, &extra, &engine);
}

/// A model file of format 3 (flowboost at commit 3cc8610) saved by the crash run above
/// with `--feedback-delay 40` and no time-to-live, 40 events waiting: a resume without
/// --pending-ttl keeps the model's "none" (the current default would not match it) and
/// goes on exactly as an uninterrupted run of this build, whose default time-to-live
/// expires nothing.
#[test]
fn an_older_model_without_a_time_to_live_resumes_exactly() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v3-feedback-no-ttl.fbm");
    let inspect = last_json(&flowboost(&["inspect", s(&fixture), "--json"]));
    assert_eq!(inspect["format"], 3, "{inspect}");
    assert_eq!(inspect["pending"], 40, "{inspect}");
    let f = files("model-v3-no-ttl");
    resumes_as_the_uninterrupted_run(&f, &fixture, &["--feedback-delay", "40"], &[]);
}

/// A model file of format version 5 (written by flowboost at commit e709695, before a
/// file could hold one model per key), saved by the crash run above after 2,000 events
/// with events waiting for their feedback, resumes exactly as the uninterrupted run goes
/// on, on both engines.
#[test]
fn a_format_5_model_with_feedback_pending_resumes_exactly() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v5-feedback-pending.fbm");
    let inspect = last_json(&flowboost(&["inspect", s(&fixture), "--json"]));
    assert_eq!(inspect["format"], 5, "{inspect}");
    assert!(inspect["pending"].as_u64().unwrap() > 0, "{inspect}");
    assert!(inspect.get("keys").is_none(), "{inspect}");
    let extra = ["--feedback-delay", "40", "--pending-ttl", "30"];
    let f = files("model-v5-resume");
    resumes_as_the_uninterrupted_run(&f, &fixture, &extra, &[]);
    let f = files("model-v5-resume-dataflow");
    let engine = ["--engine", "dataflow", "--workers", "2", "--batch", "16"];
    resumes_as_the_uninterrupted_run(&f, &fixture, &extra, &engine);
}

#[test]
fn a_saved_model_predicts_as_the_frozen_test_of_eval() {
    frozen_test_is_the_saved_model_s_prediction("model-predict", &[]);
}

/// With delayed feedback the training part's feedback still due is learned before the
/// frozen test part (as at the end of a stream), and nothing during it: the test part is
/// predicted by the model a run on the training part alone saves.
#[test]
fn with_delayed_feedback_the_frozen_test_is_predicted_by_the_trained_model() {
    frozen_test_is_the_saved_model_s_prediction(
        "model-predict-delay",
        &["--feedback-delay", "300"],
    );
    frozen_test_is_the_saved_model_s_prediction(
        "model-predict-delay-dataflow",
        &[
            "--feedback-delay",
            "300",
            "--engine",
            "dataflow",
            "--workers",
            "2",
        ],
    );
}

fn frozen_test_is_the_saved_model_s_prediction(name: &str, extra: &[&str]) {
    let f = files(name);
    let test = f.dir.join("test.libsvm");
    write_libsvm(&test, 500, 8, 99);
    let frozen = f.dir.join("frozen.jsonl");
    let mut base = vec!["eval", "--algo", "adaboost-ol", "--learners", "6", "--json"];
    base.extend_from_slice(extra);
    let mut a: Vec<&str> = base.to_vec();
    a.extend(["--data", s(&f.full), "--test", s(&test), "--frozen-test"]);
    a.extend(["--predictions", s(&frozen)]);
    let report = last_json(&flowboost(&a));
    let model = f.dir.join("trained.fbm");
    let mut t: Vec<&str> = base.to_vec();
    t.extend(["--data", s(&f.full), "--save-model", s(&model)]);
    let trained = last_json(&flowboost(&t));
    if extra.contains(&"--feedback-delay") {
        // Only the training part's events wait for feedback, and all of it joins: the
        // test part's events (no feedback can come for them) neither wait nor expire.
        let (c, n) = (&report["feedback"], trained["examples"].as_u64());
        assert_eq!(
            (c["admitted"].as_u64(), c["joined"].as_u64()),
            (n, n),
            "{report}"
        );
        assert_eq!(c["expired"].as_u64(), Some(0), "{report}");
        assert_eq!(report["examples"].as_u64(), n.map(|n| n + 500), "{report}");
    }
    let served = f.dir.join("served.jsonl");
    let out = flowboost(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        s(&test),
        "--output",
        s(&served),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &Path| -> Vec<(u64, u64, u64)> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["id"].as_u64().unwrap(),
                    v["prediction"].as_u64().unwrap(),
                    v["expert"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let frozen = read(&frozen);
    let served = read(&served);
    assert_eq!(served.len(), 500);
    assert_eq!(frozen, served);
    // Nothing was learned: the model file is unchanged and predicting twice gives the
    // same lines.
    let again = f.dir.join("again.jsonl");
    let out = flowboost(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        s(&test),
        "--output",
        s(&again),
    ]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(f.dir.join("served.jsonl")).unwrap()
    );
}

#[test]
fn inspect_describes_the_model_and_its_stages() {
    let f = files("model-inspect");
    let model = f.dir.join("m.fbm");
    last_json(&flowboost(&[
        "eval",
        "--algo",
        "adaboost-ol",
        "--learners",
        "7",
        "--data",
        s(&f.full),
        "--save-model",
        s(&model),
        "--compress-model",
        "--json",
    ]));
    let r = last_json(&flowboost(&["inspect", s(&model), "--json"]));
    assert_eq!(r["algorithm"], "adaboost-ol");
    assert_eq!(r["options"]["--learners"], "7");
    assert_eq!(r["compression"], "deflate");
    assert_eq!(r["task"], "binary");
    assert_eq!(r["features"], 8);
    assert_eq!(r["position"]["events"], 3000);
    assert_eq!(r["position"]["learned"], 3000);
    assert_eq!(
        r["file_bytes"].as_u64().unwrap(),
        std::fs::metadata(&model).unwrap().len()
    );
    assert!(r["memory_bytes"].as_u64().unwrap() > 1000, "{r}");
    let stages = r["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 7);
    assert!(stages.iter().all(|st| st["alpha"].is_number()));
    assert!(r["total"]["leaves"].as_u64().unwrap() >= 7);
    let hedge: f64 = r["hedge"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .sum();
    assert!((hedge - 1.0).abs() < 1e-9);
    let text = flowboost(&["inspect", s(&model)]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("stage   7: alpha"), "{text}");
}

#[test]
fn options_and_streams_that_do_not_fit_the_model_are_named() {
    let f = files("model-mismatch");
    let model = f.dir.join("m.fbm");
    last_json(&flowboost(&[
        "eval",
        "--algo",
        "online-bbm",
        "--learners",
        "3",
        "--gamma",
        "0.2",
        "--data",
        s(&f.full),
        "--save-model",
        s(&model),
        "--json",
    ]));
    let load = |extra: &[&str]| {
        let mut a = vec!["eval", "--load-model", s(&model), "--data", s(&f.full)];
        a.extend(extra);
        failure(&a)
    };
    let e = load(&["--learners", "4"]);
    assert!(
        e.contains("--learners 4") && e.contains("--learners 3"),
        "{e}"
    );
    let e = load(&["--gamma", "0.1"]);
    assert!(e.contains("--gamma"), "{e}");
    let e = load(&["--algo", "adaboost-ol"]);
    assert!(e.contains("algorithm online-bbm"), "{e}");
    // The same options as the file's are fine.
    let ok = flowboost(&[
        "eval",
        "--load-model",
        s(&model),
        "--data",
        s(&f.full),
        "--learners",
        "3",
        "--json",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // Another feature space.
    let other = f.dir.join("other.libsvm");
    write_libsvm(&other, 100, 9, 3);
    let e = failure(&["eval", "--load-model", s(&model), "--data", s(&other)]);
    assert!(e.contains("m.fbm") && e.contains("the stream has 9"), "{e}");
    let e = failure(&["predict", "--model", s(&model), "--generator", "multiclass"]);
    assert!(e.contains("task is binary"), "{e}");
    // Options that the algorithm does not read are an error, not ignored.
    let e = failure(&[
        "eval",
        "--algo",
        "oza",
        "--potential",
        "hinge",
        "--data",
        s(&f.full),
    ]);
    assert!(e.contains("--potential does not apply to oza"), "{e}");
    let e = failure(&["eval", "--resume", "--data", s(&f.full)]);
    assert!(e.contains("--resume needs --load-model"), "{e}");
}

#[test]
fn damaged_model_files_are_clear_errors() {
    let f = files("model-damaged");
    let model = f.dir.join("m.fbm");
    last_json(&flowboost(&[
        "eval",
        "--algo",
        "adaboost-ol",
        "--learners",
        "3",
        "--data",
        s(&f.full),
        "--save-model",
        s(&model),
        "--json",
    ]));
    let bytes = std::fs::read(&model).unwrap();
    let check = |name: &str, content: &[u8], expect: &str| {
        let p = f.dir.join(name);
        std::fs::write(&p, content).unwrap();
        for cmd in [
            vec!["inspect", s(&p)],
            vec!["predict", "--model", s(&p), "--data", s(&f.full)],
            vec!["eval", "--load-model", s(&p), "--data", s(&f.full)],
        ] {
            let e = failure(&cmd);
            assert!(e.contains(name) && e.contains(expect), "{name}: {e}");
        }
    };
    check("truncated.fbm", &bytes[..bytes.len() / 2], "truncated");
    check("short.fbm", &bytes[..10], "not a flowboost model");
    let mut magic = bytes.clone();
    magic[0] = b'X';
    check("magic.fbm", &magic, "not a flowboost model");
    let mut newer = bytes.clone();
    newer[16..20].copy_from_slice(&99u32.to_le_bytes());
    check("newer.fbm", &newer, "newer");
    let mut flipped = bytes.clone();
    let at = bytes.len() - 100;
    flipped[at] ^= 0x10;
    check("flipped.fbm", &flipped, "checksum");
    let e = failure(&["inspect", s(&f.dir)]);
    assert!(e.contains("is a directory"), "{e}");
    let missing = f.dir.join("missing.fbm");
    let e = failure(&["inspect", s(&missing)]);
    assert!(
        e.contains("missing.fbm") && e.contains("cannot read"),
        "{e}"
    );
}

/// `--max-leaves` and `--max-depth` bound every tree of an ensemble (read back with
/// `flowboost inspect --json`), and a model keeps them: a different value on load is an
/// error naming the option.
#[test]
fn max_leaves_and_max_depth_bound_every_tree() {
    let dir = temp_dir("cli-max-leaves");
    let stages = |extra: &[&str]| -> Vec<(u64, u64)> {
        let file = dir.join(format!("m{}.fbm", extra.len()));
        let file = file.to_str().unwrap();
        let mut args = vec![
            "run",
            "--generator",
            "binary",
            "--examples",
            "20000",
            "--learners",
            "10",
            "--report-every",
            "0",
            "--output",
            "/dev/null",
            "--save-model",
            file,
        ];
        args.extend_from_slice(extra);
        let out = flowboost(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = last_json(&flowboost(&["inspect", "--json", file]));
        report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let l = &s["learner"];
                (l["leaves"].as_u64().unwrap(), l["depth"].as_u64().unwrap())
            })
            .collect()
    };
    let free = stages(&[]);
    assert!(free.iter().any(|&(leaves, _)| leaves > 8), "{free:?}");
    assert!(free.iter().any(|&(_, depth)| depth > 2), "{free:?}");
    let bounded = stages(&["--max-leaves", "8", "--max-depth", "2"]);
    assert!(
        bounded
            .iter()
            .all(|&(leaves, depth)| leaves <= 8 && depth <= 2),
        "{bounded:?}"
    );
    let file = dir.join("m4.fbm");
    let out = flowboost(&[
        "run",
        "--load-model",
        file.to_str().unwrap(),
        "--generator",
        "binary",
        "--examples",
        "10",
        "--max-leaves",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--max-leaves 4 does not match"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = flowboost(&["run", "--generator", "binary", "--max-leaves", "0"]);
    assert_eq!(out.status.code(), Some(2));
}
