use super::ThresholdStage;
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

/// What a thresholding stage holds: its model's kind and size (and a grid's members).
pub(super) fn threshold_summary(s: &ThresholdStage) -> StageSummary {
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
    StageSummary {
        alpha: None,
        learner: LearnerSummary {
            kind: kind.into(),
            weights: l.num_weights(),
            support_vectors: l.support_vectors(),
            grid,
            ..LearnerSummary::default()
        },
    }
}
