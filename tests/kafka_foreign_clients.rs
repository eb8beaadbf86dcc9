//! flowboost beside other Kafka clients, on Apache Kafka: events written by confluent-kafka
//! (Confluent's Python client) with each compression codec (and malformed records among
//! them), predictions and dead letters written by the job
//! with the same codec inside its transactions and read back by confluent-kafka with
//! `read_committed`, and the job's committed offsets and transactions checked with Kafka's
//! own tools (`ConsumerGroupCommand`, `TransactionsCommand`, `DumpLogSegments`, through
//! `scripts/kafka.sh tool|codecs`).
//!
//! The Python client is `$FLOWBOOST_PYTHON` (scripts/test.sh makes a venv with
//! confluent-kafka and sets it), else `python3` if it imports `confluent_kafka`; without
//! one the test says that it skips.

mod common;

use common::kafka::{Cli, brokers, create};
use common::skip_note;
use flowboost::connectors::kafka::testing::unique_name;
use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Python interpreter that imports confluent_kafka, or None (and a note) without one.
fn python(test: &str) -> Option<String> {
    let candidates = std::env::var("FLOWBOOST_PYTHON")
        .ok()
        .into_iter()
        .chain(["python3".to_string()]);
    for python in candidates {
        let ok = Command::new(&python)
            .args(["-c", "import confluent_kafka"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(python);
        }
    }
    skip_note(&format!(
        "skipping {test}: no Python with confluent-kafka (set FLOWBOOST_PYTHON; scripts/test.sh does)"
    ));
    None
}

/// Runs scripts/kafka/foreign_client.py with `args`; its stdout.
fn foreign(python: &str, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg(repo().join("scripts/kafka/foreign_client.py"))
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "foreign_client.py {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `scripts/kafka.sh ARGS`; its exit code and stdout.
fn kafka_sh(args: &[&str]) -> (i32, String) {
    let out = Command::new("bash")
        .arg(repo().join("scripts/kafka.sh"))
        .args(args)
        .output()
        .expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Runs one of Kafka's command-line tools against `brokers`; its stdout.
fn kafka_tool(class: &str, brokers: &str, args: &[&str]) -> String {
    let mut all = vec!["tool", class, "--bootstrap-server", brokers];
    all.extend_from_slice(args);
    let (code, out) = kafka_sh(&all);
    assert_eq!(code, 0, "{class} {args:?} failed:\n{out}");
    out
}

/// The codecs of a topic's data batches as the broker stored them, or None when the
/// broker is not the one scripts/kafka.sh runs here (then the check is skipped, said once).
fn stored_codecs(topic: &str) -> Option<Vec<String>> {
    let (code, out) = kafka_sh(&["codecs", topic]);
    match code {
        0 => Some(out.lines().map(str::to_string).collect()),
        3 => None,
        _ => panic!("scripts/kafka.sh codecs {topic}: exit {code}\n{out}"),
    }
}

#[test]
fn every_codec_of_a_foreign_producer_is_read_and_the_predictions_are_read_back_committed() {
    let test =
        "every_codec_of_a_foreign_producer_is_read_and_the_predictions_are_read_back_committed";
    let Some(py) = python(test) else {
        return;
    };
    let b = brokers();
    let n = 400u64;
    let mut runs: Vec<(String, Vec<String>)> = Vec::new();
    let mut codec_checks = 0;
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let events = create(&b, &format!("fb-foreign-{codec}-events"), 2);
        let sink = create(&b, &format!("fb-foreign-{codec}-pred"), 1);
        let dead = create(&b, &format!("fb-foreign-{codec}-dead"), 1);
        let group = unique_name("g");
        let dir = common::temp_dir(&unique_name("foreign"));
        let produced = foreign(
            &py,
            &[
                "produce",
                "--brokers",
                &b,
                "--topic",
                &events,
                "--events",
                &n.to_string(),
                "--compression",
                codec,
                "--malformed-every",
                "50",
            ],
        );
        let bad = n / 50;
        assert!(
            produced.contains(&format!("\"produced\": {n}, \"malformed\": {bad}")),
            "{produced}"
        );
        // The job: transactional (a checkpoint folder), its producer compressing with the
        // same codec.
        let summary = Cli::job(&b, &events, &sink)
            .opt("--group", &group)
            .opt("--task", "binary")
            .opt("--dim", 5)
            .opt("--label-names", "neg,pos")
            .opt("--algo", "adaboost-ol")
            .opt("--learners", 4)
            .opt("--exit-when-idle", 2)
            .opt("--dead-letter", format!("kafka:{dead}"))
            .opt("--checkpoint-dir", dir.join("checkpoints").display())
            .opt("--kafka-set", format!("compression.type={codec}"))
            .summary();
        assert_eq!(summary["events_in"], n, "{codec}: {summary}");
        assert_eq!(summary["predictions"], n, "{codec}: {summary}");
        assert_eq!(summary["dead_letters"], bad, "{codec}: {summary}");
        let by = &summary["dead_letters_by_reason"];
        for reason in ["unparseable", "unknown_label", "wrong_dimension"] {
            assert!(by[reason].as_u64().unwrap_or(0) >= 2, "{codec}: {by}");
        }
        // What the broker stored: the foreign producer's batches and the job's, each in
        // the codec asked for (transaction markers are never compressed).
        if let (Some(ev), Some(pred)) = (stored_codecs(&events), stored_codecs(&sink)) {
            assert_eq!(ev, vec![codec.to_string()], "events topic of {codec}");
            assert_eq!(
                pred,
                vec![codec.to_string()],
                "predictions topic of {codec}"
            );
            codec_checks += 1;
        }
        // confluent-kafka reads the predictions (read_committed): each id exactly once.
        let lines = foreign(
            &py,
            &[
                "read",
                "--brokers",
                &b,
                "--topic",
                &sink,
                "--expect",
                &n.to_string(),
            ],
        );
        let mut ids = Vec::new();
        let mut values = Vec::new();
        for line in lines.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let value: serde_json::Value =
                serde_json::from_str(record["value"].as_str().unwrap()).unwrap();
            assert_eq!(
                record["key"].as_str().unwrap(),
                value["id"].to_string(),
                "a prediction is keyed by its event's id"
            );
            ids.push(value["id"].as_u64().unwrap());
            values.push(record["value"].as_str().unwrap().to_string());
        }
        ids.sort_unstable();
        assert_eq!(ids, (0..n).collect::<Vec<_>>(), "{codec}: each id once");
        // ... and the dead letters: each names its reason and carries the original bytes.
        let dead_lines = foreign(
            &py,
            &[
                "read",
                "--brokers",
                &b,
                "--topic",
                &dead,
                "--expect",
                &bad.to_string(),
            ],
        );
        let mut dead_reasons = Vec::new();
        for line in dead_lines.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let letter: serde_json::Value =
                serde_json::from_str(record["value"].as_str().unwrap()).unwrap();
            assert_eq!(letter["topic"], events.as_str(), "{letter}");
            assert!(letter["payload_base64"].is_string(), "{letter}");
            let reason = letter["reason"].as_str().unwrap();
            dead_reasons.push(reason.split(':').next().unwrap().to_string());
        }
        assert_eq!(dead_reasons.len() as u64, bad, "{codec}: {dead_lines}");
        assert!(
            dead_reasons.iter().any(|r| r == "unknown_label"),
            "{dead_reasons:?}"
        );
        // Kafka's own tools: the group's committed offsets are the partitions' ends...
        let described = kafka_tool(
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            &b,
            &["--describe", "--group", &group],
        );
        let rows: Vec<Vec<&str>> = described
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|w| w.len() >= 6 && w[1] == events)
            .collect();
        assert_eq!(rows.len(), 2, "{codec}: two partitions in\n{described}");
        for w in &rows {
            assert_eq!(
                w[3], w[4],
                "{codec}: committed offset = log end:\n{described}"
            );
            assert_eq!(w[5], "0", "{codec}: no lag:\n{described}");
        }
        // ... and no transaction is left hanging on the broker, nor open for this job.
        let hanging = kafka_tool(
            "org.apache.kafka.tools.TransactionsCommand",
            &b,
            &["find-hanging", "--broker-id", "1"],
        );
        assert!(
            hanging.lines().skip(1).all(|l| l.trim().is_empty()),
            "hanging transactions:\n{hanging}"
        );
        let listed = kafka_tool("org.apache.kafka.tools.TransactionsCommand", &b, &["list"]);
        let ours: Vec<&str> = listed.lines().filter(|l| l.contains(&sink)).collect();
        assert!(
            !ours.is_empty(),
            "{codec}: the job's transactional id in\n{listed}"
        );
        for l in ours {
            assert!(l.contains("CompleteCommit"), "{codec}: {l}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        runs.push((codec.to_string(), values));
    }
    if codec_checks == 0 {
        skip_note(&format!(
            "{test}: the broker is not scripts/kafka.sh's here: stored codecs not checked"
        ));
    }
    // The codec changes nothing: the same events give the same predictions.
    let (first_codec, first) = &runs[0];
    for (codec, values) in &runs[1..] {
        assert_eq!(values, first, "{codec} against {first_codec}");
    }
}
