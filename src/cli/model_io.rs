//! The options that save and load models (`eval`, `run`, the Kafka job).

use crate::model::{ModelPlan, ModelWriter, SavedModel};
use clap::Args;
use flowboost_operators::boosters::BoosterConfig;
use flowboost_operators::data::Schema;
use flowboost_operators::engine::SnapshotPolicy;
use std::path::PathBuf;
use std::sync::Arc;

use super::args::ModelArgs;

/// Saving and loading the model.
#[derive(Debug, Args)]
#[command(next_help_heading = "Model files")]
pub struct ModelIoArgs {
    /// Save the model to this file at the end (atomically: a temporary file, fsync,
    /// rename). FILE must be a regular file (replaced) or a new path: a symbolic link, a
    /// directory, a device or a named pipe is refused (the rename would replace it). `flowboost inspect FILE` describes it; `--load-model` and `flowboost
    /// predict` read it.
    #[arg(long, value_name = "FILE")]
    pub save_model: Option<PathBuf>,
    /// Also save it every this many events (counted from the start of the stream), each
    /// save replacing the last, so the file always holds a complete model. Needs
    /// --save-model. At least 1.
    #[arg(long, value_name = "N", value_parser = super::limits::positive_u64, allow_negative_numbers = true)]
    pub save_every: Option<u64>,
    /// Store the saved model's body DEFLATE-compressed.
    #[arg(long)]
    pub compress_model: bool,
    /// Start from this model file instead of a fresh model and continue learning (read
    /// as its framing says, at most 16 GiB). The
    /// model options default to the file's; one given that differs from the file's, or a
    /// stream whose schema differs, is an error naming the difference.
    #[arg(long, value_name = "FILE")]
    pub load_model: Option<PathBuf>,
    /// With --load-model: continue the model's own stream: skip the events it has already
    /// taken (its header's count), continue its progressive metrics and its pending
    /// feedback. Without it, the loaded model is a warm start on a new stream.
    #[arg(long)]
    pub resume: bool,
}

impl ModelIoArgs {
    /// Reads the start model, if any (before the data are opened: its seed drives the
    /// generator unless --seed is given).
    pub fn load(&self) -> Result<Option<Arc<SavedModel>>, String> {
        if self.resume && self.load_model.is_none() {
            return Err("--resume needs --load-model FILE".into());
        }
        if self.save_every.is_some() && self.save_model.is_none() {
            return Err("--save-every needs --save-model FILE".into());
        }
        if self.compress_model && self.save_model.is_none() {
            return Err(
                "--compress-model needs --save-model FILE (it compresses the saved model)".into(),
            );
        }
        match &self.load_model {
            Some(p) => Ok(Some(Arc::new(SavedModel::read(p)?))),
            None => Ok(None),
        }
    }

    /// The run's plan: the configuration (the command line's, or the start model's with
    /// the command line checked against it) and what to load and save.
    pub fn plan(
        &self,
        start: Option<Arc<SavedModel>>,
        model: &ModelArgs,
        schema: &Schema,
    ) -> Result<(BoosterConfig, ModelPlan), String> {
        let config = match &start {
            Some(saved) => {
                let name = self
                    .load_model
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                saved.check_schema(schema, &name)?;
                model
                    .over_saved(&saved.header.config)
                    .map_err(|e| format!("{name}: {e}"))?
            }
            None => {
                let config = model.booster_for(schema);
                model.check_applicable(config.algorithm)?;
                config
            }
        };
        model.check_schema(&config, schema)?;
        // A save path that cannot be saved to is refused before the run, not after it.
        if let Some(path) = &self.save_model {
            crate::model::check_save_path(path).map_err(|e| format!("--save-model {e}"))?;
        }
        let save = self.save_model.as_ref().map(|path| ModelWriter {
            path: path.clone(),
            config: config.clone(),
            schema: schema.clone(),
            compress: self.compress_model,
        });
        let snapshots = SnapshotPolicy {
            every: self.save_every,
            at_end: save.is_some(),
        };
        Ok((
            config,
            ModelPlan {
                start,
                resume: self.resume,
                save,
                snapshots,
            },
        ))
    }
}

/// The seed of a run: the command line's, else the start model's, else 1.
pub fn seed(model: &ModelArgs, start: Option<&SavedModel>) -> u64 {
    model
        .seed
        .or(start.map(|s| s.header.config.seed))
        .unwrap_or(1)
}
