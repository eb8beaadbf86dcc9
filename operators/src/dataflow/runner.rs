use super::pipeline;
use crate::data::Example;
use crate::engine::{
    Chain, ChainSnapshot, FeedbackLoop, InFlight, Position, Prediction, PredictionSink,
    SnapshotBoard, SnapshotPolicy, Stage,
};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{Input, Probe};

/// How to run a pipeline on timely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataflowOptions {
    /// The number of timely worker threads in this process.
    pub workers: usize,
    /// Records per timestamp (timestamps are coarse: one per batch, not one per record).
    pub batch: usize,
    /// How many timestamps the source may run ahead of the sink (bounds the memory in flight).
    pub max_batches_in_flight: u64,
    /// When to snapshot the chain (handed to the sink's
    /// [`snapshot`](PredictionSink::snapshot), as the sequential runner does).
    pub snapshots: SnapshotPolicy,
}

impl Default for DataflowOptions {
    fn default() -> Self {
        DataflowOptions {
            workers: 1,
            batch: 256,
            max_batches_in_flight: 8,
            snapshots: SnapshotPolicy::default(),
        }
    }
}

/// Worker 0's input side: the stream's position (sequence numbers, events, learned
/// records) and timestamps (one per `batch` records, or earlier when the feedback loop
/// must see a prediction before going on, or for a snapshot).
struct Feeder {
    position: Position,
    time: u64,
    in_batch: usize,
    batch: usize,
}

type InputSide = timely::dataflow::InputHandle<u64, CapacityContainerBuilder<Vec<InFlight>>>;

impl Feeder {
    /// Sends `rec` with the next sequence number; closes the timestamp when the batch is
    /// full (returns `true` then).
    fn send(&mut self, mut rec: InFlight, input: &mut InputSide) -> bool {
        rec.seq = self.position.seq;
        self.position.seq += 1;
        self.position.events += u64::from(rec.emit);
        self.position.learned += u64::from(rec.learns());
        input.send(rec);
        self.in_batch += 1;
        if self.in_batch >= self.batch {
            self.close(input);
            true
        } else {
            false
        }
    }

    /// Closes the current timestamp (if anything was sent in it).
    fn close(&mut self, input: &mut InputSide) {
        if self.in_batch > 0 {
            self.in_batch = 0;
            self.time += 1;
            input.advance_to(self.time);
        }
    }
}

/// A prediction with its example, as the terminal emits it.
type Emitted = (Prediction, Arc<Example>);

/// Runs a pipeline on `options.workers` timely worker threads.
///
/// Every worker calls `build` (it must return the same chain on every worker: build it
/// from seeds, as the boosters do, or restore it from the same snapshot) and keeps its
/// block. Worker 0 pulls examples from `source()`, stamps them with sequence numbers
/// (continuing the chain's position) and timestamps, and hands every prediction, with its
/// example, in sequence order, to the sink that `sink()` creates there. Returns what the
/// sink's `finish` returns.
///
/// ```
/// use flowboost_operators::boosters::{Algorithm, BoosterConfig, build};
/// use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
/// use flowboost_operators::dataflow::{DataflowOptions, run_dataflow};
/// use flowboost_operators::engine::{Prediction, PredictionSink};
/// use flowboost_operators::learners::WeakKind;
/// use std::sync::Arc;
///
/// struct Count(u64);
/// impl PredictionSink for Count {
///     type Output = u64;
///     fn accept(&mut self, _p: Prediction, _ex: Arc<Example>) -> Result<(), String> {
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
/// let options = DataflowOptions { workers: 2, ..DataflowOptions::default() };
/// let examples = |n: u64| {
///     (0..n).map(|i| {
///         let label = Some(Label::Class((i % 2) as u32));
///         Ok(Example { id: i, features: Features::Dense(vec![(i % 2) as f64]), label })
///     })
/// };
/// let count = run_dataflow(
///     &options,
///     move || build(&schema, &config),
///     move || Ok(examples(100)),
///     || Count(0),
/// )
/// .unwrap();
/// assert_eq!(count, 100);
/// ```
pub fn run_dataflow<S, B, E, Src, I, KF, K>(
    options: &DataflowOptions,
    build: B,
    source: Src,
    sink: KF,
) -> Result<K::Output, String>
where
    S: Stage + Serialize + 'static,
    B: Fn() -> Result<Chain<S>, E> + Send + Sync + 'static,
    E: std::fmt::Display,
    Src: Fn() -> Result<I, String> + Send + Sync + 'static,
    I: Iterator<Item = Result<Example, String>>,
    KF: Fn() -> K + Send + Sync + 'static,
    K: PredictionSink,
    K::Output: Send + 'static,
{
    run_dataflow_with_feedback(options, build, source, sink, || None)
}

/// [`run_dataflow`] with feedback after the predictions: `feedback()` (called on worker 0)
/// gives the [`FeedbackLoop`] (`None`: labels are learned right away). Every event is
/// predicted with its label hidden and learned from when its feedback is due, at the same
/// position of the record sequence as in [`SequentialRunner::run_with_feedback`](crate::engine::SequentialRunner::run_with_feedback)
/// (crate::engine::SequentialRunner): when a due event's prediction has not come out
/// yet, worker 0 closes the current timestamp and steps the dataflow until it has.
pub fn run_dataflow_with_feedback<S, B, E, Src, I, KF, K, FF>(
    options: &DataflowOptions,
    build: B,
    source: Src,
    sink: KF,
    feedback: FF,
) -> Result<K::Output, String>
where
    S: Stage + Serialize + 'static,
    B: Fn() -> Result<Chain<S>, E> + Send + Sync + 'static,
    E: std::fmt::Display,
    Src: Fn() -> Result<I, String> + Send + Sync + 'static,
    I: Iterator<Item = Result<Example, String>>,
    KF: Fn() -> K + Send + Sync + 'static,
    K: PredictionSink,
    K::Output: Send + 'static,
    FF: Fn() -> Option<FeedbackLoop> + Send + Sync + 'static,
{
    if options.workers == 0 {
        return Err("the number of workers must be at least 1".into());
    }
    let batch = options.batch.max(1);
    let lag = options.max_batches_in_flight.max(1);
    let snapshots = options.snapshots;
    let config = timely::Config::process(options.workers);
    let board = SnapshotBoard::default();
    let guards = timely::execute(config, move |worker| -> Option<Result<K::Output, String>> {
        let index = worker.index();
        let peers = worker.peers();
        let chain = match build() {
            Ok(b) => b,
            Err(e) => return Some(Err(e.to_string())),
        };
        let n = chain.stages.len();
        let score_dim = chain.score_dim;
        let start = chain.position;
        let outputs: Rc<RefCell<Vec<Emitted>>> = Rc::default();
        let (mut input, probe) = worker.dataflow::<u64, _, _>(|scope| {
            let (input, stream) = scope.new_input::<Vec<InFlight>>();
            let predictions = pipeline(
                stream,
                index,
                peers,
                chain.stages,
                chain.terminal,
                board.clone(),
            );
            let (probe, predictions) = predictions.probe();
            let outputs = outputs.clone();
            predictions.sink(Pipeline, "Predictions", move |(input, _frontier)| {
                input.for_each(|_time, data| outputs.borrow_mut().append(data));
            });
            (input, probe)
        });
        if index != 0 {
            drop(input);
            return None;
        }
        let mut sink = sink();
        let mut feedback = feedback();
        let drain = |sink: &mut K, feedback: &mut Option<FeedbackLoop>| -> Result<(), String> {
            for (p, ex) in outputs.borrow_mut().drain(..) {
                if let Some(f) = feedback.as_mut() {
                    f.on_prediction(&p);
                }
                sink.accept(p, ex)?;
            }
            Ok(())
        };
        let mut feeder = Feeder {
            position: start,
            time: 0,
            in_batch: 0,
            batch,
        };
        // A snapshot: a marker after the last record sent, then (the timestamp closed) the
        // dataflow stepped until the marker has passed the terminal and every prediction
        // before it is in the sink; the parts are on the board then.
        let snapshot = |worker: &mut timely::worker::Worker,
                        feeder: &mut Feeder,
                        input: &mut InputSide,
                        sink: &mut K,
                        feedback: &mut Option<FeedbackLoop>|
         -> Result<(), String> {
            input.send(InFlight::marker(feeder.position.seq));
            feeder.in_batch += 1;
            feeder.close(input);
            while probe.less_than(input.time()) {
                worker.step();
            }
            drain(sink, feedback)?;
            let (stages, terminal) = board.take(n)?;
            sink.snapshot(ChainSnapshot {
                stages,
                terminal,
                score_dim,
                position: feeder.position,
                feedback: feedback.clone(),
            })
        };
        let result = (|| -> Result<(), String> {
            let mut examples = source()?;
            let mut exhausted = false;
            loop {
                // The feedback due now, each learning pass at its position in the sequence.
                let flush = exhausted;
                while let Some(id) = feedback.as_ref().and_then(|f| f.next_due(flush)) {
                    if !feedback.as_ref().is_some_and(|f| f.ready(id)) {
                        // Release what was sent and wait for the due event's prediction.
                        feeder.close(&mut input);
                        drain(&mut sink, &mut feedback)?;
                        while !feedback.as_ref().is_some_and(|f| f.ready(id))
                            && probe.less_than(input.time())
                        {
                            worker.step();
                            drain(&mut sink, &mut feedback)?;
                        }
                        drain(&mut sink, &mut feedback)?;
                    }
                    let Some(f) = feedback.as_mut() else { break };
                    if let Some(rec) = f.pop_learn(score_dim) {
                        feeder.send(rec, &mut input);
                    }
                }
                if exhausted {
                    break;
                }
                // A snapshot is due once the previous event's feedback has been sent.
                if feeder.position.events > start.events && snapshots.due(feeder.position.events) {
                    snapshot(worker, &mut feeder, &mut input, &mut sink, &mut feedback)?;
                }
                let Some(ex) = examples.next() else {
                    exhausted = true;
                    continue;
                };
                let ex = Arc::new(ex?);
                let rec = match feedback.as_mut() {
                    Some(f) => f.admit(ex, score_dim),
                    None => InFlight::new(0, ex, score_dim),
                };
                if feeder.send(rec, &mut input) {
                    while probe.less_than(&feeder.time.saturating_sub(lag)) {
                        worker.step();
                    }
                    drain(&mut sink, &mut feedback)?;
                }
            }
            if snapshots.at_end {
                snapshot(worker, &mut feeder, &mut input, &mut sink, &mut feedback)?;
            }
            Ok(())
        })();
        drop(input);
        while worker.step_or_park(None) {}
        let result = result.and_then(|()| drain(&mut sink, &mut feedback));
        if let Some(f) = &feedback {
            sink.feedback_counters(f.counters());
        }
        Some(result.map(|()| sink.finish()))
    })?;
    let mut out = None;
    for r in guards.join() {
        match r {
            Ok(Some(v)) => out = Some(v),
            Ok(None) => {}
            Err(e) => return Err(format!("a worker failed: {e}")),
        }
    }
    out.unwrap_or_else(|| Err("worker 0 returned nothing".into()))
}
