//! The click simulator's log through Kafka, against the real broker of `scripts/kafka.sh`:
//! `kafka produce --generator clicks` writes the impressions and their clicks on two
//! topics, the job learns them with the click window (`run --click-window`) on 1 and on 2
//! workers; the predictions are identical, and the join's counts are what the simulator's
//! log implies (computed here from the generator itself): every clicked impression joined,
//! every other one learned as "no click", click records beyond an impression's first
//! merged into it (counted as repeated), nothing late with a window that covers the
//! backlog.

mod common;

use common::kafka::{brokers, create};
use common::{flowboost, last_json, temp_dir};
use flowboost::connectors::generators::clicks::{ClickSimConfig, ClickSimulator};
use flowboost::connectors::kafka::testing::unique_name;
use std::collections::BTreeSet;

const N: u64 = 1500;
const DELAY: f64 = 5.0;

/// Every value of a topic, in its order (one partition).
fn read_lines(brokers: &str, topic: &str, expect: u64) -> Vec<String> {
    let dir = temp_dir(&unique_name("read"));
    let file = dir.join("values.jsonl");
    last_json(&flowboost(&[
        "kafka",
        "read",
        "--brokers",
        brokers,
        "--topic",
        topic,
        "--expect",
        &expect.to_string(),
        "--timeout",
        "60",
        "--output",
        file.to_str().unwrap(),
    ]));
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// What the simulator's log implies: (clicked impressions, clicks, click records), a
/// record being the clicks of one impression that share a delay.
fn expected() -> (u64, u64, u64) {
    let mut config = ClickSimConfig::new(N, 7);
    config.click_delay = DELAY;
    let (mut clicked, mut clicks, mut records) = (0, 0, 0);
    for imp in ClickSimulator::new(config).unwrap() {
        let delays: BTreeSet<u64> = imp
            .impression
            .slots
            .iter()
            .filter(|s| s.click)
            .map(|s| s.delay.unwrap())
            .collect();
        let n = imp.impression.slots.iter().filter(|s| s.click).count() as u64;
        clicked += u64::from(n > 0);
        clicks += n;
        records += delays.len() as u64;
    }
    (clicked, clicks, records)
}

#[test]
fn a_simulated_click_log_is_learned_alike_on_1_and_2_workers_with_the_no_click_rule() {
    let b = brokers();
    let events = create(&b, "fb-clicks-imp", 2);
    let clicks_topic = create(&b, "fb-clicks-clk", 2);
    let produced = last_json(&flowboost(&[
        "kafka",
        "produce",
        "--brokers",
        &b,
        "--topic",
        &events,
        "--feedback-topic",
        &clicks_topic,
        "--generator",
        "clicks",
        "--impressions",
        &N.to_string(),
        "--click-delay",
        &DELAY.to_string(),
        "--seed",
        "7",
    ]));
    let (clicked, clicks, records) = expected();
    assert!(clicked > 50 && records > clicked, "{clicked} {records}");
    assert_eq!(produced["impressions"], N);
    assert_eq!(produced["clicked_impressions"], clicked);
    assert_eq!(produced["clicks"], clicks);
    assert_eq!(produced["feedback"], records);

    let mut runs = Vec::new();
    for workers in [1, 2] {
        let sink = create(&b, "fb-clicks-pred", 1);
        let out = flowboost(&[
            "run",
            "--brokers",
            &b,
            "--source",
            &format!("kafka:{events}"),
            "--feedback",
            &format!("kafka:{clicks_topic}"),
            "--sink",
            &format!("kafka:{sink}"),
            "--group",
            &unique_name("g"),
            "--start",
            "earliest",
            "--exit-when-idle",
            "2",
            "--report-interval",
            "0",
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
            "--batch",
            "32",
            "--click-window",
            // The window covers the backlog: on a backlog, the offset-block merge puts
            // the sparse click topic ahead of its impressions (docs/kafka.md).
            "--pending-ttl",
            &N.to_string(),
            "--workers",
            &workers.to_string(),
            "--kafka-set",
            "queued.min.messages=1",
        ]);
        let summary = last_json(&out);
        assert_eq!(summary["events_in"], N, "{summary}");
        assert_eq!(summary["feedback_in"], records, "{summary}");
        // Every impression is learned: from its clicks, or as no click.
        assert_eq!(summary["learned"], N, "{summary}");
        assert_eq!(summary["feedback_joined"], clicked, "{summary}");
        assert_eq!(summary["no_click"], N - clicked, "{summary}");
        assert_eq!(summary["feedback_expired"], 0, "{summary}");
        let join = &summary["join"];
        assert_eq!(join["joined"], clicked, "{summary}");
        assert_eq!(join["repeated"], records - clicked, "{summary}");
        assert_eq!(join["late"], 0, "{summary}");
        assert_eq!(join["waiting"], 0, "{summary}");
        assert_eq!(join["held"], 0, "{summary}");
        runs.push((read_lines(&b, &sink, N), summary));
    }
    assert_eq!(runs[0].0.len() as u64, N);
    if let Some(i) = (0..runs[0].0.len()).find(|&i| runs[0].0[i] != runs[1].0[i]) {
        panic!(
            "2 workers differ from 1 at prediction {i}:\n{}\n{}",
            runs[1].0[i], runs[0].0[i]
        );
    }
    assert_eq!(runs[0].1["join"], runs[1].1["join"]);
    // The model learned: the last predictions' model version counts the learning passes.
    let last: serde_json::Value = serde_json::from_str(runs[0].0.last().unwrap()).unwrap();
    assert!(last["model_version"].as_u64().unwrap() > 0, "{last}");
}
