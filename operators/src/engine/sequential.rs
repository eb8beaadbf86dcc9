use super::{InFlight, Prediction, Stage, Terminal};
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
        let mut rec = InFlight::new(self.next_seq, example, self.score_dim);
        self.next_seq += 1;
        for stage in &mut self.stages {
            stage.process(&mut rec);
        }
        self.terminal.finish(&rec, out);
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
