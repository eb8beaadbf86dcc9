use crate::eval::Scorer;
use flowboost_operators::engine::{FeedbackLoop, PendingEvents, Position, Terminal};
use serde::{Deserialize, Serialize};

/// One stage, serialized where it lived (postcard bytes of an
/// [`AnyStage`](flowboost_operators::boosters::AnyStage)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageBytes(#[serde(with = "serde_bytes")] pub Vec<u8>);

/// The progressive metrics of a run, so that a resumed run reports over the whole stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Progress {
    /// Predictions the run's sink has taken.
    pub seen: u64,
    /// The metrics over the scored ones.
    pub scorer: Scorer,
}

/// The state of a model: everything that shapes its future predictions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelBody {
    /// The stages, in chain order.
    pub stages: Vec<StageBytes>,
    /// The terminal (Hedge weights, the label-set rule, the top-k exploration's generator).
    pub terminal: Terminal,
    /// The number of values in a record's score vector.
    pub score_dim: usize,
    /// Where the stream stood.
    pub position: Position,
    /// An evaluation's delayed-feedback loop (pending events and what is due when).
    pub feedback: Option<FeedbackLoop>,
    /// A service's events waiting for feedback (the Kafka job's and the library's join).
    pub pending: Option<PendingEvents>,
    /// The progressive metrics.
    pub progress: Option<Progress>,
}
