//! The Hoeffding tree (VFDT, Domingos & Hulten 2000), with MOA's Gaussian numeric
//! attribute observer, naive Bayes (adaptive) leaves and importance weights throughout.
//!
//! - A leaf keeps, per attribute it looks at, a weighted Gaussian estimator per class
//!   (numeric attributes, see [`gaussian`]) or weighted counts per value and class
//!   (nominal attributes), in two flat vectors allocated once when the leaf is created.
//! - Each time a leaf has seen `grace_period` more weight, it evaluates every attribute's
//!   best split by information gain ([`split`]): `split_points` thresholds for a numeric
//!   attribute (binary split `x <= t`), one branch per value for a nominal one. It splits
//!   when the best merit beats the second best (or the null split, merit 0) by more than
//!   the Hoeffding bound `eps`, or when `eps < tie_threshold`.
//! - Missing values (`NaN`) are skipped in every statistic; at a split node they follow
//!   the branch that has received the most weight.
//! - With `feature_subset: Some(m)` the tree looks at `m` attributes drawn once from its
//!   seed, and sizes its statistics for those only.
//!
//! ```
//! use flowboost_operators::data::{Features, Schema, Task};
//! use flowboost_operators::learners::{HoeffdingTree, HoeffdingTreeConfig, WeakLearner};
//!
//! let schema = Schema::numeric(2, 2, Task::Binary);
//! let config = HoeffdingTreeConfig { grace_period: 50.0, ..HoeffdingTreeConfig::default() };
//! let mut tree = HoeffdingTree::new(&schema, config, 7);
//! for i in 0..2000 {
//!     let x0 = (i % 100) as f64 / 100.0;
//!     let label = u32::from(x0 > 0.3);
//!     tree.learn(&Features::Dense(vec![x0, 0.5]), label, 1.0);
//! }
//! let mut p = [0.0; 2];
//! tree.predict(&Features::Dense(vec![0.9, 0.5]), &mut p);
//! assert!(p[1] > 0.9);
//! ```

mod config;
pub mod gaussian;
mod memo;
mod naive_bayes;
mod node;
mod nominal;
pub mod split;

pub use config::{
    HoeffdingTreeConfig, LeafPrediction, RANDOM_CONFIDENCE_RANGE, RANDOM_GRACE_RANGE,
};

use self::memo::{LastPrediction, Verdict};
use self::node::{AttrSlot, Layout, LeafNode, Node, SplitNode, SplitTest};
use super::WeakLearner;
use crate::data::{Features, Schema};
use crate::rng::seeded;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

/// The random stream (under the tree's seed) that draws the feature subset.
const FEATURE_SUBSET_STREAM: u64 = 0x7472_6565; // "tree"

/// A split must gain more than this (bits) to be made at all.
const MIN_MERIT: f64 = 1e-12;

/// A Hoeffding tree: an incremental decision tree that splits a leaf once the Hoeffding
/// bound says, with confidence `1 - split_confidence`, that its best attribute is the
/// best one.
///
/// Predicting and learning do not allocate (a split does). Deterministic for a given
/// seed; serializable for checkpoints.
///
/// Fast without changing a bit of any result: `learn(x, ..)` right after `predict(x)` or
/// [`predict_top(x)`](Self::predict_top) (what every booster does) reuses what the
/// prediction found out about naive Bayes at the leaf (its scores, or its best class);
/// otherwise the best class adaptive leaves need is usually told without a logarithm per
/// attribute, from bounded approximate scores; the logarithms of the variances are
/// memoized per leaf. The memos are not state (not serialized): the tree is `Send` but
/// not `Sync`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HoeffdingTree {
    config: HoeffdingTreeConfig,
    layout: Layout,
    /// The nodes; the root is node 0.
    nodes: Vec<Node>,
    num_leaves: usize,
    depth: usize,
    /// Naive Bayes scores while learning (not part of the state).
    #[serde(skip)]
    scratch: Vec<f64>,
    /// Naive Bayes' bounded scores while learning (not part of the state).
    #[serde(skip)]
    class_sums: Vec<naive_bayes::ClassSum>,
    /// Working space of split attempts (not part of the state).
    #[serde(skip)]
    split_scratch: Vec<f64>,
    /// What the last prediction found out about naive Bayes (adaptive leaves only; not
    /// part of the state), for the `learn` of the same example that usually follows.
    #[serde(skip)]
    last: Box<RefCell<LastPrediction>>,
}

impl HoeffdingTree {
    /// A tree with a single empty leaf, for the attributes and labels of `schema`.
    ///
    /// `seed` only matters with [`HoeffdingTreeConfig::feature_subset`]: it chooses the
    /// attributes the tree looks at.
    pub fn new(schema: &Schema, config: HoeffdingTreeConfig, seed: u64) -> Self {
        let dim = schema.dim();
        let features = match config.feature_subset {
            Some(m) if m < dim => {
                let mut rng = seeded(seed, FEATURE_SUBSET_STREAM);
                let mut all: Vec<usize> = (0..dim).collect();
                for i in 0..m {
                    let j = rng.random_range(i..dim);
                    all.swap(i, j);
                }
                all.truncate(m);
                all.sort_unstable();
                all
            }
            _ => (0..dim).collect(),
        };
        let layout = Layout::new(schema, features);
        let k = layout.k;
        let root = LeafNode::new(&layout, vec![0.0; k], 0, Vec::new());
        HoeffdingTree {
            config,
            layout,
            nodes: vec![Node::Leaf(root)],
            num_leaves: 1,
            depth: 0,
            scratch: vec![0.0; k],
            class_sums: Vec::with_capacity(k),
            split_scratch: Vec::new(),
            last: Box::default(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &HoeffdingTreeConfig {
        &self.config
    }

    /// The number of leaves.
    pub fn num_leaves(&self) -> usize {
        self.num_leaves
    }

    /// The number of nodes (leaves and inner nodes).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The depth of the deepest leaf (0 for a single leaf).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The attributes (feature indices, ascending) this tree looks at.
    pub fn features(&self) -> &[usize] {
        &self.layout.features
    }

    /// The label [`predict`](WeakLearner::predict) would give strictly the highest
    /// probability, when that is cheap to tell: `None` when only `predict` can say (at a
    /// leaf predicting by majority class, with naive Bayes scores too close to call, ...).
    ///
    /// For callers that need only the predicted label (or sign) of a tree with naive
    /// Bayes leaves: no logarithm per attribute (see the bounds of naive Bayes'
    /// `bounded_argmax`). `Some(l)` guarantees that `predict(x)` would give `p[l] > p[c]`
    /// for every other label `c`. Like `predict`, it prepares a following `learn` of the
    /// same `x`.
    pub fn predict_top(&self, x: &Features) -> Option<usize> {
        let (index, leaf, _) = self.find_leaf(x);
        let use_nb = match self.config.leaf_prediction {
            LeafPrediction::MajorityClass => false,
            LeafPrediction::NaiveBayes => true,
            LeafPrediction::NaiveBayesAdaptive => leaf.mc_correct <= leaf.nb_correct,
        };
        if !(use_nb && leaf.seen > 0.0) {
            return None;
        }
        let mut last = self.last.try_borrow_mut().ok()?;
        // The best score beats the others by more than `2^-24` or so: so do the
        // probabilities `predict` normalizes them into (`exp(0) = 1` against at most
        // `exp(-2^-24)`, both divided by the same sum).
        let best = naive_bayes::bounded_argmax(&self.layout, leaf, x, &mut last.sums)??;
        if self.config.leaf_prediction == LeafPrediction::NaiveBayesAdaptive {
            last.record_best(x, index, best);
        }
        Some(best)
    }

    /// The leaf `x` falls into (and its node index), and the class weights of the
    /// closest inner node above it (the prediction of a leaf that has no weight at all).
    fn find_leaf(&self, x: &Features) -> (usize, &LeafNode, Option<&[f64]>) {
        let mut fallback = None;
        let mut i = 0;
        loop {
            match &self.nodes[i] {
                Node::Leaf(leaf) => return (i, leaf, fallback),
                Node::Split(s) => {
                    fallback = Some(s.dist.as_slice());
                    i = s.children[s.branch(x.get(self.layout.features[s.attr]))];
                }
            }
        }
    }

    /// Whether a leaf may still split (depth and size limits, something to split on).
    fn can_grow(&self, leaf: &LeafNode) -> bool {
        !self.layout.features.is_empty()
            && self.config.max_depth.is_none_or(|d| leaf.depth < d)
            && self.config.max_leaves.is_none_or(|m| self.num_leaves < m)
    }

    /// Evaluates the splits of leaf `index` and splits it if the Hoeffding test says so.
    fn attempt_split(&mut self, index: usize) {
        let mut scratch = std::mem::take(&mut self.split_scratch);
        self.try_split(index, &mut scratch);
        self.split_scratch = scratch;
    }

    /// [`attempt_split`](Self::attempt_split) with its working space.
    fn try_split(&mut self, index: usize, scratch: &mut Vec<f64>) {
        let Node::Leaf(leaf) = &self.nodes[index] else {
            return;
        };
        if leaf.dist.iter().filter(|&&w| w > 0.0).count() < 2 {
            return; // pure: nothing to gain
        }
        let k = self.layout.k;
        let n = leaf.seen;
        // The best candidate, and the second best merit: the null split (merit 0) counts.
        let mut best: Option<(f64, usize, SplitTest)> = None;
        let mut second = 0.0_f64;
        for (attr, slot) in self.layout.slots.iter().enumerate() {
            let candidate = match *slot {
                AttrSlot::Numeric { offset } => split::best_numeric_split(
                    &leaf.gaussians[offset..offset + k + 1],
                    self.config.split_points,
                    n,
                    scratch,
                )
                .map(|(merit, threshold)| (merit, SplitTest::Numeric { threshold })),
                AttrSlot::Nominal { offset, values } => {
                    if leaf.is_used(attr) {
                        None
                    } else {
                        let counts = &leaf.counts[offset..offset + nominal::slots(values, k)];
                        nominal::merit(counts, k, values, n)
                            .map(|merit| (merit, SplitTest::Nominal { values }))
                    }
                }
            };
            let Some((merit, test)) = candidate else {
                continue;
            };
            match best {
                Some((b, _, _)) if merit <= b => second = second.max(merit),
                _ => {
                    if let Some((b, _, _)) = best {
                        second = second.max(b);
                    }
                    best = Some((merit, attr, test));
                }
            }
        }
        let Some((merit, attr, test)) = best else {
            return;
        };
        // `n` is the leaf's whole class weight, including what it inherited at its creation
        // (as MOA and River do), not only the weight it has seen itself.
        let eps = split::hoeffding_bound(
            split::gain_range(k),
            self.config.split_confidence,
            leaf.total(),
        );
        if !(merit > MIN_MERIT && (merit - second > eps || eps < self.config.tie_threshold)) {
            return;
        }
        let dists: Vec<Vec<f64>> = match test {
            SplitTest::Numeric { threshold } => {
                let AttrSlot::Numeric { offset } = self.layout.slots[attr] else {
                    return;
                };
                split::numeric_branch_dists(&leaf.gaussians[offset + 1..offset + 1 + k], threshold)
                    .into()
            }
            SplitTest::Nominal { values } => {
                let AttrSlot::Nominal { offset, .. } = self.layout.slots[attr] else {
                    return;
                };
                nominal::branch_dists(
                    &leaf.counts[offset..offset + nominal::slots(values, k)],
                    k,
                    values,
                )
            }
        };
        let branches = dists.len();
        if self
            .config
            .max_leaves
            .is_some_and(|m| self.num_leaves - 1 + branches > m)
        {
            return;
        }
        let depth = leaf.depth + 1;
        let mut used = leaf.used.clone();
        if let (SplitTest::Nominal { .. }, Err(p)) = (test, used.binary_search(&attr)) {
            used.insert(p, attr);
        }
        let parent_dist = leaf.dist.clone();
        let first = self.nodes.len();
        let mut branch_weight = Vec::with_capacity(branches);
        for dist in dists {
            branch_weight.push(dist.iter().sum());
            let child = LeafNode::new(&self.layout, dist, depth, used.clone());
            self.nodes.push(Node::Leaf(child));
        }
        self.nodes[index] = Node::Split(SplitNode {
            attr,
            test,
            children: (first..first + branches).collect(),
            branch_weight,
            dist: parent_dist,
        });
        self.num_leaves += branches - 1;
        self.depth = self.depth.max(depth);
    }
}

/// The index of the largest value (the first on ties), `None` if none is a number.
fn argmax(v: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in v.iter().enumerate() {
        if !x.is_nan() && best.is_none_or(|b| x > v[b]) {
            best = Some(i);
        }
    }
    best
}

/// Writes `dist / sum(dist)` into `out`; `false` if `dist` has no positive weight.
fn write_normalized(dist: &[f64], out: &mut [f64]) -> bool {
    let total: f64 = dist.iter().filter(|&&w| w > 0.0).sum();
    if !(total > 0.0 && total.is_finite()) {
        return false;
    }
    for (o, &w) in out.iter_mut().zip(dist) {
        *o = if w > 0.0 { w / total } else { 0.0 };
    }
    true
}

impl WeakLearner for HoeffdingTree {
    fn num_labels(&self) -> usize {
        self.layout.k
    }

    fn predict(&self, x: &Features, out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.layout.k, "predict: out must have k entries");
        if out.is_empty() {
            return;
        }
        let uniform = 1.0 / out.len() as f64;
        if out.len() != self.layout.k {
            out.fill(uniform);
            return;
        }
        let (index, leaf, fallback) = self.find_leaf(x);
        let adaptive = self.config.leaf_prediction == LeafPrediction::NaiveBayesAdaptive;
        let use_nb = match self.config.leaf_prediction {
            LeafPrediction::MajorityClass => false,
            LeafPrediction::NaiveBayes => true,
            LeafPrediction::NaiveBayesAdaptive => leaf.mc_correct <= leaf.nb_correct,
        };
        let done = if use_nb && leaf.seen > 0.0 {
            naive_bayes::log_scores(&self.layout, leaf, x, out);
            if adaptive && let Ok(mut last) = self.last.try_borrow_mut() {
                last.record_scores(x, index, out);
            }
            naive_bayes::normalize_log(out) || write_normalized(&leaf.dist, out)
        } else {
            write_normalized(&leaf.dist, out)
        };
        if !done && !fallback.is_some_and(|d| write_normalized(d, out)) {
            out.fill(uniform);
        }
    }

    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        let k = self.layout.k;
        let c = label as usize;
        if !(weight > 0.0 && weight.is_finite()) || c >= k {
            return;
        }
        let HoeffdingTree {
            config,
            layout,
            nodes,
            scratch,
            class_sums,
            last,
            ..
        } = self;
        let last = last.get_mut();
        let mut index = 0;
        while let Node::Split(s) = &mut nodes[index] {
            let b = s.branch(x.get(layout.features[s.attr]));
            s.branch_weight[b] += weight;
            index = s.children[b];
        }
        let Node::Leaf(leaf) = &mut nodes[index] else {
            return;
        };
        leaf.ensure_memos(layout);
        if config.leaf_prediction == LeafPrediction::NaiveBayesAdaptive && leaf.total() > 0.0 {
            // Score both predictors on this example before learning from it. Naive Bayes
            // usually scored it already, predicting it; otherwise its best class can
            // usually be told without computing its scores exactly.
            let mc = argmax(&leaf.dist);
            let nb_best =
                |scores: &[f64]| argmax(scores).filter(|&b| scores[b] > f64::NEG_INFINITY);
            let nb = match last.get(x, index) {
                Some(Verdict::Scores(scores)) => nb_best(scores),
                Some(Verdict::Best(best)) => Some(best),
                None => {
                    naive_bayes::bounded_argmax(layout, leaf, x, class_sums).unwrap_or_else(|| {
                        scratch.resize(k, 0.0);
                        naive_bayes::log_scores(layout, leaf, x, scratch);
                        nb_best(scratch)
                    })
                }
            }
            .or(mc);
            if mc == Some(c) {
                leaf.mc_correct += weight;
            }
            if nb == Some(c) {
                leaf.nb_correct += weight;
            }
        }
        last.invalidate();
        leaf.update(layout, x, c, weight);
        if leaf.seen - leaf.seen_at_last_attempt >= config.grace_period {
            leaf.seen_at_last_attempt = leaf.seen;
            let Node::Leaf(leaf) = &self.nodes[index] else {
                return;
            };
            if self.can_grow(leaf) {
                self.attempt_split(index);
            }
        }
    }
}
