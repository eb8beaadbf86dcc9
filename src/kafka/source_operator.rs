//! The Kafka source: a timely operator on every worker, reading its share of the
//! partitions of the events and feedback topics (of all processes), decoding what it reads
//! there, and never blocking: it polls without waiting and parks between polls.

use super::job_config::{ConnectionConfig, JobConfig, JobTopics, SourceConfig};
use super::keys::ModelKeys;
use super::merge::{EVENTS, FEEDBACK, MergeOrder, Raw, RawRecord, StreamId};
use super::metrics::JobMetrics;
use super::partition_offset::PartitionOffset;
use super::record::{Control, DeadBody, RecordBody, SourceMessage};
use super::worker_state::WorkerState;
use flowboost_connectors::kafka::{KafkaError, PartitionedSource, RecordDecoder, RecordView};
use flowboost_operators::data::Schema;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::{ProbeHandle, Stream};
use timely::scheduling::Activator;

/// One worker's consumers and decoder.
pub struct KafkaReader {
    sources: Vec<(StreamId, PartitionedSource)>,
    decoder: RecordDecoder,
    keys: Option<super::ModelKeys>,
    order: MergeOrder,
    /// The last progress sent per (topic, partition): position, at its end.
    sent: BTreeMap<(StreamId, i32), (i64, bool)>,
    /// Probes for news that the broker did not answer (transient: asked again at the next
    /// probe), and the last one's error.
    probe_errors: u64,
    last_probe_error: Option<String>,
}

/// What a worker's reader takes from the job's configuration.
#[derive(Clone, Copy, Debug)]
pub struct ReaderSetup<'a> {
    /// Where and as whom to connect.
    pub connection: &'a ConnectionConfig,
    /// The topics (the events' and the feedback's are read).
    pub topics: &'a JobTopics,
    /// Where to start reading and how to decode.
    pub source: &'a SourceConfig,
    /// One model per key: the keys events are routed to.
    pub keys: Option<&'a ModelKeys>,
    /// What the merge orders records by (under timestamps, a record without one is a dead
    /// letter).
    pub order: MergeOrder,
}

impl<'a> From<&'a JobConfig> for ReaderSetup<'a> {
    fn from(job: &'a JobConfig) -> Self {
        ReaderSetup {
            connection: &job.connection,
            topics: &job.topics,
            source: &job.source,
            keys: job.keys.as_ref(),
            order: job.merge.order,
        }
    }
}

impl KafkaReader {
    /// Opens this worker's share (worker `index` of `peers`, all processes) of the topics.
    pub fn open(
        setup: ReaderSetup<'_>,
        schema: &Schema,
        index: usize,
        peers: usize,
    ) -> Result<Self, SourceError> {
        let ReaderSetup {
            connection,
            topics: names,
            source: config,
            keys,
            order,
        } = setup;
        let mut topics = vec![(EVENTS, names.source.as_str())];
        if let Some(f) = &names.feedback {
            topics.push((FEEDBACK, f.as_str()));
        }
        let mut sources = Vec::new();
        for (stream, topic) in topics {
            let s = PartitionedSource::new(
                &connection.client,
                topic,
                &connection.group,
                index,
                peers,
                config.start,
            )
            .map_err(|e| SourceError::Open {
                topic: topic.to_string(),
                source: Box::new(e),
            })?;
            sources.push((stream, s));
        }
        Ok(KafkaReader {
            sources,
            decoder: match &config.writer_schemas {
                Some(w) => RecordDecoder::new(schema, config.format).with_writer_schemas(w.clone()),
                None => RecordDecoder::new(schema, config.format),
            },
            keys: keys.cloned(),
            order,
            sent: BTreeMap::new(),
            probe_errors: 0,
            last_probe_error: None,
        })
    }

    /// Starts every source partition named in `offsets` (`(topic, partition)` to the next
    /// offset: a checkpoint's) there instead (before the first poll).
    pub fn start_at(&mut self, offsets: &super::checkpoint::OffsetMap) -> Result<(), SourceError> {
        for (_, source) in &mut self.sources {
            let topic = source.topic().to_string();
            let mine: BTreeMap<i32, i64> = offsets
                .iter()
                .filter(|((t, _), _)| *t == topic)
                .map(|((_, p), &o)| (*p, o))
                .collect();
            source.start_at(&mine).map_err(|e| SourceError::Open {
                topic,
                source: Box::new(e),
            })?;
        }
        Ok(())
    }

    /// Takes what the consumers have fetched (at most `max` records, without waiting),
    /// decoded, then the progress of every partition whose position or end changed.
    /// Returns the number of records.
    pub fn poll(&mut self, max: usize, out: &mut Vec<SourceMessage>) -> Result<usize, SourceError> {
        let mut n = 0;
        let per = (max / self.sources.len().max(1)).max(1);
        let (decoder, keys, order) = (&self.decoder, &self.keys, self.order);
        for (stream, source) in &mut self.sources {
            let stream = *stream;
            n += source
                .poll_with(per, Duration::ZERO, |r| {
                    out.push(Raw::Record(RawRecord {
                        stream,
                        partition: r.partition,
                        offset: r.offset,
                        key: r.timestamp_ms.unwrap_or(i64::MIN),
                        timestamp_ms: r.timestamp_ms,
                        body: body(decoder, keys.as_ref(), order, stream, &r),
                    }));
                })
                .map_err(|e| SourceError::Read {
                    topic: source.topic().to_string(),
                    source: Box::new(e),
                })?;
        }
        for (stream, source) in &self.sources {
            for (p, position) in source.positions() {
                let at_end = source.at_end(p);
                if self.sent.get(&(*stream, p)) != Some(&(position, at_end)) {
                    self.sent.insert((*stream, p), (position, at_end));
                    out.push(Raw::Progress {
                        stream: *stream,
                        partition: p,
                        position,
                        caught_up: at_end,
                        backlog_end: source.backlog_end(p),
                    });
                }
            }
        }
        Ok(n)
    }

    /// Whether every partition of this worker was read to its end.
    fn all_at_end(&self) -> bool {
        self.sources
            .iter()
            .all(|(_, s)| s.partitions().iter().all(|&p| s.at_end(p)))
    }

    /// Pauses fetching (an idle worker), or, when paused, resumes if a partition has news.
    /// Returns whether the reader is paused now.
    fn pause_or_probe(&mut self) -> Result<bool, SourceError> {
        let paused = self.sources.iter().any(|(_, s)| s.is_paused());
        if !paused {
            for (_, s) in &mut self.sources {
                s.pause().map_err(|e| SourceError::Pause(Box::new(e)))?;
            }
            return Ok(true);
        }
        let mut news = false;
        for (_, s) in &self.sources {
            match s.has_news() {
                Ok(n) => news |= n,
                // A broker too busy to answer in time is a transient error, like the
                // client's own: counted, and asked again at the next probe.
                Err(e) => {
                    self.probe_errors += 1;
                    self.last_probe_error = Some(format!("`{}`: probing for news: {e}", s.topic()));
                    return Ok(true);
                }
            }
        }
        if news {
            for (_, s) in &mut self.sources {
                s.resume().map_err(|e| SourceError::Pause(Box::new(e)))?;
            }
        }
        Ok(!news)
    }

    /// The read limits before the merge sends any: `read_ahead` past each partition's
    /// start (nothing is stamped yet), so that the first reads are bounded too.
    pub fn limit_from_start(&mut self, read_ahead: i64) {
        for (_, source) in &mut self.sources {
            for (p, position) in source.positions() {
                source.set_limit(p, Some(position.saturating_add(read_ahead)));
            }
        }
    }

    /// Holds each of this worker's partitions at its read limit (see
    /// [`Control::Limits`]); partitions of other workers are ignored.
    pub fn set_limits(&mut self, limits: &[PartitionOffset]) {
        for (stream, source) in &mut self.sources {
            for l in limits {
                if l.stream == *stream && source.partitions().contains(&l.partition) {
                    source.set_limit(l.partition, Some(l.offset));
                }
            }
        }
    }

    /// The transient client errors met so far, and the last one.
    pub fn errors(&self) -> (u64, Option<String>) {
        let mut n = self.probe_errors;
        let mut last = self.last_probe_error.clone();
        for (_, s) in &self.sources {
            n += s.errors();
            if let Some(e) = s.last_error() {
                last = Some(format!("`{}`: {e}", s.topic()));
            }
        }
        (n, last)
    }
}

/// Why a source failed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A topic's consumer could not be created or started.
    #[error("source `{topic}`: {source}")]
    Open {
        /// The topic.
        topic: String,
        /// The client's error.
        source: Box<KafkaError>,
    },
    /// Reading a topic failed.
    #[error("reading `{topic}`: {source}")]
    Read {
        /// The topic.
        topic: String,
        /// The client's error.
        source: Box<KafkaError>,
    },
    /// Pausing or resuming fetches failed.
    #[error("{0}")]
    Pause(#[source] Box<KafkaError>),
}

/// The kind of dead letter of a record without a timestamp under `--merge-order
/// timestamps`.
pub const NO_TIMESTAMP: &str = "no_timestamp";

/// Under [`MergeOrder::Timestamps`], a record without a timestamp (a pre-0.10 message
/// format) cannot be placed in time: it becomes a dead letter (kind [`NO_TIMESTAMP`]),
/// placed at its partition's previous key (the merge clamps its key `i64::MIN` up to it),
/// so that the order stays a function of the data and nothing else is lost.
fn missing_timestamp(order: MergeOrder, r: &RecordView<'_>) -> Option<RecordBody> {
    (order == MergeOrder::Timestamps && r.timestamp_ms.is_none()).then(|| {
        RecordBody::Dead(dead(
            NO_TIMESTAMP.to_string(),
            "the record has no timestamp (--merge-order timestamps orders by it)".to_string(),
            r,
        ))
    })
}

/// What record `r` of `stream` is: decoded where it was read; a dead letter (with a copy
/// of its bytes) where it does not decode, has no timestamp to be ordered by, or has a key
/// no model of the job serves.
fn body(
    decoder: &RecordDecoder,
    keys: Option<&super::ModelKeys>,
    order: MergeOrder,
    stream: StreamId,
    r: &RecordView<'_>,
) -> RecordBody {
    if let Some(dead) = missing_timestamp(order, r) {
        return dead;
    }
    if stream != EVENTS {
        return match decoder.decode_feedback(r.payload) {
            Ok(fb) => RecordBody::Feedback {
                id: fb.id,
                kind: fb.feedback,
            },
            Err(e) => RecordBody::Dead(dead(e.kind.name().to_string(), e.to_string(), r)),
        };
    }
    match decoder.decode_event(r.key, r.payload) {
        Ok(ev) => match keys {
            None => RecordBody::Event {
                example: ev.example,
                model: 0,
            },
            Some(keys) => match keys.route(ev.key.as_deref()) {
                Ok(model) => RecordBody::Event {
                    example: ev.example,
                    model,
                },
                Err((kind, reason)) => RecordBody::Unserved(dead(kind.to_string(), reason, r)),
            },
        },
        Err(e) => RecordBody::Dead(dead(e.kind.name().to_string(), e.to_string(), r)),
    }
}

/// A dead letter of record `r`, its bytes copied.
fn dead(kind: String, reason: String, r: &RecordView<'_>) -> DeadBody {
    DeadBody {
        kind,
        reason,
        key: r.key.map(<[u8]>::to_vec),
        payload: r.payload.to_vec(),
    }
}

/// How far the model may fall behind the merge before the sources stop reading.
pub struct Backpressure {
    /// The merge's output (the epoch it is at).
    pub merged: ProbeHandle<u64>,
    /// The terminal's output (the epoch the model has finished).
    pub done: ProbeHandle<u64>,
    /// At most this many epochs in between.
    pub max_epochs: u64,
}

impl Backpressure {
    /// Whether the model is too far behind.
    pub fn behind(&self) -> bool {
        let merged = self.merged.with_frontier(|f| f.first().copied());
        let done = self.done.with_frontier(|f| f.first().copied());
        match (merged, done) {
            (Some(m), Some(d)) => m.saturating_sub(d) > self.max_epochs,
            _ => false,
        }
    }
}

/// How often a paused (idle) source asks the broker whether its partitions have news.
pub const IDLE_PROBE: Duration = Duration::from_millis(50);

/// What the source operator uses besides its streams.
pub struct SourceContext {
    /// How far the model may fall behind before the source stops reading.
    pub backpressure: Backpressure,
    /// After this long with every partition read to its end, pause fetching and probe.
    pub idle_pause: Option<Duration>,
    /// The job's counters.
    pub metrics: Arc<JobMetrics>,
    /// The worker's control state.
    pub worker: Rc<RefCell<WorkerState>>,
}

/// The source operator of one worker, driven by the control stream this is called on:
/// reads (when the model keeps up, and each partition only up to the merge's read limit
/// for it), decodes, sends records and progress; parks between polls (1 ms after records,
/// backing off to 50 ms when idle); after `idle_pause` with every partition read to its
/// end it pauses fetching and asks the broker every [`IDLE_PROBE`] for news instead; stops
/// on the control stream's `Stop` (or a local error, which it reports there through the
/// worker's state).
///
/// ```no_run
/// # use flowboost::kafka::record::Control;
/// # use flowboost::kafka::source_operator::{KafkaReader, KafkaSourceExt, SourceContext};
/// # use timely::dataflow::Stream;
/// fn wire<'s>(
///     control: Stream<'s, u64, Vec<Control>>,
///     reader: Option<KafkaReader>,
///     context: SourceContext,
/// ) {
///     let _messages = control.kafka_source(reader, context);
/// }
/// ```
pub trait KafkaSourceExt<'scope> {
    /// The records and progress this worker reads.
    fn kafka_source(
        self,
        reader: Option<KafkaReader>,
        context: SourceContext,
    ) -> Stream<'scope, u64, Vec<SourceMessage>>;
}

impl<'scope> KafkaSourceExt<'scope> for Stream<'scope, u64, Vec<Control>> {
    fn kafka_source(
        self,
        reader: Option<KafkaReader>,
        context: SourceContext,
    ) -> Stream<'scope, u64, Vec<SourceMessage>> {
        let scope = self.scope();
        let mut builder = OperatorBuilder::new("KafkaSource".to_string(), scope);
        let info = builder.operator_info();
        let activator = scope.activator_for(info.address);
        let mut control_in = builder.new_input_connection(self, Pipeline, std::iter::empty());
        let (output, stream) =
            builder.new_output_connection::<Vec<SourceMessage>, _>(std::iter::empty());
        let mut output = timely::dataflow::operators::generic::OutputBuilder::from(output);
        builder.build(move |mut capabilities| {
            let mut capability = capabilities.pop();
            let mut run = SourceRun {
                reader,
                context,
                activator,
                wait: Duration::from_millis(1),
                quiet_since: None,
                last_probe: Instant::now(),
                buffer: Vec::new(),
            };
            move |_frontiers| {
                control_in.for_each(|_time, data| {
                    for message in data.drain(..) {
                        run.control(message);
                    }
                });
                let Some(cap) = capability.as_ref() else {
                    return;
                };
                let step = run.step();
                if step == SourceStep::Stopped
                    || (step == SourceStep::Read && !run.buffer.is_empty())
                {
                    let mut out = output.activate();
                    out.session(cap).give_container(&mut run.buffer);
                }
                if matches!(step, SourceStep::Stopped | SourceStep::Closed) {
                    capability = None;
                }
            }
        });
        stream
    }
}

/// What one run of the source did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SourceStep {
    /// It read (send what it read).
    Read,
    /// It waits (for the model, or after an error).
    Wait,
    /// It stopped (send its last progress; drop the capability).
    Stopped,
    /// It has no reader (its opening failed): drop the capability.
    Closed,
}

/// The source operator's state on one worker.
struct SourceRun {
    reader: Option<KafkaReader>,
    context: SourceContext,
    activator: Activator,
    wait: Duration,
    quiet_since: Option<Instant>,
    last_probe: Instant,
    buffer: Vec<SourceMessage>,
}

impl SourceRun {
    /// A message of the control stream.
    fn control(&mut self, message: Control) {
        match message {
            Control::Stop { error } => {
                let mut w = self.context.worker.borrow_mut();
                w.stopping = true;
                if let Some(e) = error {
                    w.error.get_or_insert(e);
                }
            }
            Control::Limits(limits) => {
                if let Some(r) = self.reader.as_mut() {
                    r.set_limits(&limits);
                }
            }
        }
    }

    /// Reads what there is (into `buffer`), or stops.
    fn step(&mut self) -> SourceStep {
        let worker = &self.context.worker;
        let stopping = worker.borrow().stopping || worker.borrow().error.is_some();
        let Some(r) = self.reader.as_mut() else {
            return SourceStep::Closed;
        };
        if stopping {
            // A last look at the partitions, so the merge can release everything.
            let _ = r.poll(0, &mut self.buffer);
            worker.borrow_mut().source_done = true;
            return SourceStep::Stopped;
        }
        if self.context.backpressure.behind() {
            self.activator.activate_after(Duration::from_millis(2));
            return SourceStep::Wait;
        }
        match r.poll(4096, &mut self.buffer) {
            Err(e) => {
                worker.borrow_mut().fail(e.to_string());
                self.activator.activate();
                SourceStep::Wait
            }
            Ok(n) => {
                let (errors, last) = r.errors();
                let before = worker.borrow().consumer_errors;
                if errors > before {
                    self.context
                        .metrics
                        .consumer_errors
                        .fetch_add(errors - before, Ordering::Relaxed);
                }
                worker.borrow_mut().consumer_errors(errors, last);
                self.pace(n);
                SourceStep::Read
            }
        }
    }

    /// When to read again after reading `n` records: at once after records; idle, after
    /// `idle_pause` with everything read, pause and probe; else backing off.
    fn pace(&mut self, n: usize) {
        if n > 0 {
            self.wait = Duration::from_millis(1);
            self.quiet_since = None;
            self.activator.activate();
            return;
        }
        let quiet = self.reader.as_ref().is_some_and(KafkaReader::all_at_end)
            && !self.context.backpressure.behind();
        if !quiet {
            self.quiet_since = None;
        }
        if let Some(after) = self.context.idle_pause
            && quiet
            && self.quiet_since.get_or_insert_with(Instant::now).elapsed() >= after
        {
            self.probe();
            return;
        }
        self.activator.activate_after(self.wait);
        self.wait = (self.wait * 2).min(Duration::from_millis(50));
    }

    /// An idle source: pauses fetching, then asks the broker for news at most every
    /// [`IDLE_PROBE`] (other inputs may wake the operator sooner).
    fn probe(&mut self) {
        let since = self.last_probe.elapsed();
        if since < IDLE_PROBE {
            self.activator.activate_after(IDLE_PROBE - since);
            return;
        }
        self.last_probe = Instant::now();
        let Some(r) = self.reader.as_mut() else {
            return;
        };
        match r.pause_or_probe() {
            Ok(true) => self.activator.activate_after(IDLE_PROBE),
            Ok(false) => {
                self.quiet_since = None;
                self.wait = Duration::from_millis(1);
                self.activator.activate();
            }
            Err(e) => {
                self.context.worker.borrow_mut().fail(e.to_string());
                self.activator.activate();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(timestamp_ms: Option<i64>) -> RecordView<'static> {
        RecordView {
            partition: 0,
            offset: 7,
            key: Some(b"k"),
            payload: b"{}",
            timestamp_ms,
        }
    }

    #[test]
    fn a_record_without_a_timestamp_is_a_dead_letter_only_when_ordered_by_time() {
        assert_eq!(missing_timestamp(MergeOrder::Offsets, &record(None)), None);
        assert_eq!(
            missing_timestamp(MergeOrder::Timestamps, &record(Some(5))),
            None
        );
        match missing_timestamp(MergeOrder::Timestamps, &record(None)) {
            Some(RecordBody::Dead(d)) => {
                assert_eq!(d.kind, NO_TIMESTAMP);
                assert_eq!(d.key.as_deref(), Some(&b"k"[..]));
                assert_eq!(d.payload, b"{}");
            }
            other => panic!("{other:?}"),
        }
    }
}
