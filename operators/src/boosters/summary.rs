use super::AnyStage;
use crate::learners::{GridMemberSummary, LearnerSummary};
use crate::thresholding::ThresholdModel;
use serde::Serialize;

/// What one stage holds, for `flowboost inspect`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageSummary {
    /// The stage's learned weight alpha (the adaptive boosters), if it has one.
    pub alpha: Option<f64>,
    /// The weak learner's size.
    pub learner: LearnerSummary,
}

impl AnyStage {
    /// The stage's weight and the size of its learner.
    pub fn summary(&self) -> StageSummary {
        let (alpha, learner) = match self {
            AnyStage::Single(s) => (None, s.learner().summary()),
            AnyStage::OnlineBbm(s) => (None, s.learner().summary()),
            AnyStage::AdaBoostOl(s) => (Some(s.alpha()), s.learner().summary()),
            AnyStage::Oza(s) => (None, s.learner().summary()),
            AnyStage::OnlineMbbm(s) => (None, s.learner().summary()),
            AnyStage::AdaBoostOlm(s) => (Some(s.alpha()), s.learner().summary()),
            AnyStage::OnlineBmr(s) => (None, s.learner().summary()),
            AnyStage::AdaOlmr(s) => (Some(s.alpha()), s.learner().summary()),
            AnyStage::TopkBbm(s) => (None, s.learner().summary()),
            AnyStage::TopkAdaptive(s) => (Some(s.alpha()), s.learner().summary()),
            AnyStage::Threshold(s) => {
                let l = s.learner();
                let kind = match l.model() {
                    ThresholdModel::Falt(_) => "falt",
                    ThresholdModel::Salt(_) => "salt",
                    ThresholdModel::KernelFalt(_) => "falt-kernel",
                    ThresholdModel::PaBr(_) => "pa-br",
                    ThresholdModel::KernelPaBr(_) => "pa-br-kernel",
                    ThresholdModel::Grid(_) => "grid",
                };
                let grid = match l.model() {
                    ThresholdModel::Grid(g) => g
                        .settings()
                        .iter()
                        .zip(g.weights())
                        .enumerate()
                        .map(|(i, (&(eta, kernel_width), weight))| GridMemberSummary {
                            eta,
                            kernel_width,
                            weight,
                            leader: i == g.leader(),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                (
                    None,
                    LearnerSummary {
                        kind: kind.into(),
                        weights: l.num_weights(),
                        support_vectors: l.support_vectors(),
                        grid,
                        ..LearnerSummary::default()
                    },
                )
            }
        };
        StageSummary { alpha, learner }
    }
}
