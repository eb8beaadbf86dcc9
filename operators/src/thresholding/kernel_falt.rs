//! Kernel FALT, FALT(k) (section 5): FALT in the feature space of an RBF kernel.

use super::falt::Scratch;
use super::kernel::SupportSet;
use super::linalg::all_finite;
use super::loss::alt_gradient;
use crate::data::Features;
use serde::{Deserialize, Serialize};

/// FALT with `w^(i) = sum_k alpha_k^(i) phi(x_k)`: every FALT step on `x_t` adds `x_t`
/// with coefficients `alpha_t^(i) = -eta g_i` (the paper's `tau_k^(i)`,
/// `eta (1[i in Y] a_i / |Y| - 1[i in Ybar] b_i / |Ybar|)` for a label and
/// `eta (b / |Ybar| - a / |Y|)` for the threshold). The at most M steps on one example
/// accumulate into one support vector (the same `phi(x_t)`), and a step at zero loss adds
/// nothing, so an example that is already separated with margin 1 is not stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelFalt {
    num_labels: usize,
    eta: f64,
    repetitions: usize,
    support: SupportSet,
    #[serde(skip)]
    scratch: Scratch,
}

impl KernelFalt {
    /// An empty model: RBF width `width` (delta^2), optional support-vector budget.
    pub fn new(
        dim: usize,
        num_labels: usize,
        eta: f64,
        repetitions: usize,
        width: f64,
        budget: Option<usize>,
    ) -> Self {
        KernelFalt {
            num_labels,
            eta,
            repetitions,
            support: SupportSet::new(dim, num_labels + 1, width, budget),
            scratch: Scratch::default(),
        }
    }

    /// The support vectors (coefficients: the L labels, then the threshold).
    pub fn support(&self) -> &SupportSet {
        &self.support
    }

    /// Writes the L label scores into `labels` and returns the threshold score.
    pub fn raw_scores(&self, x: &Features, labels: &mut [f64]) -> f64 {
        let mut threshold = 0.0;
        self.support.scores(x, labels, Some(&mut threshold));
        threshold
    }

    /// Learns one example (at most M steps, stopping at zero loss), then enforces the
    /// budget.
    ///
    /// The scores of `x` are computed once over the support vectors; every step then adds
    /// its coefficients to `x`'s own support vector, which moves each score by exactly
    /// that coefficient times `K(x, x) = 1`, so the next step's scores are updated in
    /// O(L) instead of being recomputed over every support vector (equal up to rounding).
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        let l = self.num_labels;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.ensure(l + 1);
        let mut current = None;
        {
            let (labels, threshold) = scratch.scores.split_at_mut(l);
            self.support.scores(x, labels, Some(&mut threshold[0]));
        }
        for _ in 0..self.repetitions {
            if !all_finite(&scratch.scores) {
                break;
            }
            let loss = alt_gradient(
                &scratch.scores[..l],
                scratch.scores[l],
                relevant,
                &mut scratch.gradient,
            );
            if loss <= 0.0 {
                break;
            }
            for g in scratch.gradient.iter_mut() {
                *g *= -self.eta;
            }
            current = Some(self.support.add(x, current, &scratch.gradient));
            for (s, &a) in scratch.scores.iter_mut().zip(&scratch.gradient) {
                *s += a;
            }
        }
        self.support.enforce_budget();
        self.scratch = scratch;
    }
}
