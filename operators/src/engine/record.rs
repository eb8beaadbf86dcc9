use crate::data::Example;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A record in flight through the stage chain.
///
/// The example is shared (an `Arc`), not copied per stage. `scores` is the running vote
/// `s^i = sum_{j<=i} alpha^j h^j` after the stages visited so far (one value for the binary
/// boosters' margin scale, `k` values otherwise). `trail` holds what the terminal needs to
/// choose among experts: with Hedge, each stage appends its expert's score vector `s^i`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InFlight {
    /// The global sequence number: records are processed in this order by every stage.
    pub seq: u64,
    /// The example (features, id, label if known).
    pub example: Arc<Example>,
    /// The running score vector.
    pub scores: Vec<f64>,
    /// A booster-specific value carried from stage to stage (Oza's Poisson rate lambda).
    pub carry: f64,
    /// Each visited stage's expert scores, concatenated (empty unless Hedge needs them).
    pub trail: Vec<f64>,
}

impl InFlight {
    /// A fresh record with `score_dim` zero scores.
    pub fn new(seq: u64, example: Arc<Example>, score_dim: usize) -> Self {
        InFlight {
            seq,
            example,
            scores: vec![0.0; score_dim],
            carry: 1.0,
            trail: Vec::new(),
        }
    }
}
