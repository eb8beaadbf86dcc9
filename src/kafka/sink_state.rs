//! The sink's rules, without timely or a broker: what arrives per epoch (predictions,
//! side records, the parts of snapshots), taken epoch by epoch once complete
//! ([`SinkState::take_epoch`]: the predictions to produce, the dead letters, the commit
//! marks), the model of a snapshot ([`SinkState::snapshot`]), and which offsets are due
//! for a commit ([`SinkState::commit_due`]). The operator ([`super::sink_operator`])
//! does what they say with its clients.

use super::commit_marks::CommitMarks;
use super::latency::EventTimes;
use super::merge::StreamId;
use super::metrics::KeyStats;
use super::partition_offset::PartitionOffset;
use super::record::{DeadBody, SideRecord};
use crate::eval::Scorer;
use crate::model::{Progress, SavedModel, SourceOffset};
use flowboost_operators::boosters::BoosterConfig;
use flowboost_operators::data::Schema;
use flowboost_operators::dataflow::JoinPart;
use flowboost_operators::dataflow::{CountsTracker, SnapshotAssembler};
use flowboost_operators::engine::feedback::JoinCounts;
use flowboost_operators::engine::{ChainOutput, ChainSnapshot, Emitted, SourceState};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// What the sink knows about the model (for its snapshots and metrics).
pub struct SinkModel {
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
    /// The progressive metrics so far (a restored run's).
    pub scorer: Scorer,
    /// The input topics' names, by stream id.
    pub topics: [String; 2],
}

/// What an epoch's side records ask the producer to do, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum SinkRecord {
    /// A bad record for the dead-letter topic (or the log).
    Dead {
        /// Its topic.
        stream: StreamId,
        /// Its partition.
        partition: i32,
        /// Its offset.
        offset: i64,
        /// What it was.
        body: DeadBody,
    },
    /// A commit mark: hand it back with the producer's count then
    /// ([`SinkState::mark`]).
    Commit(Vec<PartitionOffset>),
}

/// A complete epoch's outputs.
#[derive(Debug, Default)]
pub struct EpochOutput {
    /// The predictions to produce, in the merged sequence's order.
    pub predictions: Vec<Emitted>,
    /// The latencies (milliseconds) of the predictions whose event had a timestamp.
    pub latencies: Vec<i64>,
    /// The dead letters and commit marks, after the predictions.
    pub side: Vec<SinkRecord>,
}

/// When offsets are committed.
#[derive(Clone, Copy, Debug)]
pub struct CommitClock {
    /// Now.
    pub now: Instant,
    /// The job is done: commit whatever is delivered.
    pub done: bool,
    /// Otherwise, at most this often.
    pub interval: Duration,
}

/// Offsets due for a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitDue {
    /// The commit mark.
    pub marks: Vec<PartitionOffset>,
    /// Its offsets not committed yet (what to send).
    pub changed: Vec<PartitionOffset>,
}

/// The sink of one job (worker 0's does the work).
pub struct SinkState {
    model: SinkModel,
    /// Whether the job has a feedback join (whose state is in the snapshots).
    has_join: bool,
    key_scorers: Vec<Scorer>,
    key_predictions: Vec<u64>,
    epochs: BTreeSet<u64>,
    predictions: BTreeMap<u64, Vec<ChainOutput>>,
    side_records: BTreeMap<u64, Vec<SideRecord>>,
    assembler: SnapshotAssembler,
    tracker: CountsTracker,
    event_times: EventTimes,
    marks: CommitMarks,
    /// The marks of the latest epoch done: where a checkpoint taken now stands.
    latest: Vec<PartitionOffset>,
    /// With `--merge-order timestamps`, the order keys at those marks.
    latest_keys: BTreeMap<(StreamId, i32), i64>,
    /// The epoch whose snapshot is the run's last, at the stream's end.
    end_epoch: Option<u64>,
    /// The snapshot of the end resumed from, to save again.
    end_again: Option<Box<SavedModel>>,
    /// Predictions handed to the producer by this run.
    sent: u64,
    checkpoints_written: u64,
    committed: BTreeMap<(StreamId, i32), i64>,
    last_commit: Instant,
    /// Offset commits the broker accepted, already counted.
    commits_counted: u64,
}

impl SinkState {
    /// The sink at its start (`now`); `has_join`: the job has a feedback join (whose
    /// state is in the snapshots).
    pub fn new(model: SinkModel, has_join: bool, now: Instant) -> Self {
        let models = model.keys.as_ref().map_or(0, |k| k.len());
        let (key_scorers, key_predictions) = if model.key_progress.len() == models {
            model
                .key_progress
                .iter()
                .map(|p| (p.scorer.clone(), p.seen))
                .unzip()
        } else {
            let fresh = Scorer::new(model.schema.task, model.schema.num_labels());
            (vec![fresh; models], vec![0; models])
        };
        SinkState {
            tracker: CountsTracker::new(model.restored),
            model,
            has_join,
            key_scorers,
            key_predictions,
            epochs: BTreeSet::new(),
            predictions: BTreeMap::new(),
            side_records: BTreeMap::new(),
            assembler: SnapshotAssembler::default(),
            event_times: EventTimes::default(),
            marks: CommitMarks::default(),
            latest: Vec::new(),
            latest_keys: BTreeMap::new(),
            end_epoch: None,
            end_again: None,
            sent: 0,
            checkpoints_written: 0,
            committed: BTreeMap::new(),
            last_commit: now,
            commits_counted: 0,
        }
    }

    /// The model's outputs at `epoch`.
    pub fn outputs(&mut self, epoch: u64, data: &mut Vec<ChainOutput>) {
        self.epochs.insert(epoch);
        self.predictions.entry(epoch).or_default().append(data);
    }

    /// The merge's side records at `epoch`.
    pub fn side(&mut self, epoch: u64, data: &mut Vec<SideRecord>) {
        self.epochs.insert(epoch);
        self.side_records.entry(epoch).or_default().append(data);
    }

    /// The sequencer's state at a snapshot marker of `epoch`.
    pub fn source_state(&mut self, epoch: u64, state: SourceState) {
        self.epochs.insert(epoch);
        self.assembler.source(epoch, state);
    }

    /// The feedback join's part of a snapshot at `epoch`.
    pub fn join_part(&mut self, epoch: u64, part: JoinPart) {
        self.assembler.join(epoch, part);
    }

    /// A change of the feedback join's counts.
    pub fn join_count(&mut self, field: u8, total: isize, diff: isize) {
        self.tracker.update(field, total, diff);
    }

    /// The feedback join's counts.
    pub fn join_counts(&self) -> JoinCounts {
        self.tracker.counts()
    }

    /// The earliest epoch with anything to take.
    pub fn first_epoch(&self) -> Option<u64> {
        self.epochs.first().copied()
    }

    /// The name of key `model` (with one model per key).
    pub fn key_name(&self, model: u32) -> Option<&str> {
        self.model.keys.as_ref().map(|k| k.name(model))
    }

    /// Takes the complete `epoch` (its predictions handed to the producer at `now_ms`):
    /// scores its predictions and measures their latencies, and notes its commit marks,
    /// order keys and end.
    pub fn take_epoch(&mut self, epoch: u64, now_ms: i64) -> EpochOutput {
        self.epochs.remove(&epoch);
        let side = self.side_records.remove(&epoch).unwrap_or_default();
        for r in &side {
            if let SideRecord::EventTimes(times) = r {
                for t in times {
                    self.event_times.note(t.seq, t.timestamp_ms);
                }
            }
        }
        let mut out = EpochOutput::default();
        let mut outputs = self.predictions.remove(&epoch).unwrap_or_default();
        if self.model.keys.is_some() {
            self.score_keys(&mut outputs);
        }
        for o in outputs {
            match o {
                ChainOutput::Prediction(e) => {
                    if let Some(t) = self.event_times.take(e.prediction.seq) {
                        // (Saturating: a record may carry any timestamp.)
                        out.latencies.push(now_ms.saturating_sub(t));
                    }
                    if let Some(label) = e.example.label.as_ref() {
                        self.model.scorer.update(&e.prediction, Some(label));
                    }
                    out.predictions.push(e);
                }
                ChainOutput::Snapshot(parts) => self.assembler.chain(epoch, parts),
            }
        }
        self.sent += out.predictions.len() as u64;
        for r in side {
            self.side_record(epoch, r, &mut out);
        }
        out
    }

    /// The keys' chains run on several workers: their outputs arrive in any order; they
    /// leave in the merged sequence's. Each key's metrics count its predictions.
    fn score_keys(&mut self, outputs: &mut [ChainOutput]) {
        outputs.sort_by_key(|o| match o {
            ChainOutput::Prediction(e) => (false, e.prediction.seq),
            ChainOutput::Snapshot(_) => (true, 0),
        });
        for o in outputs.iter() {
            if let ChainOutput::Prediction(e) = o {
                let m = e.model as usize;
                self.key_predictions[m] += 1;
                if let Some(label) = e.example.label.as_ref() {
                    self.key_scorers[m].update(&e.prediction, Some(label));
                }
            }
        }
    }

    /// One side record of `epoch`.
    fn side_record(&mut self, epoch: u64, record: SideRecord, out: &mut EpochOutput) {
        match record {
            SideRecord::Dead {
                stream,
                partition,
                offset,
                body,
            } => out.side.push(SinkRecord::Dead {
                stream,
                partition,
                offset,
                body,
            }),
            SideRecord::OrderKeys(keys) => {
                self.latest_keys = keys
                    .into_iter()
                    .map(|k| ((k.stream, k.partition), k.key))
                    .collect();
            }
            SideRecord::End => self.end_epoch = Some(epoch),
            SideRecord::EndAgain => self.end_again = self.model.resumed_end.take(),
            SideRecord::Commit(offsets) => {
                self.latest.clone_from(&offsets);
                out.side.push(SinkRecord::Commit(offsets));
            }
            SideRecord::EventTimes(_) => {}
        }
    }

    /// A commit mark of the epoch taken, whose outputs make `produced` records in all.
    pub fn mark(&mut self, offsets: Vec<PartitionOffset>, produced: u64) {
        self.marks.push(offsets, produced);
    }

    /// Each key's metrics (with one model per key).
    pub fn key_stats(&self) -> impl Iterator<Item = (&str, KeyStats)> + '_ {
        let keys = self.model.keys.as_ref();
        self.key_scorers
            .iter()
            .enumerate()
            .filter_map(move |(m, s)| {
                let (_, loss) = s.headline();
                let stats = KeyStats {
                    predictions: self.key_predictions[m],
                    scored: s.count(),
                    progressive_loss: progressive_loss(s, loss),
                };
                Some((keys?.name(m as u32), stats))
            })
    }

    /// The model of `epoch`'s snapshot, once the epoch is taken: assembled from its parts,
    /// or the end resumed from, unchanged; `None` without a snapshot at `epoch`.
    pub fn snapshot(&mut self, epoch: u64) -> Option<Result<SavedModel, String>> {
        if let Some(saved) = self.end_again.take() {
            return Some(Ok(*saved));
        }
        let m = &self.model;
        let models = m.keys.as_ref().map_or(0, |k| k.len()).max(1);
        let snapshot = self
            .assembler
            .take(epoch, m.stages, m.score_dim, self.has_join, models)?;
        Some(
            snapshot
                .map(|s| self.saved_model(epoch, s))
                .map_err(|e| e.to_string()),
        )
    }

    /// A snapshot as a model file, with the progress and the offsets it stands at.
    fn saved_model(&self, epoch: u64, snapshot: ChainSnapshot) -> SavedModel {
        let m = &self.model;
        let progress = Progress {
            seen: m.seen + self.sent,
            scorer: m.scorer.clone(),
        };
        let mut saved =
            SavedModel::from_snapshot(&m.config, &m.schema, snapshot, Some(progress), None);
        if let Some(keys) = &m.keys {
            let progress = self
                .key_scorers
                .iter()
                .zip(&self.key_predictions)
                .map(|(s, &seen)| Progress {
                    seen,
                    scorer: s.clone(),
                })
                .collect();
            saved = saved.with_keys(keys.names().to_vec(), progress);
        }
        saved.header.offsets = self
            .latest
            .iter()
            .map(|o| SourceOffset {
                topic: m.topics[o.stream as usize].clone(),
                partition: o.partition,
                offset: o.offset,
                order_key: self.latest_keys.get(&o.partition_id()).copied(),
            })
            .collect();
        saved.header.at_end = self.end_epoch == Some(epoch);
        saved
    }

    /// The number of the next checkpoint this run writes (from 1).
    pub fn next_checkpoint(&mut self) -> u64 {
        self.checkpoints_written += 1;
        self.checkpoints_written
    }

    /// Where a checkpoint taken now stands.
    pub fn latest(&self) -> &[PartitionOffset] {
        &self.latest
    }

    /// A checkpoint was written; with a transactional producer, its offsets were committed
    /// with its transaction.
    pub fn checkpointed(&mut self, transactional: bool) {
        if transactional {
            for o in &self.latest {
                self.committed.insert(o.partition_id(), o.offset);
            }
        }
    }

    /// The predictions scored, and the progressive loss.
    pub fn progressive(&self) -> (u64, f64) {
        let scorer = &self.model.scorer;
        let (_, value) = scorer.headline();
        (scorer.count(), progressive_loss(scorer, value))
    }

    /// The marks whose outputs are all delivered (`delivered` records), when a commit is
    /// due: not after an error (`failed`: a restart resumes from the last commit). A
    /// transactional producer commits offsets with its transactions only: its marks are
    /// dropped.
    pub fn commit_due(
        &mut self,
        clock: CommitClock,
        delivered: u64,
        transactional: bool,
        failed: bool,
    ) -> Option<CommitDue> {
        let due =
            clock.done || clock.now.saturating_duration_since(self.last_commit) >= clock.interval;
        if transactional {
            self.marks.clear();
        }
        let marks = if due {
            self.marks.ready(delivered)
        } else {
            None
        };
        let marks = marks.filter(|_| !failed)?;
        self.last_commit = clock.now;
        let changed = marks
            .iter()
            .filter(|o| self.committed.get(&o.partition_id()) != Some(&o.offset))
            .copied()
            .collect();
        Some(CommitDue { marks, changed })
    }

    /// The offsets of `marks` were handed to the committer.
    pub fn committed(&mut self, marks: &[PartitionOffset]) {
        for o in marks {
            self.committed.insert(o.partition_id(), o.offset);
        }
    }

    /// The broker accepted `succeeded` commits in all: how many are new.
    pub fn commits_succeeded(&mut self, succeeded: u64) -> u64 {
        let new = succeeded - self.commits_counted;
        self.commits_counted = succeeded;
        new
    }

    /// Whether commit marks wait for their deliveries.
    pub fn marks_waiting(&self) -> bool {
        !self.marks.is_empty()
    }
}

/// The progressive loss a scorer's headline value stands for: 1 - accuracy for single-label
/// tasks, the value itself (rank loss) for multi-label ones; 0 before any score.
pub fn progressive_loss(scorer: &Scorer, headline: f64) -> f64 {
    if scorer.count() == 0 {
        0.0
    } else if matches!(scorer, Scorer::Single(_)) {
        1.0 - headline
    } else {
        headline
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::latency::EventTime;
    use crate::kafka::merge::EVENTS;
    use flowboost_operators::boosters::Algorithm;
    use flowboost_operators::data::{Example, Features, Label, Task};
    use flowboost_operators::engine::Prediction;
    use flowboost_operators::learners::WeakKind;
    use std::sync::Arc;

    fn state() -> SinkState {
        let schema = Schema {
            attributes: Vec::new(),
            labels: vec!["0".into(), "1".into()],
            task: Task::Binary,
        };
        let model = SinkModel {
            config: BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 1),
            scorer: Scorer::new(schema.task, schema.num_labels()),
            schema,
            seen: 0,
            stages: 1,
            score_dim: 1,
            restored: JoinCounts::default(),
            keys: None,
            key_progress: Vec::new(),
            resumed_end: None,
            topics: ["events".into(), String::new()],
        };
        SinkState::new(model, false, Instant::now())
    }

    fn prediction(seq: u64, class: u32, label: u32) -> ChainOutput {
        ChainOutput::Prediction(Emitted {
            prediction: Prediction {
                seq,
                id: seq,
                class,
                labels: Vec::new(),
                scores: vec![0.0],
                expert: 0,
                version: 0,
                top: Vec::new(),
                shown: Vec::new(),
            },
            example: Arc::new(Example {
                id: seq,
                features: Features::Dense(Vec::new()),
                label: Some(Label::Class(label)),
            }),
            waits: false,
            model: 0,
        })
    }

    fn mark(offset: i64) -> Vec<PartitionOffset> {
        vec![PartitionOffset::new(EVENTS, 0, offset)]
    }

    #[test]
    fn an_epoch_is_taken_whole_with_its_latencies_scores_and_marks() {
        let mut sink = state();
        sink.outputs(3, &mut vec![prediction(0, 1, 1), prediction(1, 1, 0)]);
        let times = vec![
            EventTime {
                seq: 0,
                timestamp_ms: 900,
            },
            EventTime {
                seq: 1,
                timestamp_ms: 950,
            },
        ];
        sink.side(
            3,
            &mut vec![SideRecord::EventTimes(times), SideRecord::Commit(mark(2))],
        );
        assert_eq!(sink.first_epoch(), Some(3));
        let out = sink.take_epoch(3, 1000);
        assert_eq!(sink.first_epoch(), None);
        let seqs: Vec<u64> = out.predictions.iter().map(|e| e.prediction.seq).collect();
        assert_eq!(seqs, [0, 1]);
        assert_eq!(out.latencies, [100, 50]);
        assert_eq!(out.side, [SinkRecord::Commit(mark(2))]);
        assert_eq!(sink.latest(), &mark(2)[..]);
        // One right, one wrong: a progressive error of a half.
        assert_eq!(sink.progressive(), (2, 0.5));
        assert!(sink.snapshot(3).is_none(), "no snapshot marker at 3");
    }

    #[test]
    fn offsets_are_committed_once_delivered_at_the_interval_and_only_when_changed() {
        let mut sink = state();
        let t0 = Instant::now();
        let clock = |now, done| CommitClock {
            now,
            done,
            interval: Duration::from_secs(1),
        };
        sink.mark(mark(2), 2);
        assert!(sink.marks_waiting());
        assert_eq!(
            sink.commit_due(clock(t0, false), 2, false, false),
            None,
            "not due"
        );
        let later = t0 + Duration::from_secs(2);
        assert_eq!(
            sink.commit_due(clock(later, false), 1, false, false),
            None,
            "in flight"
        );
        let due = sink.commit_due(clock(later, false), 2, false, false);
        assert_eq!(
            due,
            Some(CommitDue {
                marks: mark(2),
                changed: mark(2)
            })
        );
        sink.committed(&mark(2));
        sink.mark(mark(2), 3);
        let due = sink.commit_due(clock(later, true), 3, false, false);
        assert_eq!(
            due.map(|d| d.changed),
            Some(Vec::new()),
            "already committed"
        );
        sink.mark(mark(5), 4);
        assert_eq!(
            sink.commit_due(clock(later, true), 4, false, true),
            None,
            "failed"
        );
        sink.mark(mark(6), 5);
        assert_eq!(sink.commit_due(clock(later, true), 5, true, false), None);
        assert!(
            !sink.marks_waiting(),
            "a transactional producer commits at checkpoints"
        );
        assert_eq!(sink.commits_succeeded(3), 3);
        assert_eq!(sink.commits_succeeded(4), 1);
    }
}
