use super::WeakSlot;
use crate::engine::{InFlight, Stage};
use serde::{Deserialize, Serialize};

/// One stage of OnlineMBBM (Jung, Goetz, Tewari 2017, Algorithm 1). PLACEHOLDER: being written; [`super::build`] refuses it until then.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnlineMbbmStage {
    weak: WeakSlot,
}

impl OnlineMbbmStage {
    /// A placeholder stage.
    pub fn placeholder(weak: WeakSlot) -> Self {
        OnlineMbbmStage { weak }
    }
}

impl Stage for OnlineMbbmStage {
    fn process(&mut self, _rec: &mut InFlight) {
        let _ = &self.weak;
    }
}
