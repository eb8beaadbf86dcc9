use super::{
    Chain, ChainSnapshot, FeedbackLoop, InFlight, Position, Prediction, PredictionSink,
    SnapshotPolicy, Stage, Terminal, encode,
};
use crate::data::Example;
use serde::Serialize;
use std::sync::Arc;

/// Runs a chain of stages and the terminal in a plain loop, one record at a time.
///
/// This is the reference engine: the dataflow engine runs the same stages and must give
/// bit-identical predictions (and snapshots).
#[derive(Clone, Debug)]
pub struct SequentialRunner<S> {
    stages: Vec<S>,
    terminal: Terminal,
    score_dim: usize,
    position: Position,
    snapshots: SnapshotPolicy,
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
        }
    }

    /// A runner over `chain`, continuing from its position.
    pub fn from_chain(chain: Chain<S>) -> Self {
        SequentialRunner {
            position: chain.position,
            ..SequentialRunner::new(chain.stages, chain.terminal, chain.score_dim)
        }
    }

    /// Takes snapshots while running (handed to the sink's
    /// [`snapshot`](PredictionSink::snapshot)).
    pub fn with_snapshots(mut self, policy: SnapshotPolicy) -> Self {
        self.snapshots = policy;
        self
    }

    /// Predicts `example` (and learns from it when it is labeled), writing the prediction
    /// into `out`.
    pub fn process(&mut self, example: Arc<Example>, out: &mut Prediction) {
        let rec = InFlight::new(self.position.seq, example, self.score_dim);
        self.process_record(rec, out);
    }

    /// Runs one record (its `seq` is replaced by the runner's next sequence number) through
    /// the chain; returns whether the terminal wrote a prediction into `out`.
    pub fn process_record(&mut self, mut rec: InFlight, out: &mut Prediction) -> bool {
        rec.seq = self.position.seq;
        self.position.seq += 1;
        self.position.events += u64::from(rec.emit);
        self.position.learned += u64::from(rec.learns());
        for stage in &mut self.stages {
            stage.process(&mut rec);
        }
        self.terminal.finish(&rec, out)
    }

    /// The number of values in a record's score vector.
    pub fn score_dim(&self) -> usize {
        self.score_dim
    }

    /// Where the stream stands.
    pub fn position(&self) -> Position {
        self.position
    }

    /// Runs every example of `source` through the chain, in order, handing each prediction
    /// to `sink`; stops at the first error of the source or the sink.
    pub fn run<I, K>(&mut self, source: I, sink: K) -> Result<K::Output, String>
    where
        I: IntoIterator<Item = Result<Example, String>>,
        K: PredictionSink,
    {
        self.drive(source, sink, None)
    }

    /// [`run`](Self::run) with feedback after the predictions: every event is predicted
    /// with its label hidden, and learned from when `feedback` says its feedback is due.
    pub fn run_with_feedback<I, K>(
        &mut self,
        source: I,
        sink: K,
        feedback: &mut FeedbackLoop,
    ) -> Result<K::Output, String>
    where
        I: IntoIterator<Item = Result<Example, String>>,
        K: PredictionSink,
    {
        self.drive(source, sink, Some(feedback))
    }

    fn drive<I, K>(
        &mut self,
        source: I,
        mut sink: K,
        mut feedback: Option<&mut FeedbackLoop>,
    ) -> Result<K::Output, String>
    where
        I: IntoIterator<Item = Result<Example, String>>,
        K: PredictionSink,
    {
        let dim = self.score_dim;
        let mut learn_out = Prediction::default();
        for ex in source {
            let ex = Arc::new(ex?);
            let rec = match feedback.as_deref_mut() {
                Some(f) => f.admit(ex.clone(), dim),
                None => InFlight::new(0, ex.clone(), dim),
            };
            let mut out = Prediction::default();
            if self.process_record(rec, &mut out) {
                if let Some(f) = feedback.as_deref_mut() {
                    f.on_prediction(&out);
                }
                sink.accept(out, ex)?;
            }
            if let Some(f) = feedback.as_deref_mut() {
                self.learn_due(f, false, &mut learn_out);
            }
            if self.snapshots.due(self.position.events) {
                sink.snapshot(self.snapshot(feedback.as_deref())?)?;
            }
        }
        if let Some(f) = feedback.as_deref_mut() {
            self.learn_due(f, true, &mut learn_out);
            sink.feedback_counters(f.counters());
        }
        if self.snapshots.at_end {
            sink.snapshot(self.snapshot(feedback.as_deref())?)?;
        }
        Ok(sink.finish())
    }

    /// The learning passes due now (all of them with `flush`).
    fn learn_due(&mut self, feedback: &mut FeedbackLoop, flush: bool, out: &mut Prediction) {
        while feedback.next_due(flush).is_some() {
            if let Some(rec) = feedback.pop_learn(self.score_dim) {
                self.process_record(rec, out);
            }
        }
    }

    /// The chain's state now, with `feedback`'s pending events.
    pub fn snapshot(&self, feedback: Option<&FeedbackLoop>) -> Result<ChainSnapshot, String> {
        Ok(ChainSnapshot {
            stages: self.stages.iter().map(encode).collect::<Result<_, _>>()?,
            terminal: self.terminal.clone(),
            score_dim: self.score_dim,
            position: self.position,
            feedback: feedback.cloned(),
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
