use serde::{Deserialize, Serialize};

/// What the terminal emits for one record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The record's sequence number.
    pub seq: u64,
    /// The example id.
    pub id: u64,
    /// The predicted class (binary: 1 positive, 0 negative); for multi-label, the top label.
    pub class: u32,
    /// The predicted label set (multi-label only; sorted).
    pub labels: Vec<u32>,
    /// The chosen expert's scores (one margin for the binary boosters, `k` values otherwise).
    pub scores: Vec<f64>,
    /// The chosen expert, 1-based (expert `i` combines the first `i` weak learners).
    pub expert: u32,
    /// The model's version when it predicted: the records it had learned from.
    pub version: u64,
    /// Top-k boosters: the booster's own top-k labels (its ranking's first `k`).
    pub top: Vec<u32>,
    /// Top-k boosters: the labels shown, in display order (the top-k of the randomized
    /// ranking); their relevance is the feedback.
    pub shown: Vec<u32>,
}

/// What the terminal emits for one event: its prediction, the event, and whether the
/// event waits for its feedback (predicted with its label unknown or held back).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Emitted {
    /// The prediction.
    pub prediction: Prediction,
    /// The event.
    pub example: std::sync::Arc<crate::data::Example>,
    /// Whether the event waits for its feedback.
    pub waits: bool,
    /// Which of the job's models predicted (see [`InFlight::model`](super::InFlight)).
    pub model: u32,
}

/// What leaves the terminal: a prediction, or a snapshot marker with the chain's state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ChainOutput {
    /// A prediction.
    Prediction(Emitted),
    /// The chain's state at a snapshot marker.
    Snapshot(Box<super::ChainParts>),
}
