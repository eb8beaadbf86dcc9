use super::WeakSlot;
use crate::engine::{InFlight, Stage};
use serde::{Deserialize, Serialize};

/// One stage of AdaBoost.OLM (Jung, Goetz, Tewari 2017, Algorithm 2). PLACEHOLDER: being written; [`super::build`] refuses it until then.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaBoostOlmStage {
    weak: WeakSlot,
}

impl AdaBoostOlmStage {
    /// A placeholder stage.
    pub fn placeholder(weak: WeakSlot) -> Self {
        AdaBoostOlmStage { weak }
    }
}

impl Stage for AdaBoostOlmStage {
    fn process(&mut self, _rec: &mut InFlight) {
        let _ = &self.weak;
    }
}
