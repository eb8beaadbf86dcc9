use crate::data::Features;
use crate::learners::{SharedViews, WeakLearner, WeakModel};
use serde::{Deserialize, Serialize};

/// A weak learner with its prediction buffer, so that predicting allocates nothing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WeakSlot {
    model: WeakModel,
    #[serde(skip)]
    probs: Vec<f64>,
}

impl WeakSlot {
    /// Wraps a weak learner.
    pub fn new(model: WeakModel) -> Self {
        let k = model.num_labels();
        WeakSlot {
            model,
            probs: vec![0.0; k],
        }
    }

    /// The weak learner.
    pub fn model(&self) -> &WeakModel {
        &self.model
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn model_mut(&mut self) -> &mut WeakModel {
        &mut self.model
    }

    /// The predicted distribution over the labels (the trees sharing the example's view
    /// through `views`, as for every method here).
    #[inline]
    pub fn predict(&mut self, x: &Features, views: &mut SharedViews) -> &[f64] {
        let k = self.model.num_labels();
        if self.probs.len() != k {
            self.probs.resize(k, 0.0);
        }
        self.model.predict_in(x, &mut self.probs, views);
        &self.probs
    }

    /// The binary prediction in {-1, +1}: +1 when the positive class (label 1) is at least
    /// as likely as the negative one (`sign(0) = +1`).
    #[inline]
    pub fn predict_sign(&mut self, x: &Features, views: &mut SharedViews) -> f64 {
        // A tree that can tell its top label cheaply (no logarithm per attribute) gives
        // exactly the answer of the full prediction (see `HoeffdingTree::predict_top`).
        if let WeakModel::Tree(t) = &self.model
            && t.num_labels() == 2
            && let Some(top) = t.predict_top_in(x, views)
        {
            return if top == 1 { 1.0 } else { -1.0 };
        }
        let p = self.predict(x, views);
        if p[1] >= p[0] { 1.0 } else { -1.0 }
    }

    /// The most likely label (the lowest index among equals).
    #[inline]
    pub fn predict_class(&mut self, x: &Features, views: &mut SharedViews) -> u32 {
        if let WeakModel::Tree(t) = &self.model
            && let Some(top) = t.predict_top_in(x, views)
        {
            return top as u32;
        }
        top_label(self.predict(x, views))
    }

    /// Learns one example with an importance weight (weights `<= 0` are skipped).
    #[inline]
    pub fn learn(&mut self, x: &Features, label: u32, weight: f64, views: &mut SharedViews) {
        if weight > 0.0 {
            self.model.learn_in(x, label, weight, views);
        }
    }
}

/// The most likely label of a predicted distribution (the lowest index among equals).
#[inline]
pub(crate) fn top_label(p: &[f64]) -> u32 {
    let mut best = 0;
    for (l, &v) in p.iter().enumerate() {
        if v > p[best] {
            best = l;
        }
    }
    best as u32
}
