//! Online linear learner. PLACEHOLDER: being written.
use crate::data::{Features, Schema};
use serde::{Deserialize, Serialize};

/// Linear learner parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearConfig {
    /// Base learning rate.
    pub learning_rate: f64,
}

/// An online linear learner.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinearLearner {
    k: usize,
}

impl LinearLearner {
    /// A new learner.
    pub fn new(schema: &Schema, _config: LinearConfig, _seed: u64) -> Self {
        LinearLearner { k: schema.num_labels() }
    }
}

impl super::WeakLearner for LinearLearner {
    fn num_labels(&self) -> usize {
        self.k
    }
    fn predict(&self, _x: &Features, out: &mut [f64]) {
        out.fill(1.0 / self.k as f64);
    }
    fn learn(&mut self, _x: &Features, _label: u32, _weight: f64) {}
}
