//! `flowboost replay-clicks` through the binary: a synthetic click log in a temporary
//! folder (learning, the exact estimators, both engines, malformed lines), and the Open
//! Bandit Dataset sample when ../shared/data is present (skipped with a note otherwise).

mod common;

use common::{flowboost, last_json, shared_data, temp_dir, usage_error};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const HEADER: &str = ",timestamp,item_id,position,click,propensity_score,user_feature_0,user_feature_1,user-item_affinity_0,user-item_affinity_1";

fn num(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[p];
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("no number {path:?} in {v}"))
}

/// A log of `rows` rows over `m` items under a uniform logging policy (propensity 1/m):
/// user `u` (feature 0, of 3 values) clicks item `(u + 3) % m` whenever it is shown, nothing
/// else (so a ranking that learned nothing, items 0, 1, 2 by the tie rule, gets no click
/// when `m >= 6`).
/// Every 7th row shares the previous row's timestamp and user (a second position).
/// Returns the log's path and the rows as (item, position, click).
fn synthetic(dir: &Path, rows: usize, m: usize) -> (PathBuf, Vec<(usize, usize, bool)>) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut text = format!("{HEADER}\n");
    let mut out = vec![];
    let (mut user, mut time, mut pos) = (0, 0, 1);
    for i in 0..rows {
        if i % 7 == 6 {
            pos = pos % 3 + 1;
        } else {
            user = next(3);
            time += 1;
            pos = next(3) + 1;
        }
        let item = next(m);
        let click = item == (user + 3) % m;
        writeln!(
            text,
            "{i},2020-01-01 {time:08},{item},{pos},{},{},u{user},v{},0.0,{}",
            u8::from(click),
            1.0 / m as f64,
            next(2),
            if user == 1 { "0.5" } else { "0.0" }
        )
        .unwrap();
        out.push((item, pos, click));
    }
    let path = dir.join("log.csv");
    std::fs::write(&path, text).unwrap();
    let mut ctx = String::from(",item_id,item_feature_0\n");
    for i in 0..m {
        writeln!(ctx, "{i},{i},0.5").unwrap();
    }
    std::fs::write(dir.join("item_context.csv"), ctx).unwrap();
    (path, out)
}

/// The report without the fields that differ between engines.
fn comparable(mut v: serde_json::Value) -> serde_json::Value {
    let o = v.as_object_mut().unwrap();
    for key in ["engine", "workers", "seconds", "epoch_size"] {
        o.remove(key);
    }
    v
}

fn replay(path: &Path, extra: &[&str]) -> serde_json::Value {
    let p = path.to_str().unwrap();
    let mut args = vec!["replay-clicks", "--data", p, "--k", "3", "--json"];
    args.extend_from_slice(extra);
    last_json(&flowboost(&args))
}

#[test]
fn synthetic_log_learns_and_both_engines_agree() {
    let dir = temp_dir("clicks-synthetic");
    let m = 6;
    let (path, rows) = synthetic(&dir, 2000, m);
    let clicks = rows.iter().filter(|r| r.2).count();
    for algo in ["topk-adaptive", "topk-bbm"] {
        let seq = replay(&path, &["--algo", algo]);
        assert_eq!(num(&seq, &["rows"]), 2000.0);
        assert_eq!(num(&seq, &["items"]), m as f64);
        assert!(num(&seq, &["impressions"]) < 2000.0, "rows were grouped");
        assert_eq!(num(&seq, &["clicks"]), clicks as f64);
        let ctr = clicks as f64 / 2000.0;
        assert!((num(&seq, &["logged_ctr", "estimate"]) - ctr).abs() < 1e-12);
        let se = (ctr * (1.0 - ctr) / 1999.0).sqrt();
        assert!((num(&seq, &["logged_ctr", "stderr"]) - se).abs() < 1e-9);
        // The logging policy shows the clicked item 1/6 of the time; a ranker that learned
        // the user's item puts it first: CTR 1/3 per row (position 1 of 3).
        for key in ["ipw_ctr", "ipw_ctr_position_independent"] {
            let v = num(&seq, &[key, "estimate"]);
            assert!(v > 0.25, "{algo}: {key} = {v} (logged {ctr})\n{seq}");
        }
        assert_eq!(
            num(&seq, &["feedback", "joined"]),
            num(&seq, &["impressions"])
        );
        for extra in [
            &["--engine", "dataflow", "--workers", "2", "--batch", "5"][..],
            &["--engine", "dataflow", "--workers", "3"],
        ] {
            let mut args = vec!["--algo", algo];
            args.extend_from_slice(extra);
            let df = replay(&path, &args);
            assert_eq!(comparable(df), comparable(seq.clone()), "{algo} {extra:?}");
        }
        // Feedback after the whole stream: nothing learned before any prediction, so the
        // booster's top 3 is the tie order (items 0, 1, 2), never clicked.
        let blind = replay(&path, &["--algo", algo, "--feedback-delay", "100000"]);
        assert_eq!(num(&blind, &["matched_clicks_top_k"]), 0.0, "{blind}");
        assert_eq!(num(&blind, &["ipw_ctr", "estimate"]), 0.0);
        // Delayed feedback: identical across engines too, and it still learns.
        let seq = replay(&path, &["--algo", algo, "--feedback-delay", "9"]);
        let df = replay(
            &path,
            &[
                "--algo",
                algo,
                "--feedback-delay",
                "9",
                "--engine",
                "dataflow",
                "--workers",
                "2",
            ],
        );
        assert_eq!(comparable(df), comparable(seq.clone()), "{algo} delayed");
        assert!(num(&seq, &["ipw_ctr_position_independent", "estimate"]) > 0.25);
    }
}

#[test]
fn estimators_by_hand_when_every_item_is_in_the_top_k() {
    // 3 items and k = 3: every logged item is in the booster's top 3, so the
    // position-independent estimate is mean(click / (3 p)) whatever was learned.
    let dir = temp_dir("clicks-by-hand");
    let (path, rows) = synthetic(&dir, 300, 3);
    let r = replay(&path, &["--algo", "topk-bbm"]);
    assert_eq!(num(&r, &["matches_top_k"]), 300.0);
    let expect: f64 = rows
        .iter()
        .map(|&(_, _, c)| if c { 1.0 / (3.0 * (1.0 / 3.0)) } else { 0.0 })
        .sum::<f64>()
        / 300.0;
    let got = num(&r, &["ipw_ctr_position_independent", "estimate"]);
    assert!((got - expect).abs() < 1e-12, "{got} vs {expect}");
    // The position-dependent estimate counts the rows at the right position only.
    assert!(num(&r, &["matches"]) < 300.0);
}

#[test]
fn malformed_lines_fail_with_file_line_and_reason() {
    let dir = temp_dir("clicks-malformed");
    let (path, _) = synthetic(&dir, 20, 4);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for (line, bad, reason) in [
        (
            5,
            "4,2020-01-01 00000004,1,2,yes,0.25,u0,v0,0.0,0.0",
            "bad click `yes`",
        ),
        (
            9,
            "8,2020-01-01 00000008,9,2,0,0.25,u0,v0,0.0,0.0",
            "item_id 9 out of range",
        ),
        (
            12,
            "11,2020-01-01 00000011,1,2,0,0.25,u0,v0,0.0",
            "9 fields, but the header has 10",
        ),
        (
            7,
            "6,2020-01-01 00000006,1,4,0,0.25,u0,v0,0.0,0.0",
            "position 4 beyond the top 3",
        ),
        (
            3,
            "2,2020-01-01 00000002,1,2,0,1.5,u0,v0,0.0,0.0",
            "outside (0, 1]",
        ),
    ] {
        let saved = std::mem::replace(&mut lines[line - 1], bad.to_string());
        let bad_path = dir.join("bad.csv");
        std::fs::write(&bad_path, lines.join("\n")).unwrap();
        lines[line - 1] = saved;
        let out = flowboost(&[
            "replay-clicks",
            "--data",
            bad_path.to_str().unwrap(),
            "--items",
            "4",
            "--algo",
            "topk-adaptive",
        ]);
        assert_eq!(out.status.code(), Some(2), "{reason}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("bad.csv:{line}: ")) && err.contains(reason),
            "expected line {line}: {reason}; got {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // Not a log at all, or no way to tell the number of items.
    let other = dir.join("sub");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.csv"), "a,b\n1,2\n").unwrap();
    let out = flowboost(&[
        "replay-clicks",
        "--data",
        other.join("x.csv").to_str().unwrap(),
        "--algo",
        "topk-bbm",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("x.csv:1: no `timestamp` column"));
    std::fs::write(other.join("log.csv"), format!("{HEADER}\n")).unwrap();
    let out = flowboost(&[
        "replay-clicks",
        "--data",
        other.join("log.csv").to_str().unwrap(),
        "--algo",
        "topk-bbm",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("item_context.csv"));
    // A booster that cannot learn from clicks.
    let out = flowboost(&[
        "replay-clicks",
        "--data",
        path.to_str().unwrap(),
        "--algo",
        "ada-olmr",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("topk-adaptive"));
}

#[test]
fn open_bandit_dataset_sample_replays_identically_on_both_engines() {
    let Some(data) = shared_data("open_bandit_dataset_sample_replays_identically_on_both_engines")
    else {
        return;
    };
    let root = data.join("open_bandit_dataset_small");
    // (file, items, clicks): the counts of the sample (SOURCES.md: 80 and 34 items).
    for (file, items, clicks) in [
        ("random/men/men.csv.gz", 34.0, 46.0),
        ("bts/all/all.csv.gz", 80.0, 42.0),
    ] {
        let path = root.join(file);
        if !path.is_file() {
            common::skip_note(&format!("skipping {file}: not found"));
            continue;
        }
        let seq = replay(&path, &["--algo", "topk-adaptive", "--learners", "5"]);
        assert_eq!(num(&seq, &["rows"]), 10_000.0, "{file}");
        assert_eq!(num(&seq, &["items"]), items, "{file}");
        assert_eq!(num(&seq, &["clicks"]), clicks, "{file}");
        assert!((num(&seq, &["logged_ctr", "estimate"]) - clicks / 10_000.0).abs() < 1e-12);
        let imps = num(&seq, &["impressions"]);
        assert!(
            imps > 9_900.0 && imps < 10_000.0,
            "{file}: {imps} impressions"
        );
        for key in ["ipw_ctr", "ipw_ctr_position_independent"] {
            let v = num(&seq, &[key, "estimate"]);
            let se = num(&seq, &[key, "stderr"]);
            assert!(v.is_finite() && v >= 0.0 && se >= 0.0, "{file}: {key}");
        }
        let df = replay(
            &path,
            &[
                "--algo",
                "topk-adaptive",
                "--learners",
                "5",
                "--engine",
                "dataflow",
                "--workers",
                "2",
            ],
        );
        assert_eq!(comparable(df), comparable(seq), "{file}");
    }
}

/// The report without the fields that differ between a file and the generator.
fn same_log(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("data");
    comparable(v)
}

fn generated(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "replay-clicks",
        "--generator",
        "clicks",
        "--impressions",
        "3000",
        "--algo",
        "topk-bbm",
        "--learners",
        "3",
        "--json",
    ];
    args.extend_from_slice(extra);
    last_json(&flowboost(&args))
}

#[test]
fn simulated_clicks_report_the_truth_beside_every_estimator() {
    let r = generated(&[]);
    assert_eq!(num(&r, &["impressions"]), 3000.0);
    assert_eq!(num(&r, &["rows"]), 9000.0);
    assert_eq!(num(&r, &["items"]), 46.0);
    assert_eq!(r["logging_policy"], "uniform");
    for key in [
        "logged_ctr",
        "ipw_ctr",
        "ipw_ctr_position_independent",
        "snipw_ctr",
        "dr_ctr",
    ] {
        let (e, se) = (num(&r, &[key, "estimate"]), num(&r, &[key, "stderr"]));
        let (lo, hi) = (num(&r, &[key, "low"]), num(&r, &[key, "high"]));
        assert!(se > 0.0, "{key}: {r}");
        assert!((lo - (e - 1.959964 * se)).abs() < 1e-6 && (hi - (e + 1.959964 * se)).abs() < 1e-6);
    }
    let truth = |who: &str| num(&r, &["true_ctr", who, "estimate"]);
    let (learned, logging, best) = (truth("learned"), truth("logging"), truth("best"));
    assert_eq!(num(&r, &["true_ctr", "estimate"]), learned);
    for key in ["stderr", "low", "high"] {
        assert_eq!(
            num(&r, &["true_ctr", key]),
            num(&r, &["true_ctr", "learned", key])
        );
    }
    // The booster learns: better than the uniform logging policy, below the best ranking.
    assert!(logging < learned && learned < best, "{r}");
    // The logged CTR estimates the logging policy's true CTR; for this seed every
    // interval covers its truth.
    let covers = |key: &str, t: f64| num(&r, &[key, "low"]) <= t && t <= num(&r, &[key, "high"]);
    assert!(covers("logged_ctr", logging), "{r}");
    for key in ["ipw_ctr", "snipw_ctr", "dr_ctr"] {
        assert!(covers(key, learned), "{key}: {r}");
    }
    // Deterministic, and the same on the dataflow engine.
    assert_eq!(comparable(generated(&[])), comparable(r.clone()));
    let df = generated(&["--engine", "dataflow", "--workers", "2"]);
    assert_eq!(comparable(df), comparable(r.clone()));
    // The bts logging policy does better than uniform, and is recorded.
    let bts = generated(&["--logging-policy", "bts"]);
    assert_eq!(bts["logging_policy"], "bts");
    assert!(num(&bts, &["true_ctr", "logging", "estimate"]) > logging);
    // Another simulator seed, another log.
    let other = generated(&["--sim-seed", "2"]);
    assert_ne!(num(&other, &["clicks"]), num(&r, &["clicks"]));
}

/// The join's default time-to-live follows the feedback delay and the epoch rule (so its
/// memory follows the attribution window, not the log's length) and makes nothing late;
/// `--batch-feedback` learns each epoch's feedback at its end, identically on both engines.
#[test]
fn default_ttl_and_batch_feedback() {
    let delay = ["--feedback-delay", "200"];
    let per_record = generated(&delay);
    let batched = generated(&[&delay[..], &["--batch-feedback"]].concat());
    // Between an impression and its feedback record: 200 records (each ending an epoch
    // without --batch-feedback) and 401 inputs (1 + 401 / 256 epochs by size); twice that.
    assert_eq!(num(&per_record, &["pending_ttl"]), 2.0 * (200.0 + 2.0));
    assert_eq!(num(&batched, &["pending_ttl"]), 2.0 * 2.0);
    for r in [&per_record, &batched] {
        assert_eq!(num(r, &["feedback", "joined"]), 3000.0, "{r}");
        assert_eq!(num(r, &["feedback", "late"]), 0.0, "{r}");
        assert_eq!(num(r, &["feedback", "waiting"]), 0.0, "{r}");
        let truth = |who: &str| num(r, &["true_ctr", who, "estimate"]);
        assert!(truth("logging") < truth("learned"), "{r}");
    }
    assert_eq!(batched["batch_feedback"], true);
    assert_eq!(per_record["batch_feedback"], false);
    // Learning later changes the predictions.
    assert_ne!(
        num(&batched, &["matches"]),
        num(&per_record, &["matches"]),
        "{batched}"
    );
    // Both engines agree with --batch-feedback too (and a small --batch).
    for extra in [&["--batch", "7"][..], &[]] {
        let args = [&delay[..], &["--batch-feedback"], extra].concat();
        let seq = generated(&args);
        let df = generated(&[&args[..], &["--engine", "dataflow", "--workers", "2"]].concat());
        assert_eq!(comparable(df), comparable(seq));
    }
    // A time-to-live shorter than the delay expires impressions before their feedback:
    // the feedback is counted late, not learned.
    let short = generated(&[&delay[..], &["--pending-ttl", "50"]].concat());
    assert_eq!(num(&short, &["pending_ttl"]), 50.0);
    assert!(num(&short, &["feedback", "late"]) > 0.0, "{short}");
    assert!(num(&short, &["feedback", "joined"]) < 3000.0, "{short}");
    usage_error(
        &[
            "replay-clicks",
            "--generator",
            "clicks",
            "--algo",
            "topk-bbm",
            "--pending-ttl",
            "0",
        ],
        &["--pending-ttl"],
    );
}

#[test]
fn a_simulated_log_file_replays_like_the_generator() {
    let dir = temp_dir("clicks-simulated-file");
    let sim = flowboost(&[
        "simulate-clicks",
        "--impressions",
        "3000",
        "--logging-policy",
        "bts",
        "--click-delay",
        "4",
        "--output",
        dir.to_str().unwrap(),
    ]);
    let summary = last_json(&sim);
    assert_eq!(num(&summary, &["rows"]), 9000.0);
    for name in ["clicks.csv", "item_context.csv", "simulator.json"] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    let log = dir.join("clicks.csv");
    let from_file = replay(
        &log,
        &[
            "--algo",
            "topk-bbm",
            "--learners",
            "3",
            "--feedback-delay",
            "6",
        ],
    );
    let from_generator = generated(&[
        "--logging-policy",
        "bts",
        "--click-delay",
        "4",
        "--feedback-delay",
        "6",
    ]);
    assert_eq!(same_log(from_file.clone()), same_log(from_generator));
    assert_eq!(num(&from_file, &["clicks"]), num(&summary, &["clicks"]));
    assert_eq!(
        num(&from_file, &["true_ctr", "logging", "estimate"]),
        num(&summary, &["logging_true_ctr", "estimate"])
    );
    // Clicks delayed beyond the 6-impression window are not learned, and counted.
    let late = num(&from_file, &["late_clicks"]);
    assert!(
        late > 0.0 && late < num(&from_file, &["clicks"]),
        "{from_file}"
    );
    let patient = replay(
        &log,
        &[
            "--algo",
            "topk-bbm",
            "--learners",
            "3",
            "--feedback-delay",
            "100000",
        ],
    );
    assert_eq!(num(&patient, &["late_clicks"]), 0.0);

    // A row changed: the log no longer matches its simulator.json.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut fields: Vec<String> = lines[100].split(',').map(String::from).collect();
    fields[4] = if fields[4] == "0" {
        "1".into()
    } else {
        "0".into()
    };
    lines[100] = fields.join(",");
    std::fs::write(&log, lines.join("\n")).unwrap();
    let out = flowboost(&[
        "replay-clicks",
        "--data",
        log.to_str().unwrap(),
        "--algo",
        "topk-bbm",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not match its simulator.json"), "{err}");
}

#[test]
fn dumped_rows_reproduce_the_estimates() {
    let dir = temp_dir("clicks-dump");
    let dump = dir.join("rows.csv");
    let r = generated(&["--dump-rows", dump.to_str().unwrap()]);
    let text = std::fs::read_to_string(&dump).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..8],
        [
            "impression",
            "position",
            "item",
            "click",
            "propensity",
            "rank_0",
            "rank_1",
            "rank_2"
        ]
    );
    assert_eq!(header.len(), 8 + 46);
    let (mut ipw, mut dr, mut weights, mut rows) = (0.0, 0.0, 0.0, 0.0);
    for line in lines {
        let f: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let (pos, item, click, p) = (f[1] as usize, f[2], f[3], f[4]);
        let target = f[5 + pos];
        let q = |a: f64| f[8 + a as usize];
        let w = if target == item { 1.0 / p } else { 0.0 };
        ipw += click * w;
        weights += w;
        dr += q(target) + w * (click - q(item));
        rows += 1.0;
    }
    assert_eq!(rows, 9000.0);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * (1.0 + b.abs());
    assert!(close(ipw / rows, num(&r, &["ipw_ctr", "estimate"])), "{r}");
    assert!(
        close(ipw / weights, num(&r, &["snipw_ctr", "estimate"])),
        "{r}"
    );
    assert!(close(dr / rows, num(&r, &["dr_ctr", "estimate"])), "{r}");
}

#[test]
fn bad_simulator_options_fail_with_a_reason() {
    for (args, reason) in [
        (
            &["--logging-policy", "greedy"][..],
            "unknown logging policy `greedy`",
        ),
        (&["--base-relevance", "1.5"], "base relevance"),
        (&["--items", "2"], "slots must be in 1..=2"),
    ] {
        let mut all = vec![
            "replay-clicks",
            "--generator",
            "clicks",
            "--impressions",
            "10",
            "--algo",
            "topk-bbm",
        ];
        all.extend_from_slice(args);
        let out = flowboost(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(reason) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
