//! A Kafka sink: keyed records to a topic, with delivery confirmation.

use super::OffsetCommitter;
use super::context::{ConnectorContext, Watched};
use super::settle::wait_settled;
use super::{KafkaConfig, KafkaError};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::KafkaError as RdKafkaError;
use rdkafka::message::{DeliveryResult, Message};
use rdkafka::producer::{BaseRecord, Producer, ProducerContext, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientConfig, ClientContext};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where one record landed (kept only when the sink tracks deliveries).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The partition the broker wrote it to.
    pub partition: i32,
    /// Its offset there.
    pub offset: i64,
    /// Its key.
    pub key: Option<Vec<u8>>,
}

/// The sink's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SinkStats {
    /// Records handed to the producer.
    pub produced: u64,
    /// Records the broker acknowledged.
    pub delivered: u64,
    /// Records that failed (rejected, or expired before delivery).
    pub failed: u64,
    /// Transient client errors the producer met (a broker connection lost and retried,
    /// ...); they fail no record by themselves.
    pub client_errors: u64,
}

impl SinkStats {
    /// Records neither delivered nor failed yet.
    pub fn pending(&self) -> u64 {
        self.produced - self.delivered - self.failed
    }
}

/// Counts delivery reports (they are served on the producer's polling thread), and logs the
/// client's logs and errors.
struct DeliveryCounter {
    /// The connector's context: logs, errors, the causes of a hopeless connection.
    connector: ConnectorContext,
    /// The sink's own topic (records to other topics are counted apart too).
    topic: String,
    delivered: AtomicU64,
    /// Of them, to another topic than the sink's.
    delivered_elsewhere: AtomicU64,
    failed: AtomicU64,
    /// Transient client errors (the client's error callback).
    client_errors: AtomicU64,
    /// The first failure since the last flush.
    first_error: Mutex<Option<String>>,
    track: AtomicBool,
    deliveries: Mutex<Vec<Delivery>>,
    /// A paced sink: the records handed to librdkafka so far; when those not yet
    /// delivered or failed fall below [`IDEMPOTENT_IN_FLIGHT`], `drained` is called.
    handed: AtomicU64,
    drained: Mutex<Option<Box<dyn Fn() + Send>>>,
}

impl DeliveryCounter {
    fn for_topic(config: &KafkaConfig, topic: &str) -> Self {
        DeliveryCounter {
            connector: ConnectorContext::new(config, format!("producer to `{topic}`")),
            topic: topic.to_string(),
            delivered: AtomicU64::new(0),
            delivered_elsewhere: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            client_errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
            track: AtomicBool::new(false),
            deliveries: Mutex::new(Vec::new()),
            handed: AtomicU64::new(0),
            drained: Mutex::new(None),
        }
    }
}

impl ClientContext for DeliveryCounter {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.connector.note_log(level, fac, log_message);
    }

    /// Counts the client's errors (librdkafka retries them, [`SinkStats::client_errors`])
    /// and logs them: the first of each kind at `warn`, repeats at `debug`, so that a broker
    /// that stays away does not flood the log.
    fn error(&self, error: RdKafkaError, reason: &str) {
        self.client_errors.fetch_add(1, Ordering::Relaxed);
        self.connector.note_error(&error, reason);
    }
}

impl Watched for DeliveryCounter {
    fn connector(&self) -> &ConnectorContext {
        &self.connector
    }
}

impl ProducerContext for DeliveryCounter {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(message) => {
                self.delivered.fetch_add(1, Ordering::Relaxed);
                if message.topic() != self.topic {
                    self.delivered_elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                if self.track.load(Ordering::Relaxed) {
                    let delivery = Delivery {
                        partition: message.partition(),
                        offset: message.offset(),
                        key: message.key().map(<[u8]>::to_vec),
                    };
                    lock(&self.deliveries).push(delivery);
                }
            }
            Err((error, _)) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                lock(&self.first_error)
                    .get_or_insert_with(|| self.connector.redact(&error.to_string()));
            }
        }
        // Called once as the records in flight fall below the bound (they go one by one).
        let settled = self.delivered.load(Ordering::Relaxed) + self.failed.load(Ordering::Relaxed);
        let in_flight = self.handed.load(Ordering::Relaxed).saturating_sub(settled);
        if in_flight == IDEMPOTENT_IN_FLIGHT - 1
            && let Some(drained) = lock(&self.drained).as_ref()
        {
            drained();
        }
    }
}

/// The records a [paced](KafkaSink::paced) sink holds until fewer than
/// [`IDEMPOTENT_IN_FLIGHT`] are in flight: their keys and payloads in one buffer, in order.
#[derive(Default)]
struct Held {
    bytes: Vec<u8>,
    /// Bytes before this belong to records already handed over.
    start: usize,
    records: VecDeque<HeldRecord>,
}

/// One held record; its key (if any) and then its payload follow in [`Held::bytes`].
struct HeldRecord {
    /// `None`: the sink's topic.
    topic: Option<Box<str>>,
    partition: Option<i32>,
    timestamp_ms: Option<i64>,
    key_len: Option<usize>,
    payload_len: usize,
}

impl HeldRecord {
    fn len(&self) -> usize {
        self.key_len.unwrap_or(0) + self.payload_len
    }
}

/// The most records and bytes of a paced sink's burst: librdkafka's `batch.num.messages`
/// and `batch.size` (its defaults 10,000 and 1,000,000 unless set), the bytes less a
/// tenth, with [`RECORD_OVERHEAD`] counted per record, so that a burst to one partition
/// fits one produce request.
#[derive(Clone, Copy, Debug)]
struct BurstLimits {
    records: usize,
    bytes: usize,
}

fn burst_limits(config: &KafkaConfig) -> BurstLimits {
    let setting = |key: &str| {
        config
            .settings
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse::<usize>().ok())
    };
    let records = setting("batch.num.messages").unwrap_or(10_000).max(1);
    let bytes = setting("batch.size").unwrap_or(1_000_000).max(1);
    BurstLimits {
        records,
        bytes: bytes - bytes / 10,
    }
}

/// librdkafka's idempotent producer sends another produce request to a partition only
/// while fewer than this many *records* of it are in flight (`RD_KAFKA_IDEMP_MAX_INFLIGHT`,
/// compared with a count of messages); a paced sink hands over a burst only then.
const IDEMPOTENT_IN_FLIGHT: u64 = 5;

/// Framing bytes counted per record in a burst (a record's header in a v2 record batch is
/// at most about this).
const RECORD_OVERHEAD: usize = 64;

/// Locks a mutex, ignoring poisoning (the data are counters and logs).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes keyed records to one topic, and tells when they are all acknowledged.
///
/// [`send`](Self::send) enqueues a record (waiting for room when the producer's queue is
/// full); [`flush`](Self::flush) returns once every record sent so far is acknowledged
/// by the broker, or an error if any failed since the previous flush. So: send the
/// outputs of a batch, flush, then commit the source offsets the batch covers.
///
/// Delivery reports are served on a thread of the producer's own (librdkafka's
/// `ThreadedProducer`), not on the caller's: a timely worker that sends records does not
/// spend its time on them.
///
/// The producer's defaults (any can be overridden by [`KafkaConfig::settings`]):
/// `acks=all`, `enable.idempotence=true` (no duplicates or reordering from retries),
/// `client.id=flowboost-sink`, and `linger.ms`:
/// - 5 for [`new`](Self::new) (latency).
/// - 1 for [`paced`](Self::paced): it hands over a burst at a time.
/// - 100 for [`transactional`](Self::transactional): the records of a transaction become
///   visible (to `read_committed` consumers) only at its commit, which sends what lingers
///   at once, so a longer linger delays nothing a reader sees. It lets the broker answer
///   one request before the next batch is ready, which keeps the producer out of
///   librdkafka's busy loop unless the broker takes longer than that.
///
/// The busy loop: librdkafka's idempotent producer (2.12) lets one produce request per
/// partition be in flight, and while it waits for the broker's answer with the next batch
/// past its linger, its broker thread polls with a zero timeout until the answer comes,
/// which on a slow broker burns a core (docs/kafka.md, "The producer's busy loop").
/// Without idempotence that loop goes, but each record enqueued behind a full output
/// queue then wakes the broker thread (a system call on the caller's thread per record),
/// which halved the job's throughput in 2 runs of 5 on a loaded broker: the at-least-once
/// producer stays idempotent, and is [paced](Self::paced) instead.
pub struct KafkaSink {
    producer: ThreadedProducer<DeliveryCounter>,
    topic: String,
    produced: u64,
    /// Failures already reported by a flush.
    failed_reported: u64,
    /// Whether the producer is transactional (a transaction is always open).
    transactional: bool,
    timeout: Duration,
    /// A paced sink's limits, and the records it holds (see [`paced`](Self::paced)).
    paced: Option<BurstLimits>,
    held: Held,
    /// Records handed to librdkafka (`produced` less those held).
    handed: u64,
}

impl KafkaSink {
    /// A producer for `topic`. The topic is not checked here; records to a topic the
    /// broker does not know fail at delivery (unless the broker creates topics itself).
    pub fn new(config: &KafkaConfig, topic: &str) -> Result<Self, KafkaError> {
        Self::plain(config, topic, "5")
    }

    /// A paced producer for `topic` (the Kafka job's at-least-once sink): it holds what
    /// it is sent, and [`pump`](Self::pump) hands what it holds to librdkafka only while
    /// fewer than 5 records are in flight, at most a produce request's worth
    /// (`batch.num.messages`, `batch.size`) at a time; `drained` is called (on the
    /// producer's polling thread) when the records in flight fall below 5, to have the
    /// caller pump again. `linger.ms` is 1: a burst is handed over at once.
    /// [`flush`](Self::flush) pumps until everything is delivered.
    ///
    /// Why: librdkafka's idempotent producer sends another request to a partition only
    /// while fewer than 5 of its records are in flight, and while it waits for the
    /// broker's answer with records past their linger, its broker thread polls with a zero
    /// timeout (see [`KafkaSink`]); a paced sink leaves nothing waiting in librdkafka that
    /// it may not send, so that thread sleeps. It sends as many records per round trip as
    /// the client would, so a broker slow to answer bounds its rate as it bounds the
    /// client's.
    pub fn paced(
        config: &KafkaConfig,
        topic: &str,
        drained: impl Fn() + Send + 'static,
    ) -> Result<Self, KafkaError> {
        let mut sink = Self::plain(config, topic, "1")?;
        *lock(&sink.producer.context().drained) = Some(Box::new(drained));
        sink.paced = Some(burst_limits(config));
        Ok(sink)
    }

    fn plain(config: &KafkaConfig, topic: &str, linger_ms: &str) -> Result<Self, KafkaError> {
        let client: ClientConfig = config.client_config(&[
            ("client.id", "flowboost-sink"),
            ("acks", "all"),
            ("enable.idempotence", "true"),
            ("linger.ms", linger_ms),
        ]);
        let producer = client
            .create_with_context(DeliveryCounter::for_topic(config, topic))
            .map_err(|e| KafkaError::client("creating a producer", e))?;
        Ok(KafkaSink {
            producer,
            topic: topic.to_string(),
            produced: 0,
            failed_reported: 0,
            transactional: false,
            timeout: config.timeout,
            paced: None,
            held: Held::default(),
            handed: 0,
        })
    }

    /// A transactional producer for `topic` (and any other topic through
    /// [`send_to_topic`](Self::send_to_topic)): `transactional.id` is `transactional_id`,
    /// which must stay the same across restarts of one job, so that starting again fences
    /// the previous incarnation and aborts the transaction it left open. A transaction is
    /// open from the start; [`commit_transaction`](Self::commit_transaction) commits it,
    /// with consumed offsets, and opens the next. Records of a transaction never committed
    /// (a crash) stay invisible to `isolation.level=read_committed` consumers.
    ///
    /// Settings as for [`new`](Self::new), but with `linger.ms=100` (see [`KafkaSink`]),
    /// plus `transactional.id`; `transaction.timeout.ms` (librdkafka's
    /// default 60,000) can be set in `config`'s settings.
    pub fn transactional(
        config: &KafkaConfig,
        topic: &str,
        transactional_id: &str,
    ) -> Result<Self, KafkaError> {
        let client: ClientConfig = config.client_config(&[
            ("client.id", "flowboost-sink"),
            ("acks", "all"),
            ("enable.idempotence", "true"),
            ("linger.ms", "100"),
            ("transactional.id", transactional_id),
        ]);
        let producer: ThreadedProducer<DeliveryCounter> = client
            .create_with_context(DeliveryCounter::for_topic(config, topic))
            .map_err(|e| KafkaError::client("creating a transactional producer", e))?;
        let timeout = config.timeout.max(Duration::from_secs(30));
        producer.init_transactions(timeout).map_err(|e| {
            KafkaError::client(format!("starting transactions as `{transactional_id}`"), e)
        })?;
        producer
            .begin_transaction()
            .map_err(|e| KafkaError::client("beginning a transaction", e))?;
        Ok(KafkaSink {
            producer,
            topic: topic.to_string(),
            produced: 0,
            failed_reported: 0,
            transactional: true,
            timeout,
            paced: None,
            held: Held::default(),
            handed: 0,
        })
    }

    /// Fences every earlier producer with `transactional_id` and aborts the transaction
    /// it left open, then lets go: what [`transactional`](Self::transactional) does as it
    /// starts, without keeping a producer. A job that crashed between adding its offsets
    /// to a transaction and committing it left those offsets pending, and a
    /// `read_committed` reader of the group's committed offsets (a restart choosing its
    /// checkpoint) waits for them until the transaction times out (a minute or more):
    /// fencing first makes them final at once.
    pub fn fence(config: &KafkaConfig, transactional_id: &str) -> Result<(), KafkaError> {
        let client: ClientConfig = config.client_config(&[
            ("client.id", "flowboost-fence"),
            ("transactional.id", transactional_id),
        ]);
        let producer: ThreadedProducer<DeliveryCounter> = client
            .create_with_context(DeliveryCounter::for_topic(config, ""))
            .map_err(|e| KafkaError::client("creating a transactional producer", e))?;
        producer
            .init_transactions(config.timeout.max(Duration::from_secs(30)))
            .map_err(|e| {
                KafkaError::client(
                    format!("fencing the earlier producers of `{transactional_id}`"),
                    e,
                )
            })
    }

    /// Whether the producer is transactional.
    pub fn is_transactional(&self) -> bool {
        self.transactional
    }

    /// Commits the open transaction: every record sent since the last commit, and
    /// `offsets` (`(topic, partition, next offset to read)`) as the committed offsets of
    /// `committer`'s group, atomically; then opens the next transaction. On an error the
    /// transaction is not committed (a restart aborts it): the caller must stop.
    pub fn commit_transaction(
        &mut self,
        offsets: &[(&str, i32, i64)],
        committer: &OffsetCommitter,
    ) -> Result<(), KafkaError> {
        if !self.transactional {
            return Err(KafkaError::Invalid(
                "commit_transaction on a producer that is not transactional".into(),
            ));
        }
        if !offsets.is_empty() {
            let mut list = TopicPartitionList::with_capacity(offsets.len());
            for &(topic, p, offset) in offsets {
                list.add_partition_offset(topic, p, Offset::Offset(offset))
                    .map_err(|e| KafkaError::client("building the offsets to commit", e))?;
            }
            let group = committer.group_metadata().ok_or_else(|| {
                KafkaError::Invalid(format!(
                    "no group metadata for group `{}`",
                    committer.group_id()
                ))
            })?;
            self.producer
                .send_offsets_to_transaction(&list, &group, self.timeout)
                .map_err(|e| KafkaError::client("adding the offsets to the transaction", e))?;
        }
        self.producer
            .commit_transaction(self.timeout)
            .map_err(|e| KafkaError::client("committing the transaction", e))?;
        self.producer
            .begin_transaction()
            .map_err(|e| KafkaError::client("beginning a transaction", e))?;
        Ok(())
    }

    /// Keeps where each delivered record landed, for
    /// [`take_deliveries`](Self::take_deliveries) (tests, latency measurements).
    pub fn track_deliveries(self, on: bool) -> Self {
        self.producer.context().track.store(on, Ordering::Relaxed);
        self
    }

    /// The topic written to.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Enqueues one record, to the partition the key hashes to (or any, without a key).
    pub fn send(&mut self, key: Option<&[u8]>, payload: &[u8]) -> Result<(), KafkaError> {
        self.send_to(None, key, payload)
    }

    /// Enqueues one record to a given partition (`None`: by key).
    pub fn send_to(
        &mut self,
        partition: Option<i32>,
        key: Option<&[u8]>,
        payload: &[u8],
    ) -> Result<(), KafkaError> {
        self.send_record(None, partition, key, payload, None)
    }

    /// Enqueues one record with the given timestamp (milliseconds since the epoch, its
    /// CreateTime; [`KafkaSink::send`] leaves it to the producer: the time of sending), to
    /// the partition the key hashes to.
    pub fn send_at(
        &mut self,
        key: Option<&[u8]>,
        payload: &[u8],
        timestamp_ms: i64,
    ) -> Result<(), KafkaError> {
        self.send_record(None, None, key, payload, Some(timestamp_ms))
    }

    /// Enqueues one record to another topic than the sink's (in the same transaction, for
    /// a transactional sink), to the partition the key hashes to.
    pub fn send_to_topic(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        payload: &[u8],
    ) -> Result<(), KafkaError> {
        self.send_record(Some(topic), None, key, payload, None)
    }

    /// Enqueues one record (held, if paced) to `topic`, `None`: the sink's own.
    fn send_record(
        &mut self,
        topic: Option<&str>,
        partition: Option<i32>,
        key: Option<&[u8]>,
        payload: &[u8],
        timestamp_ms: Option<i64>,
    ) -> Result<(), KafkaError> {
        if self.paced.is_some() {
            if let Some(key) = key {
                self.held.bytes.extend_from_slice(key);
            }
            self.held.bytes.extend_from_slice(payload);
            self.held.records.push_back(HeldRecord {
                topic: topic.map(Into::into),
                partition,
                timestamp_ms,
                key_len: key.map(<[u8]>::len),
                payload_len: payload.len(),
            });
            self.produced += 1;
            return Ok(());
        }
        // (Taken out for the call: `hand_over` borrows the sink.)
        let own_topic = std::mem::take(&mut self.topic);
        let result = self.hand_over(
            topic.unwrap_or(&own_topic),
            partition,
            key,
            payload,
            timestamp_ms,
        );
        self.topic = own_topic;
        result?;
        self.produced += 1;
        Ok(())
    }

    /// A paced sink: hands what it holds to librdkafka, a burst at a time, while fewer
    /// than 5 records are in flight (see [`paced`](Self::paced)). Call it after sending,
    /// and when the `drained` callback asks.
    pub fn pump(&mut self) -> Result<(), KafkaError> {
        let Some(limits) = self.paced else {
            return Ok(());
        };
        while !self.held.records.is_empty() && self.in_flight() < IDEMPOTENT_IN_FLIGHT {
            self.hand_over_burst(limits)?;
        }
        if self.held.records.is_empty() {
            self.held.bytes.clear();
            self.held.start = 0;
        } else if self.held.start > self.held.bytes.len() / 2 {
            self.held.bytes.drain(..self.held.start);
            self.held.start = 0;
        }
        Ok(())
    }

    /// Records handed to librdkafka and not yet delivered or failed.
    fn in_flight(&self) -> u64 {
        let context = self.producer.context();
        let settled =
            context.delivered.load(Ordering::Relaxed) + context.failed.load(Ordering::Relaxed);
        self.handed.saturating_sub(settled)
    }

    /// Hands the first held records, as many as `limits` let one request carry.
    fn hand_over_burst(&mut self, limits: BurstLimits) -> Result<(), KafkaError> {
        let context = self.producer.context();
        let (mut count, mut bytes) = (0usize, 0usize);
        for r in &self.held.records {
            let size = r.len() + RECORD_OVERHEAD;
            if count == limits.records || (count > 0 && bytes + size > limits.bytes) {
                break;
            }
            count += 1;
            bytes += size;
        }
        // Counted before the records go: their deliveries may come back at once.
        context
            .handed
            .store(self.handed + count as u64, Ordering::Relaxed);
        // (Taken out for the loop: `hand_over` borrows the sink.)
        let own_topic = std::mem::take(&mut self.topic);
        let bytes = std::mem::take(&mut self.held.bytes);
        let mut result = Ok(());
        for _ in 0..count {
            let Some(r) = self.held.records.pop_front() else {
                break;
            };
            let at = self.held.start;
            let key_end = at + r.key_len.unwrap_or(0);
            let end = key_end + r.payload_len;
            self.held.start = end;
            result = self.hand_over(
                r.topic.as_deref().unwrap_or(&own_topic),
                r.partition,
                r.key_len.map(|_| &bytes[at..key_end]),
                &bytes[key_end..end],
                r.timestamp_ms,
            );
            if result.is_err() {
                break;
            }
            self.handed += 1;
        }
        self.topic = own_topic;
        self.held.bytes = bytes;
        if result.is_err() {
            self.producer
                .context()
                .handed
                .store(self.handed, Ordering::Relaxed);
        }
        result
    }

    /// Records a paced sink holds (not yet handed to librdkafka).
    pub fn held(&self) -> usize {
        self.held.records.len()
    }

    /// Enqueues one record in librdkafka (waiting for room when its queue is full).
    fn hand_over(
        &mut self,
        topic: &str,
        partition: Option<i32>,
        key: Option<&[u8]>,
        payload: &[u8],
        timestamp_ms: Option<i64>,
    ) -> Result<(), KafkaError> {
        let mut record: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic).payload(payload);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(ts) = timestamp_ms {
            record = record.timestamp(ts);
        }
        if let Some(p) = partition {
            record = record.partition(p);
        }
        // Set at the first full queue: no clock read per record.
        let mut deadline = None;
        loop {
            match self.producer.send(record) {
                Ok(()) => return Ok(()),
                Err((RdKafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                    if Instant::now()
                        < *deadline
                            .get_or_insert_with(|| Instant::now() + Duration::from_secs(60)) =>
                {
                    // The local queue is full: let deliveries drain it.
                    record = back;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err((e, _)) => {
                    return Err(KafkaError::client(format!("producing to `{topic}`"), e));
                }
            }
        }
    }

    /// Waits until every record sent so far is acknowledged or failed. Returns the
    /// counters if none failed since the previous flush; [`KafkaError::Undelivered`] if
    /// some did (they are lost: send them again or do not commit what they cover);
    /// [`KafkaError::Timeout`] if some are still pending after `timeout`.
    pub fn flush(&mut self, timeout: Duration) -> Result<SinkStats, KafkaError> {
        // (The polling thread counts the deliveries meanwhile; a paced sink hands over
        // what it holds, a burst per round trip.)
        let topic = self.topic.clone();
        let started = Instant::now();
        let stats = wait_settled(
            timeout,
            || {
                self.pump()?;
                let stats = self.stats();
                // A refused login or an untrusted certificate never heals by waiting.
                if stats.pending() > 0 && stats.delivered == 0 {
                    let watch = self.producer.context().connector();
                    if let Some(cause) = watch.connection_problem(started.elapsed())
                        && !matches!(cause, super::ConnectionCause::Unreachable { .. })
                    {
                        return Err(watch.connection_error(cause));
                    }
                }
                Ok(stats)
            },
            SinkStats::pending,
            |n| format!("waiting for {n} deliveries to `{topic}`"),
        )?;
        if stats.failed > self.failed_reported {
            let failed = stats.failed - self.failed_reported;
            self.failed_reported = stats.failed;
            let first_error = lock(&self.producer.context().first_error)
                .take()
                .unwrap_or_default();
            return Err(KafkaError::Undelivered {
                topic: self.topic.clone(),
                failed,
                first_error,
            });
        }
        Ok(stats)
    }

    /// The counters so far.
    pub fn stats(&self) -> SinkStats {
        let context = self.producer.context();
        SinkStats {
            produced: self.produced,
            delivered: context.delivered.load(Ordering::Relaxed),
            failed: context.failed.load(Ordering::Relaxed),
            client_errors: context.client_errors.load(Ordering::Relaxed),
        }
    }

    /// Records delivered to the sink's own topic (not to others through
    /// [`send_to_topic`](Self::send_to_topic)).
    pub fn delivered_to_topic(&self) -> u64 {
        let c = self.producer.context();
        c.delivered.load(Ordering::Relaxed) - c.delivered_elsewhere.load(Ordering::Relaxed)
    }

    /// The deliveries kept since the last call (empty unless tracking is on).
    pub fn take_deliveries(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut *lock(&self.producer.context().deliveries))
    }
}

impl Drop for KafkaSink {
    /// Gives pending records a short chance to go out (a caller that cares flushes first).
    fn drop(&mut self) {
        let _ = self.producer.flush(Duration::from_secs(1));
    }
}

impl std::fmt::Debug for KafkaSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaSink")
            .field("topic", &self.topic)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
