//! A stream whose dimension is far larger than the features it uses (one index at
//! 1,000,000 in a file of a few hundred lines): the Hoeffding trees' memory must follow
//! the features a leaf has seen, not the dimension. Before, every leaf (and every leaf a
//! split made) held statistics for every column: gigabytes for this file.
//!
//! Peak memory is the child's own maximum resident set (`wait4`), so parallel tests do
//! not disturb it.

mod common;

use common::temp_dir;
use std::path::Path;
use std::process::Command;

/// 300 lines of 10 features among 1..200, one line with feature 1,000,000 too.
fn write_wide(path: &Path) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u32
    };
    let mut text = String::new();
    for i in 0..300 {
        let mut idx: Vec<u32> = Vec::new();
        while idx.len() < 10 {
            let j = 1 + next() % 199;
            if !idx.contains(&j) {
                idx.push(j);
            }
        }
        idx.sort_unstable();
        if i == 5 {
            idx.push(1_000_000);
        }
        text.push_str(if next() % 2 == 0 { "1" } else { "-1" });
        for j in idx {
            text.push_str(&format!(" {j}:{:.3}", f64::from(next() % 1000) / 1000.0));
        }
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// Runs flowboost with `args`; its exit status must be success. Returns its peak
/// resident memory in KB.
#[allow(clippy::zombie_processes)] // (`wait4` reaps it, with its resource usage.)
fn peak_kb(args: &[&str]) -> i64 {
    let child = Command::new(env!("CARGO_BIN_EXE_flowboost"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the flowboost binary runs");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is valid; `wait4` fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "flowboost {args:?} failed (status {status})"
    );
    usage.ru_maxrss
}

#[test]
fn a_leaf_s_memory_follows_the_features_it_has_seen_not_the_dimension() {
    let dir = temp_dir("wide-features");
    let data = dir.join("wide.libsvm");
    write_wide(&data);
    let data = data.to_str().unwrap();
    // What the program holds for this dimension without trees (the schema of a million
    // features, the reader): a linear learner's weights are one vector of the dimension.
    let base = peak_kb(&[
        "eval", "--data", data, "--algo", "single", "--weak", "linear",
    ]);
    for extra in [
        &[][..],
        &[
            "--algo",
            "oza",
            "--weak",
            "vfdt",
            "--tree-params",
            "default",
        ],
        &["--max-model-bytes", "256M"],
    ] {
        let mut args = vec!["eval", "--data", data];
        args.extend_from_slice(extra);
        let kb = peak_kb(&args);
        eprintln!("{extra:?}: {kb} KB (linear learner: {base} KB)");
        assert!(
            kb < base + 200_000,
            "{extra:?}: peak {kb} KB, more than 200 MB over a linear learner's {base} KB"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs flowboost with `args`; it must succeed. Returns its standard output.
fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_flowboost"))
        .args(args)
        .output()
        .expect("the flowboost binary runs");
    assert!(
        out.status.success(),
        "flowboost {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A model of the wide stream is written at the size its leaves have in memory (model
/// format 4's compact leaves; before, every leaf was written at full width: about 100 MB
/// per leaf for this file; what is left is each tree's list of the attributes it looks
/// at), and a run resumed from a model saved mid-stream predicts what
/// the uninterrupted run predicts, bit for bit.
#[test]
fn a_wide_stream_s_model_file_follows_the_features_too_and_resumes_exactly() {
    let dir = temp_dir("wide-model");
    let data = dir.join("wide.libsvm");
    write_wide(&data);
    let data = data.to_str().unwrap();
    let model = dir.join("model.fbm");
    let model = model.to_str().unwrap();
    let full = dir.join("full.pred");
    let rest = dir.join("rest.pred");
    let algo = [
        "--algo",
        "oza",
        "--weak",
        "vfdt",
        "--tree-params",
        "default",
    ];
    // The whole stream, its predictions, the model saved at the end.
    let mut args = vec![
        "eval",
        "--data",
        data,
        "--predictions",
        full.to_str().unwrap(),
        "--save-model",
        model,
    ];
    args.extend_from_slice(&algo);
    stdout_of(&args);
    // Its first 150 events (feature 1,000,000 among them), the model saved.
    let first = dir.join("first.fbm");
    let head = dir.join("head.libsvm");
    let text = std::fs::read_to_string(data).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&head, lines[..150].join("\n") + "\n").unwrap();
    let mut args = vec![
        "eval",
        "--data",
        head.to_str().unwrap(),
        "--save-model",
        first.to_str().unwrap(),
    ];
    args.extend_from_slice(&algo);
    stdout_of(&args);
    // Each of the 10 trees writes the attributes it looks at (its layout: about 16 bytes
    // per attribute, a million here); its leaves must add little to that. At full width,
    // each leaf alone would take about 100 MB.
    let bytes = std::fs::metadata(model).unwrap().len();
    let layouts = 10 * 24 * 1_000_000;
    assert!(
        bytes < layouts + (16 << 20),
        "the wide stream's model file takes {bytes} bytes"
    );
    let inspect = stdout_of(&["inspect", model]);
    assert!(inspect.contains("leaves"), "{inspect}");
    // Resumed from the model after 150 events: the last 150 predictions are the
    // uninterrupted run's.
    stdout_of(&[
        "eval",
        "--data",
        data,
        "--load-model",
        first.to_str().unwrap(),
        "--resume",
        "--predictions",
        rest.to_str().unwrap(),
    ]);
    let full = std::fs::read_to_string(&full).unwrap();
    let rest = std::fs::read_to_string(&rest).unwrap();
    let full: Vec<&str> = full.lines().collect();
    let rest: Vec<&str> = rest.lines().collect();
    assert_eq!(
        rest.len(),
        150,
        "the resumed run predicts the last 150 events"
    );
    assert_eq!(
        rest[..],
        full[full.len() - 150..],
        "the resumed run predicts otherwise"
    );
    let _ = std::fs::remove_dir_all(dir);
}
