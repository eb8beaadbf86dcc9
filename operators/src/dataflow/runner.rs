use super::JoinOutputs;
use super::pipeline;
use super::sink_parts::{CountsTracker, SinkSideInputs, SnapshotAssembler};
use crate::engine::feedback::JoinCounts;
use crate::engine::{
    BoxError, Chain, ChainOutput, FeedbackSetup, Item, PredictionSink, RunError, SourceError,
    SourceState, Stage,
};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::operator::source;
use timely::dataflow::{ProbeHandle, Stream};

/// How to run a pipeline on timely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataflowOptions {
    /// The number of timely worker threads in this process.
    pub workers: usize,
    /// How many epochs the source may run ahead of the terminal (bounds the memory in
    /// flight).
    pub max_epochs_in_flight: u64,
    /// Items the source emits per activation (the workers' turns interleave in between).
    pub source_batch: usize,
}

impl Default for DataflowOptions {
    fn default() -> Self {
        DataflowOptions {
            workers: 1,
            max_epochs_in_flight: 8,
            source_batch: 1024,
        }
    }
}

/// What a worker's closure returns: worker 0 its sink's output or the first error, the
/// others nothing.
type Outcome<T> = Option<Result<T, RunError>>;

/// What the source and the sink of worker 0 share: the first error, the sink, the join's
/// final counts.
struct Shared<K> {
    error: Option<RunError>,
    sink: Option<K>,
    join_counts: Option<JoinCounts>,
}

/// A stamped stream as a timely source on worker 0: items at their epochs, a bounded
/// number of epochs ahead of `probe`; parks while the model is behind; stops at the first
/// error (of its own or of the sink). Snapshot markers also go, with the source's state,
/// to `snapshots`.
fn item_source<'scope, I, X, K>(
    scope: timely::dataflow::Scope<'scope, u64>,
    items: Option<I>,
    probe: ProbeHandle<u64>,
    options: &DataflowOptions,
    shared: Rc<RefCell<Shared<K>>>,
) -> Stream<'scope, u64, Vec<Item>>
where
    I: Iterator<Item = Result<Item, X>> + 'static,
    X: Into<SourceError>,
    K: 'static,
{
    let lag = options.max_epochs_in_flight.max(1);
    let batch = options.source_batch.max(1);
    source(scope, "Source", move |capability, info| {
        let activator = scope.activator_for(info.address);
        let mut state = items.map(|it| (capability, it.peekable()));
        // The items of one epoch go out as one container (a session per item would send
        // a container of one).
        let mut container: Vec<Item> = Vec::new();
        move |output| {
            let Some((capability, items)) = state.as_mut() else {
                return;
            };
            if shared.borrow().error.is_some() {
                state = None;
                return;
            }
            let mut open = true;
            for _ in 0..batch {
                let Some(next) = items.peek() else {
                    open = false;
                    break;
                };
                let epoch = match next {
                    Ok(item) => item.epoch,
                    Err(_) => {
                        if let Some(Err(e)) = items.next() {
                            let e = RunError::Source(e.into());
                            shared.borrow_mut().error.get_or_insert(e);
                        }
                        open = false;
                        break;
                    }
                };
                // Everything before the next item's epoch is complete on the source's side.
                if *capability.time() < epoch {
                    if !container.is_empty() {
                        output.session(&*capability).give_container(&mut container);
                    }
                    capability.downgrade(&epoch);
                }
                // Backpressure: no further than `lag` epochs ahead of the terminal.
                if probe.less_than(&epoch.saturating_sub(lag)) {
                    if !container.is_empty() {
                        output.session(&*capability).give_container(&mut container);
                    }
                    activator.activate_after(Duration::from_millis(1));
                    return;
                }
                if let Some(Ok(item)) = items.next() {
                    container.push(item);
                }
            }
            if !container.is_empty() {
                output.session(&*capability).give_container(&mut container);
            }
            if open {
                activator.activate();
            } else {
                state = None;
            }
        }
    })
}

/// Worker 0's sink: the predictions of every completed epoch, in order, handed to the
/// `PredictionSink`; at a snapshot epoch, the snapshot too (the chain's state from the
/// terminal, the join's parts, the source's state), and the join's live counts at the end.
#[allow(clippy::too_many_arguments)]
fn prediction_sink<'scope, K: PredictionSink + 'static>(
    outputs: Stream<'scope, u64, Vec<ChainOutput>>,
    items: Stream<'scope, u64, Vec<Item>>,
    join: Option<JoinOutputs<'scope>>,
    shared: Rc<RefCell<Shared<K>>>,
    stages: usize,
    score_dim: usize,
    restored_counts: JoinCounts,
) {
    let scope = outputs.scope();
    let SinkSideInputs {
        states,
        counts,
        parts,
        has_join,
    } = SinkSideInputs::new(items, join);
    let mut builder = OperatorBuilder::new("Sink".to_string(), scope);
    let mut outputs_in = builder.new_input(outputs, Pipeline);
    let mut states_in = builder.new_input(states, Pipeline);
    let mut counts_in = builder.new_input(counts, Pipeline);
    let mut parts_in = builder.new_input(parts, Pipeline);
    builder.build(move |_capabilities| {
        let mut pending = PendingEpochs {
            stages,
            score_dim,
            has_join,
            ..PendingEpochs::default()
        };
        let mut tracker = CountsTracker::new(restored_counts);
        move |frontiers| {
            outputs_in.for_each(|time, data: &mut Vec<ChainOutput>| {
                pending.outputs(*time.time(), data);
            });
            states_in.for_each(|time, data: &mut Vec<SourceState>| {
                pending.source(*time.time(), data);
            });
            counts_in.for_each(|_time, data: &mut Vec<crate::dataflow::CountUpdate>| {
                for ((field, total), _, diff) in data.drain(..) {
                    tracker.update(field, total, diff);
                }
            });
            parts_in.for_each(|time, data: &mut Vec<crate::dataflow::JoinPart>| {
                for p in data.drain(..) {
                    pending.assembler.join(*time.time(), p);
                }
            });
            let mut shared = shared.borrow_mut();
            let done = |t: u64| !frontiers.iter().any(|f| f.less_equal(&t));
            pending.deliver(done, &mut shared);
            if frontiers.iter().all(|f| f.is_empty()) && has_join {
                shared.join_counts = Some(tracker.counts());
            }
        }
    });
}

/// What worker 0's sink holds until an epoch completes: the chain's outputs and the
/// snapshot parts by epoch, and the epochs with any.
#[derive(Default)]
struct PendingEpochs {
    predictions: BTreeMap<u64, Vec<ChainOutput>>,
    assembler: SnapshotAssembler,
    epochs: BTreeSet<u64>,
    /// The chain's shape, for the snapshots.
    stages: usize,
    score_dim: usize,
    has_join: bool,
}

impl PendingEpochs {
    /// The chain's outputs at epoch `t` (taken out of `data`).
    fn outputs(&mut self, t: u64, data: &mut Vec<ChainOutput>) {
        self.epochs.insert(t);
        self.predictions.entry(t).or_default().append(data);
    }

    /// The source's state at a snapshot marker of epoch `t` (taken out of `data`).
    fn source(&mut self, t: u64, data: &mut Vec<SourceState>) {
        self.epochs.insert(t);
        for s in data.drain(..) {
            self.assembler.source(t, s);
        }
    }

    /// Hands the epochs that `done` says are complete, in order, to the sink: each
    /// prediction, then the epoch's snapshot if one was taken; after an error (kept, the
    /// first only), nothing more.
    fn deliver<K: PredictionSink>(&mut self, done: impl Fn(u64) -> bool, shared: &mut Shared<K>) {
        while let Some(&t) = self.epochs.first() {
            if !done(t) {
                break;
            }
            self.epochs.remove(&t);
            if shared.error.is_some() {
                continue;
            }
            for o in self.predictions.remove(&t).unwrap_or_default() {
                let result = match o {
                    ChainOutput::Prediction(e) => match shared.sink.as_mut() {
                        Some(sink) => sink.accept(e.prediction, e.example),
                        None => Ok(()),
                    },
                    ChainOutput::Snapshot(parts) => {
                        self.assembler.chain(t, parts);
                        Ok(())
                    }
                };
                if let Err(e) = result {
                    shared.error.get_or_insert(RunError::Sink(e));
                }
            }
            let (stages, score_dim, join) = (self.stages, self.score_dim, self.has_join);
            if let Some(snapshot) = self.assembler.take(t, stages, score_dim, join, 1) {
                let result =
                    snapshot
                        .map_err(RunError::from)
                        .and_then(|s| match shared.sink.as_mut() {
                            Some(sink) => sink.snapshot(s).map_err(RunError::from),
                            None => Ok(()),
                        });
                if let Err(e) = result {
                    shared.error.get_or_insert(e);
                }
            }
        }
    }
}

/// Runs a model on a stamped stream on `options.workers` timely worker threads.
///
/// Worker `index` of `peers` calls `build(index, peers)` and keeps its block of the chain
/// it returns: the chain must be the same on every worker (built from seeds, as the
/// boosters are, or restored from the same snapshot) at least in the worker's own block
/// and the terminal, and of the same shape elsewhere (a worker may get placeholders for
/// the stages it does not run, which the dataflow drops). On worker 0, `items()` is the
/// source (a timely operator: the items at their epochs, a bounded number of epochs
/// ahead of the terminal), and the sink that `sink()`
/// makes gets every prediction, with its event, in order, and every snapshot; with
/// `feedback`, the feedback join runs on every worker. Returns what the sink's `finish`
/// returns, or the first error: of the source (`items()` or an item:
/// [`RunError::Source`]), of the sink ([`RunError::Sink`]), of `build`
/// ([`RunError::Build`]), of a snapshot, or of a worker.
///
/// ```
/// use flowboost_operators::boosters::{Algorithm, BoosterConfig, build};
/// use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
/// use flowboost_operators::dataflow::{DataflowOptions, run_dataflow};
/// use flowboost_operators::engine::{
///     EpochRule, Input, Item, Prediction, PredictionSink, Sequencer, SinkError, SourceError,
///     SourceState,
/// };
/// use std::sync::Arc;
///
/// struct Count(u64);
/// impl PredictionSink for Count {
///     type Output = u64;
///     fn accept(&mut self, _p: Prediction, _ex: Arc<Example>) -> Result<(), SinkError> {
///         self.0 += 1;
///         Ok(())
///     }
///     fn finish(self) -> u64 {
///         self.0
///     }
/// }
///
/// let schema = Schema {
///     attributes: vec![Attribute::numeric("x")],
///     labels: vec!["no".into(), "yes".into()],
///     task: Task::Binary,
/// };
/// let config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 7);
/// # use flowboost_operators::learners::WeakKind;
/// let options = DataflowOptions { workers: 2, ..DataflowOptions::default() };
/// let items = || {
///     let mut sequencer = Sequencer::new(EpochRule::default(), SourceState::default());
///     (0..100u64).map(move |i| {
///         let label = Some(Label::Class((i % 2) as u32));
///         let example = Arc::new(Example { id: i, features: Features::Dense(vec![(i % 2) as f64]), label });
///         Ok::<_, SourceError>(sequencer.stamp(Input::Event { example, wait: false, model: 0 }))
///     })
/// };
/// let count = run_dataflow(
///     &options,
///     move |_worker, _peers| build(&schema, &config),
///     move || Ok(items()),
///     || Count(0),
///     None,
/// )
/// .unwrap();
/// assert_eq!(count, 100);
/// ```
pub fn run_dataflow<S, B, E, Src, I, X, KF, K>(
    options: &DataflowOptions,
    build: B,
    items: Src,
    sink: KF,
    feedback: Option<FeedbackSetup>,
) -> Result<K::Output, RunError>
where
    S: Stage + Serialize + 'static,
    B: Fn(usize, usize) -> Result<Chain<S>, E> + Send + Sync + 'static,
    E: Into<BoxError>,
    Src: Fn() -> Result<I, SourceError> + Send + Sync + 'static,
    I: Iterator<Item = Result<Item, X>> + 'static,
    X: Into<SourceError> + 'static,
    KF: Fn() -> K + Send + Sync + 'static,
    K: PredictionSink + 'static,
    K::Output: Send + 'static,
{
    if options.workers == 0 {
        return Err(RunError::NoWorkers);
    }
    let config = timely::Config::process(options.workers);
    let options = options.clone();
    let guards = timely::execute(config, move |worker| -> Outcome<K::Output> {
        let index = worker.index();
        let peers = worker.peers();
        let chain = match build(index, peers) {
            Ok(b) => b,
            Err(e) => return Some(Err(RunError::Build(e.into()))),
        };
        let n = chain.stages.len();
        let score_dim = chain.score_dim;
        let source_items = if index == 0 {
            match items() {
                Ok(it) => Some(it),
                Err(e) => return Some(Err(RunError::Source(e))),
            }
        } else {
            None
        };
        let shared = Rc::new(RefCell::new(Shared {
            error: None,
            sink: (index == 0).then(&sink),
            join_counts: None,
        }));
        let probe = ProbeHandle::new();
        let restored_counts = feedback
            .as_ref()
            .and_then(|f| f.restored.as_ref())
            .map(|s| s.counts)
            .unwrap_or_default();
        worker.dataflow::<u64, _, _>(|scope| {
            let items = item_source(scope, source_items, probe.clone(), &options, shared.clone());
            let streams = pipeline(items.clone(), index, peers, vec![chain], feedback.clone());
            let outputs = streams.outputs.probe_with(&probe);
            prediction_sink(
                outputs,
                items,
                streams.join,
                shared.clone(),
                n,
                score_dim,
                restored_counts,
            );
        });
        while worker.step_or_park(None) {}
        (index == 0).then(|| finish(&mut shared.borrow_mut()))?
    })
    .map_err(RunError::Start)?;
    let mut out = None;
    for r in guards.join() {
        match r {
            Ok(Some(v)) => out = Some(v),
            Ok(None) => {}
            Err(e) => return Err(RunError::Worker(e)),
        }
    }
    out.unwrap_or(Err(RunError::NoResult))
}

/// Worker 0's result once the dataflow is done: the first error, or what its sink's
/// `finish` returns (after the join's final counts); `None` without a sink.
fn finish<K: PredictionSink>(shared: &mut Shared<K>) -> Outcome<K::Output> {
    if let Some(e) = shared.error.take() {
        return Some(Err(e));
    }
    let mut sink = shared.sink.take()?;
    if let Some(counts) = shared.join_counts.take() {
        sink.join_counts(counts);
    }
    Some(Ok(sink.finish()))
}
