use flowboost_operators::data::{Label, Task};
use flowboost_operators::engine::Prediction;
use flowboost_operators::metrics::{MultilabelMetrics, SingleLabelMetrics};

/// Accumulates the task's metrics over the evaluated predictions.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Scorer {
    /// Accuracy for binary and multiclass tasks.
    Single(SingleLabelMetrics),
    /// Rank loss and set metrics for multi-label tasks.
    Multi(MultilabelMetrics),
}

impl Scorer {
    /// A scorer for `task` with `k` labels.
    pub fn new(task: Task, k: usize) -> Self {
        match task {
            Task::Multilabel => Scorer::Multi(MultilabelMetrics::new(k)),
            _ => Scorer::Single(SingleLabelMetrics::default()),
        }
    }

    /// Scores one prediction against its label; unlabeled examples are not scored.
    pub fn update(&mut self, prediction: &Prediction, label: Option<&Label>) {
        match (self, label) {
            (Scorer::Single(m), Some(l)) => {
                if let Some(y) = l.class() {
                    m.update(prediction.class, y);
                }
            }
            (Scorer::Multi(m), Some(l)) => {
                m.update(&prediction.scores, &prediction.labels, l.relevant());
            }
            _ => {}
        }
    }

    /// The number of predictions scored.
    pub fn count(&self) -> u64 {
        match self {
            Scorer::Single(m) => m.count,
            Scorer::Multi(m) => m.count,
        }
    }

    /// The headline figure for progress lines: accuracy, or rank loss for multi-label.
    pub fn headline(&self) -> (&'static str, f64) {
        match self {
            Scorer::Single(m) => ("accuracy", m.accuracy()),
            Scorer::Multi(m) => ("rank_loss", m.rank_loss()),
        }
    }
}
