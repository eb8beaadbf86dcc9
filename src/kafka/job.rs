//! The Kafka job, one timely dataflow on every worker of every process: the sources read
//! their partitions and decode ([`super::source_operator`]), the merge on worker 0 puts
//! the records in an order given by the data and stamps them into epochs
//! ([`super::merge_operator`]), the model's stage blocks run across all workers, feedback
//! meets its events in the differential join, the sink on worker 0 produces the
//! predictions and dead letters and commits the offsets of what is delivered
//! ([`super::sink_operator`]); a stop or an error anywhere is broadcast to all
//! ([`super::control`]).

use super::checkpoint::{Checkpoints, offset_map};
use super::client_args::kafka_error;
use super::cluster::Cluster;
use super::control::control;
use super::lag::LagWatcher;
use super::merge::{EVENTS, FEEDBACK, MergeOrder, StreamId};
use super::merge_operator::{MergeOptions, merge};
use super::metrics::{self, JobMetrics, MetricsSnapshot};
use super::sink_operator::{SinkClients, SinkEnd, SinkModel, kafka_sink};
use super::source_operator::{Backpressure, KafkaReader, kafka_source};
use super::worker_state::WorkerState;
use crate::eval::{Scorer, epoch_rule};
use crate::model::{ModelWriter, SavedModel, StartChains};
use flowboost_connectors::kafka::{
    CommitThread, DeadLetterTopic, KafkaConfig, KafkaSink, OffsetCommitter, PredictionEncoder,
    RecordFormat, StartFrom, admin, confluent::WriterSchemas,
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

/// Everything a Kafka job needs besides the schema and the model.
#[derive(Clone, Debug)]
pub struct JobOptions {
    /// The Kafka client settings: the bootstrap servers and librdkafka properties for
    /// every client (`Debug` shows no secret).
    pub client: KafkaConfig,
    /// The events topic.
    pub source: String,
    /// The predictions topic.
    pub sink: String,
    /// The feedback topic (labels or clicks for earlier events), if any.
    pub feedback: Option<String>,
    /// The dead-letter topic; without it, bad records are counted and logged only.
    pub dead_letter: Option<String>,
    /// The consumer group offsets are committed to.
    pub group: String,
    /// Where to start reading.
    pub start: StartFrom,
    /// Stop after this long without a record (bounded runs); `None`: run until killed.
    pub exit_when_idle: Option<Duration>,
    /// Timely worker threads: each reads its share of the partitions and holds a block of
    /// the stages.
    pub workers: usize,
    /// Records per dataflow timestamp.
    pub batch: usize,
    /// The event format.
    pub format: RecordFormat,
    /// Confluent Avro events: the writer schemas (the registry's, cached; shared by the
    /// workers).
    pub writer_schemas: Option<Arc<WriterSchemas>>,
    /// Confluent Avro predictions: the registry's id of the prediction schema (`None`:
    /// JSON predictions).
    pub prediction_schema_id: Option<u32>,
    /// How often outputs are flushed and offsets committed.
    pub commit_interval: Duration,
    /// Serve the metrics here (Prometheus text over HTTP).
    pub metrics_addr: Option<String>,
    /// Print the metrics to stderr this often (`None`: never).
    pub report_interval: Option<Duration>,
    /// An unlabeled event (or feedback without its event) waits at most about this many
    /// later events (counted in epochs of `batch` events, rounded up).
    pub pending_ttl: u64,
    /// A learning pass enters the model this many epochs after its feedback met its event
    /// (at least 1; more lets the stage blocks work on later epochs meanwhile).
    pub feedback_lag: u64,
    /// The click window (`--click-window`, logged clicks): every unlabeled event waits its
    /// whole `pending_ttl` window gathering its click records, then is learned from them,
    /// or, without any, as "no shown item clicked" (see
    /// [`JoinConfig::window`](flowboost_operators::engine::feedback::JoinConfig::window)).
    pub click_window: bool,
    /// One model per key (`--keys`): the keys; `None`: one model for every event.
    pub keys: Option<super::ModelKeys>,
    /// A record held this long for other partitions is released anyway (live streams).
    pub max_merge_wait: Duration,
    /// At most this many epochs between the merge and the model's output (backpressure).
    pub max_epochs_in_flight: u64,
    /// The processes of the cluster (one, by default).
    pub cluster: Cluster,
    /// The merge block, in offsets per partition (see [`Merger`](super::merge::Merger)).
    pub merge_block: i64,
    /// What the merge orders records by (`--merge-order`).
    pub merge_order: MergeOrder,
    /// The merge block in milliseconds, with [`MergeOrder::Timestamps`].
    pub merge_block_ms: i64,
    /// A worker whose partitions are all read to their end and quiet this long pauses
    /// fetching and asks the broker for news every
    /// [`IDLE_PROBE`](super::source_operator::IDLE_PROBE) instead (`None`: never pause).
    pub idle_pause: Option<Duration>,
    /// Each partition is read at most this many records ahead of what the merge has
    /// stamped (backpressure when partitions lag each other; at least twice the merge
    /// block).
    pub max_read_ahead: i64,
    /// Start from this model (a warm start; its pending events, if any, wait for their
    /// feedback again).
    pub start_model: Option<Arc<SavedModel>>,
    /// The start model is a checkpoint of this job: continue its stream exactly (its
    /// sequence and epochs, its feedback join, its metrics, and every source partition
    /// from the checkpoint's offsets).
    pub resume: bool,
    /// Write checkpoints here (`--checkpoint-dir`).
    pub checkpoints: Option<Checkpoints>,
    /// How often (`--checkpoint-every`).
    pub checkpoint_every: Duration,
    /// Write the outputs of each checkpoint's epochs in one Kafka transaction, committed
    /// with the checkpoint's offsets once it is durable (exactly-once for read_committed
    /// consumers; needs checkpoints). Off: at-least-once.
    pub transactional: bool,
    /// Save the model here when the job stops gracefully (idle, SIGTERM or SIGINT).
    pub save_model: Option<ModelWriter>,
    /// Set by SIGTERM or SIGINT (or by the caller): stop reading, finish what is in
    /// flight, deliver, commit, save, exit.
    pub stop: Arc<AtomicBool>,
}

impl JobOptions {
    /// Options with the defaults for everything but the brokers and topics.
    pub fn new(brokers: &str, source: &str, sink: &str) -> Self {
        JobOptions {
            client: KafkaConfig::new(brokers),
            source: source.to_string(),
            sink: sink.to_string(),
            feedback: None,
            dead_letter: None,
            group: "flowboost".to_string(),
            start: StartFrom::Committed,
            exit_when_idle: None,
            workers: 1,
            batch: 256,
            format: RecordFormat::Json,
            writer_schemas: None,
            prediction_schema_id: None,
            commit_interval: Duration::from_millis(1000),
            metrics_addr: None,
            report_interval: Some(Duration::from_secs(10)),
            pending_ttl: 1_000_000,
            feedback_lag: 4,
            click_window: false,
            keys: None,
            max_merge_wait: Duration::from_millis(100),
            max_epochs_in_flight: 8,
            cluster: Cluster::default(),
            merge_block: 64,
            merge_order: MergeOrder::Offsets,
            merge_block_ms: DEFAULT_MERGE_BLOCK_MS,
            max_read_ahead: 4096,
            idle_pause: None,
            start_model: None,
            resume: false,
            checkpoints: None,
            checkpoint_every: Duration::from_secs(10),
            transactional: false,
            save_model: None,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The Kafka client settings.
    pub fn kafka(&self) -> KafkaConfig {
        self.client.clone()
    }
}

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

/// The default `--merge-block-ms`: records are ordered by their timestamp in blocks of
/// 100 ms (a block's records are released together, once every partition is read past
/// it; within a block, each topic's and partition's records come together).
pub const DEFAULT_MERGE_BLOCK_MS: i64 = 100;

/// A checkpoint's clamp keys (see [`MergeOrder::Timestamps`]) per `(topic, partition)`,
/// checked against the job's order: a checkpoint written under one order cannot continue
/// under the other (the sequence would not be the one the checkpoint cut).
fn restored_keys(
    options: &JobOptions,
    saved: &SavedModel,
) -> Result<Vec<(StreamId, i32, i64)>, String> {
    let mut keys = Vec::new();
    for o in &saved.header.offsets {
        let stream = if o.topic == options.source {
            EVENTS
        } else if options.feedback.as_ref() == Some(&o.topic) {
            FEEDBACK
        } else {
            continue;
        };
        match (options.merge_order, o.order_key) {
            (MergeOrder::Timestamps, Some(k)) => keys.push((stream, o.partition, k)),
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
    options: &JobOptions,
    schema: &Schema,
    config: &BoosterConfig,
) -> Result<Vec<Booster>, String> {
    let models = options.keys.as_ref().map_or(1, |k| k.len());
    match &options.start_model {
        Some(saved) if !saved.keys().is_empty() => {
            check_model_keys(options.keys.as_ref(), saved, options.resume)?;
            Ok(saved.chains(saved.name())?)
        }
        Some(saved) => Ok(vec![saved.chain(saved.name())?; models]),
        None => (0..models)
            .map(|_| build(schema, config).map_err(String::from))
            .collect(),
    }
}

/// Runs the job until it is stopped (idle for `exit_when_idle`, a signal, an error
/// anywhere in the cluster), on this process's `options.workers` threads (and the other
/// processes' with a cluster). Returns the summary (complete on process 0), or the first
/// error.
pub fn run_job(
    options: JobOptions,
    schema: Schema,
    config: BoosterConfig,
) -> Result<JobSummary, String> {
    if options.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    if options.transactional && options.checkpoints.is_none() {
        return Err("transactions need checkpoints (--checkpoint-dir)".into());
    }
    let restore = match (&options.start_model, options.resume) {
        (Some(saved), true) => Some(saved.clone()),
        _ => None,
    };
    if let Some(saved) = &restore
        && saved
            .body
            .join
            .as_ref()
            .is_some_and(|j| !j.facts.is_empty())
        && options.feedback.is_none()
    {
        return Err("the checkpoint holds events waiting for their feedback: give the job its --feedback topic".into());
    }
    if let Some(saved) = &restore {
        restored_keys(&options, saved)?;
    }
    if let Some(saved) = &options.start_model {
        check_model_keys(options.keys.as_ref(), saved, options.resume)?;
    }
    // The options build a model (checked before anything is created); a fresh build is
    // also what the workers' placeholders are cloned from.
    let fresh = build(&schema, &config)?;
    let kafka = options.kafka();
    // The partitions, known up front: the merge waits for every one of them.
    let mut partitions: Vec<(StreamId, i32)> = Vec::new();
    let events = admin::topic_partitions(&kafka, &options.source)
        .map_err(|e| kafka_error(format_args!("--source kafka:{}", options.source), e))?;
    partitions.extend(events.iter().map(|&p| (EVENTS, p)));
    if let Some(f) = &options.feedback {
        let fb = admin::topic_partitions(&kafka, f)
            .map_err(|e| kafka_error(format_args!("--feedback kafka:{f}"), e))?;
        partitions.extend(fb.iter().map(|&p| (FEEDBACK, p)));
    }
    let process = options.cluster.process;
    if process == 0 {
        // Output topics that do not exist yet are created, with the events' partitions.
        let outputs = [Some(&options.sink), options.dead_letter.as_ref()];
        for t in outputs.into_iter().flatten() {
            admin::create_topic(&kafka, t, events.len() as i32)
                .map_err(|e| kafka_error(format_args!("creating the output topic `{t}`"), e))?;
        }
    }
    let loss_name = if schema.task == Task::Multilabel {
        "rank_loss"
    } else {
        "error_rate"
    };
    let metrics = Arc::new(JobMetrics::new(loss_name));
    metrics
        .click_window
        .store(options.click_window, Ordering::Relaxed);
    for key in options.keys.iter().flat_map(|k| k.names()) {
        metrics.set_key(key, Default::default());
    }
    if process == 0
        && let Some(addr) = &options.metrics_addr
    {
        let bound = metrics::serve(addr, metrics.clone())?;
        tracing::info!(addr = %bound, "flowboost: kafka: metrics on http://{bound}/metrics");
    }
    let peers = options.workers * options.cluster.processes;
    if process == 0 {
        tracing::info!(
            source = %options.source,
            sink = %options.sink,
            partitions = events.len(),
            group = %options.group,
            brokers = %options.client.brokers,
            "flowboost: kafka: {} -> {} ({} partitions{}), group {}, {} worker(s) x {} process(es), {}",
            options.source,
            options.sink,
            events.len(),
            options
                .feedback
                .as_ref()
                .map(|f| format!(", feedback {f}"))
                .unwrap_or_default(),
            options.group,
            options.workers,
            options.cluster.processes,
            config.algorithm
        );
    }
    let started = Instant::now();
    let reporter = Reporter::start(options.report_interval, metrics.clone(), process == 0);
    let lag = LagWatcher::start(
        options.kafka(),
        std::iter::once(options.source.clone())
            .chain(options.feedback.clone())
            .collect(),
        options.group.clone(),
        metrics.clone(),
        process == 0,
    );
    let timely_config = options.cluster.timely_config(options.workers)?;
    let (processes, workers) = (options.cluster.processes, options.workers);
    let shared_metrics = metrics.clone();
    let options = Arc::new(options);
    // The start model, decoded (and checked) once for all of this process's workers.
    let start = Arc::new(StartChains::new(
        start_chains(&options, &schema, &config)?,
        fresh,
        options.workers,
    ));
    let guards = timely::execute(timely_config, move |worker| -> WorkerEnd {
        let index = worker.index();
        let peers = worker.peers();
        let state = Rc::new(RefCell::new(WorkerState::default()));
        let metrics = shared_metrics.clone();
        // Worker 0 holds model 0's terminal and first stage block, or its whole chain
        // with keys: its `chains[0]` is the real one.
        let chains = start.take(index, peers);
        let chain = &chains[0];
        let stages = chain.stages.len();
        let score_dim = chain.score_dim;
        let start_state = match restore.as_ref().and_then(|s| s.body.source.clone()) {
            Some(source) => source,
            None => SourceState {
                seq: chains.iter().map(|c| c.position.seq).max().unwrap_or(0),
                ..SourceState::default()
            },
        };
        let read_ahead = options.max_read_ahead.max(2 * options.merge_block);
        let reader = match KafkaReader::open(&options, &schema, index, peers) {
            Ok(mut r) => match &restore {
                Some(saved) => match r.start_at(&offset_map(&saved.header.offsets)) {
                    Ok(()) => Some(r),
                    Err(e) => {
                        state.borrow_mut().fail(e);
                        None
                    }
                },
                None => Some(r),
            },
            Err(e) => {
                state.borrow_mut().fail(e);
                None
            }
        };
        let reader = reader.map(|mut r| {
            r.limit_from_start(read_ahead);
            r
        });
        let clients = if index == 0 {
            match sink_clients(&options, &schema) {
                Ok(c) => Some(c),
                Err(e) => {
                    state.borrow_mut().fail(e);
                    None
                }
            }
        } else {
            None
        };
        let feedback = options.feedback.as_ref().map(|_| FeedbackSetup {
            join: JoinConfig {
                ttl: Some(
                    options
                        .pending_ttl
                        .div_ceil(options.batch.max(1) as u64)
                        .max(1),
                ),
                lag: options.feedback_lag.max(1),
                window: options.click_window,
            },
            topk: config.topk,
            labels: schema.num_labels(),
            restored: restore
                .as_ref()
                .and_then(|s| s.body.join.clone())
                .map(Arc::new),
        });
        let merge_options = MergeOptions {
            partitions: partitions.clone(),
            block: match options.merge_order {
                MergeOrder::Offsets => options.merge_block,
                MergeOrder::Timestamps => options.merge_block_ms,
            },
            order: options.merge_order,
            restored_keys: restore
                .as_ref()
                .map(|saved| restored_keys(&options, saved).unwrap_or_default())
                .unwrap_or_default(),
            epoch: epoch_rule(options.batch, false),
            max_wait: options.max_merge_wait,
            exit_when_idle: options.exit_when_idle,
            max_epochs_in_flight: options.max_epochs_in_flight,
            read_ahead,
            feedback: options.feedback.is_some(),
            snapshot_at_end: options.save_model.is_some() || options.checkpoints.is_some(),
            end_epochs: if options.feedback.is_some() {
                options.feedback_lag.max(1)
            } else {
                1
            },
            checkpoint_every: options
                .checkpoints
                .as_ref()
                .map(|_| options.checkpoint_every),
            hold_for_checkpoint: options.transactional,
            start: start_state,
            resumed_at_end: restore.as_ref().is_some_and(|s| s.header.at_end),
        };
        let progress = restore.as_ref().and_then(|s| s.body.progress.clone());
        let model = SinkModel {
            writer: options.save_model.clone(),
            checkpoints: options.checkpoints.clone(),
            config: config.clone(),
            schema: schema.clone(),
            seen: progress.as_ref().map_or(0, |p| p.seen),
            stages,
            score_dim,
            restored: restore
                .as_ref()
                .and_then(|s| s.body.join.as_ref())
                .map_or_else(JoinCounts::default, |j| j.counts),
            keys: options.keys.clone(),
            key_progress: restore
                .as_ref()
                .map(|s| s.body.key_progress.clone())
                .unwrap_or_default(),
            resumed_end: restore
                .as_ref()
                .filter(|s| s.header.at_end && index == 0)
                .map(|s| Box::new(SavedModel::clone(s))),
        };
        let scorer = progress.map_or_else(
            || Scorer::new(schema.task, schema.num_labels()),
            |p| p.scorer,
        );
        let end = Rc::new(RefCell::new(SinkEnd::default()));
        let merged_probe = ProbeHandle::new();
        let done_probe = ProbeHandle::new();
        let signal = options.stop.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            let control = control(scope, signal, state.clone());
            let messages = kafka_source(
                control.clone(),
                reader,
                Backpressure {
                    merged: merged_probe.clone(),
                    done: done_probe.clone(),
                    max_epochs: options.max_epochs_in_flight,
                },
                options.idle_pause,
                metrics.clone(),
                state.clone(),
            );
            let merged = merge(
                messages,
                control,
                merge_options,
                done_probe.clone(),
                metrics.clone(),
                state.clone(),
            );
            let items = merged.items.probe_with(&merged_probe);
            let streams = pipeline(items.clone(), index, peers, chains, feedback);
            let outputs = streams.outputs.probe_with(&done_probe);
            kafka_sink(
                outputs,
                merged.side,
                items,
                streams.join,
                clients,
                model,
                scorer,
                metrics.clone(),
                state.clone(),
                end.clone(),
            );
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
    })?;
    let mut error = None;
    let mut busy = None;
    let mut consumer_errors = 0;
    let mut last_consumer_error = None;
    let mut worker_cpu_seconds = Vec::new();
    for r in guards.join() {
        match r {
            Ok(end) => {
                worker_cpu_seconds.extend(end.cpu_seconds);
                if let Some(e) = end.error {
                    error.get_or_insert(e);
                }
                busy = busy.or(end.busy);
                consumer_errors += end.consumer_errors;
                last_consumer_error = end.last_consumer_error.or(last_consumer_error);
            }
            Err(e) => {
                error.get_or_insert(format!("a worker failed: {e}"));
            }
        }
    }
    reporter.stop();
    lag.stop();
    if let Some(e) = error {
        return Err(e);
    }
    let first = metrics.first_event_at();
    let metrics_producer_errors = metrics.producer_errors.load(Ordering::Relaxed);
    let metrics = metrics.snapshot();
    // Process 0 counts every record (its worker 0 merges them all).
    if process == 0
        && let Some(e) = read_nothing_error(
            metrics.events_in + metrics.feedback_in,
            consumer_errors,
            last_consumer_error.as_deref(),
        )
    {
        return Err(e);
    }
    let busy_seconds = match (first, busy) {
        (Some(a), Some((_, b))) => b.saturating_duration_since(a).as_secs_f64(),
        _ => 0.0,
    };
    let _ = peers;
    let _ = process;
    Ok(JobSummary {
        events_per_second: if busy_seconds > 0.0 {
            metrics.events_in as f64 / busy_seconds
        } else {
            0.0
        },
        feedback_unmatched: metrics.join.unmatched(),
        metrics,
        processes,
        consumer_errors,
        producer_errors: metrics_producer_errors,
        workers,
        seconds: started.elapsed().as_secs_f64(),
        busy_seconds,
        worker_cpu_seconds,
    })
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
fn sink_clients(options: &JobOptions, schema: &Schema) -> Result<SinkClients, String> {
    let mut kafka = options.kafka();
    let wake: Arc<std::sync::OnceLock<timely::scheduling::SyncActivator>> = Arc::default();
    let predictions = if options.transactional {
        // A transaction stays open from one checkpoint to the next: give it room.
        if !kafka
            .settings
            .iter()
            .any(|(k, _)| k == "transaction.timeout.ms")
        {
            let ms = (options.checkpoint_every.as_millis() * 6).clamp(60_000, 900_000);
            kafka = kafka.set("transaction.timeout.ms", ms.to_string());
        }
        KafkaSink::transactional(&kafka, &options.sink, &transactional_id(options))
    } else {
        // Paced: nothing waits in librdkafka that it may not send yet (see
        // `KafkaSink::paced`); the sink operator hands over the next burst when woken.
        let wake = Arc::clone(&wake);
        KafkaSink::paced(&kafka, &options.sink, move || {
            if let Some(activator) = wake.get() {
                let _ = activator.activate();
            }
        })
    }
    .map_err(|e| format!("--sink kafka:{}: {e}", options.sink))?;
    let dead_letters = options
        .dead_letter
        .as_ref()
        .map(|t| DeadLetterTopic::new(&kafka, t));
    let committer =
        Arc::new(OffsetCommitter::new(&kafka, &options.group).map_err(|e| e.to_string())?);
    let commits = CommitThread::start(Arc::clone(&committer)).map_err(|e| e.to_string())?;
    Ok(SinkClients {
        predictions,
        dead_letters,
        committer,
        commits,
        topics: [
            options.source.clone(),
            options.feedback.clone().unwrap_or_default(),
        ],
        encoder: match options.prediction_schema_id {
            Some(id) => PredictionEncoder::new(schema).with_confluent_avro(id),
            None => PredictionEncoder::new(schema),
        },
        commit_interval: options.commit_interval,
        wake,
    })
}

/// The job's `transactional.id`: the same for every incarnation of one job (its group and
/// sink), so that a restarted job fences the one before and aborts what it left open.
pub fn transactional_id(options: &JobOptions) -> String {
    format!("flowboost-{}-{}", options.group, options.sink)
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
