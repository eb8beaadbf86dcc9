use crate::eval::Scorer;
use flowboost_operators::engine::{OracleKind, Position, SourceState, Terminal};
use flowboost_operators::join::JoinState;
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
    /// The feedback join's state: the events and feedback waiting, the learning passes
    /// still to come, the counts.
    pub join: Option<JoinState>,
    /// Where the source stood: positions, epoch, an evaluation's feedback still owed.
    pub source: Option<SourceState>,
    /// How an evaluation made its feedback (a resumed run must make it the same way).
    pub feedback_run: Option<FeedbackRun>,
    /// The progressive metrics.
    pub progress: Option<Progress>,
}

/// How an evaluation made its delayed feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackRun {
    /// Events between an event and its feedback.
    pub delay: u64,
    /// The join's time-to-live, in epochs.
    pub ttl: Option<u64>,
    /// What the feedback is.
    pub oracle: OracleKind,
}
