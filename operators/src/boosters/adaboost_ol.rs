use super::WeakSlot;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::rng::{Rng, seeded, uniform};
use serde::{Deserialize, Serialize};

/// `1 / (1 + exp(m))`, stable for any `m` (no overflow, no NaN).
#[inline]
pub fn logistic_weight(m: f64) -> f64 {
    if m > 0.0 {
        let e = (-m).exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + m.exp())
    }
}

/// One stage of AdaBoost.OL (Beygelzimer, Kale and Luo 2015, Algorithm 2).
///
/// Expert `i` predicts `sign(sum_{j<=i} alpha^j WL^j(x))` with the weights before this
/// round. With the label `y`: `z^i = y WL^i(x)`, `s^i = s^{i-1} + alpha^i z^i` (margins),
/// `alpha^i <- Pi(alpha^i + eta_t z^i / (1 + exp(s^i)))` with `eta_t = 4 / sqrt(t)` and
/// `Pi` the projection onto [-2, 2]; the example goes to `WL^i` with importance weight
/// (or, in AdaBoost.OL.S, with probability) `w^i = 1 / (1 + exp(s^{i-1}))`. Hedge over the
/// experts lives in the terminal.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaBoostOlStage {
    weak: WeakSlot,
    alpha: f64,
    t: u64,
    sampling: bool,
    trail: bool,
    rng: Rng,
}

impl AdaBoostOlStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// Stage `i` (1-based); `sampling` selects AdaBoost.OL.S; `trail` makes the stage append
    /// its expert's score to the record for the terminal's Hedge.
    pub fn new(weak: WeakSlot, i: usize, sampling: bool, trail: bool, seed: u64) -> Self {
        AdaBoostOlStage {
            weak,
            alpha: 0.0,
            t: 0,
            sampling,
            trail,
            rng: seeded(seed, i as u64),
        }
    }

    /// The weak learner.
    pub fn weak(&self) -> &WeakSlot {
        &self.weak
    }

    /// The current weight `alpha^i`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl Stage for AdaBoostOlStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let h = self.weak.predict_sign(&ex.features, views);
        let raw_prev = rec.scores[0];
        let raw = raw_prev + self.alpha * h;
        if self.trail {
            rec.trail.push(raw);
        }
        if let Some(&Label::Class(y)) = rec.label() {
            let sign_y = if y == 1 { 1.0 } else { -1.0 };
            let z = sign_y * h;
            let margin_prev = sign_y * raw_prev;
            let margin = margin_prev + self.alpha * z;
            self.t += 1;
            let eta = 4.0 / (self.t as f64).sqrt();
            self.alpha = (self.alpha + eta * z * logistic_weight(margin)).clamp(-2.0, 2.0);
            let w = logistic_weight(margin_prev);
            if self.sampling {
                let u = uniform(&mut self.rng);
                if u < w {
                    self.weak.learn(&ex.features, y, 1.0, views);
                }
            } else {
                self.weak.learn(&ex.features, y, w, views);
            }
        }
        rec.scores[0] = raw;
    }
}
