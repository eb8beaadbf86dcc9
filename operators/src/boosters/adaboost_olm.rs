use super::WeakSlot;
use super::adaboost_ol::logistic_weight;
use super::online_mbbm::argmin_random_ties;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::rng::{Rng, seeded};
use serde::{Deserialize, Serialize};

/// One stage of AdaBoost.OLM (Jung, Goetz and Tewari 2017, Algorithm 2).
///
/// With `s = s^{i-1}` (the weighted votes of the stages before) and the logistic loss
/// `L^r(s) = sum_{l != r} log(1 + exp(s[l] - s[r]))` (eq. 8, whose printed form has a typo),
/// the cost matrix is its gradient (eq. 9): `C[r, l] = 1 / (1 + exp(s[r] - s[l]))` for
/// `l != r` and `C[r, r] = -sum_{j != r} C[r, j]`.
///
/// - **Weak prediction**: the label of least expected cost `argmin_l sum_r p[r] C[r, l]`
///   under the tree's class distribution `p` (ties at random, seeded), voted as
///   `alpha e_l`; expert `i` predicts `argmax s^i`, and the stage appends `s^i` (with
///   `alpha` before this round's update) to the record's trail for the terminal's Hedge
///   (0-1 loss).
/// - **Learning** (label `y`, `t` labeled records so far): the weak learner gets
///   `(x, y, -C[y, y] / (k - 1))` (times the tree's weight unit, see
///   [`OnlineMbbmStage::random_weight_unit`](super::OnlineMbbmStage::random_weight_unit)), and `alpha <- Pi(alpha - eta_t f'(alpha))` with
///   `eta_t = 2 sqrt(2) / ((k - 1) sqrt(t))`, `Pi` the projection onto `[-2, 2]`, and
///   `f'` the derivative of `f(alpha) = L^y(s + alpha e_l)` (eq. 10; see
///   [`AdaBoostOlmStage::alpha_gradient`] for the case `l = y`, printed with a sign typo).
///
/// Every logistic term is evaluated without overflow.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaBoostOlmStage {
    weak: WeakSlot,
    k: usize,
    alpha: f64,
    t: u64,
    trail: bool,
    weight_unit: f64,
    rng: Rng,
    #[serde(skip)]
    work: Work,
}

#[derive(Clone, Debug, Default)]
struct Work {
    probs: Vec<f64>,
    exps: Vec<f64>,
    costs: Vec<f64>,
    ties: Vec<usize>,
    last_weight: f64,
    last_prediction: u32,
}

impl AdaBoostOlmStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// Stage `i` (1-based) for `k` labels; `trail` makes the stage append its expert's
    /// scores to the record for the terminal's Hedge; the weak learner gets its weights
    /// times `weight_unit` (see [`OnlineMbbmStage::random_weight_unit`](super::OnlineMbbmStage::random_weight_unit); 1 keeps them).
    pub fn new(
        weak: WeakSlot,
        i: usize,
        k: usize,
        trail: bool,
        weight_unit: f64,
        seed: u64,
    ) -> Self {
        AdaBoostOlmStage {
            weak,
            k,
            alpha: 0.0,
            t: 0,
            trail,
            weight_unit: if weight_unit.is_finite() && weight_unit > 0.0 {
                weight_unit
            } else {
                1.0
            },
            rng: seeded(seed, i as u64),
            work: Work::default(),
        }
    }

    /// The current weight `alpha^i`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The number of labeled records seen (`t`).
    pub fn rounds(&self) -> u64 {
        self.t
    }

    /// The weight `-C[y, y] / (k - 1)` of the last labeled record (before the weight unit).
    pub fn last_weight(&self) -> f64 {
        self.work.last_weight
    }

    /// The weak prediction (the label voted for) on the last record.
    pub fn last_prediction(&self) -> u32 {
        self.work.last_prediction
    }

    /// The multiclass logistic loss `L^y(s) = sum_{l != y} log(1 + exp(s[l] - s[y]))`
    /// (eq. 8), computed without overflow.
    pub fn logistic_loss(s: &[f64], y: usize) -> f64 {
        s.iter()
            .enumerate()
            .filter(|&(l, _)| l != y)
            .map(|(_, &v)| softplus(v - s[y]))
            .sum()
    }

    /// The cost matrix of eq. 9 at the votes `s` (`k` values), row-major into `out`
    /// (`k * k` values): `C[r, l] = 1 / (1 + exp(s[r] - s[l]))` for `l != r`,
    /// `C[r, r] = -sum_{j != r} C[r, j]`. Row `r` is the gradient of `L^r` at `s`.
    pub fn cost_matrix(s: &[f64], out: &mut [f64]) {
        let k = s.len();
        for r in 0..k {
            let mut diag = 0.0;
            for l in 0..k {
                if l != r {
                    let c = logistic_weight(s[r] - s[l]);
                    out[r * k + l] = c;
                    diag += c;
                }
            }
            out[r * k + r] = -diag;
        }
    }

    /// The weight `-C[y, y] / (k - 1)` of Algorithm 2 at the votes `s`, in `(0, 1)`.
    pub fn weight(s: &[f64], y: usize) -> f64 {
        let k = s.len();
        if k < 2 {
            return 0.0;
        }
        let total: f64 = (0..k)
            .filter(|&j| j != y)
            .map(|j| logistic_weight(s[y] - s[j]))
            .sum();
        total / (k - 1) as f64
    }

    /// The step `eta_t = 2 sqrt(2) / ((k - 1) sqrt(t))`.
    pub fn step_size(k: usize, t: u64) -> f64 {
        2.0 * std::f64::consts::SQRT_2 / ((k.max(2) - 1) as f64 * (t.max(1) as f64).sqrt())
    }

    /// `f'(alpha)` for `f(alpha) = L^y(s + alpha e_l)` (eq. 10), `s = s^{i-1}`:
    /// `1 / (1 + exp(s[y] - s[l] - alpha))` when `l != y`, and
    /// `-sum_{j != y} 1 / (1 + exp(s[y] + alpha - s[j]))` when `l = y`.
    ///
    /// The paper prints the second case as `-sum 1 / (1 + exp(s[j] + alpha - s[y]))`, which
    /// is not the derivative of `f` (it tends to `-(k - 1)` instead of 0 as the true label
    /// pulls ahead); the form here is `f'` (checked against finite differences) and equals
    /// `C[y, l]` of eq. 9 at `alpha = 0`, as the gradient must.
    pub fn alpha_gradient(s: &[f64], y: usize, l: usize, alpha: f64) -> f64 {
        if l != y {
            logistic_weight(s[y] - s[l] - alpha)
        } else {
            -(0..s.len())
                .filter(|&j| j != y)
                .map(|j| logistic_weight(s[y] + alpha - s[j]))
                .sum::<f64>()
        }
    }

    /// The weak prediction at the votes `s` for the class probabilities `probs`, as
    /// [`process`](Stage::process) makes it (ties at random), without learning anything.
    pub fn choose_label(&mut self, s: &[f64], probs: &[f64]) -> usize {
        let w = &mut self.work;
        w.costs.clear();
        w.costs.resize(s.len(), 0.0);
        expected_costs_into(s, probs, &mut w.exps, &mut w.costs);
        argmin_random_ties(&w.costs, &mut w.ties, &mut self.rng)
    }

    /// `costs[l] = sum_r probs[r] C[r, l]` at the votes `s` (eq. 9), which simplifies to
    /// `sum_{r != l} (probs[r] + probs[l]) C[r, l] - (k - 1) probs[l]`.
    pub fn expected_costs(s: &[f64], probs: &[f64], out: &mut [f64]) {
        let mut exps = Vec::new();
        expected_costs_into(s, probs, &mut exps, out);
    }
}

/// `log(1 + exp(x))` without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// [`AdaBoostOlmStage::expected_costs`] with a scratch buffer: `C[r, l] = e_l / (e_l +
/// e_r)` with `e = exp(s - max s)` (no overflow; the exact logistic when both underflow).
fn expected_costs_into(s: &[f64], probs: &[f64], exps: &mut Vec<f64>, out: &mut [f64]) {
    let k = s.len();
    let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    exps.clear();
    exps.extend(s.iter().map(|&v| (v - max).exp()));
    let km1 = (k.max(1) - 1) as f64;
    for l in 0..k {
        let pl = probs.get(l).copied().unwrap_or(0.0);
        let el = exps[l];
        let mut e = 0.0;
        for r in 0..k {
            if r == l {
                continue;
            }
            let den = el + exps[r];
            let c = if den > f64::MIN_POSITIVE {
                el / den
            } else {
                logistic_weight(s[r] - s[l])
            };
            e += (probs.get(r).copied().unwrap_or(0.0) + pl) * c;
        }
        out[l] = e - km1 * pl;
    }
}

impl Stage for AdaBoostOlmStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let k = self.k;
        let ex = &*rec.example;
        let p = self.weak.predict(&ex.features, views);
        let w = &mut self.work;
        w.probs.clear();
        w.probs.extend_from_slice(p);
        w.costs.clear();
        w.costs.resize(k, 0.0);
        expected_costs_into(&rec.scores, &w.probs, &mut w.exps, &mut w.costs);
        // A pass that learns nothing (a prediction whose label comes later, or none) leaves
        // the generator as it found it: the learning pass then breaks the ties the same way,
        // so predicting and learning later is predicting and learning at once.
        let learns = matches!(rec.label(), Some(&Label::Class(y)) if (y as usize) < k);
        let l = if learns {
            argmin_random_ties(&w.costs, &mut w.ties, &mut self.rng)
        } else {
            argmin_random_ties(&w.costs, &mut w.ties, &mut self.rng.clone())
        };
        w.last_prediction = l as u32;
        let alpha = self.alpha;
        if self.trail {
            let start = rec.trail.len();
            rec.trail.extend_from_slice(&rec.scores);
            rec.trail[start + l] += alpha;
        }
        if let Some(&Label::Class(y)) = rec.label() {
            let y = y as usize;
            if y < k {
                self.t += 1;
                let weight = Self::weight(&rec.scores, y);
                self.work.last_weight = weight;
                self.weak
                    .learn(&ex.features, y as u32, weight * self.weight_unit, views);
                let eta = Self::step_size(k, self.t);
                let grad = Self::alpha_gradient(&rec.scores, y, l, alpha);
                self.alpha = (alpha - eta * grad).clamp(-2.0, 2.0);
            }
        }
        rec.scores[l] += alpha;
    }
}
