//! `flowboost eval` through the binary: the JSON contract, the protocols, the engines, and
//! bad input (exit code 2 with the file, line and reason).

mod common;

use common::{flowboost, last_json, shared_data, temp_dir};

#[test]
fn json_report_has_the_contract_fields() {
    let out = flowboost(&[
        "eval",
        "--algo",
        "single",
        "--generator",
        "multiclass",
        "--examples",
        "2000",
        "--json",
    ]);
    let r = last_json(&out);
    for key in [
        "algorithm",
        "task",
        "examples",
        "evaluated",
        "seconds",
        "examples_per_second",
        "accuracy",
    ] {
        assert!(r.get(key).is_some(), "missing {key}: {r}");
    }
    assert_eq!(r["algorithm"], "single");
    assert_eq!(r["task"], "multiclass");
    assert_eq!(r["examples"], 2000);
    assert_eq!(r["evaluated"], 2000);
    let acc = r["accuracy"].as_f64().unwrap();
    assert!(acc > 0.4 && acc < 1.0, "accuracy {acc}");

    let out = flowboost(&[
        "eval",
        "--algo",
        "single",
        "--generator",
        "multilabel",
        "--examples",
        "1000",
        "--json",
    ]);
    let r = last_json(&out);
    assert_eq!(r["task"], "multilabel");
    for key in [
        "rank_loss",
        "hamming_loss",
        "precision",
        "recall",
        "f1",
        "micro_f1",
        "macro_f1",
    ] {
        let v = r[key]
            .as_f64()
            .unwrap_or_else(|| panic!("missing {key}: {r}"));
        assert!((0.0..=1.0).contains(&v), "{key} = {v}");
    }
    // A ranking learned online is better than random (rank loss 0.5).
    assert!(r["rank_loss"].as_f64().unwrap() < 0.4, "{r}");
}

#[test]
fn last20_scores_the_final_fifth() {
    let out = flowboost(&[
        "eval",
        "--generator",
        "binary",
        "--examples",
        "1003",
        "--protocol",
        "last20",
        "--json",
    ]);
    let r = last_json(&out);
    assert_eq!(r["examples"], 1003);
    assert_eq!(r["evaluated"], 1003 / 5);
}

#[test]
fn dataflow_predictions_equal_sequential_predictions() {
    let dir = temp_dir("engines");
    let mut files = vec![];
    for (engine, workers) in [
        ("sequential", "1"),
        ("dataflow", "1"),
        ("dataflow", "2"),
        ("dataflow", "3"),
    ] {
        let path = dir.join(format!("{engine}-{workers}.jsonl"));
        let out = flowboost(&[
            "eval",
            "--algo",
            "adaboost-ol",
            "--learners",
            "6",
            "--generator",
            "binary",
            "--examples",
            "3000",
            "--engine",
            engine,
            "--workers",
            workers,
            "--batch",
            "50",
            "--predictions",
            path.to_str().unwrap(),
            "--json",
        ]);
        let r = last_json(&out);
        assert_eq!(r["engine"], engine);
        files.push(std::fs::read_to_string(&path).unwrap());
    }
    assert_eq!(files[0].lines().count(), 3000);
    for f in &files[1..] {
        assert_eq!(&files[0], f);
    }
}

#[test]
fn shuffle_is_deterministic_and_changes_the_order() {
    let dir = temp_dir("shuffle");
    let run = |seed: &str, name: &str| {
        let path = dir.join(name);
        let out = flowboost(&[
            "eval",
            "--generator",
            "multiclass",
            "--examples",
            "500",
            "--shuffle",
            seed,
            "--predictions",
            path.to_str().unwrap(),
            "--json",
        ]);
        last_json(&out);
        std::fs::read_to_string(path).unwrap()
    };
    let a = run("3", "a");
    let b = run("3", "b");
    let c = run("4", "c");
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn gamma_grid_reports_each_gamma_and_the_best() {
    let out = flowboost(&[
        "eval",
        "--algo",
        "online-bbm",
        "--learners",
        "5",
        "--generator",
        "binary",
        "--examples",
        "1500",
        "--gamma-grid",
        "0.05,0.3",
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let r = last_json(&out);
    let grid = r["gamma_grid"].as_array().unwrap();
    assert_eq!(grid.len(), 2);
    let best = grid
        .iter()
        .map(|g| g["value"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    assert_eq!(r["accuracy"].as_f64().unwrap(), best);
}

fn assert_exit_2(args: &[&str], expect: &[&str]) {
    let out = flowboost(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for e in expect {
        assert!(err.contains(e), "stderr of {args:?} lacks {e:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_exits_2_with_file_line_and_reason() {
    let dir = temp_dir("bad");
    let missing = dir.join("nope.arff");
    assert_exit_2(
        &["eval", "--data", missing.to_str().unwrap()],
        &["nope.arff"],
    );

    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    assert_exit_2(&["eval", "--data", empty.to_str().unwrap()], &["empty.csv"]);

    let bad_number = dir.join("bad.libsvm");
    std::fs::write(&bad_number, "+1 1:0.5 2:1\n-1 1:abc\n-1 2:3\n+1 1:1\n").unwrap();
    assert_exit_2(
        &["eval", "--data", bad_number.to_str().unwrap()],
        &["bad.libsvm:2"],
    );

    let nan = dir.join("nan.csv");
    std::fs::write(&nan, "a,b,class\n1,2,x\n3,inf,y\n4,5,x\n").unwrap();
    assert_exit_2(&["eval", "--data", nan.to_str().unwrap()], &["nan.csv:3"]);

    let arff = dir.join("unknown.arff");
    std::fs::write(
        &arff,
        "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,x\n2,z\n",
    )
    .unwrap();
    assert_exit_2(
        &["eval", "--data", arff.to_str().unwrap()],
        &["unknown.arff:6"],
    );

    let wrong = dir.join("wrong.arff");
    std::fs::write(&wrong, "a,b,c\n1,2,3\n").unwrap();
    assert_exit_2(
        &[
            "eval",
            "--format",
            "arff",
            "--data",
            wrong.to_str().unwrap(),
        ],
        &["wrong.arff"],
    );

    // A booster that does not handle the task, and a bad option value.
    assert_exit_2(
        &[
            "eval",
            "--algo",
            "online-bbm",
            "--generator",
            "multiclass",
            "--examples",
            "10",
        ],
        &["binary"],
    );
    assert_exit_2(&["eval", "--algo", "nope"], &["nope"]);
    assert_exit_2(&["eval", "--protocol", "holdout"], &["--test"]);
}

#[test]
fn help_explains_the_options() {
    let out = flowboost(&["eval", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--algo",
        "--data",
        "--test",
        "--format",
        "--labels",
        "--xml",
        "--header",
        "--target",
        "--protocol",
        "--shuffle",
        "--learners",
        "--weak",
        "--seed",
        "--json",
        "--engine",
        "--workers",
        "--gamma",
        "--predictions",
    ] {
        assert!(help.contains(opt), "eval --help lacks {opt}");
    }
}

#[test]
fn real_data_single_learners_reach_sane_figures() {
    let Some(d) = shared_data("real_data_single_learners_reach_sane_figures") else {
        return;
    };
    let p = |rel: &str| d.join(rel).to_str().unwrap().to_string();

    // emotions, holdout (train then test file), one Hoeffding tree.
    let out = flowboost(&[
        "eval",
        "--algo",
        "single",
        "--weak",
        "vfdt",
        "--data",
        &p("emotions/emotions-train.arff"),
        "--test",
        &p("emotions/emotions-test.arff"),
        "--xml",
        &p("emotions/emotions.xml"),
        "--json",
    ]);
    let r = last_json(&out);
    assert_eq!(r["examples"], 593);
    assert_eq!(r["evaluated"], 202);
    let rl = r["rank_loss"].as_f64().unwrap();
    assert!(rl < 0.3, "emotions rank loss {rl}");

    // car, last20 on a shuffled stream.
    let out = flowboost(&[
        "eval",
        "--algo",
        "single",
        "--weak",
        "vfdt",
        "--data",
        &p("car/car.data.csv"),
        "--protocol",
        "last20",
        "--shuffle",
        "1",
        "--json",
    ]);
    let r = last_json(&out);
    assert_eq!(r["evaluated"], 1728 / 5);
    let acc = r["accuracy"].as_f64().unwrap();
    assert!(acc > 0.75, "car accuracy {acc}");

    // a9a, holdout, the linear learner: near Vowpal Wabbit's 0.849.
    let out = flowboost(&[
        "eval",
        "--algo",
        "single",
        "--weak",
        "linear",
        "--data",
        &p("a9a/a9a"),
        "--test",
        &p("a9a/a9a.t"),
        "--json",
    ]);
    let r = last_json(&out);
    assert_eq!(r["evaluated"], 16281);
    let acc = r["accuracy"].as_f64().unwrap();
    assert!((acc - 0.849).abs() < 0.004, "a9a accuracy {acc}");
}

/// Delayed labels: without --pending-ttl the join's time-to-live follows the delay (twice
/// the longest wait: nothing expires, and joined events are forgotten after it), the
/// report says which it used, and a given one is used as is (a short one expires events).
#[test]
fn delayed_feedback_reports_its_time_to_live() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--generator",
            "binary",
            "--examples",
            "2000",
            "--algo",
            "adaboost-ol",
            "--learners",
            "4",
            "--feedback-delay",
            "100",
            "--json",
        ];
        args.extend_from_slice(extra);
        last_json(&flowboost(&args))
    };
    let r = run(&[]);
    // 100 records (each ending an epoch) and 201 inputs (1 + 201 / 256 epochs by size).
    assert_eq!(r["pending_ttl"], 2 * (100 + 1), "{r}");
    assert_eq!(r["feedback"]["joined"], 2000, "{r}");
    assert_eq!(r["feedback"]["late"], 0, "{r}");
    assert_eq!(r["feedback"]["waiting"], 0, "{r}");
    let df = run(&["--engine", "dataflow", "--workers", "2"]);
    assert_eq!(df["accuracy"], r["accuracy"]);
    assert_eq!(df["feedback"], r["feedback"]);
    let short = run(&["--pending-ttl", "20"]);
    assert_eq!(short["pending_ttl"], 20, "{short}");
    let f = &short["feedback"];
    assert!(f["late"].as_u64().unwrap() > 0, "{short}");
    // The events that expired (their label came after the time-to-live) and the feedback
    // records that found no event are reported, and every count adds up.
    let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("no {k} in {short}"));
    assert!(n("expired") > 0, "{short}");
    assert_eq!(
        n("admitted"),
        n("joined") + n("waiting") + n("expired"),
        "{short}"
    );
    assert_eq!(
        n("feedback"),
        n("joined") + n("held") + n("unmatched"),
        "{short}"
    );
    assert_eq!(r["feedback"]["expired"], 0, "{r}");
}
