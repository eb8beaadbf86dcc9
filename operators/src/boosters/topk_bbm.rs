use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::learners::{WeakLearner, WeakModel};
use crate::potentials::{PairLoss, StepSumTable};
use crate::topk::{PairFeedback, full_information_pairs};
use serde::{Deserialize, Serialize};

/// One stage of Top-k BBM (Zhang, Jung and Tewari, Algorithm 2).
///
/// `alpha^i = 1`, the booster follows the last expert, so the record carries the plain
/// vote `s^{i-1}`. Stage `i` of `N` predicts `h^i` (its weak learner's distribution over the
/// `m` labels) and, with feedback (the observed pairs `(a, b)`, `a` relevant, `b`
/// irrelevant, each with its weight `w = 1 / Pr[a, b in top-k]`), computes the estimated
/// cost vector of eq. 3:
///
/// `c[l] = Phi-hat^{N-i}(s^{i-1} + e_l) = sum_pairs w Lambda^{a,b,N-i}(s^{i-1} + e_l)`,
/// `Lambda^{a,b,n}(s) = E (1 + s[b] - s[a] + D_n)_+`,
///
/// the unweighted hinge under `n = N - i` draws from `u_a^gamma` (`gamma` more on `a`
/// alone): `D_n` steps `+1` with probability `(1 - gamma)/m` and `-1` with `(1 - gamma)/m +
/// gamma`, so one exact table ([`StepSumTable::for_labels`] with `|Y| = 1`) serves every
/// pair and every round: three neighbouring lookups per pair, no Monte Carlo. Adding `e_l`
/// only moves the pairs containing `l`, so `c[l] = B + sum_{(l, b)} w (Lambda(g - 1) -
/// Lambda(g)) + sum_{(a, l)} w (Lambda(g + 1) - Lambda(g))` with `B = sum w Lambda(g)`.
///
/// The weak learner learns from `c` by [`WeakModel::learn_costs`] with the observed
/// relevant labels (a tree: for each, weight `max c - c[l]`, as the authors fed VFDT),
/// times the per-learner constant `weight_scale`. Under full information (a labeled
/// record) every pair is observed with weight 1.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopkBbmStage {
    weak: WeakModel,
    table: StepSumTable,
    weight_scale: f64,
    #[serde(skip)]
    h: Vec<f64>,
    #[serde(skip)]
    cost: Vec<f64>,
}

impl TopkBbmStage {
    /// The weak learner.
    pub fn learner(&self) -> &WeakModel {
        &self.weak
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        &mut self.weak
    }

    /// Stage `i` (1-based) of `n` over `m` labels with edge `gamma`.
    pub fn new(weak: WeakModel, i: usize, n: usize, gamma: f64, weight_scale: f64) -> Self {
        let m = weak.num_labels();
        TopkBbmStage {
            weak,
            table: StepSumTable::for_labels(n.saturating_sub(i), m, 1, gamma),
            weight_scale,
            h: vec![0.0; m],
            cost: vec![0.0; m],
        }
    }

    /// The weak learner.
    pub fn weak(&self) -> &WeakModel {
        &self.weak
    }

    /// Writes the estimated cost vector (eq. 3) for the votes `s = s^{i-1}` into `out`
    /// (`out.len()` labels); `false` (and all zero) when no pair was observed.
    pub fn cost_vector(&self, s: &[f64], fb: &PairFeedback, out: &mut [f64]) -> bool {
        out.fill(0.0);
        if fb.pairs.is_empty() {
            return false;
        }
        let mut base = 0.0;
        for p in &fb.pairs {
            let (a, b) = (p.a as usize, p.b as usize);
            let g = s[b] - s[a];
            let [down, at, up] = self.table.terms3(PairLoss::Hinge, g);
            base += p.weight * at;
            out[a] += p.weight * (down - at);
            out[b] += p.weight * (up - at);
        }
        for c in out.iter_mut() {
            *c += base;
        }
        true
    }
}

impl Stage for TopkBbmStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let m = self.weak.num_labels();
        self.h.resize(m, 0.0);
        self.cost.resize(m, 0.0);
        self.weak.predict_in(&ex.features, &mut self.h, views);
        let full;
        let fb = match (&rec.pairs, rec.label()) {
            (Some(p), _) => Some(&**p),
            (None, Some(label)) => {
                full = full_information_pairs(label.relevant(), m);
                Some(&full)
            }
            (None, None) => None,
        };
        if let Some(fb) = fb
            && rec.scores.len() == m
        {
            let mut cost = std::mem::take(&mut self.cost);
            if self.cost_vector(&rec.scores, fb, &mut cost) {
                self.weak
                    .learn_costs(&ex.features, &fb.relevant, &cost, self.weight_scale, views);
            }
            self.cost = cost;
        }
        for (s, &h) in rec.scores.iter_mut().zip(&self.h) {
            *s += h;
        }
    }
}
