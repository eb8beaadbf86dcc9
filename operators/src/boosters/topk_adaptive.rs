use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::learners::{WeakLearner, WeakModel};
use crate::topk::{PairFeedback, full_information_pairs};
use serde::{Deserialize, Serialize};

/// The gradient of the estimated unnormalized logistic rank loss (the paper's eq. 4):
/// `L-hat^log(s) = sum_pairs w log(1 + exp(s[b] - s[a]))`, so each pair adds
/// `-w sigma` to `out[a]` and `+w sigma` to `out[b]`, `sigma = 1 / (1 + exp(s[a] - s[b]))`.
/// `out` is overwritten (zero for labels in no pair).
pub fn estimated_logistic_gradient(s: &[f64], fb: &PairFeedback, out: &mut [f64]) {
    out.fill(0.0);
    for p in &fb.pairs {
        let (a, b) = (p.a as usize, p.b as usize);
        let sigma = 1.0 / (1.0 + (s[a] - s[b]).exp());
        out[a] -= p.weight * sigma;
        out[b] += p.weight * sigma;
    }
}

/// One stage of Top-k Adaptive (Zhang, Jung and Tewari, Algorithm 3).
///
/// `alpha^i` starts at 0; stage `i` predicts `h^i` and adds the expert `s^i = s^{i-1} +
/// alpha^i h^i` to the trail (the terminal runs Hedge over the experts with the estimated
/// unweighted rank loss). With feedback (observed pairs with weights `1 / Pr`):
///
/// - the cost vector `c^i = grad L-hat^log(s^{i-1})` ([`estimated_logistic_gradient`]);
/// - `alpha^i <- Pi(alpha^i - eta_t g)` with `g = grad L-hat^log(s^i) . h^i` (the
///   derivative of `L-hat^log(s^{i-1} + alpha h^i)` at `alpha^i`), clipped to `[-clip,
///   clip]` as the authors did (`clip` = 0 or infinite: off), `Pi` the projection on
///   `[-2, 2]`, and `eta_t = 8 rho sqrt(2) / (m^2 sqrt(t))`, `t` the rounds with feedback;
/// - the weak learner learns from `c^i` with the observed relevant labels
///   ([`WeakModel::learn_costs`]; a tree gets weight `max c - c[l]` per relevant `l`).
///
/// Under full information (a labeled record) every pair is observed with weight 1.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopkAdaptiveStage {
    weak: WeakModel,
    alpha: f64,
    t: u64,
    rho: f64,
    clip_gradient: f64,
    weight_scale: f64,
    #[serde(skip)]
    h: Vec<f64>,
    #[serde(skip)]
    next: Vec<f64>,
    #[serde(skip)]
    cost: Vec<f64>,
    #[serde(skip)]
    grad: Vec<f64>,
}

impl TopkAdaptiveStage {
    /// The weak learner.
    pub fn learner(&self) -> &WeakModel {
        &self.weak
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        &mut self.weak
    }

    /// A stage with exploration rate `rho` (it sets the step size), the gradient clip, and
    /// the weak learner's importance weights multiplied by `weight_scale`.
    pub fn new(weak: WeakModel, rho: f64, clip_gradient: f64, weight_scale: f64) -> Self {
        let m = weak.num_labels();
        TopkAdaptiveStage {
            weak,
            alpha: 0.0,
            t: 0,
            rho,
            clip_gradient,
            weight_scale,
            h: vec![0.0; m],
            next: vec![0.0; m],
            cost: vec![0.0; m],
            grad: vec![0.0; m],
        }
    }

    /// The current weight `alpha^i`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The number of rounds with feedback.
    pub fn rounds(&self) -> u64 {
        self.t
    }

    /// The step size `eta_t = 8 rho sqrt(2) / (m^2 sqrt(t))`.
    pub fn step_size(rho: f64, m: usize, t: u64) -> f64 {
        8.0 * rho * std::f64::consts::SQRT_2 / ((m * m) as f64 * (t as f64).sqrt())
    }

    /// The gradient clipped to `[-clip, clip]` (unchanged when `clip` is 0 or infinite).
    pub fn clip(g: f64, clip: f64) -> f64 {
        if clip > 0.0 && clip.is_finite() {
            g.clamp(-clip, clip)
        } else {
            g
        }
    }
}

impl Stage for TopkAdaptiveStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let m = self.weak.num_labels();
        for v in [&mut self.h, &mut self.next, &mut self.cost, &mut self.grad] {
            v.resize(m, 0.0);
        }
        self.weak.predict_in(&ex.features, &mut self.h, views);
        let alpha = self.alpha;
        for ((n, &s), &h) in self.next.iter_mut().zip(&rec.scores).zip(&self.h) {
            *n = s + alpha * h;
        }
        rec.trail.extend_from_slice(&self.next);
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
            self.t += 1;
            if !fb.pairs.is_empty() {
                estimated_logistic_gradient(&rec.scores, fb, &mut self.cost);
                estimated_logistic_gradient(&self.next, fb, &mut self.grad);
                let g: f64 = self.grad.iter().zip(&self.h).map(|(g, h)| g * h).sum();
                let g = Self::clip(g, self.clip_gradient);
                if g.is_finite() {
                    let eta = Self::step_size(self.rho, m, self.t);
                    self.alpha = (alpha - eta * g).clamp(-2.0, 2.0);
                }
                self.weak.learn_costs(
                    &ex.features,
                    &fb.relevant,
                    &self.cost,
                    self.weight_scale,
                    views,
                );
            }
        }
        if rec.scores.len() == m {
            rec.scores.copy_from_slice(&self.next);
        }
    }
}
