use super::{ModelWriter, SavedModel};
use flowboost_operators::engine::SnapshotPolicy;
use std::sync::Arc;

/// What a run does with model files.
#[derive(Clone, Debug, Default)]
pub struct ModelPlan {
    /// The model to start from.
    pub start: Option<Arc<SavedModel>>,
    /// Continue the start model's stream (skip its events, keep its metrics and pending
    /// feedback).
    pub resume: bool,
    /// Where to save, if anywhere.
    pub save: Option<ModelWriter>,
    /// When to save.
    pub snapshots: SnapshotPolicy,
}
