//! `flowboost eval` with the multiclass boosters (online-mbbm, adaboost-olm) through the
//! binary, on UCI car with the last-20% protocol and a fixed shuffle (skipped, with a
//! note, when the shared data folder is absent), and Oza's vote rules on a generated
//! stream.

mod common;

use common::{flowboost, last_json, shared_data};

fn car_args<'a>(car: &'a str, algo: &'a str, learners: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "eval",
        "--algo",
        algo,
        "--data",
        car,
        "--protocol",
        "last20",
        "--shuffle",
        "3",
        "--weak",
        "vfdt",
        "--tree-params",
        "random",
        "--json",
    ];
    // One tree alone reads no --learners (giving it one is an error).
    if algo != "single" {
        args.extend(["--learners", learners]);
    }
    args
}

#[test]
fn multiclass_boosters_learn_car_on_the_last_fifth() {
    let Some(data) = shared_data("multiclass_boosters_learn_car_on_the_last_fifth") else {
        return;
    };
    let car = data.join("car/car.data.csv");
    let car = car.to_str().unwrap();
    let single = last_json(&flowboost(&car_args(car, "single", "1")));
    let single = single["accuracy"].as_f64().unwrap();
    for algo in ["online-mbbm", "adaboost-olm"] {
        let r = last_json(&flowboost(&car_args(car, algo, "20")));
        assert_eq!(r["algorithm"], algo);
        assert_eq!(r["task"], "multiclass");
        assert_eq!(r["labels"], 4);
        assert_eq!(r["examples"], 1728);
        // last20: the final 1728 / 5 = 345 examples are scored.
        assert_eq!(r["evaluated"], 345);
        let acc = r["accuracy"].as_f64().unwrap();
        // The paper's Table 1 (100 trees): best tree 0.924, OLM 0.930, best MBBM 0.914.
        assert!(acc > 0.9, "{algo}: accuracy {acc}");
        assert!(
            acc > single,
            "{algo}: {acc} is not above one tree's {single}"
        );
        // Deterministic: the same command gives the same report.
        let again = last_json(&flowboost(&car_args(car, algo, "20")));
        assert_eq!(again["accuracy"], r["accuracy"]);
    }
}

#[test]
fn mbbm_gamma_grid_keeps_the_best_and_dataflow_agrees() {
    let Some(data) = shared_data("mbbm_gamma_grid_keeps_the_best_and_dataflow_agrees") else {
        return;
    };
    let car = data.join("car/car.data.csv");
    let car = car.to_str().unwrap();
    let mut args = car_args(car, "online-mbbm", "8");
    args.extend(["--gamma-grid", "0.3,0.1,0.01"]);
    let out = flowboost(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
    let r = last_json(&out);
    let grid = r["gamma_grid"].as_array().unwrap();
    assert_eq!(grid.len(), 3);
    let best = grid
        .iter()
        .map(|g| g["value"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    assert_eq!(r["accuracy"].as_f64().unwrap(), best);
    // The best gamma's run again, on the dataflow engine with two workers.
    let gamma = r["gamma"].as_f64().unwrap().to_string();
    for algo in ["online-mbbm", "adaboost-olm"] {
        let mut seq = car_args(car, algo, "8");
        // AdaBoost.OLM is parameter-free: it reads no --gamma.
        if algo == "online-mbbm" {
            seq.extend(["--gamma", &gamma]);
        }
        let mut flow = seq.clone();
        flow.extend(["--engine", "dataflow", "--workers", "2", "--batch", "16"]);
        let a = last_json(&flowboost(&seq));
        let b = last_json(&flowboost(&flow));
        assert_eq!(a["accuracy"], b["accuracy"], "{algo}");
        if algo == "online-mbbm" {
            assert_eq!(a["accuracy"].as_f64().unwrap(), best);
        }
    }
}

#[test]
fn bad_gamma_is_an_error_not_a_panic() {
    let out = flowboost(&[
        "eval",
        "--algo",
        "online-mbbm",
        "--generator",
        "multiclass",
        "--examples",
        "50",
        "--gamma",
        "1.5",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("gamma") && !err.contains("panicked"), "{err}");
}

/// `--oza-votes moa` (MOA's soft votes, stopping at the first stage of weight 0) through
/// the binary: it changes Oza's predictions, both engines agree on them, the model file
/// keeps the rule, and the option is refused where it does not apply.
#[test]
fn oza_votes_moa_changes_the_vote_and_is_kept_by_the_model() {
    let dir = common::temp_dir("cli-oza-votes");
    let model = dir.join("moa.fbm");
    let run = |tag: &str, votes: &str, extra: &[&str]| {
        let pred = dir.join(format!("{tag}.jsonl"));
        let pred_s = pred.to_str().unwrap().to_string();
        let mut args = vec![
            "eval",
            "--algo",
            "oza",
            "--generator",
            "multiclass",
            "--examples",
            "3000",
            "--learners",
            "10",
            "--tree-params",
            "default",
            "--oza-votes",
            votes,
            "--predictions",
            &pred_s,
            "--json",
        ];
        args.extend(extra);
        let report = last_json(&flowboost(&args));
        (report, std::fs::read_to_string(&pred).unwrap())
    };
    let (moa, moa_pred) = run("moa", "moa", &["--save-model", model.to_str().unwrap()]);
    let (paper, paper_pred) = run("paper", "paper", &[]);
    assert_eq!(moa["evaluated"], 3000);
    assert!(moa["accuracy"].as_f64().unwrap() > 0.5, "{moa}");
    assert_ne!(moa_pred, paper_pred, "the vote rules must differ somewhere");
    assert_ne!(moa["accuracy"], paper["accuracy"]);
    let (_, dataflow_pred) = run(
        "moa-dataflow",
        "moa",
        &["--engine", "dataflow", "--workers", "2"],
    );
    assert_eq!(moa_pred, dataflow_pred);
    // The model file says which rule it votes with.
    let inspect = flowboost(&["inspect", model.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(text.contains("--oza-votes moa"), "{text}");
    // Refused where it does not apply, and for an unknown rule.
    common::usage_error(
        &[
            "eval",
            "--algo",
            "adaboost-olm",
            "--generator",
            "multiclass",
            "--oza-votes",
            "moa",
        ],
        &["--oza-votes does not apply to adaboost-olm"],
    );
    common::usage_error(
        &[
            "eval",
            "--algo",
            "oza",
            "--generator",
            "multiclass",
            "--oza-votes",
            "soft",
        ],
        &["expected paper or moa"],
    );
}
