//! The merge operator: on worker 0, the records of every partition (from every worker's
//! source) in one order that depends only on the data, stamped by the sequencer into
//! epochs: the one place that assigns positions. The rules are [`MergeState`]'s; the
//! operator moves records in and out.

use super::merge_state::{MergeInput, MergeOptions, MergeState, MergeStep};
use super::metrics::JobMetrics;
use super::read_limits::ReadLimits;
use super::record::{Control, SideRecord, SourceMessage};
use super::worker_state::WorkerState;
use flowboost_operators::engine::Item;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::{ProbeHandle, Stream};

/// What the merge hands on.
pub struct Merged<'scope> {
    /// The stamped sequence.
    pub items: Stream<'scope, u64, Vec<Item>>,
    /// Dead letters, commit marks, order keys and event times, at their epochs.
    pub side: Stream<'scope, u64, Vec<SideRecord>>,
}

/// What the merge operator reads and writes besides its streams.
pub struct MergeContext {
    /// The model's output (the epoch it has finished): the merge stays at most
    /// `max_epochs_in_flight` ahead.
    pub done: ProbeHandle<u64>,
    /// The job's counters.
    pub metrics: Arc<JobMetrics>,
    /// The worker's control state (the merge sets `idle`).
    pub worker: Rc<RefCell<WorkerState>>,
    /// Where the merge publishes the sources' read limits.
    pub limits: ReadLimits,
}

/// The merge of the sources' messages (the stream this is called on), on worker 0 (it
/// exists on every worker, as timely wants; the messages are exchanged to worker 0).
///
/// ```no_run
/// # use flowboost::kafka::merge_operator::{MergeContext, MergeExt};
/// # use flowboost::kafka::merge_state::MergeOptions;
/// # use flowboost::kafka::record::{Control, SourceMessage};
/// # use timely::dataflow::Stream;
/// fn wire<'s>(
///     messages: Stream<'s, u64, Vec<SourceMessage>>,
///     control: Stream<'s, u64, Vec<Control>>,
///     options: MergeOptions,
///     context: MergeContext,
/// ) {
///     let merged = messages.merge_sources(control, options, context);
///     let _ = (merged.items, merged.side);
/// }
/// ```
pub trait MergeExt<'scope> {
    /// Merges and stamps the sources' records; stops taking them (not idle any more) on
    /// the control stream's `Stop`.
    fn merge_sources(
        self,
        control: Stream<'scope, u64, Vec<Control>>,
        options: MergeOptions,
        context: MergeContext,
    ) -> Merged<'scope>;
}

impl<'scope> MergeExt<'scope> for Stream<'scope, u64, Vec<SourceMessage>> {
    fn merge_sources(
        self,
        control: Stream<'scope, u64, Vec<Control>>,
        options: MergeOptions,
        context: MergeContext,
    ) -> Merged<'scope> {
        let scope = self.scope();
        let index = scope.index();
        let mut builder = OperatorBuilder::new("Merge".to_string(), scope);
        let activator = scope.activator_for(builder.operator_info().address);
        let to_0 = Exchange::new(|_: &SourceMessage| 0u64);
        let mut input = builder.new_input_connection(self, to_0, std::iter::empty());
        let mut control_in = builder.new_input_connection(control, Pipeline, std::iter::empty());
        let (items_out, items) = builder.new_output_connection::<Vec<Item>, _>(std::iter::empty());
        let (side_out, side) =
            builder.new_output_connection::<Vec<SideRecord>, _>(std::iter::empty());
        let mut items_out = OutputBuilder::from(items_out);
        let mut side_out = OutputBuilder::from(side_out);
        builder.build(move |mut capabilities| {
            let mut caps = match (capabilities.pop(), capabilities.pop()) {
                (Some(side), Some(items)) if index == 0 => Some([items, side]),
                _ => None,
            };
            let mut state = MergeState::new(options, Instant::now());
            move |frontiers| {
                control_in.for_each(|_t, data| {
                    if data.iter().any(|c| matches!(c, Control::Stop { .. })) {
                        state.stop();
                    }
                    data.clear();
                });
                input.for_each(|_t, data| {
                    for m in data.drain(..) {
                        state.push(m, Instant::now());
                    }
                });
                let Some([icap, scap]) = caps.as_mut() else {
                    return;
                };
                let metrics = &context.metrics;
                metrics.note_held(state.held());
                metrics.merge_late.store(state.late(), Ordering::Relaxed);
                let step = state.step(MergeInput {
                    now: Instant::now(),
                    sources_done: frontiers[0].is_empty(),
                    done_epoch: context.done.with_frontier(|f| f.first().copied()),
                });
                report(&context, &step);
                // One container per epoch (a session per item would send a container of
                // one).
                for (epoch, run) in runs(step.items, |i| i.epoch) {
                    downgrade(icap, epoch);
                    items_out
                        .activate()
                        .session(&*icap)
                        .give_iterator(run.into_iter());
                }
                for (epoch, run) in runs(step.side, |s| s.epoch) {
                    downgrade(scap, epoch);
                    let records = run.into_iter().map(|s| s.record);
                    side_out.activate().session(&*scap).give_iterator(records);
                }
                if let Some(update) = step.limits {
                    context.limits.publish(update);
                }
                if step.finished {
                    caps = None;
                    return;
                }
                downgrade(icap, step.hold);
                downgrade(scap, step.hold);
                for after in step.wake_after {
                    activator.activate_after(after);
                }
            }
        });
        Merged { items, side }
    }
}

/// `records` in runs of one epoch, in order.
fn runs<T>(records: Vec<T>, epoch: impl Fn(&T) -> u64) -> Vec<(u64, Vec<T>)> {
    let mut runs: Vec<(u64, Vec<T>)> = Vec::new();
    for r in records {
        let e = epoch(&r);
        match runs.last_mut() {
            Some((last, run)) if *last == e => run.push(r),
            _ => runs.push((e, vec![r])),
        }
    }
    runs
}

/// Moves `cap` to `epoch` if it is before it.
fn downgrade(cap: &mut Capability<u64>, epoch: u64) {
    if *cap.time() < epoch {
        cap.downgrade(&epoch);
    }
}

/// Counts a step's records in the metrics, and notes an idle job.
fn report(context: &MergeContext, step: &MergeStep) {
    if step.idle {
        context.worker.borrow_mut().idle = true;
    }
    let metrics = &context.metrics;
    if step.events > 0 {
        metrics.events_in.fetch_add(step.events, Ordering::Relaxed);
        metrics.learned.fetch_add(step.labeled, Ordering::Relaxed);
        metrics.first_event();
    }
    if step.feedback > 0 {
        metrics
            .feedback_in
            .fetch_add(step.feedback, Ordering::Relaxed);
    }
    for s in &step.side {
        if let SideRecord::Dead { body, .. } = &s.record {
            metrics.dead_letter(&body.kind);
        }
    }
}
