use super::{FeedbackLoop, InFlight, Prediction, PredictionSink, Stage, Terminal};
use crate::data::Example;
use std::sync::Arc;

/// Runs a chain of stages and the terminal in a plain loop, one record at a time.
///
/// This is the reference engine: the dataflow engine runs the same stages and must give
/// bit-identical predictions.
#[derive(Clone, Debug)]
pub struct SequentialRunner<S> {
    stages: Vec<S>,
    terminal: Terminal,
    score_dim: usize,
    next_seq: u64,
}

impl<S: Stage> SequentialRunner<S> {
    /// A runner over `stages` ending in `terminal`; records carry `score_dim` scores.
    pub fn new(stages: Vec<S>, terminal: Terminal, score_dim: usize) -> Self {
        SequentialRunner {
            stages,
            terminal,
            score_dim,
            next_seq: 0,
        }
    }

    /// Predicts `example` (and learns from it when it is labeled), writing the prediction
    /// into `out`.
    pub fn process(&mut self, example: Arc<Example>, out: &mut Prediction) {
        let rec = InFlight::new(self.next_seq, example, self.score_dim);
        self.process_record(rec, out);
    }

    /// Runs one record (its `seq` is replaced by the runner's next sequence number) through
    /// the chain; returns whether the terminal wrote a prediction into `out`.
    pub fn process_record(&mut self, mut rec: InFlight, out: &mut Prediction) -> bool {
        rec.seq = self.next_seq;
        self.next_seq += 1;
        for stage in &mut self.stages {
            stage.process(&mut rec);
        }
        self.terminal.finish(&rec, out)
    }

    /// The number of values in a record's score vector.
    pub fn score_dim(&self) -> usize {
        self.score_dim
    }

    /// Runs every example of `source` through the chain, in order, handing each prediction
    /// to `sink`; stops at the first error of the source or the sink.
    pub fn run<I, K>(&mut self, source: I, mut sink: K) -> Result<K::Output, String>
    where
        I: IntoIterator<Item = Result<Example, String>>,
        K: PredictionSink,
    {
        for ex in source {
            let ex = Arc::new(ex?);
            let mut out = Prediction::default();
            self.process(ex.clone(), &mut out);
            sink.accept(out, ex)?;
        }
        Ok(sink.finish())
    }

    /// [`run`](Self::run) with feedback after the predictions: every event is predicted
    /// with its label hidden, and learned from when `feedback` says its feedback is due.
    pub fn run_with_feedback<I, K>(
        &mut self,
        source: I,
        mut sink: K,
        feedback: &mut FeedbackLoop,
    ) -> Result<K::Output, String>
    where
        I: IntoIterator<Item = Result<Example, String>>,
        K: PredictionSink,
    {
        let dim = self.score_dim;
        let mut learn_out = Prediction::default();
        let mut learn_due = |runner: &mut Self, feedback: &mut FeedbackLoop, flush: bool| {
            while feedback.next_due(flush).is_some() {
                if let Some(rec) = feedback.pop_learn(dim) {
                    runner.process_record(rec, &mut learn_out);
                }
            }
        };
        for ex in source {
            let ex = Arc::new(ex?);
            let rec = feedback.admit(ex.clone(), dim);
            let mut out = Prediction::default();
            if self.process_record(rec, &mut out) {
                feedback.on_prediction(&out);
                sink.accept(out, ex)?;
            }
            learn_due(self, feedback, false);
        }
        learn_due(self, feedback, true);
        sink.feedback_counters(feedback.counters());
        Ok(sink.finish())
    }

    /// The stages.
    pub fn stages(&self) -> &[S] {
        &self.stages
    }

    /// The terminal.
    pub fn terminal(&self) -> &Terminal {
        &self.terminal
    }
}
