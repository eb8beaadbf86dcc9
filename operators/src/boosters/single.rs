use super::WeakSlot;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use serde::{Deserialize, Serialize};

/// One weak learner alone (`single`): its predicted distribution is the score vector; it
/// learns every labeled example with weight 1 (a multi-label example as one single-label
/// example per relevant label, each with weight 1).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SingleStage {
    weak: WeakSlot,
}

impl SingleStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// A stage around one weak learner.
    pub fn new(weak: WeakSlot) -> Self {
        SingleStage { weak }
    }
}

impl Stage for SingleStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let ex = &*rec.example;
        let p = self.weak.predict(&ex.features, views);
        rec.scores.copy_from_slice(p);
        match rec.label() {
            Some(Label::Class(y)) => self.weak.learn(&ex.features, *y, 1.0, views),
            Some(Label::Set(ys)) => {
                for &y in ys {
                    self.weak.learn(&ex.features, y, 1.0, views);
                }
            }
            None => {}
        }
    }
}
