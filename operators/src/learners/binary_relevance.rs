//! A multi-label weak learner (binary relevance) that predicts a label set, in the
//! multi-label ranking paper's prediction format.

use super::{SharedViews, WeakLearner, WeakModel};
use crate::data::Features;
use serde::{Deserialize, Serialize};

/// One binary learner per label; predicts the label set `S = {l : p_l >= 1/2}` (the most
/// probable label alone when no label reaches 1/2), encoded as in Jung and Tewari 2018
/// (section 2.1): `h = (1 / |S|) sum_{l in S} e_l`.
///
/// Learning: `learn(x, l, w)` reads a single-label example one-vs-rest for every label;
/// the ranking boosters use the cost-sensitive reduction of [`WeakModel::learn_costs`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BinaryRelevance {
    models: Vec<WeakModel>,
}

impl BinaryRelevance {
    /// One binary learner (two labels, 1 = relevant) per label; `None` if fewer than two
    /// models are given or one of them does not have two labels.
    pub fn new(models: Vec<WeakModel>) -> Option<Self> {
        (models.len() >= 2 && models.iter().all(|m| m.num_labels() == 2))
            .then_some(BinaryRelevance { models })
    }

    /// The binary learners, one per label.
    pub fn models(&self) -> &[WeakModel] {
        &self.models
    }

    /// The per-label learners, mutably (to set their memory budgets).
    pub(crate) fn models_mut(&mut self) -> &mut [WeakModel] {
        &mut self.models
    }

    /// The probability that label `l` is relevant for `x` (0 for an unknown label).
    pub fn probability(&self, x: &Features, l: usize) -> f64 {
        self.probability_in(x, l, &mut SharedViews::none())
    }

    /// [`probability`](Self::probability), the trees sharing the example's view through
    /// `views`.
    pub fn probability_in(&self, x: &Features, l: usize, views: &mut SharedViews) -> f64 {
        let Some(m) = self.models.get(l) else {
            return 0.0;
        };
        let mut p = [0.0; 2];
        m.predict_in(x, &mut p, views);
        if p[1].is_finite() { p[1] } else { 0.0 }
    }

    /// Learns that label `l` is (`relevant`) or is not relevant for `x`, with a weight.
    /// The trees share the example's view through `views`.
    pub fn learn_relevance(
        &mut self,
        x: &Features,
        l: usize,
        relevant: bool,
        weight: f64,
        views: &mut SharedViews,
    ) {
        if let Some(m) = self.models.get_mut(l) {
            m.learn_in(x, u32::from(relevant), weight, views);
        }
    }
}

impl WeakLearner for BinaryRelevance {
    fn num_labels(&self) -> usize {
        self.models.len()
    }

    fn predict(&self, x: &Features, out: &mut [f64]) {
        self.predict_in(x, out, &mut SharedViews::none());
    }

    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        self.learn_in(x, label, weight, &mut SharedViews::none());
    }

    fn predict_in(&self, x: &Features, out: &mut [f64], views: &mut SharedViews) {
        let mut best = 0;
        let mut best_p = f64::NEG_INFINITY;
        let mut size = 0usize;
        for (l, o) in out.iter_mut().enumerate() {
            let p = self.probability_in(x, l, views);
            if p > best_p {
                best = l;
                best_p = p;
            }
            *o = if p >= 0.5 {
                size += 1;
                1.0
            } else {
                0.0
            };
        }
        if size == 0 {
            if let Some(o) = out.get_mut(best) {
                *o = 1.0;
            }
            size = 1;
        }
        let w = 1.0 / size as f64;
        out.iter_mut().for_each(|v| *v *= w);
    }

    fn learn_in(&mut self, x: &Features, label: u32, weight: f64, views: &mut SharedViews) {
        for (l, m) in self.models.iter_mut().enumerate() {
            m.learn_in(x, u32::from(l == label as usize), weight, views);
        }
    }
}
