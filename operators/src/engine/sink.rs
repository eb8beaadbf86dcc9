use super::{Prediction, SinkError};
use crate::data::Example;
use std::sync::Arc;

/// Where predictions go: called on worker 0 for every prediction, in sequence order.
pub trait PredictionSink {
    /// What the sink returns at the end of a run.
    type Output;
    /// Takes one prediction with its example; an error stops the run (the runners return
    /// it as [`RunError::Sink`](super::RunError::Sink)).
    fn accept(&mut self, prediction: Prediction, example: Arc<Example>) -> Result<(), SinkError>;
    /// Receives the feedback join's counts before [`finish`](Self::finish), when the run
    /// had a join (the default ignores them).
    fn join_counts(&mut self, _counts: crate::engine::feedback::JoinCounts) {}
    /// Receives a snapshot of the chain, after every prediction up to it was accepted
    /// (see [`SnapshotPolicy`](super::SnapshotPolicy)); a sink adds its own state and
    /// writes it (the default ignores it); an error stops the run as
    /// [`accept`](Self::accept)'s does.
    fn snapshot(&mut self, _snapshot: super::ChainSnapshot) -> Result<(), SinkError> {
        Ok(())
    }
    /// Consumes the sink and returns its result.
    fn finish(self) -> Self::Output;
}
