//! The tree's nodes (leaves with their statistics, split nodes with their test) and the
//! layout that maps the attributes a tree looks at to slots in a leaf's flat statistics.

use super::gaussian::GaussianEstimator;
use super::memo::LnMemos;
use super::nominal;
use crate::data::{AttributeKind, Features, Schema};
use serde::{Deserialize, Serialize};

/// Where one attribute's statistics live in a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) enum AttrSlot {
    /// Estimators `offset..offset + k + 1` of `LeafNode::gaussians`: all classes, then
    /// one per class.
    Numeric {
        /// The first estimator.
        offset: usize,
    },
    /// Counts `offset..offset + (values + 1) k` of `LeafNode::counts`.
    Nominal {
        /// The first count.
        offset: usize,
        /// The number of values.
        values: usize,
    },
}

/// The attributes a tree looks at and where their statistics live; the same for every
/// leaf, so a leaf is two flat vectors allocated once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Layout {
    /// The number of classes.
    pub k: usize,
    /// The attribute indices the tree looks at (strictly ascending).
    pub features: Vec<usize>,
    /// One slot per entry of `features`.
    pub slots: Vec<AttrSlot>,
    /// Gaussian estimators per leaf.
    pub num_gaussians: usize,
    /// Nominal counts per leaf.
    pub num_counts: usize,
}

impl Layout {
    /// The layout for the attributes `features` (ascending) of `schema`.
    pub fn new(schema: &Schema, features: Vec<usize>) -> Self {
        let k = schema.num_labels();
        let (mut num_gaussians, mut num_counts) = (0, 0);
        let slots = features
            .iter()
            .map(|&j| match &schema.attributes[j].kind {
                AttributeKind::Numeric => {
                    let slot = AttrSlot::Numeric {
                        offset: num_gaussians,
                    };
                    num_gaussians += k + 1;
                    slot
                }
                AttributeKind::Nominal(values) => {
                    let slot = AttrSlot::Nominal {
                        offset: num_counts,
                        values: values.len(),
                    };
                    num_counts += nominal::slots(values.len(), k);
                    slot
                }
            })
            .collect();
        Layout {
            k,
            features,
            slots,
            num_gaussians,
            num_counts,
        }
    }

    /// Calls `f(local index, value)` for every attribute the tree looks at, in order
    /// (0.0 for values a sparse vector does not store), without allocating.
    ///
    /// One loop with one call of `f` for both representations, so that `f` is inlined.
    #[inline(always)]
    pub fn for_each_value(&self, x: &Features, mut f: impl FnMut(usize, f64)) {
        let (dense, indices, values): (Option<&[f64]>, &[u32], &[f64]) = match x {
            Features::Dense(v) => (Some(v), &[], &[]),
            Features::Sparse {
                indices, values, ..
            } => (None, indices, values),
        };
        let mut p = 0;
        for (i, &j) in self.features.iter().enumerate() {
            let value = match dense {
                Some(v) => v.get(j).copied().unwrap_or(0.0),
                None => {
                    while p < indices.len() && (indices[p] as usize) < j {
                        p += 1;
                    }
                    if p < indices.len() && indices[p] as usize == j {
                        values.get(p).copied().unwrap_or(0.0)
                    } else {
                        0.0
                    }
                }
            };
            f(i, value);
        }
    }
}

/// A leaf: its class distribution and the per-attribute statistics it splits on and
/// predicts with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct LeafNode {
    /// The depth (the root has depth 0).
    pub depth: usize,
    /// Class weights: those the parent's split predicted for this leaf plus those seen.
    pub dist: Vec<f64>,
    /// The weight this leaf has learned from since it was created.
    pub seen: f64,
    /// `seen` at the last split attempt.
    pub seen_at_last_attempt: f64,
    /// The weight of the examples majority class got right (predicting before learning).
    pub mc_correct: f64,
    /// The weight of the examples naive Bayes got right (predicting before learning).
    pub nb_correct: f64,
    /// The numeric attributes' estimators (see [`AttrSlot::Numeric`]).
    pub gaussians: Vec<GaussianEstimator>,
    /// The nominal attributes' counts (see [`AttrSlot::Nominal`]).
    pub counts: Vec<f64>,
    /// Local indices of the nominal attributes split on above this leaf (ascending):
    /// constant here, so neither learned, split on nor used by naive Bayes.
    pub used: Vec<usize>,
    /// Naive Bayes' logarithms, one per estimator (not state): for a numeric attribute's
    /// pooled estimator and for a class's the log of its variance. (Nominal likelihoods are not memoized: nearly every example changes
    /// those of its class, and a memo as large as the counts costs more cache misses
    /// than the logarithms it saves.)
    #[serde(skip)]
    pub gaussian_lns: LnMemos,
}

impl LeafNode {
    /// A fresh leaf with the class weights `dist`.
    pub fn new(layout: &Layout, dist: Vec<f64>, depth: usize, used: Vec<usize>) -> Self {
        LeafNode {
            depth,
            dist,
            seen: 0.0,
            seen_at_last_attempt: 0.0,
            mc_correct: 0.0,
            nb_correct: 0.0,
            gaussians: vec![GaussianEstimator::new(); layout.num_gaussians],
            counts: vec![0.0; layout.num_counts],
            used,
            gaussian_lns: LnMemos::new(layout.num_gaussians),
        }
    }

    /// Sizes the memoized logarithms again after a deserialization dropped them.
    #[inline]
    pub fn ensure_memos(&mut self, layout: &Layout) {
        self.gaussian_lns.ensure_len(layout.num_gaussians);
    }

    /// The total class weight (inherited and seen).
    #[inline]
    pub fn total(&self) -> f64 {
        self.dist.iter().sum()
    }

    /// Whether local attribute `i` was split on above this leaf.
    #[inline]
    pub fn is_used(&self, i: usize) -> bool {
        !self.used.is_empty() && self.used.binary_search(&i).is_ok()
    }

    /// Adds `(x, class c, weight w)` to the statistics (missing values skipped); `w` is
    /// finite and positive.
    pub fn update(&mut self, layout: &Layout, x: &Features, c: usize, w: f64) {
        debug_assert!(w > 0.0 && w.is_finite());
        let k = layout.k;
        self.dist[c] += w;
        self.seen += w;
        let LeafNode {
            gaussians,
            counts,
            used,
            ..
        } = self;
        layout.for_each_value(x, |i, value| {
            if !value.is_finite() {
                return;
            }
            match layout.slots[i] {
                AttrSlot::Numeric { offset } => {
                    gaussians[offset].update_valid(value, w);
                    gaussians[offset + 1 + c].update_valid(value, w);
                }
                AttrSlot::Nominal { offset, values } => {
                    if !used.is_empty() && used.binary_search(&i).is_ok() {
                        return;
                    }
                    if let Some(v) = nominal::value_index(value, values) {
                        let len = nominal::slots(values, k);
                        nominal::update(&mut counts[offset..offset + len], k, v, c, w);
                    }
                }
            }
        });
    }
}

/// The test of a split node.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) enum SplitTest {
    /// Two children: `x <= threshold` goes to the first.
    Numeric {
        /// The threshold.
        threshold: f64,
    },
    /// One child per value of a nominal attribute.
    Nominal {
        /// The number of values.
        values: usize,
    },
}

/// An inner node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct SplitNode {
    /// The local index of the attribute tested.
    pub attr: usize,
    /// The test.
    pub test: SplitTest,
    /// The node index of each branch.
    pub children: Vec<usize>,
    /// The weight each branch has received (predicted at the split, then learned):
    /// missing values go to the heaviest branch.
    pub branch_weight: Vec<f64>,
    /// The class weights of the leaf this node replaced: the prediction of a child that
    /// has no weight at all.
    pub dist: Vec<f64>,
}

impl SplitNode {
    /// The branch value `x` of the tested attribute goes to.
    #[inline]
    pub fn branch(&self, x: f64) -> usize {
        let b = match self.test {
            SplitTest::Numeric { threshold } => {
                if x.is_finite() {
                    Some(if x <= threshold { 0 } else { 1 })
                } else if x == f64::INFINITY {
                    Some(1)
                } else if x == f64::NEG_INFINITY {
                    Some(0)
                } else {
                    None
                }
            }
            SplitTest::Nominal { values } => nominal::value_index(x, values),
        };
        b.unwrap_or_else(|| self.heaviest())
    }

    /// The branch that has received the most weight (the first on ties).
    #[inline]
    pub fn heaviest(&self) -> usize {
        let mut best = 0;
        for (b, &w) in self.branch_weight.iter().enumerate() {
            if w > self.branch_weight[best] {
                best = b;
            }
        }
        best
    }
}

/// A node of the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) enum Node {
    /// A leaf.
    Leaf(LeafNode),
    /// An inner node.
    Split(SplitNode),
}
