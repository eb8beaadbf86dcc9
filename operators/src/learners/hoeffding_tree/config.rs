//! The tree's parameters: MOA's defaults, and the per-learner random parameters the
//! boosting papers draw for each of their weak learners.

use crate::rng::Rng;
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// How a leaf turns its statistics into a predicted distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeafPrediction {
    /// The leaf's normalized weighted class distribution.
    MajorityClass,
    /// Naive Bayes: the class prior times the per-attribute likelihoods (Gaussian for
    /// numeric attributes, Laplace-smoothed frequencies for nominal ones).
    NaiveBayes,
    /// Per leaf, majority class or naive Bayes, whichever has been more accurate (by
    /// weight) on the examples the leaf learned from, each predicted before learning it.
    NaiveBayesAdaptive,
}

/// Hoeffding tree parameters.
///
/// `Default` gives MOA's `HoeffdingTree` defaults; [`HoeffdingTreeConfig::randomized`]
/// gives the random parameters of the boosting papers' weak learners.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HoeffdingTreeConfig {
    /// Weight a leaf must see between two split attempts (MOA: 200). Keep it finite
    /// (JSON checkpoints cannot hold infinities); `max_depth: Some(0)` stops all growth.
    pub grace_period: f64,
    /// delta, the allowed probability of choosing the wrong split attribute, in `(0, 1)`
    /// (MOA: 1e-7).
    pub split_confidence: f64,
    /// tau: split anyway once the Hoeffding bound falls below this (MOA: 0.05).
    pub tie_threshold: f64,
    /// How leaves predict (MOA: naive Bayes adaptive).
    pub leaf_prediction: LeafPrediction,
    /// `Some(m)`: the tree looks only at `m` attributes drawn at construction (all of
    /// them when `m` is at least the number of attributes); `None`: all attributes.
    pub feature_subset: Option<usize>,
    /// Candidate thresholds per numeric attribute, evenly spaced between the smallest
    /// and largest value seen at the leaf (MOA: 10).
    pub split_points: usize,
    /// Leaves at this depth (the root has depth 0) stop splitting; `None`: no limit.
    pub max_depth: Option<usize>,
    /// A memory bound: no split that would make the tree exceed this many leaves (the
    /// leaves keep learning and predicting; the tree stops growing).
    pub max_leaves: Option<usize>,
}

impl Default for HoeffdingTreeConfig {
    fn default() -> Self {
        HoeffdingTreeConfig {
            grace_period: 200.0,
            split_confidence: 1e-7,
            tie_threshold: 0.05,
            leaf_prediction: LeafPrediction::NaiveBayesAdaptive,
            feature_subset: None,
            split_points: 10,
            max_depth: None,
            max_leaves: None,
        }
    }
}

/// The range of the random split confidence and tie threshold (log-uniform).
pub const RANDOM_CONFIDENCE_RANGE: (f64, f64) = (0.01, 0.9);
/// The range of the random grace period (uniform over the integers, both ends included).
pub const RANDOM_GRACE_RANGE: (u32, u32) = (5, 20);

impl HoeffdingTreeConfig {
    /// The per-learner random parameters of the boosting papers' experiments: split
    /// confidence log-uniform in `[0.01, 0.9]`, grace period a uniform integer in
    /// `5..=20`, tie threshold log-uniform in `[0.01, 0.9]`; everything else as in
    /// [`Default`] (set [`feature_subset`](Self::feature_subset) yourself, e.g. to
    /// `Some(20)` as in the multi-label papers).
    pub fn randomized(rng: &mut Rng) -> Self {
        let (lo, hi) = RANDOM_CONFIDENCE_RANGE;
        let log_uniform = |rng: &mut Rng| {
            let u: f64 = rng.random();
            (lo.ln() + u * (hi.ln() - lo.ln())).exp().clamp(lo, hi)
        };
        let split_confidence = log_uniform(rng);
        let grace_period = rng.random_range(RANDOM_GRACE_RANGE.0..=RANDOM_GRACE_RANGE.1) as f64;
        let tie_threshold = log_uniform(rng);
        HoeffdingTreeConfig {
            grace_period,
            split_confidence,
            tie_threshold,
            ..HoeffdingTreeConfig::default()
        }
    }
}
