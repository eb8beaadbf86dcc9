//! Weak learners: each predicts a distribution over the `k` labels and learns from
//! `(x, label, importance weight)`.

mod binary_relevance;
mod cost_sensitive;
pub mod hoeffding_tree;
mod label_vs_rest;
pub mod linear;
mod summary;

pub use binary_relevance::BinaryRelevance;
pub use hoeffding_tree::{HoeffdingTree, HoeffdingTreeConfig, LeafPrediction, SharedViews};
pub use label_vs_rest::{LabelVsRest, binary_schema};
pub use linear::{LinearConfig, LinearLearner};
pub use summary::{GridMemberSummary, LearnerSummary};

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
    /// [`predict`](Self::predict), sharing the example's view with the other trees the
    /// caller runs through `views` (the same result; a Hoeffding tree then need not build
    /// the view another tree built).
    #[inline]
    fn predict_in(&self, x: &Features, out: &mut [f64], views: &mut SharedViews) {
        let _ = views;
        self.predict(x, out);
    }
    /// [`learn`](Self::learn), sharing the example's view with the other trees the caller
    /// runs through `views` (the same result).
    #[inline]
    fn learn_in(&mut self, x: &Features, label: u32, weight: f64, views: &mut SharedViews) {
        let _ = views;
        self.learn(x, label, weight);
    }
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

crate::named_values!(WeakKind, "weak learner", Vfdt => "vfdt", Linear => "linear");

/// A weak learner of either kind, dispatched statically (and serializable for checkpoints).
// One per stage, never moved in a hot path: boxing the tree would add an indirection to
// every prediction and save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum WeakModel {
    /// A Hoeffding tree.
    Tree(HoeffdingTree),
    /// A linear learner.
    Linear(LinearLearner),
    /// A binary learner for one label, predicting over all labels.
    LabelVsRest(LabelVsRest),
    /// A multi-label learner (one binary learner per label) predicting a label set.
    BinaryRelevance(BinaryRelevance),
}

impl WeakModel {
    /// Calls `f` on every Hoeffding tree inside this learner.
    pub fn for_each_tree_mut(&mut self, f: &mut impl FnMut(&mut HoeffdingTree)) {
        match self {
            WeakModel::Tree(t) => f(t),
            WeakModel::Linear(_) => {}
            WeakModel::LabelVsRest(m) => m.inner_mut().for_each_tree_mut(f),
            WeakModel::BinaryRelevance(m) => {
                for inner in m.models_mut() {
                    inner.for_each_tree_mut(f);
                }
            }
        }
    }
}

impl WeakLearner for WeakModel {
    #[inline]
    fn num_labels(&self) -> usize {
        match self {
            WeakModel::Tree(t) => t.num_labels(),
            WeakModel::Linear(l) => l.num_labels(),
            WeakModel::LabelVsRest(m) => m.num_labels(),
            WeakModel::BinaryRelevance(m) => m.num_labels(),
        }
    }

    #[inline]
    fn predict(&self, x: &Features, out: &mut [f64]) {
        match self {
            WeakModel::Tree(t) => t.predict(x, out),
            WeakModel::Linear(l) => l.predict(x, out),
            WeakModel::LabelVsRest(m) => m.predict(x, out),
            WeakModel::BinaryRelevance(m) => m.predict(x, out),
        }
    }

    #[inline]
    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        match self {
            WeakModel::Tree(t) => t.learn(x, label, weight),
            WeakModel::Linear(l) => l.learn(x, label, weight),
            WeakModel::LabelVsRest(m) => m.learn(x, label, weight),
            WeakModel::BinaryRelevance(m) => m.learn(x, label, weight),
        }
    }

    #[inline]
    fn predict_in(&self, x: &Features, out: &mut [f64], views: &mut SharedViews) {
        match self {
            WeakModel::Tree(t) => t.predict_in(x, out, views),
            WeakModel::Linear(l) => l.predict(x, out),
            WeakModel::LabelVsRest(m) => m.predict_in(x, out, views),
            WeakModel::BinaryRelevance(m) => m.predict_in(x, out, views),
        }
    }

    #[inline]
    fn learn_in(&mut self, x: &Features, label: u32, weight: f64, views: &mut SharedViews) {
        match self {
            WeakModel::Tree(t) => t.learn_in(x, label, weight, views),
            WeakModel::Linear(l) => l.learn(x, label, weight),
            WeakModel::LabelVsRest(m) => m.learn_in(x, label, weight, views),
            WeakModel::BinaryRelevance(m) => m.learn_in(x, label, weight, views),
        }
    }
}
