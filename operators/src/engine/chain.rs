use super::{Position, SequentialRunner, Stage, Terminal};
use serde::Serialize;

/// A chain of stages and its terminal, ready to run on either engine: freshly built (see
/// [`build`](crate::boosters::build)) or restored from a snapshot, with the position its
/// stream continues from.
#[derive(Clone, Debug)]
pub struct Chain<S> {
    /// The stages, in chain order.
    pub stages: Vec<S>,
    /// The terminal.
    pub terminal: Terminal,
    /// The number of values in a record's score vector.
    pub score_dim: usize,
    /// Where the chain's stream stands (zero for a fresh chain).
    pub position: Position,
}

impl<S: Stage + Serialize> Chain<S> {
    /// The sequential runner over this chain.
    pub fn into_sequential(self) -> SequentialRunner<S> {
        SequentialRunner::from_chain(self)
    }
}
