use super::WeakSlot;
use crate::engine::{InFlight, Stage};
use serde::{Deserialize, Serialize};

/// One stage of Ada.OLMR (Jung, Tewari 2018, Algorithm 3). PLACEHOLDER: being written; [`super::build`] refuses it until then.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaOlmrStage {
    weak: WeakSlot,
}

impl AdaOlmrStage {
    /// A placeholder stage.
    pub fn placeholder(weak: WeakSlot) -> Self {
        AdaOlmrStage { weak }
    }
}

impl Stage for AdaOlmrStage {
    fn process(&mut self, _rec: &mut InFlight) {
        let _ = &self.weak;
    }
}
