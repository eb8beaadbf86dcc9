//! Issue 17, the trees' memory budget: `--max-model-bytes` through the binary. A budget
//! bounds the saved model (its trees deactivate their least promising leaves), a model
//! keeps its budget, and a bad value is a usage error naming the option in every mode.

mod common;

use common::{flowboost, last_json, temp_dir, usage_error};

/// Runs the binary generator for `examples` with `extra` options, saving the model to
/// `file`; returns its size in bytes and the `inspect --json` report.
fn run_and_inspect(file: &str, examples: &str, extra: &[&str]) -> (u64, serde_json::Value) {
    let mut args = vec![
        "run",
        "--generator",
        "binary",
        "--examples",
        examples,
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
    let size = std::fs::metadata(file).unwrap().len();
    (size, last_json(&flowboost(&["inspect", "--json", file])))
}

/// The leaves and the inactive leaves of every stage's learner.
fn leaves(report: &serde_json::Value) -> Vec<(u64, u64)> {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let l = &s["learner"];
            (
                l["leaves"].as_u64().unwrap(),
                l["inactive_leaves"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_model_budget_bounds_the_saved_model() {
    let dir = temp_dir("cli-budget");
    let free_file = dir.join("free.fbm");
    let (free, free_report) = run_and_inspect(free_file.to_str().unwrap(), "100000", &[]);
    assert!(
        leaves(&free_report)
            .iter()
            .all(|&(_, inactive)| inactive == 0),
        "no budget, no inactive leaf"
    );
    let budget: u64 = 1 << 20;
    let file = dir.join("budget.fbm");
    let (bounded, report) = run_and_inspect(
        file.to_str().unwrap(),
        "100000",
        &["--max-model-bytes", "1M"],
    );
    assert!(
        bounded <= budget,
        "the model file ({bounded} bytes) is within the budget ({budget})"
    );
    assert!(
        free > 4 * bounded,
        "without the budget the model is much larger: {free} vs {bounded} bytes"
    );
    let stages = leaves(&report);
    // The big trees deactivated leaves (a tree that stays small needs not).
    assert!(
        stages.iter().filter(|&&(_, inactive)| inactive > 0).count() >= stages.len() / 2,
        "the trees deactivated leaves: {stages:?}"
    );
    assert_eq!(report["options"]["--max-model-bytes"], "1048576");
    if let Some(memory) = report["memory_bytes"].as_u64() {
        assert!(
            memory <= budget + budget / 4,
            "the loaded model takes about the budget in memory: {memory} bytes"
        );
    }

    // The model keeps its budget: the same value on load is fine, another is an error.
    let out = flowboost(&[
        "run",
        "--load-model",
        file.to_str().unwrap(),
        "--generator",
        "binary",
        "--examples",
        "2000",
        "--report-every",
        "0",
        "--output",
        "/dev/null",
        "--max-model-bytes",
        "1048576",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    usage_error(
        &[
            "run",
            "--load-model",
            file.to_str().unwrap(),
            "--generator",
            "binary",
            "--examples",
            "2000",
            "--output",
            "/dev/null",
            "--max-model-bytes",
            "2M",
        ],
        &["--max-model-bytes"],
    );
}

#[test]
fn a_bad_budget_is_a_usage_error_naming_the_option() {
    let modes: [&[&str]; 3] = [
        &["eval", "--generator", "binary", "--examples", "100"],
        &["run", "--generator", "binary", "--examples", "100"],
        &[
            "run",
            "--brokers",
            "127.0.0.1:1",
            "--source",
            "kafka:x",
            "--sink",
            "kafka:y",
        ],
    ];
    for mode in modes {
        for bad in ["0", "-5", "1.5M", "64MB", "abc", "", "99999999999999999999"] {
            let mut args = mode.to_vec();
            args.extend_from_slice(&["--max-model-bytes", bad]);
            usage_error(&args, &["--max-model-bytes"]);
        }
    }
    // A budget for a model without trees is an error too.
    usage_error(
        &[
            "eval",
            "--generator",
            "multilabel",
            "--examples",
            "100",
            "--algo",
            "falt",
            "--max-model-bytes",
            "64M",
        ],
        &["--max-model-bytes"],
    );
}

/// A run with a budget saved halfway and resumed ends with the model of a run that never
/// stopped (the trees' budgets come back from the file's header; the inactive leaves from
/// its body): the same stages, leaf for leaf, and the same predictions on a new stream.
#[test]
fn a_budgeted_run_resumed_from_its_file_ends_as_one_that_never_stopped() {
    let dir = temp_dir("cli-budget-resume");
    let path = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let (whole, half, resumed) = (path("whole.fbm"), path("half.fbm"), path("resumed.fbm"));
    let base = [
        "run",
        "--generator",
        "binary",
        "--report-every",
        "0",
        "--output",
        "/dev/null",
        "--max-model-bytes",
        "1M",
    ];
    for (examples, file, load) in [
        ("40000", &whole, None),
        ("20000", &half, None),
        ("40000", &resumed, Some(&half)),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--examples", examples, "--save-model", file]);
        if let Some(l) = load {
            args.extend_from_slice(&["--load-model", l, "--resume"]);
        }
        let out = flowboost(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let a = last_json(&flowboost(&["inspect", "--json", &whole]));
    let b = last_json(&flowboost(&["inspect", "--json", &resumed]));
    assert_eq!(a["stages"], b["stages"]);
    assert!(leaves(&a).iter().any(|&(_, inactive)| inactive > 0));
    let predict = |file: &str| {
        let out = flowboost(&[
            "predict",
            "--model",
            file,
            "--generator",
            "binary",
            "--seed",
            "9",
            "--examples",
            "3000",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert_eq!(predict(&whole), predict(&resumed));
}

/// Every inactive-leaf count anywhere in an `inspect --json` report.
fn inactive_anywhere(v: &serde_json::Value) -> u64 {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| match (k.as_str(), v.as_u64()) {
                ("inactive_leaves", Some(n)) => n,
                _ => inactive_anywhere(v),
            })
            .sum(),
        serde_json::Value::Array(a) => a.iter().map(inactive_anywhere).sum(),
        _ => 0,
    }
}

/// Every algorithm with Hoeffding trees takes the budget (the single learner, the
/// multi-label rankers and the top-k boosters too, not only the ensembles that list
/// `--learners`), and its trees deactivate leaves under a small one.
#[test]
fn every_tree_algorithm_takes_the_budget() {
    let dir = temp_dir("cli-budget-all");
    for (algo, generator, budget, bytes) in [
        ("single", "binary", "6K", "6144"),
        ("oza", "multiclass", "64K", "65536"),
        ("online-mbbm", "multiclass", "64K", "65536"),
        ("online-bmr", "multilabel", "64K", "65536"),
        ("ada-olmr", "multilabel", "64K", "65536"),
        ("topk-bbm", "multilabel", "64K", "65536"),
        ("topk-adaptive", "multilabel", "64K", "65536"),
    ] {
        let file = dir.join(format!("{algo}.fbm"));
        let out = flowboost(&[
            "eval",
            "--algo",
            algo,
            "--generator",
            generator,
            "--examples",
            "6000",
            "--max-model-bytes",
            budget,
            "--save-model",
            file.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{algo}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = last_json(&flowboost(&["inspect", "--json", file.to_str().unwrap()]));
        assert_eq!(report["options"]["--max-model-bytes"], bytes, "{algo}");
        assert!(
            inactive_anywhere(&report) > 0,
            "{algo}: no leaf deactivated under {budget}: {report}"
        );
    }
}
