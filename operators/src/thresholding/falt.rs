//! FALT: first-order adaptive label thresholding (section 4.2, eq. 6).

use super::linalg::{all_finite, feature_major_scores, feature_major_step};
use super::loss::alt_gradient;
use crate::data::Features;
use serde::{Deserialize, Serialize};

/// Linear FALT: `W = [w^(1) .. w^(L), w^(L+1)]` learned by online gradient descent on the
/// ALT loss, `w^(i) <- w^(i) - eta g_i x` for every predictor (eq. 6), repeated at most M
/// times per example.
///
/// `W` is stored feature-major (`weights[j * (L + 1) + i]` is `w^(i)_j`, the threshold
/// predictor last), so a sparse `x` touches only its stored rows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Falt {
    dim: usize,
    num_labels: usize,
    eta: f64,
    repetitions: usize,
    weights: Vec<f64>,
    #[serde(skip)]
    scratch: Scratch,
}

/// Per-learner buffers, so that learning allocates nothing per example.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) scores: Vec<f64>,
    pub(crate) gradient: Vec<f64>,
}

impl Scratch {
    pub(crate) fn ensure(&mut self, predictors: usize) {
        if self.scores.len() != predictors {
            self.scores = vec![0.0; predictors];
            self.gradient = vec![0.0; predictors];
        }
    }
}

impl Falt {
    /// The number of weights.
    pub fn num_weights(&self) -> usize {
        self.weights.len()
    }

    /// A zero model (`W_1 = 0`) for `dim` features and `num_labels` labels.
    pub fn new(dim: usize, num_labels: usize, eta: f64, repetitions: usize) -> Self {
        Falt {
            dim,
            num_labels,
            eta,
            repetitions,
            weights: vec![0.0; dim * (num_labels + 1)],
            scratch: Scratch::default(),
        }
    }

    /// `w^(i)_j`: predictor `i` (`num_labels` is the threshold predictor), feature `j`.
    pub fn weight(&self, predictor: usize, feature: usize) -> f64 {
        self.weights[feature * (self.num_labels + 1) + predictor]
    }

    /// Writes the L label scores `x . w^(i)` into `labels` and returns the threshold
    /// score `x . w^(L+1)`.
    pub fn raw_scores(&self, x: &Features, labels: &mut [f64]) -> f64 {
        let mut threshold = 0.0;
        feature_major_scores(&self.weights, x, labels, Some(&mut threshold));
        threshold
    }

    /// Learns one example: at most M gradient steps of eq. (6), stopping at zero loss.
    /// An example whose scores are not finite is skipped.
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        let l = self.num_labels;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.ensure(l + 1);
        for _ in 0..self.repetitions {
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
            feature_major_step(&mut self.weights, x, self.eta, &scratch.gradient);
        }
        self.scratch = scratch;
    }

    /// The model's dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
}
