//! The JSON line `run` and `predict` write per prediction.

use flowboost_operators::data::Task;
use flowboost_operators::engine::Prediction;
use serde::Serialize;
use std::io::Write;

/// One prediction: the event id, the predicted class (the top label for multi-label),
/// the label set (multi-label), the chosen expert's scores and the expert.
#[derive(Serialize)]
pub struct PredictionLine<'a> {
    id: u64,
    prediction: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<&'a [u32]>,
    scores: &'a [f64],
    expert: u32,
}

impl<'a> PredictionLine<'a> {
    /// The line of `p` on a stream of `task`.
    pub fn new(p: &'a Prediction, task: Task) -> Self {
        PredictionLine {
            id: p.id,
            prediction: p.class,
            labels: (task == Task::Multilabel).then_some(&p.labels[..]),
            scores: &p.scores,
            expert: p.expert,
        }
    }

    /// Writes the line (and its newline).
    pub fn write(&self, out: &mut impl Write) -> Result<(), String> {
        serde_json::to_writer(&mut *out, self).map_err(|e| e.to_string())?;
        out.write_all(b"\n")
            .map_err(|e| format!("cannot write the predictions: {e}"))
    }
}
