//! A partitioned Kafka source: one per worker, each reading its own share of a topic's
//! partitions by manual assignment.

use super::admin::{Watermarks, partition_watermarks, topic_partitions_with};
use super::context::ConnectorContext;
use super::{KafkaConfig, KafkaError};
use rdkafka::Message;
use rdkafka::consumer::base_consumer::PartitionQueue;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError as RdKafkaError;
use rdkafka::message::BorrowedMessage;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The high watermark of `topic`'s partition `partition` as librdkafka cached it from the
/// last fetch response for it (no broker request), or `None` while it knows none.
/// (`rd_kafka_get_watermark_offsets`, which the rdkafka crate does not wrap.)
#[allow(unsafe_code)]
fn cached_high_watermark(
    consumer: &BaseConsumer<ConnectorContext>,
    topic: &CStr,
    partition: i32,
) -> Option<i64> {
    let mut low: i64 = -1;
    let mut high: i64 = -1;
    // SAFETY: the client handle is valid while `consumer` lives (it is borrowed for the
    // call); `topic` is a NUL-terminated string that outlives the call; `low` and `high`
    // are live, writable i64s. The function only reads its inputs under the client's own
    // locks (it is thread-safe) and writes the two out-parameters.
    let err = unsafe {
        rdkafka::bindings::rd_kafka_get_watermark_offsets(
            consumer.client().native_ptr(),
            topic.as_ptr(),
            partition,
            &mut low,
            &mut high,
        )
    };
    (err == rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0)
        .then_some(high)
}

/// Where a source starts reading each of its partitions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartFrom {
    /// The oldest record still in the partition.
    Earliest,
    /// The end of the partition when the source starts: only records produced later.
    Latest,
    /// The group's committed offset (the next record to read); a partition without one
    /// starts from the earliest record. The default: resume after a restart.
    #[default]
    Committed,
}

flowboost_operators::named_values!(
    StartFrom,
    "start",
    Earliest => "earliest",
    Latest => "latest",
    Committed => "committed",
);

/// One consumed record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRecord {
    /// The partition it was read from.
    pub partition: i32,
    /// Its offset in that partition (with the partition: a unique, ordered sequence key).
    pub offset: i64,
    /// Its key, if any.
    pub key: Option<Vec<u8>>,
    /// Its value (empty for a record without one).
    pub payload: Vec<u8>,
    /// Its timestamp in milliseconds since the epoch (create or log-append time), if any.
    pub timestamp_ms: Option<i64>,
}

/// A consumed record borrowed from the client's buffer ([`PartitionedSource::poll_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordView<'a> {
    /// The partition it was read from.
    pub partition: i32,
    /// Its offset in that partition.
    pub offset: i64,
    /// Its key, if any.
    pub key: Option<&'a [u8]>,
    /// Its value (empty for a record without one).
    pub payload: &'a [u8],
    /// Its timestamp in milliseconds since the epoch (create or log-append time), if any.
    pub timestamp_ms: Option<i64>,
}

impl RecordView<'_> {
    /// The record, copied.
    pub fn to_record(&self) -> SourceRecord {
        SourceRecord {
            partition: self.partition,
            offset: self.offset,
            key: self.key.map(<[u8]>::to_vec),
            payload: self.payload.to_vec(),
            timestamp_ms: self.timestamp_ms,
        }
    }
}

/// The lag of one partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionLag {
    /// The partition.
    pub partition: i32,
    /// The next offset this source hands out.
    pub position: i64,
    /// The partition's high watermark (the offset the next produced record gets).
    pub high_watermark: i64,
    /// `high_watermark - position` (0 when caught up).
    pub lag: i64,
}

/// A Kafka source for one worker of `workers`: it owns the partitions `p` of the topic
/// with `p % workers == index`, assigned manually (no group membership, no rebalancing),
/// and hands out their records in batches.
///
/// Offsets are committed only by [`commit`](Self::commit) (`enable.auto.commit=false`),
/// synchronously, to the group `group_id`: commit an offset only once the outputs of every
/// record before it are delivered, and a restart with [`StartFrom::Committed`] resumes
/// with no record skipped (at-least-once).
///
/// The consumer's defaults (any can be overridden by [`KafkaConfig::settings`]):
/// `enable.auto.commit=false`, `enable.auto.offset.store=false`,
/// `auto.offset.reset=earliest` (an out-of-range position restarts at the oldest record),
/// `session.timeout.ms=6000`, `heartbeat.interval.ms=500`, `enable.partition.eof=true`
/// (the end of a partition is noted, see [`at_end`](Self::at_end)),
/// `fetch.wait.max.ms=100`, `fetch.queue.backoff.ms=1` (with a small `queued.min.messages`
/// the default 1000 holds each partition's next fetch for a second, and live records wait
/// that long), `client.id=flowboost-source-INDEX`.
///
/// Each owned partition has a queue of its own in the client, so a partition can be held
/// at a read limit ([`set_limit`](Self::set_limit)) while the others go on: its records
/// wait in the client's fetch queue (bounded by `queued.max.messages.kbytes` per partition
/// on a real broker), not in the job.
pub struct PartitionedSource {
    consumer: Arc<BaseConsumer<ConnectorContext>>,
    /// Each owned partition's own queue (the records of that partition come only there).
    queues: BTreeMap<i32, PartitionQueue<ConnectorContext>>,
    /// Per partition, the offset at which the source stops handing out records for now.
    limits: BTreeMap<i32, i64>,
    /// Every owned partition is paused (see [`pause`](Self::pause)).
    paused: bool,
    topic: String,
    /// `topic` as a C string, for the cached watermark.
    topic_c: CString,
    group_id: String,
    partitions: Vec<i32>,
    /// The next offset to hand out, per owned partition.
    positions: BTreeMap<i32, i64>,
    timeout: Duration,
    last_record: Instant,
    errors: u64,
    last_error: Option<String>,
    /// The owned partitions read to their end (and nothing newer since).
    at_end: std::collections::BTreeSet<i32>,
    /// Each owned partition's high watermark when the source opened: the records before
    /// it were written before the job started (a replay's backlog).
    backlog_end: BTreeMap<i32, i64>,
}

impl PartitionedSource {
    /// Connects, lists the partitions of `topic`, takes this worker's share and positions
    /// each partition where `start` says. Fails if the topic does not exist, or if
    /// `index >= workers`. A worker that owns no partition (more workers than partitions)
    /// is valid: it never yields a record and is idle from the start.
    pub fn new(
        config: &KafkaConfig,
        topic: &str,
        group_id: &str,
        index: usize,
        workers: usize,
        start: StartFrom,
    ) -> Result<Self, KafkaError> {
        if workers == 0 || index >= workers {
            return Err(KafkaError::Invalid(format!(
                "worker index {index} out of {workers} workers"
            )));
        }
        let client_id = format!("flowboost-source-{index}");
        let consumer: BaseConsumer<ConnectorContext> = config
            .client_config(&[
                ("group.id", group_id),
                ("client.id", &client_id),
                ("enable.auto.commit", "false"),
                ("enable.auto.offset.store", "false"),
                ("auto.offset.reset", "earliest"),
                ("session.timeout.ms", "6000"),
                ("heartbeat.interval.ms", "500"),
                ("enable.partition.eof", "true"),
                ("fetch.wait.max.ms", "100"),
                ("fetch.queue.backoff.ms", "1"),
            ])
            .create_with_context(ConnectorContext::new(config, client_id.clone()))
            .map_err(|e| KafkaError::client("creating a consumer", e))?;
        let timeout = config.timeout;
        let all = topic_partitions_with(&consumer, topic, timeout)?;
        let partitions: Vec<i32> = all
            .into_iter()
            .filter(|&p| p as usize % workers == index)
            .collect();
        // A topic name with a NUL byte cannot exist (Kafka allows [a-zA-Z0-9._-]).
        let topic_c =
            CString::new(topic).map_err(|_| KafkaError::UnknownTopic(topic.to_string()))?;
        let mut source = PartitionedSource {
            consumer: Arc::new(consumer),
            topic_c,
            queues: BTreeMap::new(),
            limits: BTreeMap::new(),
            paused: false,
            topic: topic.to_string(),
            group_id: group_id.to_string(),
            partitions,
            positions: BTreeMap::new(),
            timeout,
            last_record: Instant::now(),
            errors: 0,
            last_error: None,
            at_end: Default::default(),
            backlog_end: BTreeMap::new(),
        };
        source.positions = source.start_positions(start)?;
        for (&p, &position) in &source.positions {
            let high = source.watermarks(p)?.high;
            if position >= high {
                source.at_end.insert(p);
            }
            source.backlog_end.insert(p, high);
        }
        source.assign()?;
        Ok(source)
    }

    /// Resolves `start` to a concrete offset per owned partition.
    fn start_positions(&self, start: StartFrom) -> Result<BTreeMap<i32, i64>, KafkaError> {
        let mut committed = BTreeMap::new();
        if start == StartFrom::Committed && !self.partitions.is_empty() {
            for (p, offset) in self.committed()? {
                if let Some(offset) = offset {
                    committed.insert(p, offset);
                }
            }
        }
        let mut positions = BTreeMap::new();
        for &p in &self.partitions {
            let Watermarks { low, high, .. } = self.watermarks(p)?;
            let offset = match start {
                StartFrom::Earliest => low,
                StartFrom::Latest => high,
                // A committed offset below the low watermark (records deleted by
                // retention) starts at the oldest record still there.
                StartFrom::Committed => committed.get(&p).map_or(low, |&c| c.clamp(low, high)),
            };
            positions.insert(p, offset);
        }
        Ok(positions)
    }

    fn watermarks(&self, partition: i32) -> Result<Watermarks, KafkaError> {
        partition_watermarks(self.consumer.client(), &self.topic, partition, self.timeout)
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The consumer group offsets are committed to.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The partitions this source owns, ascending (maybe none).
    pub fn partitions(&self) -> &[i32] {
        &self.partitions
    }

    /// The next offset to hand out, per owned partition, ascending by partition: what
    /// [`commit`](Self::commit) takes once everything handed out so far is processed.
    pub fn positions(&self) -> Vec<(i32, i64)> {
        self.positions.iter().map(|(&p, &o)| (p, o)).collect()
    }

    /// Waits up to `timeout` for records, then takes every record already fetched, up to
    /// `max_records` in all (shared among the partitions), none of a partition at or past
    /// its [limit](Self::set_limit). Returns an empty batch when none came in time. Records
    /// of one partition come in offset order.
    ///
    /// Transient client errors (a broker connection lost and retried, ...) are counted
    /// ([`errors`](Self::errors)) and do not end the batch; a fatal one is returned.
    pub fn poll_batch(
        &mut self,
        max_records: usize,
        timeout: Duration,
    ) -> Result<Vec<SourceRecord>, KafkaError> {
        let mut batch = Vec::new();
        self.poll_with(max_records, timeout, |r| batch.push(r.to_record()))?;
        Ok(batch)
    }

    /// [`poll_batch`](Self::poll_batch) without copies: hands each record to `each` as a
    /// [`RecordView`] of the client's buffer (for a reader that decodes in place and keeps
    /// the bytes only when it must). Returns how many records it handed out.
    pub fn poll_with(
        &mut self,
        max_records: usize,
        timeout: Duration,
        mut each: impl FnMut(RecordView<'_>),
    ) -> Result<usize, KafkaError> {
        let deadline = Instant::now() + timeout;
        let queues = std::mem::take(&mut self.queues);
        let result = self.poll_queues(&queues, max_records, deadline, &mut each);
        self.queues = queues;
        let taken = result?;
        if taken > 0 {
            self.last_record = Instant::now();
        }
        Ok(taken)
    }

    fn poll_queues(
        &mut self,
        queues: &BTreeMap<i32, PartitionQueue<ConnectorContext>>,
        max_records: usize,
        deadline: Instant,
        each: &mut impl FnMut(RecordView<'_>),
    ) -> Result<usize, KafkaError> {
        let share = max_records.div_ceil(queues.len().max(1)).max(1);
        let consumer = Arc::clone(&self.consumer);
        let mut taken = 0;
        loop {
            // The consumer's own queue carries the client's events (errors); it must be
            // served even though every partition's records come on the partition queues.
            while let Some(result) = consumer.poll(Duration::ZERO) {
                taken += usize::from(self.take(result, each)?);
            }
            for (&p, queue) in queues {
                let mut from_queue = 0;
                while from_queue < share && taken < max_records && self.below_limit(p) {
                    let Some(result) = queue.poll(Duration::ZERO) else {
                        break;
                    };
                    let took = usize::from(self.take(result, each)?);
                    from_queue += took;
                    taken += took;
                }
            }
            if taken == 0 {
                // Nothing queued anywhere: a quiet moment, not a gap between two records
                // of a busy stream.
                for &p in queues.keys() {
                    self.note_caught_up(p);
                }
            }
            let now = Instant::now();
            if taken > 0 || now >= deadline {
                return Ok(taken);
            }
            // Nothing yet: wait a little (serving the client's events meanwhile).
            let wait = (deadline - now).min(Duration::from_millis(5));
            if let Some(result) = consumer.poll(wait) {
                taken += usize::from(self.take(result, each)?);
            }
        }
    }

    /// Partition `p`'s queue is empty: if its position has reached the high watermark of
    /// the client's last fetch response (cached by librdkafka, no request), it is read to
    /// its end. librdkafka's end-of-partition event comes only with a fetch that returns
    /// no record, and Apache Kafka holds such a fetch for `fetch.wait.max.ms`: on a live
    /// stream whose fetches all return records, the event never comes, and the merge
    /// would wait for full epochs (at 1,000 events/s, 256-record epochs: 130 ms at the
    /// median). The watermark says the same thing at once.
    fn note_caught_up(&mut self, p: i32) {
        if self.at_end.contains(&p) {
            return;
        }
        let Some(&position) = self.positions.get(&p) else {
            return;
        };
        if cached_high_watermark(&self.consumer, &self.topic_c, p).is_some_and(|h| position >= h) {
            self.at_end.insert(p);
        }
    }

    fn below_limit(&self, p: i32) -> bool {
        match (self.limits.get(&p), self.positions.get(&p)) {
            (Some(&limit), Some(&position)) => position < limit,
            _ => true,
        }
    }

    /// Takes one result of a poll: a record of an owned partition at or after its position
    /// goes to `each` (returns true); the end of a partition is noted; transient errors
    /// are counted; a fatal one is returned.
    fn take(
        &mut self,
        result: Result<BorrowedMessage<'_>, RdKafkaError>,
        each: &mut impl FnMut(RecordView<'_>),
    ) -> Result<bool, KafkaError> {
        match result {
            Ok(message) => {
                let partition = message.partition();
                let offset = message.offset();
                // Only assigned partitions deliver records; skip anything else, and
                // anything before the position (a re-delivery after a reset).
                let Some(position) = self.positions.get_mut(&partition) else {
                    return Ok(false);
                };
                if message.topic() != self.topic || offset < *position {
                    return Ok(false);
                }
                *position = offset + 1;
                self.at_end.remove(&partition);
                each(RecordView {
                    partition,
                    offset,
                    key: message.key(),
                    payload: message.payload().unwrap_or_default(),
                    timestamp_ms: message.timestamp().to_millis(),
                });
                Ok(true)
            }
            Err(RdKafkaError::PartitionEOF(p)) => {
                if self.positions.contains_key(&p) {
                    self.at_end.insert(p);
                }
                Ok(false)
            }
            Err(e @ RdKafkaError::MessageConsumptionFatal(_)) => {
                Err(KafkaError::client(format!("consuming `{}`", self.topic), e))
            }
            Err(e) => {
                self.errors += 1;
                self.last_error = Some(e.to_string());
                Ok(false)
            }
        }
    }

    /// Stops fetching every owned partition: for an idle source. A client fetches again as
    /// soon as a fetch comes back empty, relying on the broker to hold an empty fetch for
    /// `fetch.wait.max.ms` (as Apache Kafka does); a broker that answers at once makes an
    /// idle client spin. Paused, the source hands out nothing; ask
    /// [`has_news`](Self::has_news) now and then and [`resume`](Self::resume).
    ///
    /// The partitions are unassigned (librdkafka's `pause` keeps the fetcher backed off for
    /// about half a second after a `resume` here), and assigned again at this source's
    /// positions by `resume`.
    pub fn pause(&mut self) -> Result<(), KafkaError> {
        if self.paused || self.partitions.is_empty() {
            return Ok(());
        }
        self.queues.clear();
        self.consumer
            .unassign()
            .map_err(|e| KafkaError::client(format!("pausing `{}`", self.topic), e))?;
        self.paused = true;
        Ok(())
    }

    /// Whether the source is [paused](Self::pause).
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Whether an owned partition has a record past this source's position: asks the
    /// broker for each partition's end (one request per partition; blocking, short on a
    /// healthy broker).
    pub fn has_news(&self) -> Result<bool, KafkaError> {
        for (&p, &position) in &self.positions {
            let high = self.watermarks(p)?.high;
            if high > position {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Fetches again after a [pause](Self::pause), from this source's positions: nothing
    /// is skipped or handed out twice.
    pub fn resume(&mut self) -> Result<(), KafkaError> {
        if !self.paused {
            return Ok(());
        }
        self.assign()?;
        self.paused = false;
        Ok(())
    }

    /// Starts again at the given offsets (a checkpoint's): each owned partition found in
    /// `positions` is read from its offset there (clamped to the records still there);
    /// the others keep their position. Call it before the first poll.
    pub fn start_at(&mut self, positions: &BTreeMap<i32, i64>) -> Result<(), KafkaError> {
        let owned: Vec<i32> = self.partitions.clone();
        let mut changed = false;
        for p in owned {
            let Some(&offset) = positions.get(&p) else {
                continue;
            };
            let Watermarks { low, high, .. } = self.watermarks(p)?;
            let offset = offset.clamp(low, high);
            if offset < high {
                self.at_end.remove(&p);
            } else {
                self.at_end.insert(p);
            }
            changed |= self.positions.insert(p, offset) != Some(offset);
        }
        if changed && !self.paused {
            self.assign()?;
        }
        Ok(())
    }

    /// Assigns the owned partitions at this source's positions, each with a queue of its own.
    fn assign(&mut self) -> Result<(), KafkaError> {
        let topic = self.topic.clone();
        let mut assignment = TopicPartitionList::with_capacity(self.partitions.len());
        for (&p, &offset) in &self.positions {
            assignment
                .add_partition_offset(&topic, p, Offset::Offset(offset))
                .map_err(|e| KafkaError::client("building the assignment", e))?;
        }
        self.consumer
            .assign(&assignment)
            .map_err(|e| KafkaError::client(format!("assigning partitions of `{topic}`"), e))?;
        // Split after the assignment (an assignment undoes earlier splits), before any poll.
        for &p in &self.partitions {
            let queue = self
                .consumer
                .split_partition_queue(&topic, p)
                .ok_or_else(|| {
                    KafkaError::Invalid(format!("no queue for partition {p} of `{topic}`"))
                })?;
            self.queues.insert(p, queue);
        }
        Ok(())
    }

    /// Holds partition `p` at offset `limit`: [`poll_batch`](Self::poll_batch) hands out
    /// no record of `p` at or past it until the limit is raised (`None`: no limit). The
    /// records past it stay in the client. A job bounds what it holds this way: each
    /// partition may be read only so far ahead of what the job has processed.
    pub fn set_limit(&mut self, p: i32, limit: Option<i64>) {
        match limit {
            Some(l) => self.limits.insert(p, l),
            None => self.limits.remove(&p),
        };
    }

    /// Commits `offsets` (partition, next offset to read) for the group, synchronously.
    /// Every partition must be owned by this source. Commit offset `o` only once the
    /// outputs of all records before `o` are delivered.
    pub fn commit(&self, offsets: &[(i32, i64)]) -> Result<(), KafkaError> {
        if offsets.is_empty() {
            return Ok(());
        }
        let mut list = TopicPartitionList::with_capacity(offsets.len());
        for &(p, offset) in offsets {
            if !self.positions.contains_key(&p) {
                return Err(KafkaError::Invalid(format!(
                    "commit for partition {p} of `{}`, not owned by this source (owns {:?})",
                    self.topic, self.partitions
                )));
            }
            if offset < 0 {
                return Err(KafkaError::Invalid(format!(
                    "commit of offset {offset} for partition {p}"
                )));
            }
            list.add_partition_offset(&self.topic, p, Offset::Offset(offset))
                .map_err(|e| KafkaError::client("building the commit", e))?;
        }
        self.consumer
            .commit(&list, CommitMode::Sync)
            .map_err(|e| KafkaError::client(format!("committing offsets of `{}`", self.topic), e))
    }

    /// Commits the current [`positions`](Self::positions): everything handed out so far.
    pub fn commit_positions(&self) -> Result<(), KafkaError> {
        self.commit(&self.positions())
    }

    /// The group's committed offset per owned partition (`None`: nothing committed).
    pub fn committed(&self) -> Result<Vec<(i32, Option<i64>)>, KafkaError> {
        let mut list = TopicPartitionList::with_capacity(self.partitions.len());
        for &p in &self.partitions {
            list.add_partition(&self.topic, p);
        }
        let list = super::committer::committed_offsets(&self.consumer, &list, self.timeout)
            .map_err(|e| {
                KafkaError::client(format!("fetching committed offsets of `{}`", self.topic), e)
            })?;
        let mut out: Vec<(i32, Option<i64>)> = list
            .elements_for_topic(&self.topic)
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => (e.partition(), Some(o)),
                _ => (e.partition(), None),
            })
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// The lag of every owned partition: its high watermark minus this source's position.
    /// Asks the broker (one request per partition): call it periodically, not per batch.
    pub fn lag(&self) -> Result<Vec<PartitionLag>, KafkaError> {
        self.positions
            .iter()
            .map(|(&partition, &position)| {
                let high = self.watermarks(partition)?.high;
                Ok(PartitionLag {
                    partition,
                    position,
                    high_watermark: high,
                    lag: (high - position).max(0),
                })
            })
            .collect()
    }

    /// Whether partition `p` was read to its end (librdkafka's end-of-partition event, the
    /// high watermark of the last fetch reached with nothing queued, or at the start) and
    /// nothing came since.
    pub fn at_end(&self, p: i32) -> bool {
        self.at_end.contains(&p)
    }

    /// Partition `p`'s high watermark when the source opened (every record before it was
    /// written before the source started; 0 for a partition it does not own).
    pub fn backlog_end(&self, p: i32) -> i64 {
        self.backlog_end.get(&p).copied().unwrap_or(0)
    }

    /// How long since the last batch with records (or since the source started).
    pub fn idle_for(&self) -> Duration {
        self.last_record.elapsed()
    }

    /// Whether no record came for at least `limit` (for `--exit-when-idle`).
    pub fn is_idle(&self, limit: Duration) -> bool {
        self.idle_for() >= limit
    }

    /// How many transient client errors polling has met.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// The last transient client error, if any.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

impl std::fmt::Debug for PartitionedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedSource")
            .field("topic", &self.topic)
            .field("group_id", &self.group_id)
            .field("positions", &self.positions)
            .finish_non_exhaustive()
    }
}

/// The consumer lag of a group, as Kafka's tools define it: per partition, the high
/// watermark minus the group's committed offset (the low watermark where the group has
/// committed nothing). One client, kept between calls; each call asks the broker
/// (metadata, committed offsets, one watermark request per partition) with blocking calls:
/// call it from a thread of its own, every few seconds, never from a worker.
pub struct GroupLag {
    consumer: BaseConsumer<ConnectorContext>,
    timeout: Duration,
}

impl GroupLag {
    /// A client for group `group_id` (it reads the group's offsets; it never joins it).
    pub fn new(config: &KafkaConfig, group_id: &str) -> Result<Self, KafkaError> {
        let consumer: BaseConsumer<ConnectorContext> = config
            .client_config(&[
                ("group.id", group_id),
                ("enable.auto.commit", "false"),
                ("client.id", "flowboost-lag"),
            ])
            .create_with_context(ConnectorContext::new(config, "flowboost-lag"))
            .map_err(|e| KafkaError::client("creating a consumer for the lag", e))?;
        Ok(GroupLag {
            consumer,
            timeout: config.timeout,
        })
    }

    /// The group's lag on every partition of `topic`.
    pub fn lag(&self, topic: &str) -> Result<Vec<PartitionLag>, KafkaError> {
        let partitions = topic_partitions_with(&self.consumer, topic, self.timeout)?;
        let mut list = TopicPartitionList::with_capacity(partitions.len());
        for &p in &partitions {
            list.add_partition(topic, p);
        }
        let committed = super::committer::committed_offsets(&self.consumer, &list, self.timeout)
            .map_err(|e| {
                KafkaError::client(format!("fetching committed offsets of `{topic}`"), e)
            })?;
        let mut out = Vec::with_capacity(partitions.len());
        for &p in &partitions {
            let Watermarks { low, high, .. } =
                partition_watermarks(self.consumer.client(), topic, p, self.timeout)?;
            let position = match committed.find_partition(topic, p).map(|e| e.offset()) {
                Some(Offset::Offset(o)) => o,
                _ => low,
            };
            out.push(PartitionLag {
                partition: p,
                position,
                high_watermark: high,
                lag: (high - position).max(0),
            });
        }
        Ok(out)
    }
}
