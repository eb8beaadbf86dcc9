//! `flowboost run --source kafka:...` through the binary, against the real broker of
//! `scripts/kafka.sh` (scripts/test.sh starts it and exports FLOWBOOST_KAFKA_BROKERS).
//! Labeled events in, predictions out; feedback joined; dead letters with reasons; every
//! consumed record accounted for; 1 and 2 workers identical; a job file; a job killed
//! mid-stream and restarted skips no record; metrics served while running; clicks for a
//! top-k booster; LIBSVM records against a declared feature space; Avro events as JSON
//! events.

mod common;

use common::kafka::{Cli, brokers, create, metric, metrics_address, read_lines, scrape};
use common::{flowboost, json_lines, last_json, temp_dir};
use flowboost::connectors::kafka::testing::unique_name;
use flowboost::connectors::kafka::{DeadLetterRecord, KafkaConfig};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Reads `expect` records of a topic (values, in topic order) as JSON.
fn read_values(brokers: &str, topic: &str, expect: u64) -> Vec<Value> {
    read_lines(brokers, topic, expect)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn labeled_events_feedback_and_bad_records_are_all_accounted_for() {
    let b = brokers();
    let events = create(&b, "fb-job-events", 4);
    let feedback = create(&b, "fb-job-feedback", 2);
    let sink = create(&b, "fb-job-pred", 1);
    let dead = create(&b, "fb-job-dead", 1);
    let produced = Cli::produce(&b, &events)
        .opt("--generator", "multiclass")
        .opt("--examples", 400)
        .opt("--unlabeled-every", 5)
        .opt("--feedback-topic", &feedback)
        .opt("--feedback-delay", 7)
        .opt("--malformed-every", 40)
        .summary();
    assert_eq!(produced["events"], 400);
    assert_eq!(produced["malformed"], 10);
    assert_eq!(produced["feedback"], 80);
    let summary = Cli::job(&b, &events, &sink)
        .opt("--feedback", format!("kafka:{feedback}"))
        .opt("--dead-letter", format!("kafka:{dead}"))
        .opt("--group", unique_name("g"))
        .opt("--start", "earliest")
        .opt("--exit-when-idle", 1.5)
        .opt("--generator", "multiclass")
        .opt("--learners", 4)
        .summary();
    // Predictions: one per event, keyed and identified by the event id.
    let predictions = read_values(&b, &sink, 400);
    let ids: BTreeSet<u64> = predictions
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (0..400).collect::<BTreeSet<u64>>());
    for p in &predictions {
        assert!(p["prediction"].as_str().unwrap().starts_with('c'), "{p}");
        assert_eq!(p["ranking"].as_array().unwrap().len(), 5, "{p}");
        let e = p["expert"].as_u64().unwrap();
        assert!((1..=4).contains(&e), "{p}");
        assert!(p["model_version"].as_u64().unwrap() <= 400, "{p}");
    }
    // Model versions only grow along the sequence (one partition: delivery order).
    let versions: Vec<u64> = predictions
        .iter()
        .map(|p| p["model_version"].as_u64().unwrap())
        .collect();
    assert!(versions.windows(2).all(|w| w[0] <= w[1]), "{versions:?}");
    // Dead letters: the 10 malformed records, with their kind and original bytes.
    let letters = read_values(&b, &dead, 10);
    let mut kinds = BTreeMap::new();
    for l in &letters {
        let d: DeadLetterRecord = serde_json::from_value(l.clone()).unwrap();
        assert_eq!(d.topic, events);
        let kind = d.reason.split(':').next().unwrap().to_string();
        *kinds.entry(kind).or_insert(0) += 1;
        assert_eq!(
            d.payload().unwrap(),
            d.payload_text.clone().unwrap().into_bytes()
        );
    }
    let expected: BTreeMap<String, i32> = [
        "missing_id",
        "non_finite",
        "unknown_label",
        "unparseable",
        "wrong_dimension",
    ]
    .iter()
    .map(|k| (k.to_string(), 2))
    .collect();
    assert_eq!(kinds, expected);
    // The job's counters.
    assert_eq!(summary["events_in"], 400);
    assert_eq!(summary["predictions"], 400);
    assert_eq!(summary["dead_letters"], 10);
    assert_eq!(summary["feedback_in"], 80);
    assert_eq!(summary["feedback_joined"], 80);
    assert_eq!(summary["learned"], 320 + 80);
    // Every prediction's latency is measured (dead letters and feedback have none).
    assert_eq!(summary["latency_ms"]["count"], 400, "{summary}");
    // Conservation: every consumed record (410 events-topic records, 80 feedback) is a
    // prediction, a learned update from feedback, or a dead letter.
    let consumed = 410 + 80;
    let accounted = predictions.len() + 80 + letters.len();
    assert_eq!(accounted, consumed);
}

#[test]
fn two_workers_predict_exactly_as_one_and_a_job_file_is_the_same_job() {
    let b = brokers();
    let events = create(&b, "fb-det-events", 4);
    Cli::produce(&b, &events)
        .opt("--generator", "multilabel")
        .opt("--examples", 600)
        .opt("--seed", 3)
        .summary();
    let one = create(&b, "fb-det-pred1", 1);
    let two = create(&b, "fb-det-pred2", 1);
    let s1 = Cli::job(&b, &events, &one)
        .opt("--group", unique_name("g"))
        .opt("--exit-when-idle", 1.5)
        .opt("--generator", "multilabel")
        .opt("--algo", "ada-olmr")
        .opt("--learners", 6)
        .opt("--workers", 1)
        .summary();
    // The same job from a TOML file, on 2 workers.
    let dir = temp_dir("kafka-job-file");
    let file = dir.join("job.toml");
    let toml = format!(
        "[kafka]\nbrokers = \"{b}\"\nsource = \"kafka:{events}\"\nsink = \"kafka:{two}\"\ngroup = \"{}\"\nexit-when-idle = 1.5\nworkers = 2\nreport_interval = 0\n\n[model]\ngenerator = \"multilabel\"\nalgo = \"ada-olmr\"\nlearners = 6\n",
        unique_name("g")
    );
    std::fs::write(&file, toml).unwrap();
    let s2 = last_json(&flowboost(&["run", "--config", file.to_str().unwrap()]));
    assert_eq!(s1["predictions"], 600);
    assert_eq!(s2["predictions"], 600);
    assert_eq!(s2["workers"], 2);
    let p1 = read_values(&b, &one, 600);
    let p2 = read_values(&b, &two, 600);
    assert!(
        p1[0]["labels"].is_array() && p1[0]["prediction"].is_array(),
        "{}",
        p1[0]
    );
    assert_eq!(
        p1, p2,
        "1 and 2 workers must give the same predictions, in the same order"
    );
    assert_eq!(s1["progressive_loss"], s2["progressive_loss"]);
}

#[test]
fn a_job_killed_mid_stream_resumes_without_skipping_a_record() {
    let b = brokers();
    let events = create(&b, "fb-kill-events", 4);
    let sink = create(&b, "fb-kill-pred", 1);
    let group = unique_name("g");
    let n = 2000u64;
    // The producer runs at 500 events/s (4 s) while the job reads.
    let producer = Cli::produce(&b, &events)
        .opt("--generator", "binary")
        .opt("--examples", n)
        .opt("--rate", 500)
        .command()
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let job = Cli::job(&b, &events, &sink)
        .opt("--group", &group)
        .opt("--start", "committed")
        .opt("--generator", "binary")
        .opt("--learners", 4)
        .opt("--commit-interval-ms", 100)
        .opt("--workers", 2);
    let mut first = job
        .clone()
        .opt("--metrics-addr", "127.0.0.1:0")
        .command()
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let addr = metrics_address(&mut first);
    // Until the job has read events and committed offsets (a loaded machine may take a
    // while to join the group), so that the kill below leaves something to resume from.
    let start = Instant::now();
    let metrics = loop {
        let metrics = scrape(&addr);
        assert!(metrics.starts_with("HTTP/1.1 200 OK"), "{metrics}");
        if metric(&metrics, "flowboost_events_in_total") > 0
            && metric(&metrics, "flowboost_commits_total") > 0
        {
            break metrics;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no events read and committed within 30 s:\n{metrics}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    for name in [
        "flowboost_events_in_total",
        "flowboost_predictions_out_total",
        "flowboost_dead_letters_total",
        "flowboost_feedback_joined_total",
        "flowboost_feedback_expired_total",
        "flowboost_progressive_loss",
        "flowboost_consumer_lag",
        "flowboost_sink_held",
        "flowboost_event_latency_seconds_bucket{le=\"0.001\"}",
        "flowboost_event_latency_seconds_count",
    ] {
        assert!(metrics.contains(name), "{name} missing:\n{metrics}");
    }
    // The lag is asked for at the start (then every 5 s), per partition of the events.
    assert!(
        metrics.contains("flowboost_consumer_lag{topic=\""),
        "no per-partition lag:\n{metrics}"
    );
    // Kill it mid-stream (no chance to flush or commit anything more).
    first.kill().unwrap();
    first.wait().unwrap();
    let out = producer.wait_with_output().unwrap();
    assert!(out.status.success());
    // Restart with the same group: it resumes from the committed offsets.
    let start = Instant::now();
    let second = job.opt("--exit-when-idle", 1.5).summary();
    assert!(start.elapsed() < Duration::from_secs(60));
    let resumed = second["events_in"].as_u64().unwrap();
    assert!(resumed < n, "the restart read everything again: {second}");
    // Every event has a prediction (at least once), none was skipped.
    let dir = temp_dir("kafka-kill");
    let file = dir.join("pred.jsonl");
    Cli::read(&b, &sink)
        .opt("--idle", 2)
        .opt("--output", file.display())
        .summary();
    let ids: BTreeSet<u64> = json_lines(&file)
        .iter()
        .map(|v| v["id"].as_u64().unwrap())
        .collect();
    let missing: Vec<u64> = (0..n).filter(|i| !ids.contains(i)).collect();
    assert!(
        missing.is_empty(),
        "{} events skipped: {:?}",
        missing.len(),
        &missing[..missing.len().min(20)]
    );
}

#[test]
fn kafka_options_are_checked() {
    let out = flowboost(&["run", "--source", "kafka:x", "--sink", "kafka:y"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--brokers"));
    let out = flowboost(&[
        "run",
        "--brokers",
        "127.0.0.1:1",
        "--source",
        "topic",
        "--sink",
        "kafka:y",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected kafka:TOPIC"));
    // A source topic that does not exist is an error naming it (not "0 events", exit 0),
    // and asking about it does not create it.
    let b = brokers();
    let sink = create(&b, "fb-missing-pred", 1);
    let missing = unique_name("fb-missing-events");
    for _ in 0..2 {
        let out = Cli::job(&b, &missing, &sink)
            .opt("--generator", "binary")
            .opt("--exit-when-idle", 1)
            .output();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&missing), "{err}");
    }
}

#[test]
fn clicks_on_shown_labels_are_joined_for_a_top_k_booster() {
    let b = brokers();
    let events = create(&b, "fb-clicks-events", 2);
    let feedback = create(&b, "fb-clicks-feedback", 1);
    let sink = create(&b, "fb-clicks-pred", 1);
    let dead = create(&b, "fb-clicks-dead", 1);
    // 150 unlabeled events: their feedback will be clicks on the labels shown.
    Cli::produce(&b, &events)
        .opt("--generator", "multilabel")
        .opt("--examples", 150)
        .opt("--unlabeled-every", 1)
        .summary();
    let job = Cli::job(&b, &events, &sink)
        .opt("--feedback", format!("kafka:{feedback}"))
        .opt("--dead-letter", format!("kafka:{dead}"))
        .opt("--group", unique_name("g"))
        .opt("--exit-when-idle", 6)
        .opt("--generator", "multilabel")
        .opt("--algo", "topk-bbm")
        .opt("--learners", 4)
        .opt("--k", 3)
        .spawn();
    let predictions = read_values(&b, &sink, 150);
    let mut clicks =
        flowboost::connectors::kafka::KafkaSink::new(&KafkaConfig::new(b.clone()), &feedback)
            .unwrap();
    for p in &predictions {
        let shown: Vec<&str> = p["shown"]
            .as_array()
            .unwrap_or_else(|| panic!("no shown labels: {p}"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(shown.len(), 3, "{p}");
        let id = p["id"].as_u64().unwrap();
        // Even ids: the first shown label is clicked; odd ids: none.
        let clicked: Vec<&str> = if id % 2 == 0 { vec![shown[0]] } else { vec![] };
        let body = serde_json::json!({"id": id, "clicks": clicked}).to_string();
        clicks
            .send(Some(id.to_string().as_bytes()), body.as_bytes())
            .unwrap();
    }
    // One click for an event that does not exist: it waits in the join, then expires.
    clicks
        .send(Some(b"999999"), br#"{"id": 999999, "clicks": []}"#)
        .unwrap();
    clicks.flush(Duration::from_secs(30)).unwrap();
    let out = job.wait_with_output().unwrap();
    let summary = last_json(&out);
    assert_eq!(summary["events_in"], 150);
    assert_eq!(summary["feedback_in"], 151);
    assert_eq!(summary["feedback_joined"], 150);
    assert_eq!(summary["learned"], 150);
    // The click for an event that never came waited in the join and is counted unmatched.
    assert_eq!(summary["feedback_unmatched"], 1);
    assert_eq!(summary["dead_letters"], 0);
    let _ = dead;
}

#[test]
fn libsvm_records_against_a_declared_feature_space() {
    let b = brokers();
    let events = create(&b, "fb-libsvm-events", 2);
    let sink = create(&b, "fb-libsvm-pred", 1);
    let dead = create(&b, "fb-libsvm-dead", 1);
    let mut producer =
        flowboost::connectors::kafka::KafkaSink::new(&KafkaConfig::new(b.clone()), &events)
            .unwrap();
    for id in 0..60u64 {
        let label = ["a", "b", "c"][(id % 3) as usize];
        let line = format!("{label} 1:{} 3:{}", id as f64 * 0.1, (id % 3) as f64);
        producer
            .send(Some(id.to_string().as_bytes()), line.as_bytes())
            .unwrap();
    }
    // Beyond the declared dimension, an unknown label, no id (no key), unlabeled ("?").
    for (key, line) in [
        (Some("100"), "a 4:1.0"),
        (Some("101"), "z 1:1.0"),
        (None, "a 1:1.0"),
        (Some("102"), "? 1:0.5"),
    ] {
        producer
            .send(key.map(str::as_bytes), line.as_bytes())
            .unwrap();
    }
    producer.flush(Duration::from_secs(30)).unwrap();
    let summary = Cli::job(&b, &events, &sink)
        .opt("--dead-letter", format!("kafka:{dead}"))
        .opt("--group", unique_name("g"))
        .opt("--exit-when-idle", 1.5)
        .opt("--record-format", "libsvm")
        .opt("--task", "multiclass")
        .opt("--dim", 3)
        .opt("--label-names", "a,b,c")
        .opt("--algo", "oza")
        .opt("--learners", 3)
        .summary();
    assert_eq!(summary["events_in"], 61);
    assert_eq!(summary["predictions"], 61);
    assert_eq!(
        summary["learned"], 60,
        "the unlabeled event is predicted only"
    );
    assert_eq!(summary["dead_letters"], 3);
    let by = &summary["dead_letters_by_reason"];
    assert_eq!(by["wrong_dimension"], 1, "{by}");
    assert_eq!(by["unknown_label"], 1, "{by}");
    assert_eq!(by["missing_id"], 1, "{by}");
    let predictions = read_values(&b, &sink, 61);
    assert!(predictions.iter().any(|p| p["id"] == 102));
    assert_eq!(read_values(&b, &dead, 3).len(), 3);
}

#[test]
fn avro_events_give_what_the_same_json_events_give() {
    // The same stream (multi-label, keyed, every fourth event's label as JSON feedback,
    // a malformed record after every 50th) as JSON and as Avro events: the same
    // predictions in the same order, the same dead letters by reason, the same counters.
    let b = brokers();
    let mut runs = Vec::new();
    for format in ["json", "avro"] {
        let events = create(&b, &format!("fb-avro-{format}-events"), 3);
        let feedback = create(&b, &format!("fb-avro-{format}-feedback"), 1);
        let sink = create(&b, "fb-avro-pred", 1);
        let dead = create(&b, "fb-avro-dead", 1);
        let produced = Cli::produce(&b, &events)
            .opt("--record-format", format)
            .opt("--generator", "multilabel")
            .opt("--examples", 500)
            .opt("--seed", 4)
            .opt("--keys", "x,y")
            .opt("--unlabeled-every", 4)
            .opt("--feedback-topic", &feedback)
            .opt("--feedback-delay", 5)
            .opt("--malformed-every", 50)
            .summary();
        assert_eq!(produced["malformed"], 10, "{produced}");
        let summary = Cli::job(&b, &events, &sink)
            .opt("--record-format", format)
            .opt("--feedback", format!("kafka:{feedback}"))
            .opt("--dead-letter", format!("kafka:{dead}"))
            .opt("--group", unique_name("g"))
            .opt("--start", "earliest")
            .opt("--exit-when-idle", 1.5)
            .opt("--keys", "x,y")
            .opt("--generator", "multilabel")
            .opt("--algo", "ada-olmr")
            .opt("--learners", 4)
            .opt("--workers", 2)
            .summary();
        let predictions = read_lines(&b, &sink, 500);
        let mut reasons: Vec<String> = read_values(&b, &dead, 10)
            .into_iter()
            .map(|l| {
                let d: DeadLetterRecord = serde_json::from_value(l).unwrap();
                assert_eq!(d.topic, events);
                d.reason.split(':').next().unwrap().to_string()
            })
            .collect();
        reasons.sort();
        let counters: Vec<Value> = ["events_in", "predictions", "feedback_joined", "learned"]
            .iter()
            .map(|k| summary[k].clone())
            .collect();
        assert_eq!(counters, [500, 500, 125, 500], "{format}: {summary}");
        runs.push((predictions, reasons, summary["progressive_loss"].clone()));
    }
    assert!(runs[0].0[0].contains(r#""key":"#), "{}", runs[0].0[0]);
    assert_eq!(
        runs[0].1,
        [
            "missing_id",
            "missing_id",
            "non_finite",
            "non_finite",
            "unknown_label",
            "unknown_label",
            "unparseable",
            "unparseable",
            "wrong_dimension",
            "wrong_dimension"
        ]
    );
    assert_eq!(
        runs[0], runs[1],
        "JSON and Avro events must give the same job"
    );
}

#[test]
fn a_model_trained_offline_warm_starts_the_job_and_sigterm_saves_it() {
    let b = brokers();
    let events = create(&b, "fb-model-events", 1);
    let sink = create(&b, "fb-model-pred", 1);
    let group = unique_name("g");
    let dir = temp_dir(&unique_name("kafka-model"));
    let offline = dir.join("offline.fbm");
    let saved = dir.join("job.fbm");
    let offline_s = offline.to_str().unwrap();
    last_json(&flowboost(&[
        "eval",
        "--generator",
        "binary",
        "--examples",
        "3000",
        "--algo",
        "adaboost-ol",
        "--learners",
        "4",
        "--save-model",
        offline_s,
        "--json",
    ]));
    let n = 1500u64;
    Cli::produce(&b, &events)
        .opt("--generator", "binary")
        .opt("--examples", n)
        .opt("--seed", 9)
        .summary();
    // The job starts from the offline model and runs until SIGTERM.
    let job = Cli::job(&b, &events, &sink)
        .opt("--group", &group)
        .opt("--generator", "binary")
        .opt("--load-model", offline_s)
        .opt("--save-model", saved.display())
        .opt("--commit-interval-ms", 100)
        .spawn();
    let predictions = read_values(&b, &sink, n);
    let kill = Command::new("kill")
        .args(["-TERM", &job.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = job.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {}: {stderr}", out.status);
    assert!(stderr.contains("stopping (signal)"), "{stderr}");
    let summary = last_json(&out);
    assert_eq!(summary["predictions"], n);
    // The saved model went on from the offline one: 3,000 + 1,500 events.
    let inspect = last_json(&flowboost(&["inspect", saved.to_str().unwrap(), "--json"]));
    assert_eq!(inspect["position"]["events"], 3000 + n, "{inspect}");
    assert_eq!(inspect["algorithm"], "adaboost-ol");
    // Warm start: the job's first prediction is the offline model's prediction of that
    // event (`flowboost predict` on the same stream).
    let served = dir.join("served.jsonl");
    let p = flowboost(&[
        "predict",
        "--model",
        offline_s,
        "--generator",
        "binary",
        "--examples",
        "1",
        "--seed",
        "9",
        "--output",
        served.to_str().unwrap(),
    ]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&served)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let job_first = predictions
        .iter()
        .find(|v| v["id"] == first["id"])
        .expect("the first event's prediction");
    // A binary booster's prediction record carries its one margin as `score`.
    assert_eq!(
        job_first["score"], first["scores"][0],
        "{job_first} vs {first}"
    );
    assert_eq!(job_first["expert"], first["expert"]);
    // Everything was committed before the save: a restart reads nothing again.
    let again = Cli::job(&b, &events, &sink)
        .opt("--group", &group)
        .opt("--generator", "binary")
        .opt("--load-model", saved.display())
        .opt("--exit-when-idle", 1)
        .summary();
    assert_eq!(again["events_in"], 0, "{again}");
}

/// An idle job pauses fetching (`--idle-pause-ms`) and, paused, still takes every record
/// produced after a quiet spell, twice over: nothing skipped, nothing read twice.
#[test]
fn an_idle_job_pauses_and_takes_every_record_produced_after_a_quiet_spell() {
    let b = brokers();
    let events = create(&b, "fb-pause-events", 2);
    let sink = create(&b, "fb-pause-pred", 1);
    let job = Cli::job(&b, &events, &sink)
        .opt("--group", unique_name("g"))
        .opt("--start", "earliest")
        .opt("--generator", "binary")
        .opt("--learners", 4)
        .opt("--workers", 2)
        .opt("--idle-pause-ms", 200)
        .opt("--exit-when-idle", 5)
        .spawn();
    for seed in ["1", "2"] {
        // Quiet long enough for both workers to pause.
        std::thread::sleep(Duration::from_millis(1500));
        let produced = Cli::produce(&b, &events)
            .opt("--generator", "binary")
            .opt("--examples", 300)
            .opt("--seed", seed)
            .summary();
        assert_eq!(produced["events"], 300);
    }
    let out = job.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = last_json(&out);
    assert_eq!(summary["events_in"], 600, "{summary}");
    assert_eq!(summary["predictions"], 600, "{summary}");
    assert_eq!(read_values(&b, &sink, 600).len(), 600);
}

#[test]
fn kafka_read_with_a_closed_stdout_is_an_error_not_a_panic() {
    let b = brokers();
    let topic = create(&b, "fb-closed-stdout", 1);
    Cli::produce(&b, &topic).opt("--examples", 20).summary();
    let mut child = Cli::read(&b, &topic).opt("--expect", 20).spawn();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("stdout") && stderr.contains("pipe"),
        "{stderr}"
    );
}

/// A record too large for a whole dead letter (its base64 and text would pass the
/// producer's 1,000,000-byte limit) never stops the job: the dead letter keeps the bytes
/// whole without the text when they fit, else their first bytes with the full size and a
/// SHA-256.
#[test]
fn records_too_large_for_a_whole_dead_letter_are_cut_and_never_stop_the_job() {
    let b = brokers();
    let events = create(&b, "fb-bigdead-events", 1);
    let sink = create(&b, "fb-bigdead-pred", 1);
    let dead = create(&b, "fb-bigdead-dead", 1);
    Cli::produce(&b, &events)
        .opt("--generator", "binary")
        .opt("--examples", 50)
        .summary();
    let text = vec![b'x'; 600_000];
    let bytes: Vec<u8> = (0..900_000u32).map(|i| (i % 251) as u8).collect();
    let mut producer =
        flowboost::connectors::kafka::KafkaSink::new(&KafkaConfig::new(b.clone()), &events)
            .unwrap();
    producer.send(Some(b"big-text"), &text).unwrap();
    producer.send(Some(b"big-bytes"), &bytes).unwrap();
    producer.flush(Duration::from_secs(30)).unwrap();
    let summary = Cli::job(&b, &events, &sink)
        .opt("--dead-letter", format!("kafka:{dead}"))
        .opt("--group", unique_name("g"))
        .opt("--start", "earliest")
        .opt("--exit-when-idle", 1.5)
        .opt("--generator", "binary")
        .summary();
    assert_eq!(summary["predictions"], 50, "{summary}");
    assert_eq!(summary["dead_letters"], 2, "{summary}");
    let letters: Vec<DeadLetterRecord> = read_values(&b, &dead, 2)
        .iter()
        .map(|v| DeadLetterRecord::parse(v.to_string().as_bytes()).unwrap())
        .collect();
    let (whole, cut) = (&letters[0], &letters[1]);
    assert_eq!(whole.payload().unwrap(), text);
    assert_eq!(whole.payload_text, None);
    assert!(!whole.payload_truncated);
    assert!(cut.payload_truncated);
    assert_eq!(cut.payload_size, 900_000);
    let kept = cut.payload().unwrap();
    assert!(kept.len() > 700_000 && kept[..] == bytes[..kept.len()]);
    assert_eq!(cut.payload_sha256.as_ref().map(String::len), Some(64));
}

/// A producer that follows the job's group (`kafka produce --follow-group`) keeps the
/// backlog bounded: it must wait for the job's commits, which therefore come while the
/// stream flows (not only at its end), and with `--delete-committed` the records the job
/// committed are deleted. Every event is still predicted once.
#[test]
fn a_producer_following_the_job_s_group_waits_for_its_commits_and_deletes_what_it_committed() {
    let b = brokers();
    let events = create(&b, "fb-follow-events", 2);
    // The output topic with a setting of its own (`kafka create-topic --config`).
    let sink = unique_name("fb-follow-pred");
    for (setting, ok) in [("retention.ms", false), ("retention.ms=3600000", true)] {
        let out = Cli::new(&["kafka", "create-topic", "--brokers", &b, "--topic", &sink])
            .opt("--partitions", 1)
            .opt("--config", setting)
            .output();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), ok, "{setting}: {err}");
        if !ok {
            assert!(err.contains("expected KEY=VALUE"), "{err}");
        }
    }
    let group = unique_name("g");
    let n = 12_000u64;
    let producer = Cli::produce(&b, &events)
        .opt("--generator", "binary")
        .opt("--examples", n)
        .opt("--follow-group", &group)
        .opt("--max-backlog", 1000)
        .args(&["--delete-committed"])
        .spawn();
    let summary = Cli::job(&b, &events, &sink)
        .opt("--group", &group)
        .opt("--start", "earliest")
        .opt("--generator", "binary")
        .opt("--learners", 2)
        .opt("--commit-interval-ms", 100)
        .opt("--exit-when-idle", 5)
        .summary();
    let out = producer.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let produced = last_json(&out);
    assert_eq!(produced["events"], n, "{produced}");
    assert!(
        produced["waited_for_group_seconds"].as_f64().unwrap() > 0.0,
        "the producer never waited for the job: {produced}"
    );
    assert_eq!(summary["events_in"], n, "{summary}");
    assert_eq!(summary["predictions"], n, "{summary}");
    assert!(summary["commits"].as_u64().unwrap() > 2, "{summary}");
    let ids: BTreeSet<u64> = read_values(&b, &sink, n)
        .iter()
        .map(|v| v["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len() as u64, n);
    // What the job committed is gone from the events topic: a reader from the start sees
    // at most the uncommitted tail.
    let read = Cli::read(&b, &events).opt("--idle", 2).summary();
    let left = read["records"].as_u64().unwrap();
    assert!(left < n / 2, "{left} of {n} records left after deletion");
    // The reader says how many were removed: with those it read, every offset.
    let removed = read["removed_before_read"].as_u64().unwrap();
    assert_eq!(left + removed, n, "{read}");
}

/// `kafka produce --rate` paces from the delivery of the first record: a new client takes
/// a while to connect and obtain its producer id, and the events stamped meanwhile would
/// otherwise leave as one burst. At 10,000 events/s the second event is due 0.1 ms after
/// the first, but it is stamped only once the first was delivered (milliseconds later).
#[test]
fn a_paced_producer_starts_its_clock_at_the_first_delivery() {
    let b = brokers();
    let topic = unique_name("fb-pace");
    let s = Cli::produce(&b, &topic)
        .opt("--partitions", 1)
        .opt("--generator", "binary")
        .opt("--examples", 2)
        .opt("--rate", 10000)
        .summary();
    assert_eq!(s["events"], 2, "{s}");
    let read = Cli::read(&b, &topic)
        .opt("--expect", 2)
        .opt("--timeout", 60)
        .summary();
    let first = read["first_timestamp_ms"].as_i64().unwrap();
    let last = read["last_timestamp_ms"].as_i64().unwrap();
    assert!(
        last - first >= 2,
        "the second event was stamped {} ms after the first: {read}",
        last - first
    );
}

/// `kafka read --latency-from` matches records to events by key and leaves out a warm-up
/// given in events (`--latency-skip-events`) or seconds (`--latency-skip`).
#[test]
fn kafka_read_measures_latency_from_the_events_after_the_warm_up() {
    let b = brokers();
    let events = unique_name("fb-lat-events");
    let out = unique_name("fb-lat-out");
    // The same stream twice: the second topic's records carry the events' ids as keys,
    // stamped later, like a job's predictions.
    for topic in [&events, &out] {
        let produced = Cli::produce(&b, topic)
            .opt("--partitions", 1)
            .opt("--generator", "binary")
            .opt("--examples", 10)
            .opt("--rate", 200)
            .summary();
        assert_eq!(produced["events"], 10);
    }
    let read = |extra: &[&str]| {
        Cli::read(&b, &out)
            .opt("--expect", 10)
            .opt("--latency-from", &events)
            .args(extra)
            .summary()["latency_ms"]
            .clone()
    };
    let all = read(&[]);
    assert_eq!(
        (all["matched"].as_u64(), all["skipped"].as_u64()),
        (Some(10), Some(0)),
        "{all}"
    );
    assert!(all["p50"].as_f64().unwrap() > 0.0, "{all}");
    // Events 5 ms apart: exactly the first three are left out.
    let warm = read(&["--latency-skip-events", "3"]);
    assert_eq!(
        (warm["matched"].as_u64(), warm["skipped"].as_u64()),
        (Some(7), Some(3)),
        "{warm}"
    );
    // The series: one line per measured event, in the order of the events' timestamps
    // (ties, two events stamped in the same millisecond on a loaded machine, by key).
    let dir = temp_dir(&unique_name("lat"));
    let file = dir.join("latency.jsonl");
    let with_series = read(&[
        "--latency-skip-events",
        "3",
        "--latency-output",
        file.to_str().unwrap(),
    ]);
    let lines = json_lines(&file);
    assert_eq!(lines.len(), 7, "{lines:?}");
    let mut latencies: Vec<f64> = Vec::new();
    for pair in lines.windows(2) {
        let order = |l: &serde_json::Value| {
            (
                l["produced_ms"].as_i64(),
                l["key"].as_str().map(str::to_owned),
            )
        };
        assert!(order(&pair[0]) < order(&pair[1]), "{pair:?}");
    }
    for l in &lines {
        assert!(l["key"].as_str().is_some_and(|k| !k.is_empty()), "{l}");
        latencies.push(l["latency_ms"].as_f64().unwrap());
    }
    latencies.sort_by(f64::total_cmp);
    assert_eq!(
        Some(latencies[6]),
        with_series["max"].as_f64(),
        "{with_series}"
    );
    let _ = std::fs::remove_dir_all(dir);
    let everything = read(&["--latency-skip-events", "11"]);
    assert_eq!(everything["matched"], 0, "{everything}");
    assert_eq!(everything["skipped"], 10, "{everything}");
}

/// The job measures each prediction's latency (from its event record's timestamp to the
/// prediction handed to the producer, which stamps the prediction record then) as
/// `kafka read --latency-from` does from the two records' timestamps.
#[test]
fn the_job_s_latency_is_the_records_timestamps_difference() {
    let b = brokers();
    let events = unique_name("fb-joblat-events");
    let sink = create(&b, "fb-joblat-pred", 1);
    let produced = Cli::produce(&b, &events)
        .opt("--generator", "binary")
        .opt("--examples", 600)
        .opt("--rate", 2000)
        .summary();
    assert_eq!(produced["events"], 600);
    let summary = Cli::job(&b, &events, &sink)
        .opt("--group", unique_name("g"))
        .opt("--start", "earliest")
        .opt("--exit-when-idle", 1.5)
        .opt("--generator", "binary")
        .opt("--learners", 3)
        .summary();
    let job = &summary["latency_ms"];
    let read = Cli::read(&b, &sink)
        .opt("--expect", 600)
        .opt("--latency-from", &events)
        .summary()["latency_ms"]
        .clone();
    assert_eq!(job["count"], 600, "{summary}");
    assert_eq!(read["matched"], 600, "{read}");
    // The job reads its clock just before it hands an epoch's predictions over: never
    // later than the producer stamps them (whole milliseconds both), and only later by
    // the time a loaded machine takes to hand them over.
    for q in ["p50", "p99", "max"] {
        let (j, r) = (job[q].as_f64().unwrap(), read[q].as_f64().unwrap());
        assert!(
            j <= r + 1.0 && r <= j + 1000.0,
            "{q}: job {job}, kafka read {read}"
        );
    }
    // A backlog: every event waited for the job to start.
    assert!(job["p50"].as_f64().unwrap() > 0.0, "{job}");
}
