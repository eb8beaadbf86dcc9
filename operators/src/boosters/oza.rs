use super::WeakSlot;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::rng::{Rng, seeded};
use rand_distr::{Distribution, Poisson};
use serde::{Deserialize, Serialize};

/// One stage of Oza and Russell's online boosting (2001), as in MOA's `OzaBoost`.
///
/// Prediction: stage `m` votes for its predicted label with weight `ln((1 - e_m) / e_m)`,
/// `e_m = lambda_sw / (lambda_sc + lambda_sw)`; a stage with `e_m >= 1/2` or no statistics
/// yet votes 0, and `e_m` is floored at `1e-6` so that a stage never wrong votes with a
/// large finite weight. Learning: with `lambda` carried from the previous stage (1 at the
/// first), the stage learns the example with importance weight `K ~ Poisson(lambda)`; then,
/// if it now classifies the example correctly, `lambda_sc += lambda` and
/// `lambda <- lambda t / (2 lambda_sc)`, else `lambda_sw += lambda` and
/// `lambda <- lambda t / (2 lambda_sw)`, with `t` the number of labeled examples seen.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OzaStage {
    weak: WeakSlot,
    lambda_sc: f64,
    lambda_sw: f64,
    t: u64,
    rng: Rng,
}

impl OzaStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// Stage `i` (1-based).
    pub fn new(weak: WeakSlot, i: usize, seed: u64) -> Self {
        OzaStage {
            weak,
            lambda_sc: 0.0,
            lambda_sw: 0.0,
            t: 0,
            rng: seeded(seed, i as u64),
        }
    }

    /// The stage's vote weight `ln((1 - e) / e)` (0 when `e >= 1/2` or unknown).
    pub fn vote_weight(&self) -> f64 {
        let total = self.lambda_sc + self.lambda_sw;
        if total <= 0.0 {
            return 0.0;
        }
        let e = (self.lambda_sw / total).max(1e-6);
        if e >= 0.5 { 0.0 } else { ((1.0 - e) / e).ln() }
    }
}

impl Stage for OzaStage {
    fn process(&mut self, rec: &mut InFlight) {
        let ex = &*rec.example;
        let c = self.weak.predict_class(&ex.features);
        rec.scores[c as usize] += self.vote_weight();
        if let Some(&Label::Class(y)) = rec.label() {
            let lambda = rec.carry;
            self.t += 1;
            let k = match Poisson::new(lambda) {
                Ok(p) => p.sample(&mut self.rng),
                Err(_) => 0.0,
            };
            // A weight of 0 changes nothing (`WeakLearner::learn`), and prediction is a
            // function of the state: the class predicted above is the one after learning.
            let after = if k > 0.0 {
                self.weak.learn(&ex.features, y, k);
                self.weak.predict_class(&ex.features)
            } else {
                c
            };
            let t = self.t as f64;
            if after == y {
                self.lambda_sc += lambda;
                rec.carry = lambda * t / (2.0 * self.lambda_sc);
            } else {
                self.lambda_sw += lambda;
                rec.carry = lambda * t / (2.0 * self.lambda_sw);
            }
        }
    }
}
