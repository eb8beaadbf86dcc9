use super::ModelError;
use super::body::{FeedbackRun, KeyModel, ModelBody, Progress, StageBytes};
use super::file;
use super::header::{Compression, FORMAT_VERSION, ModelHeader};
use flowboost_operators::boosters::{AnyStage, Booster, BoosterConfig, apply_settings, build};
use flowboost_operators::data::{AttributeKind, Schema};
use flowboost_operators::engine::{ChainSnapshot, Position, Terminal, decode};
use flowboost_operators::learners::WeakModel;
use std::path::Path;

/// A model as a file holds it: the header and the body.
#[derive(Clone, Debug)]
pub struct SavedModel {
    /// What the model is.
    pub header: ModelHeader,
    /// Its state.
    pub body: ModelBody,
    /// Where it was read from (the file's path), for messages; empty for a model made in
    /// memory.
    pub source: String,
}

impl SavedModel {
    /// A model of `config` on `schema` from a snapshot of its run, with the run's
    /// progressive metrics and how it made its feedback, if any.
    pub fn from_snapshot(
        config: &BoosterConfig,
        schema: &Schema,
        snapshot: ChainSnapshot,
        progress: Option<Progress>,
        feedback_run: Option<FeedbackRun>,
    ) -> Self {
        let waiting = snapshot.join.as_ref().map_or(0, |j| j.waiting());
        SavedModel {
            header: ModelHeader {
                format: FORMAT_VERSION,
                flowboost: env!("CARGO_PKG_VERSION").to_string(),
                algorithm: config.algorithm.name().to_string(),
                config: config.clone(),
                schema: schema.clone(),
                position: snapshot.position,
                stages: snapshot.stages.len(),
                pending: waiting,
                compression: Compression::None,
                offsets: Vec::new(),
                keys: Vec::new(),
                at_end: false,
            },
            body: ModelBody {
                stages: snapshot.stages.into_iter().map(StageBytes).collect(),
                terminal: snapshot.terminal,
                score_dim: snapshot.score_dim,
                position: snapshot.position,
                join: snapshot.join,
                source: snapshot.source,
                feedback_run,
                progress,
                keyed: snapshot.keyed.into_iter().map(KeyModel::from).collect(),
                key_progress: Vec::new(),
            },
            source: String::new(),
        }
    }

    /// Names the keys of a model with one model per key (the snapshot's chains, in key
    /// order) and gives each key's progressive metrics.
    pub fn with_keys(mut self, keys: Vec<String>, key_progress: Vec<Progress>) -> Self {
        self.header.keys = keys;
        self.body.key_progress = key_progress;
        self
    }

    /// Stores the body compressed (DEFLATE) or not.
    pub fn compressed(mut self, compress: bool) -> Self {
        self.header.compression = if compress {
            Compression::Deflate
        } else {
            Compression::None
        };
        self
    }

    /// Reads a model file (and checks that its header and body agree).
    pub fn read(path: &Path) -> Result<Self, ModelError> {
        let (header, body) = file::read_file(path)?;
        let model = SavedModel {
            header,
            body,
            source: path.display().to_string(),
        };
        model.check_consistent(&path.display().to_string())?;
        Ok(model)
    }

    /// Reads a model from bytes (`name` stands for the file in errors).
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Self, ModelError> {
        let (header, body) = file::read_bytes(bytes, name)?;
        let model = SavedModel {
            header,
            body,
            source: name.to_string(),
        };
        model.check_consistent(name)?;
        Ok(model)
    }

    /// Writes the model file atomically.
    pub fn write(&self, path: &Path) -> Result<(), ModelError> {
        file::write_file(path, &self.header, &self.body)
    }

    /// The model file's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::new();
        file::write_to(&mut out, &self.header, &self.body)
            .map_err(|e| ModelError::Invalid(e.to_string()))?;
        Ok(out)
    }

    fn check_consistent(&self, name: &str) -> Result<(), ModelError> {
        let bad = |detail: String| ModelError::Corrupted {
            file: name.to_string(),
            detail,
        };
        let h = &self.header;
        if h.algorithm != h.config.algorithm.name() {
            return Err(bad(format!(
                "the header names {} but its options are {}'s",
                h.algorithm, h.config.algorithm
            )));
        }
        // The header's options must describe the body before anything is built from
        // them: a model is built for the options' learner count (OnlineMBBM's potentials
        // grow with its cube), so a header that claims more learners than the body holds
        // is refused here, as is a schema beyond the limits.
        h.schema
            .check_limits()
            .map_err(|e| bad(format!("its header's schema: {e}")))?;
        let expected = if h.config.threshold_config().is_some() {
            1
        } else {
            h.config.algorithm.stages(h.config.learners)
        };
        if expected != h.stages {
            return Err(bad(format!(
                "the header's options ask for {expected} stage(s) (--learners {}), its stage count is {}",
                h.config.learners, h.stages
            )));
        }
        if h.stages != self.body.stages.len() {
            return Err(bad(format!(
                "the header counts {} stages, the body holds {}",
                h.stages,
                self.body.stages.len()
            )));
        }
        if h.position != self.body.position {
            return Err(bad("the header's and the body's positions differ".into()));
        }
        let others = h.keys.len().saturating_sub(1);
        if self.body.keyed.len() != others {
            return Err(bad(format!(
                "the header names {} key(s), the body holds {} more model(s)",
                h.keys.len(),
                self.body.keyed.len()
            )));
        }
        if !self.body.key_progress.is_empty() && self.body.key_progress.len() != h.keys.len() {
            return Err(bad(format!(
                "the header names {} key(s), the body has the metrics of {}",
                h.keys.len(),
                self.body.key_progress.len()
            )));
        }
        if let Some(k) = self.body.keyed.iter().find(|k| k.stages.len() != h.stages) {
            return Err(bad(format!(
                "the header counts {} stages, a key's model holds {}",
                h.stages,
                k.stages.len()
            )));
        }
        Ok(())
    }

    /// How messages name the model: its file, or "the model file".
    pub fn name(&self) -> &str {
        if self.source.is_empty() {
            "the model file"
        } else {
            &self.source
        }
    }

    /// The keys of a model with one model per key (empty for a model without keys).
    pub fn keys(&self) -> &[String] {
        &self.header.keys
    }

    /// The events taken by every model of the file: the one model's, or the sum over
    /// the keys' models (the header's `position` is the first key's only).
    pub fn events(&self) -> u64 {
        self.header.position.events
            + self
                .body
                .keyed
                .iter()
                .map(|k| k.position.events)
                .sum::<u64>()
    }

    /// The chain, ready to run: every stage decoded and the whole checked against a fresh
    /// build of the header's algorithm on its schema (same stages, same terminal shape).
    /// A file with one model per key has no one chain: see [`chains`](Self::chains).
    pub fn chain(&self, name: &str) -> Result<Booster, ModelError> {
        if !self.header.keys.is_empty() {
            return Err(ModelError::Mismatch {
                file: name.to_string(),
                detail: format!(
                    "it holds one model per key ({}): a Kafka job with `--keys {}` loads it",
                    self.header.keys.join(", "),
                    self.header.keys.join(",")
                ),
            });
        }
        self.chains(name).map(|mut c| c.remove(0))
    }

    /// Every model's chain, ready to run, in key order: one for a model without keys, one
    /// per key (the header's `keys`) otherwise; each checked as [`chain`](Self::chain)
    /// checks its one.
    pub fn chains(&self, name: &str) -> Result<Vec<Booster>, ModelError> {
        self.check_consistent(name)?;
        let mut fresh =
            build(&self.header.schema, &self.header.config).map_err(|e| ModelError::Corrupted {
                file: name.to_string(),
                detail: format!("its options do not build a model: {e}"),
            })?;
        let b = &self.body;
        let mut out =
            vec![self.decode_chain(name, &mut fresh, &b.stages, &b.terminal, b.position, "")?];
        for (i, k) in b.keyed.iter().enumerate() {
            let which = format!("key `{}`: ", self.header.keys[i + 1]);
            out.push(self.decode_chain(
                name,
                &mut fresh,
                &k.stages,
                &k.terminal,
                k.position,
                &which,
            )?);
        }
        Ok(out)
    }

    fn decode_chain(
        &self,
        name: &str,
        fresh: &mut Booster,
        stage_bytes: &[StageBytes],
        terminal: &Terminal,
        position: Position,
        which: &str,
    ) -> Result<Booster, ModelError> {
        let mut stages = Vec::with_capacity(stage_bytes.len());
        for (i, bytes) in stage_bytes.iter().enumerate() {
            let stage: AnyStage = decode(&bytes.0).map_err(|e| ModelError::Corrupted {
                file: name.to_string(),
                detail: format!("{which}stage {}: {e}", i + 1),
            })?;
            stages.push(stage);
        }
        let shape_ok = stages.len() == fresh.stages.len()
            && stages
                .iter()
                .zip(&fresh.stages)
                .all(|(a, b)| std::mem::discriminant(a) == std::mem::discriminant(b))
            && self.body.score_dim == fresh.score_dim
            && terminal.fits(&fresh.terminal);
        if !shape_ok {
            return Err(ModelError::Corrupted {
                file: name.to_string(),
                detail: format!(
                    "{which}its stages or terminal are not those of {} with its options",
                    self.header.algorithm
                ),
            });
        }
        // The weak learners must be those the options build (a header that says
        // `--weak linear` over a body of trees is refused).
        for (i, (a, b)) in stages.iter_mut().zip(fresh.stages.iter_mut()).enumerate() {
            let (found, wanted) = (weak_shape(a), weak_shape(b));
            if found != wanted {
                return Err(ModelError::Corrupted {
                    file: name.to_string(),
                    detail: format!(
                        "{which}stage {} holds {}, its header's options (--weak {}) build {}",
                        i + 1,
                        describe_weak(found),
                        self.header.config.weak.name(),
                        describe_weak(wanted)
                    ),
                });
            }
        }
        // A tree's memory budget and Oza's vote rule are not part of the stages' state:
        // the header's configuration gives them again.
        apply_settings(&mut stages, &self.header.config);
        Ok(Booster {
            stages,
            terminal: terminal.clone(),
            score_dim: self.body.score_dim,
            position,
        })
    }

    /// Checks that the model was trained on streams of `schema`; the error names the first
    /// difference.
    pub fn check_schema(&self, schema: &Schema, name: &str) -> Result<(), ModelError> {
        match schema_difference(&self.header.schema, schema) {
            None => Ok(()),
            Some(d) => Err(ModelError::Mismatch {
                file: name.to_string(),
                detail: format!("the model does not fit this stream: {d}"),
            }),
        }
    }
}

/// A stage's weak learner, as far as the options decide it: its kind and how many
/// Hoeffding trees it holds (`None` for a thresholding stage).
type WeakShape = Option<(&'static str, usize)>;

fn weak_shape(stage: &mut AnyStage) -> WeakShape {
    let w = stage.learner_mut()?;
    let kind = match w {
        WeakModel::Tree(_) => "a Hoeffding tree",
        WeakModel::Linear(_) => "a linear learner",
        WeakModel::LabelVsRest(_) => "a one-label learner",
        WeakModel::BinaryRelevance(_) => "a binary-relevance learner",
    };
    let mut trees = 0;
    w.for_each_tree_mut(&mut |_| trees += 1);
    Some((kind, trees))
}

fn describe_weak(shape: WeakShape) -> String {
    match shape {
        None => "no weak learner".into(),
        Some(("a Hoeffding tree", _)) => "a Hoeffding tree".into(),
        Some((kind, 0)) => kind.to_string(),
        Some((kind, 1)) => format!("{kind} over a Hoeffding tree"),
        Some((kind, n)) => format!("{kind} over {n} Hoeffding trees"),
    }
}

fn kind_name(kind: &AttributeKind) -> String {
    match kind {
        AttributeKind::Numeric => "numeric".into(),
        AttributeKind::Nominal(v) => format!("nominal with {} values", v.len()),
    }
}

/// The first difference between the schema a model was trained on and a stream's.
pub fn schema_difference(model: &Schema, stream: &Schema) -> Option<String> {
    if model.task != stream.task {
        return Some(format!(
            "the model's task is {}, the stream's {}",
            model.task.name(),
            stream.task.name()
        ));
    }
    if model.labels != stream.labels {
        return Some(format!(
            "the model's labels are [{}], the stream's [{}]",
            model.labels.join(", "),
            stream.labels.join(", ")
        ));
    }
    if model.attributes.len() != stream.attributes.len() {
        return Some(format!(
            "the model has {} features, the stream has {}",
            model.attributes.len(),
            stream.attributes.len()
        ));
    }
    for (j, (a, b)) in model.attributes.iter().zip(&stream.attributes).enumerate() {
        if a.name != b.name || a.kind != b.kind {
            return Some(format!(
                "feature {} is `{}` ({}) in the model and `{}` ({}) in the stream",
                j + 1,
                a.name,
                kind_name(&a.kind),
                b.name,
                kind_name(&b.kind)
            ));
        }
    }
    None
}
