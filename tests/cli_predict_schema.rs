//! `flowboost predict` reads its records in the model's schema (issue 45): a file whose
//! labels are all of one class, or absent, is scored, with the predictions it gets among
//! other records; a LIBSVM file of a smaller dimension is scored; a record with a feature
//! the model does not have is an error naming the record and the feature.

mod common;

use common::{flowboost, json_lines, temp_dir};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Rows of 4 numeric features, seeded, with their class (`c0`, `c1`, `c2`).
fn rows(n: usize, seed: u64) -> Vec<(String, &'static str)> {
    let mut state = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
    };
    (0..n)
        .map(|_| {
            let v: Vec<f64> = (0..4).map(|_| (next() * 1e4).round() / 1e4).collect();
            let class = if v[0] + v[1] > 0.3 {
                "c0"
            } else if v[2] > 0.0 {
                "c1"
            } else {
                "c2"
            };
            let text: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            (text.join(","), class)
        })
        .collect()
}

fn write_csv(path: &Path, rows: &[(String, &str)]) {
    let mut text = String::from("a,b,c,d,class\n");
    for (x, class) in rows {
        text.push_str(&format!("{x},{class}\n"));
    }
    std::fs::write(path, text).unwrap();
}

fn predict(model: &Path, data: &Path, out: &Path) -> Vec<serde_json::Value> {
    let o = flowboost(&[
        "predict",
        "--model",
        s(model),
        "--data",
        s(data),
        "--output",
        s(out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json_lines(out)
}

#[test]
fn single_class_and_unlabeled_csv_files_are_scored_as_among_other_records() {
    let dir = temp_dir("predict-schema-csv");
    let train = dir.join("train.csv");
    write_csv(&train, &rows(500, 1));
    let model = dir.join("m.fbm");
    let o = flowboost(&[
        "run",
        "--data",
        s(&train),
        "--save-model",
        s(&model),
        "--output",
        "/dev/null",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let test = rows(300, 2);
    let c2: Vec<(String, &str)> = test.iter().filter(|r| r.1 == "c2").cloned().collect();
    let others: Vec<(String, &str)> = test.iter().filter(|r| r.1 != "c2").cloned().collect();
    assert!(c2.len() > 20 && others.len() > 20);
    // The one-class rows first, then the others: the first predictions are the one-class
    // file's (the model's generator advances the same way).
    let mixed = dir.join("mixed.csv");
    write_csv(&mixed, &[c2.clone(), others].concat());
    let single = dir.join("single.csv");
    write_csv(&single, &c2);
    let unlabeled = dir.join("unlabeled.csv");
    let unknown: Vec<(String, &str)> = c2.iter().map(|(x, _)| (x.clone(), "?")).collect();
    write_csv(&unlabeled, &unknown);

    let expected = predict(&model, &mixed, &dir.join("mixed.jsonl"));
    for file in [&single, &unlabeled] {
        let got = predict(&model, file, &dir.join("got.jsonl"));
        assert_eq!(got.len(), c2.len());
        assert_eq!(got[..], expected[..c2.len()], "{}", file.display());
    }
}

#[test]
fn a_libsvm_file_of_one_class_and_a_smaller_dimension_is_scored() {
    let dir = temp_dir("predict-schema-libsvm");
    let line = |(x, class): &(String, &str)| {
        let label = if *class == "c0" { "+1" } else { "-1" };
        let features: Vec<String> = x
            .split(',')
            .enumerate()
            .map(|(j, v)| format!("{}:{v}", j + 1))
            .collect();
        format!("{label} {}", features.join(" "))
    };
    let train = dir.join("train.svm");
    let text: Vec<String> = rows(500, 3).iter().map(line).collect();
    std::fs::write(&train, text.join("\n") + "\n").unwrap();
    let model = dir.join("m.fbm");
    let o = flowboost(&[
        "run",
        "--data",
        s(&train),
        "--save-model",
        s(&model),
        "--output",
        "/dev/null",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // All -1, and no feature 4: the file's own schema is single-class, of dimension 3.
    let negatives: Vec<String> = rows(200, 4)
        .iter()
        .filter(|r| r.1 != "c0")
        .map(|r| {
            let mut l = line(r);
            l.truncate(l.rfind(" 4:").unwrap());
            l
        })
        .collect();
    let single = dir.join("single.svm");
    std::fs::write(&single, negatives.join("\n") + "\n").unwrap();
    // The same lines, then one of each class with feature 4: the model's schema.
    let mixed = dir.join("mixed.svm");
    let tail = "+1 1:0.5 4:0.25\n-1 2:0.5 4:0.5\n";
    std::fs::write(&mixed, negatives.join("\n") + "\n" + tail).unwrap();
    let expected = predict(&model, &mixed, &dir.join("mixed.jsonl"));
    let got = predict(&model, &single, &dir.join("single.jsonl"));
    assert_eq!(got[..], expected[..negatives.len()]);

    // A feature the model does not have: an error naming the record and the feature.
    let wide = dir.join("wide.svm");
    std::fs::write(&wide, "-1 1:0.5\n-1 1:0.5 9:1\n").unwrap();
    let o = flowboost(&["predict", "--model", s(&model), "--data", s(&wide)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("record 1: feature `f8` is not one of the model's 4 features"),
        "{err}"
    );
}
