use super::logistic_weight;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::learners::{WeakLearner, WeakModel};
use crate::potentials::is_label_set;
use serde::{Deserialize, Serialize};

/// The gradient of the logistic ranking surrogate (Jung and Tewari 2018, section 3.2)
/// `L_log^Y(s) = w_Y sum_{l in Y} sum_{r not in Y} log(1 + exp(s[r] - s[l]))`,
/// `w_Y = 1 / (|Y| |Y^c|)`, written into `out`:
///
/// `out[l] = -w_Y sum_{r not in Y} 1 / (1 + exp(s[l] - s[r]))` for `l in Y`, and
/// `out[r] = w_Y sum_{l in Y} 1 / (1 + exp(s[l] - s[r]))` for `r not in Y`.
///
/// This is Ada.OLMR's cost vector `c^i = grad L_log(s^{i-1})` (eq. 8): negative on the
/// relevant labels, positive on the others, summing to 0. Returns `false` with `out` all
/// zero when there is no pair or the input is invalid (`out.len() != scores.len()`, labels
/// unsorted, repeated or out of range). Allocates a scratch vector; the stages use
/// [`logistic_rank_gradient_with`].
pub fn logistic_rank_gradient(scores: &[f64], relevant: &[u32], out: &mut [f64]) -> bool {
    logistic_rank_gradient_with(scores, relevant, out, &mut Vec::new())
}

/// [`logistic_rank_gradient`] with a scratch vector (for the `k` exponentials and `k`
/// ratios).
///
/// Each pair's `1 / (1 + exp(s[l] - s[r]))` is computed as `e_r / (e_r + e_l)` with
/// `e_j = exp(s[j] - max s)` (in `(0, 1]`, no overflow): `k` exponentials instead of one
/// per pair; a pair whose two exponentials both underflow, or a non-finite score, falls
/// back to the direct formula.
pub fn logistic_rank_gradient_with(
    scores: &[f64],
    relevant: &[u32],
    out: &mut [f64],
    exps: &mut Vec<f64>,
) -> bool {
    out.iter_mut().for_each(|v| *v = 0.0);
    let k = scores.len();
    if out.len() != k || !is_label_set(relevant, k) {
        return false;
    }
    let pairs = relevant.len() * (k - relevant.len());
    if pairs == 0 {
        return false;
    }
    let w = 1.0 / pairs as f64;
    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    exps.clear();
    exps.extend(scores.iter().map(|&s| (s - max).exp()));
    // The second half: each pair's ratio for the current `l`, for every label at once (a
    // loop without branches, which the compiler vectorizes; the divisions are most of the
    // work), then summed in label order as before: the same bits.
    exps.resize(2 * k, 0.0);
    let (exps, ratios) = exps.split_at_mut(k);
    for &l in relevant {
        let sl = scores[l as usize];
        let el = exps[l as usize];
        for (q, &er) in ratios.iter_mut().zip(exps.iter()) {
            *q = er / (er + el);
        }
        let mut sum = 0.0;
        let mut next_relevant = 0;
        for (r, &sr) in scores.iter().enumerate() {
            if relevant.get(next_relevant) == Some(&(r as u32)) {
                next_relevant += 1;
                continue;
            }
            let er = exps[r];
            let total = er + el;
            let sigma = if total > 0.0 && total.is_finite() {
                w * ratios[r]
            } else {
                w * logistic_weight(sl - sr)
            };
            sum += sigma;
            out[r] += sigma;
        }
        out[l as usize] = -sum;
    }
    true
}

/// One stage of Ada.OLMR (Jung and Tewari 2018, Algorithm 3).
///
/// `alpha^i` starts at 0. Stage `i` predicts `h^i` (its weak learner's distribution over
/// the labels) and appends expert `i`'s scores `s^i = s^{i-1} + alpha^i h^i` (with the
/// weight before this round) to the record's trail for the terminal's Hedge, which draws
/// the expert with probability proportional to `v^i` and updates
/// `v^i <- v^i exp(-L_rnk^Y(s^i))`. With the label set `Y`:
///
/// - the cost vector `c^i = grad L_log^Y(s^{i-1})` ([`logistic_rank_gradient`]);
/// - `alpha^i <- Pi(alpha^i - f'(alpha^i) / sqrt(t))`, `Pi` the projection onto
///   `[-2, 2]`, where `f(alpha) = L_log^Y(s^{i-1} + alpha h^i)` and
///   `f'(alpha^i) = grad L_log^Y(s^i) . h^i = c^{i+1} . h^i`; `t` counts the labeled
///   examples (rounds) this stage has seen;
/// - the weak learner learns from `c^i` by [`WeakModel::learn_costs`]: a tree gets, for
///   each relevant `l`, `(x, l)` with importance weight `max c - c[l]` (section 4), times
///   the per-learner constant `weight_scale` (see [`super::random_weight_scale`]).
///
/// Examples without a (relevant, irrelevant) pair have zero costs and a zero gradient:
/// they count as a round but change nothing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaOlmrStage {
    weak: WeakModel,
    alpha: f64,
    t: u64,
    trail: bool,
    weight_scale: f64,
    #[serde(skip)]
    h: Vec<f64>,
    #[serde(skip)]
    next: Vec<f64>,
    #[serde(skip)]
    cost: Vec<f64>,
    #[serde(skip)]
    grad: Vec<f64>,
    #[serde(skip)]
    exps: Vec<f64>,
}

impl AdaOlmrStage {
    /// The weak learner.
    pub fn learner(&self) -> &WeakModel {
        &self.weak
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        &mut self.weak
    }

    /// A stage around `weak`; `trail` makes it append its expert's scores to the record
    /// for the terminal's Hedge; importance weights are multiplied by `weight_scale`.
    pub fn new(weak: WeakModel, trail: bool, weight_scale: f64) -> Self {
        let k = weak.num_labels();
        AdaOlmrStage {
            weak,
            alpha: 0.0,
            t: 0,
            trail,
            weight_scale,
            h: vec![0.0; k],
            next: vec![0.0; k],
            cost: vec![0.0; k],
            grad: vec![0.0; k],
            exps: Vec::with_capacity(2 * k),
        }
    }

    /// The current weight `alpha^i`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The number of labeled examples seen.
    pub fn rounds(&self) -> u64 {
        self.t
    }

    /// The weak learner.
    pub fn weak(&self) -> &WeakModel {
        &self.weak
    }

    /// The per-learner importance-weight constant.
    pub fn weight_scale(&self) -> f64 {
        self.weight_scale
    }
}

impl Stage for AdaOlmrStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let k = self.weak.num_labels();
        for v in [&mut self.h, &mut self.next, &mut self.cost, &mut self.grad] {
            if v.len() != k {
                v.resize(k, 0.0);
            }
        }
        self.weak.predict_in(&ex.features, &mut self.h, views);
        let alpha = self.alpha;
        for ((n, &s), &h) in self.next.iter_mut().zip(&rec.scores).zip(&self.h) {
            *n = s + alpha * h;
        }
        if self.trail {
            rec.trail.extend_from_slice(&self.next);
        }
        if let Some(label) = rec.label() {
            let relevant = label.relevant();
            self.t += 1;
            if rec.scores.len() == k
                && logistic_rank_gradient_with(
                    &rec.scores,
                    relevant,
                    &mut self.cost,
                    &mut self.exps,
                )
            {
                logistic_rank_gradient_with(&self.next, relevant, &mut self.grad, &mut self.exps);
                let fprime: f64 = self.grad.iter().zip(&self.h).map(|(g, h)| g * h).sum();
                if fprime.is_finite() {
                    let eta = 1.0 / (self.t as f64).sqrt();
                    self.alpha = (alpha - eta * fprime).clamp(-2.0, 2.0);
                }
                self.weak
                    .learn_costs(&ex.features, relevant, &self.cost, self.weight_scale, views);
            }
        }
        if rec.scores.len() == k {
            rec.scores.copy_from_slice(&self.next);
        }
    }
}
