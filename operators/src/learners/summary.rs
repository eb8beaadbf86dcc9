use super::WeakModel;
use serde::Serialize;

/// The size of a learner, for `flowboost inspect`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LearnerSummary {
    /// What it is: `vfdt`, `linear`, `label-vs-rest`, `binary-relevance`, or a
    /// thresholding learner's name.
    pub kind: String,
    /// Hoeffding trees inside it.
    pub trees: usize,
    /// Their leaves (active and inactive).
    pub leaves: usize,
    /// The leaves their memory budget has deactivated.
    pub inactive_leaves: usize,
    /// Their nodes (leaves and split nodes).
    pub nodes: usize,
    /// The deepest tree's depth.
    pub depth: usize,
    /// Weights of the linear models inside it.
    pub weights: usize,
    /// Support vectors of a kernel model.
    pub support_vectors: usize,
    /// A thresholding grid's members (`--grid`), in order; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub grid: Vec<GridMemberSummary>,
}

/// One member of a thresholding grid, for `flowboost inspect`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GridMemberSummary {
    /// Its step size eta.
    pub eta: f64,
    /// Its RBF width delta^2 (kernel models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_width: Option<f64>,
    /// Its Hedge probability.
    pub weight: f64,
    /// Whether it is the member that predicts (the largest weight).
    pub leader: bool,
}

impl LearnerSummary {
    fn add(&mut self, other: LearnerSummary) {
        self.trees += other.trees;
        self.leaves += other.leaves;
        self.inactive_leaves += other.inactive_leaves;
        self.nodes += other.nodes;
        self.depth = self.depth.max(other.depth);
        self.weights += other.weights;
        self.support_vectors += other.support_vectors;
    }
}

impl WeakModel {
    /// The learner's size.
    pub fn summary(&self) -> LearnerSummary {
        match self {
            WeakModel::Tree(t) => LearnerSummary {
                kind: "vfdt".into(),
                trees: 1,
                leaves: t.num_leaves(),
                inactive_leaves: t.num_inactive_leaves(),
                nodes: t.num_nodes(),
                depth: t.depth(),
                ..LearnerSummary::default()
            },
            WeakModel::Linear(l) => LearnerSummary {
                kind: "linear".into(),
                weights: l.num_weights(),
                ..LearnerSummary::default()
            },
            WeakModel::LabelVsRest(m) => {
                let mut s = LearnerSummary {
                    kind: "label-vs-rest".into(),
                    ..LearnerSummary::default()
                };
                s.add(m.inner().summary());
                s
            }
            WeakModel::BinaryRelevance(m) => {
                let mut s = LearnerSummary {
                    kind: "binary-relevance".into(),
                    ..LearnerSummary::default()
                };
                for inner in m.models() {
                    s.add(inner.summary());
                }
                s
            }
        }
    }
}
