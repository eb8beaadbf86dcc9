use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::thresholding::ThresholdLearner;
use serde::{Deserialize, Serialize};

/// One online multi-label classifier of the thresholding family (FALT, SALT, kernel FALT,
/// PA-I-BR, PA-II-BR) as the only stage of a chain: it writes each label's score relative
/// to its learned threshold, `x . w^(i) - x . w^(L+1)` (PA-BR: the raw score, threshold 0),
/// into the record, then learns from the record's label when it may. The terminal's
/// `positive` label-set rule then predicts `{i : score_i > 0}`, the paper's
/// `{i : x . w^(i) > x . w^(L+1)}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThresholdStage {
    learner: ThresholdLearner,
    #[serde(skip)]
    labels: Vec<u32>,
}

impl ThresholdStage {
    /// A stage around one learner.
    pub fn new(learner: ThresholdLearner) -> Self {
        ThresholdStage {
            learner,
            labels: Vec::new(),
        }
    }

    /// The learner.
    pub fn learner(&self) -> &ThresholdLearner {
        &self.learner
    }
}

impl Stage for ThresholdStage {
    fn process(&mut self, rec: &mut InFlight, _views: &mut SharedViews) {
        let ex = &*rec.example;
        self.learner
            .predict(&ex.features, &mut rec.scores, &mut self.labels);
        if let Some(label) = rec.label() {
            match label {
                Label::Set(ys) => self.learner.learn(&ex.features, ys),
                Label::Class(y) => self.learner.learn(&ex.features, std::slice::from_ref(y)),
            }
        }
    }
}
