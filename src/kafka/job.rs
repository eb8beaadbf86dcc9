//! The Kafka job: events from a topic through the boosting dataflow, predictions to a
//! topic, delayed feedback joined by event id, bad records to a dead-letter topic, offsets
//! committed once the outputs they cover are delivered.

use super::merge::{EVENTS, FEEDBACK, Merger, Raw, RawRecord, StreamId};
use super::metrics::{self, JobMetrics, MetricsSnapshot};
use crate::eval::Scorer;
use crate::model::{ModelWriter, Progress as SavedProgress, SavedModel};
use flowboost_connectors::kafka::{
    DeadLetter, DeadLetterWriter, FeedbackKind, FeedbackRecord, KafkaConfig, KafkaSink,
    OffsetCommitter, PartitionedSource, PredictionEncoder, PredictionOutput, RecordDecoder,
    RecordFormat, StartFrom, admin,
};
use flowboost_operators::boosters::{BoosterConfig, build};
use flowboost_operators::data::{Example, Schema, Task};
use flowboost_operators::dataflow::pipeline;
use flowboost_operators::engine::{
    ChainSnapshot, InFlight, Miss, PendingEvents, Position, Prediction, SnapshotBoard,
};
use flowboost_operators::topk::observe;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{Input, Probe};

/// Everything a Kafka job needs besides the schema and the model.
#[derive(Clone, Debug)]
pub struct JobOptions {
    /// The bootstrap servers.
    pub brokers: String,
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
    /// How often outputs are flushed and offsets committed.
    pub commit_interval: Duration,
    /// Serve the metrics here (Prometheus text over HTTP).
    pub metrics_addr: Option<String>,
    /// Print the metrics to stderr this often (`None`: never).
    pub report_interval: Option<Duration>,
    /// At most this many unlabeled events wait for feedback.
    pub pending_capacity: usize,
    /// An unlabeled event waits at most this many later events for its feedback.
    pub pending_ttl: u64,
    /// The merge block, in offsets per partition (see [`Merger`]).
    pub merge_block: i64,
    /// librdkafka properties for every client.
    pub settings: Vec<(String, String)>,
    /// Start from this model (a warm start; its pending events, if any, wait for their
    /// feedback again).
    pub start_model: Option<Arc<SavedModel>>,
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
            brokers: brokers.to_string(),
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
            commit_interval: Duration::from_millis(1000),
            metrics_addr: None,
            report_interval: Some(Duration::from_secs(10)),
            pending_capacity: 100_000,
            pending_ttl: 1_000_000,
            merge_block: 64,
            settings: Vec::new(),
            start_model: None,
            save_model: None,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    fn kafka(&self) -> KafkaConfig {
        let mut c = KafkaConfig::new(self.brokers.clone());
        c.settings = self.settings.clone();
        c
    }
}

/// What a finished job reports.
#[derive(Clone, Debug, Serialize)]
pub struct JobSummary {
    /// The counters at the end.
    #[serde(flatten)]
    pub metrics: MetricsSnapshot,
    /// Feedback records that joined no pending event (dead-lettered).
    pub feedback_unmatched: u64,
    /// Worker threads.
    pub workers: usize,
    /// Seconds from the start to the end of the job.
    pub seconds: f64,
    /// Seconds from the first record read to the last output delivered.
    pub busy_seconds: f64,
    /// Events per busy second.
    pub events_per_second: f64,
}

/// The shared state of the workers of one job (one process).
struct Shared {
    stop: AtomicBool,
    error: Mutex<Option<String>>,
    metrics: Arc<JobMetrics>,
}

impl Shared {
    fn fail(&self, message: String) {
        let mut e = self.error.lock().unwrap_or_else(|e| e.into_inner());
        e.get_or_insert(message);
        self.stop.store(true, Ordering::SeqCst);
    }
    fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// One worker's sources: its share of the events topic (and of the feedback topic).
struct WorkerSources {
    sources: Vec<(StreamId, PartitionedSource)>,
    /// The last progress sent per (stream, partition).
    sent: BTreeMap<(StreamId, i32), (i64, bool)>,
    caught_up: BTreeMap<(StreamId, i32), bool>,
    last_lag: Instant,
}

impl WorkerSources {
    fn open(options: &JobOptions, index: usize, peers: usize) -> Result<Self, String> {
        let config = options.kafka();
        let mut sources = Vec::new();
        let mut topics = vec![(EVENTS, options.source.as_str())];
        if let Some(f) = &options.feedback {
            topics.push((FEEDBACK, f.as_str()));
        }
        for (stream, topic) in topics {
            let s =
                PartitionedSource::new(&config, topic, &options.group, index, peers, options.start)
                    .map_err(|e| format!("source `{topic}`: {e}"))?;
            sources.push((stream, s));
        }
        Ok(WorkerSources {
            sources,
            sent: BTreeMap::new(),
            caught_up: BTreeMap::new(),
            last_lag: Instant::now() - Duration::from_secs(3600),
        })
    }

    /// Polls every source once; sends the records, then the progress of every partition
    /// whose position or caught-up state changed.
    fn poll(
        &mut self,
        out: &mut RawInput,
        wait: Duration,
        metrics: &JobMetrics,
    ) -> Result<usize, String> {
        let mut n = 0;
        let per = wait / self.sources.len().max(1) as u32;
        for (stream, source) in &mut self.sources {
            let batch = source
                .poll_batch(4096, per)
                .map_err(|e| format!("reading `{}`: {e}", source.topic()))?;
            for r in batch {
                self.caught_up.insert((*stream, r.partition), false);
                out.send(Raw::Record(RawRecord {
                    stream: *stream,
                    partition: r.partition,
                    offset: r.offset,
                    key: r.key,
                    payload: r.payload,
                    timestamp_ms: r.timestamp_ms,
                }));
                n += 1;
            }
        }
        // Lag, and whether each partition is read to its end (then it does not hold the
        // merge back): every 50 ms (one watermark request per partition).
        let every = Duration::from_millis(50);
        if self.last_lag.elapsed() >= every {
            self.last_lag = Instant::now();
            for (stream, source) in &self.sources {
                match source.lag() {
                    Ok(lags) => {
                        for l in lags {
                            metrics.set_lag(source.topic(), l.partition, l.lag);
                            self.caught_up.insert((*stream, l.partition), l.lag == 0);
                        }
                    }
                    Err(e) => eprintln!("flowboost: kafka: lag of `{}`: {e}", source.topic()),
                }
            }
        }
        for (stream, source) in &self.sources {
            for (p, position) in source.positions() {
                let caught_up = self.caught_up.get(&(*stream, p)).copied().unwrap_or(false);
                if self.sent.get(&(*stream, p)) != Some(&(position, caught_up)) {
                    self.sent.insert((*stream, p), (position, caught_up));
                    out.send(Raw::Progress {
                        stream: *stream,
                        partition: p,
                        position,
                        caught_up,
                    });
                }
            }
        }
        Ok(n)
    }
}

/// The predictions out of the dataflow on worker 0, with their examples.
type Outputs = Rc<RefCell<Vec<(Prediction, Arc<Example>)>>>;
/// What worker 0 returns: unmatched feedback, and when it was busy.
type WorkerEnd = (u64, Option<(Instant, Instant)>);

type RawInput = timely::dataflow::InputHandle<u64, CapacityContainerBuilder<Vec<Raw>>>;
type ModelInput = timely::dataflow::InputHandle<u64, CapacityContainerBuilder<Vec<InFlight>>>;

/// Runs the job until it is idle for `exit_when_idle` (or forever), on
/// `options.workers` threads. Returns the summary, or the first error (then nothing
/// after the last commit is committed).
pub fn run_job(
    options: JobOptions,
    schema: Schema,
    config: BoosterConfig,
) -> Result<JobSummary, String> {
    if options.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    build(&schema, &config)?;
    let kafka = options.kafka();
    // The partitions, known up front: the merge waits for every one of them.
    let mut partitions = Vec::new();
    let events = admin::topic_partitions(&kafka, &options.source)
        .map_err(|e| format!("--source kafka:{}: {e}", options.source))?;
    partitions.extend(events.iter().map(|&p| (EVENTS, p)));
    if let Some(f) = &options.feedback {
        let fb =
            admin::topic_partitions(&kafka, f).map_err(|e| format!("--feedback kafka:{f}: {e}"))?;
        partitions.extend(fb.iter().map(|&p| (FEEDBACK, p)));
    }
    // Output topics that do not exist yet are created, with the events' partition count.
    let outputs = [Some(&options.sink), options.dead_letter.as_ref()];
    for t in outputs.into_iter().flatten() {
        admin::create_topic(&kafka, t, events.len() as i32)
            .map_err(|e| format!("creating the output topic `{t}`: {e}"))?;
    }
    let loss_name = if schema.task == Task::Multilabel {
        "rank_loss"
    } else {
        "error_rate"
    };
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        error: Mutex::new(None),
        metrics: Arc::new(JobMetrics::new(loss_name)),
    });
    if let Some(addr) = &options.metrics_addr {
        let bound = metrics::serve(addr, shared.metrics.clone())?;
        eprintln!("flowboost: kafka: metrics on http://{bound}/metrics");
    }
    eprintln!(
        "flowboost: kafka: {} -> {} ({} partitions{}), group {}, {} worker(s), {}",
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
        config.algorithm
    );
    let started = Instant::now();
    let workers = options.workers;
    let shared_w = shared.clone();
    let board = SnapshotBoard::default();
    let guards = timely::execute(
        timely::Config::process(options.workers),
        move |worker| -> Option<Result<WorkerEnd, String>> {
            let index = worker.index();
            let peers = worker.peers();
            let built = match &options.start_model {
                Some(saved) => saved.chain("the model file").map_err(|e| e.to_string()),
                None => build(&schema, &config).map_err(String::from),
            };
            let b = match built {
                Ok(b) => b,
                Err(e) => {
                    shared_w.fail(e.clone());
                    return Some(Err(e));
                }
            };
            let score_dim = b.score_dim;
            let stages = b.stages.len();
            let start_position = b.position;
            let gathered: Rc<RefCell<Vec<Raw>>> = Rc::default();
            let outputs: Outputs = Rc::default();
            let (mut raw_in, raw_probe, mut model_in, probe) =
                worker.dataflow::<u64, _, _>(|scope| {
                    let (raw_in, raw) = scope.new_input::<Vec<Raw>>();
                    let g = gathered.clone();
                    let (raw_probe, raw) = raw.probe();
                    raw.sink(
                        Exchange::new(|_: &Raw| 0u64),
                        "Sequencer",
                        move |(input, _)| {
                            input.for_each(|_time, data| g.borrow_mut().append(data));
                        },
                    );
                    let (model_in, stream) = scope.new_input::<Vec<InFlight>>();
                    let predictions =
                        pipeline(stream, index, peers, b.stages, b.terminal, board.clone());
                    let (probe, predictions) = predictions.probe();
                    let o = outputs.clone();
                    predictions.sink(Pipeline, "Predictions", move |(input, _)| {
                        input.for_each(|_time, data| o.borrow_mut().append(data));
                    });
                    (raw_in, raw_probe, model_in, probe)
                });
            let mut sources = match WorkerSources::open(&options, index, peers) {
                Ok(s) => Some(s),
                Err(e) => {
                    shared_w.fail(e);
                    None
                }
            };
            if index != 0 {
                drop(model_in);
                let mut tick = 0u64;
                while !shared_w.stop.load(Ordering::SeqCst) && !options.stop.load(Ordering::SeqCst)
                {
                    let Some(s) = sources.as_mut() else { break };
                    if let Err(e) = s.poll(&mut raw_in, Duration::ZERO, &shared_w.metrics) {
                        shared_w.fail(e);
                        break;
                    }
                    tick += 1;
                    raw_in.advance_to(tick);
                    // Never block in the consumer: the stage block here must keep up.
                    worker.step_or_park(Some(Duration::from_millis(1)));
                }
                drop(raw_in);
                drop(sources);
                while worker.step_or_park(Some(Duration::from_millis(10))) {}
                return None;
            }
            let mut job = match Sequencer::new(
                &options,
                &schema,
                &config,
                &shared_w,
                score_dim,
                &partitions,
            ) {
                Ok(mut j) => {
                    j.position = start_position;
                    if let (Some(p), Some(saved)) = (j.pending.as_mut(), &options.start_model)
                        && let Some(kept) = &saved.body.pending
                    {
                        *p = kept.clone();
                    }
                    j
                }
                Err(e) => {
                    shared_w.fail(e.clone());
                    drop(raw_in);
                    drop(model_in);
                    while worker.step_or_park(Some(Duration::from_millis(10))) {}
                    return Some(Err(e));
                }
            };
            let result = (|| -> Result<(), String> {
                let mut tick = 0u64;
                let mut last_record = Instant::now();
                let mut last_commit = Instant::now();
                let mut last_report = Instant::now();
                loop {
                    if let Some(e) = shared_w.error() {
                        return Err(e);
                    }
                    if let Some(s) = sources.as_mut() {
                        s.poll(&mut raw_in, Duration::ZERO, &shared_w.metrics)?;
                    }
                    tick += 1;
                    raw_in.advance_to(tick);
                    worker.step_or_park(Some(Duration::from_millis(1)));
                    let raws: Vec<Raw> = gathered.borrow_mut().drain(..).collect();
                    if raws.iter().any(|r| matches!(r, Raw::Record(_))) {
                        last_record = Instant::now();
                    }
                    for r in raws {
                        job.merger.push(r);
                    }
                    let released = job.merger.release();
                    job.feed(released, &mut model_in, worker, &probe, &outputs)?;
                    job.drain(&outputs)?;
                    if last_commit.elapsed() >= job.commit_interval {
                        job.commit(&mut model_in, worker, &probe, &outputs)?;
                        last_commit = Instant::now();
                    }
                    if let Some(every) = job.report_interval
                        && last_report.elapsed() >= every
                    {
                        eprintln!("{}", shared_w.metrics.line());
                        last_report = Instant::now();
                    }
                    if let Some(idle) = job.exit_when_idle
                        && last_record.elapsed() >= idle
                        && job.merger.held() == 0
                    {
                        break;
                    }
                    if options.stop.load(Ordering::SeqCst) {
                        eprintln!(
                            "flowboost: kafka: stopping (signal): finishing what is in flight"
                        );
                        break;
                    }
                }
                Ok(())
            })();
            // The end: stop the readers, take everything they sent, process it, deliver,
            // commit (not after an error: the next run resumes from the last commit).
            shared_w.stop.store(true, Ordering::SeqCst);
            drop(sources);
            drop(raw_in);
            let result = result.and_then(|()| {
                while !raw_probe.done() {
                    worker.step_or_park(Some(Duration::from_millis(1)));
                }
                let raws: Vec<Raw> = gathered.borrow_mut().drain(..).collect();
                for r in raws {
                    job.merger.push(r);
                }
                let rest = job.merger.release_all();
                job.feed(rest, &mut model_in, worker, &probe, &outputs)?;
                job.expire_parked(true)?;
                job.commit(&mut model_in, worker, &probe, &outputs)?;
                match &options.save_model {
                    Some(writer) => job.save(
                        writer,
                        stages,
                        &board,
                        &mut model_in,
                        worker,
                        &probe,
                        &outputs,
                    ),
                    None => Ok(()),
                }
            });
            if let Err(e) = &result {
                shared_w.fail(e.clone());
            }
            drop(model_in);
            while worker.step_or_park(Some(Duration::from_millis(1))) {}
            Some(result.map(|()| (job.unmatched, job.busy)))
        },
    )?;
    let mut out = None;
    for r in guards.join() {
        match r {
            Ok(Some(v)) => out = Some(v),
            Ok(None) => {}
            Err(e) => return Err(format!("a worker failed: {e}")),
        }
    }
    if let Some(e) = shared.error() {
        return Err(e);
    }
    let (unmatched, busy) = out.unwrap_or_else(|| Err("worker 0 returned nothing".into()))?;
    let metrics = shared.metrics.snapshot();
    let busy_seconds = busy.map_or(0.0, |(a, b)| b.duration_since(a).as_secs_f64());
    Ok(JobSummary {
        events_per_second: if busy_seconds > 0.0 {
            metrics.events_in as f64 / busy_seconds
        } else {
            0.0
        },
        metrics,
        feedback_unmatched: unmatched,
        workers,
        seconds: started.elapsed().as_secs_f64(),
        busy_seconds,
    })
}

/// Worker 0's side: the merge, the decoding, the model input, the outputs, the commits.
struct Sequencer {
    merger: Merger,
    decoder: RecordDecoder,
    encoder: PredictionEncoder,
    sink: KafkaSink,
    dead_letters: Option<DeadLetterWriter>,
    committer: OffsetCommitter,
    topics: [String; 2],
    metrics: Arc<JobMetrics>,
    scorer: Scorer,
    pending: Option<PendingEvents>,
    topk: Option<flowboost_operators::topk::TopKConfig>,
    labels: usize,
    score_dim: usize,
    /// The next sequence number and the model input's timestamp.
    seq: u64,
    time: u64,
    in_batch: usize,
    batch: usize,
    /// Emitting records not yet out: (seq, model version).
    emitting: VecDeque<(u64, u64)>,
    /// Learning passes fed so far (the model version of the next prediction).
    updates: u64,
    committed: BTreeMap<(StreamId, i32), i64>,
    commit_interval: Duration,
    report_interval: Option<Duration>,
    exit_when_idle: Option<Duration>,
    unmatched: u64,
    /// Feedback that came before its event (in the merged order), by event id: it joins
    /// when the event comes, or is dead-lettered after `pending_ttl` events or at the end.
    parked: std::collections::HashMap<u64, (RawRecord, FeedbackRecord, u64)>,
    parked_order: VecDeque<(u64, u64)>,
    /// Events admitted (the clock of parked feedback).
    admitted: u64,
    pending_ttl: u64,
    logged: u64,
    busy: Option<(Instant, Instant)>,
    /// Events and learned records, counted on from the start model's.
    position: Position,
}

impl Sequencer {
    fn new(
        options: &JobOptions,
        schema: &Schema,
        config: &BoosterConfig,
        shared: &Shared,
        score_dim: usize,
        partitions: &[(StreamId, i32)],
    ) -> Result<Self, String> {
        let kafka = options.kafka();
        let sink = KafkaSink::new(&kafka, &options.sink)
            .map_err(|e| format!("--sink kafka:{}: {e}", options.sink))?;
        let dead_letters = match &options.dead_letter {
            Some(t) => Some(
                DeadLetterWriter::new(&kafka, t)
                    .map_err(|e| format!("--dead-letter kafka:{t}: {e}"))?,
            ),
            None => None,
        };
        let committer = OffsetCommitter::new(&kafka, &options.group).map_err(|e| e.to_string())?;
        let topk = matches!(
            config.algorithm,
            flowboost_operators::boosters::Algorithm::TopkBbm
                | flowboost_operators::boosters::Algorithm::TopkAdaptive
        )
        .then_some(config.topk);
        Ok(Sequencer {
            merger: Merger::new(partitions.iter().copied(), options.merge_block),
            decoder: RecordDecoder::new(schema, options.format),
            encoder: PredictionEncoder::new(schema),
            sink,
            dead_letters,
            committer,
            topics: [
                options.source.clone(),
                options.feedback.clone().unwrap_or_default(),
            ],
            metrics: shared.metrics.clone(),
            scorer: Scorer::new(schema.task, schema.num_labels()),
            pending: options
                .feedback
                .as_ref()
                .map(|_| PendingEvents::new(options.pending_capacity, options.pending_ttl)),
            topk,
            labels: schema.num_labels(),
            score_dim,
            seq: 0,
            time: 0,
            in_batch: 0,
            batch: options.batch.max(1),
            emitting: VecDeque::new(),
            updates: 0,
            committed: BTreeMap::new(),
            commit_interval: options.commit_interval,
            report_interval: options.report_interval,
            exit_when_idle: options.exit_when_idle,
            unmatched: 0,
            parked: Default::default(),
            parked_order: VecDeque::new(),
            admitted: 0,
            pending_ttl: options.pending_ttl,
            logged: 0,
            busy: None,
            position: Position::default(),
        })
    }

    /// Saves the model: a snapshot marker after everything fed, the dataflow stepped until
    /// it has passed the terminal, then the parts, the metrics and the pending events
    /// written to the model file.
    #[allow(clippy::too_many_arguments)]
    fn save(
        &mut self,
        writer: &ModelWriter,
        stages: usize,
        board: &SnapshotBoard,
        input: &mut ModelInput,
        worker: &mut timely::worker::Worker,
        probe: &timely::dataflow::ProbeHandle<u64>,
        outputs: &Outputs,
    ) -> Result<(), String> {
        input.send(InFlight::marker(self.seq));
        self.in_batch += 1;
        self.close(input);
        while probe.less_than(input.time()) {
            worker.step();
        }
        self.drain(outputs)?;
        let (parts, terminal) = board.take(stages)?;
        let snapshot = ChainSnapshot {
            stages: parts,
            terminal,
            score_dim: self.score_dim,
            position: self.position,
            feedback: None,
        };
        let progress = SavedProgress {
            seen: self.metrics.predictions_sent.load(Ordering::Relaxed),
            scorer: self.scorer.clone(),
        };
        writer.write(snapshot, Some(progress), self.pending.clone())?;
        eprintln!(
            "flowboost: kafka: saved the model ({} events, {} learned) to {}",
            self.position.events,
            self.position.learned,
            writer.path.display()
        );
        Ok(())
    }

    /// Sends one record into the model with the next sequence number.
    fn send(&mut self, mut rec: InFlight, input: &mut ModelInput) {
        rec.seq = self.seq;
        self.seq += 1;
        self.position.seq = self.position.seq.max(self.seq);
        self.position.events += u64::from(rec.emit);
        self.position.learned += u64::from(rec.learns());
        input.send(rec);
        self.in_batch += 1;
        if self.in_batch >= self.batch {
            self.close(input);
        }
    }

    fn close(&mut self, input: &mut ModelInput) {
        if self.in_batch > 0 {
            self.in_batch = 0;
            self.time += 1;
            input.advance_to(self.time);
        }
    }

    /// A bad record: to the dead-letter topic (or stderr), counted by kind.
    fn dead_letter(&mut self, r: &RawRecord, kind: &str, reason: &str) -> Result<(), String> {
        self.metrics.dead_letter(kind);
        let topic = &self.topics[r.stream as usize];
        match self.dead_letters.as_mut() {
            Some(w) => w
                .write(&DeadLetter {
                    reason,
                    topic,
                    partition: r.partition,
                    offset: r.offset,
                    key: r.key.as_deref(),
                    payload: &r.payload,
                })
                .map_err(|e| format!("writing a dead letter: {e}")),
            None => {
                self.logged += 1;
                if self.logged <= 20 {
                    eprintln!(
                        "flowboost: kafka: bad record `{topic}` [{}] @{}: {reason}",
                        r.partition, r.offset
                    );
                }
                Ok(())
            }
        }
    }

    /// Decodes released records and feeds them to the model in order.
    fn feed(
        &mut self,
        records: Vec<RawRecord>,
        input: &mut ModelInput,
        worker: &mut timely::worker::Worker,
        probe: &timely::dataflow::ProbeHandle<u64>,
        outputs: &Outputs,
    ) -> Result<(), String> {
        if !records.is_empty() && self.busy.is_none() {
            let now = Instant::now();
            self.busy = Some((now, now));
        }
        for r in records {
            if r.stream == EVENTS {
                match self.decoder.decode(r.key.as_deref(), &r.payload) {
                    Err(e) => self.dead_letter(&r, e.kind.name(), &e.to_string())?,
                    Ok(ex) => {
                        self.metrics.events_in.fetch_add(1, Ordering::Relaxed);
                        let ex = Arc::new(ex);
                        self.emitting.push_back((self.seq, self.updates));
                        if ex.label.is_some() {
                            self.updates += 1;
                            self.metrics.learned.fetch_add(1, Ordering::Relaxed);
                        } else if let Some(p) = self.pending.as_mut() {
                            let before = p.counters();
                            p.admit(ex.clone());
                            let after = p.counters();
                            let dropped =
                                (after.expired + after.evicted) - (before.expired + before.evicted);
                            self.metrics
                                .feedback_expired
                                .fetch_add(dropped, Ordering::Relaxed);
                        }
                        let id = ex.id;
                        let unlabeled = ex.label.is_none();
                        let rec = InFlight::new(0, ex, self.score_dim);
                        self.send(rec, input);
                        self.admitted += 1;
                        if unlabeled && let Some((raw, fb, _)) = self.parked.remove(&id) {
                            self.join(&raw, fb, input, worker, probe, outputs)?;
                        }
                        self.expire_parked(false)?;
                    }
                }
            } else {
                self.metrics.feedback_in.fetch_add(1, Ordering::Relaxed);
                match self.decoder.decode_feedback(&r.payload) {
                    Err(e) => self.dead_letter(&r, e.kind.name(), &e.to_string())?,
                    Ok(fb) => self.join(&r, fb, input, worker, probe, outputs)?,
                }
            }
            if self.in_batch == 0 {
                // A batch closed: bound what is in flight, and hand outputs on.
                while probe.less_than(&self.time.saturating_sub(8)) {
                    worker.step();
                }
                self.drain(outputs)?;
            }
        }
        // Whatever was released goes through now (a partial batch is a timestamp too),
        // rather than waiting for more records.
        self.close(input);
        Ok(())
    }

    /// Joins one feedback record with its pending event: a learning pass, or a dead letter.
    fn join(
        &mut self,
        r: &RawRecord,
        fb: FeedbackRecord,
        input: &mut ModelInput,
        worker: &mut timely::worker::Worker,
        probe: &timely::dataflow::ProbeHandle<u64>,
        outputs: &Outputs,
    ) -> Result<(), String> {
        if fb.kind == FeedbackKind::Clicks && self.topk.is_none() {
            return self.dead_letter(
                r,
                "clicks_need_topk",
                "clicks feedback needs a top-k algorithm (topk-bbm or topk-adaptive)",
            );
        }
        // The event's prediction must be out first (top-k feedback needs what was shown;
        // labels score it).
        let waiting = self
            .pending
            .as_ref()
            .and_then(|p| p.get(fb.id))
            .is_some_and(|e| e.prediction.is_none());
        if waiting {
            self.close(input);
            loop {
                self.drain(outputs)?;
                let ready = self
                    .pending
                    .as_ref()
                    .and_then(|p| p.get(fb.id))
                    .is_none_or(|e| e.prediction.is_some());
                if ready || !probe.less_than(input.time()) {
                    break;
                }
                worker.step();
            }
        }
        let Some(pending) = self.pending.as_mut() else {
            return self.dead_letter(r, "feedback_unmatched", "no feedback topic configured");
        };
        let event = match pending.join(fb.id) {
            Ok(e) => e,
            Err(Miss::Unmatched) if !self.parked.contains_key(&fb.id) => {
                // Its event has not come yet: wait for it.
                self.parked_order.push_back((self.admitted, fb.id));
                self.parked.insert(fb.id, (r.clone(), fb, self.admitted));
                return Ok(());
            }
            Err(miss) => {
                self.unmatched += 1;
                let why = match miss {
                    Miss::Late => "its event expired before the feedback came",
                    Miss::Unmatched => "no pending unlabeled event has this id",
                    Miss::Repeated => "its event was joined already",
                };
                let reason = format!("feedback_unmatched: id {}: {why}", fb.id);
                return self.dead_letter(r, "feedback_unmatched", &reason);
            }
        };
        self.metrics.feedback_joined.fetch_add(1, Ordering::Relaxed);
        self.metrics.learned.fetch_add(1, Ordering::Relaxed);
        self.updates += 1;
        let rec = match fb.kind {
            FeedbackKind::Labels => {
                if let Some(p) = &event.prediction {
                    self.scorer.update(p, Some(&fb.label));
                    self.metrics
                        .scored
                        .store(self.scorer.count(), Ordering::Relaxed);
                    self.set_loss();
                }
                let mut ex = (*event.example).clone();
                ex.label = Some(fb.label);
                InFlight::learn(0, Arc::new(ex), None, self.score_dim)
            }
            FeedbackKind::Clicks => {
                let (Some(config), Some(p)) = (self.topk.as_ref(), event.prediction.as_ref())
                else {
                    return Err("internal: clicks without a prediction".into());
                };
                let clicked = fb.label.relevant();
                let pairs = observe(config, self.labels, &p.top, &p.shown, |l| {
                    clicked.contains(&l)
                });
                InFlight::learn(
                    0,
                    event.example.clone(),
                    Some(Arc::new(pairs)),
                    self.score_dim,
                )
            }
        };
        self.send(rec, input);
        Ok(())
    }

    /// Dead-letters parked feedback older than `pending_ttl` events (all with `all`).
    fn expire_parked(&mut self, all: bool) -> Result<(), String> {
        while let Some(&(born, id)) = self.parked_order.front() {
            if !all && born + self.pending_ttl >= self.admitted {
                break;
            }
            self.parked_order.pop_front();
            if let Some((raw, fb, b)) = self.parked.remove(&id) {
                if b != born {
                    self.parked.insert(id, (raw, fb, b));
                    continue;
                }
                self.unmatched += 1;
                let reason = format!(
                    "feedback_unmatched: id {}: no unlabeled event with this id came{}",
                    fb.id,
                    if all {
                        " before the end of the run"
                    } else {
                        " within the time-to-live"
                    }
                );
                self.dead_letter(&raw, "feedback_unmatched", &reason)?;
            }
        }
        Ok(())
    }

    fn set_loss(&self) {
        let (name, value) = self.scorer.headline();
        let loss = if name == "accuracy" {
            1.0 - value
        } else {
            value
        };
        self.metrics.set_loss(loss);
    }

    /// Hands the predictions out so far to the sink.
    fn drain(&mut self, outputs: &Outputs) -> Result<(), String> {
        let out: Vec<_> = outputs.borrow_mut().drain(..).collect();
        if out.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(256);
        for (p, ex) in out {
            let version = loop {
                match self.emitting.pop_front() {
                    Some((seq, v)) if seq == p.seq => break v,
                    Some(_) => continue,
                    None => break self.updates,
                }
            };
            if ex.label.is_none()
                && let Some(pending) = self.pending.as_mut()
            {
                pending.predicted(&p);
            }
            if ex.label.is_some() {
                self.scorer.update(&p, ex.label.as_ref());
            }
            buf.clear();
            self.encoder.encode_into(
                &PredictionOutput {
                    id: p.id,
                    class: p.class,
                    labels: &p.labels,
                    scores: &p.scores,
                    expert: p.expert,
                    model_version: version,
                    shown: &p.shown,
                },
                &mut buf,
            );
            self.sink
                .send(Some(p.id.to_string().as_bytes()), &buf)
                .map_err(|e| format!("writing a prediction: {e}"))?;
            self.metrics
                .predictions_sent
                .fetch_add(1, Ordering::Relaxed);
        }
        self.sink.poll();
        self.metrics
            .predictions_out
            .store(self.sink.stats().delivered, Ordering::Relaxed);
        self.metrics
            .scored
            .store(self.scorer.count(), Ordering::Relaxed);
        self.set_loss();
        if let Some(b) = self.busy.as_mut() {
            b.1 = Instant::now();
        }
        Ok(())
    }

    /// Processes everything fed so far, waits until every output is acknowledged, then
    /// commits the offsets of every record released so far.
    fn commit(
        &mut self,
        input: &mut ModelInput,
        worker: &mut timely::worker::Worker,
        probe: &timely::dataflow::ProbeHandle<u64>,
        outputs: &Outputs,
    ) -> Result<(), String> {
        self.close(input);
        while probe.less_than(input.time()) {
            worker.step();
        }
        self.drain(outputs)?;
        let timeout = Duration::from_secs(60);
        let stats = self
            .sink
            .flush(timeout)
            .map_err(|e| format!("delivering predictions: {e}"))?;
        self.metrics
            .predictions_out
            .store(stats.delivered, Ordering::Relaxed);
        if let Some(w) = self.dead_letters.as_mut() {
            w.flush(timeout)
                .map_err(|e| format!("delivering dead letters: {e}"))?;
        }
        let mut changed = Vec::new();
        let mut parked_min: BTreeMap<i32, i64> = BTreeMap::new();
        for (raw, _, _) in self.parked.values() {
            let e = parked_min.entry(raw.partition).or_insert(raw.offset);
            *e = (*e).min(raw.offset);
        }
        for (stream, p, mut offset) in self.merger.committable() {
            if stream == FEEDBACK
                && let Some(&m) = parked_min.get(&p)
            {
                offset = offset.min(m);
            }
            if self.committed.get(&(stream, p)) != Some(&offset) {
                changed.push((stream, p, offset));
            }
        }
        if changed.is_empty() {
            return Ok(());
        }
        let list: Vec<(&str, i32, i64)> = changed
            .iter()
            .map(|&(s, p, o)| (self.topics[s as usize].as_str(), p, o))
            .collect();
        self.committer.commit(&list).map_err(|e| e.to_string())?;
        for (s, p, o) in changed {
            self.committed.insert((s, p), o);
        }
        self.metrics.commits.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
