//! The sink: on worker 0, every epoch's predictions and dead letters produced (never
//! waiting for the broker), and the offsets of every epoch whose outputs are all delivered
//! committed; at a checkpoint marker, the checkpoint written and (with a transactional
//! producer) the transaction of everything produced since the previous one committed with
//! the checkpoint's offsets; at the end, the model saved (`--save-model`).

use super::checkpoint::Checkpoints;
use super::merge::StreamId;
use super::metrics::{JobMetrics, KeyStats};
use super::record::SideRecord;
use super::worker_state::WorkerState;
use crate::eval::Scorer;
use crate::model::{ModelWriter, Progress, SavedModel, SourceOffset};
use flowboost_connectors::kafka::{
    CommitThread, DeadLetter, DeadLetterTopic, KafkaSink, OffsetCommitter, PredictionEncoder,
    PredictionOutput,
};
use flowboost_operators::boosters::BoosterConfig;
use flowboost_operators::data::Schema;
use flowboost_operators::dataflow::JoinPart;
use flowboost_operators::dataflow::{
    CountsTracker, JoinOutputs, SinkSideInputs, SnapshotAssembler,
};
use flowboost_operators::engine::feedback::JoinCounts;
use flowboost_operators::engine::{ChainOutput, Item, SourceState};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::scheduling::SyncActivator;

/// The sink's Kafka clients and settings (worker 0 only).
pub struct SinkClients {
    /// The producer: the predictions topic's, and the dead letters' (one producer, so
    /// that a transaction holds both).
    pub predictions: KafkaSink,
    /// The dead-letter topic, if any.
    pub dead_letters: Option<DeadLetterTopic>,
    /// The group's committer (a transactional producer's offsets name its group).
    pub committer: Arc<OffsetCommitter>,
    /// Commits the consumed offsets (without transactions) from a thread of its own.
    pub commits: CommitThread,
    /// The input topics' names, by stream id.
    pub topics: [String; 2],
    /// Encodes predictions.
    pub encoder: PredictionEncoder,
    /// Commits at most this often.
    pub commit_interval: Duration,
    /// The sink operator's activator, for the paced producer's `drained` callback (set
    /// when the operator is built).
    pub wake: Arc<OnceLock<SyncActivator>>,
}

/// What the sink knows about the model (for saving it).
pub struct SinkModel {
    /// Where to save at the end, if anywhere.
    pub writer: Option<ModelWriter>,
    /// Where to write checkpoints, if anywhere.
    pub checkpoints: Option<Checkpoints>,
    /// The model's configuration (for checkpoints).
    pub config: BoosterConfig,
    /// The stream's schema (for checkpoints).
    pub schema: Schema,
    /// Predictions a restored run's checkpoint had already made.
    pub seen: u64,
    /// The chain's number of stages.
    pub stages: usize,
    /// The score vector's size.
    pub score_dim: usize,
    /// A restored run's join counts.
    pub restored: JoinCounts,
    /// With one model per key: the keys (model `m` is the `m`-th).
    pub keys: Option<super::ModelKeys>,
    /// With one model per key: each key's predictions and metrics a restored run's
    /// checkpoint had already made (empty: none).
    pub key_progress: Vec<Progress>,
    /// The snapshot of a run's end this run resumed from, if it did: saved again as this
    /// run's end when nothing new comes ([`SideRecord::EndAgain`]).
    pub resumed_end: Option<Box<SavedModel>>,
}

/// The progressive loss a scorer's headline value stands for: 1 - accuracy for single-label
/// tasks, the value itself (rank loss) for multi-label ones; 0 before any score.
fn progressive_loss(scorer: &Scorer, headline: f64) -> f64 {
    if scorer.count() == 0 {
        0.0
    } else if matches!(scorer, Scorer::Single(_)) {
        1.0 - headline
    } else {
        headline
    }
}

/// The commit marks of the epochs whose outputs are all handed to the producer, oldest
/// first, each committable once the producer delivered that many records. Keeping them all
/// (not only the latest) matters under a steady stream: when the latest epoch's outputs
/// are delivered, the next epoch's are already in flight, so a sink that only remembered
/// the latest mark would commit only when the stream pauses.
#[derive(Default)]
struct CommitMarks {
    marks: VecDeque<PendingCommit>,
}

/// Offsets that can be committed once the producer has delivered so many records.
struct PendingCommit {
    offsets: Vec<(StreamId, i32, i64)>,
    produced: u64,
}

impl CommitMarks {
    /// The marks of an epoch whose outputs make `produced` records in all.
    fn push(&mut self, offsets: Vec<(StreamId, i32, i64)>, produced: u64) {
        // A later mark at the same count covers an earlier one.
        if self.marks.back().is_some_and(|m| m.produced == produced) {
            self.marks.pop_back();
        }
        self.marks.push_back(PendingCommit { offsets, produced });
    }

    /// The newest marks whose outputs are all delivered (`delivered` records), and the
    /// older ones dropped.
    fn ready(&mut self, delivered: u64) -> Option<Vec<(StreamId, i32, i64)>> {
        let mut ready = None;
        while self.marks.front().is_some_and(|m| delivered >= m.produced) {
            ready = self.marks.pop_front().map(|m| m.offsets);
        }
        ready
    }

    fn clear(&mut self) {
        self.marks.clear();
    }

    fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }
}

/// What the sink reports when the job ends.
#[derive(Debug, Default)]
pub struct SinkEnd {
    /// When it first produced and last delivered.
    pub busy: Option<(Instant, Instant)>,
}

/// Builds the sink (it exists on every worker; only worker 0 has clients).
#[allow(clippy::too_many_arguments)]
pub fn kafka_sink<'scope>(
    outputs: Stream<'scope, u64, Vec<ChainOutput>>,
    side: Stream<'scope, u64, Vec<SideRecord>>,
    items: Stream<'scope, u64, Vec<Item>>,
    join: Option<JoinOutputs<'scope>>,
    clients: Option<SinkClients>,
    mut model: SinkModel,
    mut scorer: Scorer,
    metrics: Arc<JobMetrics>,
    worker: Rc<RefCell<WorkerState>>,
    end: Rc<RefCell<SinkEnd>>,
) {
    let scope = outputs.scope();
    let SinkSideInputs {
        states,
        counts,
        parts,
        has_join,
    } = SinkSideInputs::new(items, join);
    let mut builder = OperatorBuilder::new("KafkaSink".to_string(), scope);
    let info = builder.operator_info();
    let activator = scope.activator_for(info.address.clone());
    if let Some(c) = &clients {
        let _ = c
            .wake
            .set(scope.worker().sync_activator_for(info.address.to_vec()));
    }
    let mut outputs_in = builder.new_input(outputs, Pipeline);
    let mut side_in = builder.new_input(side, Pipeline);
    let mut states_in = builder.new_input(states, Pipeline);
    let mut counts_in = builder.new_input(counts, Pipeline);
    let mut parts_in = builder.new_input(parts, Pipeline);
    if clients.is_some() {
        // The merge on this worker notes the events' timestamps for this sink.
        worker.borrow_mut().event_times.enable();
    }
    builder.build(move |_capabilities| {
        let mut clients = clients;
        // The latencies of an epoch's predictions, counted in the metrics once per epoch.
        let mut latencies: Vec<i64> = Vec::new();
        let mut epochs: BTreeSet<u64> = BTreeSet::new();
        let mut predictions: BTreeMap<u64, Vec<ChainOutput>> = BTreeMap::new();
        let mut side_records: BTreeMap<u64, Vec<SideRecord>> = BTreeMap::new();
        let mut assembler = SnapshotAssembler::default();
        let mut tracker = CountsTracker::new(model.restored);
        let mut marks = CommitMarks::default();
        // The marks of the latest epoch done: where a checkpoint taken now stands.
        let mut latest: Vec<(StreamId, i32, i64)> = Vec::new();
        // With --merge-order timestamps, the order keys at those marks.
        let mut latest_keys: std::collections::BTreeMap<(StreamId, i32), i64> = Default::default();
        // The epoch whose snapshot is the run's last, at the stream's end.
        let mut end_epoch: Option<u64> = None;
        // The snapshot of the end resumed from, to save again.
        let mut end_again: Option<Box<SavedModel>> = None;
        // The model to save at the end (the last snapshot's).
        let mut last_model: Option<SavedModel> = None;
        let mut checkpoints_written = 0u64;
        let mut committed: BTreeMap<(StreamId, i32), i64> = BTreeMap::new();
        let mut last_commit = Instant::now();
        // Offset commits the broker accepted, already in the metrics.
        let mut commits_counted = 0u64;
        let mut buf = Vec::with_capacity(256);
        let mut key = itoa::Buffer::new();
        let mut finished = false;
        // One model per key: each key's progressive metrics and predictions.
        let models = model.keys.as_ref().map_or(0, |k| k.len());
        let (mut key_scorers, mut key_predictions): (Vec<Scorer>, Vec<u64>) =
            if model.key_progress.len() == models {
                model
                    .key_progress
                    .iter()
                    .map(|p| (p.scorer.clone(), p.seen))
                    .unzip()
            } else {
                let fresh = Scorer::new(model.schema.task, model.schema.num_labels());
                (vec![fresh; models], vec![0; models])
            };
        move |frontiers| {
            outputs_in.for_each(|time, data: &mut Vec<ChainOutput>| {
                epochs.insert(*time.time());
                predictions.entry(*time.time()).or_default().append(data);
            });
            side_in.for_each(|time, data: &mut Vec<SideRecord>| {
                epochs.insert(*time.time());
                side_records.entry(*time.time()).or_default().append(data);
            });
            states_in.for_each(|time, data: &mut Vec<SourceState>| {
                epochs.insert(*time.time());
                for s in data.drain(..) {
                    assembler.source(*time.time(), s);
                }
            });
            counts_in.for_each(
                |_t, data: &mut Vec<flowboost_operators::dataflow::CountUpdate>| {
                    for ((field, total), _, diff) in data.drain(..) {
                        tracker.update(field, total, diff);
                    }
                },
            );
            parts_in.for_each(|time, data: &mut Vec<JoinPart>| {
                for p in data.drain(..) {
                    assembler.join(*time.time(), p);
                }
            });
            // The counts are exchanged to worker 0, whose sink alone has clients and
            // alone reports them (the other workers' trackers stay empty).
            let Some(c) = clients.as_mut() else {
                return;
            };
            if has_join {
                metrics.set_join(tracker.counts());
            }
            let failed = worker.borrow().error.is_some();
            while let Some(&t) = epochs.first() {
                if frontiers.iter().any(|f| f.less_equal(&t)) {
                    break;
                }
                epochs.remove(&t);
                let mut sent = 0u64;
                let mut outputs = predictions.remove(&t).unwrap_or_default();
                if let Some(keys) = &model.keys {
                    // The keys' chains run on several workers: their outputs arrive in
                    // any order; they leave in the merged sequence's.
                    outputs.sort_by_key(|o| match o {
                        ChainOutput::Prediction(e) => (false, e.prediction.seq),
                        ChainOutput::Snapshot(_) => (true, 0),
                    });
                    for o in &outputs {
                        if let ChainOutput::Prediction(e) = o {
                            let m = e.model as usize;
                            key_predictions[m] += 1;
                            if let Some(label) = e.example.label.as_ref() {
                                key_scorers[m].update(&e.prediction, Some(label));
                            }
                        }
                    }
                    for (m, s) in key_scorers.iter().enumerate() {
                        let (_, loss) = s.headline();
                        metrics.set_key(
                            keys.name(m as u32),
                            KeyStats {
                                predictions: key_predictions[m],
                                scored: s.count(),
                                progressive_loss: progressive_loss(s, loss),
                            },
                        );
                    }
                }
                // The time the epoch's predictions are handed to the producer (which
                // stamps their records then).
                let now_ms = super::latency::unix_ms();
                for o in outputs {
                    match o {
                        ChainOutput::Prediction(e) => {
                            let p = &e.prediction;
                            if let Some(t) = worker.borrow_mut().event_times.take(p.seq) {
                                // (Saturating: a record may carry any timestamp.)
                                latencies.push(now_ms.saturating_sub(t));
                            }
                            if let Some(label) = e.example.label.as_ref() {
                                scorer.update(p, Some(label));
                            }
                            buf.clear();
                            c.encoder.encode_into(
                                &PredictionOutput {
                                    id: p.id,
                                    class: p.class,
                                    labels: &p.labels,
                                    scores: &p.scores,
                                    expert: p.expert,
                                    model_version: p.version,
                                    shown: &p.shown,
                                    key: model.keys.as_ref().map(|k| k.name(e.model)),
                                },
                                &mut buf,
                            );
                            let key = key.format(p.id).as_bytes();
                            if let Err(err) = c.predictions.send(Some(key), &buf) {
                                worker
                                    .borrow_mut()
                                    .fail(format!("writing a prediction: {err}"));
                            }
                            sent += 1;
                        }
                        ChainOutput::Snapshot(parts) => assembler.chain(t, parts),
                    }
                }
                if !latencies.is_empty() {
                    metrics.observe_latencies(&latencies);
                    latencies.clear();
                }
                if sent > 0 {
                    metrics.predictions_sent.fetch_add(sent, Ordering::Relaxed);
                    let mut end = end.borrow_mut();
                    let now = Instant::now();
                    end.busy = Some(end.busy.map_or((now, now), |(a, _)| (a, now)));
                }
                for r in side_records.remove(&t).unwrap_or_default() {
                    match r {
                        SideRecord::Dead {
                            stream,
                            partition,
                            offset,
                            body,
                        } => match c.dead_letters.as_ref() {
                            Some(w) => {
                                let letter = DeadLetter {
                                    reason: &body.reason,
                                    topic: &c.topics[stream as usize],
                                    partition,
                                    offset,
                                    key: body.key.as_deref(),
                                    payload: &body.payload,
                                };
                                if let Err(err) = w.send(&mut c.predictions, &letter) {
                                    worker
                                        .borrow_mut()
                                        .fail(format!("writing a dead letter: {err}"));
                                }
                            }
                            None => tracing::warn!(
                                topic = %c.topics[stream as usize],
                                partition,
                                offset,
                                reason = %body.reason,
                                "flowboost: kafka: bad record `{}` [{partition}] @{offset}: {}",
                                c.topics[stream as usize],
                                body.reason
                            ),
                        },
                        SideRecord::OrderKeys(keys) => {
                            latest_keys = keys.into_iter().map(|(s, p, k)| ((s, p), k)).collect();
                        }
                        SideRecord::End => end_epoch = Some(t),
                        SideRecord::EndAgain => end_again = model.resumed_end.take(),
                        SideRecord::Commit(offsets) => {
                            latest.clone_from(&offsets);
                            marks.push(offsets, c.predictions.stats().produced);
                        }
                    }
                }
                // The model of this epoch's snapshot: assembled from its parts, or the end
                // resumed from, unchanged.
                let snapshot = match end_again.take() {
                    Some(saved) => Some(Ok(*saved)),
                    None => assembler
                        .take(t, model.stages, model.score_dim, has_join, models.max(1))
                        .map(|snapshot| {
                            let progress = Progress {
                                seen: model.seen + metrics.predictions_sent.load(Ordering::Relaxed),
                                scorer: scorer.clone(),
                            };
                            snapshot.map(|s| {
                                let mut saved = SavedModel::from_snapshot(
                                    &model.config,
                                    &model.schema,
                                    s,
                                    Some(progress),
                                    None,
                                );
                                if let Some(keys) = &model.keys {
                                    let progress = key_scorers
                                        .iter()
                                        .zip(&key_predictions)
                                        .map(|(s, &seen)| Progress {
                                            seen,
                                            scorer: s.clone(),
                                        })
                                        .collect();
                                    saved = saved.with_keys(keys.names().to_vec(), progress);
                                }
                                saved.header.offsets = latest
                                    .iter()
                                    .map(|&(s, p, o)| SourceOffset {
                                        topic: c.topics[s as usize].clone(),
                                        partition: p,
                                        offset: o,
                                        order_key: latest_keys.get(&(s, p)).copied(),
                                    })
                                    .collect();
                                saved.header.at_end = end_epoch == Some(t);
                                saved
                            })
                        }),
                };
                if let Some(saved) = snapshot {
                    let result = saved.and_then(|saved| {
                        if let Some(dir) = &model.checkpoints {
                            checkpoints_written += 1;
                            checkpoint(dir, &saved, checkpoints_written, c, &latest, &metrics)?;
                            if c.predictions.is_transactional() {
                                for &(s, p, o) in &latest {
                                    committed.insert((s, p), o);
                                }
                            }
                        }
                        if model.writer.is_some() {
                            last_model = Some(saved);
                        }
                        Ok(())
                    });
                    if let Err(err) = result {
                        worker.borrow_mut().fail(err);
                    }
                }
            }
            // The paced producer: the next burst, if fewer than 5 records are in flight
            // (else its `drained` callback activates this operator when they are).
            if let Err(err) = c.predictions.pump() {
                worker
                    .borrow_mut()
                    .fail(format!("writing a prediction: {err}"));
            }
            metrics
                .sink_held
                .store(c.predictions.held() as u64, Ordering::Relaxed);
            metrics.scored.store(scorer.count(), Ordering::Relaxed);
            let (_, value) = scorer.headline();
            metrics.set_loss(progressive_loss(&scorer, value));
            let done = frontiers.iter().all(|f| f.is_empty());
            // Deliveries (counted on the producer's thread): never wait, except once at
            // the very end.
            if done && !finished {
                let timeout = Duration::from_secs(60);
                if let Err(err) = c.predictions.flush(timeout) {
                    worker
                        .borrow_mut()
                        .fail(format!("delivering predictions: {err}"));
                }
                if let (Some(w), Some(saved)) = (&model.writer, last_model.take())
                    && worker.borrow().error.is_none()
                    && let Err(err) = w.write_model(&saved)
                {
                    worker.borrow_mut().fail(err.to_string());
                }
            }
            metrics
                .predictions_out
                .store(c.predictions.delivered_to_topic(), Ordering::Relaxed);
            let stats = c.predictions.stats();
            metrics
                .producer_errors
                .store(stats.client_errors + stats.failed, Ordering::Relaxed);
            // Commit the marks whose outputs are all delivered (not after an error: a
            // restart resumes from the last commit). A transactional producer commits
            // offsets with its transactions only.
            let delivered = stats.delivered;
            let due = done || last_commit.elapsed() >= c.commit_interval;
            if c.predictions.is_transactional() {
                marks.clear();
            }
            let ready = if due { marks.ready(delivered) } else { None };
            if !failed
                && worker.borrow().error.is_none()
                && let Some(m) = ready
            {
                let changed: Vec<(&str, i32, i64)> = m
                    .iter()
                    .filter(|(s, p, o)| committed.get(&(*s, *p)) != Some(o))
                    .map(|&(s, p, o)| (c.topics[s as usize].as_str(), p, o))
                    .collect();
                if !changed.is_empty() {
                    // Handed to the commit thread: a broker slow to answer never stops
                    // the pipeline.
                    match c.commits.commit(&changed) {
                        Ok(()) => {
                            for &(s, p, o) in &m {
                                committed.insert((s, p), o);
                            }
                        }
                        Err(err) => worker
                            .borrow_mut()
                            .fail(format!("committing offsets: {err}")),
                    }
                }
                last_commit = Instant::now();
            }
            // The broker's answers to the commits sent: collected as they come; awaited
            // at the end, so that the job ends with its last commit done.
            let answers = if done {
                c.commits.wait(Duration::from_secs(60))
            } else {
                c.commits.stats()
            };
            let mut commits_pending = false;
            match answers {
                Ok(stats) => {
                    metrics
                        .commits
                        .fetch_add(stats.succeeded - commits_counted, Ordering::Relaxed);
                    commits_counted = stats.succeeded;
                    commits_pending = stats.pending() > 0;
                }
                Err(err) => worker
                    .borrow_mut()
                    .fail(format!("committing offsets: {err}")),
            }
            // (A fallback for the `drained` callback's activation.)
            let held = c.predictions.held() > 0;
            if done {
                finished = true;
                clients = None;
            } else if !marks.is_empty() || commits_pending || held {
                activator.activate_after(Duration::from_millis(5));
            }
        }
    });
}

/// Writes a checkpoint and, with a transactional producer, commits the transaction of its
/// outputs with its offsets; then drops the old checkpoints. `number` counts this run's
/// checkpoints (for the fault points of the crash tests, see [`fault`]).
fn checkpoint(
    dir: &Checkpoints,
    saved: &SavedModel,
    number: u64,
    c: &mut SinkClients,
    offsets: &[(StreamId, i32, i64)],
    metrics: &JobMetrics,
) -> Result<(), String> {
    let started = Instant::now();
    if !c.predictions.is_transactional() {
        // At least once: a restart resumes after this checkpoint, so everything before
        // it must be delivered first.
        c.predictions
            .flush(Duration::from_secs(60))
            .map_err(|e| format!("delivering the outputs before a checkpoint: {e}"))?;
    }
    fault("checkpoint-write", number, Some((dir, saved)));
    let path = dir
        .write(saved)
        .map_err(|e| format!("writing a checkpoint: {e}"))?;
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    fault("checkpoint-commit", number, None);
    if c.predictions.is_transactional() {
        let named: Vec<(&str, i32, i64)> = offsets
            .iter()
            .map(|&(s, p, o)| (c.topics[s as usize].as_str(), p, o))
            .collect();
        c.predictions
            .commit_transaction(&named, &c.committer)
            .map_err(|e| format!("after the checkpoint {}: {e}", path.display()))?;
        metrics.commits.fetch_add(1, Ordering::Relaxed);
    }
    dir.prune()?;
    metrics.checkpoint(bytes, started.elapsed());
    Ok(())
}

/// A crash on purpose, for the tests that kill the job at chosen points:
/// `FLOWBOOST_FAULT=POINT:N` aborts the process at the `N`th time it reaches `POINT`
/// (`checkpoint-write`: halfway through writing the checkpoint's temporary file;
/// `checkpoint-commit`: after the checkpoint is durable, before its transaction commits).
/// Unset (always, outside tests), it does nothing.
fn fault(point: &str, number: u64, partial: Option<(&Checkpoints, &SavedModel)>) {
    let Ok(spec) = std::env::var("FLOWBOOST_FAULT") else {
        return;
    };
    if spec != format!("{point}:{number}") {
        return;
    }
    if let Some((dir, saved)) = partial
        && let Ok(bytes) = saved.to_bytes()
    {
        let mut tmp = dir.path_of(saved).into_os_string();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let _ = std::fs::write(&tmp, &bytes[..bytes.len() / 2]);
    }
    tracing::error!(fault = %spec, "flowboost: FLOWBOOST_FAULT={spec}: aborting on purpose");
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::CommitMarks;

    #[test]
    fn the_newest_delivered_mark_is_committed_while_later_ones_are_in_flight() {
        let mut marks = CommitMarks::default();
        marks.push(vec![(0, 0, 10)], 10);
        marks.push(vec![(0, 0, 20)], 20);
        marks.push(vec![(0, 0, 25)], 20);
        marks.push(vec![(0, 0, 30)], 30);
        // Epoch 30's outputs are in flight: the mark of 10 is committable.
        assert_eq!(marks.ready(15), Some(vec![(0, 0, 10)]));
        assert_eq!(marks.ready(15), None);
        // The later mark at the same count (25) covers the one at 20.
        assert_eq!(marks.ready(29), Some(vec![(0, 0, 25)]));
        assert!(!marks.is_empty());
        assert_eq!(marks.ready(30), Some(vec![(0, 0, 30)]));
        assert!(marks.is_empty());
    }
}
