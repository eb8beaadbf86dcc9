//! Data files that used to be misread without a word (issue 48, the readers' part): each
//! is now a clean exit 2 naming the file, the line and the field, or it works.

mod common;

use common::{check_error, flowboost, shared_data, temp_dir, usage_error};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs flowboost with `args` (stdin from `stdin` when given, written by a thread until
/// the pipe closes) and kills it after `limit`: the test fails on a hang, not the run.
fn run_with_timeout(
    args: &[&str],
    stdin: Option<Vec<u8>>,
    limit: Duration,
) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowboost"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the flowboost binary runs");
    if let (Some(chunk), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // An endless line: the same chunk again and again, until the reader hangs up.
        std::thread::spawn(move || while pipe.write_all(&chunk).is_ok() {});
    }
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("flowboost {} ran past {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn write(path: &Path, content: impl AsRef<[u8]>) -> String {
    std::fs::write(path, content).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn endless_lines_are_refused_at_the_limit() {
    let limit = Duration::from_secs(60);
    if Path::new("/dev/zero").exists() {
        let args = ["eval", "--data", "/dev/zero"];
        let out = run_with_timeout(&args, None, limit);
        check_error(
            &out,
            &args,
            &[
                "/dev/zero:1:",
                "limit of 16777216 bytes",
                "--max-line-bytes",
            ],
        );
        for format in ["csv", "libsvm", "arff"] {
            let args = [
                "eval",
                "--data",
                "/dev/zero",
                "--format",
                format,
                "--max-line-bytes",
                "1000",
            ];
            let out = run_with_timeout(&args, None, limit);
            check_error(&out, &args, &["/dev/zero:1:", "limit of 1000 bytes"]);
        }
    }
    // A pipe that never ends its line.
    if Path::new("/dev/stdin").exists() {
        let args = ["eval", "--data", "/dev/stdin", "--max-line-bytes", "4096"];
        let out = run_with_timeout(&args, Some(b"1,2,3,".repeat(10_000)), limit);
        check_error(&out, &args, &["/dev/stdin:1:", "limit of 4096 bytes"]);
    }
    // An overlong line in the middle of a file: its line, and nothing read after it.
    let dir = temp_dir("misreads-lines");
    let file = write(
        &dir.join("long.csv"),
        format!("x,y\n1,a\n{}\n2,b\n", "9".repeat(5000)),
    );
    usage_error(
        &["eval", "--data", &file, "--max-line-bytes", "100"],
        &["long.csv:3:", "limit of 100 bytes"],
    );
}

#[test]
fn a_file_that_is_not_csv_is_not_read_as_csv() {
    let dir = temp_dir("misreads-not-csv");
    let mut text = String::new();
    for r in 0..40 {
        text.push_str(&format!("{} 3:1 {}:1\n", ["-1", "+1"][r % 2], 10 + r));
    }
    let svm = write(&dir.join("a9a-like"), text);
    usage_error(
        &["eval", "--data", &svm, "--format", "csv"],
        &["a9a-like:", "does not look like CSV", "--format libsvm"],
    );
    if let Some(data) = shared_data("a_file_that_is_not_csv_is_not_read_as_csv") {
        let a9a = data.join("a9a/a9a");
        if a9a.exists() {
            usage_error(
                &["eval", "--data", a9a.to_str().unwrap(), "--format", "csv"],
                &["a9a/a9a:", "does not look like CSV", "--format libsvm"],
            );
        }
    }
    // A class column with a different value in every row: not classes.
    let mut text = "x,y\n".to_string();
    for r in 0..30 {
        text.push_str(&format!("{},{}.25\n", r % 3, r));
    }
    let regression = write(&dir.join("regression.csv"), text);
    usage_error(
        &["eval", "--data", &regression],
        &[
            "regression.csv:",
            "different value in each of its 30 rows",
            "--target",
        ],
    );
}

#[test]
fn a_few_text_cells_in_a_numeric_column_are_an_error() {
    let dir = temp_dir("misreads-inference");
    for (i, odd) in ["0x1F", "1_000", "é", "\0"].into_iter().enumerate() {
        let mut text = "a,b,y\n".to_string();
        for r in 0..60 {
            let a = if r == 17 {
                odd.to_string()
            } else {
                (r % 9).to_string()
            };
            text.push_str(&format!("{a},{},{}\n", r % 5, ["p", "q"][r % 2]));
        }
        let file = write(&dir.join(format!("odd{i}.csv")), text);
        // Row 17 is line 19 (the header is line 1).
        usage_error(
            &["eval", "--data", &file],
            &[
                &format!("odd{i}.csv:19:"),
                "column `a`",
                "is not a number",
                "--nominal 'a'",
            ],
        );
        // Said nominal, it reads.
        let out = flowboost(&["eval", "--data", &file, "--nominal", "a"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A numeric target: NaN and infinity are not classes.
    let file = write(&dir.join("nan.csv"), "a,b\n1,1\n2,0\n3,inf\n4,nan\n5,1\n");
    usage_error(
        &["eval", "--data", &file, "--target", "auto"],
        &["nan.csv:4:", "`inf` is not a class"],
    );
}

#[test]
fn a_fractional_libsvm_label_is_an_error() {
    let dir = temp_dir("misreads-libsvm");
    let file = write(
        &dir.join("pm.svm"),
        "1 1:1\n-1 2:1\n1.5 1:1\n-1 2:1\n1 1:1\n",
    );
    usage_error(
        &["eval", "--data", &file],
        &["pm.svm:3:", "`1.5` is not an integer"],
    );
    // --nominal is for CSV: not ignored without a word elsewhere.
    usage_error(
        &["eval", "--data", &file, "--nominal", "1"],
        &["pm.svm:", "nominal columns are for CSV"],
    );
}

#[test]
fn an_empty_arff_field_is_not_a_missing_value() {
    let dir = temp_dir("misreads-arff");
    let head = "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n";
    let file = write(
        &dir.join("empty.arff"),
        format!("{head}1,x\n?,y\n,y\n2,x\n"),
    );
    usage_error(
        &["eval", "--data", &file],
        &["empty.arff:7:", "empty value for attribute `a`", "`?`"],
    );
}

#[test]
fn duplicate_names_are_errors() {
    let dir = temp_dir("misreads-names");
    let arff = write(
        &dir.join("dup.arff"),
        "@relation r\n@attribute a numeric\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,2,x\n3,4,y\n",
    );
    usage_error(
        &["eval", "--data", &arff],
        &["dup.arff:3:", "`a` is declared twice (first on line 2)"],
    );
    let csv = write(&dir.join("dup.csv"), "a,a,y\n1,2,x\n3,4,y\n");
    usage_error(
        &["eval", "--data", &csv],
        &["dup.csv:1:", "`a` twice (columns 1 and 2)"],
    );
    let kafka = [
        "run",
        "--brokers",
        "127.0.0.1:1",
        "--source",
        "kafka:x",
        "--sink",
        "kafka:y",
    ];
    let mut args = kafka.to_vec();
    args.extend(["--feature-names", "u,v,u", "--label-names", "n,p"]);
    usage_error(&args, &["--feature-names", "`u` is given twice"]);
    let mut args = kafka.to_vec();
    args.extend(["--feature-names", "u,v", "--label-names", "n,p,n"]);
    usage_error(&args, &["--label-names", "`n` is given twice"]);
    let mut args = kafka.to_vec();
    args.extend(["--feature-names", "u,v", "--label-names", "n"]);
    usage_error(&args, &["--label-names n", "at least 2 labels"]);
}

#[test]
fn too_few_labels_names_the_file() {
    let dir = temp_dir("misreads-labels");
    let csv = write(&dir.join("one.csv"), "a,y\n1,x\n2,x\n");
    usage_error(
        &["eval", "--data", &csv],
        &[
            "one.csv:",
            "one label, `x`",
            "at least 2 labels",
            "--target",
        ],
    );
    let svm = write(&dir.join("one.svm"), "1 1:1\n1 2:1\n");
    usage_error(
        &["eval", "--data", &svm],
        &["one.svm:", "one label, `1`", "at least 2 labels"],
    );
}
