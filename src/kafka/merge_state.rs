//! The merge's rules, without timely: the records of every partition in one order that
//! depends only on the data ([`Merger`]), stamped by the sequencer into epochs, with the
//! cuts (commit marks, order keys, checkpoint markers) at the epochs' ends, the end of the
//! stream, and the read limits that pace the sources. [`MergeState::step`] takes what the
//! operator sees (the time, whether the sources are done, the model's epoch) and returns
//! what it must do ([`MergeStep`]); the operator ([`super::merge_operator`]) only moves
//! records in and out.

use super::latency::EventTime;
use super::merge::{MergeOrder, Merger, Raw, RawRecord, Release, StreamId};
use super::partition_offset::{PartitionKey, PartitionOffset};
use super::record::{RecordBody, SideRecord, SourceMessage};
use flowboost_operators::engine::{EpochRule, Input, Item, Sequencer, SourceState};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the merge cuts and paces the sequence.
#[derive(Clone, Debug)]
pub struct MergeOptions {
    /// The partitions (of both topics) the merge waits for.
    pub partitions: Vec<(StreamId, i32)>,
    /// Keys per merge block (offsets, or milliseconds with [`MergeOrder::Timestamps`]).
    pub block: i64,
    /// What records are ordered by.
    pub order: MergeOrder,
    /// A checkpoint's clamp keys (timestamps): per partition, the key of the last record
    /// before where it resumes.
    pub restored_keys: Vec<PartitionKey>,
    /// Inputs per epoch.
    pub epoch: EpochRule,
    /// A record held this long for other partitions is released anyway (live streams).
    pub max_wait: Duration,
    /// Stop once no record came for this long and everything is read (bounded runs).
    pub exit_when_idle: Option<Duration>,
    /// At most this many epochs between the merge and the model's output.
    pub max_epochs_in_flight: u64,
    /// Each partition may be read at most this many offsets past the first record of it
    /// the merge has not stamped yet (sent to the sources as
    /// [`Control::Limits`](super::record::Control::Limits)).
    pub read_ahead: i64,
    /// Whether feedback records go to the feedback join.
    pub feedback: bool,
    /// Put a snapshot marker (for `--save-model` and the last checkpoint) after the last
    /// epoch.
    pub snapshot_at_end: bool,
    /// The end's snapshot takes the `end_epochs`-th epoch after the last one with records
    /// (at least the first): the feedback lag with a feedback join, so that the learning
    /// passes of the feedback joined in the last epochs, due up to the lag later, are in
    /// the saved stages.
    pub end_epochs: u64,
    /// Put a checkpoint marker at the end of the first epoch that ends this long after the
    /// previous marker (see [`Sequencer::checkpoint`]: it does not change the epochs, so
    /// the results do not depend on when checkpoints are taken).
    pub checkpoint_every: Option<Duration>,
    /// When the stream goes quiet before a checkpoint is due, hold the last epoch open
    /// downstream until it is due (or more records come), so that its checkpoint can still
    /// take place at that epoch's end: a transactional job's outputs become visible only
    /// at checkpoints, so a quiet stream must get one, and it must not change the epochs.
    pub hold_for_checkpoint: bool,
    /// Where the sequence starts (a model's position).
    pub start: SourceState,
    /// `start` is the snapshot of a run's end (a checkpoint with
    /// [`at_end`](crate::model::ModelHeader::at_end)): if no record comes, the run ends
    /// with that snapshot again ([`SideRecord::EndAgain`]), unchanged.
    pub resumed_at_end: bool,
}

/// How long a partial epoch stays open on a live stream's quiet moment before it is ended
/// (see the merge's quiet rule).
pub const PARTIAL_EPOCH_LINGER: Duration = Duration::from_millis(5);

/// What the operator sees when it runs.
#[derive(Clone, Copy, Debug)]
pub struct MergeInput {
    /// Now.
    pub now: Instant,
    /// Every source has stopped (the input's frontier is empty).
    pub sources_done: bool,
    /// The first epoch the model has not finished (the terminal's frontier), if any.
    pub done_epoch: Option<u64>,
}

/// A side record at its epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochSide {
    /// The epoch it belongs to.
    pub epoch: u64,
    /// The record.
    pub record: SideRecord,
}

/// New read limits for the sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadLimitsUpdate {
    /// Per partition, how far its source may read.
    pub limits: Vec<PartitionOffset>,
    /// A limit moved by a quarter of the read-ahead: send them at once.
    pub urgent: bool,
}

/// What one step of the merge asks the operator to do.
#[derive(Debug, Default)]
pub struct MergeStep {
    /// The stamped items, in sequence order (their epochs never fall).
    pub items: Vec<Item>,
    /// The side records (dead letters, commit marks, order keys, event times, the end).
    pub side: Vec<EpochSide>,
    /// Events stamped.
    pub events: u64,
    /// Of which labeled.
    pub labeled: u64,
    /// Feedback records taken (joined or not).
    pub feedback: u64,
    /// The read limits, when they changed.
    pub limits: Option<ReadLimitsUpdate>,
    /// The stream ended: the operator drops its capabilities.
    pub finished: bool,
    /// Otherwise, the epoch the outputs' capabilities move to.
    pub hold: u64,
    /// The job is idle (`--exit-when-idle`).
    pub idle: bool,
    /// Run the operator again after each of these.
    pub wake_after: Vec<Duration>,
}

/// The merge of one job (on worker 0): the merger, the sequencer and what the cuts need.
///
/// ```
/// use flowboost::kafka::merge::{EVENTS, MergeOrder, Raw};
/// use flowboost::kafka::merge_state::{MergeInput, MergeOptions, MergeState};
/// use flowboost::kafka::partition_offset::PartitionOffset;
/// use flowboost::kafka::record::SideRecord;
/// use flowboost::operators::engine::{EpochRule, SourceState};
/// use std::time::{Duration, Instant};
///
/// let now = Instant::now();
/// let options = MergeOptions {
///     partitions: vec![(EVENTS, 0)],
///     block: 64,
///     order: MergeOrder::Offsets,
///     restored_keys: Vec::new(),
///     epoch: EpochRule { size: 256, feedback_closes: false },
///     max_wait: Duration::from_millis(100),
///     exit_when_idle: None,
///     max_epochs_in_flight: 8,
///     read_ahead: 128,
///     feedback: false,
///     snapshot_at_end: false,
///     end_epochs: 1,
///     checkpoint_every: None,
///     hold_for_checkpoint: false,
///     start: SourceState::default(),
///     resumed_at_end: false,
/// };
/// let mut merge = MergeState::new(options, now);
/// // The partition is empty: at the sources' end, the stream ends with its cut.
/// let progress = Raw::Progress {
///     stream: EVENTS,
///     partition: 0,
///     position: 0,
///     caught_up: true,
///     backlog_end: 0,
/// };
/// merge.push(progress, now);
/// let step = merge.step(MergeInput { now, sources_done: true, done_epoch: None });
/// assert!(step.finished);
/// let cut = SideRecord::Commit(vec![PartitionOffset::new(EVENTS, 0, 0)]);
/// assert_eq!(step.side[0].record, cut);
/// ```
pub struct MergeState {
    options: MergeOptions,
    merger: Merger<RecordBody>,
    /// Per partition, the key of the last record stamped (timestamps): with the commit
    /// marks, where a checkpoint's clamp goes on.
    stamped_keys: BTreeMap<(StreamId, i32), i64>,
    sequencer: Sequencer,
    /// Released, not yet stamped.
    ready: VecDeque<RawRecord<RecordBody>>,
    last_record: Instant,
    held_since: Option<Instant>,
    stopping: bool,
    /// The read limits last sent, and those that last woke the control operator.
    limits: Vec<PartitionOffset>,
    woken: Vec<PartitionOffset>,
    last_checkpoint: Instant,
    /// The last epoch, ended on a quiet stream, held open for its checkpoint.
    held: Option<u64>,
    /// Resumed from the end's snapshot, and no record came yet.
    end_again: bool,
    /// The open epoch and when its first record was stamped.
    epoch_opened: Option<(u64, Instant)>,
}

impl MergeState {
    /// The merge at its start (`now`).
    pub fn new(options: MergeOptions, now: Instant) -> Self {
        let mut merger =
            Merger::with_order(options.partitions.clone(), options.block, options.order);
        let mut stamped_keys = BTreeMap::new();
        if options.order == MergeOrder::Timestamps {
            for &key in &options.partitions {
                stamped_keys.insert(key, i64::MIN);
            }
            for k in &options.restored_keys {
                merger.restore_key(k.stream, k.partition, k.key);
                stamped_keys.insert((k.stream, k.partition), k.key);
            }
        }
        MergeState {
            sequencer: Sequencer::new(options.epoch, options.start.clone()),
            end_again: options.resumed_at_end,
            options,
            merger,
            stamped_keys,
            ready: VecDeque::new(),
            last_record: now,
            held_since: None,
            stopping: false,
            limits: Vec::new(),
            woken: Vec::new(),
            last_checkpoint: now,
            held: None,
            epoch_opened: None,
        }
    }

    /// Takes a source's message (received `now`).
    pub fn push(&mut self, message: SourceMessage, now: Instant) {
        if matches!(message, Raw::Record(_)) {
            self.last_record = now;
        }
        self.merger.push(message);
    }

    /// The job is stopping: it is not idle any more.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// Records held by the merger or released and not yet stamped.
    pub fn held(&self) -> usize {
        self.merger.held() + self.ready.len()
    }

    /// Records that came after their partition's block was released.
    pub fn late(&self) -> u64 {
        self.merger.late()
    }

    /// Stamps what can be stamped now and cuts what ends; see [`MergeStep`].
    pub fn step(&mut self, input: MergeInput) -> MergeStep {
        let mut out = MergeStep::default();
        let progressed = self.stamp_released(input, &mut out);
        if progressed || !self.ready.is_empty() {
            self.end_again = false;
        }
        if progressed || self.merger.held() == 0 || !self.ready.is_empty() {
            self.held_since = None;
        } else {
            self.held_since.get_or_insert(input.now);
        }
        self.close_quiet_epoch(input, &mut out);
        out.finished = input.sources_done && self.ready.is_empty() && self.merger.held() == 0;
        if out.finished {
            self.finish(&mut out);
        }
        out.limits = self.read_limits();
        if !out.finished {
            self.pace(input.now, &mut out);
        }
        out
    }

    /// What can be released: the data's order; everything at the end; when the merge has
    /// waited too long for a partition with nothing to read (a live stream), what that
    /// partition no longer holds back (see `release_waited`). The wait counts only while
    /// nothing can be released. Records are released a block at a time, as they are
    /// stamped, so what waits in `ready` stays small. Returns whether any was released.
    fn stamp_released(&mut self, input: MergeInput, out: &mut MergeStep) -> bool {
        let waited = self
            .held_since
            .is_some_and(|t| input.now - t >= self.options.max_wait);
        let rule = if input.sources_done {
            Release::All
        } else if waited {
            Release::Waited
        } else {
            Release::Data
        };
        let max_epochs = self.options.max_epochs_in_flight;
        let behind = |epoch: u64| {
            input
                .done_epoch
                .is_some_and(|d| epoch.saturating_sub(d) > max_epochs)
        };
        let mut progressed = false;
        loop {
            if self.ready.is_empty() {
                self.ready.extend(self.merger.next_block(rule, 1));
                if self.ready.is_empty() {
                    break;
                }
                progressed = true;
            }
            if behind(self.sequencer.epoch()) && !input.sources_done {
                break;
            }
            let Some(r) = self.ready.pop_front() else {
                break;
            };
            let before = self.sequencer.epoch();
            self.stamp(r, out);
            if self.sequencer.epoch() != before {
                self.cut(before, out);
                self.checkpoint_if_due(before, input.now, out);
            }
        }
        progressed
    }

    /// Stamps one released record (or sends it to the dead letters).
    fn stamp(&mut self, r: RawRecord<RecordBody>, out: &mut MergeStep) {
        if let Some(k) = self.stamped_keys.get_mut(&(r.stream, r.partition)) {
            *k = r.key;
        }
        self.held = None;
        let unserved = matches!(r.body, RecordBody::Unserved(_));
        match r.body {
            RecordBody::Event { example, model } => {
                out.events += 1;
                out.labeled += u64::from(example.label.is_some());
                // An unlabeled event waits for its feedback (from the feedback topic, when
                // the job has one).
                let item = self.sequencer.stamp(Input::Event {
                    wait: example.label.is_none(),
                    example: Arc::new(example),
                    model,
                });
                if let Some(t) = r.timestamp_ms {
                    note_event_time(item.epoch, item.seq, t, out);
                }
                out.items.push(item);
            }
            RecordBody::Feedback { id, kind } => {
                out.feedback += 1;
                if self.options.feedback {
                    out.items
                        .push(self.sequencer.stamp(Input::Feedback { id, kind }));
                }
            }
            RecordBody::Dead(body) | RecordBody::Unserved(body) => {
                if unserved {
                    out.items.push(self.sequencer.stamp(Input::Skipped));
                }
                out.side.push(EpochSide {
                    epoch: self.sequencer.epoch(),
                    record: SideRecord::Dead {
                        stream: r.stream,
                        partition: r.partition,
                        offset: r.offset,
                        body,
                    },
                });
            }
        }
    }

    /// The cut at the end of `epoch`: where every partition stands (its commit mark and,
    /// with timestamps, its order key).
    fn cut(&self, epoch: u64, out: &mut MergeStep) {
        out.side.push(EpochSide {
            epoch,
            record: SideRecord::Commit(self.commit_marks()),
        });
        if !self.stamped_keys.is_empty() {
            let keys = self
                .stamped_keys
                .iter()
                .map(|(&(s, p), &k)| PartitionKey::new(s, p, k))
                .collect();
            out.side.push(EpochSide {
                epoch,
                record: SideRecord::OrderKeys(keys),
            });
        }
    }

    /// Whether a checkpoint is due `now`.
    fn checkpoint_due(&self, now: Instant) -> bool {
        self.options
            .checkpoint_every
            .is_some_and(|every| now.saturating_duration_since(self.last_checkpoint) >= every)
    }

    /// A checkpoint marker at the end of `epoch`, if one is due; returns whether one was
    /// put.
    fn checkpoint_if_due(&mut self, epoch: u64, now: Instant, out: &mut MergeStep) -> bool {
        if !self.checkpoint_due(now) {
            return false;
        }
        match self.sequencer.checkpoint(epoch) {
            Some(marker) => {
                out.items.push(marker);
                self.last_checkpoint = now;
                true
            }
            None => false,
        }
    }

    /// A partial epoch ends when there is nothing more to read now (a replay's end, a live
    /// stream's quiet moment) and its first record has waited at least
    /// [`PARTIAL_EPOCH_LINGER`], or at the end. The linger keeps a busy live stream's
    /// epochs from shrinking to the few records of each fetch (every epoch costs its turns
    /// and progress messages); a quiet one's records wait at most that. A held epoch's
    /// checkpoint is put once due.
    fn close_quiet_epoch(&mut self, input: MergeInput, out: &mut MergeStep) {
        let now = input.now;
        let epoch = self.sequencer.epoch();
        if self.sequencer.in_epoch() > 0 && self.epoch_opened.is_none_or(|(e, _)| e != epoch) {
            self.epoch_opened = Some((epoch, now));
        }
        let lingering = self
            .epoch_opened
            .filter(|&(e, _)| e == epoch)
            .map(|(_, t)| PARTIAL_EPOCH_LINGER.saturating_sub(now.saturating_duration_since(t)))
            .filter(|left| !left.is_zero() && !input.sources_done);
        let quiet = self.ready.is_empty() && (self.merger.all_caught_up() || input.sources_done);
        if quiet && self.sequencer.in_epoch() > 0 {
            if let Some(left) = lingering {
                out.wake_after.push(left + Duration::from_micros(100));
            } else {
                self.sequencer.close();
                self.cut(epoch, out);
                if !self.checkpoint_if_due(epoch, now, out)
                    && self.options.hold_for_checkpoint
                    && self.options.checkpoint_every.is_some()
                {
                    self.held = Some(epoch);
                }
            }
        }
        if let Some(h) = self.held
            && self.checkpoint_due(now)
        {
            self.checkpoint_if_due(h, now, out);
            self.held = None;
        }
    }

    /// The end of the stream. The end marker's epoch counts from the last with records
    /// (held or not), so the final state does not depend on when the last checkpoint came;
    /// it comes after the learning passes still due (`end_epochs`: the epochs between take
    /// nothing from the stream). The end's cut names every partition's offset (and clamp)
    /// even when this run stamped nothing (a restart after the stream's end): the final
    /// model and the checkpoint at the end must say where the stream stands.
    fn finish(&mut self, out: &mut MergeStep) {
        self.held = None;
        if self.options.snapshot_at_end && !self.end_again {
            self.sequencer
                .skip(self.options.end_epochs.saturating_sub(1));
        }
        let end = self.sequencer.epoch();
        self.cut(end, out);
        if self.end_again {
            // Resumed from the end's snapshot, and nothing came: the state is that
            // snapshot's, which stays the end (a new snapshot would take one more epoch
            // and learn the passes due in it).
            out.side.push(EpochSide {
                epoch: end,
                record: SideRecord::EndAgain,
            });
        } else if self.options.snapshot_at_end {
            out.side.push(EpochSide {
                epoch: end,
                record: SideRecord::End,
            });
            out.items.push(self.sequencer.snapshot(None));
        }
    }

    /// The sources may read each partition up to `read_ahead` past what is stamped. With
    /// timestamps, a block may hold more than the read-ahead of one partition: a partition
    /// that holds the release back reads on until it leaves the block. Returns the limits
    /// when they changed; they are urgent when one moved by a quarter of the read-ahead
    /// (else the control operator sends them on its next round).
    fn read_limits(&mut self) -> Option<ReadLimitsUpdate> {
        let read_ahead = self.options.read_ahead;
        let holding = self.merger.holding_back();
        let limits: Vec<PartitionOffset> = self
            .commit_marks()
            .into_iter()
            .map(|mut m| {
                let mut limit = m.offset.saturating_add(read_ahead);
                if let Some(h) = holding
                    .iter()
                    .find(|h| h.partition_id() == m.partition_id())
                {
                    limit = limit.max(h.offset.saturating_add(read_ahead / 2));
                }
                m.offset = limit;
                m
            })
            .collect();
        if self.limits == limits {
            return None;
        }
        let urgent = limits.len() != self.woken.len()
            || limits.iter().zip(&self.woken).any(|(a, b)| {
                a.partition_id() != b.partition_id() || a.offset - b.offset >= read_ahead / 4
            });
        if urgent {
            self.woken.clone_from(&limits);
        }
        self.limits.clone_from(&limits);
        Some(ReadLimitsUpdate { limits, urgent })
    }

    /// Where the outputs' capabilities go, whether the job is idle, and when to run again.
    fn pace(&mut self, now: Instant, out: &mut MergeStep) {
        out.hold = self.held.unwrap_or(self.sequencer.epoch());
        // Idle: nothing came for a while and everything is read.
        if let Some(idle) = self.options.exit_when_idle
            && !self.stopping
            && now.saturating_duration_since(self.last_record) >= idle
            && self.merger.all_caught_up()
            && self.ready.is_empty()
        {
            out.idle = true;
        }
        if self.held.is_some()
            && let Some(every) = self.options.checkpoint_every
        {
            let left = every.saturating_sub(now.saturating_duration_since(self.last_checkpoint));
            out.wake_after.push(left + Duration::from_millis(1));
        }
        if !self.ready.is_empty() {
            out.wake_after.push(Duration::from_millis(1));
        } else if self.merger.held() > 0 {
            out.wake_after
                .push(self.options.max_wait / 4 + Duration::from_millis(1));
        } else if self.options.exit_when_idle.is_some() {
            out.wake_after.push(Duration::from_millis(50));
        }
    }

    /// Per partition, the offset before which every record has been stamped: the
    /// merger's (records it still holds, or its position), lowered to the first record
    /// released but not yet stamped.
    fn commit_marks(&self) -> Vec<PartitionOffset> {
        let mut marks: BTreeMap<(StreamId, i32), i64> = self
            .merger
            .committable()
            .into_iter()
            .map(|m| (m.partition_id(), m.offset))
            .collect();
        for r in &self.ready {
            let m = marks.entry((r.stream, r.partition)).or_insert(r.offset);
            *m = (*m).min(r.offset);
        }
        marks
            .into_iter()
            .map(|((s, p), o)| PartitionOffset::new(s, p, o))
            .collect()
    }
}

/// Notes an event's timestamp in its epoch's [`SideRecord::EventTimes`] (a new one when
/// the last side record is not that epoch's).
fn note_event_time(epoch: u64, seq: u64, timestamp_ms: i64, out: &mut MergeStep) {
    let time = EventTime { seq, timestamp_ms };
    if let Some(EpochSide {
        epoch: e,
        record: SideRecord::EventTimes(times),
    }) = out.side.last_mut()
        && *e == epoch
    {
        times.push(time);
        return;
    }
    out.side.push(EpochSide {
        epoch,
        record: SideRecord::EventTimes(vec![time]),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::merge::{EVENTS, FEEDBACK};
    use flowboost_operators::data::Feedback;
    use flowboost_operators::data::{Example, Features, Label};

    fn options(partitions: Vec<(StreamId, i32)>) -> MergeOptions {
        MergeOptions {
            partitions,
            block: 64,
            order: MergeOrder::Offsets,
            restored_keys: Vec::new(),
            epoch: EpochRule {
                size: 2,
                feedback_closes: false,
            },
            max_wait: Duration::from_millis(100),
            exit_when_idle: None,
            max_epochs_in_flight: 8,
            read_ahead: 100,
            feedback: true,
            snapshot_at_end: true,
            end_epochs: 1,
            checkpoint_every: None,
            hold_for_checkpoint: false,
            start: SourceState::default(),
            resumed_at_end: false,
        }
    }

    fn event(stream: StreamId, offset: i64, timestamp_ms: Option<i64>) -> SourceMessage {
        Raw::Record(RawRecord {
            stream,
            partition: 0,
            offset,
            key: timestamp_ms.unwrap_or(i64::MIN),
            timestamp_ms,
            body: RecordBody::Event {
                example: Example {
                    id: offset as u64,
                    features: Features::Dense(vec![1.0]),
                    label: Some(Label::Class(1)),
                },
                model: 0,
            },
        })
    }

    fn progress(stream: StreamId, position: i64, caught_up: bool) -> SourceMessage {
        Raw::Progress {
            stream,
            partition: 0,
            position,
            caught_up,
            backlog_end: position,
        }
    }

    fn input(now: Instant, sources_done: bool) -> MergeInput {
        MergeInput {
            now,
            sources_done,
            done_epoch: None,
        }
    }

    fn commits(step: &MergeStep) -> Vec<(u64, Vec<PartitionOffset>)> {
        step.side
            .iter()
            .filter_map(|s| match &s.record {
                SideRecord::Commit(marks) => Some((s.epoch, marks.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn full_epochs_are_cut_once_each_and_the_end_takes_a_snapshot() {
        let t0 = Instant::now();
        let mut merge = MergeState::new(options(vec![(EVENTS, 0)]), t0);
        merge.push(progress(EVENTS, 0, false), t0);
        for offset in 0..3 {
            merge.push(event(EVENTS, offset, Some(1000 + offset)), t0);
        }
        merge.push(progress(EVENTS, 3, true), t0);
        let step = merge.step(input(t0, false));
        assert_eq!(step.events, 3);
        assert_eq!(step.labeled, 3);
        let epochs: Vec<(u64, u64)> = step.items.iter().map(|i| (i.seq, i.epoch)).collect();
        assert_eq!(epochs, [(0, 0), (1, 0), (2, 1)]);
        // Epoch 0 ended after two records: every record before offset 2 is stamped.
        assert_eq!(
            commits(&step),
            [(0, vec![PartitionOffset::new(EVENTS, 0, 2)])]
        );
        // The event times ride with their epochs.
        let times: Vec<(u64, Vec<EventTime>)> = step
            .side
            .iter()
            .filter_map(|s| match &s.record {
                SideRecord::EventTimes(t) => Some((s.epoch, t.clone())),
                _ => None,
            })
            .collect();
        let time = |seq, timestamp_ms| EventTime { seq, timestamp_ms };
        assert_eq!(
            times,
            [
                (0, vec![time(0, 1000), time(1, 1001)]),
                (1, vec![time(2, 1002)])
            ]
        );
        // The partial epoch 1 lingers (a live stream's quiet moment), then is cut.
        assert!(!step.wake_after.is_empty());
        assert_eq!(step.hold, 1);
        let later = t0 + PARTIAL_EPOCH_LINGER * 2;
        let step = merge.step(input(later, false));
        assert_eq!(
            commits(&step),
            [(1, vec![PartitionOffset::new(EVENTS, 0, 3)])]
        );
        assert!(!step.finished);
        assert_eq!(step.hold, 2);
        // The end: one more cut and the snapshot marker, at the next epoch.
        let step = merge.step(input(later, true));
        assert!(step.finished);
        assert_eq!(
            commits(&step),
            [(2, vec![PartitionOffset::new(EVENTS, 0, 3)])]
        );
        assert!(step.side.iter().any(|s| s.record == SideRecord::End));
        assert_eq!(step.items.len(), 1, "the snapshot marker");
    }

    #[test]
    fn read_limits_follow_the_stamped_offsets_and_are_urgent_when_they_move() {
        let t0 = Instant::now();
        let mut merge = MergeState::new(options(vec![(EVENTS, 0)]), t0);
        merge.push(progress(EVENTS, 0, false), t0);
        let step = merge.step(input(t0, false));
        let limits = step.limits.expect("the first limits");
        assert_eq!(limits.limits, [PartitionOffset::new(EVENTS, 0, 100)]);
        assert!(limits.urgent);
        assert_eq!(merge.step(input(t0, false)).limits, None, "unchanged");
        for offset in 0..10 {
            merge.push(event(EVENTS, offset, None), t0);
        }
        merge.push(progress(EVENTS, 10, true), t0);
        let limits = merge.step(input(t0, false)).limits.expect("moved");
        assert_eq!(limits.limits, [PartitionOffset::new(EVENTS, 0, 110)]);
        assert!(
            !limits.urgent,
            "10 is less than a quarter of the read-ahead"
        );
    }

    #[test]
    fn dead_letters_and_feedback_are_counted_and_idle_is_noticed() {
        let t0 = Instant::now();
        let mut o = options(vec![(EVENTS, 0), (FEEDBACK, 0)]);
        o.exit_when_idle = Some(Duration::from_millis(10));
        let mut merge = MergeState::new(o, t0);
        merge.push(progress(EVENTS, 0, false), t0);
        merge.push(progress(FEEDBACK, 0, false), t0);
        let dead = super::super::record::DeadBody {
            kind: "json".into(),
            reason: "bad".into(),
            key: None,
            payload: b"x".to_vec(),
        };
        merge.push(
            Raw::Record(RawRecord {
                stream: EVENTS,
                partition: 0,
                offset: 0,
                key: i64::MIN,
                timestamp_ms: None,
                body: RecordBody::Dead(dead),
            }),
            t0,
        );
        merge.push(
            Raw::Record(RawRecord {
                stream: FEEDBACK,
                partition: 0,
                offset: 0,
                key: i64::MIN,
                timestamp_ms: None,
                body: RecordBody::Feedback {
                    id: 7,
                    kind: Feedback::Label(Label::Class(0)),
                },
            }),
            t0,
        );
        merge.push(progress(EVENTS, 1, true), t0);
        merge.push(progress(FEEDBACK, 1, true), t0);
        let step = merge.step(input(t0, false));
        assert_eq!((step.events, step.feedback), (0, 1));
        assert!(
            step.side
                .iter()
                .any(|s| matches!(s.record, SideRecord::Dead { offset: 0, .. }))
        );
        assert!(!step.idle, "a record came just now");
        let step = merge.step(input(t0 + Duration::from_millis(20), false));
        assert!(step.idle);
        merge.stop();
        assert!(
            !merge
                .step(input(t0 + Duration::from_millis(30), false))
                .idle
        );
    }
}
