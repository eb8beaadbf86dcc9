//! The engine that runs a model on a stream: the sequential runner (the reference) or the
//! timely dataflow, driven the same way for every command.

use flowboost_operators::boosters::Booster;
use flowboost_operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost_operators::engine::{
    BoxError, EpochRule, FeedbackSetup, Item, PredictionSink, RunError, SourceError,
};

/// Which engine runs the stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The plain loop (the reference).
    Sequential,
    /// Timely dataflow, stages in contiguous blocks across the workers.
    Dataflow(DataflowOptions),
}

impl Engine {
    /// `sequential` or `dataflow`.
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Sequential => "sequential",
            Engine::Dataflow(_) => "dataflow",
        }
    }

    /// The number of workers (1 for the sequential engine).
    pub fn workers(&self) -> usize {
        match self {
            Engine::Sequential => 1,
            Engine::Dataflow(o) => o.workers,
        }
    }

    /// Runs the model that `build(worker, peers)` makes (see [`run_dataflow`]; the
    /// sequential engine is worker 0 of 1) on the stamped stream that `items` makes,
    /// handing predictions and snapshots to the sink that `sink` makes, with the feedback
    /// join when `feedback` is given. Both engines give the same result, and stop at the
    /// same first error of the source, the sink or `build`.
    pub fn run<K, KF, I, X, E, Src>(
        &self,
        build: impl Fn(usize, usize) -> Result<Booster, E> + Send + Sync + 'static,
        items: Src,
        sink: KF,
        feedback: Option<FeedbackSetup>,
    ) -> Result<K::Output, RunError>
    where
        K: PredictionSink + 'static,
        K::Output: Send + 'static,
        KF: Fn() -> K + Send + Sync + 'static,
        I: Iterator<Item = Result<Item, X>> + 'static,
        X: Into<SourceError> + 'static,
        E: Into<BoxError>,
        Src: Fn() -> Result<I, SourceError> + Send + Sync + 'static,
    {
        match self {
            Engine::Sequential => build(0, 1)
                .map_err(|e| RunError::Build(e.into()))?
                .into_sequential()
                .run_items(items()?, sink(), feedback),
            Engine::Dataflow(options) => run_dataflow(options, build, items, sink, feedback),
        }
    }
}

/// Feedback after the predictions in an evaluation: how many events later it comes, and
/// how long the join keeps what waits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedbackOptions {
    /// The feedback of an event comes after the event `delay` events later (0: right
    /// after its own).
    pub delay: u64,
    /// An event or feedback record waits at most this many epochs in the join (`None`:
    /// until the end).
    pub ttl: Option<u64>,
}

/// The join's time-to-live a run with delayed feedback uses when none is given (`eval`,
/// `replay-clicks`): twice the most epochs that can pass between an event and its
/// feedback record, so that no feedback is late,
/// while the join forgets what it keeps of joined events (the markers that tell a
/// repeated record from an unmatched one) after that many epochs: its memory is bounded by
/// the attribution window, not by the length of the log.
///
/// Between an event and its feedback record, `delay` D later events and at most
/// D feedback records enter (2D + 1 inputs with the record itself), so at most
/// (2D + 1) / `epoch_size` + 1 epochs end by size; without `batch_feedback` each of the D
/// feedback records also ends one.
///
/// ```
/// use flowboost::eval::default_pending_ttl;
/// // One epoch per feedback record: D = 1000 records, plus 2001 / 256 + 1 = 8 by size.
/// assert_eq!(default_pending_ttl(1000, 256, false), 2 * 1008);
/// // Feedback learned at the end of its epoch: epochs of 256 inputs only.
/// assert_eq!(default_pending_ttl(1000, 256, true), 2 * 8);
/// assert_eq!(default_pending_ttl(0, 256, false), 2);
/// ```
pub fn default_pending_ttl(delay: u64, epoch_size: usize, batch_feedback: bool) -> u64 {
    let size = epoch_size.max(1) as u64;
    let inputs = delay.saturating_mul(2).saturating_add(1);
    let by_size = inputs / size + 1;
    let by_records = if batch_feedback { 0 } else { delay };
    by_records.saturating_add(by_size).saturating_mul(2)
}

/// The epochs of a run: `size` inputs each, and, when the run has feedback, one ends after
/// every feedback record (so its learning pass comes right after it, as the papers'
/// protocols have it).
pub fn epoch_rule(size: usize, feedback: bool) -> EpochRule {
    EpochRule {
        size: size.max(1),
        feedback_closes: feedback,
    }
}
