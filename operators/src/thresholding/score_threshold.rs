//! A learned ALT threshold on top of external label scores (beyond the paper).
//!
//! Any scorer (e.g. a boosted ranker) gives `s in R^L` for `x`; `ScoreThreshold` learns
//! `theta(x) = v . [x; 1]` and predicts `{i : alpha z_i > theta(x)}`, where
//! `z_i = (s_i - mu) / sigma` are the scores on a standard scale and `alpha > 0` a learned
//! scale (below). It minimizes the ALT loss of eq. (4) with the label predictors frozen to
//! `alpha z_i` (the scores are given), so only the threshold predictor `v` (and the scale
//! `alpha`) learn, by the FALT step of eq. (6), at most M times per example:
//!
//! ```text
//! v     <- v     - eta (a / |Y| - b / |Ybar|) [x; 1]
//! alpha <- alpha - eta (sum_{j in Ybar} b_j z_j / |Ybar| - sum_{i in Y} a_i z_i / |Y|)
//! ```
//!
//! with `a_i`, `b_j` the margin indicators of eq. (6) and `alpha` kept `>= 1e-6` (a scale
//! that is not positive would turn the ranking over).
//!
//! **Scale.** The hinge margin 1 of the ALT loss fixes a unit, and external scores have
//! none (a boosted ranker's scores grow with the number of weak learners). With
//! `standardize` (the default) the scores are standardized online:
//! `s~_i = (s_i - mu) / sigma`, where `mu` and `sigma` are the running mean and the
//! population standard deviation of every score seen by [`ScoreThreshold::learn`] so far
//! (all labels, all examples; Welford's algorithm; `sigma = 1` until there are two
//! distinct values). The statistics are updated with an example's scores before the
//! example's threshold step. Standardization is one affine map per time step, shared by
//! all labels, so it keeps the ranking of the labels; with it the predicted sets do not
//! change when all scores are multiplied by a positive constant. Without it `z = s`.
//!
//! The hinge margin of the loss is 1, but standardized scores spread over about one unit,
//! so with the label scores frozen the margins could never be met and the loss would only
//! balance the numbers of margin violations. The learned scale `alpha` (on by default,
//! `learn_scale`) lets the loss choose the unit: it grows while the threshold separates
//! the labels and shrinks when the scores rank badly. Scaling `alpha` and `v` together
//! changes no prediction; `alpha` starts at 1.
//!
//! **Non-finite input.** Features follow the models' rule (non-finite values count as
//! 0). A label whose score is NaN is never predicted; an example with any non-finite
//! score is not learned (neither the statistics nor `v` change).

use super::ThresholdConfigError;
use super::linalg::for_each_active;
use super::loss::alt_terms;
use crate::data::Features;
use serde::{Deserialize, Serialize};

/// The smallest scale `alpha`.
const MIN_ALPHA: f64 = 1e-6;

/// Hyper-parameters of a [`ScoreThreshold`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScoreThresholdConfig {
    /// Step size eta (> 0).
    pub eta: f64,
    /// M (>= 1): the maximum number of threshold steps per example (stops at zero loss).
    pub repetitions: usize,
    /// Standardize the scores online (see the module documentation).
    pub standardize: bool,
    /// Learn the scale `alpha` of the scores (see the module documentation); `false`
    /// keeps `alpha = 1`.
    pub learn_scale: bool,
}

impl Default for ScoreThresholdConfig {
    /// `eta = 0.1`, `repetitions = 1`, `standardize = true`, `learn_scale = true`.
    fn default() -> Self {
        ScoreThresholdConfig {
            eta: 0.1,
            repetitions: 1,
            standardize: true,
            learn_scale: true,
        }
    }
}

impl ScoreThresholdConfig {
    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ThresholdConfigError> {
        if !(self.eta.is_finite() && self.eta > 0.0) {
            return Err(ThresholdConfigError::NotPositive {
                name: "eta",
                value: self.eta,
            });
        }
        if self.repetitions == 0 {
            return Err(ThresholdConfigError::NoRepetitions);
        }
        Ok(())
    }
}

/// A threshold `theta(x) = v . [x; 1]` learned by the ALT loss on external scores.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScoreThreshold {
    dim: usize,
    eta: f64,
    repetitions: usize,
    standardize: bool,
    learn_scale: bool,
    /// `v`: `dim` feature weights, then the bias.
    weights: Vec<f64>,
    /// `alpha`.
    alpha: f64,
    count: u64,
    mean: f64,
    m2: f64,
}

impl ScoreThreshold {
    /// A zero threshold for `dim` features. `seed` is accepted for uniformity with the
    /// other learners; the algorithm is deterministic and does not use it.
    pub fn new(
        config: &ScoreThresholdConfig,
        dim: usize,
        seed: u64,
    ) -> Result<Self, ThresholdConfigError> {
        let _ = seed;
        config.validate()?;
        Ok(ScoreThreshold {
            dim,
            eta: config.eta,
            repetitions: config.repetitions,
            standardize: config.standardize,
            learn_scale: config.learn_scale,
            weights: vec![0.0; dim + 1],
            alpha: 1.0,
            count: 0,
            mean: 0.0,
            m2: 0.0,
        })
    }

    /// `v_j` (`j == dim`: the bias).
    pub fn weight(&self, j: usize) -> f64 {
        self.weights[j]
    }

    /// The learned scale `alpha` of the standardized scores.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The current standardization `(mu, sigma)`: `(0, 1)` without standardization.
    pub fn scale(&self) -> (f64, f64) {
        if !self.standardize || self.count == 0 {
            return (0.0, 1.0);
        }
        let sigma = (self.m2 / self.count as f64).sqrt();
        if sigma > 0.0 && sigma.is_finite() {
            (self.mean, sigma)
        } else {
            (self.mean, 1.0)
        }
    }

    /// `theta(x) = v . [x; 1]`, on the standardized scale.
    pub fn standardized_threshold(&self, x: &Features) -> f64 {
        let mut t = 0.0;
        for_each_active(x, self.dim, |j, v| t += v * self.weights[j]);
        t + self.weights[self.dim]
    }

    /// Fills `labels` with `{i : alpha (s_i - mu) / sigma > theta(x)}` (sorted) and
    /// returns the threshold on the scale of the given scores, `mu + sigma theta(x) / alpha`.
    pub fn predict(&self, x: &Features, scores: &[f64], labels: &mut Vec<u32>) -> f64 {
        let (mu, sigma) = self.scale();
        let alpha = self.alpha;
        let theta = self.standardized_threshold(x);
        labels.clear();
        for (i, &s) in scores.iter().enumerate() {
            if alpha * ((s - mu) / sigma) > theta {
                labels.push(i as u32);
            }
        }
        mu + sigma * (theta / alpha)
    }

    /// Learns one example: updates the score statistics, then at most M steps on `v`.
    pub fn learn(&mut self, x: &Features, scores: &[f64], relevant: &[u32]) {
        if scores.iter().any(|s| !s.is_finite()) {
            return;
        }
        if self.standardize {
            for &s in scores {
                self.count += 1;
                let d = s - self.mean;
                self.mean += d / self.count as f64;
                self.m2 += d * (s - self.mean);
            }
        }
        let (mu, sigma) = self.scale();
        for _ in 0..self.repetitions {
            let theta = self.standardized_threshold(x);
            if !theta.is_finite() {
                break;
            }
            let alpha = self.alpha;
            let z = |i: usize| (scores[i] - mu) / sigma;
            // d loss / d alpha = sum_i g_i z_i (the label predictors are alpha z_i).
            let mut g_alpha = 0.0;
            let (loss, g) = alt_terms(
                scores.len(),
                |i| alpha * z(i),
                theta,
                relevant,
                |i, gi| {
                    if gi != 0.0 {
                        g_alpha += gi * z(i);
                    }
                },
            );
            if loss <= 0.0 {
                break;
            }
            let step = self.eta * g;
            let weights = &mut self.weights;
            for_each_active(x, self.dim, |j, v| weights[j] -= step * v);
            weights[self.dim] -= step;
            if self.learn_scale {
                self.alpha = (alpha - self.eta * g_alpha).max(MIN_ALPHA);
            }
        }
    }
}
