//! The Kafka job, one timely dataflow on every worker of every process: the sources read
//! their partitions and decode ([`super::source_operator`]), the merge on worker 0 puts
//! the records in an order given by the data and stamps them into epochs
//! ([`super::merge_operator`]), the model's stage blocks run across all workers, feedback
//! meets its events in the differential join, the sink on worker 0 produces the
//! predictions and dead letters and commits the offsets of what is delivered
//! ([`super::sink_operator`]); a stop or an error anywhere is broadcast to all
//! ([`super::control`]).

use super::checkpoint::offset_map;
use super::client_args::kafka_error;
use super::control::control;
use super::job_config::JobConfig;
use super::lag::LagWatcher;
use super::merge::{EVENTS, FEEDBACK, MergeOrder, StreamId};
use super::merge_operator::{MergeContext, MergeExt};
use super::merge_state::MergeOptions;
use super::metrics::{self, JobMetrics, MetricsSnapshot};
use super::partition_offset::PartitionKey;
use super::read_limits::ReadLimits;
use super::sink_operator::{KafkaSinkExt, SinkClients, SinkContext, SinkEnd, SinkInputs};
use super::sink_state::SinkModel;
use super::source_operator::{Backpressure, KafkaReader, KafkaSourceExt, SourceContext};
use super::worker_state::WorkerState;
use crate::eval::{Scorer, epoch_rule};
use crate::model::{SavedModel, StartChains};
use flowboost_connectors::kafka::{
    CommitThread, DeadLetterTopic, KafkaSink, OffsetCommitter, PredictionEncoder, admin,
};
use flowboost_operators::boosters::{Booster, BoosterConfig, build};
use flowboost_operators::data::{Schema, Task};
use flowboost_operators::dataflow::pipeline;
use flowboost_operators::engine::feedback::{JoinConfig, JoinCounts};
use flowboost_operators::engine::{FeedbackSetup, SourceState};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use timely::dataflow::ProbeHandle;
use timely::dataflow::operators::Probe;

/// What a finished job reports.
#[derive(Clone, Debug, Serialize)]
pub struct JobSummary {
    /// The counters at the end.
    #[serde(flatten)]
    pub metrics: MetricsSnapshot,
    /// Feedback records that joined no event before they expired.
    pub feedback_unmatched: u64,
    /// The processes of the cluster.
    pub processes: usize,
    /// Transient consumer errors met (retried by the client).
    pub consumer_errors: u64,
    /// Producer errors met: transient client errors (retried by the client) and failed
    /// deliveries (which fail the job).
    pub producer_errors: u64,
    /// Worker threads.
    pub workers: usize,
    /// Seconds from the start to the end of the job.
    pub seconds: f64,
    /// Seconds from the first record read to the last output delivered.
    pub busy_seconds: f64,
    /// Events per busy second.
    pub events_per_second: f64,
    /// CPU seconds each worker thread of this process used (Linux; empty elsewhere).
    pub worker_cpu_seconds: Vec<f64>,
}

/// A checkpoint's clamp keys (see [`MergeOrder::Timestamps`]) per `(topic, partition)`,
/// checked against the job's order: a checkpoint written under one order cannot continue
/// under the other (the sequence would not be the one the checkpoint cut).
fn restored_keys(job: &JobConfig, saved: &SavedModel) -> Result<Vec<PartitionKey>, String> {
    let mut keys = Vec::new();
    for o in &saved.header.offsets {
        let stream = if o.topic == job.topics.source {
            EVENTS
        } else if job.topics.feedback.as_ref() == Some(&o.topic) {
            FEEDBACK
        } else {
            continue;
        };
        match (job.merge.order, o.order_key) {
            (MergeOrder::Timestamps, Some(k)) => {
                keys.push(PartitionKey::new(stream, o.partition, k))
            }
            (MergeOrder::Offsets, None) => {}
            (order, _) => {
                let written = if o.order_key.is_some() {
                    "timestamps"
                } else {
                    "offsets"
                };
                return Err(format!(
                    "the checkpoint was written with --merge-order {written}: it continues only with that order, not --merge-order {}",
                    order.name()
                ));
            }
        }
    }
    Ok(keys)
}

/// Whether a job with `keys` (`None`: one model for every event) can start from `saved`
/// (`resume`: continue it as its checkpoint): a file with one model per key loads into a
/// job with the same keys in the same order; a file without keys is a warm start for
/// every key (not a checkpoint to continue: its stream was not keyed).
pub fn check_model_keys(
    keys: Option<&super::ModelKeys>,
    saved: &SavedModel,
    resume: bool,
) -> Result<(), String> {
    let saved_keys = saved.keys();
    match keys {
        Some(k) if saved_keys.is_empty() && resume => Err(format!(
            "--keys {}: the checkpoint is of a job without keys (one model for every event); use a new --group and --checkpoint-dir for the keyed job",
            k.names().join(",")
        )),
        Some(k) if !saved_keys.is_empty() && k.names() != saved_keys => Err(format!(
            "--keys {}: the model file holds the models of the keys {} (a job loads them with the same keys, in the same order)",
            k.names().join(","),
            saved_keys.join(",")
        )),
        None if !saved_keys.is_empty() => Err(format!(
            "the model file holds one model per key ({}): run the job with --keys {}",
            saved_keys.join(", "),
            saved_keys.join(",")
        )),
        _ => Ok(()),
    }
}

/// The chains a worker starts from, one per model (one per key with `--keys`): the start
/// model's (every key's own from a file with keys; the one model, for every key, from a
/// file without), else fresh builds (every key's model starts as the one model of a job
/// without keys does: the same build, the same seeds).
fn start_chains(
    job: &JobConfig,
    schema: &Schema,
    config: &BoosterConfig,
) -> Result<Vec<Booster>, String> {
    let models = job.keys.as_ref().map_or(1, |k| k.len());
    match &job.run.start_model {
        Some(saved) if !saved.keys().is_empty() => {
            check_model_keys(job.keys.as_ref(), saved, job.run.resume)?;
            Ok(saved.chains(saved.name())?)
        }
        Some(saved) => Ok(vec![saved.chain(saved.name())?; models]),
        None => (0..models)
            .map(|_| build(schema, config).map_err(|e| e.to_string()))
            .collect(),
    }
}

/// Runs the job until it is stopped (idle for `exit_when_idle`, a signal, an error
/// anywhere in the cluster), on this process's `job.run.workers` threads (and the other
/// processes' with a cluster). Returns the summary (complete on process 0), or the first
/// error.
pub fn run_job(
    job: JobConfig,
    schema: Schema,
    config: BoosterConfig,
) -> Result<JobSummary, String> {
    let (plan, fresh) = plan(&job, &schema, &config)?;
    let started = Instant::now();
    let process = job.run.cluster.process;
    let metrics = Arc::clone(&plan.metrics);
    let reporter = Reporter::start(job.run.report_interval, metrics.clone(), process == 0);
    let lag = LagWatcher::start(
        job.kafka(),
        std::iter::once(job.topics.source.clone())
            .chain(job.topics.feedback.clone())
            .collect(),
        job.connection.group.clone(),
        metrics.clone(),
        process == 0,
    );
    let timely_config = job.run.cluster.timely_config(job.run.workers)?;
    let (processes, workers) = (job.run.cluster.processes, job.run.workers);
    // The start model, decoded (and checked) once for all of this process's workers.
    let start = StartChains::new(
        start_chains(&job, &schema, &config)?,
        fresh,
        job.run.workers,
    );
    let worker_job = Arc::new(WorkerJob {
        job,
        schema,
        config,
        plan,
        start,
    });
    let guards = timely::execute(timely_config, move |worker| worker_job.run_worker(worker))?;
    let ends = guards.join();
    reporter.stop();
    lag.stop();
    summarize(ends, &metrics, process == 0, started).map(|s| s.with_cluster(processes, workers))
}

/// What a job knows before its workers start.
struct JobPlan {
    /// The checkpoint it resumes, if it does.
    restore: Option<Arc<SavedModel>>,
    /// The partitions of both topics (the merge waits for every one of them).
    partitions: Vec<(StreamId, i32)>,
    /// The job's counters.
    metrics: Arc<JobMetrics>,
}

/// Checks the options against each other and the start model, builds the model once,
/// asks the broker for the partitions, creates the output topics (process 0), and starts
/// the metrics. Returns the plan and a fresh build of the model (the workers'
/// placeholders are cloned from it).
fn plan(
    job: &JobConfig,
    schema: &Schema,
    config: &BoosterConfig,
) -> Result<(JobPlan, Booster), String> {
    job.validate().map_err(|e| e.to_string())?;
    let restore = match (&job.run.start_model, job.run.resume) {
        (Some(saved), true) => Some(saved.clone()),
        _ => None,
    };
    if let Some(saved) = &restore
        && saved
            .body
            .join
            .as_ref()
            .is_some_and(|j| !j.facts.is_empty())
        && job.topics.feedback.is_none()
    {
        return Err("the checkpoint holds events waiting for their feedback: give the job its --feedback topic".into());
    }
    if let Some(saved) = &restore {
        restored_keys(job, saved)?;
    }
    if let Some(saved) = &job.run.start_model {
        check_model_keys(job.keys.as_ref(), saved, job.run.resume)?;
    }
    // The options build a model (checked before anything is created); a fresh build is
    // also what the workers' placeholders are cloned from.
    let fresh = build(schema, config).map_err(|e| e.to_string())?;
    let (partitions, events) = topics(job)?;
    let metrics = start_metrics(job, schema)?;
    if job.run.cluster.process == 0 {
        log_start(job, config, events);
    }
    let plan = JobPlan {
        restore,
        partitions,
        metrics,
    };
    Ok((plan, fresh))
}

/// The partitions, known up front (the merge waits for every one of them), and how many
/// the events topic has; on process 0, the output topics that do not exist yet are
/// created, with the events' partitions.
fn topics(job: &JobConfig) -> Result<(Vec<(StreamId, i32)>, usize), String> {
    let kafka = job.kafka();
    let mut partitions: Vec<(StreamId, i32)> = Vec::new();
    let events = admin::topic_partitions(&kafka, &job.topics.source)
        .map_err(|e| kafka_error(format_args!("--source kafka:{}", job.topics.source), e))?;
    partitions.extend(events.iter().map(|&p| (EVENTS, p)));
    if let Some(f) = &job.topics.feedback {
        let fb = admin::topic_partitions(&kafka, f)
            .map_err(|e| kafka_error(format_args!("--feedback kafka:{f}"), e))?;
        partitions.extend(fb.iter().map(|&p| (FEEDBACK, p)));
    }
    if job.run.cluster.process == 0 {
        let outputs = [Some(&job.topics.sink), job.topics.dead_letter.as_ref()];
        for t in outputs.into_iter().flatten() {
            admin::create_topic(&kafka, t, events.len() as i32)
                .map_err(|e| kafka_error(format_args!("creating the output topic `{t}`"), e))?;
        }
    }
    Ok((partitions, events.len()))
}

/// The job's counters, served over HTTP on process 0 with `--metrics-addr`.
fn start_metrics(job: &JobConfig, schema: &Schema) -> Result<Arc<JobMetrics>, String> {
    let loss_name = if schema.task == Task::Multilabel {
        "rank_loss"
    } else {
        "error_rate"
    };
    let metrics = Arc::new(JobMetrics::new(loss_name));
    metrics
        .click_window
        .store(job.feedback.click_window, Ordering::Relaxed);
    for key in job.keys.iter().flat_map(|k| k.names()) {
        metrics.set_key(key, Default::default());
    }
    if job.run.cluster.process == 0
        && let Some(addr) = &job.run.metrics_addr
    {
        let bound = metrics::serve(addr, metrics.clone())?;
        tracing::info!(addr = %bound, "flowboost: kafka: metrics on http://{bound}/metrics");
    }
    Ok(metrics)
}

/// The job's first line (process 0).
fn log_start(job: &JobConfig, config: &BoosterConfig, partitions: usize) {
    tracing::info!(
        source = %job.topics.source,
        sink = %job.topics.sink,
        partitions,
        group = %job.connection.group,
        brokers = %job.connection.client.brokers,
        "flowboost: kafka: {} -> {} ({} partitions{}), group {}, {} worker(s) x {} process(es), {}",
        job.topics.source,
        job.topics.sink,
        partitions,
        job.topics
            .feedback
            .as_ref()
            .map(|f| format!(", feedback {f}"))
            .unwrap_or_default(),
        job.connection.group,
        job.run.workers,
        job.run.cluster.processes,
        config.algorithm
    );
}

/// What every worker of this process builds its dataflow from.
struct WorkerJob {
    job: JobConfig,
    schema: Schema,
    config: BoosterConfig,
    plan: JobPlan,
    start: StartChains,
}

impl WorkerJob {
    /// One worker: builds the dataflow (source, merge, the model's pipeline, sink), runs
    /// it until it ends, and reports.
    fn run_worker(&self, worker: &mut timely::worker::Worker) -> WorkerEnd {
        let (index, peers) = (worker.index(), worker.peers());
        let job = &self.job;
        let state = Rc::new(RefCell::new(WorkerState::default()));
        let metrics = self.plan.metrics.clone();
        // Worker 0 holds model 0's terminal and first stage block, or its whole chain
        // with keys: its `chains[0]` is the real one.
        let chains = self.start.take(index, peers);
        // (At least twice the merge block: see `JobConfig::validate`.)
        let read_ahead = job.merge.max_read_ahead;
        let reader = self.reader(index, peers, read_ahead, &state);
        let clients = (index == 0)
            .then(|| sink_clients(job, &self.schema))
            .and_then(|c| c.map_err(|e| state.borrow_mut().fail(e)).ok());
        let merge_options = self.merge_options(&chains, read_ahead);
        let model = self.sink_model(&chains, index);
        let feedback = self.feedback_setup();
        let end = Rc::new(RefCell::new(SinkEnd::default()));
        let merged_probe = ProbeHandle::new();
        let done_probe = ProbeHandle::new();
        worker.dataflow::<u64, _, _>(|scope| {
            let limits = ReadLimits::default();
            let control = control(scope, job.run.stop.clone(), state.clone(), limits.clone());
            let backpressure = Backpressure {
                merged: merged_probe.clone(),
                done: done_probe.clone(),
                max_epochs: job.merge.max_epochs_in_flight,
            };
            let source = SourceContext {
                backpressure,
                idle_pause: job.source.idle_pause,
                metrics: metrics.clone(),
                worker: state.clone(),
            };
            let messages = control.clone().kafka_source(reader, source);
            let context = MergeContext {
                done: done_probe.clone(),
                metrics: metrics.clone(),
                worker: state.clone(),
                limits,
            };
            let merged = messages.merge_sources(control, merge_options, context);
            let items = merged.items.probe_with(&merged_probe);
            let streams = pipeline(items.clone(), index, peers, chains, feedback);
            let outputs = streams.outputs.probe_with(&done_probe);
            let inputs = SinkInputs {
                side: merged.side,
                items,
                join: streams.join,
            };
            let context = SinkContext {
                clients,
                writer: job.sink.save_model.clone(),
                checkpoints: job.sink.checkpoints.clone(),
                metrics: metrics.clone(),
                worker: state.clone(),
                end: end.clone(),
            };
            outputs.kafka_sink(inputs, model, context);
        });
        while worker.step_or_park(None) {}
        let state = state.borrow();
        let busy = end.borrow().busy;
        WorkerEnd {
            error: state.error.clone(),
            busy,
            consumer_errors: state.consumer_errors,
            last_consumer_error: state.last_consumer_error.clone(),
            cpu_seconds: thread_cpu_seconds(),
        }
    }

    /// This worker's consumers, started at the checkpoint's offsets when resuming, and
    /// limited to `read_ahead` past their start (`None`, the error noted, if they fail).
    fn reader(
        &self,
        index: usize,
        peers: usize,
        read_ahead: i64,
        state: &RefCell<WorkerState>,
    ) -> Option<KafkaReader> {
        let opened =
            KafkaReader::open((&self.job).into(), &self.schema, index, peers).and_then(|mut r| {
                if let Some(saved) = &self.plan.restore {
                    r.start_at(&offset_map(&saved.header.offsets))?;
                }
                Ok(r)
            });
        match opened {
            Ok(mut r) => {
                r.limit_from_start(read_ahead);
                Some(r)
            }
            Err(e) => {
                state.borrow_mut().fail(e.to_string());
                None
            }
        }
    }

    /// The feedback join's settings, with a feedback topic.
    fn feedback_setup(&self) -> Option<FeedbackSetup> {
        let job = &self.job;
        job.topics.feedback.as_ref()?;
        Some(FeedbackSetup {
            join: JoinConfig {
                ttl: Some(
                    job.feedback
                        .pending_ttl
                        .div_ceil(job.merge.batch.max(1) as u64)
                        .max(1),
                ),
                lag: job.feedback.lag.max(1),
                window: job.feedback.click_window,
            },
            topk: self.config.topk,
            labels: self.schema.num_labels(),
            restored: self
                .plan
                .restore
                .as_ref()
                .and_then(|s| s.body.join.clone())
                .map(Arc::new),
        })
    }

    /// How the merge cuts and paces the sequence.
    fn merge_options(&self, chains: &[Booster], read_ahead: i64) -> MergeOptions {
        let job = &self.job;
        let restore = self.plan.restore.as_ref();
        let start = match restore.and_then(|s| s.body.source.clone()) {
            Some(source) => source,
            None => SourceState {
                seq: chains.iter().map(|c| c.position.seq).max().unwrap_or(0),
                ..SourceState::default()
            },
        };
        MergeOptions {
            partitions: self.plan.partitions.clone(),
            block: job.merge.order_block(),
            order: job.merge.order,
            restored_keys: restore
                .map(|saved| restored_keys(job, saved).unwrap_or_default())
                .unwrap_or_default(),
            epoch: epoch_rule(job.merge.batch, false),
            max_wait: job.merge.max_wait,
            exit_when_idle: job.merge.exit_when_idle,
            max_epochs_in_flight: job.merge.max_epochs_in_flight,
            read_ahead,
            feedback: job.topics.feedback.is_some(),
            snapshot_at_end: job.sink.save_model.is_some() || job.sink.checkpoints.is_some(),
            end_epochs: if job.topics.feedback.is_some() {
                job.feedback.lag.max(1)
            } else {
                1
            },
            checkpoint_every: job
                .sink
                .checkpoints
                .as_ref()
                .map(|_| job.sink.checkpoint_every),
            hold_for_checkpoint: job.sink.transactional(),
            start,
            resumed_at_end: restore.is_some_and(|s| s.header.at_end),
        }
    }

    /// What the sink knows about the model (worker `index`'s).
    fn sink_model(&self, chains: &[Booster], index: usize) -> SinkModel {
        let job = &self.job;
        let restore = self.plan.restore.as_ref();
        let progress = restore.and_then(|s| s.body.progress.clone());
        SinkModel {
            config: self.config.clone(),
            schema: self.schema.clone(),
            seen: progress.as_ref().map_or(0, |p| p.seen),
            stages: chains.first().map_or(0, |c| c.stages.len()),
            score_dim: chains.first().map_or(0, |c| c.score_dim),
            restored: restore
                .and_then(|s| s.body.join.as_ref())
                .map_or_else(JoinCounts::default, |j| j.counts),
            keys: job.keys.clone(),
            key_progress: restore
                .map(|s| s.body.key_progress.clone())
                .unwrap_or_default(),
            resumed_end: restore
                .filter(|s| s.header.at_end && index == 0)
                .map(|s| Box::new(SavedModel::clone(s))),
            scorer: progress.map_or_else(
                || Scorer::new(self.schema.task, self.schema.num_labels()),
                |p| p.scorer,
            ),
            topics: [
                job.topics.source.clone(),
                job.topics.feedback.clone().unwrap_or_default(),
            ],
        }
    }
}

/// The job's summary from its workers' ends (the first error, if any).
fn summarize(
    ends: Vec<Result<WorkerEnd, String>>,
    metrics: &JobMetrics,
    process_0: bool,
    started: Instant,
) -> Result<JobSummary, String> {
    let mut all = WorkerEnd::default();
    let mut error = None;
    let mut worker_cpu_seconds = Vec::new();
    for r in ends {
        match r {
            Ok(end) => {
                worker_cpu_seconds.extend(end.cpu_seconds);
                if let Some(e) = end.error {
                    error.get_or_insert(e);
                }
                all.busy = all.busy.or(end.busy);
                all.consumer_errors += end.consumer_errors;
                all.last_consumer_error = end.last_consumer_error.or(all.last_consumer_error);
            }
            Err(e) => {
                error.get_or_insert(format!("a worker failed: {e}"));
            }
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    let first = metrics.first_event_at();
    let producer_errors = metrics.producer_errors.load(Ordering::Relaxed);
    let metrics = metrics.snapshot();
    // Process 0 counts every record (its worker 0 merges them all).
    if process_0
        && let Some(e) = read_nothing_error(
            metrics.events_in + metrics.feedback_in,
            all.consumer_errors,
            all.last_consumer_error.as_deref(),
        )
    {
        return Err(e);
    }
    let busy_seconds = match (first, all.busy) {
        (Some(a), Some((_, b))) => b.saturating_duration_since(a).as_secs_f64(),
        _ => 0.0,
    };
    Ok(JobSummary {
        events_per_second: if busy_seconds > 0.0 {
            metrics.events_in as f64 / busy_seconds
        } else {
            0.0
        },
        feedback_unmatched: metrics.join.unmatched(),
        metrics,
        processes: 0,
        consumer_errors: all.consumer_errors,
        producer_errors,
        workers: 0,
        seconds: started.elapsed().as_secs_f64(),
        busy_seconds,
        worker_cpu_seconds,
    })
}

impl JobSummary {
    /// The summary, with the cluster's size.
    fn with_cluster(mut self, processes: usize, workers: usize) -> Self {
        self.processes = processes;
        self.workers = workers;
        self
    }
}

/// The CPU time the calling thread has used, from Linux's `/proc/thread-self/schedstat`
/// (its first field: nanoseconds on a CPU); `None` where that file does not exist.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// What one worker reports when the job ends.
#[derive(Debug, Default)]
struct WorkerEnd {
    error: Option<String>,
    busy: Option<(Instant, Instant)>,
    consumer_errors: u64,
    last_consumer_error: Option<String>,
    cpu_seconds: Option<f64>,
}

/// The error of a job that read nothing while its consumers met errors (a topic the
/// broker could not serve, say): it must not end as a success with "0 events".
fn read_nothing_error(records: u64, errors: u64, last: Option<&str>) -> Option<String> {
    (records == 0 && errors > 0).then(|| {
        format!(
            "read no record, and the consumers met {errors} error(s); the last: {}",
            last.unwrap_or("(not kept)")
        )
    })
}

/// Worker 0's Kafka clients.
fn sink_clients(job: &JobConfig, schema: &Schema) -> Result<SinkClients, String> {
    let mut kafka = job.kafka();
    let wake: Arc<std::sync::OnceLock<timely::scheduling::SyncActivator>> = Arc::default();
    let predictions = if job.sink.transactional() {
        // A transaction stays open from one checkpoint to the next: give it room.
        if !kafka
            .settings
            .iter()
            .any(|(k, _)| k == "transaction.timeout.ms")
        {
            let ms = (job.sink.checkpoint_every.as_millis() * 6).clamp(60_000, 900_000);
            kafka = kafka.set("transaction.timeout.ms", ms.to_string());
        }
        KafkaSink::transactional(&kafka, &job.topics.sink, &job.transactional_id())
    } else {
        // Paced: nothing waits in librdkafka that it may not send yet (see
        // `KafkaSink::paced`); the sink operator hands over the next burst when woken.
        let wake = Arc::clone(&wake);
        KafkaSink::paced(&kafka, &job.topics.sink, move || {
            if let Some(activator) = wake.get() {
                let _ = activator.activate();
            }
        })
    }
    .map_err(|e| format!("--sink kafka:{}: {e}", job.topics.sink))?;
    let dead_letters = job
        .topics
        .dead_letter
        .as_ref()
        .map(|t| DeadLetterTopic::new(&kafka, t));
    let committer =
        Arc::new(OffsetCommitter::new(&kafka, &job.connection.group).map_err(|e| e.to_string())?);
    let commits = CommitThread::start(Arc::clone(&committer)).map_err(|e| e.to_string())?;
    Ok(SinkClients {
        predictions,
        dead_letters,
        committer,
        commits,
        topics: [
            job.topics.source.clone(),
            job.topics.feedback.clone().unwrap_or_default(),
        ],
        encoder: match job.sink.prediction_schema_id {
            Some(id) => PredictionEncoder::new(schema).with_confluent_avro(id),
            None => PredictionEncoder::new(schema),
        },
        commit_interval: job.sink.commit_interval,
        wake,
    })
}

/// Prints the metrics every `every` (on process 0) from a thread of its own.
struct Reporter {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reporter {
    fn start(every: Option<Duration>, metrics: Arc<JobMetrics>, on: bool) -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = every.filter(|_| on).and_then(|every| {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("flowboost-report".into())
                .spawn(move || {
                    let mut last = Instant::now();
                    while !stop.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(100));
                        if last.elapsed() >= every {
                            tracing::info!(target: "flowboost::metrics", "{}", metrics.line());
                            last = Instant::now();
                        }
                    }
                })
                .ok()
        });
        Reporter { stop, thread }
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_nothing_error;

    #[test]
    fn a_job_that_read_nothing_because_of_errors_fails() {
        let e = read_nothing_error(0, 3, Some("Broker: Unknown topic or partition")).unwrap();
        assert!(
            e.contains("3 error(s)") && e.contains("Unknown topic"),
            "{e}"
        );
        assert_eq!(
            read_nothing_error(0, 0, None),
            None,
            "an empty topic is no error"
        );
        assert_eq!(
            read_nothing_error(5, 3, Some("x")),
            None,
            "it read something"
        );
    }
}
