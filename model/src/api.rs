use super::{ModelError, SavedModel};
use flowboost_operators::boosters::{AnyStage, BoosterConfig, build};
use flowboost_operators::data::{Example, Feedback, FeedbackItem, Schema};
use flowboost_operators::engine::feedback::{
    JoinConfig, JoinReference, Pairing, WaitingEvent, learning_pass,
};
use flowboost_operators::engine::{InFlight, Position, Prediction, SequentialRunner, SourceState};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

/// How many calls of [`Model::predict_pending`] and [`Model::learn_feedback`] an event and
/// a feedback record wait for each other by default (each call is one epoch of the join):
/// an event whose feedback never comes is dropped after this many calls, so the memory of
/// a long-running model is bounded by what this many calls hold. Set another with
/// [`Model::with_pending_ttl`], or none with [`Model::without_pending_ttl`].
pub const DEFAULT_PENDING_TTL: u64 = 100_000;

/// What became of a feedback record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackOutcome {
    /// It met its event: the model learned from it.
    Joined,
    /// No event with its id waits (yet): it waits for it.
    Held,
    /// Its event expired before it came.
    Late,
    /// Its event already had its feedback.
    Repeated,
}

/// One model, one example at a time, River-style: [`predict_one`](Model::predict_one),
/// [`learn_one`](Model::learn_one), delayed feedback by event id, and
/// [`save`](Model::save) / [`load`](Model::load) in the model file format (a model saved
/// here can be served by `flowboost predict`, and a model trained by `flowboost eval
/// --save-model` loaded here).
///
/// ```
/// use flowboost_model::Model;
/// use flowboost_operators::boosters::{Algorithm, BoosterConfig};
/// use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
/// use flowboost_operators::learners::WeakKind;
///
/// let schema = Schema {
///     attributes: vec![Attribute::numeric("x")],
///     labels: vec!["low".into(), "high".into()],
///     task: Task::Binary,
/// };
/// let config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 1);
/// let mut model = Model::new(config, schema).unwrap();
/// for i in 0..2000u64 {
///     let x = (i % 100) as f64;
///     let label = Label::Class(u32::from(x >= 50.0));
///     model.learn_one(&Example { id: i, features: Features::Dense(vec![x]), label: Some(label) }).unwrap();
/// }
/// let query = Example { id: 9999, features: Features::Dense(vec![90.0]), label: None };
/// assert_eq!(model.predict_one(&query).class, 1);
///
/// // Saved and loaded, it predicts the same.
/// let mut bytes = Vec::new();
/// model.save(&mut bytes).unwrap();
/// let mut loaded = Model::load(&bytes[..]).unwrap();
/// assert_eq!(loaded.predict_one(&query), model.predict_one(&query));
/// ```
#[derive(Clone, Debug)]
pub struct Model {
    config: BoosterConfig,
    schema: Schema,
    runner: SequentialRunner<AnyStage>,
    /// The feedback join: each call of `predict_pending` or `learn_feedback` is one of its
    /// epochs.
    join: JoinReference,
    epoch: u64,
}

impl Model {
    /// A fresh model of `config` for streams of `schema`.
    pub fn new(config: BoosterConfig, schema: Schema) -> Result<Self, ModelError> {
        let chain = build(&schema, &config)?;
        Ok(Model {
            config,
            schema,
            runner: chain.into_sequential(),
            join: JoinReference::new(join_config(Some(DEFAULT_PENDING_TTL))),
            epoch: 0,
        })
    }

    /// Events and feedback wait at most `ttl` calls of `predict_pending` and
    /// `learn_feedback` for each other ([`DEFAULT_PENDING_TTL`] by default). What waits
    /// now keeps waiting, under the new limit (a loaded model too).
    ///
    /// ```
    /// use flowboost_model::Model;
    /// use flowboost_operators::boosters::{Algorithm, BoosterConfig};
    /// use flowboost_operators::data::{Attribute, Example, Features, Schema, Task};
    /// use flowboost_operators::learners::WeakKind;
    ///
    /// let schema = Schema {
    ///     attributes: vec![Attribute::numeric("x")],
    ///     labels: vec!["no".into(), "yes".into()],
    ///     task: Task::Binary,
    /// };
    /// let config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Linear, 3);
    /// let mut model = Model::new(config, schema).unwrap().with_pending_ttl(100);
    /// for i in 0..1000u64 {
    ///     // Feedback that never comes: the events expire after 100 calls.
    ///     let x = Example { id: i, features: Features::Dense(vec![i as f64]), label: None };
    ///     model.predict_pending(x);
    /// }
    /// assert!(model.pending() <= 100);
    /// ```
    pub fn with_pending_ttl(self, ttl: u64) -> Self {
        self.with_join(join_config(Some(ttl.max(1))))
    }

    /// Events and feedback wait for each other until they meet: the memory grows with the
    /// events whose feedback never comes (and a marker per joined id is kept for good).
    pub fn without_pending_ttl(self) -> Self {
        self.with_join(join_config(None))
    }

    /// The join under `config`, holding what the current one holds.
    fn with_join(mut self, config: JoinConfig) -> Self {
        self.join = if self.epoch == 0 {
            JoinReference::new(config)
        } else {
            JoinReference::restore(config, &self.join.state(self.epoch - 1))
        };
        self
    }

    /// Predicts `example` without learning (its label, if any, is not looked at). Choosing
    /// Hedge's expert (and the top-k boosters' exploration) draws from the model's random
    /// generator, so a prediction advances it; the stages' own tie-breaks do not advance
    /// theirs in a pass that learns nothing, so `predict_one` then
    /// [`learn_one`](Model::learn_one) is [`predict_learn_one`](Model::predict_learn_one).
    pub fn predict_one(&mut self, example: &Example) -> Prediction {
        let dim = self.runner.score_dim();
        let rec = InFlight::predict_only(0, Arc::new(example.clone()), dim);
        let mut out = Prediction::default();
        self.runner.process_record(rec, &mut out);
        out
    }

    /// Predicts `example`, then learns from its label (test-then-train in one pass: the
    /// prediction is the one made before learning).
    pub fn predict_learn_one(&mut self, example: &Example) -> Prediction {
        let mut out = Prediction::default();
        self.runner.process(Arc::new(example.clone()), &mut out);
        out
    }

    /// Learns from a labeled example (nothing is predicted).
    pub fn learn_one(&mut self, example: &Example) -> Result<(), ModelError> {
        if example.label.is_none() {
            return Err(ModelError::Invalid(format!(
                "example {} has no label to learn from",
                example.id
            )));
        }
        let dim = self.runner.score_dim();
        let rec = InFlight::learn(0, Arc::new(example.clone()), None, dim);
        self.runner.process_record(rec, &mut Prediction::default());
        Ok(())
    }

    /// [`predict_one`](Model::predict_one) on each of `examples`, in order, taken through
    /// the stages stage by stage (each stage's state stays in the cache): the same
    /// predictions, faster for many stages.
    pub fn predict_many(&mut self, examples: &[Example]) -> Vec<Prediction> {
        let dim = self.runner.score_dim();
        let records = examples
            .iter()
            .map(|e| InFlight::predict_only(0, Arc::new(e.clone()), dim))
            .collect();
        self.runner.process_records(records)
    }

    /// [`predict_learn_one`](Model::predict_learn_one) on each of `examples`, in order,
    /// taken through the stages stage by stage: the same predictions and model, faster for
    /// many stages.
    pub fn predict_learn_many(&mut self, examples: &[Example]) -> Vec<Prediction> {
        let (dim, seq) = (self.runner.score_dim(), self.runner.position().seq);
        let records = examples
            .iter()
            .zip(seq..)
            .map(|(e, seq)| InFlight::new(seq, Arc::new(e.clone()), dim))
            .collect();
        self.runner.process_records(records)
    }

    /// [`learn_one`](Model::learn_one) on each of `examples`, in order, taken through the
    /// stages stage by stage: the same model, faster for many stages. Nothing is learned
    /// unless every example has a label.
    pub fn learn_many(&mut self, examples: &[Example]) -> Result<(), ModelError> {
        if let Some(e) = examples.iter().find(|e| e.label.is_none()) {
            return Err(ModelError::Invalid(format!(
                "example {} has no label to learn from",
                e.id
            )));
        }
        let dim = self.runner.score_dim();
        let records = examples
            .iter()
            .map(|e| InFlight::learn(0, Arc::new(e.clone()), None, dim))
            .collect();
        self.runner.process_records(records);
        Ok(())
    }

    /// Predicts `example` and keeps it until its [`Feedback`] comes
    /// ([`learn_feedback`](Model::learn_feedback) with its id); if its feedback came first,
    /// the model learns from it now.
    pub fn predict_pending(&mut self, example: Example) -> Prediction {
        let dim = self.runner.score_dim();
        let seq = self.runner.position().seq;
        let example = Arc::new(example);
        let rec = InFlight::predict_only(seq, example.clone(), dim);
        let mut out = Prediction::default();
        self.runner.process_record(rec, &mut out);
        let waiting = WaitingEvent {
            model: 0,
            seq,
            epoch: self.epoch,
            example,
            prediction: out.clone(),
        };
        let pairs = self.join.epoch(self.epoch, vec![waiting], Vec::new());
        self.learn_pairs(pairs);
        out
    }

    /// Learns from the feedback of event `id` (predicted with
    /// [`predict_pending`](Model::predict_pending)), or keeps it until its event comes:
    /// its label ([`Feedback::Label`]), the labels clicked among those shown
    /// ([`Feedback::Clicks`], top-k boosters), logged clicks with their propensities
    /// ([`Feedback::Logged`]) or pairs made elsewhere ([`Feedback::Pairs`]), as a Kafka
    /// feedback record would say it.
    pub fn learn_feedback(&mut self, id: u64, feedback: Feedback) -> FeedbackOutcome {
        let seq = self.runner.position().seq;
        let item = FeedbackItem {
            seq,
            epoch: self.epoch,
            id,
            kind: feedback,
        };
        let before = self.join.counts();
        let pairs = self.join.epoch(self.epoch, Vec::new(), vec![item]);
        let after = self.join.counts();
        self.learn_pairs(pairs);
        if after.joined > before.joined {
            FeedbackOutcome::Joined
        } else if after.late > before.late {
            FeedbackOutcome::Late
        } else if after.repeated > before.repeated {
            FeedbackOutcome::Repeated
        } else {
            FeedbackOutcome::Held
        }
    }

    /// The learning passes of the pairs of this epoch (they come first in the next).
    fn learn_pairs(&mut self, pairs: Vec<Pairing>) {
        self.epoch += 1;
        let dim = self.runner.score_dim();
        let mut out = Prediction::default();
        for p in pairs {
            let rec = learning_pass(&p, &self.config.topk, self.schema.num_labels(), dim);
            self.runner.process_record(rec, &mut out);
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BoosterConfig {
        &self.config
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Names feature `j` (the model's schema, as a saved model writes it): a column of a
    /// model built with room for more features than it has seen takes the name of the
    /// feature that first uses it (see [`Columns`](crate::Columns)). Only the name
    /// changes: the learners know features by index.
    pub fn name_attribute(&mut self, j: usize, name: &str) -> Result<(), ModelError> {
        let dim = self.schema.attributes.len();
        let attribute = self.schema.attributes.get_mut(j).ok_or_else(|| {
            ModelError::Invalid(format!("feature {j}: the model has {dim} features"))
        })?;
        attribute.name = name.to_string();
        Ok(())
    }

    /// Names label `l` (as [`name_attribute`](Model::name_attribute) names a feature).
    pub fn name_label(&mut self, l: usize, name: &str) -> Result<(), ModelError> {
        let k = self.schema.labels.len();
        let label =
            self.schema.labels.get_mut(l).ok_or_else(|| {
                ModelError::Invalid(format!("label {l}: the model has {k} labels"))
            })?;
        *label = name.to_string();
        Ok(())
    }

    /// Predictions made and records learned so far.
    pub fn position(&self) -> Position {
        self.runner.position()
    }

    /// The number of events waiting for feedback.
    pub fn pending(&self) -> usize {
        self.join.counts().waiting as usize
    }

    /// The model as a model file holds it.
    pub fn to_saved(&self) -> Result<SavedModel, ModelError> {
        let join = self.join.state(self.epoch.saturating_sub(1));
        let source = SourceState {
            seq: self.runner.position().seq,
            epoch: self.epoch,
            ..SourceState::default()
        };
        let snapshot = self
            .runner
            .snapshot(Some(join), Some(source))
            .map_err(|e| ModelError::Invalid(e.to_string()))?;
        Ok(SavedModel::from_snapshot(
            &self.config,
            &self.schema,
            snapshot,
            None,
            None,
        ))
    }

    /// Writes the model in the model file format.
    pub fn save(&self, mut out: impl Write) -> Result<(), ModelError> {
        let bytes = self.to_saved()?.to_bytes()?;
        out.write_all(&bytes)
            .map_err(|e| ModelError::write(Path::new("(writer)"), e))
    }

    /// Writes the model to a file, atomically.
    pub fn save_file(&self, path: &Path) -> Result<(), ModelError> {
        self.to_saved()?.write(path)
    }

    /// Reads a model written by [`save`](Model::save) or by `flowboost eval --save-model`.
    /// The input is read as the file's framing says, at most
    /// [`MAX_MODEL_FILE_BYTES`](super::MAX_MODEL_FILE_BYTES).
    pub fn load(input: impl Read) -> Result<Self, ModelError> {
        let bytes = super::file::read_limited(input, "(reader)")?;
        Self::from_saved(SavedModel::from_bytes(&bytes, "(reader)")?, "(reader)")
    }

    /// Reads a model file.
    pub fn load_file(path: &Path) -> Result<Self, ModelError> {
        let name = path.display().to_string();
        Self::from_saved(SavedModel::read(path)?, &name)
    }

    /// The model a file holds (`name` names the file in errors). Its waiting events and
    /// feedback wait [`DEFAULT_PENDING_TTL`] calls (see [`with_pending_ttl`](Model::with_pending_ttl)).
    pub fn from_saved(saved: SavedModel, name: &str) -> Result<Self, ModelError> {
        let chain = saved.chain(name)?;
        let config = join_config(Some(DEFAULT_PENDING_TTL));
        let (join, epoch) = match &saved.body.join {
            Some(state) => (JoinReference::restore(config, state), state.epoch + 1),
            None => (JoinReference::new(config), 0),
        };
        Ok(Model {
            config: saved.header.config,
            schema: saved.header.schema,
            runner: chain.into_sequential(),
            join,
            epoch,
        })
    }
}

/// The join of a [`Model`]: each call one epoch, learning passes in the next.
fn join_config(ttl: Option<u64>) -> JoinConfig {
    JoinConfig {
        ttl,
        lag: 1,
        window: false,
    }
}
