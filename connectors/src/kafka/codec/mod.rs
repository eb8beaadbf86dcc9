//! The record codec: one Kafka record's bytes to an [`Example`] against the job's
//! declared [`Schema`], and predictions to JSON.
//!
//! Three input formats ([`RecordFormat`]):
//!
//! - **JSON** (the default), one object per record:
//!   `{"id": 42, "features": {"name": value, ...}, "label": "spam"}` (sparse, by feature
//!   name; an absent feature is 0.0) or `"features": [v0, v1, ...]` (dense: exactly one
//!   value per declared feature). The label is `"label": L` or `"labels": [L, ...]`, where
//!   a string `L` is a label name and a number `L` a label index (`0..k`); with neither
//!   (or `null`) the event is unlabeled. A multi-label task makes a label set (sorted,
//!   without repeats; `[]` is a labeled event with no relevant label); a binary or
//!   multiclass task takes exactly one label. The id is a non-negative integer (or a
//!   string of decimal digits). A nominal feature takes its value's index or its value's
//!   name. An optional `"key": "name"` (a string) names the model the event belongs to
//!   when the job keeps one model per key (`flowboost run --keys`). Other fields are
//!   ignored; a repeated key keeps its last value.
//! - **LIBSVM**, one line per record: `label idx:val idx:val ... # comment`, 1-based
//!   indices, strictly ascending, at most the declared dimension (`qid:` is skipped). The
//!   label field is a label name or a number equal to one (`+1` matches `1`); for a
//!   multi-label task, comma-separated label names or ids, and no label field is the empty
//!   set (as in the LIBSVM file reader). `?` as the label field marks an unlabeled event;
//!   so does no label field for a single-label task. LIBSVM has no id field: the id is the
//!   record's key, a decimal integer.
//! - **Avro**: the record `flowboost.Event` in Avro's single-object encoding (see
//!   [`avro`]): the same fields as JSON's dense shape, each value 8 bytes.
//! - **Confluent Avro**: an Avro record framed as a Confluent schema registry's
//!   serializers write it (the byte 0, the writer's schema id, the record), read with
//!   schema resolution against `flowboost.Event` (see [`confluent`]).
//!
//! A record that does not fit is a [`DecodeError`] with a [kind](DecodeErrorKind) and a
//! reason, never a panic: not parseable, missing id, wrong dimension, unknown feature name,
//! NaN or infinity (JSON `NaN` / `Infinity` as Python writes them, `"nan"` strings,
//! numbers beyond `f64`), unknown label, a writer's schema that cannot be had or does
//! not resolve, or anything else malformed.

pub mod avro;
mod avro_resolve;
mod avro_schema;
pub mod confluent;
mod json;
mod json_dense;
mod libsvm;
mod prediction;

pub use avro_schema::SchemaError;
pub use prediction::{PREDICTION_SCHEMA, PredictionEncoder, PredictionFormat, PredictionOutput};

use flowboost_operators::data::{AttributeKind, Example, Label, Schema, Task};
use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::Arc;

/// An event record, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedEvent {
    /// The event.
    pub example: Example,
    /// Its model key (`"key"` in JSON), if it has one.
    pub key: Option<String>,
}

/// The encoding of the records of an input topic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecordFormat {
    /// One JSON object per record (the default).
    #[default]
    Json,
    /// One LIBSVM line per record; the id is the record key.
    Libsvm,
    /// Avro's single-object encoding of the record `flowboost.Event` (see [`avro`]).
    Avro,
    /// Avro framed by a Confluent schema registry's serializers (see [`confluent`]).
    ConfluentAvro,
}

flowboost_operators::named_values!(
    RecordFormat,
    "record format",
    Json => "json" | "jsonl" | "json-lines",
    Libsvm => "libsvm" | "svmlight",
    Avro => "avro",
    ConfluentAvro => "confluent-avro",
);

/// The category of a bad record (for counting dead letters by cause).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DecodeErrorKind {
    /// Not JSON / not UTF-8 / empty / not an object or a line.
    Unparseable,
    /// No id, or an id that is not a non-negative integer.
    MissingId,
    /// A dense vector of the wrong length, or a LIBSVM index beyond the dimension.
    WrongDimension,
    /// A feature name the schema does not declare.
    UnknownFeature,
    /// A NaN or infinite feature value.
    NonFinite,
    /// A label the schema does not declare.
    UnknownLabel,
    /// Anything else malformed (a value of the wrong type, missing features, ...).
    Malformed,
    /// The record's writer schema (Confluent Avro) is unknown to the registry, could
    /// not be fetched, or does not resolve to the reader's.
    Schema,
}

impl DecodeErrorKind {
    /// A short snake_case name: `unparseable`, `missing_id`, `wrong_dimension`,
    /// `unknown_feature`, `non_finite`, `unknown_label`, `malformed`, `schema`.
    pub fn name(self) -> &'static str {
        match self {
            DecodeErrorKind::Unparseable => "unparseable",
            DecodeErrorKind::MissingId => "missing_id",
            DecodeErrorKind::WrongDimension => "wrong_dimension",
            DecodeErrorKind::UnknownFeature => "unknown_feature",
            DecodeErrorKind::NonFinite => "non_finite",
            DecodeErrorKind::UnknownLabel => "unknown_label",
            DecodeErrorKind::Malformed => "malformed",
            DecodeErrorKind::Schema => "schema",
        }
    }
}

/// Why a record does not decode: a category and a reason in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The category.
    pub kind: DecodeErrorKind,
    /// What is wrong, naming the offending field or token.
    pub reason: String,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, reason: impl Into<String>) -> Self {
        DecodeError {
            kind,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// What a feedback record tells about its event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FeedbackKind {
    /// The event's whole label (`"label"` or `"labels"`).
    #[default]
    Labels,
    /// Clicks on the labels shown for the event (`"clicks": [L, ...]`): the shown labels
    /// clicked are relevant, the other shown labels are not, the rest is unobserved
    /// (top-k feedback). [`FeedbackRecord::label`] is then the set of clicked labels.
    Clicks,
    /// Logged clicks (`"clicks": [L, ...], "propensities": [p, ...]`): items clicked on a
    /// slate a logging policy chose, each with its propensity (the logging policy's
    /// probability of showing it where it was clicked). [`FeedbackRecord::label`] holds
    /// the clicked labels in the record's order, [`FeedbackRecord::propensities`] theirs.
    LoggedClicks,
}

/// Delayed feedback for an earlier event: its id and its label (or its clicks).
#[derive(Clone, Debug, PartialEq)]
pub struct FeedbackRecord {
    /// The id of the event the label is for.
    pub id: u64,
    /// The label; for [`FeedbackKind::Clicks`], the set of clicked labels.
    pub label: Label,
    /// Whether this is a whole label or clicks on shown labels.
    pub kind: FeedbackKind,
    /// [`FeedbackKind::LoggedClicks`]: each click's propensity (else empty).
    pub propensities: Vec<f64>,
}

impl FeedbackRecord {
    /// What the feedback join takes from this record: the whole label, the clicked
    /// labels, or the logged clicks with their propensities.
    pub fn into_join_kind(self) -> flowboost_operators::engine::feedback::FeedbackKind {
        use flowboost_operators::engine::feedback::FeedbackKind as Join;
        match self.kind {
            FeedbackKind::Labels => Join::Label(self.label),
            FeedbackKind::Clicks => Join::Clicks(self.label.relevant().to_vec()),
            FeedbackKind::LoggedClicks => Join::Logged(
                self.label
                    .relevant()
                    .iter()
                    .copied()
                    .zip(self.propensities)
                    .collect(),
            ),
        }
    }
}

/// Decodes records against a declared schema. Build one per job (it indexes the feature
/// and label names) and share it.
#[derive(Clone, Debug)]
pub struct RecordDecoder {
    schema: Schema,
    format: RecordFormat,
    /// Feature name -> index (the first attribute of a repeated name). Fx hashing: the
    /// keys are the schema's, fixed before any record is read, so a record's names are
    /// only looked up and cannot make the map degrade.
    features: FxHashMap<String, u32>,
    /// Label name -> index.
    labels: FxHashMap<String, u32>,
    /// Each label name's numeric value, when it is a number (LIBSVM matching).
    label_numbers: Vec<Option<f64>>,
    /// Confluent Avro: the writer schemas (a registry's, cached).
    writer_schemas: Option<Arc<confluent::WriterSchemas>>,
}

impl RecordDecoder {
    /// A decoder for records of `format` describing events of `schema`.
    pub fn new(schema: &Schema, format: RecordFormat) -> Self {
        let mut features = FxHashMap::default();
        for (j, a) in schema.attributes.iter().enumerate() {
            features.entry(a.name.clone()).or_insert(j as u32);
        }
        let mut labels = FxHashMap::default();
        for (l, name) in schema.labels.iter().enumerate() {
            labels.entry(name.clone()).or_insert(l as u32);
        }
        let label_numbers = schema
            .labels
            .iter()
            .map(|name| name.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        RecordDecoder {
            schema: schema.clone(),
            format,
            features,
            labels,
            label_numbers,
            writer_schemas: None,
        }
    }

    /// Reads Confluent Avro records with writer schemas from `schemas` (without them,
    /// every such record is a dead letter of kind `schema`).
    pub fn with_writer_schemas(mut self, schemas: Arc<confluent::WriterSchemas>) -> Self {
        self.writer_schemas = Some(schemas);
        self
    }

    /// The declared schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The input format.
    pub fn format(&self) -> RecordFormat {
        self.format
    }

    /// Decodes one record. `key` is the record's key (the id of a LIBSVM record; unused
    /// for JSON, whose id is in the payload).
    pub fn decode(&self, key: Option<&[u8]>, payload: &[u8]) -> Result<Example, DecodeError> {
        self.decode_event(key, payload).map(|e| e.example)
    }

    /// Decodes one event record with its model key: a JSON event's `"key"` (a string:
    /// the model it belongs to when the job keeps one model per key); LIBSVM records have
    /// none.
    pub fn decode_event(
        &self,
        key: Option<&[u8]>,
        payload: &[u8],
    ) -> Result<DecodedEvent, DecodeError> {
        match self.format {
            RecordFormat::Json => json::decode_event(self, payload),
            RecordFormat::Libsvm => libsvm::decode_example(self, key, payload)
                .map(|example| DecodedEvent { example, key: None }),
            RecordFormat::Avro => avro::decode_event(self, payload),
            RecordFormat::ConfluentAvro => confluent::decode_event(self, payload),
        }
    }

    /// Decodes one feedback record, always JSON: `{"id": 42, "label": L}`,
    /// `{"id": 42, "labels": [L, ...]}` (labels as in [`decode`](Self::decode)), or
    /// `{"id": 42, "clicks": [L, ...]}` (the shown labels that were clicked, any task), or
    /// logged clicks `{"id": 42, "clicks": [L, ...], "propensities": [p, ...]}` (one
    /// propensity in (0, 1] per click); a feedback record without a label or clicks is
    /// malformed.
    pub fn decode_feedback(&self, payload: &[u8]) -> Result<FeedbackRecord, DecodeError> {
        json::decode_feedback(self, payload)
    }

    /// The index of a feature name.
    fn feature(&self, name: &str) -> Option<u32> {
        self.features.get(name).copied()
    }

    /// Checks a feature value for attribute `j` (finite; a valid value index for a
    /// nominal attribute).
    #[inline]
    fn check_value(&self, j: usize, x: f64) -> Result<f64, DecodeError> {
        let name = &self.schema.attributes[j].name;
        if !x.is_finite() {
            return Err(DecodeError::new(
                DecodeErrorKind::NonFinite,
                format!("feature `{name}` is {x}: NaN and infinity are not allowed"),
            ));
        }
        if let AttributeKind::Nominal(values) = &self.schema.attributes[j].kind
            && (x < 0.0 || x.fract() != 0.0 || x >= values.len() as f64)
        {
            return Err(DecodeError::new(
                DecodeErrorKind::Malformed,
                format!(
                    "feature `{name}`: {x} is not a value index of a nominal attribute with {} values",
                    values.len()
                ),
            ));
        }
        Ok(x)
    }

    /// The value index of a nominal attribute's value name (`None` for a numeric
    /// attribute, `Some(Err)` for an unknown value).
    fn nominal_value(&self, j: usize, text: &str) -> Option<Result<f64, DecodeError>> {
        let attribute = &self.schema.attributes[j];
        match &attribute.kind {
            AttributeKind::Numeric => None,
            AttributeKind::Nominal(values) => Some(
                values
                    .iter()
                    .position(|v| v == text)
                    .map(|p| p as f64)
                    .ok_or_else(|| {
                        DecodeError::new(
                            DecodeErrorKind::Malformed,
                            format!("feature `{}`: unknown value `{text}`", attribute.name),
                        )
                    }),
            ),
        }
    }

    /// A label index from a label name.
    fn label_by_name(&self, name: &str) -> Result<u32, DecodeError> {
        self.labels
            .get(name)
            .copied()
            .ok_or_else(|| self.unknown_label(&format!("`{name}`")))
    }

    /// A label index from a label index.
    fn label_by_index(&self, index: u64) -> Result<u32, DecodeError> {
        if index < self.schema.labels.len() as u64 {
            Ok(index as u32)
        } else {
            Err(self.unknown_label(&index.to_string()))
        }
    }

    /// A label index from a LIBSVM label token: a name, or a number equal to a name.
    fn label_by_token(&self, token: &str) -> Result<u32, DecodeError> {
        if let Some(&l) = self.labels.get(token) {
            return Ok(l);
        }
        if let Ok(x) = token.parse::<f64>()
            && let Some(l) = self.label_numbers.iter().position(|n| *n == Some(x))
        {
            return Ok(l as u32);
        }
        Err(self.unknown_label(&format!("`{token}`")))
    }

    fn unknown_label(&self, what: &str) -> DecodeError {
        let k = self.schema.labels.len();
        let mut names: Vec<&str> = self
            .schema
            .labels
            .iter()
            .take(8)
            .map(|s| s.as_str())
            .collect();
        if k > 8 {
            names.push("...");
        }
        DecodeError::new(
            DecodeErrorKind::UnknownLabel,
            format!(
                "unknown label {what} (the schema declares {k} labels: {})",
                names.join(", ")
            ),
        )
    }

    /// The label of an event with the one label `l` (`{l}` for a multi-label task).
    fn single_label(&self, l: u32) -> Label {
        match self.schema.task {
            Task::Multilabel => Label::Set(vec![l]),
            Task::Binary | Task::Multiclass => Label::Class(l),
        }
    }

    /// Makes the label of an event from its label indices.
    fn make_label(&self, mut ids: Vec<u32>) -> Result<Label, DecodeError> {
        match self.schema.task {
            Task::Multilabel => {
                ids.sort_unstable();
                ids.dedup();
                Ok(Label::Set(ids))
            }
            Task::Binary | Task::Multiclass => {
                if ids.len() == 1 {
                    Ok(Label::Class(ids[0]))
                } else {
                    Err(DecodeError::new(
                        DecodeErrorKind::Malformed,
                        format!(
                            "a {} task takes exactly one label, got {}",
                            self.schema.task.name(),
                            ids.len()
                        ),
                    ))
                }
            }
        }
    }
}

/// Parses an id from its decimal text.
fn parse_id(text: &str) -> Result<u64, DecodeError> {
    text.trim().parse::<u64>().map_err(|_| {
        DecodeError::new(
            DecodeErrorKind::MissingId,
            format!("bad id `{text}`: expected a non-negative integer"),
        )
    })
}
