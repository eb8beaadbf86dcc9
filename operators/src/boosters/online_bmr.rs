use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::learners::{WeakLearner, WeakModel};
use crate::potentials::{PairLoss, RankingPotential};
use crate::rng::{seeded, uniform};
use serde::{Deserialize, Serialize};

/// The range of the per-learner importance-weight constant the multi-label ranking paper's
/// code draws for each tree (uniform; `run_boosting.py`: `min_weight=3, max_weight=10`).
pub const RANDOM_WEIGHT_SCALE_RANGE: (f64, f64) = (3.0, 10.0);

/// The random stream (under the run's seed) of learner `i`'s weight constant.
const WEIGHT_SCALE_STREAM: u64 = 3_000_000;

/// The importance-weight constant of tree `i` (0-based) of a multi-label ranking booster
/// under `--weak vfdt --tree-params random`: uniform in [`RANDOM_WEIGHT_SCALE_RANGE`],
/// seeded from `(seed, i)`.
///
/// The paper (section 4) feeds a tree the weight `max c - c[l]`; the authors' code
/// multiplies it by a constant drawn per tree together with the tree's random split
/// confidence, grace period and tie threshold. A constant factor changes nothing in the
/// boosting itself (the cost vector is only defined up to scale), but a Hoeffding tree
/// counts weight, not examples, in its grace period and Hoeffding bound, so the constant
/// is part of the trees' random parameters. Otherwise (default tree parameters, other
/// weak learners) it is 1.
pub fn random_weight_scale(seed: u64, i: usize) -> f64 {
    let (lo, hi) = RANDOM_WEIGHT_SCALE_RANGE;
    let mut rng = seeded(seed, WEIGHT_SCALE_STREAM + i as u64);
    lo + (hi - lo) * uniform(&mut rng)
}

/// One stage of OnlineBMR (Jung and Tewari 2018, Algorithm 2).
///
/// `alpha^i = 1` and the booster follows the last expert, so the record carries the plain
/// vote `s^{i-1} = sum_{j<i} h^j`. Stage `i` of `N` predicts `h^i` (its weak learner's
/// distribution over the `k` labels, the paper's general format: a Hoeffding tree's class
/// distribution, as the authors' code uses it), and with the label set `Y`:
///
/// - the cost vector (eq. 2) `c[l] = phi^{N-i}(s^{i-1} + e_l)`, with `phi` the rank- or
///   hinge-loss potential, computed exactly by [`RankingPotential`] (no Monte Carlo);
/// - the normalization (eq. 3) `w^i[t] = max c - min c`, `d = (c - min c) / w^i[t]` in
///   `[0, 1]` with `min d = 0`, `max d = 1`;
/// - the weak learner learns from `c` by [`WeakModel::learn_costs`]. For single-label
///   learners (trees) that is the paper's feeding: for each relevant `l`, `(x, l)` with
///   importance weight `max c - c[l] = w^i[t] (1 - d[l])`, i.e. the example's weight
///   `w^i[t]` times how far `l`'s normalized cost lies below the worst label's. (The
///   theorem normalizes `w^i[t]` by `w^{i*} = max_t w^i[t]`, unknown online and a constant
///   per learner; the weights are used unnormalized, as in the authors' code, times the
///   per-learner constant `weight_scale`, see [`random_weight_scale`].)
///
/// Then `s^i = s^{i-1} + h^i`. Examples without a (relevant, irrelevant) pair (`Y` empty
/// or all labels) or with an invalid label set teach nothing (all costs are equal).
///
/// With the rank potential the loss bound of Theorem 2 needs single-label weak learners
/// (`h = e_l`); with the hinge potential (convex) it holds for any distribution, which is
/// why the paper used the hinge potential with trees. Both are computed exactly for real
/// scores.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnlineBmrStage {
    weak: WeakModel,
    potential: RankingPotential,
    weight_scale: f64,
    #[serde(skip)]
    h: Vec<f64>,
    #[serde(skip)]
    cost: Vec<f64>,
}

impl OnlineBmrStage {
    /// The weak learner.
    pub fn learner(&self) -> &WeakModel {
        &self.weak
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        &mut self.weak
    }

    /// Stage `i` (1-based) of `n` with edge `gamma`, the potential of `loss`, and the weak
    /// learner's importance weights multiplied by `weight_scale`.
    pub fn new(
        weak: WeakModel,
        i: usize,
        n: usize,
        gamma: f64,
        loss: PairLoss,
        weight_scale: f64,
    ) -> Self {
        let k = weak.num_labels();
        OnlineBmrStage {
            weak,
            potential: RankingPotential::new(loss, n.saturating_sub(i), k, gamma),
            weight_scale,
            h: vec![0.0; k],
            cost: vec![0.0; k],
        }
    }

    /// The weak learner.
    pub fn weak(&self) -> &WeakModel {
        &self.weak
    }

    /// The per-learner importance-weight constant.
    pub fn weight_scale(&self) -> f64 {
        self.weight_scale
    }

    /// The potential `phi^{N-i}` of this stage.
    pub fn potential(&mut self) -> &mut RankingPotential {
        &mut self.potential
    }

    /// The cost vector `c[l] = phi^{N-i}(s + e_l)` for the expert scores `s = s^{i-1}` and
    /// the relevant labels; `None` when there is no (relevant, irrelevant) pair or the
    /// input is invalid.
    pub fn cost_vector(&mut self, scores: &[f64], relevant: &[u32]) -> Option<&[f64]> {
        let k = self.weak.num_labels();
        self.cost.resize(k, 0.0);
        self.potential
            .cost_vector(scores, relevant, &mut self.cost)
            .then_some(&self.cost[..])
    }

    /// The normalization of eq. 3: `(w, d)` with `w = max c - min c` and
    /// `d = (c - min c) / w` (all zero when `w = 0`).
    pub fn normalize(cost: &[f64]) -> (f64, Vec<f64>) {
        let min = cost.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = cost.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w = max - min;
        let d = cost
            .iter()
            .map(|&c| if w > 0.0 { (c - min) / w } else { 0.0 })
            .collect();
        (w.max(0.0), d)
    }
}

impl Stage for OnlineBmrStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let k = self.weak.num_labels();
        if self.h.len() != k {
            self.h.resize(k, 0.0);
        }
        if self.cost.len() != k {
            self.cost.resize(k, 0.0);
        }
        self.weak.predict_in(&ex.features, &mut self.h, views);
        if let Some(label) = rec.label() {
            let relevant = label.relevant();
            if self
                .potential
                .cost_vector(&rec.scores, relevant, &mut self.cost)
            {
                self.weak
                    .learn_costs(&ex.features, relevant, &self.cost, self.weight_scale, views);
            }
        }
        for (s, &h) in rec.scores.iter_mut().zip(&self.h) {
            *s += h;
        }
    }
}
