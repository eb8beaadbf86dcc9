//! Predictions to JSON, one object per output record, or to Avro records of
//! [`PREDICTION_SCHEMA`] framed for a Confluent schema registry.

use super::avro::{write_long, write_string};
use super::confluent::frame;
use flowboost_operators::data::{Schema, Task};
use serde::Serialize;

/// The Avro schema of a prediction (`connectors/schemas/prediction.avsc`): the JSON
/// prediction's fields, for `--prediction-format confluent-avro`.
pub const PREDICTION_SCHEMA: &str = include_str!("../../../schemas/prediction.avsc");

/// The encoding of the records of the predictions topic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PredictionFormat {
    /// One JSON object per record (the default).
    #[default]
    Json,
    /// Avro records of [`PREDICTION_SCHEMA`] in the Confluent framing.
    ConfluentAvro,
}

flowboost_operators::named_values!(
    PredictionFormat,
    "prediction format",
    Json => "json",
    ConfluentAvro => "confluent-avro",
);

/// The fields of one prediction, as plain values (the job maps its `Prediction` to this).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredictionOutput<'a> {
    /// The event id (also the output record's key).
    pub id: u64,
    /// The predicted class (binary: 1 positive, 0 negative); for multi-label, the top
    /// label.
    pub class: u32,
    /// The predicted label set, multi-label only (label indices).
    pub labels: &'a [u32],
    /// The chosen expert's scores: one margin (binary boosters) or one per label.
    pub scores: &'a [f64],
    /// The chosen expert, 1-based.
    pub expert: u32,
    /// The model version: how many updates the model had applied when it predicted.
    pub model_version: u64,
    /// Top-k boosters: the labels shown, in display order (their clicks are the
    /// feedback); empty otherwise.
    pub shown: &'a [u32],
    /// With one model per key: the key of the model that predicted.
    pub key: Option<&'a str>,
}

/// Encodes predictions as JSON objects:
///
/// ```json
/// {"id":42,"prediction":"spam","class":1,"score":0.83,"expert":10,"model_version":1234}
/// {"id":43,"prediction":"b","class":1,"ranking":[{"label":"b","index":1,"score":0.9},
///   {"label":"a","index":0,"score":0.1}],"expert":3,"model_version":1235}
/// {"id":44,"prediction":["a","c"],"labels":[0,2],"class":2,"ranking":[...],...}
/// ```
///
/// - `prediction`: the predicted class's name; for a multi-label task, the names of the
///   predicted label set (with `labels`, their indices).
/// - `class`: the predicted class index (multi-label: the top label).
/// - `score` when there is one margin (binary boosters); `ranking` when there is one
///   score per label: every label (or only the best ones, see
///   [`with_ranking_limit`](Self::with_ranking_limit)), highest score first, ties to the
///   lower index;
///   otherwise `scores`, the raw vector. Non-finite scores are written as `null`.
/// - `shown` (top-k boosters only): the names of the labels shown, in display order;
///   clicks on them are the feedback.
/// - `expert`, `model_version` as given.
/// - `key` (after `id`), with one model per key: the key of the model that predicted.
///
/// With [`with_confluent_avro`](Self::with_confluent_avro), the same fields as an Avro
/// record of [`PREDICTION_SCHEMA`] (the fields absent from the JSON object are null; a
/// non-finite score is written as it is), framed as a Confluent schema registry's
/// serializers write it.
#[derive(Clone, Debug)]
pub struct PredictionEncoder {
    labels: Vec<String>,
    task: Task,
    ranking_limit: Option<usize>,
    /// Confluent Avro: the id of [`PREDICTION_SCHEMA`] in the registry.
    avro_schema_id: Option<u32>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Predicted<'a> {
    One(&'a str),
    Set(Vec<&'a str>),
}

#[derive(Serialize)]
struct Ranked<'a> {
    label: &'a str,
    index: u32,
    score: f64,
}

#[derive(Serialize)]
struct Out<'a> {
    id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    prediction: Predicted<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<&'a [u32]>,
    class: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranking: Option<Vec<Ranked<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scores: Option<&'a [f64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shown: Option<Vec<&'a str>>,
    expert: u32,
    model_version: u64,
}

impl PredictionEncoder {
    /// An encoder naming labels as `schema` does.
    pub fn new(schema: &Schema) -> Self {
        PredictionEncoder {
            labels: schema.labels.clone(),
            task: schema.task,
            ranking_limit: None,
            avro_schema_id: None,
        }
    }

    /// Writes Avro records of [`PREDICTION_SCHEMA`], registered as `schema_id`, in the
    /// Confluent framing instead of JSON.
    pub fn with_confluent_avro(mut self, schema_id: u32) -> Self {
        self.avro_schema_id = Some(schema_id);
        self
    }

    /// Writes only the `limit` best-ranked labels (for large label spaces).
    pub fn with_ranking_limit(mut self, limit: usize) -> Self {
        self.ranking_limit = Some(limit);
        self
    }

    /// A label's name (its index as text if the schema has no such label).
    fn name(&self, l: u32) -> std::borrow::Cow<'_, str> {
        match self.labels.get(l as usize) {
            Some(name) => std::borrow::Cow::Borrowed(name),
            None => std::borrow::Cow::Owned(l.to_string()),
        }
    }

    /// The record of one prediction.
    pub fn encode(&self, p: &PredictionOutput<'_>) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + 48 * p.scores.len());
        self.encode_into(p, &mut out);
        out
    }

    /// Appends the record (JSON, or Confluent Avro) of one prediction to `out`.
    pub fn encode_into(&self, p: &PredictionOutput<'_>, out: &mut Vec<u8>) {
        // Owned names for out-of-range indices live here while serializing.
        let class_name = self.name(p.class);
        let set_names: Vec<std::borrow::Cow<'_, str>> =
            p.labels.iter().map(|&l| self.name(l)).collect();
        let shown_names: Vec<std::borrow::Cow<'_, str>> =
            p.shown.iter().map(|&l| self.name(l)).collect();
        let prediction = match self.task {
            Task::Multilabel => Predicted::Set(set_names.iter().map(|s| s.as_ref()).collect()),
            Task::Binary | Task::Multiclass => Predicted::One(class_name.as_ref()),
        };
        let k = self.labels.len();
        let (score, ranking, scores) = if p.scores.len() == 1 && k <= 2 {
            (Some(p.scores[0]), None, None)
        } else if p.scores.len() == k && k >= 2 {
            let mut order: Vec<u32> = (0..k as u32).collect();
            order.sort_by(|&a, &b| {
                p.scores[b as usize]
                    .total_cmp(&p.scores[a as usize])
                    .then(a.cmp(&b))
            });
            order.truncate(self.ranking_limit.unwrap_or(k));
            let ranking = order
                .into_iter()
                .map(|l| Ranked {
                    label: self.labels[l as usize].as_str(),
                    index: l,
                    score: p.scores[l as usize],
                })
                .collect();
            (None, Some(ranking), None)
        } else {
            (None, None, Some(p.scores))
        };
        if let Some(id) = self.avro_schema_id {
            out.extend_from_slice(&frame(id));
            let fields = AvroFields {
                p,
                prediction: &prediction,
                multilabel: self.task == Task::Multilabel,
                score,
                ranking: ranking.as_deref(),
                scores,
                shown: &shown_names,
            };
            write_avro(out, &fields);
            return;
        }
        let record = Out {
            id: p.id,
            key: p.key,
            prediction,
            labels: (self.task == Task::Multilabel).then_some(p.labels),
            class: p.class,
            score,
            ranking,
            scores,
            shown: (!p.shown.is_empty()).then(|| shown_names.iter().map(|s| s.as_ref()).collect()),
            expert: p.expert,
            model_version: p.model_version,
        };
        serde_json::to_writer(out, &record).expect("serializing to a Vec cannot fail");
    }
}

/// A prediction's fields as the Avro record has them.
struct AvroFields<'a, 'p> {
    p: &'a PredictionOutput<'p>,
    prediction: &'a Predicted<'a>,
    multilabel: bool,
    score: Option<f64>,
    ranking: Option<&'a [Ranked<'a>]>,
    scores: Option<&'a [f64]>,
    shown: &'a [std::borrow::Cow<'a, str>],
}

/// An array's items (one block, then the end), each written by `item`.
fn write_array<T>(out: &mut Vec<u8>, items: &[T], mut item: impl FnMut(&mut Vec<u8>, &T)) {
    if !items.is_empty() {
        write_long(out, items.len() as i64);
        for x in items {
            item(out, x);
        }
    }
    write_long(out, 0);
}

/// The Avro binary encoding of a prediction record (field order of
/// [`PREDICTION_SCHEMA`]).
fn write_avro(out: &mut Vec<u8>, f: &AvroFields<'_, '_>) {
    let double = |out: &mut Vec<u8>, x: f64| out.extend_from_slice(&x.to_le_bytes());
    write_long(out, f.p.id as i64);
    match f.p.key {
        None => write_long(out, 0),
        Some(k) => {
            write_long(out, 1);
            write_string(out, k);
        }
    }
    match f.prediction {
        Predicted::One(name) => {
            write_long(out, 0);
            write_string(out, name);
        }
        Predicted::Set(names) => {
            write_long(out, 1);
            write_array(out, names, |out, n| write_string(out, n));
        }
    }
    if f.multilabel {
        write_long(out, 1);
        write_array(out, f.p.labels, |out, &l| write_long(out, i64::from(l)));
    } else {
        write_long(out, 0);
    }
    write_long(out, i64::from(f.p.class));
    match f.score {
        None => write_long(out, 0),
        Some(x) => {
            write_long(out, 1);
            double(out, x);
        }
    }
    match f.ranking {
        None => write_long(out, 0),
        Some(ranking) => {
            write_long(out, 1);
            write_array(out, ranking, |out, r| {
                write_string(out, r.label);
                write_long(out, i64::from(r.index));
                double(out, r.score);
            });
        }
    }
    match f.scores {
        None => write_long(out, 0),
        Some(scores) => {
            write_long(out, 1);
            write_array(out, scores, |out, &x| double(out, x));
        }
    }
    if f.shown.is_empty() {
        write_long(out, 0);
    } else {
        write_long(out, 1);
        write_array(out, f.shown, |out, s| write_string(out, s));
    }
    write_long(out, i64::from(f.p.expert));
    write_long(out, f.p.model_version as i64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::types::Value;

    /// An Avro value as the JSON encoder writes it (unions unwrapped, non-finite
    /// doubles as null).
    fn to_json(v: Value) -> serde_json::Value {
        match v {
            Value::Union(_, inner) => to_json(*inner),
            Value::Double(x) if !x.is_finite() => serde_json::Value::Null,
            Value::Array(items) => items.into_iter().map(to_json).collect(),
            Value::Record(fields) => serde_json::Value::Object(
                fields.into_iter().map(|(k, v)| (k, to_json(v))).collect(),
            ),
            other => serde_json::Value::try_from(other).unwrap(),
        }
    }

    /// Our Avro predictions, read by the Apache implementation with the schema, against
    /// the JSON of the same predictions.
    #[test]
    fn avro_predictions_carry_the_json_fields() {
        let avro_schema = apache_avro::Schema::parse_str(PREDICTION_SCHEMA).unwrap();
        let cases = [
            (
                Task::Binary,
                vec!["neg", "pos"],
                vec![0.75],
                vec![],
                vec![],
                None,
            ),
            (
                Task::Multiclass,
                vec!["a", "b", "c"],
                vec![0.1, 0.9, f64::NAN],
                vec![],
                vec![2, 0],
                Some("k"),
            ),
            (
                Task::Multilabel,
                vec!["a", "b", "c"],
                vec![0.5, -1.0, 2.0],
                vec![0, 2],
                vec![],
                None,
            ),
        ];
        for (task, labels, scores, set, shown, key) in cases {
            let mut schema = Schema::numeric(1, labels.len(), task);
            schema.labels = labels.iter().map(|s| s.to_string()).collect();
            let p = PredictionOutput {
                id: 42,
                class: 1,
                labels: &set,
                scores: &scores,
                expert: 3,
                model_version: 1 << 33,
                shown: &shown,
                key,
            };
            let json: serde_json::Value =
                serde_json::from_slice(&PredictionEncoder::new(&schema).encode(&p)).unwrap();
            let bytes = PredictionEncoder::new(&schema)
                .with_confluent_avro(0x0102_0304)
                .encode(&p);
            assert_eq!(bytes[..5], [0, 1, 2, 3, 4]);
            let value = apache_avro::from_avro_datum(&avro_schema, &mut &bytes[5..], None).unwrap();
            let Value::Record(fields) = value else {
                panic!("{value:?}")
            };
            // Every field of the JSON object is the Avro record's (nulls aside).
            for (name, v) in &fields {
                let j = &json
                    .get(name.as_str())
                    .cloned()
                    .unwrap_or(serde_json::Value::Null);
                let as_json = to_json(v.clone());
                assert_eq!(&as_json, j, "{task:?} {name}");
            }
        }
    }
}
