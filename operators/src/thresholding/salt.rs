//! SALT: second-order adaptive label thresholding (section 4.3, Algorithm 3).

use super::falt::Scratch;
use super::linalg::{all_finite, feature_major_scores, for_each_active};
use super::loss::alt_gradient;
use crate::data::Features;
use serde::{Deserialize, Serialize};

/// Linear SALT: adaptive mirror descent on the ALT loss. Each predictor `i` keeps
/// `H^(i) = delta I + diag(s^(i))`, `s^(i)_j = ||(grad_1^(i)_j, ..., grad_t^(i)_j)||_2`
/// (the gradients so far, the current one included), and steps
/// `w^(i) <- w^(i) - eta (H^(i))^-1 grad^(i)` (the closed form of Algorithm 3's step 3).
///
/// Both `W` and the sums of squared gradients are stored feature-major, like
/// [`Falt`](super::falt::Falt). Each of the at most M steps on one example is one round
/// of Algorithm 3 (its gradient enters `s`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Salt {
    dim: usize,
    num_labels: usize,
    eta: f64,
    delta: f64,
    repetitions: usize,
    weights: Vec<f64>,
    squared_gradients: Vec<f64>,
    #[serde(skip)]
    scratch: Scratch,
}

impl Salt {
    /// The number of weights.
    pub fn num_weights(&self) -> usize {
        self.weights.len()
    }

    /// A zero model for `dim` features and `num_labels` labels.
    pub fn new(dim: usize, num_labels: usize, eta: f64, delta: f64, repetitions: usize) -> Self {
        let n = dim * (num_labels + 1);
        Salt {
            dim,
            num_labels,
            eta,
            delta,
            repetitions,
            weights: vec![0.0; n],
            squared_gradients: vec![0.0; n],
            scratch: Scratch::default(),
        }
    }

    /// `w^(i)_j`: predictor `i` (`num_labels` is the threshold predictor), feature `j`.
    pub fn weight(&self, predictor: usize, feature: usize) -> f64 {
        self.weights[feature * (self.num_labels + 1) + predictor]
    }

    /// `s^(i)_j^2`, the sum of the squared gradient entries of predictor `i`, feature `j`.
    pub fn squared_gradient_sum(&self, predictor: usize, feature: usize) -> f64 {
        self.squared_gradients[feature * (self.num_labels + 1) + predictor]
    }

    /// Writes the L label scores into `labels` and returns the threshold score.
    pub fn raw_scores(&self, x: &Features, labels: &mut [f64]) -> f64 {
        let mut threshold = 0.0;
        feature_major_scores(&self.weights, x, labels, Some(&mut threshold));
        threshold
    }

    /// Learns one example: at most M adaptive steps, stopping at zero loss. An example
    /// whose scores are not finite is skipped.
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        let k = self.num_labels + 1;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.ensure(k);
        for _ in 0..self.repetitions {
            let l = self.num_labels;
            let (labels, threshold) = scratch.scores.split_at_mut(l);
            feature_major_scores(&self.weights, x, labels, Some(&mut threshold[0]));
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
            let (eta, delta) = (self.eta, self.delta);
            let weights = &mut self.weights;
            let sums = &mut self.squared_gradients;
            let gradient = &scratch.gradient;
            for_each_active(x, self.dim, |j, v| {
                let row = j * k..(j + 1) * k;
                for ((w, s2), &c) in weights[row.clone()]
                    .iter_mut()
                    .zip(&mut sums[row])
                    .zip(gradient)
                {
                    if c != 0.0 {
                        let g = c * v;
                        *s2 += g * g;
                        *w -= eta * g / (delta + s2.sqrt());
                    }
                }
            });
        }
        self.scratch = scratch;
    }

    /// The model's dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
}
