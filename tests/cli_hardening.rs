//! Issue 17, first part: bad option values, closed pipes, hostile data files. Each case
//! through the binary: exit code 2 and a message naming the option, or the file, line
//! and reason; never a panic (101) or an abort (134). None needs a Kafka broker: the
//! Kafka options are checked before the job connects.

mod common;

use common::{check_error, flowboost, temp_dir, usage_error};
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The options of a Kafka job that fails before it connects.
const KAFKA: [&str; 7] = [
    "run",
    "--brokers",
    "127.0.0.1:1",
    "--source",
    "kafka:x",
    "--sink",
    "kafka:y",
];

fn kafka_job(extra: &[&str]) -> Vec<String> {
    KAFKA
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn durations_and_rates_are_checked_by_one_value_parser() {
    for (option, value) in [
        ("--exit-when-idle", "1e20"),
        ("--report-interval", "1e20"),
        ("--exit-when-idle", "nan"),
        ("--report-interval", "-1"),
        ("--max-merge-wait-ms", "18446744073709551615"),
        ("--commit-interval-ms", "0"),
    ] {
        let args = kafka_job(&[option, value, "--generator", "binary"]);
        usage_error(&strs(&args), &[option]);
    }
    let read = ["kafka", "read", "--brokers", "127.0.0.1:1", "--topic", "t"];
    for extra in [
        &["--idle", "1e20"][..],
        &["--idle", "nan"],
        &["--idle=-1"],
        &["--idle", "-1"],
        &["--timeout", "1e20"],
        &["--latency-skip", "inf"],
    ] {
        let args: Vec<&str> = read.iter().chain(extra).copied().collect();
        let option = extra[0].split('=').next().unwrap();
        let e = usage_error(&args, &[option]);
        assert!(
            e.contains("must be a number of seconds from 0 to 1e9"),
            "{e}"
        );
    }
    let e = usage_error(
        &[
            "kafka",
            "produce",
            "--brokers",
            "127.0.0.1:1",
            "--topic",
            "t",
            "--rate",
            "1e-300",
        ],
        &["--rate"],
    );
    assert!(e.contains("events per second"), "{e}");
}

#[test]
fn resource_options_have_documented_limits() {
    let e = usage_error(&["eval", "--learners", "1000000000"], &["--learners"]);
    assert!(e.contains("at most 10000"), "{e}");
    let e = usage_error(&["eval", "--learners", "-1"], &["--learners"]);
    assert!(e.contains("must be a positive integer"), "{e}");
    usage_error(&["eval", "--learners", "0"], &["--learners"]);
    let e = usage_error(
        &["eval", "--engine", "dataflow", "--workers", "500"],
        &["--workers"],
    );
    assert!(e.contains("at most 128"), "{e}");
    usage_error(&["run", "--workers", "500"], &["--workers"]);
    let args = kafka_job(&["--dim", "1000000000", "--num-labels", "2"]);
    let e = usage_error(&strs(&args), &["--dim"]);
    assert!(e.contains("at most 1048576"), "{e}");
    let args = kafka_job(&["--dim", "3", "--num-labels", "1000000000"]);
    usage_error(&strs(&args), &["--num-labels"]);
    // The limits are in the help.
    let help = flowboost(&["run", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for limit in ["1 to 10000", "1 to 128", "1 to 1048576", "65536", "1e9"] {
        assert!(help.contains(limit), "`{limit}` not in run --help");
    }
}

#[test]
fn nonsense_values_are_errors_naming_the_option() {
    usage_error(&["eval", "--feature-subset", "0"], &["--feature-subset"]);
    usage_error(
        &["eval", "--generator", "binary", "--feature-subset", "500"],
        &["--feature-subset 500", "features"],
    );
    usage_error(&["eval", "--batch", "0"], &["--batch"]);
    usage_error(&["run", "--batch", "0"], &["--batch"]);
    usage_error(&["eval", "--pending-ttl", "0"], &["--pending-ttl"]);
    for (option, value) in [
        ("--merge-block", "0"),
        ("--merge-block", "-5"),
        ("--merge-block-ms", "0"),
        ("--merge-block-ms", "-5"),
        ("--merge-block-ms", "1000000000001"),
        ("--merge-order", "arrival"),
        ("--pending-ttl", "0"),
        ("--feedback-lag", "0"),
        ("--max-epochs-in-flight", "0"),
    ] {
        let args = kafka_job(&[option, value, "--generator", "binary"]);
        usage_error(&strs(&args), &[option]);
    }
    // A top-k booster cannot show more labels than the stream has (8 here).
    usage_error(
        &[
            "eval",
            "--generator",
            "multilabel",
            "--examples",
            "50",
            "--algo",
            "topk-bbm",
            "--k",
            "10",
        ],
        &["--k 10", "8 labels"],
    );
    usage_error(
        &[
            "eval",
            "--generator",
            "multiclass",
            "--algo",
            "oza",
            "--potential",
            "hinge",
        ],
        &["--potential does not apply to oza"],
    );
}

/// Every option whose value is one of a few names: `--help` names them once (clap's list,
/// or the option's own text that says what each means), a name or an alias parses in any
/// case, and anything else is a usage error naming the option, the value and the names
/// expected.
#[test]
fn named_option_values_are_listed_parsed_and_checked() {
    let help = String::from_utf8_lossy(&flowboost(&["eval", "--help"]).stdout).into_owned();
    // The option's text: its line of --help and the indented lines after it, up to the
    // next option's line, in one line.
    let text_of = |help: &str, option: &str| -> String {
        let mut lines = help
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(&format!("{option} <")));
        let first = lines
            .next()
            .unwrap_or_else(|| panic!("{option} not in --help:\n{help}"));
        // Option lines are indented by at most 6 spaces; their text by more (10 when clap
        // puts the text on the lines after the option's, as it does for long options).
        let rest = lines.take_while(|l| l.len() - l.trim_start().len() > 6);
        std::iter::once(first)
            .chain(rest)
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        text_of(&help, "--format").contains("[possible values: auto, arff, libsvm, csv]"),
        "{help}"
    );
    for (option, names) in [
        ("--oza-votes", &["paper (", "moa ("][..]),
        (
            "--protocol",
            &["prequential (", "holdout (", "last20 ("][..],
        ),
        ("--engine", &["sequential (", "dataflow ("][..]),
    ] {
        let text = text_of(&help, option);
        for name in names {
            assert!(text.contains(name), "{option}: `{name}` not in `{text}`");
        }
        assert!(
            !text.contains("[possible values"),
            "{option} names its values twice: `{text}`"
        );
    }
    let run_help = String::from_utf8_lossy(&flowboost(&["run", "--help"]).stdout).into_owned();
    let merge_order = text_of(&run_help, "--merge-order");
    assert!(
        merge_order.contains("offsets (") && merge_order.contains("timestamps ("),
        "{merge_order}"
    );
    // A name in another case and with spaces around it, and an alias (svmlight).
    let out = flowboost(&[
        "eval",
        "--generator",
        "multiclass",
        "--examples",
        "300",
        "--algo",
        "oza",
        "--learners",
        "3",
        "--oza-votes",
        " MOA ",
        "--engine",
        "Dataflow",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = common::last_json(&out);
    assert_eq!(report["engine"], "dataflow");
    // The alias svmlight, on a data file (with a generator --format is an error: the
    // generator would ignore it).
    let dir = temp_dir("named-values");
    let svm = dir.join("a.svm");
    std::fs::write(&svm, "1 1:0.5\n-1 2:1\n1 1:1\n-1 2:0.5\n").unwrap();
    let out = flowboost(&[
        "eval",
        "--data",
        svm.to_str().unwrap(),
        "--format",
        "svmlight",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (option, value, expected) in [
        (
            "--oza-votes",
            "soft",
            "unknown vote rule `soft` (expected paper or moa)",
        ),
        (
            "--weak",
            "tree",
            "unknown weak learner `tree` (expected vfdt or linear)",
        ),
        (
            "--engine",
            "gpu",
            "unknown engine `gpu` (expected sequential or dataflow)",
        ),
        (
            "--protocol",
            "kfold",
            "(expected prequential, holdout or last20)",
        ),
    ] {
        usage_error(
            &["eval", "--generator", "binary", option, value],
            &[option, expected],
        );
    }
    let args = kafka_job(&["--start", "middle", "--generator", "binary"]);
    usage_error(
        &strs(&args),
        &[
            "--start",
            "unknown start `middle` (expected earliest, latest or committed)",
        ],
    );
}

#[test]
fn test_file_with_another_protocol_is_an_error() {
    let dir = temp_dir("hardening-test-protocol");
    let f = dir.join("a.csv");
    std::fs::write(&f, "x,y\n1,a\n2,b\n3,a\n4,b\n").unwrap();
    let f = f.to_str().unwrap();
    usage_error(
        &["eval", "--data", f, "--test", f, "--protocol", "last20"],
        &["--test implies --protocol holdout", "last20"],
    );
}

#[test]
fn kafka_topics_and_feature_space_are_checked_before_connecting() {
    let e = usage_error(
        &[
            "run",
            "--brokers",
            "127.0.0.1:1",
            "--source",
            "kafka:x",
            "--sink",
            "kafka:x",
            "--generator",
            "binary",
        ],
        &["--source", "--sink", "kafka:x"],
    );
    assert!(e.contains("same topic"), "{e}");
    let args = kafka_job(&["--dead-letter", "kafka:x", "--generator", "binary"]);
    usage_error(&strs(&args), &["--source", "--dead-letter"]);
    // No schema option: an error saying what to pass, not the binary preset.
    let e = usage_error(&KAFKA, &["--dim", "--feature-names", "--generator"]);
    assert!(e.contains("feature space"), "{e}");
}

#[test]
fn output_errors_name_the_destination() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    usage_error(
        &[
            "run",
            "--generator",
            "binary",
            "--examples",
            "2000",
            "--output",
            "/dev/full",
        ],
        &["/dev/full", "cannot write"],
    );
}

/// Runs flowboost with stdout a pipe whose reading end is closed at once.
fn closed_stdout(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowboost"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_is_an_error_not_a_panic() {
    for args in [
        &[
            "eval",
            "--generator",
            "binary",
            "--examples",
            "2000",
            "--json",
        ][..],
        &["eval", "--generator", "binary", "--examples", "2000"],
        &["run", "--generator", "binary", "--examples", "20000"],
    ] {
        let out = closed_stdout(args);
        check_error(&out, args, &["stdout", "pipe was closed"]);
    }
}

#[test]
fn a_huge_libsvm_index_is_an_error_naming_the_line() {
    let dir = temp_dir("hardening-u32max");
    let f = dir.join("u32max.libsvm");
    std::fs::write(&f, "1 1:1\n1 4294967295:1\n-1 1:1\n").unwrap();
    let e = usage_error(
        &["eval", "--data", f.to_str().unwrap()],
        &["u32max.libsvm:2:", "index 4294967295", "1048576"],
    );
    assert!(e.lines().count() <= 2, "{e}");
    // Label ids of a multi-label file too.
    let f = dir.join("labels.svm");
    std::fs::write(&f, "0,1 1:1\n0,4000000000 1:1\n").unwrap();
    usage_error(
        &["eval", "--data", f.to_str().unwrap()],
        &["labels.svm:2:", "label id 4000000000"],
    );
    usage_error(
        &[
            "eval",
            "--data",
            f.to_str().unwrap(),
            "--labels",
            "1000000000",
        ],
        &["--labels"],
    );
    // A plain numeric label becomes a label id once another line makes the file
    // multi-label (found by the fuzzer: 44,448,894 labels made before the check, 2.4 GB).
    let f = dir.join("mixed.svm");
    std::fs::write(
        &f,
        "44448893 1:1
0,1 2:1
",
    )
    .unwrap();
    usage_error(
        &["eval", "--data", f.to_str().unwrap()],
        &["mixed.svm", "label id 44448893", "65535"],
    );
}

#[test]
fn long_lines_and_long_tokens_are_bounded() {
    let dir = temp_dir("hardening-lines");
    // A gzip line bomb: 64 MiB of one line, a few hundred KB compressed.
    let bomb = dir.join("bomb.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&bomb).unwrap(),
        flate2::Compression::best(),
    );
    enc.write_all(b"a,b\n").unwrap();
    let chunk = vec![b'1'; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&chunk).unwrap();
    }
    enc.write_all(b"\n").unwrap();
    enc.finish().unwrap();
    usage_error(
        &["eval", "--data", bomb.to_str().unwrap()],
        &[
            "bomb.csv.gz:2:",
            "longer than the limit of 16777216 bytes",
            "--max-line-bytes",
        ],
    );
    // The limit is an option.
    let small = dir.join("small.csv");
    std::fs::write(&small, "x,y\n1,a\n22222222222,b\n3,a\n").unwrap();
    usage_error(
        &[
            "eval",
            "--data",
            small.to_str().unwrap(),
            "--max-line-bytes",
            "8",
        ],
        &["small.csv:3:", "limit of 8 bytes"],
    );
    usage_error(&["eval", "--max-line-bytes", "0"], &["--max-line-bytes"]);
    // A bad token of 1 MB is quoted by its first 64 characters and its size.
    let token = dir.join("token.libsvm");
    let mut text = b"1 1:1\n-1 1:".to_vec();
    text.extend(vec![b'x'; 1_000_000]);
    text.extend(b"\n1 1:0\n");
    std::fs::write(&token, text).unwrap();
    let e = usage_error(
        &["eval", "--data", token.to_str().unwrap()],
        &["token.libsvm:2:", "...(1000000 bytes)"],
    );
    assert!(e.len() < 1000, "a message of {} bytes", e.len());
}

#[test]
fn a_libsvm_file_with_a_bad_line_is_not_read_as_csv() {
    let dir = temp_dir("hardening-sniff");
    for (name, bad) in [
        ("neg.libsvm", "-1 -3:1"),
        ("colon.libsvm", "-1 3"),
        ("float.libsvm", "-1 2.5:1"),
    ] {
        let f = dir.join(name);
        std::fs::write(&f, format!("1 1:1 2:0.5\n-1 2:1\n{bad}\n1 1:1\n")).unwrap();
        let e = usage_error(
            &["eval", "--data", f.to_str().unwrap()],
            &[&format!("{name}:3:")],
        );
        assert!(e.contains("bad index") || e.contains("bad feature"), "{e}");
    }
    // Without the extension: the LIBSVM shape of the other lines decides.
    let f = dir.join("neg");
    std::fs::write(&f, "1 1:1 2:0.5\n-1 2:1\n-1 -3:1\n1 1:1\n").unwrap();
    usage_error(
        &["eval", "--data", f.to_str().unwrap()],
        &["neg:3:", "not a LIBSVM line", "bad index `-3`", "--format"],
    );
}

/// The Kafka job's options need the Kafka job (`--source kafka:TOPIC` or a job file): on
/// a file or a generator they are an error, not silently ignored.
#[test]
fn kafka_only_options_on_a_generator_are_an_error() {
    for (option, value) in [
        ("--merge-block", "5"),
        ("--merge-order", "timestamps"),
        ("--merge-block-ms", "10"),
        ("--max-read-ahead", "500"),
        ("--idle-pause-ms", "5"),
        ("--exit-when-idle", "1"),
        ("--commit-interval-ms", "10"),
        ("--kafka-set", "a=b"),
    ] {
        let out = flowboost(&[
            "run",
            "--generator",
            "binary",
            "--examples",
            "100",
            option,
            value,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{option}: {err}");
        assert!(err.contains("--source"), "{option}: {err}");
    }
}

/// Columns and attributes over the limits are errors naming the file and line: the
/// line where a CSV column passed the limit, or the attribute's declaration in ARFF.
/// A column of ids (a distinct text value per row) took 22 GB as a nominal attribute
/// before the limit; ignored, it reads fine.
#[test]
fn too_many_columns_values_or_labels_name_the_line() {
    let dir = temp_dir("hardening-limits");
    // A CSV file with an id column: the 1,025th distinct value is on line 1,026.
    let ids = dir.join("ids.csv");
    let mut text = String::from("x,name,y\n");
    for i in 0..3000 {
        text.push_str(&format!("{},n{i},{}\n", i % 7, i % 2));
    }
    std::fs::write(&ids, &text).unwrap();
    usage_error(
        &["eval", "--data", ids.to_str().unwrap()],
        &[
            "ids.csv:1026:",
            "attribute `name`",
            "3000 distinct values",
            "--ignore",
        ],
    );
    let out = flowboost(&["eval", "--data", ids.to_str().unwrap(), "--ignore", "name"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A target of 70,000 classes: the line where it passed 65,536 values; the scan keeps
    // no more values after that.
    let classes = dir.join("classes.csv");
    let mut text = String::from("x,y\n");
    for i in 0..70_000 {
        text.push_str(&format!("{},c{i}\n", i % 5));
    }
    std::fs::write(&classes, &text).unwrap();
    usage_error(
        &["eval", "--data", classes.to_str().unwrap()],
        &["classes.csv:1026:", "target column `y`", "65536"],
    );
    // A CSV row of more than 2^20 + 1 columns: its line.
    let wide = dir.join("wide.csv");
    let row = vec!["1"; (1 << 20) + 2].join(",");
    std::fs::write(&wide, format!("{row}\n{row}\n")).unwrap();
    usage_error(
        &[
            "eval",
            "--data",
            wide.to_str().unwrap(),
            "--max-line-bytes",
            "4194304",
        ],
        &["wide.csv:1:", "1048578 columns", "1048576 features"],
    );
    // ARFF: the declaration's line, for a nominal feature and for any attribute of more
    // values than a class may have.
    let values = |n: usize| {
        (0..n)
            .map(|i| format!("v{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let arff = dir.join("nominal.arff");
    std::fs::write(
        &arff,
        format!(
            "@relation r\n@attribute x numeric\n@attribute code {{{}}}\n@attribute y {{a,b}}\n@data\n1,v1,a\n2,v2,b\n",
            values(2000)
        ),
    )
    .unwrap();
    usage_error(
        &["eval", "--data", arff.to_str().unwrap()],
        &[
            "nominal.arff:3:",
            "attribute `code`",
            "2000 distinct values",
        ],
    );
    let arff = dir.join("huge.arff");
    std::fs::write(
        &arff,
        format!(
            "@relation r\n@attribute x numeric\n@attribute y {{{}}}\n@data\n1,v1\n2,v2\n",
            values(70_000)
        ),
    )
    .unwrap();
    usage_error(
        &[
            "eval",
            "--data",
            arff.to_str().unwrap(),
            "--max-line-bytes",
            "4194304",
        ],
        &["huge.arff:3:", "attribute `y`", "70000 values"],
    );
}
