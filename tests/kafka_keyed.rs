//! One model per key (`run --keys`) against the real broker of `scripts/kafka.sh`: each
//! key's predictions, byte for byte (less the `"key"` field), and its counters are those
//! of a job that serves that key alone, on 1 and 2 workers and on 2 processes x 2 workers;
//! events of keys the job does not serve are dead letters; a model file without keys warm
//! starts every key.

mod common;

use common::kafka::{Cli, brokers, create, read_lines};
use common::{flowboost, free_ports, last_json};
use flowboost::connectors::kafka::testing::unique_name;
use serde_json::Value;
use std::collections::BTreeMap;

const KEYS: [&str; 3] = ["all", "men", "women"];

/// The simulated clock's start: the current hour (the broker drops records older than a
/// topic's retention), so that every producer of a test stamps alike.
fn timestamp_base() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    (now - now % 3_600_000).to_string()
}

/// `kafka produce` of the multiclass generator with keys (`--only-key`: that key's events
/// alone, each with its timestamp in the whole stream); returns the number of events.
fn produce(b: &str, topic: &str, n: u64, only: Option<&str>) -> u64 {
    let mut cli = Cli::produce(b, topic)
        .opt("--partitions", 3)
        .opt("--generator", "multiclass")
        .opt("--examples", n)
        .opt("--seed", 5)
        .opt("--keys", KEYS.join(","))
        .opt("--timestamp-base", timestamp_base());
    if let Some(k) = only {
        cli = cli.opt("--only-key", k);
    }
    cli.summary()["events"].as_u64().unwrap()
}

/// The multiclass model of the first test.
const MULTICLASS: [&str; 8] = [
    "--generator",
    "multiclass",
    "--algo",
    "adaboost-olm",
    "--learners",
    "4",
    "--batch",
    "16",
];

/// The job on `topic` with the model options `model` (merged by the records' timestamps,
/// so that the order of one key's events does not depend on the others'); returns its
/// predictions (`expect` of them; `None`: as many as it read events) and its summary.
fn job(
    b: &str,
    topic: &str,
    model: &[&str],
    workers: usize,
    extra: &[&str],
    expect: Option<u64>,
) -> (Vec<String>, Value) {
    let sink = create(b, "fb-keyed-pred", 1);
    let summary = Cli::job(b, topic, &sink)
        .opt("--group", unique_name("g"))
        .opt("--start", "earliest")
        .opt("--exit-when-idle", 2)
        .opt("--merge-order", "timestamps")
        .opt("--merge-block-ms", 1)
        .opt("--workers", workers)
        .args(model)
        .args(extra)
        .summary();
    let expect = expect.unwrap_or_else(|| summary["events_in"].as_u64().unwrap());
    (read_lines(b, &sink, expect), summary)
}

/// The predictions of a keyed job, by key, each without its `"key"` field (which must
/// follow the id).
fn by_key(lines: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in lines {
        let v: Value = serde_json::from_str(line).unwrap();
        let key = v["key"]
            .as_str()
            .unwrap_or_else(|| panic!("no key: {line}"));
        let field = format!(",\"key\":{}", serde_json::to_string(key).unwrap());
        assert!(line.contains(&field), "{line}");
        out.entry(key.to_string())
            .or_default()
            .push(line.replacen(&field, "", 1));
    }
    out
}

#[test]
fn each_key_s_model_predicts_as_a_job_on_that_key_s_events_alone() {
    let b = brokers();
    let n = 1200;
    let all = create(&b, "fb-keyed-all", 3);
    assert_eq!(produce(&b, &all, n, None), n);
    // Each key alone: its own topic, its events only (same ids, same timestamps).
    let mut solo = BTreeMap::new();
    for key in KEYS {
        let topic = create(&b, "fb-keyed-solo", 3);
        let count = produce(&b, &topic, n, Some(key));
        assert!(count > n / 5, "{key}: {count}");
        let (predictions, summary) = job(&b, &topic, &MULTICLASS, 1, &[], Some(count));
        assert_eq!(summary["events_in"], count, "{summary}");
        assert!(predictions.iter().all(|l| !l.contains("\"key\"")));
        solo.insert(key.to_string(), (predictions, summary));
    }
    let keys = KEYS.join(",");
    let port = free_ports(2).to_string();
    for (workers, processes) in [(1, 1), (2, 1), (2, 2)] {
        let mut extra = vec!["--keys", keys.as_str()];
        let p = processes.to_string();
        if processes > 1 {
            extra.extend(["--local-cluster", &p, "--local-base-port", &port]);
        }
        let (predictions, summary) = job(&b, &all, &MULTICLASS, workers, &extra, Some(n));
        assert_eq!(summary["processes"], processes, "{summary}");
        assert_eq!(summary["events_in"], n, "{summary}");
        assert_eq!(summary["dead_letters"], 0, "{summary}");
        let got = by_key(&predictions);
        for (key, (want, alone)) in &solo {
            let mine = &got[key];
            assert_eq!(mine.len(), want.len(), "{key} on {workers}x{processes}");
            if let Some(i) = (0..want.len()).find(|&i| mine[i] != want[i]) {
                panic!(
                    "key {key} on {workers} workers x {processes} processes differs from its solo run at its prediction {i}:\n{}\n{}",
                    mine[i], want[i]
                );
            }
            let k = &summary["keys"][key];
            assert_eq!(k["predictions"], alone["events_in"], "{summary}");
            assert_eq!(k["scored"], alone["events_in"], "{summary}");
            assert_eq!(
                k["progressive_loss"], alone["progressive_loss"],
                "{key}: {summary}"
            );
        }
    }
    // A job that serves two of the keys: the third's events are dead letters (and keep
    // their places); the two keys' predictions do not change, whatever the keys' order.
    let (predictions, summary) = job(
        &b,
        &all,
        &MULTICLASS,
        2,
        &["--keys", "women,men"],
        Some(n - solo["all"].0.len() as u64),
    );
    let dead = solo["all"].0.len() as u64;
    assert_eq!(
        summary["dead_letters_by_reason"]["unknown_key"], dead,
        "{summary}"
    );
    assert_eq!(summary["events_in"], n - dead, "{summary}");
    let got = by_key(&predictions);
    assert!(!got.contains_key("all"));
    for key in ["men", "women"] {
        assert_eq!(got[key], solo[key].0, "{key}");
    }
}

/// The click simulator's log with keys, learned with the click window: clicks are not
/// keyed (their impression is), and a job serving one key on the same two topics is the
/// reference (each key's model must not see the other keys' events or clicks).
#[test]
fn keyed_click_models_learn_as_a_job_serving_one_key_on_the_same_topics() {
    let b = brokers();
    let events = create(&b, "fb-keyed-imp", 2);
    let clicks = create(&b, "fb-keyed-clk", 2);
    let n = 1500u64;
    let produced = Cli::produce(&b, &events)
        .opt("--feedback-topic", &clicks)
        .opt("--generator", "clicks")
        .opt("--impressions", n)
        .opt("--click-delay", 5)
        .opt("--seed", 3)
        .opt("--keys", "men,women")
        .opt("--timestamp-base", timestamp_base())
        .summary();
    assert_eq!(produced["impressions"], n);
    let feedback = format!("kafka:{clicks}");
    let model = [
        "--feedback",
        &feedback,
        "--generator",
        "clicks",
        "--algo",
        "topk-bbm",
        "--weak",
        "linear",
        "--learners",
        "3",
        "--k",
        "3",
        "--click-window",
        "--pending-ttl",
        "100",
        "--batch",
        "32",
    ];
    let run = |keys: &str, workers: usize, expect: Option<u64>| {
        let (lines, summary) = job(&b, &events, &model, workers, &["--keys", keys], expect);
        (by_key(&lines), summary)
    };
    let (men, men_summary) = run("men", 1, None);
    let (women, _) = run("women", 1, None);
    let (m, w) = (men["men"].len() as u64, women["women"].len() as u64);
    assert_eq!(m + w, n);
    assert_eq!(men_summary["dead_letters_by_reason"]["unknown_key"], w);
    for workers in [1, 2] {
        let (both, summary) = run("men,women", workers, Some(n));
        assert_eq!(summary["dead_letters"], 0, "{summary}");
        assert_eq!(summary["learned"], n, "every impression learned: {summary}");
        assert_eq!(both["men"], men["men"], "men on {workers} workers");
        assert_eq!(both["women"], women["women"], "women on {workers} workers");
        assert_eq!(summary["keys"]["men"]["predictions"], m, "{summary}");
    }
    // The model learned: the last prediction's model version counts learning passes.
    let last: Value = serde_json::from_str(men["men"].last().unwrap()).unwrap();
    assert!(last["model_version"].as_u64().unwrap() > 0, "{last}");
}

/// `--load-model` of a file without keys into a keyed job: every key starts from that
/// model (a warm start, not a stream to continue), so each key's predictions are those of a
/// job serving that key alone that loads the same file, and not those of a fresh start.
#[test]
fn a_model_without_keys_warm_starts_every_key_of_a_keyed_job() {
    let b = brokers();
    let n = 900;
    let file = common::temp_dir(&unique_name("warm")).join("warm.fbm");
    let file_arg = file.to_str().unwrap();
    // The warm model: the same model options on another stream of the generator.
    flowboost(&[
        "eval",
        "--generator",
        "multiclass",
        "--examples",
        "600",
        "--seed",
        "9",
        "--algo",
        "adaboost-olm",
        "--learners",
        "4",
        "--save-model",
        file_arg,
    ]);
    let inspect = last_json(&flowboost(&["inspect", file_arg, "--json"]));
    assert!(
        inspect["keys"].as_array().is_none_or(|k| k.is_empty()),
        "{inspect}"
    );
    let all = create(&b, "fb-keyed-warm", 3);
    assert_eq!(produce(&b, &all, n, None), n);
    let keys = KEYS.join(",");
    let load = ["--load-model", file_arg];
    let (predictions, summary) = job(
        &b,
        &all,
        &MULTICLASS,
        2,
        &["--keys", &keys, "--load-model", file_arg],
        Some(n),
    );
    assert_eq!(summary["events_in"], n, "{summary}");
    let got = by_key(&predictions);
    let mut differs_from_fresh = 0;
    for key in KEYS {
        let topic = create(&b, "fb-keyed-warm-solo", 3);
        let count = produce(&b, &topic, n, Some(key));
        let (warm, _) = job(&b, &topic, &MULTICLASS, 1, &load, Some(count));
        assert_eq!(
            got[key], warm,
            "{key}: the keyed job's model is not the warm one"
        );
        let (fresh, _) = job(&b, &topic, &MULTICLASS, 1, &[], Some(count));
        differs_from_fresh += usize::from(fresh != warm);
    }
    assert_eq!(differs_from_fresh, KEYS.len(), "the file changed nothing");
}
