use crate::data::{Example, Label};
use crate::topk::PairFeedback;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A record in flight through the stage chain.
///
/// The example is shared (an `Arc`), not copied per stage. `scores` is the running vote
/// `s^i = sum_{j<=i} alpha^j h^j` after the stages visited so far (one value for the binary
/// boosters' margin scale, `k` values otherwise). `trail` holds what the terminal needs to
/// choose among experts: with Hedge, each stage appends its expert's score vector `s^i`.
///
/// What a stage learns from: the example's label when it has one (immediate labels, or a
/// delayed label joined to the example), or `pairs` (top-k feedback); neither: predict only.
/// A record with `emit == false` is a learning pass for an event predicted earlier: the
/// stages recompute their votes and learn, the terminal updates Hedge, nothing is emitted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InFlight {
    /// The global sequence number: records are processed in this order by every stage.
    pub seq: u64,
    /// Which of the job's models the record belongs to (the index of its key with one
    /// model per key; 0 otherwise).
    pub model: u32,
    /// The example (features, id, label if known).
    pub example: Arc<Example>,
    /// The running score vector.
    pub scores: Vec<f64>,
    /// A booster-specific value carried from stage to stage (Oza's Poisson rate lambda).
    pub carry: f64,
    /// Whether the stages still to come add nothing to `scores` (MOA's vote rule for Oza
    /// stops at the first stage of weight 0, see `OzaVotes::Moa`).
    pub votes_closed: bool,
    /// Each visited stage's expert scores, concatenated (empty unless Hedge needs them).
    pub trail: Vec<f64>,
    /// Top-k feedback for this event (the observed pairs and their weights), if any.
    pub pairs: Option<Arc<PairFeedback>>,
    /// Whether the terminal emits a prediction for this record.
    pub emit: bool,
    /// Whether the stages must not see the example's label (a prediction pass whose
    /// feedback comes later, or a learning pass from top-k feedback only).
    pub hide_label: bool,
    /// How many records the model had learned from when this one reached the chain (set
    /// by the first stage: the prediction's model version).
    pub version: u64,
    /// A snapshot marker rather than a record: the stages and the terminal do not process
    /// it; each adds its state to it when it reaches them (it comes last in its
    /// timestamp), so it leaves the chain with the whole chain's state at that point.
    pub snapshot: Option<Box<ChainParts>>,
}

/// The chain's state as a snapshot marker gathers it on its way: each stage serialized by
/// the block that holds it, the position (from the first block), the terminal.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ChainParts {
    /// The stages, by index in the chain, serialized with [`encode`](super::encode).
    pub stages: std::collections::BTreeMap<usize, Vec<u8>>,
    /// The position, as the first block counted it.
    pub position: Option<super::Position>,
    /// The terminal.
    pub terminal: Option<super::Terminal>,
    /// The first error met serializing.
    pub error: Option<String>,
    /// The model (one per key) whose chain this is (set by the terminal).
    pub model: u32,
}

/// Why the parts a snapshot marker gathered do not make a chain's state
/// ([`ChainParts::complete`]).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// A block could not serialize a stage (the message it recorded).
    #[error("{0}")]
    Stage(String),
    /// Not every stage is in.
    #[error("a snapshot is incomplete: {found} of {expected} stages")]
    MissingStages {
        /// The stages in.
        found: usize,
        /// The chain's stages.
        expected: usize,
    },
    /// The terminal's state is missing.
    #[error("a snapshot is incomplete: no terminal")]
    NoTerminal,
    /// The position is missing.
    #[error("a snapshot is incomplete: no position")]
    NoPosition,
    /// The chain states gathered are not those of every model (one per key).
    #[error(
        "the snapshot after epoch {epoch} has the chain states of models {found:?}, not of the {models} model(s)"
    )]
    Models {
        /// The snapshot's epoch.
        epoch: u64,
        /// The models whose chain states came, in order.
        found: Vec<u32>,
        /// The number of models.
        models: usize,
    },
}

impl ChainParts {
    /// The stages in order and the terminal, once all `n` stages are in.
    ///
    /// ```
    /// use flowboost_operators::engine::{ChainParts, SnapshotError};
    ///
    /// let err = ChainParts::default().complete(2).unwrap_err();
    /// assert_eq!(err, SnapshotError::MissingStages { found: 0, expected: 2 });
    /// assert_eq!(err.to_string(), "a snapshot is incomplete: 0 of 2 stages");
    /// ```
    pub fn complete(
        self,
        n: usize,
    ) -> Result<(Vec<Vec<u8>>, super::Terminal, super::Position), SnapshotError> {
        if let Some(e) = self.error {
            return Err(SnapshotError::Stage(e));
        }
        if self.stages.len() != n || self.stages.keys().copied().ne(0..n) {
            return Err(SnapshotError::MissingStages {
                found: self.stages.len(),
                expected: n,
            });
        }
        let terminal = self.terminal.ok_or(SnapshotError::NoTerminal)?;
        let position = self.position.ok_or(SnapshotError::NoPosition)?;
        Ok((self.stages.into_values().collect(), terminal, position))
    }
}

impl InFlight {
    /// A fresh record with `score_dim` zero scores.
    pub fn new(seq: u64, example: Arc<Example>, score_dim: usize) -> Self {
        InFlight {
            seq,
            model: 0,
            example,
            scores: vec![0.0; score_dim],
            carry: 1.0,
            votes_closed: false,
            trail: Vec::new(),
            pairs: None,
            emit: true,
            hide_label: false,
            version: 0,
            snapshot: None,
        }
    }

    /// A snapshot marker that follows record `seq` (see [`InFlight::snapshot`]).
    pub fn marker(seq: u64) -> Self {
        let example = Arc::new(Example {
            id: u64::MAX,
            features: crate::data::Features::Dense(Vec::new()),
            label: None,
        });
        InFlight {
            emit: false,
            hide_label: true,
            snapshot: Some(Box::default()),
            ..InFlight::new(seq, example, 0)
        }
    }

    /// The order of records within a timestamp: learning passes (of pairs that formed
    /// earlier) first, then the new records, each by sequence number; a snapshot marker
    /// after the record it follows.
    pub fn order(&self) -> (bool, bool, u64) {
        let marker = self.is_marker();
        (marker, !marker && self.emit, self.seq)
    }

    /// Whether the stages may learn from this record (a label they see, or top-k
    /// feedback).
    pub fn learns(&self) -> bool {
        !self.is_marker() && (self.pairs.is_some() || self.label().is_some())
    }

    /// Whether this is a snapshot marker.
    pub fn is_marker(&self) -> bool {
        self.snapshot.is_some()
    }

    /// A prediction pass that learns nothing: the label, if the example has one, is hidden
    /// from the stages (its feedback comes later).
    pub fn predict_only(seq: u64, example: Arc<Example>, score_dim: usize) -> Self {
        InFlight {
            hide_label: true,
            ..InFlight::new(seq, example, score_dim)
        }
    }

    /// The label the stages may learn from: the example's, unless hidden.
    #[inline]
    pub fn label(&self) -> Option<&Label> {
        if self.hide_label {
            None
        } else {
            self.example.label.as_ref()
        }
    }

    /// A learning pass (nothing emitted) for an event predicted earlier: `example` carries
    /// the delayed label, or `pairs` the top-k feedback (and then the example's label, if
    /// any, stays hidden).
    pub fn learn(
        seq: u64,
        example: Arc<Example>,
        pairs: Option<Arc<PairFeedback>>,
        score_dim: usize,
    ) -> Self {
        InFlight {
            hide_label: pairs.is_some(),
            pairs,
            emit: false,
            ..InFlight::new(seq, example, score_dim)
        }
    }
}
