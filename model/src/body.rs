use super::Scorer;
use flowboost_operators::engine::feedback::JoinState;
use flowboost_operators::engine::{KeyChainState, OracleKind, Position, SourceState, Terminal};
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
    /// With one model per key (the header's `keys`, format 6): the models of the keys
    /// after the first, in the header's order (the first key's model is the fields above,
    /// the join and the source are shared); empty for a model without keys.
    pub keyed: Vec<KeyModel>,
    /// With one model per key: each key's predictions and progressive metrics, in the
    /// header's order (so that a resumed job's per-key metrics cover the whole stream).
    pub key_progress: Vec<Progress>,
}

/// One more key's model in a file of a job with one model per key: its chain.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KeyModel {
    /// The stages, in chain order.
    pub stages: Vec<StageBytes>,
    /// The terminal.
    pub terminal: Terminal,
    /// Where this key's chain stands.
    pub position: Position,
}

impl From<KeyChainState> for KeyModel {
    fn from(k: KeyChainState) -> Self {
        KeyModel {
            stages: k.stages.into_iter().map(StageBytes).collect(),
            terminal: k.terminal,
            position: k.position,
        }
    }
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
