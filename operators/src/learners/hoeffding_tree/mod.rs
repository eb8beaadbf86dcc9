//! Hoeffding tree (VFDT). PLACEHOLDER: being written.
use crate::data::{Features, Schema};
use serde::{Deserialize, Serialize};

/// How a leaf predicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeafPrediction {
    /// The weighted class distribution at the leaf.
    MajorityClass,
    /// Naive Bayes or majority class, whichever has been more accurate at the leaf.
    NaiveBayesAdaptive,
}

/// Hoeffding tree parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HoeffdingTreeConfig {
    /// Weight seen at a leaf between split attempts.
    pub grace_period: f64,
}

/// A Hoeffding tree.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HoeffdingTree {
    k: usize,
}

impl HoeffdingTree {
    /// A new tree.
    pub fn new(schema: &Schema, _config: HoeffdingTreeConfig, _seed: u64) -> Self {
        HoeffdingTree { k: schema.num_labels() }
    }
}

impl super::WeakLearner for HoeffdingTree {
    fn num_labels(&self) -> usize {
        self.k
    }
    fn predict(&self, _x: &Features, out: &mut [f64]) {
        out.fill(1.0 / self.k as f64);
    }
    fn learn(&mut self, _x: &Features, _label: u32, _weight: f64) {}
}
