use super::{Compression, ModelError, SavedModel};
use flowboost_operators::boosters::{ModelOption, StageSummary};
use flowboost_operators::data::AttributeKind;
use flowboost_operators::engine::Position;
use flowboost_operators::learners::LearnerSummary;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

static HEAP_PROBE: OnceLock<fn() -> usize> = OnceLock::new();

/// Lets `inspect` measure a model's memory: `probe` returns the bytes the process has
/// allocated and not freed since some start, wrapping (the `flowboost` binary counts them
/// in its global allocator, from the first call on); `inspect` takes the difference of two
/// calls around the decoding.
pub fn set_heap_probe(probe: fn() -> usize) {
    let _ = HEAP_PROBE.set(probe);
}

/// What `flowboost inspect` reports about a model file.
#[derive(Clone, Debug, Serialize)]
pub struct Inspection {
    /// The file.
    pub file: String,
    /// Its size in bytes.
    pub file_bytes: u64,
    /// The bytes the loaded model takes in memory (its stages, terminal and pending
    /// events), when the binary can measure it.
    pub memory_bytes: Option<usize>,
    /// Seconds to read, check and decode the file into a model ready to run.
    pub load_seconds: f64,
    /// The format version.
    pub format: u32,
    /// The flowboost version that wrote it.
    pub flowboost: String,
    /// How the body is stored.
    pub compression: Compression,
    /// The algorithm.
    pub algorithm: String,
    /// What it is.
    pub about: String,
    /// The options it reads, with their values (and the seed).
    pub options: BTreeMap<String, String>,
    /// The task.
    pub task: String,
    /// The number of features.
    pub features: usize,
    /// How many of them are nominal.
    pub nominal_features: usize,
    /// The labels.
    pub labels: Vec<String>,
    /// Where its stream stood.
    pub position: Position,
    /// Events waiting for feedback.
    pub pending: usize,
    /// A Kafka job's checkpoint: where each source partition stands.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<super::SourceOffset>,
    /// A Kafka job's snapshot at its stream's end (its `--save-model` file, its last
    /// checkpoint).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub at_end: bool,
    /// A file with one model per key: each key's model (the fields above and below
    /// describe the first key's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<KeySummary>,
    /// Hedge's probabilities of the experts, for the boosters that use Hedge.
    pub hedge: Option<Vec<f64>>,
    /// Every stage.
    pub stages: Vec<StageSummary>,
    /// All learners together.
    pub total: LearnerSummary,
}

/// One key's model in a file with one model per key.
#[derive(Clone, Debug, Serialize)]
pub struct KeySummary {
    /// The key.
    pub key: String,
    /// Where its chain stood.
    pub position: Position,
    /// Its learners together.
    pub total: LearnerSummary,
}

/// The learners of a chain's stages together.
fn total_of(stages: &[StageSummary]) -> LearnerSummary {
    let mut total = LearnerSummary::default();
    for s in stages {
        total.kind = s.learner.kind.clone();
        total.trees += s.learner.trees;
        total.leaves += s.learner.leaves;
        total.inactive_leaves += s.learner.inactive_leaves;
        total.nodes += s.learner.nodes;
        total.depth = total.depth.max(s.learner.depth);
        total.weights += s.learner.weights;
        total.support_vectors += s.learner.support_vectors;
    }
    total
}

/// Reads a model file and describes it.
pub fn inspect(path: &Path) -> Result<Inspection, ModelError> {
    let name = path.display().to_string();
    let file_bytes = std::fs::metadata(path)
        .map_err(|e| ModelError::read(path, e))?
        .len();
    let started = std::time::Instant::now();
    let saved = SavedModel::read(path)?;
    let probe = HEAP_PROBE.get();
    let before = probe.map(|p| p());
    let mut chains = saved.chains(&name)?;
    let load_seconds = started.elapsed().as_secs_f64();
    let memory_bytes = match (probe, before) {
        (Some(p), Some(b)) => {
            // Frees of memory allocated before the first call count down too: a net
            // decrease wraps, and counts as nothing.
            let grown = p().wrapping_sub(b);
            let grown = if grown > isize::MAX as usize {
                0
            } else {
                grown
            };
            Some(grown + pending_bytes(&saved))
        }
        _ => None,
    };
    let h = &saved.header;
    let spec = h.config.algorithm.spec();
    let mut options: BTreeMap<String, String> = spec
        .reads
        .iter()
        .map(|o: &ModelOption| (o.flag().to_string(), o.value(&h.config)))
        .collect();
    options.insert("--seed".into(), h.config.seed.to_string());
    let keys: Vec<KeySummary> = h
        .keys
        .iter()
        .zip(&chains)
        .map(|(key, c)| {
            let stages: Vec<StageSummary> = c.stages.iter().map(|s| s.summary()).collect();
            KeySummary {
                key: key.clone(),
                position: c.position,
                total: total_of(&stages),
            }
        })
        .collect();
    let chain = chains.swap_remove(0);
    let stages: Vec<StageSummary> = chain.stages.iter().map(|s| s.summary()).collect();
    let total = total_of(&stages);
    Ok(Inspection {
        file: name,
        file_bytes,
        memory_bytes,
        load_seconds,
        format: h.format,
        flowboost: h.flowboost.clone(),
        compression: h.compression,
        algorithm: h.algorithm.clone(),
        about: spec.about.to_string(),
        options,
        task: h.schema.task.name().to_string(),
        features: h.schema.attributes.len(),
        nominal_features: h
            .schema
            .attributes
            .iter()
            .filter(|a| matches!(a.kind, AttributeKind::Nominal(_)))
            .count(),
        labels: h.schema.labels.clone(),
        position: h.position,
        pending: h.pending,
        offsets: h.offsets.clone(),
        at_end: h.at_end,
        keys,
        hedge: chain.terminal.hedge_probabilities(),
        stages,
        total,
    })
}

/// The join's share of memory: its serialized size (examples and predictions waiting), a
/// close lower bound.
fn pending_bytes(saved: &SavedModel) -> usize {
    saved
        .body
        .join
        .as_ref()
        .and_then(|j| postcard::to_allocvec(j).ok())
        .map_or(0, |b| b.len())
}

impl Inspection {
    /// The human-readable report.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let mb = |b: f64| b / 1e6;
        s.push_str(&format!(
            "{}: flowboost model, format {} (written by flowboost {}), {:.2} MB on disk{}, loaded in {:.3} s\n",
            self.file,
            self.format,
            self.flowboost,
            mb(self.file_bytes as f64),
            match self.memory_bytes {
                Some(m) => format!(", {:.2} MB in memory", mb(m as f64)),
                None => String::new(),
            },
            self.load_seconds
        ));
        s.push_str(&format!("algorithm: {} ({})\n", self.algorithm, self.about));
        let opts: Vec<String> = self
            .options
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!("options: {}\n", opts.join(" ")));
        s.push_str(&format!(
            "schema: {} task, {} features ({} nominal), {} labels\n",
            self.task,
            self.features,
            self.nominal_features,
            self.labels.len()
        ));
        s.push_str(&format!(
            "stream: {} events predicted, {} records learned from, {} pending feedback\n",
            self.position.events, self.position.learned, self.pending
        ));
        if !self.keys.is_empty() {
            s.push_str(&format!(
                "one model per key: {} keys (the learners below are the first key's)\n",
                self.keys.len()
            ));
            for k in &self.keys {
                s.push_str(&format!(
                    "  key {}: {} events predicted, {} records learned from, {} leaves, {} weights\n",
                    k.key, k.position.events, k.position.learned, k.total.leaves, k.total.weights
                ));
            }
        }
        let t = &self.total;
        s.push_str(&format!(
            "learners: {} x {}: {} trees, {} leaves, {} nodes, max depth {}, {} weights, {} support vectors\n",
            self.stages.len(),
            t.kind,
            t.trees,
            t.leaves,
            t.nodes,
            t.depth,
            t.weights,
            t.support_vectors
        ));
        for (i, st) in self.stages.iter().enumerate() {
            let l = &st.learner;
            let mut parts = Vec::new();
            if let Some(a) = st.alpha {
                parts.push(format!("alpha {a:.6}"));
            }
            if let Some(h) = &self.hedge
                && let Some(p) = h.get(i)
            {
                parts.push(format!("hedge {p:.4}"));
            }
            if l.trees > 0 {
                parts.push(format!(
                    "{} leaves, {} nodes, depth {}",
                    l.leaves, l.nodes, l.depth
                ));
                if l.inactive_leaves > 0 {
                    parts.push(format!(
                        "{} leaves inactive (memory budget)",
                        l.inactive_leaves
                    ));
                }
            }
            if l.weights > 0 {
                parts.push(format!("{} weights", l.weights));
            }
            if l.support_vectors > 0 {
                parts.push(format!("{} support vectors", l.support_vectors));
            }
            s.push_str(&format!("  stage {:>3}: {}\n", i + 1, parts.join(", ")));
        }
        s
    }
}
