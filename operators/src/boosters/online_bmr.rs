use super::WeakSlot;
use crate::engine::{InFlight, Stage};
use serde::{Deserialize, Serialize};

/// One stage of OnlineBMR (Jung, Tewari 2018, Algorithm 2). PLACEHOLDER: being written; [`super::build`] refuses it until then.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnlineBmrStage {
    weak: WeakSlot,
}

impl OnlineBmrStage {
    /// A placeholder stage.
    pub fn placeholder(weak: WeakSlot) -> Self {
        OnlineBmrStage { weak }
    }
}

impl Stage for OnlineBmrStage {
    fn process(&mut self, _rec: &mut InFlight) {
        let _ = &self.weak;
    }
}
