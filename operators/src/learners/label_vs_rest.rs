//! A binary weak learner for one label, in the multi-label ranking paper's prediction
//! format (a distribution over the `k` labels).

use super::{SharedViews, WeakLearner, WeakModel};
use crate::data::{Features, Schema, Task};
use serde::{Deserialize, Serialize};

/// The schema of a binary sub-problem of `schema`: the same attributes, labels `0`
/// (irrelevant) and `1` (relevant).
pub fn binary_schema(schema: &Schema) -> Schema {
    Schema {
        attributes: schema.attributes.clone(),
        labels: vec!["0".into(), "1".into()],
        task: Task::Binary,
    }
}

/// A binary learner that decides whether one label `j` is relevant, seen as a weak learner
/// over all `k` labels (Jung and Tewari 2018, section 2.1: weak predictions are
/// distributions over the labels, so binary learners can be boosted directly).
///
/// With `p` the inner learner's probability that `j` is relevant, the prediction is
/// `h = p e_j + (1 - p) (1 / (k - 1)) sum_{l != j} e_l`: the single-label prediction `{j}`
/// when it is sure `j` is relevant, the set `[k] \ {j}` (encoded as in the paper, the
/// uniform distribution over it) when it is sure `j` is not, and the mixture in between.
///
/// Learning: `learn(x, l, w)` reads a single-label example one-vs-rest (`j` relevant iff
/// `l == j`); the ranking boosters use the cost-sensitive reduction of
/// [`WeakModel::learn_costs`] instead.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabelVsRest {
    label: u32,
    k: usize,
    inner: Box<WeakModel>,
}

impl LabelVsRest {
    /// Label `label` of `k`, decided by `inner`, a learner over two labels (1 = relevant).
    /// `None` if `inner` does not have two labels, `k < 2` or `label >= k`.
    pub fn new(label: u32, k: usize, inner: WeakModel) -> Option<Self> {
        (inner.num_labels() == 2 && k >= 2 && (label as usize) < k).then(|| LabelVsRest {
            label,
            k,
            inner: Box::new(inner),
        })
    }

    /// The two-label learner inside.
    pub fn inner(&self) -> &WeakModel {
        &self.inner
    }

    /// The binary learner, mutably (to set its memory budget).
    pub(crate) fn inner_mut(&mut self) -> &mut WeakModel {
        &mut self.inner
    }

    /// The label it decides.
    pub fn label(&self) -> u32 {
        self.label
    }

    /// The probability that the label is relevant for `x`.
    pub fn probability(&self, x: &Features) -> f64 {
        self.probability_in(x, &mut SharedViews::none())
    }

    /// [`probability`](Self::probability), the trees sharing the example's view through
    /// `views`.
    pub fn probability_in(&self, x: &Features, views: &mut SharedViews) -> f64 {
        let mut p = [0.0; 2];
        self.inner.predict_in(x, &mut p, views);
        p[1]
    }

    /// Learns that the label is (`relevant`) or is not relevant for `x`, with a weight.
    /// The trees share the example's view through `views`.
    pub fn learn_relevance(
        &mut self,
        x: &Features,
        relevant: bool,
        weight: f64,
        views: &mut SharedViews,
    ) {
        self.inner.learn_in(x, u32::from(relevant), weight, views);
    }
}

impl WeakLearner for LabelVsRest {
    fn num_labels(&self) -> usize {
        self.k
    }

    fn predict(&self, x: &Features, out: &mut [f64]) {
        self.predict_in(x, out, &mut SharedViews::none());
    }

    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        self.learn_in(x, label, weight, &mut SharedViews::none());
    }

    fn predict_in(&self, x: &Features, out: &mut [f64], views: &mut SharedViews) {
        let p = self.probability_in(x, views);
        let p = if p.is_finite() {
            p.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let rest = (1.0 - p) / (self.k - 1) as f64;
        out.iter_mut().for_each(|v| *v = rest);
        if let Some(o) = out.get_mut(self.label as usize) {
            *o = p;
        }
    }

    fn learn_in(&mut self, x: &Features, label: u32, weight: f64, views: &mut SharedViews) {
        self.learn_relevance(x, label == self.label, weight, views);
    }
}
