use super::WeakSlot;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::potentials::binomial_pmf_row;
use crate::rng::{Rng, seeded, uniform};
use serde::{Deserialize, Serialize};

/// One stage of Online BBM (Beygelzimer, Kale and Luo 2015, Algorithm 1).
///
/// `alpha = 1`; the record carries the raw vote `sum_{j<i} WL^j(x)`. With the label `y` in
/// {-1, +1}, the margin so far is `s^{i-1} = y sum_{j<i} WL^j(x)`, `k^i = floor((N - i -
/// s^{i-1} + 1) / 2)` and `w^i = C(N-i, k^i) (1/2 + gamma/2)^{k^i} (1/2 - gamma/2)^{N-i-k^i}`
/// (0 when `k^i` is outside `0..=N-i`). The weight is normalized by the exact
/// `||w^i||_inf = max_k` of that binomial row (a bound at least as tight as Lemma 4), and the
/// example goes to `WL^i` with importance weight `w^i / ||w^i||_inf`, or, in the sampling
/// variant, with probability `w^i / ||w^i||_inf`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnlineBbmStage {
    weak: WeakSlot,
    /// `w^i / ||w^i||_inf` for `k^i = 0..=N-i`.
    weights: Vec<f64>,
    sampling: bool,
    rng: Rng,
}

impl OnlineBbmStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// Stage `i` (1-based) of `n` with edge `gamma`; `sampling` selects Online BBM with
    /// rejection sampling instead of importance weights.
    pub fn new(weak: WeakSlot, i: usize, n: usize, gamma: f64, sampling: bool, seed: u64) -> Self {
        OnlineBbmStage {
            weak,
            weights: Self::normalized_weights(n - i, gamma),
            sampling,
            rng: seeded(seed, i as u64),
        }
    }

    /// The weak learner.
    pub fn weak(&self) -> &WeakSlot {
        &self.weak
    }

    /// `w(k) / max_k w(k)` for the binomial row of `m = N - i` trials with success
    /// probability `1/2 + gamma/2`.
    pub fn normalized_weights(m: usize, gamma: f64) -> Vec<f64> {
        let row = binomial_pmf_row(m, 0.5 + gamma / 2.0);
        let max = row.iter().cloned().fold(0.0, f64::max);
        row.into_iter().map(|w| w / max).collect()
    }

    /// The normalized weight `w^i / ||w^i||_inf` for the margin `s^{i-1}`.
    pub fn weight(&self, margin_prev: f64) -> f64 {
        let m = (self.weights.len() - 1) as f64;
        let k = ((m - margin_prev + 1.0) / 2.0).floor();
        if k < 0.0 || k > m {
            0.0
        } else {
            self.weights[k as usize]
        }
    }
}

impl Stage for OnlineBbmStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let h = self.weak.predict_sign(&ex.features, views);
        if let Some(&Label::Class(y)) = rec.label() {
            let sign_y = if y == 1 { 1.0 } else { -1.0 };
            let w = self.weight(sign_y * rec.scores[0]);
            if self.sampling {
                let u = uniform(&mut self.rng);
                if u < w {
                    self.weak.learn(&ex.features, y, 1.0, views);
                }
            } else {
                self.weak.learn(&ex.features, y, w, views);
            }
        }
        rec.scores[0] += h;
    }
}
