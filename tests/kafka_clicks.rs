//! The click simulator's log through Kafka, against the real broker of `scripts/kafka.sh`:
//! `kafka produce --generator clicks` writes the impressions and their clicks on two
//! topics, the job learns them with the click window (`run --click-window`) on 1 and on 2
//! workers; the predictions are identical, and the join's counts are what the simulator's
//! log implies (computed here from the generator itself): every clicked impression joined,
//! every other one learned as "no click", click records beyond an impression's first
//! merged into it (counted as repeated), nothing late with a window that covers the
//! backlog. With `--merge-order timestamps` (the records' timestamps are the simulated
//! clock) a short window suffices: the clicks come where they happened, and the join's
//! counts, late clicks included, are those the simulator's log implies with the window
//! measured on that clock; the offsets order, on the same log and window, loses most.

mod common;

use common::kafka::{Cli, brokers, create, read_lines};
use flowboost::connectors::generators::clicks::{ClickSimConfig, ClickSimulator};
use flowboost::connectors::kafka::testing::unique_name;
use std::collections::{BTreeMap, BTreeSet};

const N: u64 = 1500;
const DELAY: f64 = 5.0;

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
    let produced = Cli::produce(&b, &events)
        .opt("--feedback-topic", &clicks_topic)
        .opt("--generator", "clicks")
        .opt("--impressions", N)
        .opt("--click-delay", DELAY)
        .opt("--seed", 7)
        .summary();
    let (clicked, clicks, records) = expected();
    assert!(clicked > 50 && records > clicked, "{clicked} {records}");
    assert_eq!(produced["impressions"], N);
    assert_eq!(produced["clicked_impressions"], clicked);
    assert_eq!(produced["clicks"], clicks);
    assert_eq!(produced["feedback"], records);

    let mut runs = Vec::new();
    for workers in [1, 2] {
        // The window covers the backlog: on a backlog, the offset-block merge puts the
        // sparse click topic ahead of its impressions (docs/kafka.md).
        let (predictions, summary) = click_job(
            &b,
            &events,
            &clicks_topic,
            N,
            workers,
            &["--batch", "32", "--pending-ttl", &N.to_string()],
        );
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
        runs.push((predictions, summary));
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

const TIMED_N: u64 = 3000;
const TIMED_DELAY: f64 = 20.0;
const TIMED_SEED: u64 = 11;
const TIMED_BATCH: u64 = 32;
/// A window of a few hundred events: 4 epochs of 32 inputs (events and clicks).
const TIMED_TTL: u64 = 100;

/// The join's counts the simulator's log implies when the merge follows its clock (one
/// impression per millisecond, `--merge-block-ms 1`, one clicks partition): the sequence
/// is impression `i`, then the click records due after it (in impression order), in
/// epochs of `TIMED_BATCH` inputs; a record is late when its epoch is more than the
/// window (`ceil(ttl / batch)` epochs) after its impression's. Returns (clicked
/// impressions, click records, joined, repeated, late).
fn timed_expectation() -> (u64, u64, u64, u64, u64) {
    let mut config = ClickSimConfig::new(TIMED_N, TIMED_SEED);
    config.click_delay = TIMED_DELAY;
    // (due after impression, 1 = a click record, impression, its record index) for the
    // records; (i, 0, i, 0) for impression i.
    let mut seq: Vec<(u64, u8, u64, usize)> = Vec::new();
    let mut clicked = 0;
    for (i, imp) in ClickSimulator::new(config).unwrap().enumerate() {
        let i = i as u64;
        seq.push((i, 0, i, 0));
        let delays: BTreeSet<u64> = imp
            .impression
            .slots
            .iter()
            .filter(|s| s.click)
            .map(|s| s.delay.unwrap())
            .collect();
        clicked += u64::from(!delays.is_empty());
        for (n, d) in delays.into_iter().enumerate() {
            seq.push((i + d, 1, i, n));
        }
    }
    seq.sort_unstable();
    let window = TIMED_TTL.div_ceil(TIMED_BATCH);
    let mut impression_epoch = BTreeMap::new();
    let mut on_time: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut records, mut late) = (0, 0);
    for (pos, &(_, kind, i, _)) in seq.iter().enumerate() {
        let epoch = pos as u64 / TIMED_BATCH;
        if kind == 0 {
            impression_epoch.insert(i, epoch);
            continue;
        }
        records += 1;
        if epoch > impression_epoch[&i] + window {
            late += 1;
        } else {
            *on_time.entry(i).or_default() += 1;
        }
    }
    let joined = on_time.len() as u64;
    let repeated = on_time.values().sum::<u64>() - joined;
    (clicked, records, joined, repeated, late)
}

/// The job on a click log (`n` impressions on `events`, their clicks on `clicks`): Top-k
/// BBM over 3 linear learners with the click window, `workers` workers, until idle, with
/// `extra` options; its `n` predictions and its summary.
fn click_job(
    b: &str,
    events: &str,
    clicks: &str,
    n: u64,
    workers: usize,
    extra: &[&str],
) -> (Vec<String>, serde_json::Value) {
    let sink = create(b, "fb-clicks-pred", 1);
    let summary = Cli::job(b, events, &sink)
        .opt("--feedback", format!("kafka:{clicks}"))
        .opt("--group", unique_name("g"))
        .opt("--start", "earliest")
        .opt("--exit-when-idle", 2)
        .opt("--generator", "clicks")
        .opt("--algo", "topk-bbm")
        .opt("--weak", "linear")
        .opt("--learners", 3)
        .opt("--k", 3)
        .args(&["--click-window"])
        .opt("--workers", workers)
        .args(extra)
        .summary();
    (read_lines(b, &sink, n), summary)
}

/// The job on the timed click log with a short window, in the given merge order.
fn timed_run(
    b: &str,
    events: &str,
    clicks: &str,
    order: &str,
    workers: usize,
) -> (Vec<String>, serde_json::Value) {
    click_job(
        b,
        events,
        clicks,
        TIMED_N,
        workers,
        &[
            "--batch",
            &TIMED_BATCH.to_string(),
            "--pending-ttl",
            &TIMED_TTL.to_string(),
            "--merge-order",
            order,
            "--merge-block-ms",
            "1",
        ],
    )
}

#[test]
fn with_the_timestamp_order_a_short_click_window_joins_what_the_simulated_clock_allows() {
    let b = brokers();
    let events = create(&b, "fb-timed-imp", 2);
    let clicks_topic = create(&b, "fb-timed-clk", 1);
    let produced = Cli::produce(&b, &events)
        .opt("--feedback-topic", &clicks_topic)
        .opt("--generator", "clicks")
        .opt("--impressions", TIMED_N)
        .opt("--click-delay", TIMED_DELAY)
        .opt("--seed", TIMED_SEED)
        .summary();
    let (clicked, records, joined, repeated, late) = timed_expectation();
    assert_eq!(produced["clicked_impressions"], clicked);
    assert_eq!(produced["feedback"], records);
    // The window is short: some clicks come after it, most do not.
    assert!(
        late > 0 && joined > clicked * 9 / 10,
        "{joined} of {clicked}, {late} late"
    );

    let mut runs = Vec::new();
    for workers in [1, 2] {
        let (lines, summary) = timed_run(&b, &events, &clicks_topic, "timestamps", workers);
        assert_eq!(summary["events_in"], TIMED_N, "{summary}");
        assert_eq!(summary["feedback_in"], records, "{summary}");
        assert_eq!(summary["learned"], TIMED_N, "{summary}");
        assert_eq!(summary["dead_letters"], 0, "{summary}");
        let join = &summary["join"];
        assert_eq!(join["joined"], joined, "{summary}");
        assert_eq!(join["repeated"], repeated, "{summary}");
        assert_eq!(join["late"], late, "{summary}");
        assert_eq!(join["held"], 0, "{summary}");
        assert_eq!(join["waiting"], 0, "{summary}");
        assert_eq!(summary["no_click"], TIMED_N - joined, "{summary}");
        // Every record beyond an impression's first is counted as unmatched too.
        assert_eq!(summary["feedback_unmatched"], repeated + late, "{summary}");
        runs.push((lines, summary));
    }
    assert_eq!(runs[0].0.len() as u64, TIMED_N);
    if let Some(i) = (0..runs[0].0.len()).find(|&i| runs[0].0[i] != runs[1].0[i]) {
        panic!(
            "2 workers differ from 1 at prediction {i}:\n{}\n{}",
            runs[1].0[i], runs[0].0[i]
        );
    }
    // The offsets order, on the same log with the same window: the sparse click topic is
    // merged far ahead of its impressions, and most clicks find no impression in time.
    let (_, offsets) = timed_run(&b, &events, &clicks_topic, "offsets", 1);
    let joined_by_offsets = offsets["join"]["joined"].as_u64().unwrap();
    assert!(
        joined_by_offsets < joined / 2,
        "offsets: {joined_by_offsets} joined, timestamps: {joined}\n{offsets}"
    );
}
