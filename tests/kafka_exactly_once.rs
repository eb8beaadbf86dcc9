//! Exactly once across crashes, through the binary against the real broker of
//! `scripts/kafka.sh` (scripts/test.sh starts it and exports FLOWBOOST_KAFKA_BROKERS): a
//! replay of 20,000 events, a fifth of them unlabeled with their labels 300 events later
//! on the feedback topic, is run once without a crash and once killed (SIGKILL, or an
//! abort on purpose at a chosen point) five times and restarted each time from its
//! checkpoints. A read_committed consumer must then see exactly one prediction per event,
//! equal to the uninterrupted run's; the model saved at the end must be byte-identical;
//! every label must be joined as in the uninterrupted run. The same with 2 processes x 2
//! threads, killing one process.

mod common;

use common::kafka::{Cli, brokers, create};
use common::{flowboost, free_ports, last_json, temp_dir};
use flowboost::connectors::kafka::testing::unique_name;
use flowboost::model::{ModelHeader, read_header};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

const EVENTS: u64 = 20_000;
const UNLABELED: u64 = EVENTS / 5;
/// `--checkpoint-every`: short enough that a job reaches its second checkpoint (where the
/// faults of the first rounds strike) long before the stream's end, even when a warm
/// broker hands out the whole backlog in a fraction of a second (at 0.2 s, the first
/// checkpoint was often the end's already, and the next round read nothing).
const CHECKPOINT_EVERY: f64 = 0.02;

/// The replay: events on 4 partitions, every 5th unlabeled, its label 300 events later on
/// the feedback topic.
struct Replay {
    brokers: String,
    events: String,
    feedback: String,
}

impl Replay {
    fn produce() -> Replay {
        Replay::produce_with(&[])
    }

    /// The replay, with more `kafka produce` options.
    fn produce_with(extra: &[&str]) -> Replay {
        let brokers = brokers();
        let events = create(&brokers, "fb-eo-events", 4);
        let feedback = create(&brokers, "fb-eo-feedback", 4);
        let produced = Cli::produce(&brokers, &events)
            .opt("--generator", "binary")
            .opt("--examples", EVENTS)
            .opt("--unlabeled-every", 5)
            .opt("--feedback-topic", &feedback)
            .opt("--feedback-delay", 300)
            .args(extra)
            .summary();
        assert_eq!(produced["events"], EVENTS);
        assert_eq!(produced["unlabeled"], UNLABELED);
        Replay {
            brokers,
            events,
            feedback,
        }
    }
}

/// One job: its sink, group, checkpoint directory and final model file, and how it is
/// deployed (`processes` processes of 2 threads on loopback).
struct Job<'a> {
    replay: &'a Replay,
    sink: String,
    group: String,
    dir: PathBuf,
    model: PathBuf,
    processes: usize,
    hostfile: Option<PathBuf>,
    transactions: bool,
    /// `--merge-order`.
    order: &'static str,
    /// `--keys` (one model per key), if any.
    keys: Option<&'static str>,
}

impl<'a> Job<'a> {
    fn new(replay: &'a Replay, name: &str, processes: usize) -> Job<'a> {
        let dir = temp_dir(&unique_name(name));
        let hostfile = (processes > 1).then(|| {
            let port = free_ports(processes as u16);
            let hosts = dir.join("hosts");
            let lines: String = (0..processes)
                .map(|i| format!("127.0.0.1:{}\n", port + i as u16))
                .collect();
            std::fs::write(&hosts, lines).unwrap();
            hosts
        });
        Job {
            replay,
            sink: create(&replay.brokers, "fb-eo-pred", 2),
            group: unique_name("fb-eo-group"),
            model: dir.join("final.fbm"),
            dir: dir.join("checkpoints"),
            processes,
            hostfile,
            transactions: true,
            order: "offsets",
            keys: None,
        }
    }

    fn cli(&self, process: usize) -> Cli {
        let r = self.replay;
        let mut cli = Cli::job(&r.brokers, &r.events, &self.sink)
            .opt("--feedback", format!("kafka:{}", r.feedback))
            .opt("--group", &self.group)
            .opt("--generator", "binary")
            .opt("--learners", 10)
            .opt("--workers", 2)
            .opt("--exit-when-idle", 2)
            .opt("--checkpoint-dir", self.dir.display())
            .opt("--checkpoint-every", CHECKPOINT_EVERY)
            .opt("--save-model", self.model.display());
        if !self.transactions {
            cli = cli.args(&["--no-transactions"]);
        }
        if self.order != "offsets" {
            // Blocks of 10 ms (about 10 events), shorter than the timestamps' jitter: a
            // record whose clamp were lost at a restart would change blocks.
            cli = cli
                .opt("--merge-order", self.order)
                .opt("--merge-block-ms", 10);
        }
        if let Some(keys) = self.keys {
            cli = cli.opt("--keys", keys);
        }
        if let Some(hosts) = &self.hostfile {
            cli = cli
                .opt("--processes", self.processes)
                .opt("--process", process)
                .opt("--hostfile", hosts.display());
        }
        cli
    }

    /// Starts every process (with `fault` in FLOWBOOST_FAULT), stderr to a file each.
    fn spawn(&self, fault: Option<&str>, round: usize) -> Vec<(Child, PathBuf)> {
        (0..self.processes)
            .map(|p| {
                let log = self.dir.with_file_name(format!("round{round}-p{p}.log"));
                let mut cmd = self.cli(p).command();
                cmd.stderr(std::fs::File::create(&log).unwrap());
                if let Some(f) = fault {
                    cmd.env("FLOWBOOST_FAULT", f);
                }
                (cmd.spawn().unwrap(), log)
            })
            .collect()
    }

    /// Runs to the end (every process exits 0); process 0's summary.
    fn finish(&self, round: usize) -> Value {
        let children = self.spawn(None, round);
        let mut summary = Value::Null;
        for (p, (child, log)) in children.into_iter().enumerate() {
            let out = child.wait_with_output().unwrap();
            let stderr = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(out.status.success(), "process {p} failed:\n{stderr}");
            if p == 0 {
                let stdout = String::from_utf8_lossy(&out.stdout);
                summary = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
                // A replay: every record placed by the data, none by its arrival.
                assert_eq!(summary["merge_late_records"], 0, "{summary}");
            }
        }
        summary
    }

    /// The checkpoint files now, with their headers.
    fn checkpoints(&self) -> BTreeMap<PathBuf, ModelHeader> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return BTreeMap::new();
        };
        entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "fbm"))
            .filter_map(|p| {
                let bytes = std::fs::read(&p).ok()?;
                let (header, _) = read_header(&bytes, &p.display().to_string()).ok()?;
                Some((p, header))
            })
            .collect()
    }

    /// One crash: with `fault`, every process runs until process 0 aborts at that point
    /// (the others then stop with an error); without, `victim` is killed with SIGKILL once
    /// a checkpoint newer than those present at the start was written (the others stop),
    /// except in a restart after the stream's end, whose processes may stop normally
    /// before the kill.
    ///
    /// A checkpoint is new when its file is (a checkpoint at the same cut as an older one,
    /// such as the end's snapshot taken again by a restart after the end, replaces it).
    fn crash(&self, round: usize, fault: Option<&str>, victim: usize) {
        let before = self.checkpoint_files();
        // A restart after the stream's end (on a fast machine the rounds before read the
        // whole stream) reads nothing and stops when idle, taking the end's snapshot again
        // as it stops: its processes may stop normally, in any order, before the kill.
        let after_end = fault.is_none() && self.newest_at_end();
        let mut children = self.spawn(fault, round);
        let start = Instant::now();
        if fault.is_none() {
            let fresh = |job: &Self| job.checkpoint_files().iter().any(|f| !before.contains(f));
            loop {
                if fresh(self) {
                    break;
                }
                for (p, (child, log)) in children.iter_mut().enumerate() {
                    if let Some(status) = child.try_wait().unwrap()
                        && !fresh(self)
                        && !(after_end && status.success())
                    {
                        let stderr = std::fs::read_to_string(log).unwrap_or_default();
                        panic!(
                            "round {round}: process {p} ended ({status}) before a new checkpoint:\n{stderr}"
                        );
                    }
                }
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "round {round}: no checkpoint within 60 s"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(150));
            let child = &mut children[victim].0;
            match child.try_wait().unwrap() {
                None => child.kill().unwrap(),
                Some(status) => {
                    // Only a restart after the stream's end may stop first.
                    assert!(
                        status.success() && after_end && self.newest_at_end(),
                        "round {round}: the job ended ({status}) before it could be killed"
                    );
                    for (p, (child, log)) in children.iter_mut().enumerate() {
                        let status = child.wait().unwrap();
                        let stderr = std::fs::read_to_string(log).unwrap_or_default();
                        assert!(status.success(), "round {round}: process {p}:\n{stderr}");
                    }
                    self.check_offsets();
                    return;
                }
            }
        }
        for (p, (child, log)) in children.iter_mut().enumerate() {
            let deadline = Instant::now() + Duration::from_secs(60);
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("round {round}: process {p} still runs 60 s after the crash");
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let stderr = std::fs::read_to_string(log).unwrap_or_default();
            // A process not killed may have stopped normally only in a restart after the
            // stream's end (the victim was then still saving the end's snapshot).
            assert!(
                !status.success() || (after_end && p != victim),
                "round {round}: process {p} ended normally:\n{stderr}"
            );
            if let Some(f) = fault
                && p == 0
            {
                assert!(
                    stderr.contains(&format!("FLOWBOOST_FAULT={f}: aborting on purpose")),
                    "round {round}: no abort at {f}:\n{stderr}"
                );
            }
        }
        self.check_offsets();
        // The crash left events waiting for their feedback in every checkpoint before the
        // end's.
        let left = self.checkpoints();
        assert!(!left.is_empty(), "round {round}: no checkpoint");
        for (path, header) in &left {
            assert!(
                header.pending > 0 || header.at_end,
                "round {round}: a checkpoint without pending feedback: {}",
                path.display()
            );
        }
    }

    /// The checkpoint that the directory's `committed` marker names.
    fn committed(&self) -> PathBuf {
        let name = std::fs::read_to_string(self.dir.join("committed")).unwrap();
        self.dir.join(name.trim_end())
    }

    /// Whether the newest checkpoint is the snapshot of the stream's end.
    fn newest_at_end(&self) -> bool {
        self.checkpoints()
            .into_values()
            .next_back()
            .is_some_and(|h| h.at_end)
    }

    /// The checkpoint files now, each with its last modification (a file replaced by a
    /// rename is new).
    fn checkpoint_files(&self) -> Vec<(PathBuf, std::time::SystemTime)> {
        self.checkpoints()
            .into_keys()
            .filter_map(|p| {
                let modified = std::fs::metadata(&p).ok()?.modified().ok()?;
                Some((p, modified))
            })
            .collect()
    }

    /// Every checkpoint names the offset of each of the 8 partitions (4 of events, 4 of
    /// feedback), with the merge's clamp per partition with the timestamp order and
    /// nothing more with the offsets order.
    fn check_offsets(&self) {
        for path in self.checkpoints().keys() {
            let bytes = std::fs::read(path).unwrap();
            let (header, _) = read_header(&bytes, "checkpoint").unwrap();
            assert_eq!(header.offsets.len(), 8, "{}", path.display());
            for o in &header.offsets {
                assert_eq!(
                    o.order_key.is_some(),
                    self.order == "timestamps",
                    "{}: {o:?}",
                    path.display()
                );
            }
        }
    }

    /// The predictions a read_committed consumer sees, by id (each id once).
    fn predictions(&self) -> BTreeMap<u64, String> {
        let mut by_id = BTreeMap::new();
        for (id, line) in self.all_predictions() {
            if let Some(old) = by_id.insert(id, line.clone()) {
                panic!("two predictions for event {id}:\n{old}\n{line}");
            }
        }
        by_id
    }

    /// Every prediction a read_committed consumer sees, in topic order per partition.
    fn all_predictions(&self) -> Vec<(u64, String)> {
        let file = self.dir.with_file_name("predictions.jsonl");
        let out = Cli::read(&self.replay.brokers, &self.sink)
            .opt("--isolation", "read_committed")
            .opt("--idle", 3)
            .opt("--output", file.display())
            .output();
        let summary = last_json(&out);
        assert_eq!(summary["isolation"], "read_committed");
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap();
                (v["id"].as_u64().unwrap(), line.to_string())
            })
            .collect()
    }
}

/// The uninterrupted run and a run crashed five times, compared.
fn crashed_equals_uninterrupted(processes: usize, victims: [usize; 3]) {
    crashed_equals_uninterrupted_in(processes, victims, "offsets");
}

/// [`crashed_equals_uninterrupted`] with a `--merge-order`.
fn crashed_equals_uninterrupted_in(processes: usize, victims: [usize; 3], order: &'static str) {
    let replay = if order == "timestamps" {
        // One event per millisecond from the last whole hour, each timestamp moved back
        // by up to 200 ms: timestamps go backwards within partitions, so the order depends
        // on the merge's clamp, which a restart must continue from its checkpoint.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let base = (now - now % 3_600_000).to_string();
        Replay::produce_with(&["--timestamp-base", &base, "--timestamp-jitter", "200"])
    } else {
        Replay::produce()
    };
    let mut reference = Job::new(&replay, "eo-reference", 1);
    reference.order = order;
    let whole = reference.finish(0);
    assert_eq!(whole["events_in"], EVENTS, "{whole}");
    assert_eq!(whole["feedback_joined"], UNLABELED, "{whole}");
    let expected = reference.predictions();
    assert_eq!(expected.len() as u64, EVENTS);

    let mut job = Job::new(&replay, "eo-crashed", processes);
    job.order = order;
    job.crash(1, Some("checkpoint-write:2"), 0);
    job.crash(2, Some("checkpoint-commit:2"), 0);
    // The crash came after the run's second checkpoint was written, before its commit:
    // the `committed` marker (what `serve --follow` serves) names the one before it.
    let newest = job.checkpoints().into_keys().next_back().unwrap();
    let marked = job.committed();
    assert!(marked.exists(), "{}", marked.display());
    assert!(marked < newest, "{} {}", marked.display(), newest.display());
    job.crash(3, None, victims[0]);
    job.crash(4, None, victims[1]);
    job.crash(5, None, victims[2]);
    let last = job.finish(6);
    assert_eq!(
        Some(job.committed()),
        job.checkpoints().into_keys().next_back()
    );
    // The join's counts continue from the checkpoint: over the whole stream, as in the
    // uninterrupted run.
    assert_eq!(last["join"], whole["join"], "{last}\n{whole}");
    assert_eq!(last["feedback_expired"], 0);
    assert_eq!(last["feedback_unmatched"], 0);
    assert_eq!(last["dead_letters"], 0);
    assert!(
        last["events_in"].as_u64().unwrap() < EVENTS,
        "the last run read everything again: {last}"
    );

    let got = job.predictions();
    assert_eq!(got.len() as u64, EVENTS, "events without a prediction");
    let differ: Vec<&u64> = expected
        .iter()
        .filter(|(id, line)| got.get(id) != Some(line))
        .map(|(id, _)| id)
        .take(5)
        .collect();
    assert!(
        differ.is_empty(),
        "predictions differ from the uninterrupted run's, e.g. {:?}: {:?} vs {:?}",
        differ,
        expected.get(differ[0]),
        got.get(differ[0])
    );
    let a = std::fs::read(&reference.model).unwrap();
    let b = std::fs::read(&job.model).unwrap();
    assert!(
        a == b,
        "the final models differ ({} and {} bytes)",
        a.len(),
        b.len()
    );

    // The saved model is the end's snapshot, and says so; its stages learned every
    // label, the feedback joined in the last epochs included.
    let (header, _) = read_header(&a, "final.fbm").unwrap();
    assert!(header.at_end);
    assert_eq!(header.position.learned, EVENTS, "{:?}", header.position);

    // A restart after the end (as when a crash came after the end's snapshot) reads
    // nothing, writes nothing, and takes the end's snapshot again: the same model, and a
    // checkpoint that still names every partition's offset.
    let again = job.finish(7);
    assert_eq!(again["events_in"], 0, "{again}");
    assert_eq!(again["join"], whole["join"], "{again}\n{whole}");
    assert_eq!(job.predictions(), got);
    job.check_offsets();
    assert!(
        a == std::fs::read(&job.model).unwrap(),
        "a restart after the end saved another model"
    );
    // And one that aborts after it saved the end again, before its commit: the next
    // restart ends the same way.
    job.crash(8, Some("checkpoint-commit:1"), 0);
    let last = job.finish(9);
    assert_eq!(last["events_in"], 0, "{last}");
    assert_eq!(job.predictions(), got);
    assert!(
        a == std::fs::read(&job.model).unwrap(),
        "a restart after a crash after the end saved another model"
    );
}

#[test]
fn a_job_killed_five_times_writes_each_prediction_once_and_ends_with_the_same_model() {
    crashed_equals_uninterrupted(1, [0, 0, 0]);
}

#[test]
fn with_the_timestamp_order_a_job_killed_five_times_is_exactly_once_too() {
    // The records' timestamps go backwards now and then within a partition: the merge
    // clamps them, and each restart continues its clamp from the checkpoint.
    crashed_equals_uninterrupted_in(1, [0, 0, 0], "timestamps");
}

#[test]
fn a_two_process_cluster_killed_five_times_is_exactly_once_too() {
    // Process 1 (which holds stage blocks and partitions but writes nothing) is killed
    // once, process 0 (the writer) otherwise.
    crashed_equals_uninterrupted(2, [1, 0, 1]);
}

/// One model per key: a keyed job (three keys on two workers) killed three times ends
/// as the uninterrupted keyed job does, prediction for prediction, with the same model
/// file (every key's chain) and the same per-key counters; the file names its keys and
/// loads only into a job with the same keys.
#[test]
fn a_keyed_job_killed_three_times_is_exactly_once_and_keeps_every_key_s_model() {
    const KEYS: &str = "all,men,women";
    let replay = Replay::produce_with(&["--keys", KEYS]);
    let mut reference = Job::new(&replay, "eo-keyed-reference", 1);
    reference.keys = Some(KEYS);
    let whole = reference.finish(0);
    assert_eq!(whole["events_in"], EVENTS, "{whole}");
    assert_eq!(whole["feedback_joined"], UNLABELED, "{whole}");
    let expected = reference.predictions();
    assert_eq!(expected.len() as u64, EVENTS);

    let mut job = Job::new(&replay, "eo-keyed", 1);
    job.keys = Some(KEYS);
    job.crash(1, Some("checkpoint-write:2"), 0);
    job.crash(2, Some("checkpoint-commit:2"), 0);
    job.crash(3, None, 0);
    let last = job.finish(4);
    assert_eq!(last["join"], whole["join"], "{last}\n{whole}");
    // Each key's counters continue from the checkpoint, over the whole stream.
    assert_eq!(last["keys"], whole["keys"], "{last}\n{whole}");
    assert!(
        last["events_in"].as_u64().unwrap() < EVENTS,
        "the last run read everything again: {last}"
    );
    let got = job.predictions();
    assert_eq!(got.len() as u64, EVENTS, "events without a prediction");
    for (id, line) in &expected {
        assert_eq!(got.get(id), Some(line), "event {id}");
    }
    let a = std::fs::read(&reference.model).unwrap();
    assert!(
        a == std::fs::read(&job.model).unwrap(),
        "the final keyed models differ"
    );
    // The file names its keys; each key's model learned its own events.
    let (header, _) = read_header(&a, "final.fbm").unwrap();
    assert_eq!(header.keys, ["all", "men", "women"]);
    let inspect = last_json(&flowboost(&[
        "inspect",
        job.model.to_str().unwrap(),
        "--json",
    ]));
    let keys = inspect["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 3, "{inspect}");
    let events: u64 = keys
        .iter()
        .map(|k| k["position"]["events"].as_u64().unwrap())
        .sum();
    assert_eq!(events, EVENTS, "{inspect}");
    for k in keys {
        let name = k["key"].as_str().unwrap();
        assert_eq!(
            k["position"]["events"], whole["keys"][name]["predictions"],
            "{inspect}"
        );
    }
    // It loads only into a job with the same keys, in the same order.
    let model = job.model.to_str().unwrap();
    for (keys, want) in [
        (None, "run the job with --keys all,men,women"),
        (
            Some("men,all,women"),
            "holds the models of the keys all,men,women",
        ),
    ] {
        let mut cli =
            Cli::job(&replay.brokers, "fb-eo-none", "fb-eo-none-out").opt("--load-model", model);
        if let Some(k) = keys {
            cli = cli.opt("--keys", k);
        }
        let out = cli.output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
    }
}

#[test]
fn without_transactions_a_crash_repeats_identical_outputs_and_a_damaged_checkpoint_is_skipped() {
    let replay = Replay::produce();
    let reference = Job::new(&replay, "eo-alo-reference", 1);
    reference.finish(0);
    let expected = reference.predictions();
    let mut job = Job::new(&replay, "eo-alo", 1);
    job.transactions = false;
    job.crash(1, None, 0);
    job.crash(2, None, 0);
    // Damage the newest checkpoint: the restart must say so and take the one before.
    let mut files: Vec<PathBuf> = job.checkpoints().into_keys().collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    let newest = files.last().unwrap().clone();
    let bytes = std::fs::read(&newest).unwrap();
    std::fs::write(&newest, &bytes[..bytes.len() / 3]).unwrap();
    let last = job.finish(3);
    let log = std::fs::read_to_string(job.dir.with_file_name("round3-p0.log")).unwrap();
    let name = newest.file_name().unwrap().to_str().unwrap();
    assert!(
        log.contains("skipping the checkpoint") && log.contains(name),
        "no warning naming {name}:\n{log}"
    );
    let previous = files[files.len() - 2]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        log.contains("resuming from the checkpoint") && log.contains(previous),
        "did not resume from {previous}:\n{log}"
    );
    assert_eq!(last["join"]["joined"], UNLABELED, "{last}");
    // At least once: every event predicted, some twice, every copy the uninterrupted
    // run's prediction.
    let all = job.all_predictions();
    assert!(
        all.len() as u64 > EVENTS,
        "no prediction was repeated: {}",
        all.len()
    );
    for (id, line) in &all {
        assert_eq!(Some(line), expected.get(id), "event {id}");
    }
    let ids: std::collections::BTreeSet<u64> = all.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len() as u64, EVENTS);
    assert_eq!(
        std::fs::read(&reference.model).unwrap(),
        std::fs::read(&job.model).unwrap(),
        "the final models differ"
    );
}
