//! The JSON line `run` and `predict` write per prediction.

use super::output::Output;
use flowboost_operators::data::Task;
use flowboost_operators::engine::Prediction;
use serde::Serialize;

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
    pub fn write(&self, out: &mut Output) -> Result<(), String> {
        out.json_line(self)
    }
}
