//! The model `serve` answers with: every key's [`Model`] of one model file, the record
//! decoder of its schema and the Kafka job's prediction encoder.

use super::api_error::ApiError;
use crate::kafka::ModelKeys;
use crate::model::{Feedback, FeedbackOutcome, Model, SavedModel, inspect};
use axum::http::StatusCode;
use flowboost_connectors::kafka::{
    DecodedEvent, PredictionEncoder, PredictionOutput, RecordDecoder, RecordFormat,
};
use flowboost_operators::boosters::Family;
use flowboost_operators::data::{Example, Schema};
use flowboost_operators::engine::ExpertSelection;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

/// One loaded model file, ready to answer: one [`Model`] per key (one for a model
/// without keys), each behind its own lock (a prediction advances a model's random
/// generator and learning changes it, so each key's model answers one request at a
/// time; a batch holds the locks of its keys from its first record to its last, so it
/// is answered by one consistent state of each).
#[derive(Debug)]
pub struct ServedModel {
    models: Vec<Mutex<Model>>,
    keys: Option<ModelKeys>,
    decoder: RecordDecoder,
    encoder: PredictionEncoder,
    /// What `flowboost inspect --json` prints about the file.
    inspection: Vec<u8>,
    path: PathBuf,
    /// The file's modification time.
    modified: Option<SystemTime>,
    /// When it was loaded.
    loaded: SystemTime,
    /// Records learned by all its models together (grows with `/v1/learn`).
    learned: AtomicU64,
    /// The slot's count of models loaded when this one came (1 for the first).
    generation: u64,
}

/// The scores of one impression of `POST /v1/rank`.
#[derive(Clone, Debug, PartialEq)]
pub struct RankScores {
    /// The request's id.
    pub id: u64,
    /// The key of the model, with one model per key.
    pub key: Option<String>,
    /// One score per item (label).
    pub scores: Vec<f64>,
    /// The model's version: the records it had learned from.
    pub version: u64,
}

/// What became of one record of `POST /v1/learn`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LearnAnswer {
    /// The record's id.
    pub id: u64,
    /// `learned` (a labeled event), or the feedback's fate: `joined`, `held` (its event
    /// was not predicted yet), `late` (its event expired), `repeated`.
    pub outcome: &'static str,
    /// The key of the model, with one model per key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The `"key"` of a feedback record (the codec reads the rest).
#[derive(Deserialize)]
struct FeedbackKey<'a> {
    #[serde(borrow, default)]
    key: Option<std::borrow::Cow<'a, str>>,
}

impl ServedModel {
    /// Loads a model file (every key's model of a keyed file), `generation` being its
    /// count in the slot.
    pub fn load(path: &Path, generation: u64) -> Result<Self, String> {
        let name = path.display().to_string();
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let saved = SavedModel::read(path)?;
        let inspection = inspect(path)?;
        if inspection.position != saved.header.position {
            return Err(format!("{name} changed while it was read: try again"));
        }
        let inspection = serde_json::to_vec(&inspection).map_err(|e| e.to_string())?;
        let keys = if saved.keys().is_empty() {
            None
        } else {
            Some(ModelKeys::parse(&saved.keys().join(","))?)
        };
        let schema = saved.header.schema.clone();
        let learned = saved.header.position.learned
            + saved
                .body
                .keyed
                .iter()
                .map(|k| k.position.learned)
                .sum::<u64>();
        let models = key_models(saved, &name)?
            .into_iter()
            .map(Mutex::new)
            .collect();
        Ok(ServedModel {
            models,
            keys,
            decoder: RecordDecoder::new(&schema, RecordFormat::Json),
            encoder: PredictionEncoder::new(&schema),
            inspection,
            path: path.to_path_buf(),
            modified,
            loaded: SystemTime::now(),
            learned: AtomicU64::new(learned),
            generation,
        })
    }

    /// The schema of its models (the one every request is decoded against).
    pub fn schema(&self) -> &Schema {
        self.decoder.schema()
    }

    /// The keys, with one model per key.
    pub fn keys(&self) -> Option<&ModelKeys> {
        self.keys.as_ref()
    }

    /// What `flowboost inspect --json` prints about its file.
    pub fn inspection(&self) -> &[u8] {
        &self.inspection
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's modification time.
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    /// When it was loaded.
    pub fn loaded(&self) -> SystemTime {
        self.loaded
    }

    /// Records learned by its models together: the file's, plus what `/v1/learn` taught.
    pub fn learned(&self) -> u64 {
        self.learned.load(Ordering::Relaxed)
    }

    /// Its count among the models the slot loaded (1 for the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Decodes one event and finds its model.
    fn decode_event(&self, record: &[u8]) -> Result<(usize, DecodedEvent), ApiError> {
        let event = self
            .decoder
            .decode_event(None, record)
            .map_err(|e| ApiError::decode(&e))?;
        let model = self.route(event.key.as_deref())?;
        Ok((model, event))
    }

    /// The model of a record with `key` (the one model without keys).
    fn route(&self, key: Option<&str>) -> Result<usize, ApiError> {
        match &self.keys {
            None => Ok(0),
            Some(keys) => keys
                .route(key)
                .map(|m| m as usize)
                .map_err(|(reason, message)| {
                    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, reason, message)
                        .with_field("key")
                }),
        }
    }

    /// Locks the models of `which` (in index order, so two batches cannot deadlock).
    fn lock(&self, which: impl Iterator<Item = usize>) -> Vec<Option<MutexGuard<'_, Model>>> {
        let mut wanted = vec![false; self.models.len()];
        for m in which {
            wanted[m] = true;
        }
        self.models
            .iter()
            .zip(wanted)
            .map(|(m, w)| w.then(|| m.lock().unwrap_or_else(|p| p.into_inner())))
            .collect()
    }

    /// Predicts every event of `records` (JSON events; nothing is predicted unless every
    /// one decodes) and encodes each answer as the Kafka job's prediction record. With
    /// `pending`, each event waits for its feedback (`/v1/learn` by id).
    pub fn predict(&self, records: &[&[u8]], pending: bool) -> Result<Vec<Vec<u8>>, ApiError> {
        let mut events = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let event = self
                .decode_event(r)
                .map_err(|e| indexed(e, i, records.len()))?;
            events.push(event);
        }
        let mut guards = self.lock(events.iter().map(|(m, _)| *m));
        let mut answers = Vec::with_capacity(events.len());
        for (m, event) in events {
            let Some(model) = guards[m].as_mut() else {
                continue;
            };
            let p = if pending {
                model.predict_pending(event.example)
            } else {
                model.predict_one(&event.example)
            };
            answers.push(self.encoder.encode(&PredictionOutput {
                id: p.id,
                class: p.class,
                labels: &p.labels,
                scores: &p.scores,
                expert: p.expert,
                model_version: p.version,
                shown: &p.shown,
                key: self.keys.as_ref().map(|k| k.name(m as u32)),
            }));
        }
        Ok(answers)
    }

    /// Whether its models are top-k boosters (which `/v1/rank` answers for), and how
    /// many items they show.
    pub fn top_k(&self) -> Option<usize> {
        let model = self
            .models
            .first()?
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let config = model.config();
        config
            .algorithm
            .is_topk()
            .then(|| config.topk.shown(self.schema().num_labels()))
    }

    /// The scores of every impression of `records` (JSON events; nothing is scored unless
    /// every one decodes), for `/v1/rank`. The same model state scores an impression the
    /// same way, whatever was ranked before: a booster that draws its expert (Hedge) is
    /// scored on a copy of the model (its generator untouched), the others directly (their
    /// scores are the last expert's; only their own randomized `shown`, not used here,
    /// draws from the generator).
    pub fn rank_scores(&self, records: &[&[u8]]) -> Result<Vec<RankScores>, ApiError> {
        let mut events = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let event = self
                .decode_event(r)
                .map_err(|e| indexed(e, i, records.len()))?;
            events.push(event);
        }
        let mut guards = self.lock(events.iter().map(|(m, _)| *m));
        let mut out = Vec::with_capacity(events.len());
        for (m, event) in events {
            let Some(model) = guards[m].as_mut() else {
                continue;
            };
            let draws_expert = matches!(
                model.config().algorithm.spec().family,
                Family::Booster {
                    selection: ExpertSelection::Hedge,
                    ..
                }
            );
            let p = if draws_expert {
                model.clone().predict_one(&event.example)
            } else {
                // The expert is the last one: the scores do not depend on the generator
                // (only the booster's own `shown`, not used here, does).
                model.predict_one(&event.example)
            };
            out.push(RankScores {
                id: event.example.id,
                key: self.keys.as_ref().map(|k| k.name(m as u32).to_string()),
                scores: p.scores,
                version: p.version,
            });
        }
        Ok(out)
    }

    /// Learns from every record of `records`: labeled events (learned at once) and
    /// feedback for events predicted earlier (`{"id", "label"}`, `{"id", "clicks"}`:
    /// through the feedback join, as the Kafka job joins them). Nothing is learned unless
    /// every record decodes.
    pub fn learn(&self, records: &[&[u8]]) -> Result<Vec<LearnAnswer>, ApiError> {
        let mut items = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let item = self
                .decode_learning(r)
                .map_err(|e| indexed(e, i, records.len()))?;
            items.push(item);
        }
        let mut guards = self.lock(items.iter().map(|(m, _)| *m));
        let mut answers = Vec::with_capacity(items.len());
        let mut learned = 0;
        for (m, item) in items {
            let Some(model) = guards[m].as_mut() else {
                continue;
            };
            let before = model.position().learned;
            let (id, outcome) = match item {
                Learning::Event(example) => {
                    model.learn_one(&example).map_err(|e| {
                        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
                    })?;
                    (example.id, "learned")
                }
                Learning::Feedback(id, feedback) => {
                    let outcome = match model.learn_feedback(id, feedback) {
                        FeedbackOutcome::Joined => "joined",
                        FeedbackOutcome::Held => "held",
                        FeedbackOutcome::Late => "late",
                        FeedbackOutcome::Repeated => "repeated",
                    };
                    (id, outcome)
                }
            };
            learned += model.position().learned.saturating_sub(before);
            answers.push(LearnAnswer {
                id,
                outcome,
                key: self.keys.as_ref().map(|k| k.name(m as u32).to_string()),
            });
        }
        self.learned.fetch_add(learned, Ordering::Relaxed);
        Ok(answers)
    }

    /// A record of `/v1/learn`: an event with `"features"` (which must be labeled), else
    /// feedback by id.
    fn decode_learning(&self, record: &[u8]) -> Result<(usize, Learning), ApiError> {
        let is_event = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(record)
            .map(|o| o.contains_key("features"))
            .unwrap_or(true);
        if is_event {
            let (m, event) = self.decode_event(record)?;
            if event.example.label.is_none() {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "missing_label",
                    format!(
                        "event {} has no label to learn from (give \"label\" or \"labels\")",
                        event.example.id
                    ),
                )
                .with_field("label"));
            }
            return Ok((m, Learning::Event(event.example)));
        }
        let feedback = self
            .decoder
            .decode_feedback(record)
            .map_err(|e| ApiError::decode(&e))?;
        let key = serde_json::from_slice::<FeedbackKey<'_>>(record)
            .ok()
            .and_then(|k| k.key.map(|k| k.into_owned()));
        let m = self.route(key.as_deref())?;
        let id = feedback.id;
        let feedback = match feedback.feedback {
            f @ (Feedback::Label(_) | Feedback::Clicks(_)) => f,
            _ => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "malformed",
                    "logged clicks with \"propensities\" are for replay-clicks and the Kafka job, not /v1/learn",
                )
                .with_field("propensities"));
            }
        };
        Ok((m, Learning::Feedback(id, feedback)))
    }

    /// Writes every key's model to `path` (atomically): one model file, as the file it
    /// was loaded from holds them.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let guards = self.lock(0..self.models.len());
        let mut models = guards.iter().flatten();
        let Some(first) = models.next() else {
            return Err("no model to save".into());
        };
        if self.models.len() == 1 {
            return first.save_file(path).map_err(|e| e.to_string());
        }
        // One model per key: the first key's model carries the others'.
        let mut saved = first.to_saved().map_err(|e| e.to_string())?;
        for m in models {
            let other = m.to_saved().map_err(|e| e.to_string())?;
            saved.body.keyed.push(crate::model::KeyModel {
                stages: other.body.stages,
                terminal: other.body.terminal,
                position: other.body.position,
            });
        }
        let keys = self
            .keys
            .as_ref()
            .map(|k| k.names().to_vec())
            .unwrap_or_default();
        saved
            .with_keys(keys, Vec::new())
            .write(path)
            .map_err(|e| e.to_string())
    }
}

/// A decoded record of `/v1/learn`.
enum Learning {
    Event(Example),
    Feedback(u64, Feedback),
}

/// A batch's error names its record.
fn indexed(e: ApiError, i: usize, n: usize) -> ApiError {
    if n > 1 { e.at(i) } else { e }
}

/// Every key's model of a model file, in key order (the one model of a file without
/// keys). Each key's model is its chain alone: the feedback waiting in a keyed file (the
/// job's join, shared by its keys) is not carried over.
fn key_models(saved: SavedModel, name: &str) -> Result<Vec<Model>, String> {
    if saved.keys().is_empty() {
        return Ok(vec![Model::from_saved(saved, name)?]);
    }
    let mut out = Vec::with_capacity(saved.keys().len());
    let mut header = saved.header.clone();
    header.keys = Vec::new();
    let mut first = saved.body.clone();
    first.keyed = Vec::new();
    first.key_progress = Vec::new();
    first.join = None;
    first.source = None;
    let mut bodies = vec![first.clone()];
    for k in &saved.body.keyed {
        let mut body = first.clone();
        body.stages = k.stages.clone();
        body.terminal = k.terminal.clone();
        body.position = k.position;
        body.progress = None;
        bodies.push(body);
    }
    for (key, body) in saved.keys().iter().zip(bodies) {
        let mut header = header.clone();
        header.position = body.position;
        let one = SavedModel {
            header,
            body,
            source: saved.source.clone(),
        };
        out.push(Model::from_saved(one, &format!("{name} (key `{key}`)"))?);
    }
    Ok(out)
}
