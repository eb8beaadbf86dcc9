//! Weak learners: each predicts a distribution over the `k` labels and learns from
//! `(x, label, importance weight)`.

pub mod hoeffding_tree;
pub mod linear;

pub use hoeffding_tree::{HoeffdingTree, HoeffdingTreeConfig, LeafPrediction};
pub use linear::{LinearConfig, LinearLearner};

use crate::data::Features;
use serde::{Deserialize, Serialize};

/// The interface every weak learner offers to the boosters.
///
/// `predict` writes a probability distribution over the `k` labels (non-negative, summing
/// to 1) into `out`; `learn` takes one labeled example with an importance weight
/// (`weight >= 0`; a weight of 0 changes nothing). Implementations are deterministic for a
/// given seed and do not allocate per example.
pub trait WeakLearner {
    /// The number of labels `k`.
    fn num_labels(&self) -> usize;
    /// Writes the predicted distribution over the labels into `out` (`out.len() == k`).
    fn predict(&self, x: &Features, out: &mut [f64]);
    /// Learns from one example with the given importance weight.
    fn learn(&mut self, x: &Features, label: u32, weight: f64);
}

/// Which weak learner to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WeakKind {
    /// A Hoeffding tree (VFDT).
    Vfdt,
    /// An online linear learner (logistic or softmax).
    Linear,
}

impl WeakKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            WeakKind::Vfdt => "vfdt",
            WeakKind::Linear => "linear",
        }
    }
}

/// A weak learner of either kind, dispatched statically (and serializable for checkpoints).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum WeakModel {
    /// A Hoeffding tree.
    Tree(HoeffdingTree),
    /// A linear learner.
    Linear(LinearLearner),
}

impl WeakLearner for WeakModel {
    #[inline]
    fn num_labels(&self) -> usize {
        match self {
            WeakModel::Tree(t) => t.num_labels(),
            WeakModel::Linear(l) => l.num_labels(),
        }
    }

    #[inline]
    fn predict(&self, x: &Features, out: &mut [f64]) {
        match self {
            WeakModel::Tree(t) => t.predict(x, out),
            WeakModel::Linear(l) => l.predict(x, out),
        }
    }

    #[inline]
    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        match self {
            WeakModel::Tree(t) => t.learn(x, label, weight),
            WeakModel::Linear(l) => l.learn(x, label, weight),
        }
    }
}
