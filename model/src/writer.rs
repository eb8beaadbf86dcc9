use super::{FeedbackRun, ModelError, Progress, SavedModel};
use flowboost_operators::boosters::BoosterConfig;
use flowboost_operators::data::Schema;
use flowboost_operators::engine::ChainSnapshot;
use std::path::PathBuf;
use std::time::Instant;

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
    /// Writes a snapshot of the run, with its progressive metrics and how it made its
    /// feedback, and says so on stderr (the file's size and the seconds the write took).
    pub fn write(
        &self,
        snapshot: ChainSnapshot,
        progress: Option<Progress>,
        feedback_run: Option<FeedbackRun>,
    ) -> Result<(), ModelError> {
        let model =
            SavedModel::from_snapshot(&self.config, &self.schema, snapshot, progress, feedback_run);
        self.write_model(&model)
    }

    /// Writes a model (made by [`SavedModel::from_snapshot`]) to the file, compressed if
    /// asked, and says so on stderr.
    pub fn write_model(&self, model: &SavedModel) -> Result<(), ModelError> {
        let start = Instant::now();
        let events = model.events();
        if self.compress {
            model.clone().compressed(true).write(&self.path)?;
        } else {
            model.write(&self.path)?;
        }
        let seconds = start.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        tracing::info!(
            events,
            path = %self.path.display(),
            bytes,
            seconds,
            "flowboost: saved the model after {events} events to {} ({:.2} MB in {seconds:.3} s, {:.0} MB/s)",
            self.path.display(),
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / seconds.max(1e-9)
        );
        Ok(())
    }
}
