//! Online multi-label classification with adaptive label thresholding (FALT, SALT,
//! kernel FALT) and the PA-BR baselines; a learned threshold on boosted scores.
//!
//! The algorithms of Zhai, Tang, Wang, "Adaptive label thresholding methods for online
//! multi-label classification" (Pattern Recognition): a multi-label classifier
//! `W = [w^(1) .. w^(L), w^(L+1)]` scores each label with `x . w^(i)` and the threshold with
//! `x . w^(L+1)`, predicts `{i : x . w^(i) > x . w^(L+1)}`, and learns scores and threshold
//! together on the ALT loss ([`loss`], eq. 4). See `docs/thresholding.md`.
//!
//! * [`falt::Falt`]: online gradient descent (eq. 6);
//! * [`salt::Salt`]: adaptive mirror descent with a diagonal AdaGrad matrix (Algorithm 3);
//! * [`kernel_falt::KernelFalt`]: FALT with an RBF kernel (section 5), optional budget;
//! * [`passive_aggressive`]: the PA-I-BR and PA-II-BR baselines, linear and RBF;
//! * [`score_threshold::ScoreThreshold`]: the ALT threshold alone, learned on top of an
//!   external score vector.
//!
//! Beyond the paper:
//!
//! * [`scaling::OnlineMinMax`]: online per-feature min-max scaling kept in the model;
//! * [`grid::HedgeGrid`]: several settings side by side, predicting with the member of
//!   least progressive loss by Hedge's weights.
//!
//! [`ThresholdLearner`] dispatches over the first four (or a grid of them) from a
//! [`ThresholdConfig`], with the configured scaling in front.
//!
//! **Input rule.** Non-finite feature values (NaN, the readers' missing value, and ±inf)
//! are treated as 0, as are indices beyond the model's dimension; sparse vectors are
//! visited through their stored entries only, and a dense and a sparse vector with the
//! same values give bit-identical results. Relevant labels are a sorted slice of label
//! indices (indices `>= L` are ignored).

pub mod config;
pub mod falt;
pub mod grid;
pub mod kernel;
pub mod kernel_falt;
pub mod linalg;
pub mod loss;
pub mod passive_aggressive;
pub mod salt;
pub mod scaling;
pub mod score_threshold;

pub use config::{ThresholdAlgorithm, ThresholdConfig, ThresholdConfigError, ThresholdGrid};
pub use grid::HedgeGrid;
pub use scaling::{FeatureScaling, OnlineMinMax};
pub use score_threshold::{ScoreThreshold, ScoreThresholdConfig};

use crate::data::Features;
use falt::Falt;
use kernel_falt::KernelFalt;
use passive_aggressive::{KernelPaBr, PaBr, PaVariant};
use salt::Salt;
use serde::{Deserialize, Serialize};

/// The model behind a [`ThresholdLearner`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ThresholdModel {
    /// FALT(l).
    Falt(Falt),
    /// SALT.
    Salt(Salt),
    /// FALT(k).
    KernelFalt(KernelFalt),
    /// PA-I-BR(l) or PA-II-BR(l).
    PaBr(PaBr),
    /// PA-I-BR(k) or PA-II-BR(k).
    KernelPaBr(KernelPaBr),
    /// Beyond the paper: several FALT, SALT or FALT(k) models chosen online by Hedge.
    Grid(HedgeGrid),
}

/// One online multi-label classifier of the thresholding family, chosen by a
/// [`ThresholdConfig`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThresholdLearner {
    num_labels: usize,
    model: ThresholdModel,
    /// Online min-max statistics when the configuration scales the features (absent in
    /// model files written before scaling existed: raw features).
    #[serde(default)]
    scaler: Option<OnlineMinMax>,
}

impl ThresholdLearner {
    /// A new (zero) model for `dim` features and `num_labels` labels. `seed` is accepted
    /// for uniformity with the other learners; every algorithm here is deterministic and
    /// does not use it. An invalid configuration, or `num_labels == 0`, is an error that
    /// names the parameter.
    pub fn new(
        config: &ThresholdConfig,
        dim: usize,
        num_labels: usize,
        seed: u64,
    ) -> Result<Self, ThresholdConfigError> {
        let _ = seed;
        config.validate()?;
        if num_labels == 0 {
            return Err(ThresholdConfigError::NoLabels);
        }
        if u32::try_from(num_labels).is_err() {
            return Err(ThresholdConfigError::TooManyLabels(num_labels));
        }
        let c = config;
        let scaler = (c.scaling == FeatureScaling::MinMax).then(|| OnlineMinMax::new(dim));
        if let Some(grid) = &c.grid {
            let members = grid.members(c);
            let settings = members.iter().map(|m| (m.eta, m.kernel_width)).collect();
            let learners = members
                .iter()
                .map(|m| ThresholdLearner::new(m, dim, num_labels, seed))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(ThresholdLearner {
                num_labels,
                model: ThresholdModel::Grid(HedgeGrid::new(learners, settings)),
                scaler,
            });
        }
        let model =
            match (c.algorithm, c.kernel_width) {
                (ThresholdAlgorithm::Falt, None) => {
                    ThresholdModel::Falt(Falt::new(dim, num_labels, c.eta, c.repetitions))
                }
                (ThresholdAlgorithm::Falt, Some(width)) => ThresholdModel::KernelFalt(
                    KernelFalt::new(dim, num_labels, c.eta, c.repetitions, width, c.budget),
                ),
                (ThresholdAlgorithm::Salt, _) => {
                    ThresholdModel::Salt(Salt::new(dim, num_labels, c.eta, c.delta, c.repetitions))
                }
                (ThresholdAlgorithm::Pa1Br | ThresholdAlgorithm::Pa2Br, width) => {
                    let variant = if c.algorithm == ThresholdAlgorithm::Pa1Br {
                        PaVariant::One
                    } else {
                        PaVariant::Two
                    };
                    match width {
                        None => ThresholdModel::PaBr(PaBr::new(dim, num_labels, variant, c.c)),
                        Some(width) => ThresholdModel::KernelPaBr(KernelPaBr::new(
                            dim, num_labels, variant, c.c, width, c.budget,
                        )),
                    }
                }
            };
        Ok(ThresholdLearner {
            num_labels,
            model,
            scaler,
        })
    }

    /// The number of labels L.
    pub fn num_labels(&self) -> usize {
        self.num_labels
    }

    /// The model.
    pub fn model(&self) -> &ThresholdModel {
        &self.model
    }

    /// The online scaling statistics, when the features are scaled.
    pub fn scaler(&self) -> Option<&OnlineMinMax> {
        self.scaler.as_ref()
    }

    /// Predicts for `x`: writes into `scores` (length L) each label's score relative to
    /// the threshold, `x . w^(i) - x . w^(L+1)` (for PA-BR the raw score, its threshold
    /// being 0), so that ranking metrics can use them; fills `labels` with the predicted
    /// set `{i : x . w^(i) > x . w^(L+1)}`, sorted; returns the threshold score.
    ///
    /// # Panics
    /// If `scores.len()` is not L.
    pub fn predict(&self, x: &Features, scores: &mut [f64], labels: &mut Vec<u32>) -> f64 {
        assert_eq!(
            scores.len(),
            self.num_labels,
            "scores needs one entry per label"
        );
        let scaled;
        let x = match &self.scaler {
            Some(s) => {
                scaled = s.apply(x);
                &scaled
            }
            None => x,
        };
        let threshold = match &self.model {
            ThresholdModel::Grid(g) => return g.predict(x, scores, labels),
            ThresholdModel::Falt(m) => m.raw_scores(x, scores),
            ThresholdModel::Salt(m) => m.raw_scores(x, scores),
            ThresholdModel::KernelFalt(m) => m.raw_scores(x, scores),
            ThresholdModel::PaBr(m) => m.raw_scores(x, scores),
            ThresholdModel::KernelPaBr(m) => m.raw_scores(x, scores),
        };
        labels.clear();
        for (i, s) in scores.iter_mut().enumerate() {
            if *s > threshold {
                labels.push(i as u32);
            }
            *s -= threshold;
        }
        threshold
    }

    /// Learns one example with its relevant labels (sorted). With online scaling, the
    /// example first joins the statistics and is then learned scaled.
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        if let ThresholdModel::Grid(g) = &mut self.model {
            // The members' losses on x as a prediction saw it, before x joins the scaling
            // statistics: each member's progressive loss.
            match &self.scaler {
                Some(s) => g.suffer(&s.apply(x), relevant),
                None => g.suffer(x, relevant),
            }
        }
        let scaled;
        let x = match &mut self.scaler {
            Some(s) => {
                s.observe(x);
                scaled = s.apply(x);
                &scaled
            }
            None => x,
        };
        match &mut self.model {
            ThresholdModel::Grid(g) => g.learn(x, relevant),
            ThresholdModel::Falt(m) => m.learn(x, relevant),
            ThresholdModel::Salt(m) => m.learn(x, relevant),
            ThresholdModel::KernelFalt(m) => m.learn(x, relevant),
            ThresholdModel::PaBr(m) => m.learn(x, relevant),
            ThresholdModel::KernelPaBr(m) => m.learn(x, relevant),
        }
    }

    /// The number of weights of a linear model (0 for the kernel models).
    pub fn num_weights(&self) -> usize {
        match &self.model {
            ThresholdModel::Falt(m) => m.num_weights(),
            ThresholdModel::Salt(m) => m.num_weights(),
            ThresholdModel::PaBr(m) => m.num_weights(),
            ThresholdModel::Grid(g) => g.members().iter().map(|m| m.num_weights()).sum(),
            _ => 0,
        }
    }

    /// The number of support vectors (0 for the linear models).
    pub fn support_vectors(&self) -> usize {
        match &self.model {
            ThresholdModel::KernelFalt(m) => m.support().len(),
            ThresholdModel::KernelPaBr(m) => m.support().len(),
            ThresholdModel::Grid(g) => g.members().iter().map(|m| m.support_vectors()).sum(),
            _ => 0,
        }
    }
}
