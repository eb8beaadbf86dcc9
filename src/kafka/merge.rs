//! The deterministic merge of the partitions read by all workers into one sequence.

use super::partition_offset::PartitionOffset;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Which input topic a record comes from.
pub type StreamId = u8;
/// The events topic.
pub const EVENTS: StreamId = 0;
/// The feedback topic.
pub const FEEDBACK: StreamId = 1;

/// One consumed record, as a worker's source hands it to the merge: where it was read,
/// and its body (decoded where it was read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawRecord<B> {
    /// The topic: [`EVENTS`] or [`FEEDBACK`].
    pub stream: StreamId,
    /// Its partition.
    pub partition: i32,
    /// Its offset there.
    pub offset: i64,
    /// Its order key (see [`MergeOrder`]): the source sets the record's Kafka timestamp
    /// (milliseconds; `i64::MIN` when it has none); the merge replaces it with the key it
    /// orders by (the offset, or the timestamp clamped to its partition's previous key).
    pub key: i64,
    /// Its Kafka timestamp as read (milliseconds), which the merge leaves alone.
    pub timestamp_ms: Option<i64>,
    /// What it holds.
    pub body: B,
}

/// What the merge orders records by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MergeOrder {
    /// By offset: blocks of offsets per partition (`--merge-order offsets`).
    #[default]
    Offsets,
    /// By Kafka record timestamp (milliseconds), clamped to be non-decreasing within each
    /// partition (a record older than its partition's previous one takes that one's key),
    /// in blocks of milliseconds (`--merge-order timestamps`).
    Timestamps,
}

flowboost_operators::named_values!(
    MergeOrder,
    "merge order",
    Offsets => "offsets",
    Timestamps => "timestamps",
);

/// What a worker's sources send to the merge (worker 0), in order per worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Raw<B> {
    /// A consumed record.
    Record(RawRecord<B>),
    /// A partition's progress: every record before `position` was sent; `caught_up` says
    /// that `position` was the partition's end (high watermark) when last checked.
    Progress {
        /// The topic.
        stream: StreamId,
        /// The partition.
        partition: i32,
        /// The next offset the source hands out.
        position: i64,
        /// Whether the partition had no more records when checked.
        caught_up: bool,
        /// The partition's end when its source opened: the records before it were written
        /// before the job started (a replay), and the merge always waits for them.
        backlog_end: i64,
    },
}

#[derive(Debug)]
struct PartitionState<B> {
    queue: VecDeque<RawRecord<B>>,
    /// Every record before this offset was received (`None`: nothing came yet).
    known: Option<i64>,
    /// The owner's first [`Raw::Progress`] came (with the backlog's end): until then the
    /// partition holds everything back, even when some of its records came first.
    reported: bool,
    caught_up: bool,
    backlog_end: i64,
    /// The key of the last record received (timestamps: every later record's key is at
    /// least this; `i64::MIN`: none yet).
    last_key: i64,
}

impl<B> Default for PartitionState<B> {
    fn default() -> Self {
        PartitionState {
            queue: VecDeque::new(),
            known: None,
            reported: false,
            caught_up: false,
            backlog_end: 0,
            last_key: i64::MIN,
        }
    }
}

/// Which records [`Merger::next_block`] may release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// In the data's order (every partition not caught up is read past the block).
    Data,
    /// After a wait on a live stream (see [`Merger::release_waited`]).
    Waited,
    /// Everything held (the end of a run).
    All,
}

/// Merges the records of every partition of the input topics into one sequence that
/// depends only on the data (their `(partition, offset)`, and with
/// [`MergeOrder::Timestamps`] their timestamps), not on arrival timing, when no partition
/// is caught up before its end (a replay of a topic written before the job reads it).
///
/// Each record has an order key: its offset ([`MergeOrder::Offsets`]), or its timestamp
/// clamped to be non-decreasing within its partition ([`MergeOrder::Timestamps`]). The
/// keys are cut into blocks of `block`. A record is released once every partition that
/// is not caught up has been read past the end of the record's block (offsets: its next
/// offset is past it; timestamps: its last record's key is, since every later record's
/// key is at least that); the released records are sorted by `(block, topic, partition,
/// key, offset)`. A partition that
/// is caught up (read to its end) does not hold the others back, so on a live stream a
/// quiet partition does not stall the job (the order then depends on arrival times).
/// A partition whose owner has not reported its start holds everything back (even when
/// some of its records came first); [`late`](Merger::late) counts records placed by their
/// arrival.
#[derive(Debug)]
pub struct Merger<B> {
    block: i64,
    order: MergeOrder,
    parts: BTreeMap<(StreamId, i32), PartitionState<B>>,
    /// The last block released (`None`: nothing yet).
    released: Option<i64>,
    /// Records that arrived after their block was released (see [`Merger::late`]).
    late: u64,
}

impl<B> Merger<B> {
    /// A merger over the given `(topic, partition)`s, in blocks of `block` offsets.
    pub fn new(partitions: impl IntoIterator<Item = (StreamId, i32)>, block: i64) -> Self {
        Self::with_order(partitions, block, MergeOrder::Offsets)
    }

    /// A merger over the given `(topic, partition)`s in `order`, in blocks of `block`
    /// keys (offsets or milliseconds).
    pub fn with_order(
        partitions: impl IntoIterator<Item = (StreamId, i32)>,
        block: i64,
        order: MergeOrder,
    ) -> Self {
        Merger {
            block: block.max(1),
            order,
            parts: partitions
                .into_iter()
                .map(|k| (k, PartitionState::default()))
                .collect(),
            released: None,
            late: 0,
        }
    }

    /// The order.
    pub fn order(&self) -> MergeOrder {
        self.order
    }

    /// Restores a partition's clamp (timestamps): the key of the last record before the
    /// position it resumes from, so that the keys after a restart are those of a run
    /// without one. Call before pushing the partition's records.
    pub fn restore_key(&mut self, stream: StreamId, partition: i32, key: i64) {
        self.parts.entry((stream, partition)).or_default().last_key = key;
    }

    /// Takes one message of a source (in the order its worker sent them).
    pub fn push(&mut self, raw: Raw<B>) {
        match raw {
            Raw::Record(mut r) => {
                let state = self.parts.entry((r.stream, r.partition)).or_default();
                r.key = match self.order {
                    MergeOrder::Offsets => r.offset,
                    MergeOrder::Timestamps => r.key.max(state.last_key),
                };
                state.last_key = r.key;
                if self
                    .released
                    .is_some_and(|b| r.key.div_euclid(self.block) <= b)
                {
                    self.late += 1;
                }
                state.known = Some(state.known.map_or(r.offset + 1, |k| k.max(r.offset + 1)));
                state.caught_up = false;
                state.queue.push_back(r);
            }
            Raw::Progress {
                stream,
                partition,
                position,
                caught_up,
                backlog_end,
            } => {
                let state = self.parts.entry((stream, partition)).or_default();
                state.known = Some(state.known.map_or(position, |k| k.max(position)));
                state.reported = true;
                state.caught_up = caught_up;
                state.backlog_end = backlog_end;
            }
        }
    }

    /// The key bound below which records can be released now; with `waited`, the
    /// partitions past their backlog (records produced while the job runs) that are not
    /// caught up do not hold the others back either.
    fn bound(&self, waited: bool) -> i64 {
        let mut bound = i64::MAX;
        for state in self.parts.values() {
            // Records that come before their partition's first progress report (the
            // source sends them first) say nothing of its backlog: it still holds back.
            let Some(known) = state.known.filter(|_| state.reported) else {
                return i64::MIN;
            };
            if state.caught_up || (waited && known >= state.backlog_end) {
                continue;
            }
            bound = bound.min(self.block_start(self.lowest_next(known, state)));
        }
        bound
    }

    /// The least key a partition's next record can have.
    fn lowest_next(&self, known: i64, state: &PartitionState<B>) -> i64 {
        match self.order {
            MergeOrder::Offsets => known,
            MergeOrder::Timestamps => state.last_key,
        }
    }

    fn block_start(&self, key: i64) -> i64 {
        key.div_euclid(self.block).saturating_mul(self.block)
    }

    /// With [`MergeOrder::Timestamps`], the partitions that hold the release back now
    /// (not caught up, and their last key is in the lowest block held back), with their
    /// next offset: the merge lets them read past their read limit, since a block of
    /// milliseconds may hold more records than the read-ahead and nothing is released
    /// until they leave it. None with offsets (a block of offsets is at most half the
    /// read-ahead).
    pub fn holding_back(&self) -> Vec<PartitionOffset> {
        let bound = self.bound(false);
        if self.order == MergeOrder::Offsets || bound == i64::MIN || bound == i64::MAX {
            return Vec::new();
        }
        self.parts
            .iter()
            .filter_map(|(&(s, p), state)| {
                let known = state.known?;
                (!state.caught_up && self.block_start(self.lowest_next(known, state)) == bound)
                    .then_some(PartitionOffset::new(s, p, known))
            })
            .collect()
    }

    /// The records that can be released now, in merge order.
    pub fn release(&mut self) -> Vec<RawRecord<B>> {
        self.next_block(Release::Data, i64::MAX)
    }

    /// The records that can be released after a record waited too long (a live stream):
    /// a partition that is read past its backlog (see [`Raw::Progress`]) no longer holds
    /// the others back, so the order of live records may depend on arrival times. A
    /// partition still inside its backlog, or whose owner has not reported, still does:
    /// the records written before the job started are always merged in the data's order.
    pub fn release_waited(&mut self) -> Vec<RawRecord<B>> {
        self.next_block(Release::Waited, i64::MAX)
    }

    /// Every record held, in merge order (at the end of a run).
    pub fn release_all(&mut self) -> Vec<RawRecord<B>> {
        self.next_block(Release::All, i64::MAX)
    }

    /// The releasable records (under `rule`) of at most the next `blocks` blocks, in
    /// merge order: taking them a block at a time keeps what waits to be stamped small.
    pub fn next_block(&mut self, rule: Release, blocks: i64) -> Vec<RawRecord<B>> {
        let mut bound = match rule {
            Release::Data => self.bound(false),
            Release::Waited => self.bound(true),
            Release::All => i64::MAX,
        };
        let lowest = self
            .parts
            .values()
            .filter_map(|s| s.queue.front())
            .map(|r| r.key.div_euclid(self.block))
            .min();
        if let Some(b) = lowest {
            let end = b.saturating_add(blocks).saturating_mul(self.block);
            bound = bound.min(end);
        }
        self.take_below(bound)
    }

    fn take_below(&mut self, bound: i64) -> Vec<RawRecord<B>> {
        let mut out = Vec::new();
        for state in self.parts.values_mut() {
            while state.queue.front().is_some_and(|r| r.key < bound) {
                out.extend(state.queue.pop_front());
            }
        }
        let block = self.block;
        if let Some(last) = out.iter().map(|r| r.key.div_euclid(block)).max() {
            self.released = Some(self.released.map_or(last, |b| b.max(last)));
        }
        out.sort_unstable_by_key(|r| {
            (
                r.key.div_euclid(block),
                r.stream,
                r.partition,
                r.key,
                r.offset,
            )
        });
        out
    }

    /// Whether every partition has reported and is read to its end (a replay's end, or a
    /// live stream's quiet moment).
    pub fn all_caught_up(&self) -> bool {
        self.parts
            .values()
            .all(|s| s.reported && s.caught_up && s.queue.is_empty())
    }

    /// Records that arrived after the block they belong to was released, so that their
    /// place in the sequence depends on when they arrived, not only on the data: their
    /// partition was taken as caught up (read to its end) or as live after a wait (see
    /// [`release_waited`](Self::release_waited)) and then delivered older records. Always
    /// 0 on a replay of topics written before the job started.
    pub fn late(&self) -> u64 {
        self.late
    }

    /// How many records are held.
    pub fn held(&self) -> usize {
        self.parts.values().map(|s| s.queue.len()).sum()
    }

    /// Per partition, the offset before which every record was released: what can be
    /// committed once everything released is processed and delivered. Partitions whose
    /// owner has not reported are left out.
    pub fn committable(&self) -> Vec<PartitionOffset> {
        self.parts
            .iter()
            .filter_map(|(&(stream, p), s)| {
                let next = s.queue.front().map(|r| r.offset).or(s.known)?;
                Some(PartitionOffset::new(stream, p, next))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(stream: StreamId, partition: i32, offset: i64) -> Raw<()> {
        Raw::Record(RawRecord {
            stream,
            partition,
            offset,
            key: 0,
            timestamp_ms: None,
            body: (),
        })
    }

    fn start(stream: StreamId, partition: i32, position: i64) -> Raw<()> {
        Raw::Progress {
            stream,
            partition,
            position,
            caught_up: false,
            backlog_end: 0,
        }
    }

    fn keys(v: &[RawRecord<()>]) -> Vec<(i32, i64)> {
        v.iter().map(|r| (r.partition, r.offset)).collect()
    }

    #[test]
    fn the_order_does_not_depend_on_arrival() {
        // Partition 0 arrives first in one run, partition 1 first in the other.
        let mut a = Merger::new([(EVENTS, 0), (EVENTS, 1)], 2);
        let mut b = Merger::new([(EVENTS, 0), (EVENTS, 1)], 2);
        let mut out_a = Vec::new();
        let mut out_b = Vec::new();
        for m in [&mut a, &mut b] {
            m.push(start(EVENTS, 0, 0));
            m.push(start(EVENTS, 1, 0));
        }
        for o in 0..5 {
            a.push(rec(EVENTS, 0, o));
            out_a.extend(a.release());
        }
        for o in 0..5 {
            a.push(rec(EVENTS, 1, o));
            out_a.extend(a.release());
            b.push(rec(EVENTS, 1, o));
            out_b.extend(b.release());
        }
        for o in 0..5 {
            b.push(rec(EVENTS, 0, o));
            out_b.extend(b.release());
        }
        assert_eq!(keys(&out_a), keys(&out_b));
        assert_eq!(
            keys(&out_a),
            vec![
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (0, 2),
                (0, 3),
                (1, 2),
                (1, 3)
            ]
        );
        // The last block waits for more records or for the end.
        assert_eq!(a.held(), 2);
        assert_eq!(keys(&a.release_all()), vec![(0, 4), (1, 4)]);
    }

    #[test]
    fn an_unreported_partition_holds_back_and_a_caught_up_one_does_not() {
        let mut m = Merger::new([(EVENTS, 0), (EVENTS, 1)], 1);
        m.push(start(EVENTS, 0, 0));
        m.push(rec(EVENTS, 0, 0));
        assert!(m.release().is_empty());
        m.push(Raw::Progress {
            stream: EVENTS,
            partition: 1,
            position: 0,
            caught_up: true,
            backlog_end: 0,
        });
        assert_eq!(keys(&m.release()), vec![(0, 0)]);
        assert_eq!(
            m.committable(),
            vec![
                PartitionOffset::new(EVENTS, 0, 1),
                PartitionOffset::new(EVENTS, 1, 0)
            ]
        );
        m.push(rec(EVENTS, 1, 0));
        m.push(rec(EVENTS, 0, 1));
        // Partition 1 is no longer caught up: it holds back offsets >= 1 (block 1).
        assert_eq!(keys(&m.release()), vec![(1, 0)]);
        assert_eq!(
            m.committable(),
            vec![
                PartitionOffset::new(EVENTS, 0, 1),
                PartitionOffset::new(EVENTS, 1, 1)
            ]
        );
        m.push(rec(EVENTS, 1, 1));
        assert_eq!(keys(&m.release()), vec![(0, 1), (1, 1)]);
    }

    #[test]
    fn feedback_of_a_block_comes_after_its_events() {
        let mut m = Merger::new([(EVENTS, 0), (FEEDBACK, 0)], 10);
        m.push(start(FEEDBACK, 0, 0));
        m.push(rec(FEEDBACK, 0, 0));
        m.push(start(EVENTS, 0, 0));
        m.push(rec(EVENTS, 0, 0));
        let all = m.release_all();
        assert_eq!(
            all.iter().map(|r| r.stream).collect::<Vec<_>>(),
            vec![EVENTS, FEEDBACK]
        );
    }

    #[test]
    fn a_wait_never_skips_a_partition_inside_its_backlog() {
        let mut m = Merger::new([(EVENTS, 0), (EVENTS, 1)], 1);
        let progress = |partition, position, backlog_end| Raw::Progress {
            stream: EVENTS,
            partition,
            position,
            caught_up: false,
            backlog_end,
        };
        // Partition 1 had 1 record when the job started, not read yet.
        m.push(progress(0, 5, 0));
        m.push(progress(1, 0, 1));
        m.push(rec(EVENTS, 0, 5));
        m.push(rec(EVENTS, 0, 6));
        assert!(m.release().is_empty());
        assert!(m.release_waited().is_empty());
        // Read past its backlog (it is live now, and quiet), it no longer holds the
        // others back after a wait, but still does without one.
        m.push(progress(1, 1, 1));
        assert!(m.release().is_empty());
        assert_eq!(keys(&m.release_waited()), vec![(0, 5), (0, 6)]);
    }

    fn stamped(stream: StreamId, partition: i32, offset: i64, ts: i64) -> Raw<()> {
        Raw::Record(RawRecord {
            stream,
            partition,
            offset,
            key: ts,
            timestamp_ms: Some(ts),
            body: (),
        })
    }

    fn order(v: &[RawRecord<()>]) -> Vec<(StreamId, i64, i64)> {
        v.iter().map(|r| (r.stream, r.offset, r.key)).collect()
    }

    #[test]
    fn timestamps_are_clamped_to_be_non_decreasing_in_a_partition() {
        let mut m = Merger::with_order([(EVENTS, 0)], 10, MergeOrder::Timestamps);
        m.push(start(EVENTS, 0, 0));
        // An older record takes its predecessor's key; a record without a timestamp
        // (`i64::MIN`, a dead letter) too.
        for (o, ts) in [(0, 15), (1, 12), (2, 30), (3, i64::MIN), (4, 31)] {
            m.push(stamped(EVENTS, 0, o, ts));
        }
        assert_eq!(
            order(&m.release_all()),
            vec![
                (EVENTS, 0, 15),
                (EVENTS, 1, 15),
                (EVENTS, 2, 30),
                (EVENTS, 3, 30),
                (EVENTS, 4, 31)
            ]
        );
        // A restored clamp (a checkpoint's key) goes on where it was.
        let mut r = Merger::with_order([(EVENTS, 0)], 10, MergeOrder::Timestamps);
        r.restore_key(EVENTS, 0, 50);
        r.push(start(EVENTS, 0, 5));
        r.push(stamped(EVENTS, 0, 5, 40));
        r.push(stamped(EVENTS, 0, 6, 60));
        assert_eq!(
            order(&r.release_all()),
            vec![(EVENTS, 5, 50), (EVENTS, 6, 60)]
        );
    }

    #[test]
    fn a_sparse_feedback_topic_is_merged_at_its_time_not_its_offsets() {
        // Events at 0..30 ms on offsets 0..30; clicks at 3, 12 and 25 ms on offsets 0..3.
        let feed = |m: &mut Merger<()>| {
            m.push(start(EVENTS, 0, 0));
            m.push(start(FEEDBACK, 0, 0));
            for o in 0..30 {
                m.push(stamped(EVENTS, 0, o, o));
            }
            for (o, ts) in [(0, 3), (1, 12), (2, 25)] {
                m.push(stamped(FEEDBACK, 0, o, ts));
            }
        };
        let mut t = Merger::with_order([(EVENTS, 0), (FEEDBACK, 0)], 10, MergeOrder::Timestamps);
        feed(&mut t);
        let got: Vec<(StreamId, i64)> = t
            .release_all()
            .iter()
            .map(|r| (r.stream, r.offset))
            .collect();
        let mut want: Vec<(StreamId, i64)> = (0..10).map(|o| (EVENTS, o)).collect();
        want.push((FEEDBACK, 0));
        want.extend((10..20).map(|o| (EVENTS, o)));
        want.push((FEEDBACK, 1));
        want.extend((20..30).map(|o| (EVENTS, o)));
        want.push((FEEDBACK, 2));
        assert_eq!(got, want);
        // By offsets (blocks of 10), the three clicks come after the first ten events.
        let mut o = Merger::new([(EVENTS, 0), (FEEDBACK, 0)], 10);
        feed(&mut o);
        let got: Vec<(StreamId, i64)> = o
            .release_all()
            .iter()
            .map(|r| (r.stream, r.offset))
            .collect();
        assert_eq!(&got[10..13], &[(FEEDBACK, 0), (FEEDBACK, 1), (FEEDBACK, 2)]);
    }

    #[test]
    fn a_timestamp_block_is_released_once_every_partition_is_read_past_it() {
        let mut m = Merger::with_order([(EVENTS, 0), (FEEDBACK, 0)], 10, MergeOrder::Timestamps);
        m.push(start(EVENTS, 0, 0));
        m.push(start(FEEDBACK, 0, 0));
        for o in 0..25 {
            m.push(stamped(EVENTS, 0, o, o));
        }
        // The feedback partition has read nothing: its first record may have any time,
        // so nothing is released (it is not held at a read limit either).
        assert!(m.release().is_empty());
        assert!(m.holding_back().is_empty());
        m.push(stamped(FEEDBACK, 0, 0, 3));
        m.push(stamped(FEEDBACK, 0, 1, 12));
        // Its last key is 12: the block [0, 10) is complete, [10, 20) is not.
        let got = order(&m.release());
        assert_eq!(got.len(), 11);
        assert_eq!(got[10], (FEEDBACK, 0, 3));
        assert_eq!(m.holding_back(), vec![PartitionOffset::new(FEEDBACK, 0, 2)]);
        assert_eq!(
            m.committable(),
            vec![
                PartitionOffset::new(EVENTS, 0, 10),
                PartitionOffset::new(FEEDBACK, 0, 1)
            ]
        );
        // Caught up, it holds nothing back; the events partition (at 24 ms) holds back
        // its own block [20, 30).
        m.push(Raw::Progress {
            stream: FEEDBACK,
            partition: 0,
            position: 2,
            caught_up: true,
            backlog_end: 2,
        });
        let got = order(&m.release());
        assert_eq!(got.len(), 11);
        assert_eq!(got[10], (FEEDBACK, 1, 12));
        assert_eq!(m.holding_back(), vec![PartitionOffset::new(EVENTS, 0, 25)]);
        assert_eq!(m.held(), 5);
    }

    #[test]
    fn a_wait_never_skips_a_timestamp_partition_inside_its_backlog() {
        let mut m = Merger::with_order([(EVENTS, 0), (EVENTS, 1)], 10, MergeOrder::Timestamps);
        let progress = |partition, position, backlog_end| Raw::Progress {
            stream: EVENTS,
            partition,
            position,
            caught_up: false,
            backlog_end,
        };
        m.push(progress(0, 0, 0));
        m.push(progress(1, 0, 1));
        m.push(stamped(EVENTS, 0, 0, 100));
        m.push(stamped(EVENTS, 0, 1, 200));
        assert!(m.release().is_empty());
        assert!(m.release_waited().is_empty());
        // Read past its backlog (its one record, far earlier), partition 1 is live and
        // quiet: its next record could still come at 5 ms, so the data's rule holds
        // everything back; after a wait it no longer holds the others back (nor does
        // partition 0, live from its start).
        m.push(stamped(EVENTS, 1, 0, 5));
        m.push(progress(1, 1, 1));
        assert!(m.release().is_empty());
        assert_eq!(keys(&m.release_waited()), vec![(1, 0), (0, 0), (0, 1)]);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Per (topic, partition) its records' order values (offsets, or timestamps), an
        /// arrival order, release points (0: none, 1: by the data's rule, 2: after a
        /// wait), a block size, and per partition whether its first progress report comes
        /// after its first record.
        #[derive(Clone, Debug)]
        struct Replay {
            parts: Vec<Vec<i64>>,
            order: Vec<usize>,
            releases: Vec<u8>,
            block: i64,
            reports_late: Vec<bool>,
        }

        /// A replay of 1 to 4 partitions drawn from `partition`, a block from `blocks`; how
        /// records arrive: an interleaving of the partitions (each in its own order), with
        /// releases at random points.
        fn arrivals(
            partition: impl Strategy<Value = Vec<i64>>,
            blocks: std::ops::Range<i64>,
        ) -> impl Strategy<Value = Replay> {
            (prop::collection::vec(partition, 1..5), blocks).prop_flat_map(|(parts, block)| {
                let n: usize = parts.iter().map(Vec::len).sum();
                let order = prop::collection::vec(0..parts.len(), n..=n);
                let releases = prop::collection::vec(0u8..3, n..=n);
                let late = prop::collection::vec(any::<bool>(), parts.len()..=parts.len());
                (Just(parts), order, releases, Just(block), late).prop_map(
                    |(parts, order, releases, block, reports_late)| Replay {
                        parts,
                        order,
                        releases,
                        block,
                        reports_late,
                    },
                )
            })
        }

        /// Offsets: per partition, increasing offsets with gaps.
        fn replay() -> impl Strategy<Value = Replay> {
            let partition = prop::collection::vec(1i64..4, 0..40).prop_map(|gaps| {
                gaps.iter()
                    .scan(0i64, |o, g| {
                        *o += g;
                        Some(*o)
                    })
                    .collect::<Vec<i64>>()
            });
            arrivals(partition, 1..9)
        }

        /// Feeds the replay in its arrival order, releasing wherever `releases` says, and
        /// everything at the end; every partition is a backlog (written before the job
        /// started), so not even a wait may change the order. Also returns the late
        /// records the merger counted.
        fn merge(r: &Replay) -> (Vec<(u8, i32, i64)>, u64) {
            let parts = &r.parts;
            let ids: Vec<(StreamId, i32)> = (0..parts.len())
                .map(|i| ((i % 2) as StreamId, (i / 2) as i32))
                .collect();
            let mut m: Merger<()> = Merger::new(ids.iter().copied(), r.block);
            let ends: Vec<i64> = parts
                .iter()
                .map(|p| p.last().map_or(0, |o| o + 1))
                .collect();
            let report = |m: &mut Merger<()>, i: usize, position: i64, caught_up: bool| {
                m.push(Raw::Progress {
                    stream: ids[i].0,
                    partition: ids[i].1,
                    position,
                    caught_up,
                    backlog_end: ends[i],
                });
            };
            for (i, part) in parts.iter().enumerate() {
                if !r.reports_late[i] || part.is_empty() {
                    report(&mut m, i, 0, part.is_empty());
                }
            }
            let mut next = vec![0usize; parts.len()];
            let mut out = Vec::new();
            for (k, &i) in r.order.iter().enumerate() {
                // The interleaving picks a partition; one with nothing left gives way to
                // the next that has records.
                let Some(i) = (0..parts.len())
                    .map(|d| (i + d) % parts.len())
                    .find(|&j| next[j] < parts[j].len())
                else {
                    break;
                };
                let (s, p) = ids[i];
                let offset = parts[i][next[i]];
                if next[i] == 1 && r.reports_late[i] {
                    // The source sent its first batch's records before its progress.
                    report(&mut m, i, offset, false);
                }
                next[i] += 1;
                m.push(Raw::Record(RawRecord {
                    stream: s,
                    partition: p,
                    offset,
                    key: 0,
                    timestamp_ms: None,
                    body: (),
                }));
                if next[i] == parts[i].len() {
                    report(&mut m, i, ends[i], true);
                }
                let released = match r.releases[k] {
                    1 => m.release(),
                    2 => m.release_waited(),
                    _ => Vec::new(),
                };
                out.extend(
                    released
                        .into_iter()
                        .map(|r| (r.stream, r.partition, r.offset)),
                );
            }
            out.extend(
                m.release_all()
                    .into_iter()
                    .map(|r| (r.stream, r.partition, r.offset)),
            );
            (out, m.late())
        }

        /// Timestamps (in any order; offsets 0.. per partition), blocks in milliseconds.
        fn timed_replay() -> impl Strategy<Value = Replay> {
            arrivals(prop::collection::vec(0i64..60, 0..30), 1..20)
        }

        /// Feeds a timed replay (offsets 0.. per partition) in its arrival order, releasing
        /// where `releases` says (by the data's rule, or after a wait: every partition is a
        /// backlog, so not even a wait may change the order), and everything at the end.
        /// Also returns the late records the merger counted.
        fn merge_timed(r: &Replay) -> (Vec<(u8, i32, i64, i64)>, u64) {
            let parts = &r.parts;
            let ids: Vec<(StreamId, i32)> = (0..parts.len())
                .map(|i| ((i % 2) as StreamId, (i / 2) as i32))
                .collect();
            let mut m: Merger<()> =
                Merger::with_order(ids.iter().copied(), r.block, MergeOrder::Timestamps);
            let report = |m: &mut Merger<()>, i: usize, position: i64, caught_up: bool| {
                m.push(Raw::Progress {
                    stream: ids[i].0,
                    partition: ids[i].1,
                    position,
                    caught_up,
                    backlog_end: parts[i].len() as i64,
                });
            };
            for (i, part) in parts.iter().enumerate() {
                if !r.reports_late[i] || part.is_empty() {
                    report(&mut m, i, 0, part.is_empty());
                }
            }
            let mut next = vec![0usize; parts.len()];
            let mut out = Vec::new();
            let key = |r: RawRecord<()>| (r.stream, r.partition, r.key, r.offset);
            for (k, &i) in r.order.iter().enumerate() {
                let Some(i) = (0..parts.len())
                    .map(|d| (i + d) % parts.len())
                    .find(|&j| next[j] < parts[j].len())
                else {
                    break;
                };
                let (s, p) = ids[i];
                if next[i] == 1 && r.reports_late[i] {
                    // The source sent its first batch's records before its progress.
                    report(&mut m, i, 1, false);
                }
                m.push(stamped(s, p, next[i] as i64, parts[i][next[i]]));
                next[i] += 1;
                if next[i] == parts[i].len() {
                    report(&mut m, i, next[i] as i64, true);
                }
                let released = match r.releases[k] {
                    1 => m.release(),
                    2 => m.release_waited(),
                    _ => Vec::new(),
                };
                out.extend(released.into_iter().map(key));
            }
            out.extend(m.release_all().into_iter().map(key));
            (out, m.late())
        }

        proptest! {
            /// Every record comes out once, in the order of (block, topic, partition,
            /// offset), whatever the arrival order, wherever the releases (and waits) fall,
            /// and whether a partition's records or its first progress report come first.
            #[test]
            fn a_replay_merges_in_the_data_order_for_any_arrival(r in replay()) {
                let (got, late) = merge(&r);
                prop_assert_eq!(late, 0);
                let block = r.block;
                let mut want: Vec<(u8, i32, i64)> = r
                    .parts
                    .iter()
                    .enumerate()
                    .flat_map(|(i, offs)| {
                        offs.iter().map(move |&o| ((i % 2) as StreamId, (i / 2) as i32, o))
                    })
                    .collect();
                want.sort_by_key(|&(s, p, o)| (o.div_euclid(block), s, p, o));
                prop_assert_eq!(got, want);
            }

            /// By timestamps: every record comes out once, with its timestamp clamped to
            /// its partition's running maximum, in the order of (block, topic, partition,
            /// key, offset), whatever the arrival order, wherever the releases (and waits)
            /// fall, and whether a partition's records or its first report come first.
            #[test]
            fn a_timed_replay_merges_in_the_data_order_for_any_arrival(r in timed_replay()) {
                let (got, late) = merge_timed(&r);
                prop_assert_eq!(late, 0);
                let block = r.block;
                let mut want: Vec<(u8, i32, i64, i64)> = Vec::new();
                for (i, ts) in r.parts.iter().enumerate() {
                    let mut last = i64::MIN;
                    for (o, &t) in ts.iter().enumerate() {
                        last = last.max(t);
                        want.push(((i % 2) as StreamId, (i / 2) as i32, last, o as i64));
                    }
                }
                want.sort_by_key(|&(s, p, k, o)| (k.div_euclid(block), s, p, k, o));
                prop_assert_eq!(got, want);
            }

            /// A restart at any cut of the sequence (a checkpoint: every record before it
            /// stamped, each partition resuming at its first record not stamped) goes on
            /// exactly as the uninterrupted merge: with the clamp restored (the key of each
            /// partition's last record stamped, as a checkpoint names it), keys and order
            /// alike; without it, the order still (only the partition of the last record
            /// stamped can have keys below its clamp, and those records come next anyway).
            #[test]
            fn a_restart_at_any_cut_continues_the_timed_order(
                r in timed_replay(),
                cut in 0.0f64..1.0,
            ) {
                let (whole, _) = merge_timed(&r);
                let (parts, block) = (&r.parts, r.block);
                let k = (cut * whole.len() as f64) as usize;
                let ids: Vec<(StreamId, i32)> = (0..parts.len())
                    .map(|i| ((i % 2) as StreamId, (i / 2) as i32))
                    .collect();
                for restore in [true, false] {
                    let mut m: Merger<()> =
                        Merger::with_order(ids.iter().copied(), block, MergeOrder::Timestamps);
                    for (i, &(s, p)) in ids.iter().enumerate() {
                        let stamped: Vec<&(u8, i32, i64, i64)> = whole[..k]
                            .iter()
                            .filter(|r| r.0 == s && r.1 == p)
                            .collect();
                        let next = stamped.len();
                        if restore && let Some(last) = stamped.last() {
                            m.restore_key(s, p, last.2);
                        }
                        m.push(Raw::Progress {
                            stream: s,
                            partition: p,
                            position: next as i64,
                            caught_up: false,
                            backlog_end: parts[i].len() as i64,
                        });
                        for (o, &t) in parts[i].iter().enumerate().skip(next) {
                            m.push(super::stamped(s, p, o as i64, t));
                        }
                        m.push(Raw::Progress {
                            stream: s,
                            partition: p,
                            position: parts[i].len() as i64,
                            caught_up: true,
                            backlog_end: parts[i].len() as i64,
                        });
                    }
                    let rest: Vec<(u8, i32, i64, i64)> = m
                        .release()
                        .into_iter()
                        .map(|r| (r.stream, r.partition, r.key, r.offset))
                        .collect();
                    if restore {
                        prop_assert_eq!(&rest[..], &whole[k..]);
                    } else {
                        let without_keys = |v: &[(u8, i32, i64, i64)]| {
                            v.iter().map(|r| (r.0, r.1, r.3)).collect::<Vec<_>>()
                        };
                        prop_assert_eq!(without_keys(&rest), without_keys(&whole[k..]));
                    }
                }
            }
        }
    }
}
