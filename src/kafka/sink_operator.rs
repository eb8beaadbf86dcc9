//! The sink operator: on worker 0, every epoch's predictions and dead letters produced
//! (never waiting for the broker), and the offsets of every epoch whose outputs are all
//! delivered committed; at a checkpoint marker, the checkpoint written and (with a
//! transactional producer) the transaction of everything produced since the previous one
//! committed with the checkpoint's offsets; at the end, the model saved (`--save-model`).
//! The rules are [`SinkState`]'s; the operator does what they say with its clients.

use super::checkpoint::Checkpoints;
use super::metrics::JobMetrics;
use super::partition_offset::PartitionOffset;
use super::record::SideRecord;
use super::sink_state::{CommitClock, EpochOutput, SinkModel, SinkRecord, SinkState};
use super::worker_state::WorkerState;
use crate::model::{ModelError, ModelWriter, SavedModel};
use flowboost_connectors::kafka::{
    CommitThread, DeadLetter, DeadLetterTopic, KafkaError, KafkaSink, OffsetCommitter,
    PredictionEncoder, PredictionOutput,
};
use flowboost_operators::dataflow::{CountUpdate, JoinPart};
use flowboost_operators::dataflow::{JoinOutputs, SinkSideInputs};
use flowboost_operators::engine::{ChainOutput, Item, SourceState};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::progress::frontier::MutableAntichain;
use timely::scheduling::{Activator, SyncActivator};

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

/// What the sink reports when the job ends.
#[derive(Debug, Default)]
pub struct SinkEnd {
    /// When it first produced and last delivered.
    pub busy: Option<(Instant, Instant)>,
}

/// The sink's inputs besides the model's outputs.
pub struct SinkInputs<'scope> {
    /// The merge's side records.
    pub side: Stream<'scope, u64, Vec<SideRecord>>,
    /// The stamped items (for the source's state at snapshot markers).
    pub items: Stream<'scope, u64, Vec<Item>>,
    /// The feedback join's counts and snapshot parts, if the job has one.
    pub join: Option<JoinOutputs<'scope>>,
}

/// What the sink operator uses besides its streams.
pub struct SinkContext {
    /// The clients (worker 0 only; `None` elsewhere).
    pub clients: Option<SinkClients>,
    /// Where to save the model at the end (`--save-model`), if anywhere.
    pub writer: Option<ModelWriter>,
    /// Where to write checkpoints, if anywhere.
    pub checkpoints: Option<Checkpoints>,
    /// The job's counters.
    pub metrics: Arc<JobMetrics>,
    /// The worker's control state (the sink reports its errors there).
    pub worker: Rc<RefCell<WorkerState>>,
    /// What the sink reports at the end.
    pub end: Rc<RefCell<SinkEnd>>,
}

/// The Kafka sink of the model's outputs (the stream this is called on); it exists on
/// every worker; only worker 0 has clients.
///
/// ```no_run
/// # use flowboost::kafka::sink_operator::{KafkaSinkExt, SinkContext, SinkInputs};
/// # use flowboost::kafka::sink_state::SinkModel;
/// # use flowboost_operators::engine::ChainOutput;
/// # use timely::dataflow::Stream;
/// fn wire<'s>(
///     outputs: Stream<'s, u64, Vec<ChainOutput>>,
///     inputs: SinkInputs<'s>,
///     model: SinkModel,
///     context: SinkContext,
/// ) {
///     outputs.kafka_sink(inputs, model, context);
/// }
/// ```
pub trait KafkaSinkExt<'scope> {
    /// Produces the predictions and dead letters, commits, checkpoints and saves.
    fn kafka_sink(self, inputs: SinkInputs<'scope>, model: SinkModel, context: SinkContext);
}

impl<'scope> KafkaSinkExt<'scope> for Stream<'scope, u64, Vec<ChainOutput>> {
    fn kafka_sink(self, inputs: SinkInputs<'scope>, model: SinkModel, context: SinkContext) {
        let scope = self.scope();
        let side = SinkSideInputs::new(inputs.items, inputs.join);
        let mut builder = OperatorBuilder::new("KafkaSink".to_string(), scope);
        let info = builder.operator_info();
        if let Some(c) = &context.clients {
            let _ = c
                .wake
                .set(scope.worker().sync_activator_for(info.address.to_vec()));
        }
        let activator = scope.activator_for(info.address);
        let mut outputs_in = builder.new_input(self, Pipeline);
        let mut side_in = builder.new_input(inputs.side, Pipeline);
        let mut states_in = builder.new_input(side.states, Pipeline);
        let mut counts_in = builder.new_input(side.counts, Pipeline);
        let mut parts_in = builder.new_input(side.parts, Pipeline);
        let state = SinkState::new(model, side.has_join, Instant::now());
        let mut sink = SinkRun::new(state, context, activator);
        builder.build(move |_capabilities| {
            move |frontiers| {
                let state = &mut sink.state;
                outputs_in.for_each(|time, data| state.outputs(*time.time(), data));
                side_in.for_each(|time, data| state.side(*time.time(), data));
                states_in.for_each(|time, data: &mut Vec<SourceState>| {
                    for s in data.drain(..) {
                        state.source_state(*time.time(), s);
                    }
                });
                counts_in.for_each(|_t, data: &mut Vec<CountUpdate>| {
                    for ((field, total), _, diff) in data.drain(..) {
                        state.join_count(field, total, diff);
                    }
                });
                parts_in.for_each(|time, data: &mut Vec<JoinPart>| {
                    for p in data.drain(..) {
                        state.join_part(*time.time(), p);
                    }
                });
                sink.run(frontiers, side.has_join);
            }
        });
    }
}

/// The sink operator's state on one worker.
struct SinkRun {
    state: SinkState,
    context: SinkContext,
    activator: Activator,
    /// A prediction's encoding, and its key's.
    buf: Vec<u8>,
    key: itoa::Buffer,
    /// The model to save at the end (the last snapshot's).
    last_model: Option<SavedModel>,
    finished: bool,
}

impl SinkRun {
    fn new(state: SinkState, context: SinkContext, activator: Activator) -> Self {
        SinkRun {
            state,
            context,
            activator,
            buf: Vec::with_capacity(256),
            key: itoa::Buffer::new(),
            last_model: None,
            finished: false,
        }
    }

    /// Records a fatal error (the first one wins).
    fn fail(&self, error: String) {
        self.context.worker.borrow_mut().fail(error);
    }

    fn failed(&self) -> bool {
        self.context.worker.borrow().error.is_some()
    }

    /// Takes every complete epoch, then produces, delivers, commits and (at the end)
    /// saves. The counts are exchanged to worker 0, whose sink alone has clients and alone
    /// reports them (the other workers' trackers stay empty).
    fn run(&mut self, frontiers: &[MutableAntichain<u64>], has_join: bool) {
        if self.context.clients.is_none() {
            return;
        }
        if has_join {
            self.context.metrics.set_join(self.state.join_counts());
        }
        let failed = self.failed();
        while let Some(t) = self.state.first_epoch() {
            if frontiers.iter().any(|f| f.less_equal(&t)) {
                break;
            }
            self.epoch(t);
        }
        let done = frontiers.iter().all(|f| f.is_empty());
        self.deliver(done);
        let commits_pending = self.commit(done, failed);
        let Some(c) = self.context.clients.as_ref() else {
            return;
        };
        // (A fallback for the `drained` callback's activation.)
        let held = c.predictions.held() > 0;
        if done {
            self.finished = true;
            self.context.clients = None;
        } else if self.state.marks_waiting() || commits_pending || held {
            self.activator.activate_after(Duration::from_millis(5));
        }
    }

    /// Produces the complete epoch `t`'s outputs, and checkpoints its snapshot.
    fn epoch(&mut self, t: u64) {
        // The time the epoch's predictions are handed to the producer (which stamps their
        // records then).
        let out = self.state.take_epoch(t, super::latency::unix_ms());
        let metrics = Arc::clone(&self.context.metrics);
        for (name, stats) in self.state.key_stats() {
            metrics.set_key(name, stats);
        }
        self.produce(out, &metrics);
        if let Some(snapshot) = self.state.snapshot(t) {
            let result = snapshot.and_then(|saved| self.save(saved, &metrics));
            if let Err(err) = result {
                self.fail(err);
            }
        }
    }

    /// Hands an epoch's predictions, dead letters and commit marks to the producer.
    fn produce(&mut self, out: EpochOutput, metrics: &JobMetrics) {
        let Some(c) = self.context.clients.as_mut() else {
            return;
        };
        let sent = out.predictions.len() as u64;
        for e in &out.predictions {
            let p = &e.prediction;
            self.buf.clear();
            let prediction = PredictionOutput {
                id: p.id,
                class: p.class,
                labels: &p.labels,
                scores: &p.scores,
                expert: p.expert,
                model_version: p.version,
                shown: &p.shown,
                key: self.state.key_name(e.model),
            };
            c.encoder.encode_into(&prediction, &mut self.buf);
            let key = self.key.format(p.id).as_bytes();
            if let Err(err) = c.predictions.send(Some(key), &self.buf) {
                fail(&self.context.worker, format!("writing a prediction: {err}"));
            }
        }
        if !out.latencies.is_empty() {
            metrics.observe_latencies(&out.latencies);
        }
        if sent > 0 {
            metrics.predictions_sent.fetch_add(sent, Ordering::Relaxed);
            let mut end = self.context.end.borrow_mut();
            let now = Instant::now();
            end.busy = Some(end.busy.map_or((now, now), |(a, _)| (a, now)));
        }
        for r in out.side {
            match r {
                SinkRecord::Dead {
                    stream,
                    partition,
                    offset,
                    body,
                } => {
                    let topic = &c.topics[stream as usize];
                    let Some(w) = c.dead_letters.as_ref() else {
                        tracing::warn!(
                            topic = %topic,
                            partition,
                            offset,
                            reason = %body.reason,
                            "flowboost: kafka: bad record `{topic}` [{partition}] @{offset}: {}",
                            body.reason
                        );
                        continue;
                    };
                    let letter = DeadLetter {
                        reason: &body.reason,
                        topic,
                        partition,
                        offset,
                        key: body.key.as_deref(),
                        payload: &body.payload,
                    };
                    if let Err(err) = w.send(&mut c.predictions, &letter) {
                        fail(
                            &self.context.worker,
                            format!("writing a dead letter: {err}"),
                        );
                    }
                }
                SinkRecord::Commit(offsets) => {
                    self.state.mark(offsets, c.predictions.stats().produced);
                }
            }
        }
    }

    /// A snapshot's model: checkpointed (with `--checkpoint-dir`), kept to save at the end
    /// (with `--save-model`).
    fn save(&mut self, saved: SavedModel, metrics: &JobMetrics) -> Result<(), String> {
        let Some(c) = self.context.clients.as_mut() else {
            return Ok(());
        };
        if let Some(dir) = &self.context.checkpoints {
            let number = self.state.next_checkpoint();
            checkpoint(dir, &saved, number, c, self.state.latest(), metrics)
                .map_err(|e| e.to_string())?;
            self.state.checkpointed(c.predictions.is_transactional());
        }
        if self.context.writer.is_some() {
            self.last_model = Some(saved);
        }
        Ok(())
    }

    /// The paced producer's next burst, the metrics, and at the end the last deliveries
    /// and the model saved.
    fn deliver(&mut self, done: bool) {
        let Some(c) = self.context.clients.as_mut() else {
            return;
        };
        let metrics = &self.context.metrics;
        // The paced producer: the next burst, if fewer than 5 records are in flight (else
        // its `drained` callback activates this operator when they are).
        let mut errors = Vec::new();
        if let Err(err) = c.predictions.pump() {
            errors.push(format!("writing a prediction: {err}"));
        }
        metrics
            .sink_held
            .store(c.predictions.held() as u64, Ordering::Relaxed);
        let (scored, loss) = self.state.progressive();
        metrics.scored.store(scored, Ordering::Relaxed);
        metrics.set_loss(loss);
        // Deliveries (counted on the producer's thread): never wait, except once at the
        // very end.
        if done
            && !self.finished
            && let Err(err) = c.predictions.flush(Duration::from_secs(60))
        {
            errors.push(format!("delivering predictions: {err}"));
        }
        metrics
            .predictions_out
            .store(c.predictions.delivered_to_topic(), Ordering::Relaxed);
        let stats = c.predictions.stats();
        metrics
            .producer_errors
            .store(stats.client_errors + stats.failed, Ordering::Relaxed);
        for e in errors {
            self.fail(e);
        }
        if done
            && !self.finished
            && let (Some(w), Some(saved)) = (&self.context.writer, self.last_model.take())
            && !self.failed()
            && let Err(err) = w.write_model(&saved)
        {
            self.fail(err.to_string());
        }
    }

    /// Commits the marks whose outputs are all delivered (not after an error: a restart
    /// resumes from the last commit), and collects the broker's answers to the commits
    /// sent: as they come; awaited at the end, so that the job ends with its last commit
    /// done. Returns whether commits are pending.
    fn commit(&mut self, done: bool, failed: bool) -> bool {
        let failed = failed || self.failed();
        let Some(c) = self.context.clients.as_mut() else {
            return false;
        };
        let clock = CommitClock {
            now: Instant::now(),
            done,
            interval: c.commit_interval,
        };
        let delivered = c.predictions.stats().delivered;
        let transactional = c.predictions.is_transactional();
        if let Some(due) = self
            .state
            .commit_due(clock, delivered, transactional, failed)
            && !due.changed.is_empty()
        {
            // Handed to the commit thread: a broker slow to answer never stops the
            // pipeline.
            match c.commits.commit(&named(&c.topics, &due.changed)) {
                Ok(()) => self.state.committed(&due.marks),
                Err(err) => fail(&self.context.worker, format!("committing offsets: {err}")),
            }
        }
        let answers = if done {
            c.commits.wait(Duration::from_secs(60))
        } else {
            c.commits.stats()
        };
        match answers {
            Ok(stats) => {
                let new = self.state.commits_succeeded(stats.succeeded);
                self.context
                    .metrics
                    .commits
                    .fetch_add(new, Ordering::Relaxed);
                stats.pending() > 0
            }
            Err(err) => {
                fail(&self.context.worker, format!("committing offsets: {err}"));
                false
            }
        }
    }
}

/// Records a fatal error on `worker` (the first one wins).
fn fail(worker: &RefCell<WorkerState>, error: String) {
    worker.borrow_mut().fail(error);
}

/// Offsets by topic name.
fn named<'a>(topics: &'a [String; 2], offsets: &[PartitionOffset]) -> Vec<(&'a str, i32, i64)> {
    offsets
        .iter()
        .map(|o| (topics[o.stream as usize].as_str(), o.partition, o.offset))
        .collect()
}

/// Writes a checkpoint and, with a transactional producer, commits the transaction of its
/// outputs with its offsets; then drops the old checkpoints. `number` counts this run's
/// checkpoints (for the fault points of the crash tests, see [`fault`]).
fn checkpoint(
    dir: &Checkpoints,
    saved: &SavedModel,
    number: u64,
    c: &mut SinkClients,
    offsets: &[PartitionOffset],
    metrics: &JobMetrics,
) -> Result<(), CheckpointError> {
    let started = Instant::now();
    if !c.predictions.is_transactional() {
        // At least once: a restart resumes after this checkpoint, so everything before
        // it must be delivered first.
        c.predictions
            .flush(Duration::from_secs(60))
            .map_err(|e| CheckpointError::Deliver(Box::new(e)))?;
    }
    fault("checkpoint-write", number, Some((dir, saved)));
    let path = dir.write(saved).map_err(CheckpointError::Write)?;
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    fault("checkpoint-commit", number, None);
    if c.predictions.is_transactional() {
        c.predictions
            .commit_transaction(&named(&c.topics, offsets), &c.committer)
            .map_err(|e| CheckpointError::Commit {
                path: path.clone(),
                source: Box::new(e),
            })?;
        metrics.commits.fetch_add(1, Ordering::Relaxed);
    }
    dir.mark_committed(Some(&path))
        .map_err(CheckpointError::Mark)?;
    dir.prune().map_err(CheckpointError::Prune)?;
    metrics.checkpoint(bytes, started.elapsed());
    Ok(())
}

/// Why a checkpoint failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The outputs before it could not be delivered (without transactions).
    #[error("delivering the outputs before a checkpoint: {0}")]
    Deliver(#[source] Box<KafkaError>),
    /// It could not be written.
    #[error("writing a checkpoint: {0}")]
    Write(#[source] ModelError),
    /// Its transaction could not be committed.
    #[error("after the checkpoint {}: {source}", path.display())]
    Commit {
        /// The checkpoint written.
        path: PathBuf,
        /// The producer's error.
        source: Box<KafkaError>,
    },
    /// The marker naming the committed checkpoint could not be written.
    #[error("{0}")]
    Mark(String),
    /// The old checkpoints could not be removed.
    #[error("{0}")]
    Prune(String),
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
