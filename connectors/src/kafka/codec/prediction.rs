//! Predictions to JSON, one object per output record.

use flowboost_operators::data::{Schema, Task};
use serde::Serialize;

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
#[derive(Clone, Debug)]
pub struct PredictionEncoder {
    labels: Vec<String>,
    task: Task,
    ranking_limit: Option<usize>,
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
        }
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

    /// The JSON of one prediction.
    pub fn encode(&self, p: &PredictionOutput<'_>) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + 48 * p.scores.len());
        self.encode_into(p, &mut out);
        out
    }

    /// Appends the JSON of one prediction to `out`.
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
