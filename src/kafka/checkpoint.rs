//! Checkpoints of the Kafka job: the whole state at a completed epoch, as a model file.
//!
//! A checkpoint is a model file (`flowboost inspect` reads it, `--load-model` starts from
//! it) whose header also names the next offset of every source partition
//! ([`SourceOffset`]). The parts of the state (every worker's stage block, the terminal,
//! every worker's share of the feedback join, the merge's position) travel through the
//! dataflow to worker 0 of process 0 with a checkpoint marker; that worker writes the one
//! file atomically (a temporary file, fsync, rename, directory fsync), so a directory never
//! shows a partial checkpoint: the rename is the manifest.
//!
//! Files are `checkpoint-SEQ-OFFSETS.fbm`: `SEQ` the merged sequence's next position
//! (events and feedback), `OFFSETS` the sum of the source offsets (which also moves past
//! dead letters), both zero-padded, so names sort by age and two checkpoints share a name
//! only if they are the same cut. The newest `keep` are kept.
//!
//! Beside them, the file `committed` names the newest checkpoint whose outputs were
//! committed (with transactions: once its transaction committed; without: once it is
//! durable, as a restart resumes from it), rewritten atomically after each commit and at a
//! restart. Readers such as `flowboost serve --follow DIR` serve only that one: the newest
//! file can be a checkpoint whose transaction a crash left uncommitted, which the restarted
//! job deletes.

use super::job_config::JobConfig;
use crate::model::{ModelError, SavedModel, SourceOffset};
use flowboost_connectors::kafka::{KafkaSink, OffsetCommitter, admin};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A directory of checkpoints.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    dir: PathBuf,
    keep: usize,
}

/// The marker file's name in a checkpoint directory.
const COMMITTED: &str = "committed";

/// Where each source partition stands: `(topic, partition)` to the next offset.
pub type OffsetMap = BTreeMap<(String, i32), i64>;

/// The checkpoint a job resumes from, and why.
#[derive(Debug)]
pub struct Restore {
    /// The file.
    pub path: PathBuf,
    /// The model in it.
    pub model: SavedModel,
}

impl Checkpoints {
    /// Checkpoints in `dir` (created if missing), keeping the newest `keep` (at least 2:
    /// the newest may be written but not yet committed when the job stops).
    pub fn open(dir: &Path, keep: usize) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--checkpoint-dir {}: {e}", dir.display()))?;
        if !dir.is_dir() {
            return Err(format!(
                "--checkpoint-dir {}: not a directory",
                dir.display()
            ));
        }
        Ok(Checkpoints {
            dir: dir.to_path_buf(),
            keep: keep.max(2),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The checkpoint files, newest first.
    pub fn list(&self) -> Result<Vec<PathBuf>, String> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| format!("--checkpoint-dir {}: {e}", self.dir.display()))?;
        let mut files: Vec<((u64, u64), PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (seq, sum) = name
                    .strip_prefix("checkpoint-")?
                    .strip_suffix(".fbm")?
                    .split_once('-')?;
                Some(((seq.parse().ok()?, sum.parse().ok()?), e.path()))
            })
            .collect();
        files.sort_unstable_by_key(|f| std::cmp::Reverse(f.0));
        Ok(files.into_iter().map(|(_, p)| p).collect())
    }

    /// The marker naming the newest committed checkpoint.
    fn marker(&self) -> PathBuf {
        self.dir.join(COMMITTED)
    }

    /// Records `path` (a checkpoint of this directory) as the newest committed one: a
    /// temporary file renamed over the marker, so readers see the old name or the new.
    /// `None` removes the marker (nothing committed: the job starts afresh).
    pub fn mark_committed(&self, path: Option<&Path>) -> Result<(), String> {
        let marker = self.marker();
        let Some(path) = path else {
            return match std::fs::remove_file(&marker) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("{}: {e}", marker.display()))
                }
                _ => Ok(()),
            };
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{}: not a checkpoint file", path.display()))?;
        let mut tmp = marker.clone().into_os_string();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, format!("{name}\n"))
            .and_then(|()| std::fs::rename(&tmp, &marker))
            .map_err(|e| format!("{}: {e}", marker.display()))
    }

    /// The newest committed checkpoint, as the marker names it (`None` before the first
    /// commit, or in a directory of a job that did not write one).
    pub fn committed(&self) -> Result<Option<PathBuf>, String> {
        let marker = self.marker();
        let text = match std::fs::read_to_string(&marker) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", marker.display())),
        };
        let name = text.trim_end_matches('\n');
        let valid = name.starts_with("checkpoint-")
            && name.ends_with(".fbm")
            && !name.contains(['/', '\0', '\n']);
        if !valid {
            return Err(format!(
                "{}: does not name a checkpoint file",
                marker.display()
            ));
        }
        Ok(Some(self.dir.join(name)))
    }

    /// The file of `model`'s checkpoint.
    pub fn path_of(&self, model: &SavedModel) -> PathBuf {
        let seq = model
            .body
            .source
            .as_ref()
            .map_or(model.header.position.seq, |s| s.seq);
        let sum: i64 = model.header.offsets.iter().map(|o| o.offset.max(0)).sum();
        self.dir.join(format!("checkpoint-{seq:020}-{sum:020}.fbm"))
    }

    /// Writes `model` as the checkpoint at its position (atomically) and returns its path.
    pub fn write(&self, model: &SavedModel) -> Result<PathBuf, ModelError> {
        let path = self.path_of(model);
        model.write(&path)?;
        Ok(path)
    }

    /// Deletes the checkpoints newer than `kept` (all, with `None`): a transactional job
    /// that resumes from `kept` never committed their outputs, and their cuts will be
    /// taken again.
    pub fn drop_newer(&self, kept: Option<&Path>) -> Result<(), String> {
        for path in self.list()? {
            if Some(path.as_path()) == kept {
                break;
            }
            tracing::info!(
                path = %path.display(),
                "flowboost: kafka: deleting the checkpoint {}: its outputs were never committed",
                path.display()
            );
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Deletes all but the newest `keep` checkpoints (and temporary files of interrupted
    /// writes).
    pub fn prune(&self) -> Result<(), String> {
        for old in self.list()?.into_iter().skip(self.keep) {
            std::fs::remove_file(&old).map_err(|e| format!("{}: {e}", old.display()))?;
        }
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.filter_map(Result::ok) {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("checkpoint-") && name.contains(".fbm.tmp.") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }

    /// The checkpoint to resume from, or `None` to start afresh.
    ///
    /// With `committed` (the group's committed offsets, as a transactional job commits
    /// them together with each checkpoint's outputs): the newest checkpoint whose offsets
    /// are exactly those; none when nothing is committed (no checkpoint's outputs were);
    /// an error when offsets are committed but no checkpoint has them (another job's
    /// group, or a directory that lost its checkpoints: resuming would repeat or lose
    /// outputs). Without (at-least-once): the newest readable checkpoint.
    ///
    /// A file that cannot be read (damaged, truncated) is skipped with a warning naming it.
    pub fn choose(&self, committed: Option<&OffsetMap>) -> Result<Option<Restore>, String> {
        let mut newest_offsets: Option<OffsetMap> = None;
        for path in self.list()? {
            let model = match SavedModel::read(&path) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, "flowboost: kafka: skipping the checkpoint {e}");
                    continue;
                }
            };
            let offsets = offset_map(&model.header.offsets);
            match committed {
                None => return Ok(Some(Restore { path, model })),
                Some(c) if c.is_empty() => {
                    tracing::info!(
                        ignored = %path.display(),
                        "flowboost: kafka: the group has no committed offsets, so no checkpoint's outputs were committed: starting afresh (ignoring {})",
                        path.display()
                    );
                    return Ok(None);
                }
                Some(c) if matches(&offsets, c) => return Ok(Some(Restore { path, model })),
                Some(_) => {
                    newest_offsets.get_or_insert(offsets);
                }
            }
        }
        match committed {
            Some(c) if !c.is_empty() => Err(format!(
                "the group's committed offsets ({}) are those of no checkpoint in {}{}: resuming would repeat or lose outputs. Use a new --group (and a new --checkpoint-dir) to start afresh",
                describe(c),
                self.dir.display(),
                newest_offsets
                    .map(|o| format!(" (the newest has {})", describe(&o)))
                    .unwrap_or_default()
            )),
            _ => Ok(None),
        }
    }
}

/// The job's group's committed offsets on its source and feedback topics (partitions
/// without one left out), as the job's transactions left them.
///
/// With transactions, offsets added to a transaction that a crash left open are pending
/// until it is aborted, and reading them waits for that. Process 0 (whose worker 0 owns
/// the job's transactional producer) fences the crashed incarnation first, which aborts
/// the transaction at once; the other processes wait for it longer (4 times the client
/// time limit, at least a minute) instead.
pub fn committed_offsets(job: &JobConfig) -> Result<OffsetMap, String> {
    let mut kafka = job.kafka();
    // The partitions first: a metadata request fails within seconds when the cluster
    // cannot be reached or refuses the credentials (fencing would wait out its own time
    // limit).
    let mut partitions = Vec::new();
    for topic in job.input_topics() {
        let p = admin::topic_partitions(&kafka, topic)
            .map_err(|e| super::client_args::kafka_error(format_args!("kafka:{topic}"), e))?;
        partitions.push((topic, p));
    }
    if job.sink.transactional() {
        if job.run.cluster.process == 0 {
            let id = job.transactional_id();
            KafkaSink::fence(&kafka, &id).map_err(|e| e.to_string())?;
        } else {
            let wait = (kafka.timeout * 4).max(Duration::from_secs(60));
            kafka = kafka.with_timeout(wait);
        }
    }
    let committer =
        OffsetCommitter::new(&kafka, &job.connection.group).map_err(|e| e.to_string())?;
    let mut out = OffsetMap::new();
    for (topic, partitions) in partitions {
        let keys: Vec<(&str, i32)> = partitions.iter().map(|&p| (topic.as_str(), p)).collect();
        let committed = committer.committed(&keys).map_err(|e| e.to_string())?;
        for (p, c) in partitions.iter().zip(committed) {
            if let Some(offset) = c {
                out.insert((topic.clone(), *p), offset);
            }
        }
    }
    Ok(out)
}

/// The offsets of a checkpoint's header as a map.
pub fn offset_map(offsets: &[SourceOffset]) -> OffsetMap {
    offsets
        .iter()
        .map(|o| ((o.topic.clone(), o.partition), o.offset))
        .collect()
}

/// Whether a checkpoint's offsets are the committed ones: equal on every partition the
/// checkpoint names, and no committed partition it does not name.
fn matches(checkpoint: &OffsetMap, committed: &OffsetMap) -> bool {
    checkpoint
        .iter()
        .all(|(k, o)| committed.get(k).is_some_and(|c| c == o))
        && committed.keys().all(|k| checkpoint.contains_key(k))
}

fn describe(offsets: &OffsetMap) -> String {
    offsets
        .iter()
        .map(|((t, p), o)| format!("{t}[{p}]@{o}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, i32, i64)]) -> OffsetMap {
        entries
            .iter()
            .map(|&(t, p, o)| ((t.to_string(), p), o))
            .collect()
    }

    #[test]
    fn a_checkpoint_matches_only_the_exact_committed_offsets() {
        let c = map(&[("e", 0, 10), ("e", 1, 7), ("f", 0, 3)]);
        assert!(matches(&c, &c));
        assert!(!matches(
            &c,
            &map(&[("e", 0, 10), ("e", 1, 8), ("f", 0, 3)])
        ));
        // A committed partition the checkpoint does not name.
        let mut more = c.clone();
        more.insert(("f".into(), 1), 0);
        assert!(!matches(&c, &more));
        // A partition of the checkpoint without a committed offset.
        assert!(!matches(&c, &map(&[("e", 0, 10), ("e", 1, 7)])));
    }

    #[test]
    fn the_committed_marker_names_a_checkpoint_or_nothing() {
        let dir = std::env::temp_dir().join(format!("fb-marker-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let c = Checkpoints::open(&dir, 2).unwrap();
        assert_eq!(c.committed().unwrap(), None);
        let file = dir.join("checkpoint-00000000000000000007-00000000000000000009.fbm");
        c.mark_committed(Some(&file)).unwrap();
        assert_eq!(c.committed().unwrap(), Some(file));
        // The marker is not a checkpoint.
        assert!(c.list().unwrap().is_empty());
        c.mark_committed(None).unwrap();
        assert_eq!(c.committed().unwrap(), None);
        c.mark_committed(None).unwrap();
        for bad in ["../etc/passwd", "checkpoint-1/../../x.fbm", "model.fbm", ""] {
            std::fs::write(dir.join(COMMITTED), bad).unwrap();
            let e = c.committed().unwrap_err();
            assert!(e.contains("does not name a checkpoint file"), "{bad}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
