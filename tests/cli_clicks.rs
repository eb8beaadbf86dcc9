//! `flowboost replay-clicks` through the binary: a synthetic click log in a temporary
//! folder (learning, the exact estimators, both engines, malformed lines), and the Open
//! Bandit Dataset sample when ../shared/data is present (skipped with a note otherwise).

mod common;

use common::{flowboost, last_json, shared_data, temp_dir};
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
    for key in ["engine", "workers", "seconds"] {
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
            eprintln!("skipping {file}: not found");
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
