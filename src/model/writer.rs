use super::{ModelError, Progress, SavedModel};
use flowboost_operators::boosters::BoosterConfig;
use flowboost_operators::data::Schema;
use flowboost_operators::engine::{ChainSnapshot, PendingEvents};
use std::path::PathBuf;

/// Where a run saves its model: the file (rewritten atomically at every snapshot, so it
/// always holds the last complete one), and what the header needs.
#[derive(Clone, Debug)]
pub struct ModelWriter {
    /// The model file.
    pub path: PathBuf,
    /// The model's configuration.
    pub config: BoosterConfig,
    /// The stream's schema.
    pub schema: Schema,
    /// Store the body DEFLATE-compressed.
    pub compress: bool,
}

impl ModelWriter {
    /// Writes a snapshot of the run, with its progressive metrics and a service's pending
    /// events.
    pub fn write(
        &self,
        snapshot: ChainSnapshot,
        progress: Option<Progress>,
        pending: Option<PendingEvents>,
    ) -> Result<(), ModelError> {
        SavedModel::from_snapshot(&self.config, &self.schema, snapshot, progress, pending)
            .compressed(self.compress)
            .write(&self.path)
    }
}
