//! How each kind of weak learner learns from a cost vector: the interface between the
//! multi-label ranking boosters and their (possibly mixed) weak learners.

use super::{SharedViews, WeakLearner, WeakModel};
use crate::data::Features;

impl WeakModel {
    /// Learns example `x` from the booster's cost vector `costs` (one cost per label; a
    /// lower cost is better) and the relevant labels `relevant`; every importance weight
    /// is multiplied by `scale`.
    ///
    /// - Single-label learners (Hoeffding trees, linear learners): the feeding of Jung and
    ///   Tewari 2018 (section 4): for each relevant label `l`, the example `(x, l)` with
    ///   importance weight `scale (max_j c[j] - c[l])`.
    /// - [`LabelVsRest`](super::LabelVsRest) for label `j`: its prediction `"j relevant"`
    ///   (`h = e_j`) costs `c[j]`, `"j irrelevant"` (uniform over the other labels) costs
    ///   `m = mean_{l != j} c[l]`, so it learns the cheaper answer (`j` relevant iff
    ///   `c[j] < m`) with importance weight `scale |c[j] - m|`: the standard reduction of a
    ///   two-action cost-sensitive problem to importance-weighted classification.
    /// - [`BinaryRelevance`](super::BinaryRelevance): the same reduction label by label
    ///   against the mean cost over all labels: label `l` is a target iff `c[l] < mean c`,
    ///   with weight `scale |c[l] - mean c|` (putting a label cheaper than average into the
    ///   predicted set lowers the set's cost `(1/|S|) sum_{l in S} c[l]`).
    ///
    /// Nothing is learned if the costs are not all finite or `costs` is shorter than `k`;
    /// labels out of range are skipped. The trees share the example's view through
    /// `views`.
    pub fn learn_costs(
        &mut self,
        x: &Features,
        relevant: &[u32],
        costs: &[f64],
        scale: f64,
        views: &mut SharedViews,
    ) {
        let k = self.num_labels();
        if costs.len() < k || k == 0 || !costs[..k].iter().all(|c| c.is_finite()) {
            return;
        }
        let costs = &costs[..k];
        match self {
            WeakModel::LabelVsRest(m) => {
                let j = m.label() as usize;
                let others = (costs.iter().sum::<f64>() - costs[j]) / (k - 1) as f64;
                let gap = others - costs[j];
                m.learn_relevance(x, gap > 0.0, scale * gap.abs(), views);
            }
            WeakModel::BinaryRelevance(m) => {
                let mean = costs.iter().sum::<f64>() / k as f64;
                for (l, &c) in costs.iter().enumerate() {
                    let gap = mean - c;
                    m.learn_relevance(x, l, gap > 0.0, scale * gap.abs(), views);
                }
            }
            _ => {
                let max = costs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                for &l in relevant {
                    if let Some(&c) = costs.get(l as usize) {
                        let w = scale * (max - c);
                        if w > 0.0 {
                            self.learn_in(x, l, w, views);
                        }
                    }
                }
            }
        }
    }
}
