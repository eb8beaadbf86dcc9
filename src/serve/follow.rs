//! Following a streaming job's model (`--follow PATH`): a model file a job rewrites
//! (`--save-model` with `--save-every`), or a Kafka job's `--checkpoint-dir`. Newer files
//! are loaded off the request path and swapped in atomically; a file that does not load
//! (damaged, or not the served model's schema) is refused with a log line, and the old
//! model keeps serving.
//!
//! In a checkpoint directory, the checkpoint that the job's `committed` marker names is
//! followed: the newest whose outputs (with transactions, its offsets and predictions)
//! were committed. A newer file may be one whose transaction a crash left open, which the
//! restarted job deletes and never resumes from.

use super::model_slot::ModelSlot;
use super::served_model::ServedModel;
use crate::kafka::checkpoint::Checkpoints;
use crate::model::schema_difference;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What identifies one version of a followed file: its path, size, modification time and
/// inode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStamp {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    /// The inode: a file renamed into place is a new one, whatever its time and size.
    inode: u64,
}

impl FileStamp {
    /// The stamp of `path` now (`None` if it cannot be read).
    pub fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            path: path.to_path_buf(),
            len: m.len(),
            modified: m.modified().ok(),
            inode: std::os::unix::fs::MetadataExt::ino(&m),
        })
    }
}

/// Watches a followed path for newer models.
#[derive(Debug)]
pub struct Follower {
    target: PathBuf,
    /// The stamp of the last file tried (loaded or refused): it is not tried again until
    /// it changes.
    last: Option<FileStamp>,
}

impl Follower {
    /// Follows `target` (a model file, or a directory of checkpoints), `loaded` being the
    /// file serving now.
    pub fn new(target: &Path, loaded: Option<FileStamp>) -> Self {
        Follower {
            target: target.to_path_buf(),
            last: loaded,
        }
    }

    /// The model file to serve from the followed path: the file, or the directory's
    /// newest committed checkpoint.
    pub fn newest(target: &Path) -> Result<PathBuf, String> {
        Self::committed(target)?.ok_or_else(|| {
            format!(
                "--follow {}: no committed checkpoint in it yet",
                target.display()
            )
        })
    }

    /// The file, or the directory's newest committed checkpoint (`None` before the job's
    /// first commit).
    fn committed(target: &Path) -> Result<Option<PathBuf>, String> {
        if !target.is_dir() {
            return Ok(Some(target.to_path_buf()));
        }
        Checkpoints::open(target, 2)?.committed()
    }

    /// Looks once: a newer file than the last tried is loaded and, if it fits, swapped
    /// into `slot`. Returns whether a model was swapped in; a refused file is an error
    /// (logged by the caller), the old model serving on.
    pub fn poll(&mut self, slot: &ModelSlot) -> Result<bool, String> {
        let Some(path) = Self::committed(&self.target)? else {
            // A job that has not committed a checkpoint yet (serve started on another
            // --model).
            return Ok(false);
        };
        let Some(stamp) = FileStamp::of(&path) else {
            return Ok(false);
        };
        if self.last.as_ref() == Some(&stamp) {
            return Ok(false);
        }
        self.last = Some(stamp);
        let model = ServedModel::load(&path, slot.next_generation())?;
        let current = slot.current();
        if let Some(d) = schema_difference(current.schema(), model.schema()) {
            return Err(format!(
                "{}: not the served model's schema: {d}",
                path.display()
            ));
        }
        if current.keys().map(|k| k.names()) != model.keys().map(|k| k.names()) {
            return Err(format!("{}: not the served model's keys", path.display()));
        }
        slot.replace(model);
        Ok(true)
    }
}
