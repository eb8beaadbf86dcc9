//! The job's counters: printed periodically and served in the Prometheus text format.

use super::latency::{LatencyBuckets, LatencyHistogram, LatencySummary};
use flowboost_operators::engine::feedback::JoinCounts;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The counters of a running job, shared by its workers and the metrics responder.
#[derive(Debug)]
pub struct JobMetrics {
    start: Instant,
    /// Event records consumed and decoded (predicted).
    pub events_in: AtomicU64,
    /// Feedback records consumed.
    pub feedback_in: AtomicU64,
    /// Predictions delivered to the sink topic (acknowledged by the broker).
    pub predictions_out: AtomicU64,
    /// Predictions handed to the sink (delivered or not yet).
    pub predictions_sent: AtomicU64,
    /// Output records the paced producer holds now, not yet handed to the Kafka client
    /// (see `KafkaSink::paced`).
    pub sink_held: AtomicU64,
    /// Learning passes: labeled events plus joined feedback.
    pub learned: AtomicU64,
    /// Feedback joined to its pending event.
    pub feedback_joined: AtomicU64,
    /// Pending events dropped before their feedback came (time-to-live or capacity).
    pub feedback_expired: AtomicU64,
    /// Offset commits done.
    pub commits: AtomicU64,
    /// The most records the merge held at once (read, not yet stamped).
    pub merge_held_peak: AtomicU64,
    /// Records the merge placed by their arrival, not by the data (see
    /// [`Merger::late`](super::merge::Merger::late)).
    pub merge_late: AtomicU64,
    /// Checkpoints written, the last one's size and write time, and all write times.
    checkpoints: Mutex<CheckpointStats>,
    /// Transient consumer errors of this process's sources (connection lost, a partition
    /// the broker could not serve, ...).
    pub consumer_errors: AtomicU64,
    /// Producer errors of this process's sink: transient client errors (retried by the
    /// client) and deliveries that failed.
    pub producer_errors: AtomicU64,
    /// Progressive (test-then-train) loss, as f64 bits: 1 - accuracy, or the rank loss.
    progressive_loss: AtomicU64,
    /// Predictions scored for the progressive loss.
    pub scored: AtomicU64,
    dead_letters: Mutex<BTreeMap<String, u64>>,
    lag: Mutex<BTreeMap<(String, i32), i64>>,
    /// The sum of the lags last measured.
    pub lag_total: AtomicI64,
    loss_name: &'static str,
    /// The click window is on (`--click-window`): an event whose window closes without a
    /// click is learned as "no click" (counted in `no_click`) instead of expiring.
    pub click_window: std::sync::atomic::AtomicBool,
    join: Mutex<JoinCounts>,
    /// The end-to-end latency of the predictions written (see [`super::latency`]).
    latency: Mutex<LatencyHistogram>,
    first: Mutex<Option<Instant>>,
    keys: Mutex<BTreeMap<String, KeyStats>>,
}

/// The counters of one key's model (with one model per key, `--keys`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KeyStats {
    /// Predictions handed to the sink.
    pub predictions: u64,
    /// Predictions scored for the progressive loss (those of labeled events).
    pub scored: u64,
    /// The progressive loss of the key's model.
    pub progressive_loss: f64,
}

/// A snapshot of the counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MetricsSnapshot {
    /// Events consumed.
    pub events_in: u64,
    /// Feedback records consumed.
    pub feedback_in: u64,
    /// Predictions delivered.
    pub predictions: u64,
    /// Learning passes.
    pub learned: u64,
    /// Dead letters, all reasons.
    pub dead_letters: u64,
    /// Dead letters by reason kind.
    pub dead_letters_by_reason: BTreeMap<String, u64>,
    /// Feedback joined.
    pub feedback_joined: u64,
    /// Pending events dropped before their feedback.
    pub feedback_expired: u64,
    /// With the click window: events whose window closed without a click record, learned
    /// as "no shown item clicked" (0 without it).
    pub no_click: u64,
    /// The feedback join's counts (a differential aggregate, live).
    pub join: JoinCounts,
    /// The progressive loss (1 - accuracy, or rank loss for multi-label).
    pub progressive_loss: f64,
    /// Which loss that is.
    pub loss: &'static str,
    /// Consumer lag, summed over partitions.
    pub lag: i64,
    /// Commits done.
    pub commits: u64,
    /// The most records the merge held at once (read, not yet stamped): bounded by the
    /// partitions times `--max-read-ahead`.
    pub merge_held_peak: u64,
    /// Records that arrived after their merge block was released, so placed by arrival
    /// time: 0 on a replay (a live stream's quiet partitions may cause some).
    pub merge_late_records: u64,
    /// Checkpoints written (with `--checkpoint-dir`).
    pub checkpoints: CheckpointStats,
    /// The end-to-end latency of the predictions written, in milliseconds: from the
    /// event record's timestamp to its prediction handed to the producer.
    pub latency_ms: LatencySummary,
    /// With one model per key (`--keys`): each key's counters (empty otherwise).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, KeyStats>,
}

/// What the job's checkpoints cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CheckpointStats {
    /// Checkpoints written (each with its transaction committed, when transactional).
    pub written: u64,
    /// The last one's size in bytes.
    pub last_bytes: u64,
    /// The last one's seconds: writing it, committing its transaction, dropping old ones.
    pub last_seconds: f64,
    /// The slowest one's seconds.
    pub max_seconds: f64,
    /// All of them together, in seconds.
    pub total_seconds: f64,
}

impl JobMetrics {
    /// Zero counters; `loss_name` names the progressive loss (`error_rate`, `rank_loss`).
    pub fn new(loss_name: &'static str) -> Self {
        JobMetrics {
            start: Instant::now(),
            events_in: AtomicU64::new(0),
            feedback_in: AtomicU64::new(0),
            predictions_out: AtomicU64::new(0),
            predictions_sent: AtomicU64::new(0),
            sink_held: AtomicU64::new(0),
            learned: AtomicU64::new(0),
            feedback_joined: AtomicU64::new(0),
            feedback_expired: AtomicU64::new(0),
            click_window: std::sync::atomic::AtomicBool::new(false),
            commits: AtomicU64::new(0),
            merge_held_peak: AtomicU64::new(0),
            merge_late: AtomicU64::new(0),
            checkpoints: Mutex::new(CheckpointStats::default()),
            consumer_errors: AtomicU64::new(0),
            producer_errors: AtomicU64::new(0),
            progressive_loss: AtomicU64::new(0f64.to_bits()),
            scored: AtomicU64::new(0),
            dead_letters: Mutex::new(BTreeMap::new()),
            lag: Mutex::new(BTreeMap::new()),
            lag_total: AtomicI64::new(0),
            join: Mutex::new(JoinCounts::default()),
            latency: Mutex::new(LatencyHistogram::default()),
            first: Mutex::new(None),
            keys: Mutex::new(BTreeMap::new()),
            loss_name,
        }
    }

    /// Notes when the first event came (the start of the busy time).
    pub fn first_event(&self) {
        let mut f = lock(&self.first);
        if f.is_none() {
            *f = Some(Instant::now());
        }
    }

    /// When the first event came.
    pub fn first_event_at(&self) -> Option<Instant> {
        *lock(&self.first)
    }

    /// Notes how many records the merge holds now (for the peak).
    pub fn note_held(&self, held: usize) {
        self.merge_held_peak
            .fetch_max(held as u64, Ordering::Relaxed);
    }

    /// Counts one checkpoint of `bytes` that took `took`.
    pub fn checkpoint(&self, bytes: u64, took: Duration) {
        let mut c = lock(&self.checkpoints);
        let s = took.as_secs_f64();
        c.written += 1;
        c.last_bytes = bytes;
        c.last_seconds = s;
        c.max_seconds = c.max_seconds.max(s);
        c.total_seconds += s;
    }

    /// Sets the feedback join's counts.
    pub fn set_join(&self, counts: JoinCounts) {
        *lock(&self.join) = counts;
    }

    /// Counts the end-to-end latencies (milliseconds) of predictions just written.
    pub fn observe_latencies(&self, ms: &[i64]) {
        let mut h = lock(&self.latency);
        for &m in ms {
            h.observe(m);
        }
    }

    /// Counts one dead letter of reason kind `kind`.
    pub fn dead_letter(&self, kind: &str) {
        *lock(&self.dead_letters)
            .entry(kind.to_string())
            .or_default() += 1;
    }

    /// Sets the counters of one key's model.
    pub fn set_key(&self, key: &str, stats: KeyStats) {
        let mut keys = lock(&self.keys);
        match keys.get_mut(key) {
            Some(s) => *s = stats,
            None => {
                keys.insert(key.to_string(), stats);
            }
        }
    }

    /// Sets the progressive loss.
    pub fn set_loss(&self, loss: f64) {
        self.progressive_loss
            .store(loss.to_bits(), Ordering::Relaxed);
    }

    /// Records the lag of one partition.
    pub fn set_lag(&self, topic: &str, partition: i32, lag: i64) {
        let mut all = lock(&self.lag);
        all.insert((topic.to_string(), partition), lag);
        self.lag_total.store(all.values().sum(), Ordering::Relaxed);
    }

    /// A snapshot.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let by_reason = lock(&self.dead_letters).clone();
        let join = *lock(&self.join);
        // With the click window an event never expires unlearned: a window closed without
        // a click is a "no click" learning pass.
        let no_click = if self.click_window.load(Ordering::Relaxed) {
            join.expired()
        } else {
            0
        };
        MetricsSnapshot {
            events_in: self.events_in.load(Ordering::Relaxed),
            feedback_in: self.feedback_in.load(Ordering::Relaxed),
            predictions: self.predictions_out.load(Ordering::Relaxed),
            learned: self.learned.load(Ordering::Relaxed) + join.joined + no_click,
            dead_letters: by_reason.values().sum(),
            dead_letters_by_reason: by_reason,
            feedback_joined: join.joined,
            feedback_expired: join.expired() - no_click,
            no_click,
            join,
            progressive_loss: f64::from_bits(self.progressive_loss.load(Ordering::Relaxed)),
            loss: self.loss_name,
            lag: self.lag_total.load(Ordering::Relaxed),
            commits: self.commits.load(Ordering::Relaxed),
            merge_held_peak: self.merge_held_peak.load(Ordering::Relaxed),
            merge_late_records: self.merge_late.load(Ordering::Relaxed),
            checkpoints: *lock(&self.checkpoints),
            latency_ms: lock(&self.latency).summary(),
            keys: lock(&self.keys).clone(),
        }
    }

    /// One line for the periodic report.
    pub fn line(&self) -> String {
        let s = self.snapshot();
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        format!(
            "flowboost: kafka: {:.0} s: events in {}, predictions out {}, dead letters {}, feedback joined {}, expired {}, progressive {} {:.4}, consumer lag {}, consumer errors {}, {:.0} events/s",
            secs,
            s.events_in,
            s.predictions,
            s.dead_letters,
            s.feedback_joined,
            s.feedback_expired,
            s.loss,
            s.progressive_loss,
            s.lag,
            self.consumer_errors.load(Ordering::Relaxed),
            s.events_in as f64 / secs
        )
    }

    /// The exposition in the OpenMetrics text format (what Prometheus scrapes), encoded by
    /// the `prometheus-client` crate: counters end in `_total`, label values (dead-letter
    /// reasons, topics) are escaped, and the page ends with `# EOF`.
    pub fn prometheus(&self) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Exposition(self.snapshot_for_export())));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }

    /// What a scrape shows: the snapshot plus what only the exposition reports.
    fn snapshot_for_export(&self) -> ExportSnapshot {
        ExportSnapshot {
            snapshot: self.snapshot(),
            consumer_errors: self.consumer_errors.load(Ordering::Relaxed),
            producer_errors: self.producer_errors.load(Ordering::Relaxed),
            sink_held: self.sink_held.load(Ordering::Relaxed),
            lag: lock(&self.lag).clone(),
            uptime_seconds: self.start.elapsed().as_secs_f64(),
            latency: lock(&self.latency).buckets(),
        }
    }
}

/// The values of one scrape.
#[derive(Debug)]
struct ExportSnapshot {
    snapshot: MetricsSnapshot,
    consumer_errors: u64,
    producer_errors: u64,
    sink_held: u64,
    lag: BTreeMap<(String, i32), i64>,
    uptime_seconds: f64,
    latency: LatencyBuckets,
}

/// The job's metrics as a `prometheus-client` collector: every scrape encodes the
/// counters as they are at that moment.
#[derive(Debug)]
struct Exposition(ExportSnapshot);

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for (name, help, value) in self
            .flow_counters()
            .into_iter()
            .chain(self.other_counters())
        {
            let c = ConstCounter::new(value);
            c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)?;
        }
        self.encode_gauges(&mut encoder)?;
        self.encode_families(&mut encoder)
    }
}

impl Exposition {
    /// The counters of the records' flow.
    fn flow_counters(&self) -> [(&'static str, &'static str, u64); 8] {
        let s = &self.0.snapshot;
        [
            (
                "flowboost_events_in",
                "Event records consumed and decoded.",
                s.events_in,
            ),
            (
                "flowboost_feedback_in",
                "Feedback records consumed.",
                s.feedback_in,
            ),
            (
                "flowboost_predictions_out",
                "Predictions delivered to the sink topic.",
                s.predictions,
            ),
            (
                "flowboost_learned",
                "Learning passes (labeled events and joined feedback).",
                s.learned,
            ),
            (
                "flowboost_feedback_joined",
                "Feedback records joined to their pending event.",
                s.feedback_joined,
            ),
            (
                "flowboost_feedback_expired",
                "Pending events dropped before their feedback came.",
                s.feedback_expired,
            ),
            (
                "flowboost_feedback_no_click",
                "Events whose click window closed without a click, learned as no click (--click-window).",
                s.no_click,
            ),
            ("flowboost_commits", "Offset commits.", s.commits),
        ]
    }

    /// The counters of errors, checkpoints and the feedback join.
    fn other_counters(&self) -> [(&'static str, &'static str, u64); 8] {
        let e = &self.0;
        let s = &e.snapshot;
        let j = &s.join;
        [
            (
                "flowboost_merge_late_records",
                "Records that arrived after their merge block was released, so ordered by arrival time (0 on a replay).",
                s.merge_late_records,
            ),
            (
                "flowboost_checkpoints",
                "Checkpoints written (and their transactions committed).",
                s.checkpoints.written,
            ),
            (
                "flowboost_consumer_errors",
                "Transient consumer errors of this process's sources.",
                e.consumer_errors,
            ),
            (
                "flowboost_producer_errors",
                "Producer errors of this process's sink: transient client errors and failed deliveries.",
                e.producer_errors,
            ),
            (
                "flowboost_feedback_late",
                "Feedback records that came after their event expired.",
                j.late,
            ),
            (
                "flowboost_feedback_repeated",
                "Feedback records for an event that had its feedback already.",
                j.repeated,
            ),
            (
                "flowboost_feedback_unmatched",
                "Feedback records that expired without their event.",
                j.unmatched(),
            ),
            (
                "flowboost_events_duplicate",
                "Events whose id was already waiting for feedback.",
                j.duplicate,
            ),
        ]
    }

    /// The gauges.
    fn encode_gauges(&self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let e = &self.0;
        let s = &e.snapshot;
        let j = &s.join;
        // Counts as integer gauges, the rest as floats (a non-finite value as 0).
        let count = |encoder: &mut DescriptorEncoder, name: &str, help: &str, value: u64| {
            let g = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)
        };
        let gauge = |encoder: &mut DescriptorEncoder, name: &str, help: &str, value: f64| {
            let g = ConstGauge::new(if value.is_finite() { value } else { 0.0 });
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)
        };
        count(
            encoder,
            "flowboost_join_waiting",
            "Events waiting for their feedback now.",
            j.waiting,
        )?;
        count(
            encoder,
            "flowboost_join_held",
            "Feedback records waiting for their event now.",
            j.held,
        )?;
        let loss_help = format!("Progressive (test-then-train) loss: {}.", s.loss);
        gauge(
            encoder,
            "flowboost_progressive_loss",
            &loss_help,
            s.progressive_loss,
        )?;
        count(
            encoder,
            "flowboost_merge_held_peak",
            "The most records the merge has held at once (read, not yet stamped; at most the partitions x --max-read-ahead).",
            s.merge_held_peak,
        )?;
        count(
            encoder,
            "flowboost_sink_held",
            "Output records the producer holds now, not yet handed to the Kafka client (it hands a burst over while fewer than 5 are in flight).",
            e.sink_held,
        )?;
        count(
            encoder,
            "flowboost_checkpoint_last_bytes",
            "The last checkpoint's size.",
            s.checkpoints.last_bytes,
        )?;
        gauge(
            encoder,
            "flowboost_checkpoint_last_seconds",
            "The last checkpoint's write and commit time.",
            s.checkpoints.last_seconds,
        )?;
        gauge(
            encoder,
            "flowboost_uptime_seconds",
            "Seconds since the job started.",
            e.uptime_seconds,
        )?;
        Ok(())
    }

    /// The latency histogram and the labeled families: dead letters by reason, the keys'
    /// models, the consumer lag.
    fn encode_families(&self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let e = &self.0;
        let s = &e.snapshot;
        encoder
            .encode_descriptor(
                "flowboost_event_latency_seconds",
                "From an event record's timestamp to its prediction handed to the producer.",
                None,
                MetricType::Histogram,
            )?
            .encode_histogram::<NoLabelSet>(
                e.latency.sum_seconds,
                e.latency.count,
                &e.latency.buckets,
                None,
            )?;
        // Dead letters by reason (a label value, escaped by the encoder); 0 with no label
        // before the first one, so that the series exists from the start.
        let name = "flowboost_dead_letters";
        let help = "Records sent to the dead-letter topic, by reason.";
        let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
        if s.dead_letters_by_reason.is_empty() {
            ConstCounter::new(0u64).encode(family.encode_family(&NO_LABELS)?)?;
        }
        for (reason, n) in &s.dead_letters_by_reason {
            let labels = [("reason", reason.as_str())];
            ConstCounter::new(*n).encode(family.encode_family(&labels)?)?;
        }
        // One model per key: each key's predictions and progressive loss.
        if !s.keys.is_empty() {
            let name = "flowboost_key_predictions";
            let help = "Predictions of each key's model (--keys).";
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (key, k) in &s.keys {
                let labels = [("key", key.as_str())];
                ConstCounter::new(k.predictions).encode(family.encode_family(&labels)?)?;
            }
            let name = "flowboost_key_progressive_loss";
            let help = format!("Progressive loss of each key's model (--keys): {}.", s.loss);
            let mut family = encoder.encode_descriptor(name, &help, None, MetricType::Gauge)?;
            for (key, k) in &s.keys {
                let labels = [("key", key.as_str())];
                let v = if k.progressive_loss.is_finite() {
                    k.progressive_loss
                } else {
                    0.0
                };
                ConstGauge::new(v).encode(family.encode_family(&labels)?)?;
            }
        }
        let name = "flowboost_consumer_lag";
        let help = "Records not yet read, per input partition.";
        let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for ((topic, partition), lag) in &e.lag {
            let partition = partition.to_string();
            let labels = [("topic", topic.as_str()), ("partition", partition.as_str())];
            ConstGauge::new(*lag).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// An empty label set.
const NO_LABELS: [(&str, &str); 0] = [];

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// At most this many metrics connections are served at once (more are closed at once).
pub const MAX_METRICS_CONNECTIONS: usize = 64;

/// Serves `metrics` over HTTP on `addr` (any path answers with the Prometheus text) from
/// a background thread; returns the bound address (useful with port 0). Each connection
/// is read on a thread of its own (at most [`MAX_METRICS_CONNECTIONS`] at once, each for
/// at most 2 s), so idle or slow clients never delay a scrape.
///
/// (tiny_http was tried: its thread pool queues a new connection behind idle ones when
/// they arrive in a burst, and a scrape waited 5 s.)
pub fn serve(addr: &str, metrics: Arc<JobMetrics>) -> Result<std::net::SocketAddr, String> {
    let listener = TcpListener::bind(addr)
        .map_err(|e| format!("--metrics-addr {addr}: cannot listen: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("--metrics-addr {addr}: {e}"))?;
    let active = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("flowboost-metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                if active.fetch_add(1, Ordering::SeqCst) >= MAX_METRICS_CONNECTIONS {
                    active.fetch_sub(1, Ordering::SeqCst);
                    continue;
                }
                let (metrics, done) = (metrics.clone(), active.clone());
                let spawned = std::thread::Builder::new()
                    .name("flowboost-metrics-client".into())
                    .spawn(move || {
                        let _ = answer(stream, &metrics);
                        done.fetch_sub(1, Ordering::SeqCst);
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Ordering::SeqCst);
                }
            }
        })
        .map_err(|e| format!("cannot start the metrics thread: {e}"))?;
    Ok(bound)
}

/// Reads one request's head (for at most 2 s) and answers it; the connection then closes.
fn answer(mut stream: TcpStream, metrics: &JobMetrics) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let body = metrics.prometheus();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_do_not_delay_a_scrape() {
        let metrics = Arc::new(JobMetrics::new("error_rate"));
        metrics.events_in.fetch_add(7, Ordering::Relaxed);
        let addr = serve("127.0.0.1:0", metrics).unwrap();
        // Twenty clients connect and send nothing.
        let idle: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(addr).unwrap()).collect();
        // Answered within the read timeout (one client at a time, each idle one held the
        // responder for 2 s: 40 s; tiny_http's pool queued it behind the idle ones: 5 s).
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.contains("flowboost_events_in_total 7"), "{text}");
        drop(idle);
    }

    #[test]
    fn the_exposition_is_openmetrics_with_escaped_label_values() {
        let metrics = JobMetrics::new("error_rate");
        metrics.events_in.fetch_add(3, Ordering::Relaxed);
        metrics.producer_errors.store(2, Ordering::Relaxed);
        let page = metrics.prometheus();
        // Before any dead letter the series exists, at 0, without a label.
        assert!(
            page.contains("\nflowboost_dead_letters_total 0\n"),
            "{page}"
        );
        metrics.dead_letter("bad \"json\"\nline\\");
        metrics.dead_letter("schema");
        metrics.dead_letter("schema");
        metrics.set_lag("events", 3, 17);
        metrics.set_loss(0.25);
        metrics.sink_held.store(12, Ordering::Relaxed);
        let page = metrics.prometheus();
        for line in [
            "# TYPE flowboost_events_in counter",
            "flowboost_events_in_total 3",
            "flowboost_producer_errors_total 2",
            "flowboost_dead_letters_total{reason=\"bad \\\"json\\\"\\nline\\\\\"} 1",
            "flowboost_dead_letters_total{reason=\"schema\"} 2",
            "flowboost_consumer_lag{topic=\"events\",partition=\"3\"} 17",
            "flowboost_progressive_loss 0.25",
            "flowboost_join_held 0",
            "flowboost_merge_held_peak 0",
            "flowboost_sink_held 12",
        ] {
            assert!(page.lines().any(|l| l == line), "no `{line}` in:\n{page}");
        }
        assert!(page.ends_with("# EOF\n"), "{page}");
        // Every sample line is `name{labels} value`, one per line: no raw newline
        // leaked out of a label value.
        for l in page.lines().filter(|l| !l.starts_with('#')) {
            let value = l.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "a bad sample line `{l}`");
        }
    }
}
