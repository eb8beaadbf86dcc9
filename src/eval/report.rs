use super::Scorer;
use flowboost_operators::engine::feedback::JoinReport;
use serde::Serialize;

/// One point of a grid (`--gamma-grid`, several `--k`): the run's parameters and its
/// headline metric.
#[derive(Clone, Debug, Serialize)]
pub struct GridPoint {
    /// The edge gamma.
    pub gamma: f64,
    /// Top-k boosters: the number of labels shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// The metric's name (`accuracy` or `rank_loss`).
    pub metric: String,
    /// Its value.
    pub value: f64,
    /// The run's seconds.
    pub seconds: f64,
}

/// The result of an evaluation, printed as one JSON object with `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// The algorithm's command-line name.
    pub algorithm: String,
    /// `binary`, `multiclass` or `multilabel`.
    pub task: String,
    /// The evaluation protocol.
    pub protocol: String,
    /// The weak learner kind.
    pub weak: String,
    /// The number of weak learners.
    pub learners: usize,
    /// The engine (`sequential` or `dataflow`).
    pub engine: String,
    /// The number of timely workers (1 for the sequential engine).
    pub workers: usize,
    /// The seed.
    pub seed: u64,
    /// The edge gamma (used by the optimal boosters only).
    pub gamma: f64,
    /// The data parts, in order.
    pub data: Vec<String>,
    /// The number of input features.
    pub features: usize,
    /// The number of labels.
    pub labels: usize,
    /// Examples processed (all parts).
    pub examples: u64,
    /// Examples scored.
    pub evaluated: u64,
    /// Wall-clock seconds for the whole run (reading included).
    pub seconds: f64,
    /// `examples / seconds`.
    pub examples_per_second: f64,
    /// Accuracy (binary and multiclass).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    /// 0-1 loss, `1 - accuracy` (binary and multiclass).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_one_loss: Option<f64>,
    /// Mean weighted rank loss (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_loss: Option<f64>,
    /// Mean Hamming loss (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hamming_loss: Option<f64>,
    /// Mean example-based precision (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Mean example-based recall (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
    /// Mean example-based F1 (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f1: Option<f64>,
    /// Micro-averaged F1 (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_f1: Option<f64>,
    /// Macro-averaged F1 (multi-label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub macro_f1: Option<f64>,
    /// Passes over the training part (holdout with `--loops`).
    pub loops: usize,
    /// Top-k boosters: the number of labels shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// Top-k boosters: the exploration rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
    /// Feedback after predictions: the delay in events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback_delay: Option<u64>,
    /// Feedback after predictions: the join's time-to-live in epochs (given, the default
    /// [`default_pending_ttl`](super::default_pending_ttl), or a resumed model's; absent:
    /// none, a model saved without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_ttl: Option<u64>,
    /// Feedback after predictions: what the join counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<JoinReport>,
    /// Multi-label: the label-set rule (`top-m`, `threshold`, or `positive`: the
    /// thresholding learners' own threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_set: Option<String>,
    /// Holdout: whether the model was frozen on the test part (`--frozen-test`).
    pub frozen_test: bool,
    /// Holdout: seconds until the first test prediction came out (training, with reading).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_seconds: Option<f64>,
    /// Holdout: seconds from the first test prediction to the end (testing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_seconds: Option<f64>,
    /// With `--gamma-grid`: every gamma tried (this report is the best one's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gamma_grid: Option<Vec<GridPoint>>,
}

impl EvalReport {
    /// Fills the metric fields from a scorer.
    pub fn set_metrics(&mut self, scorer: &Scorer) {
        match scorer {
            Scorer::Single(m) => {
                self.accuracy = Some(m.accuracy());
                self.zero_one_loss = Some(m.zero_one_loss());
            }
            Scorer::Multi(m) => {
                self.rank_loss = Some(m.rank_loss());
                self.hamming_loss = Some(m.hamming_loss());
                self.precision = Some(m.precision());
                self.recall = Some(m.recall());
                self.f1 = Some(m.f1());
                self.micro_f1 = Some(m.micro_f1());
                self.macro_f1 = Some(m.macro_f1());
            }
        }
    }

    /// The headline metric: (name, value, whether higher is better).
    pub fn headline(&self) -> (&'static str, f64, bool) {
        match (self.accuracy, self.rank_loss) {
            (Some(a), _) => ("accuracy", a, true),
            (None, Some(r)) => ("rank_loss", r, false),
            _ => ("none", 0.0, true),
        }
    }

    /// A human-readable summary, one `name: value` per line.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "algorithm: {} ({} x {}, {} engine, {} worker(s))\ntask: {} ({} features, {} labels)\nprotocol: {}\nexamples: {} (evaluated {})\nseconds: {:.3} ({:.0} examples/s)\n",
            self.algorithm,
            self.learners,
            self.weak,
            self.engine,
            self.workers,
            self.task,
            self.features,
            self.labels,
            self.protocol,
            self.examples,
            self.evaluated,
            self.seconds,
            self.examples_per_second
        );
        let metrics = [
            ("accuracy", self.accuracy),
            ("zero_one_loss", self.zero_one_loss),
            ("rank_loss", self.rank_loss),
            ("hamming_loss", self.hamming_loss),
            ("precision", self.precision),
            ("recall", self.recall),
            ("f1", self.f1),
            ("micro_f1", self.micro_f1),
            ("macro_f1", self.macro_f1),
        ];
        for (name, v) in metrics {
            if let Some(v) = v {
                s.push_str(&format!("{name}: {v:.4}\n"));
            }
        }
        s
    }
}
