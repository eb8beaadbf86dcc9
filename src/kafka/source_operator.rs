//! The Kafka source: a timely operator on every worker, reading its share of the
//! partitions of the events and feedback topics (of all processes), decoding what it reads
//! there, and never blocking: it polls without waiting and parks between polls.

use super::JobOptions;
use super::merge::{EVENTS, FEEDBACK, MergeOrder, Raw, RawRecord, StreamId};
use super::metrics::JobMetrics;
use super::record::{Control, DeadBody, RecordBody, SourceMessage};
use super::worker_state::WorkerState;
use flowboost_connectors::kafka::{PartitionedSource, RecordDecoder, RecordView};
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

impl KafkaReader {
    /// Opens this worker's share (worker `index` of `peers`, all processes) of the topics.
    pub fn open(
        options: &JobOptions,
        schema: &Schema,
        index: usize,
        peers: usize,
    ) -> Result<Self, String> {
        let config = options.kafka();
        let mut topics = vec![(EVENTS, options.source.as_str())];
        if let Some(f) = &options.feedback {
            topics.push((FEEDBACK, f.as_str()));
        }
        let mut sources = Vec::new();
        for (stream, topic) in topics {
            let s =
                PartitionedSource::new(&config, topic, &options.group, index, peers, options.start)
                    .map_err(|e| format!("source `{topic}`: {e}"))?;
            sources.push((stream, s));
        }
        Ok(KafkaReader {
            sources,
            decoder: match &options.writer_schemas {
                Some(w) => {
                    RecordDecoder::new(schema, options.format).with_writer_schemas(w.clone())
                }
                None => RecordDecoder::new(schema, options.format),
            },
            keys: options.keys.clone(),
            order: options.merge_order,
            sent: BTreeMap::new(),
            probe_errors: 0,
            last_probe_error: None,
        })
    }

    /// Starts every source partition named in `offsets` (`(topic, partition)` to the next
    /// offset: a checkpoint's) there instead (before the first poll).
    pub fn start_at(&mut self, offsets: &super::checkpoint::OffsetMap) -> Result<(), String> {
        for (_, source) in &mut self.sources {
            let topic = source.topic().to_string();
            let mine: BTreeMap<i32, i64> = offsets
                .iter()
                .filter(|((t, _), _)| *t == topic)
                .map(|((_, p), &o)| (*p, o))
                .collect();
            source
                .start_at(&mine)
                .map_err(|e| format!("source `{topic}`: {e}"))?;
        }
        Ok(())
    }

    /// Takes what the consumers have fetched (at most `max` records, without waiting),
    /// decoded, then the progress of every partition whose position or end changed.
    /// Returns the number of records.
    pub fn poll(&mut self, max: usize, out: &mut Vec<SourceMessage>) -> Result<usize, String> {
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
                .map_err(|e| format!("reading `{}`: {e}", source.topic()))?;
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
    fn pause_or_probe(&mut self) -> Result<bool, String> {
        let paused = self.sources.iter().any(|(_, s)| s.is_paused());
        if !paused {
            for (_, s) in &mut self.sources {
                s.pause().map_err(|e| e.to_string())?;
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
                s.resume().map_err(|e| e.to_string())?;
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
    pub fn set_limits(&mut self, limits: &[(StreamId, i32, i64)]) {
        for (stream, source) in &mut self.sources {
            for &(s, p, limit) in limits {
                if s == *stream && source.partitions().contains(&p) {
                    source.set_limit(p, Some(limit));
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

/// The source operator of one worker: reads (when the model keeps up, and each partition
/// only up to the merge's read limit for it), decodes, sends records and progress; parks
/// between polls (1 ms after records, backing off to 50 ms when idle); after `idle_pause`
/// with every partition read to its end it pauses fetching and asks the broker every
/// [`IDLE_PROBE`] for news instead; stops on the control stream's `Stop` (or a local
/// error, which it reports there through the worker's state).
pub fn kafka_source<'scope>(
    control: Stream<'scope, u64, Vec<Control>>,
    reader: Option<KafkaReader>,
    backpressure: Backpressure,
    idle_pause: Option<Duration>,
    metrics: Arc<JobMetrics>,
    worker: Rc<RefCell<WorkerState>>,
) -> Stream<'scope, u64, Vec<SourceMessage>> {
    let scope = control.scope();
    let mut builder = OperatorBuilder::new("KafkaSource".to_string(), scope);
    let info = builder.operator_info();
    let activator = scope.activator_for(info.address);
    let mut control_in = builder.new_input_connection(control, Pipeline, std::iter::empty());
    let (output, stream) =
        builder.new_output_connection::<Vec<SourceMessage>, _>(std::iter::empty());
    let mut output = timely::dataflow::operators::generic::OutputBuilder::from(output);
    builder.build(move |mut capabilities| {
        let mut capability = capabilities.pop();
        let mut reader = reader;
        let mut wait = Duration::from_millis(1);
        let mut quiet_since: Option<Instant> = None;
        let mut last_probe = Instant::now();
        let mut buffer = Vec::new();
        move |_frontiers| {
            control_in.for_each(|_time, data| {
                for message in data.drain(..) {
                    match message {
                        Control::Stop { error } => {
                            let mut w = worker.borrow_mut();
                            w.stopping = true;
                            if let Some(e) = error {
                                w.error.get_or_insert(e);
                            }
                        }
                        Control::Limits(limits) => {
                            if let Some(r) = reader.as_mut() {
                                r.set_limits(&limits);
                            }
                        }
                    }
                }
            });
            let Some(cap) = capability.as_ref() else {
                return;
            };
            let stopping = worker.borrow().stopping || worker.borrow().error.is_some();
            let Some(r) = reader.as_mut() else {
                capability = None;
                return;
            };
            if stopping {
                // A last look at the partitions, so the merge can release everything.
                let _ = r.poll(0, &mut buffer);
                let mut out = output.activate();
                out.session(cap).give_container(&mut buffer);
                drop(out);
                capability = None;
                worker.borrow_mut().source_done = true;
                return;
            }
            if backpressure.behind() {
                activator.activate_after(Duration::from_millis(2));
                return;
            }
            match r.poll(4096, &mut buffer) {
                Err(e) => {
                    worker.borrow_mut().fail(e);
                    activator.activate();
                }
                Ok(n) => {
                    let (errors, last) = r.errors();
                    let before = worker.borrow().consumer_errors;
                    if errors > before {
                        metrics
                            .consumer_errors
                            .fetch_add(errors - before, Ordering::Relaxed);
                    }
                    worker.borrow_mut().consumer_errors(errors, last);
                    if !buffer.is_empty() {
                        let mut out = output.activate();
                        out.session(cap).give_container(&mut buffer);
                    }
                    if n > 0 {
                        wait = Duration::from_millis(1);
                        quiet_since = None;
                        activator.activate();
                        return;
                    }
                    // Idle: after `idle_pause` with everything read, pause and probe.
                    let quiet = r.all_at_end() && !backpressure.behind();
                    if !quiet {
                        quiet_since = None;
                    }
                    if let Some(after) = idle_pause
                        && quiet
                        && quiet_since.get_or_insert_with(Instant::now).elapsed() >= after
                    {
                        // Other inputs may wake the operator: probe at most every IDLE_PROBE.
                        let since = last_probe.elapsed();
                        if since < IDLE_PROBE {
                            activator.activate_after(IDLE_PROBE - since);
                            return;
                        }
                        last_probe = Instant::now();
                        match r.pause_or_probe() {
                            Ok(true) => activator.activate_after(IDLE_PROBE),
                            Ok(false) => {
                                quiet_since = None;
                                wait = Duration::from_millis(1);
                                activator.activate();
                            }
                            Err(e) => {
                                worker.borrow_mut().fail(e);
                                activator.activate();
                            }
                        }
                        return;
                    }
                    activator.activate_after(wait);
                    wait = (wait * 2).min(Duration::from_millis(50));
                }
            }
        }
    });
    stream
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
