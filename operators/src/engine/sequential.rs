use super::{
    Chain, ChainSnapshot, CodecError, InFlight, Input, Item, Position, Prediction, PredictionSink,
    RunError, SnapshotPolicy, SourceError, SourceState, Stage, Terminal, WAVEFRONT, encode,
    process_stage_major,
};
use crate::data::{Example, FeedbackItem};
use crate::engine::feedback::{
    JoinConfig, JoinReference, JoinState, Pairing, WaitingEvent, learning_pass,
};
use crate::learners::SharedViews;
use crate::topk::TopKConfig;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a run with feedback needs besides the chain: the join's rules, the top-k setting
/// (clicks become pairs with it) and the number of labels.
#[derive(Clone, Debug)]
pub struct FeedbackSetup {
    /// The join's time-to-live and loop delay.
    pub join: JoinConfig,
    /// The top-k setting of the booster (for click feedback).
    pub topk: TopKConfig,
    /// The number of labels.
    pub labels: usize,
    /// The join's state a resumed run starts from.
    pub restored: Option<Arc<JoinState>>,
}

/// Runs a chain of stages and the terminal in a plain loop.
///
/// This is the reference engine: the dataflow engine runs the same stages and must give
/// bit-identical predictions (and snapshots). [`process`](Self::process) and
/// [`run`](Self::run) take one record at a time through every stage. With feedback,
/// [`run_items`](Self::run_items) runs the merged sequence epoch by epoch as the dataflow
/// does: the learning passes due in an epoch first (by position), then the epoch's inputs
/// in order, then the feedback join's epoch ([`JoinReference`]); it takes the records of
/// an epoch through the stages stage by stage ([`process_stage_major`], up to
/// [`with_wavefront`](Self::with_wavefront) records at a time), as the dataflow's stage
/// blocks do, which gives the same as one at a time. Without a join or a snapshot due,
/// the records of consecutive epochs go through together, up to the wavefront.
#[derive(Clone, Debug)]
pub struct SequentialRunner<S> {
    stages: Vec<S>,
    terminal: Terminal,
    score_dim: usize,
    position: Position,
    snapshots: SnapshotPolicy,
    wavefront: usize,
    /// The view of the last example, which the trees share record by record
    /// ([`process_record`](Self::process_record)).
    views: SharedViews,
}

impl<S: Stage + Serialize> SequentialRunner<S> {
    /// A runner over `stages` ending in `terminal`; records carry `score_dim` scores.
    pub fn new(stages: Vec<S>, terminal: Terminal, score_dim: usize) -> Self {
        SequentialRunner {
            stages,
            terminal,
            score_dim,
            position: Position::default(),
            snapshots: SnapshotPolicy::default(),
            wavefront: WAVEFRONT,
            views: SharedViews::last(),
        }
    }

    /// A runner over `chain`, continuing from its position.
    pub fn from_chain(chain: Chain<S>) -> Self {
        SequentialRunner {
            position: chain.position,
            ..SequentialRunner::new(chain.stages, chain.terminal, chain.score_dim)
        }
    }

    /// Takes snapshots while running [`run`](Self::run) (handed to the sink's
    /// [`snapshot`](PredictionSink::snapshot)); [`run_items`](Self::run_items) takes them
    /// where its items say.
    pub fn with_snapshots(mut self, policy: SnapshotPolicy) -> Self {
        self.snapshots = policy;
        self
    }

    /// [`run_items`](Self::run_items) takes at most `records` records (at least 1) through
    /// the stages stage by stage before their predictions go to the sink (default
    /// [`WAVEFRONT`]); 1 runs one record at a time through every stage. The predictions
    /// are the same for any value.
    pub fn with_wavefront(mut self, records: usize) -> Self {
        self.wavefront = records.clamp(1, WAVEFRONT);
        self
    }

    /// Predicts `example` (and learns from it when it is labeled), writing the prediction
    /// into `out`; it takes the next position.
    pub fn process(&mut self, example: Arc<Example>, out: &mut Prediction) {
        let rec = InFlight::new(self.position.seq, example, self.score_dim);
        self.process_record(rec, out);
    }

    /// Runs one record through the chain (at its own position); returns whether the
    /// terminal wrote a prediction into `out`.
    pub fn process_record(&mut self, rec: InFlight, out: &mut Prediction) -> bool {
        let mut rec = rec;
        self.position.count(&mut rec);
        for stage in &mut self.stages {
            stage.process(&mut rec, &mut self.views);
        }
        self.terminal.finish(&rec, out)
    }

    /// Runs `records` (consecutive, in order, each at its own position) through the chain
    /// stage by stage ([`process_stage_major`]: each stage's state stays in the cache over
    /// the run), then each through the terminal: bit for bit what
    /// [`process_record`](Self::process_record) on each in turn gives. Returns each
    /// record's prediction (the default for a learning pass, which emits none).
    pub fn process_records(&mut self, mut records: Vec<InFlight>) -> Vec<Prediction> {
        for rec in &mut records {
            self.position.count(rec);
        }
        process_stage_major(&mut self.stages, &mut records);
        records
            .iter()
            .map(|rec| {
                let mut out = Prediction::default();
                self.terminal.finish(rec, &mut out);
                out
            })
            .collect()
    }

    /// The number of values in a record's score vector.
    pub fn score_dim(&self) -> usize {
        self.score_dim
    }

    /// Where the stream stands.
    pub fn position(&self) -> Position {
        self.position
    }

    /// Runs every example of `source` through the chain, in order (each predicted, then
    /// learned from if labeled), handing each prediction to `sink`; stops at the first
    /// error of the source or the sink. Snapshots follow the runner's
    /// [`SnapshotPolicy`].
    pub fn run<I, X, K>(&mut self, source: I, mut sink: K) -> Result<K::Output, RunError>
    where
        I: IntoIterator<Item = Result<Example, X>>,
        X: Into<SourceError>,
        K: PredictionSink,
    {
        for ex in source {
            let ex = Arc::new(ex.map_err(|e| RunError::Source(e.into()))?);
            let mut out = Prediction::default();
            self.process(ex.clone(), &mut out);
            sink.accept(out, ex)?;
            if self.snapshots.due(self.position.events) {
                sink.snapshot(self.snapshot(None, None)?)?;
            }
        }
        if self.snapshots.at_end {
            sink.snapshot(self.snapshot(None, None)?)?;
        }
        Ok(sink.finish())
    }

    /// Runs a stamped sequence (events, feedback, snapshot markers; see
    /// [`Sequencer`](super::Sequencer)) epoch by epoch, with the feedback join when
    /// `feedback` is given, handing every prediction to `sink` and every snapshot to its
    /// [`snapshot`](PredictionSink::snapshot). After the last item, the epochs that the
    /// join still has work in (learning passes, expiries) run too.
    pub fn run_items<I, X, K>(
        &mut self,
        items: I,
        mut sink: K,
        feedback: Option<FeedbackSetup>,
    ) -> Result<K::Output, RunError>
    where
        I: IntoIterator<Item = Result<Item, X>>,
        X: Into<SourceError>,
        K: PredictionSink,
    {
        let mut run = ItemRun::new(feedback);
        let mut current: Option<u64> = None;
        for item in items {
            let item = match item {
                Ok(item) => item,
                Err(e) => {
                    // What came before the error is predicted (and learned), as it came.
                    run.flush(self, &mut sink)?;
                    return Err(RunError::Source(e.into()));
                }
            };
            if current != Some(item.epoch) {
                if let Some(t) = current {
                    run.end_epoch(self, t, &mut sink)?;
                }
                // Epochs with only join work in between (nothing of the source).
                while let Some(e) = run.next_work().filter(|&e| e < item.epoch) {
                    run.start_epoch(self, e, &mut sink)?;
                    run.end_epoch(self, e, &mut sink)?;
                }
                run.start_epoch(self, item.epoch, &mut sink)?;
                current = Some(item.epoch);
            }
            run.item(self, item, &mut sink)?;
        }
        if let Some(t) = current {
            run.end_epoch(self, t, &mut sink)?;
        }
        while let Some(e) = run.next_work() {
            run.start_epoch(self, e, &mut sink)?;
            run.end_epoch(self, e, &mut sink)?;
        }
        run.flush(self, &mut sink)?;
        if let Some(j) = &run.join {
            sink.join_counts(j.counts());
        }
        Ok(sink.finish())
    }

    /// The chain's state now, with a join's and a source's state.
    pub fn snapshot(
        &self,
        join: Option<JoinState>,
        source: Option<SourceState>,
    ) -> Result<ChainSnapshot, CodecError> {
        Ok(ChainSnapshot {
            stages: self.stages.iter().map(encode).collect::<Result<_, _>>()?,
            terminal: self.terminal.clone(),
            score_dim: self.score_dim,
            position: self.position,
            join,
            source,
            keyed: Vec::new(),
        })
    }

    /// The stages.
    pub fn stages(&self) -> &[S] {
        &self.stages
    }

    /// The terminal.
    pub fn terminal(&self) -> &Terminal {
        &self.terminal
    }

    /// The chain, to run elsewhere or to save.
    pub fn into_chain(self) -> Chain<S> {
        Chain {
            stages: self.stages,
            terminal: self.terminal,
            score_dim: self.score_dim,
            position: self.position,
        }
    }
}

/// The state of one [`SequentialRunner::run_items`].
struct ItemRun {
    setup: Option<FeedbackSetup>,
    join: Option<JoinReference>,
    /// Learning passes by the epoch they enter the chain in.
    due: BTreeMap<u64, Vec<Pairing>>,
    waiting: Vec<WaitingEvent>,
    feedback: Vec<FeedbackItem>,
    snapshot: Option<SourceState>,
    /// The records taken (counted) but not yet run through the stages, in order, and
    /// what follows each one's pass through the terminal.
    records: Vec<InFlight>,
    then: Vec<Then>,
}

/// What follows a record's pass through the chain in [`SequentialRunner::run_items`].
enum Then {
    /// Nothing (a learning pass).
    Nothing,
    /// An event: its prediction goes to the sink, and to the join when the event waits
    /// for its feedback.
    Emit {
        example: Arc<Example>,
        waits: bool,
        seq: u64,
        epoch: u64,
    },
}

impl ItemRun {
    fn new(setup: Option<FeedbackSetup>) -> Self {
        let mut due: BTreeMap<u64, Vec<Pairing>> = BTreeMap::new();
        let join = setup.as_ref().map(|s| match &s.restored {
            Some(state) => {
                let j = JoinReference::restore(s.join, state);
                for (epoch, pair) in j.learning_due_after(state.epoch) {
                    due.entry(epoch).or_default().push(pair);
                }
                j
            }
            None => JoinReference::new(s.join),
        });
        ItemRun {
            setup,
            join,
            due,
            waiting: Vec::new(),
            feedback: Vec::new(),
            snapshot: None,
            records: Vec::new(),
            then: Vec::new(),
        }
    }

    /// Takes `rec` at the next position; runs the records taken when they fill the
    /// runner's wavefront.
    fn take<S: Stage + Serialize, K: PredictionSink>(
        &mut self,
        runner: &mut SequentialRunner<S>,
        mut rec: InFlight,
        then: Then,
        sink: &mut K,
    ) -> Result<(), RunError> {
        runner.position.count(&mut rec);
        self.records.push(rec);
        self.then.push(then);
        if self.records.len() >= runner.wavefront {
            self.flush(runner, sink)?;
        }
        Ok(())
    }

    /// Runs the records taken through the stages (stage by stage), then each through the
    /// terminal, in order, its prediction to the sink (and the join).
    fn flush<S: Stage + Serialize, K: PredictionSink>(
        &mut self,
        runner: &mut SequentialRunner<S>,
        sink: &mut K,
    ) -> Result<(), RunError> {
        process_stage_major(&mut runner.stages, &mut self.records);
        for (rec, then) in self.records.drain(..).zip(self.then.drain(..)) {
            let mut out = Prediction::default();
            let emitted = runner.terminal.finish(&rec, &mut out);
            if let Then::Emit {
                example,
                waits,
                seq,
                epoch,
            } = then
                && emitted
            {
                if waits && self.join.is_some() {
                    self.waiting.push(WaitingEvent {
                        seq,
                        epoch,
                        example: example.clone(),
                        prediction: out.clone(),
                        model: 0,
                    });
                }
                sink.accept(out, example)?;
            }
        }
        Ok(())
    }

    /// The next epoch the join has work in: a learning pass or a scheduled change.
    fn next_work(&self) -> Option<u64> {
        let due = self.due.keys().next().copied();
        let scheduled = self.join.as_ref().and_then(JoinReference::next_scheduled);
        match (due, scheduled) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The learning passes due in epoch `t`, in position order.
    fn start_epoch<S: Stage + Serialize, K: PredictionSink>(
        &mut self,
        runner: &mut SequentialRunner<S>,
        t: u64,
        sink: &mut K,
    ) -> Result<(), RunError> {
        let (Some(pairs), Some(setup)) = (self.due.remove(&t), &self.setup) else {
            return Ok(());
        };
        let passes: Vec<InFlight> = pairs
            .iter()
            .map(|p| learning_pass(p, &setup.topk, setup.labels, runner.score_dim))
            .collect();
        for rec in passes {
            self.take(runner, rec, Then::Nothing, sink)?;
        }
        Ok(())
    }

    fn item<S: Stage + Serialize, K: PredictionSink>(
        &mut self,
        runner: &mut SequentialRunner<S>,
        item: Item,
        sink: &mut K,
    ) -> Result<(), RunError> {
        let dim = runner.score_dim;
        match item.input {
            Input::Event { example, wait, .. } => {
                let waits = wait;
                let rec = if waits {
                    InFlight::predict_only(item.seq, example.clone(), dim)
                } else {
                    InFlight::new(item.seq, example.clone(), dim)
                };
                let then = Then::Emit {
                    example,
                    waits,
                    seq: item.seq,
                    epoch: item.epoch,
                };
                self.take(runner, rec, then, sink)?;
            }
            Input::Feedback { id, kind } => {
                if self.join.is_some() {
                    self.feedback.push(FeedbackItem {
                        seq: item.seq,
                        epoch: item.epoch,
                        id,
                        kind,
                    });
                }
            }
            Input::Snapshot(state) => self.snapshot = Some(*state),
            Input::Skipped => {}
        }
        Ok(())
    }

    fn end_epoch<S: Stage + Serialize, K: PredictionSink>(
        &mut self,
        runner: &mut SequentialRunner<S>,
        t: u64,
        sink: &mut K,
    ) -> Result<(), RunError> {
        // The join's epoch and a snapshot need the epoch's records through the chain;
        // without either, the records wait for the next epoch's until the wavefront is
        // full (an epoch of `--batch` records is often shorter than the wavefront).
        if self.join.is_some() || self.snapshot.is_some() {
            self.flush(runner, sink)?;
        }
        if let (Some(join), Some(setup)) = (self.join.as_mut(), &self.setup) {
            let waiting = std::mem::take(&mut self.waiting);
            let feedback = std::mem::take(&mut self.feedback);
            let pairs = join.epoch(t, waiting, feedback);
            if !pairs.is_empty() {
                self.due
                    .entry(t + setup.join.lag.max(1))
                    .or_default()
                    .extend(pairs);
            }
        }
        if let Some(source) = self.snapshot.take() {
            let join = self.join.as_ref().map(|j| j.state(t));
            sink.snapshot(runner.snapshot(join, Some(source))?)?;
        }
        Ok(())
    }
}
