//! The merge: on worker 0, the records of every partition (from every worker's source) in
//! one order that depends only on the data, stamped by the sequencer into epochs: the one
//! place that assigns positions.

use super::merge::{EVENTS, MergeOrder, Merger, RawRecord, Release, StreamId};
use super::metrics::JobMetrics;
use super::record::{Control, RecordBody, SideRecord, SourceMessage};
use super::worker_state::WorkerState;
use flowboost_operators::engine::{EpochRule, Input, Item, Sequencer, SourceState};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::{ProbeHandle, Stream};

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
    pub restored_keys: Vec<(StreamId, i32, i64)>,
    /// Inputs per epoch.
    pub epoch: EpochRule,
    /// A record held this long for other partitions is released anyway (live streams).
    pub max_wait: Duration,
    /// Stop once no record came for this long and everything is read (bounded runs).
    pub exit_when_idle: Option<Duration>,
    /// At most this many epochs between the merge and the model's output.
    pub max_epochs_in_flight: u64,
    /// Each partition may be read at most this many offsets past the first record of it
    /// the merge has not stamped yet (sent to the sources as [`Control::Limits`]).
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

/// What the merge hands on.
pub struct Merged<'scope> {
    /// The stamped sequence.
    pub items: Stream<'scope, u64, Vec<Item>>,
    /// Dead letters and commit marks, at their epochs.
    pub side: Stream<'scope, u64, Vec<SideRecord>>,
}

/// Builds the merge (on worker 0; it exists on every worker, as timely wants).
pub fn merge<'scope>(
    messages: Stream<'scope, u64, Vec<SourceMessage>>,
    control: Stream<'scope, u64, Vec<Control>>,
    options: MergeOptions,
    done: ProbeHandle<u64>,
    metrics: Arc<JobMetrics>,
    worker: Rc<RefCell<WorkerState>>,
) -> Merged<'scope> {
    let scope = messages.scope();
    let index = scope.index();
    let mut builder = OperatorBuilder::new("Merge".to_string(), scope);
    let info = builder.operator_info();
    let activator = scope.activator_for(info.address);
    let mut input = builder.new_input_connection(
        messages,
        Exchange::new(|_: &SourceMessage| 0u64),
        std::iter::empty(),
    );
    let mut control_in = builder.new_input_connection(control, Pipeline, std::iter::empty());
    let (items_out, items) = builder.new_output_connection::<Vec<Item>, _>(std::iter::empty());
    let (side_out, side) = builder.new_output_connection::<Vec<SideRecord>, _>(std::iter::empty());
    let mut items_out = OutputBuilder::from(items_out);
    let mut side_out = OutputBuilder::from(side_out);
    builder.build(move |mut capabilities| {
        let mut side_cap = capabilities.pop();
        let mut items_cap = capabilities.pop();
        if index != 0 {
            side_cap = None;
            items_cap = None;
        }
        let mut merger: Merger<RecordBody> =
            Merger::with_order(options.partitions.clone(), options.block, options.order);
        // Per partition, the key of the last record stamped (timestamps): with the commit
        // marks, where a checkpoint's clamp goes on.
        let mut stamped_keys: BTreeMap<(StreamId, i32), i64> = BTreeMap::new();
        if options.order == MergeOrder::Timestamps {
            for &key in &options.partitions {
                stamped_keys.insert(key, i64::MIN);
            }
            for &(s, p, k) in &options.restored_keys {
                merger.restore_key(s, p, k);
                stamped_keys.insert((s, p), k);
            }
        }
        let order_keys = |keys: &BTreeMap<(StreamId, i32), i64>| {
            SideRecord::OrderKeys(keys.iter().map(|(&(s, p), &k)| (s, p, k)).collect())
        };
        let mut sequencer = Sequencer::new(options.epoch, options.start.clone());
        let mut ready: VecDeque<RawRecord<RecordBody>> = VecDeque::new();
        let mut last_record = Instant::now();
        let mut held_since: Option<Instant> = None;
        let mut stopping = false;
        let mut woken: Vec<(StreamId, i32, i64)> = Vec::new();
        let mut last_checkpoint = Instant::now();
        // The last epoch, ended on a quiet stream, held open for its checkpoint.
        let mut held: Option<u64> = None;
        // Resumed from the end's snapshot, and no record came yet.
        let mut end_again = options.resumed_at_end;
        // The open epoch and when its first record was stamped.
        let mut epoch_opened: Option<(u64, Instant)> = None;
        move |frontiers| {
            control_in.for_each(|_t, data| {
                if data.iter().any(|c| matches!(c, Control::Stop { .. })) {
                    stopping = true;
                }
                data.clear();
            });
            input.for_each(|_t, data| {
                for m in data.drain(..) {
                    if matches!(m, super::merge::Raw::Record(_)) {
                        last_record = Instant::now();
                    }
                    merger.push(m);
                }
            });
            let (Some(icap), Some(scap)) = (items_cap.as_mut(), side_cap.as_mut()) else {
                return;
            };
            metrics.note_held(merger.held() + ready.len());
            metrics.merge_late.store(merger.late(), Ordering::Relaxed);
            let sources_done = frontiers[0].is_empty();
            let now = Instant::now();
            // What can be released: the data's order; everything at the end; when the
            // merge has waited too long for a partition with nothing to read (a live
            // stream), what that partition no longer holds back (see `release_waited`).
            // The wait counts only while nothing can be released. Records are released a
            // block at a time, as they are stamped, so what waits in `ready` stays small.
            let waited = held_since.is_some_and(|t| now - t >= options.max_wait);
            let rule = if sources_done {
                Release::All
            } else if waited {
                Release::Waited
            } else {
                Release::Data
            };
            let mut items_buf: Vec<Item> = Vec::new();
            let mut side_buf: Vec<(u64, SideRecord)> = Vec::new();
            let behind = |epoch: u64| {
                done.with_frontier(|f| f.first().copied())
                    .is_some_and(|d| epoch.saturating_sub(d) > options.max_epochs_in_flight)
            };
            let mut progressed = false;
            let (mut events, mut labeled) = (0u64, 0u64);
            let checkpoint_due = |last: Instant| {
                options
                    .checkpoint_every
                    .is_some_and(|every| now.saturating_duration_since(last) >= every)
            };
            loop {
                if ready.is_empty() {
                    ready.extend(merger.next_block(rule, 1));
                    if ready.is_empty() {
                        break;
                    }
                    progressed = true;
                }
                if behind(sequencer.epoch()) && !sources_done {
                    break;
                }
                let r = ready.pop_front().expect("not empty");
                if let Some(k) = stamped_keys.get_mut(&(r.stream, r.partition)) {
                    *k = r.key;
                }
                let before = sequencer.epoch();
                held = None;
                let unserved = matches!(r.body, RecordBody::Unserved(_));
                match r.body {
                    RecordBody::Event { example, model } => {
                        events += 1;
                        labeled += u64::from(example.label.is_some());
                        // An unlabeled event waits for its feedback (from the
                        // feedback topic, when the job has one).
                        let item = sequencer.stamp(Input::Event {
                            wait: example.label.is_none(),
                            example: Arc::new(example),
                            model,
                        });
                        if let Some(t) = r.timestamp_ms {
                            worker.borrow_mut().event_times.note(item.seq, t);
                        }
                        items_buf.push(item);
                    }
                    RecordBody::Feedback { id, kind } => {
                        metrics.feedback_in.fetch_add(1, Ordering::Relaxed);
                        if options.feedback {
                            items_buf.push(sequencer.stamp(Input::Feedback { id, kind }));
                        }
                    }
                    RecordBody::Dead(body) | RecordBody::Unserved(body) => {
                        if unserved {
                            items_buf.push(sequencer.stamp(Input::Skipped));
                        }
                        metrics.dead_letter(&body.kind);
                        side_buf.push((
                            sequencer.epoch(),
                            SideRecord::Dead {
                                stream: r.stream,
                                partition: r.partition,
                                offset: r.offset,
                                body,
                            },
                        ));
                    }
                }
                if sequencer.epoch() != before {
                    side_buf.push((before, SideRecord::Commit(commit_marks(&merger, &ready))));
                    if !stamped_keys.is_empty() {
                        side_buf.push((before, order_keys(&stamped_keys)));
                    }
                    if checkpoint_due(last_checkpoint)
                        && let Some(marker) = sequencer.checkpoint(before)
                    {
                        items_buf.push(marker);
                        last_checkpoint = now;
                    }
                }
            }
            if progressed || !ready.is_empty() {
                end_again = false;
            }
            if events > 0 {
                metrics.events_in.fetch_add(events, Ordering::Relaxed);
                metrics.learned.fetch_add(labeled, Ordering::Relaxed);
                metrics.first_event();
            }
            if progressed || merger.held() == 0 || !ready.is_empty() {
                held_since = None;
            } else {
                held_since.get_or_insert(now);
            }
            if sequencer.in_epoch() > 0 && epoch_opened.is_none_or(|(e, _)| e != sequencer.epoch())
            {
                epoch_opened = Some((sequencer.epoch(), now));
            }
            // A partial epoch ends when there is nothing more to read now (a replay's end,
            // a live stream's quiet moment) and its first record has waited at least
            // PARTIAL_EPOCH_LINGER, or at the end. The linger keeps a busy live stream's
            // epochs from shrinking to the few records of each fetch (every epoch costs
            // its turns and progress messages); a quiet one's records wait at most that.
            let lingering = epoch_opened
                .filter(|&(e, _)| e == sequencer.epoch())
                .map(|(_, t)| PARTIAL_EPOCH_LINGER.saturating_sub(now.saturating_duration_since(t)))
                .filter(|left| !left.is_zero() && !sources_done);
            let quiet = ready.is_empty() && (merger.all_caught_up() || sources_done);
            if quiet
                && sequencer.in_epoch() > 0
                && let Some(left) = lingering
            {
                activator.activate_after(left + Duration::from_micros(100));
            } else if quiet && sequencer.in_epoch() > 0 {
                let before = sequencer.epoch();
                sequencer.close();
                side_buf.push((before, SideRecord::Commit(commit_marks(&merger, &ready))));
                if !stamped_keys.is_empty() {
                    side_buf.push((before, order_keys(&stamped_keys)));
                }
                if checkpoint_due(last_checkpoint)
                    && let Some(marker) = sequencer.checkpoint(before)
                {
                    items_buf.push(marker);
                    last_checkpoint = now;
                } else if options.hold_for_checkpoint && options.checkpoint_every.is_some() {
                    held = Some(before);
                }
            }
            // A held epoch's checkpoint, once due.
            if let Some(h) = held
                && checkpoint_due(last_checkpoint)
            {
                if let Some(marker) = sequencer.checkpoint(h) {
                    items_buf.push(marker);
                    last_checkpoint = now;
                }
                held = None;
            }
            let finished = sources_done && ready.is_empty() && merger.held() == 0;
            if finished {
                // The end marker's epoch counts from the last with records (held or not),
                // so the final state does not depend on when the last checkpoint came; it
                // comes after the learning passes still due (`end_epochs`: the epochs
                // between take nothing from the stream).
                held = None;
                if options.snapshot_at_end && !end_again {
                    sequencer.skip(options.end_epochs.saturating_sub(1));
                }
                // The end's cut names every partition's offset (and clamp) even when this
                // run stamped nothing (a restart after the stream's end): the final model
                // and the checkpoint at the end must say where the stream stands.
                let end = sequencer.epoch();
                side_buf.push((end, SideRecord::Commit(commit_marks(&merger, &ready))));
                if !stamped_keys.is_empty() {
                    side_buf.push((end, order_keys(&stamped_keys)));
                }
                if end_again {
                    // Resumed from the end's snapshot, and nothing came: the state is
                    // that snapshot's, which stays the end (a new snapshot would take one
                    // more epoch and learn the passes due in it).
                    side_buf.push((end, SideRecord::EndAgain));
                } else if options.snapshot_at_end {
                    side_buf.push((end, SideRecord::End));
                    items_buf.push(sequencer.snapshot(None));
                }
            }
            // One container per epoch (a session per item would send a container of one).
            let mut items = items_buf.into_iter().peekable();
            while let Some(first) = items.next() {
                let epoch = first.epoch;
                if *icap.time() < epoch {
                    icap.downgrade(&epoch);
                }
                let mut out = items_out.activate();
                let mut session = out.session(&*icap);
                session.give(first);
                while let Some(item) = items.next_if(|i| i.epoch == epoch) {
                    session.give(item);
                }
            }
            let mut side = side_buf.into_iter().peekable();
            while let Some((epoch, first)) = side.next() {
                if *scap.time() < epoch {
                    scap.downgrade(&epoch);
                }
                let mut out = side_out.activate();
                let mut session = out.session(&*scap);
                session.give(first);
                while let Some((_, record)) = side.next_if(|r| r.0 == epoch) {
                    session.give(record);
                }
            }
            // The sources may read each partition up to `read_ahead` past what is stamped.
            // With timestamps, a block may hold more than the read-ahead of one partition:
            // a partition that holds the release back reads on until it leaves the block.
            let holding = merger.holding_back();
            let limits: Vec<(StreamId, i32, i64)> = commit_marks(&merger, &ready)
                .into_iter()
                .map(|(s, p, o)| {
                    let mut limit = o.saturating_add(options.read_ahead);
                    if let Some(&(_, _, known)) = holding.iter().find(|h| h.0 == s && h.1 == p) {
                        limit = limit.max(known.saturating_add(options.read_ahead / 2));
                    }
                    (s, p, limit)
                })
                .collect();
            {
                let mut w = worker.borrow_mut();
                if w.read_limits != limits {
                    // Wake the control operator (which sends them) when a limit moved by a
                    // quarter of the read-ahead; else it sends them on its next round.
                    let moved = limits.len() != woken.len()
                        || limits.iter().zip(&woken).any(|(a, b)| {
                            a.0 != b.0 || a.1 != b.1 || a.2 - b.2 >= options.read_ahead / 4
                        });
                    if moved {
                        if let Some(control) = &w.control {
                            control.activate();
                        }
                        woken.clone_from(&limits);
                    }
                    w.read_limits = limits;
                    w.read_limits_changed = true;
                }
            }
            if finished {
                items_cap = None;
                side_cap = None;
                return;
            }
            let epoch = held.unwrap_or(sequencer.epoch());
            if *icap.time() < epoch {
                icap.downgrade(&epoch);
            }
            if *scap.time() < epoch {
                scap.downgrade(&epoch);
            }
            // Idle: nothing came for a while and everything is read.
            if let Some(idle) = options.exit_when_idle
                && !stopping
                && last_record.elapsed() >= idle
                && merger.all_caught_up()
                && ready.is_empty()
            {
                worker.borrow_mut().idle = true;
            }
            if held.is_some()
                && let Some(every) = options.checkpoint_every
            {
                let left = every.saturating_sub(now.saturating_duration_since(last_checkpoint));
                activator.activate_after(left + Duration::from_millis(1));
            }
            if !ready.is_empty() {
                activator.activate_after(Duration::from_millis(1));
            } else if merger.held() > 0 {
                activator.activate_after(options.max_wait / 4 + Duration::from_millis(1));
            } else if options.exit_when_idle.is_some() {
                activator.activate_after(Duration::from_millis(50));
            }
        }
    });
    let _ = EVENTS;
    Merged { items, side }
}

/// How long a partial epoch stays open on a live stream's quiet moment before it is ended
/// (see the merge's quiet rule).
const PARTIAL_EPOCH_LINGER: Duration = Duration::from_millis(5);

/// Per partition, the offset before which every record has been stamped: the merger's
/// (records it still holds, or its position), lowered to the first record released but
/// not yet stamped.
fn commit_marks(
    merger: &Merger<RecordBody>,
    ready: &VecDeque<RawRecord<RecordBody>>,
) -> Vec<(StreamId, i32, i64)> {
    let mut marks: BTreeMap<(StreamId, i32), i64> = merger
        .committable()
        .into_iter()
        .map(|(s, p, o)| ((s, p), o))
        .collect();
    for r in ready {
        let m = marks.entry((r.stream, r.partition)).or_insert(r.offset);
        *m = (*m).min(r.offset);
    }
    marks.into_iter().map(|((s, p), o)| (s, p, o)).collect()
}
