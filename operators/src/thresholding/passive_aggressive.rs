//! The baselines PA-I-BR and PA-II-BR: binary relevance of passive-aggressive binary
//! classifiers (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer 2006), linear and RBF.

use super::kernel::SupportSet;
use super::linalg::{all_finite, feature_major_scores, for_each_active, squared_norm};
use crate::data::Features;
use serde::{Deserialize, Serialize};

/// The PA variant: how the step `tau` is clipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PaVariant {
    /// PA-I: `tau = min(C, loss / ||x||^2)`.
    One,
    /// PA-II: `tau = loss / (||x||^2 + 1 / (2C))`.
    Two,
}

impl PaVariant {
    /// The step for hinge loss `loss`, squared norm `norm2` and aggressiveness `c`
    /// (0 when the loss is 0).
    #[inline]
    pub fn tau(self, loss: f64, norm2: f64, c: f64) -> f64 {
        if loss <= 0.0 {
            return 0.0;
        }
        match self {
            PaVariant::One => c.min(loss / norm2),
            PaVariant::Two => loss / (norm2 + 0.5 / c),
        }
    }
}

/// One PA classifier per label on `y_i = +1` if `i` is relevant, `-1` otherwise: hinge
/// loss `(1 - y_i w_i . x)_+`, update `w_i <- w_i + tau_i y_i x`; predicted set
/// `{i : w_i . x > 0}`. An `x` with no non-zero value is skipped (its update is zero).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PaBr {
    dim: usize,
    num_labels: usize,
    variant: PaVariant,
    c: f64,
    /// Feature-major: `weights[j * L + i]`.
    weights: Vec<f64>,
    #[serde(skip)]
    scores: Vec<f64>,
}

impl PaBr {
    /// The number of weights.
    pub fn num_weights(&self) -> usize {
        self.weights.len()
    }

    /// A zero model.
    pub fn new(dim: usize, num_labels: usize, variant: PaVariant, c: f64) -> Self {
        PaBr {
            dim,
            num_labels,
            variant,
            c,
            weights: vec![0.0; dim * num_labels],
            scores: Vec::new(),
        }
    }

    /// `w_i,j`.
    pub fn weight(&self, label: usize, feature: usize) -> f64 {
        self.weights[feature * self.num_labels + label]
    }

    /// Writes the L scores `w_i . x` into `labels`; returns the threshold, 0.
    pub fn raw_scores(&self, x: &Features, labels: &mut [f64]) -> f64 {
        feature_major_scores(&self.weights, x, labels, None);
        0.0
    }

    /// One PA step per label.
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        let l = self.num_labels;
        let norm2 = squared_norm(x, self.dim);
        if norm2 == 0.0 || !norm2.is_finite() {
            return;
        }
        let mut scores = std::mem::take(&mut self.scores);
        scores.resize(l, 0.0);
        feature_major_scores(&self.weights, x, &mut scores, None);
        if all_finite(&scores) {
            // scores[i] becomes the signed step tau_i y_i.
            signed_steps(&mut scores, relevant, |loss| {
                self.variant.tau(loss, norm2, self.c)
            });
            let weights = &mut self.weights;
            for_each_active(x, self.dim, |j, v| {
                for (w, &t) in weights[j * l..(j + 1) * l].iter_mut().zip(&scores) {
                    if t != 0.0 {
                        *w += t * v;
                    }
                }
            });
        }
        self.scores = scores;
    }
}

/// Replaces every score `s_i` by the signed PA step `tau_i y_i`.
fn signed_steps(scores: &mut [f64], relevant: &[u32], tau: impl Fn(f64) -> f64) {
    let mut p = 0;
    for (i, s) in scores.iter_mut().enumerate() {
        while p < relevant.len() && (relevant[p] as usize) < i {
            p += 1;
        }
        let y = if p < relevant.len() && relevant[p] as usize == i {
            1.0
        } else {
            -1.0
        };
        let loss = (1.0 - y * *s).max(0.0);
        *s = tau(loss) * y;
    }
}

/// Kernel PA-BR: `f_i(x) = sum_k alpha_k^(i) K(x_k, x)` with the RBF kernel, so
/// `||phi(x)||^2 = K(x, x) = 1` in the PA steps; an example joins the support vectors when
/// one of its labels has a non-zero step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelPaBr {
    num_labels: usize,
    variant: PaVariant,
    c: f64,
    support: SupportSet,
    #[serde(skip)]
    scores: Vec<f64>,
}

impl KernelPaBr {
    /// An empty model.
    pub fn new(
        dim: usize,
        num_labels: usize,
        variant: PaVariant,
        c: f64,
        width: f64,
        budget: Option<usize>,
    ) -> Self {
        KernelPaBr {
            num_labels,
            variant,
            c,
            support: SupportSet::new(dim, num_labels, width, budget),
            scores: Vec::new(),
        }
    }

    /// The support vectors.
    pub fn support(&self) -> &SupportSet {
        &self.support
    }

    /// Writes the L scores into `labels`; returns the threshold, 0.
    pub fn raw_scores(&self, x: &Features, labels: &mut [f64]) -> f64 {
        self.support.scores(x, labels, None);
        0.0
    }

    /// One PA step per label, in the kernel's feature space.
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        let mut scores = std::mem::take(&mut self.scores);
        scores.resize(self.num_labels, 0.0);
        self.support.scores(x, &mut scores, None);
        if all_finite(&scores) {
            signed_steps(&mut scores, relevant, |loss| {
                self.variant.tau(loss, 1.0, self.c)
            });
            if scores.iter().any(|&t| t != 0.0) {
                self.support.add(x, None, &scores);
                self.support.enforce_budget();
            }
        }
        self.scores = scores;
    }
}
