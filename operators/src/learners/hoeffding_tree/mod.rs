//! The Hoeffding tree (VFDT, Domingos & Hulten 2000), with MOA's Gaussian numeric
//! attribute observer, naive Bayes (adaptive) leaves and importance weights throughout.
//!
//! - A leaf keeps, per attribute it looks at, a weighted Gaussian estimator per class
//!   (numeric attributes, see [`gaussian`]) or weighted counts per value and class
//!   (nominal attributes). The numeric statistics are sparse twice over: only for the
//!   classes the leaf has learned, and only of the non-zero values (the zeros are folded
//!   in when the statistics are read), so a sparse example costs work for its non-zero
//!   values only; see `stats.rs`.
//! - Each time a leaf has seen `grace_period` more weight, it evaluates every attribute's
//!   best split by information gain ([`split`]): `split_points` thresholds for a numeric
//!   attribute (binary split `x <= t`), one branch per value for a nominal one. It splits
//!   when the best merit beats the second best (or the null split, merit 0) by more than
//!   the Hoeffding bound `eps`, or when `eps < tie_threshold`. Cheap guaranteed bounds on
//!   the merits settle most attempts that cannot split without computing any merit
//!   exactly (`bounds.rs`): the splits are those of the exact computation.
//! - Missing values (`NaN`) are skipped in every statistic; at a split node they follow
//!   the branch that has received the most weight.
//! - With `feature_subset: Some(m)` the tree looks at `m` attributes drawn once from its
//!   seed, and sizes its statistics for those only.
//! - With a memory budget ([`HoeffdingTree::set_max_bytes`]) the tree manages its memory
//!   as MOA's `HoeffdingTree` does (`maxByteSize`, `enforceTrackerLimit`): when it
//!   outgrows the budget, its least promising leaves are deactivated (they keep only
//!   their class weights, predict the majority class and stop splitting), and when
//!   memory frees up the most promising inactive leaves get fresh statistics again; see
//!   [`HoeffdingTree::set_max_bytes`] for the rules and where they differ from MOA's.
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

mod bounds;
#[cfg(test)]
mod budget_tests;
mod config;
pub mod gaussian;
mod memo;
mod naive_bayes;
mod node;
mod nominal;
mod shared_views;
pub mod split;
mod state_error;
mod stats;

pub use config::{
    HoeffdingTreeConfig, LeafPrediction, RANDOM_CONFIDENCE_RANGE, RANDOM_GRACE_RANGE,
};
pub use shared_views::SharedViews;
pub use state_error::{StatsError, TreeStateError};

use self::gaussian::GaussianEstimator;
use self::memo::Memo;
use self::node::{
    AttrSlot, InactiveLeaf, Layout, LeafNode, Node, Route, SplitNode, SplitTest, vec_bytes,
};
use super::WeakLearner;
use crate::data::{Features, Schema};
use crate::rng::seeded;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};

/// The random stream (under the tree's seed) that draws the feature subset.
const FEATURE_SUBSET_STREAM: u64 = 0x7472_6565; // "tree"

/// A split must gain more than this (bits) to be made at all.
const MIN_MERIT: f64 = 1e-12;

/// [`HoeffdingTree::predict_top`] names a label only when its score beats every other by
/// more than this (`2^-40`): then `predict` gives it strictly the highest probability.
const TOP_MARGIN: f64 = 9.094_947_017_729_282e-13;

/// An enforcement of the memory budget fits the tree into the budget less `1 /
/// BUDGET_SLACK` of it, so that the next one waits until the tree has grown by that much.
const BUDGET_SLACK: usize = 16;

/// With inactive leaves, a split triggers an enforcement of the budget (which may
/// reactivate leaves) when it takes the leaf count past a multiple of this, or of the
/// power of two at or above 1/16 of the leaf count if larger (so that the sorting of the
/// leaves costs a constant per split, amortized).
const REACTIVATION_LEAVES: usize = 32;

/// A Hoeffding tree: an incremental decision tree that splits a leaf once the Hoeffding
/// bound says, with confidence `1 - split_confidence`, that its best attribute is the
/// best one.
///
/// Predicting and learning do not allocate (a split does, and so does a leaf's first
/// example of a class). Deterministic for a given seed; serializable for checkpoints.
///
/// Sparse examples cost work for their non-zero values only: the leaves keep
/// statistics of the non-zero values and fold the zeros in when they read them, and
/// naive Bayes keeps per class what an all-zero example would score. `learn(x, ..)`
/// right after `predict(x)` or [`predict_top(x)`](Self::predict_top) (what every booster
/// does), or after another `learn(x, ..)`, reuses the path to the leaf and the naive
/// Bayes likelihoods of `x` (brought up to date for the class just learned). These
/// memos and caches are not state (not serialized; rebuilt from the state after a
/// deserialization): the tree is `Send` but not `Sync`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "TreeState")]
pub struct HoeffdingTree {
    config: HoeffdingTreeConfig,
    /// Shared by the trees that look at the same attributes (see [`shared_layout`]).
    layout: Arc<Layout>,
    /// The nodes; the root is node 0.
    nodes: Vec<Node>,
    num_leaves: usize,
    depth: usize,
    /// The nodes as the way from the root sees them (not part of the state).
    #[serde(skip)]
    routes: Vec<Route>,
    /// Working space of split attempts (not part of the state).
    #[serde(skip)]
    split_scratch: Vec<f64>,
    /// Working space of the bounds of split attempts (not part of the state).
    #[serde(skip)]
    bound_scratch: RefCell<bounds::BoundScratch>,
    /// What the tree found out about the last example it looked at (not part of the
    /// state; boxed, so that a tree stays small and `learn` moves a pointer to take it
    /// out and put it back; `None` until the first use).
    #[serde(skip)]
    last: RefCell<Option<Box<Memo>>>,
    /// The memory budget in bytes (not part of the state: its owner sets it, see
    /// [`set_max_bytes`](Self::set_max_bytes)).
    #[serde(skip)]
    max_bytes: Option<usize>,
    /// With a budget: [`memory_bytes`](Self::memory_bytes), kept up to date by every
    /// change; 0 without one (not part of the state).
    #[serde(skip)]
    bytes: usize,
    /// The number of inactive leaves (not part of the state: counted from the nodes).
    #[serde(skip)]
    inactive: usize,
}

/// The serialized state of a [`HoeffdingTree`]; deserializing rebuilds what the leaves
/// precompute from it.
#[derive(Deserialize)]
struct TreeState {
    config: HoeffdingTreeConfig,
    layout: Arc<Layout>,
    nodes: Vec<Node>,
    num_leaves: usize,
    depth: usize,
}

impl TreeState {
    /// Whether the state is a tree this code can use: a damaged model file (even with
    /// valid checksums) is refused here, never panics later.
    fn check(&self) -> Result<(), TreeStateError> {
        let layout = &self.layout;
        let (k, f) = (layout.k, layout.features.len());
        let d = layout.numeric.len();
        if k == 0 || layout.slots.len() != f || layout.numeric_local.len() != d {
            return Err(TreeStateError::LayoutSizes);
        }
        let mut columns = 0;
        let mut counts = 0usize;
        for slot in &layout.slots {
            match *slot {
                node::AttrSlot::Numeric { column } => {
                    if column != columns {
                        return Err(TreeStateError::MisnumberedColumns);
                    }
                    columns += 1;
                }
                node::AttrSlot::Nominal { offset, values } => {
                    if offset != counts || values == 0 || values > u32::MAX as usize / 2 {
                        return Err(TreeStateError::MisplacedNominalCounts);
                    }
                    counts = counts
                        .checked_add(nominal::slots(values, k))
                        .ok_or(TreeStateError::TooManyCounts)?;
                }
            }
        }
        if columns != d
            || counts != layout.num_counts
            || layout.numeric_local.iter().any(|&i| i >= f)
            || layout.nominal.iter().any(|&i| i >= f)
        {
            return Err(TreeStateError::LayoutSizes);
        }
        if self.nodes.is_empty() || self.nodes.len() > u32::MAX as usize / 2 {
            return Err(TreeStateError::NoNodes);
        }
        let mut leaves = 0;
        for (n, node) in self.nodes.iter().enumerate() {
            match node {
                Node::Leaf(leaf) => {
                    leaves += 1;
                    // A leaf's depth is below the node count (each level adds two nodes).
                    if leaf.dist.len() != k
                        || leaf.depth >= self.nodes.len()
                        || leaf.counts.len() != layout.num_counts
                        || leaf.used.iter().any(|&i| i >= f)
                    {
                        return Err(TreeStateError::LeafSizes(n));
                    }
                    leaf.numeric
                        .check(d, k)
                        .map_err(|stats| TreeStateError::LeafStats { leaf: n, stats })?;
                    // Every example a leaf learns goes into its numeric statistics.
                    if d > 0 && leaf.seen > 0.0 && leaf.numeric.count[0] == 0 {
                        return Err(TreeStateError::LeafWithoutStats(n));
                    }
                }
                Node::Inactive(leaf) => {
                    leaves += 1;
                    if leaf.dist.len() != k
                        || leaf.depth >= self.nodes.len()
                        || leaf.used.iter().any(|&i| i >= f)
                    {
                        return Err(TreeStateError::InactiveLeafSizes(n));
                    }
                }
                Node::Split(s) => {
                    let branches = match (s.test, layout.slots.get(s.attr)) {
                        (SplitTest::Numeric { .. }, Some(node::AttrSlot::Numeric { .. })) => 2,
                        (
                            SplitTest::Nominal { values },
                            Some(&node::AttrSlot::Nominal { values: v, .. }),
                        ) if values == v => values,
                        _ => return Err(TreeStateError::WrongTestAttribute(n)),
                    };
                    // Children come after their parent, consecutively (no cycle).
                    let first = s.children.first().copied().unwrap_or(0);
                    if s.children.len() != branches
                        || s.branch_weight.len() != branches
                        || s.dist.len() != k
                        || first <= n
                        || s.children
                            .iter()
                            .enumerate()
                            .any(|(b, &c)| c != first + b || c >= self.nodes.len())
                    {
                        return Err(TreeStateError::ChildrenSizes(n));
                    }
                }
            }
        }
        if leaves != self.num_leaves {
            return Err(TreeStateError::LeafCount);
        }
        Ok(())
    }
}

impl TryFrom<TreeState> for HoeffdingTree {
    type Error = TreeStateError;

    fn try_from(state: TreeState) -> Result<Self, TreeStateError> {
        state.check()?;
        let mut nodes = state.nodes;
        let mut inactive = 0;
        for node in &mut nodes {
            match node {
                Node::Leaf(leaf) => leaf.rebuild_cache(&state.layout),
                Node::Inactive(_) => inactive += 1,
                Node::Split(_) => {}
            }
        }
        Ok(HoeffdingTree {
            config: state.config,
            layout: shared_layout(state.layout),
            routes: nodes.iter().map(Route::of).collect(),
            nodes,
            num_leaves: state.num_leaves,
            depth: state.depth,
            split_scratch: Vec::new(),
            bound_scratch: RefCell::default(),
            last: RefCell::default(),
            max_bytes: None,
            bytes: 0,
            inactive,
        })
    }
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
        let layout = shared_layout(Arc::new(Layout::new(schema, features)));
        let k = layout.k;
        let root = Node::Leaf(Box::new(LeafNode::new(
            &layout,
            vec![0.0; k],
            0,
            Vec::new(),
        )));
        HoeffdingTree {
            config,
            layout,
            routes: vec![Route::of(&root)],
            nodes: vec![root],
            num_leaves: 1,
            depth: 0,
            split_scratch: Vec::new(),
            bound_scratch: RefCell::default(),
            last: RefCell::default(),
            max_bytes: None,
            bytes: 0,
            inactive: 0,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &HoeffdingTreeConfig {
        &self.config
    }

    /// The number of leaves (active and inactive).
    pub fn num_leaves(&self) -> usize {
        self.num_leaves
    }

    /// The number of leaves the memory budget has deactivated.
    pub fn num_inactive_leaves(&self) -> usize {
        self.inactive
    }

    /// The memory budget in bytes, if any.
    pub fn max_bytes(&self) -> Option<usize> {
        self.max_bytes
    }

    /// Sets the memory budget (`None`: none); it takes effect at the next split or
    /// [`learn`](WeakLearner::learn) that finds the tree over it. Not part of the
    /// serialized state: whoever restores a tree sets its budget again (the boosters do,
    /// from their configuration).
    ///
    /// The rules are MOA's (`HoeffdingTree` with `maxByteSize`, `enforceTrackerLimit`),
    /// adapted:
    ///
    /// - The size is [`memory_bytes`](Self::memory_bytes), exact and kept up to date by
    ///   every change (MOA measures the model every `memoryEstimatePeriod` examples and
    ///   assumes every active leaf has the average size).
    /// - An *enforcement* ranks every leaf by its promise, the weight of its class
    ///   distribution outside the majority class (MOA's `calculatePromise`), the most
    ///   promising first (ties: the newer leaf first). Going down the ranking, it keeps
    ///   leaves active while the tree fits the budget less 1/16 of it (MOA: the budget),
    ///   counting an active leaf at its exact size and an inactive one at the average
    ///   size of the active leaves; the first leaf that does not fit and all after it are
    ///   deactivated, the inactive ones before it reactivated.
    /// - It runs when a learn or a split leaves the tree over the budget with an active
    ///   leaf left (MOA: after a split, or every `memoryEstimatePeriod` examples when over
    ///   the budget), and, while there are inactive leaves, after a split that takes the
    ///   leaf count past a multiple of 32, or of the power of two at or above 1/16 of the
    ///   leaf count when that is larger (MOA: after every split). The 1/16 of slack and
    ///   this spacing keep enforcements, which sort the leaves, to a constant cost per
    ///   split, amortized.
    /// - A deactivated leaf drops its attribute statistics and keeps its class weights
    ///   and depth (MOA's `InactiveLearningNode`): it learns only the class weights,
    ///   predicts them, and never splits. A reactivated leaf starts fresh statistics and
    ///   prediction counts from its class weights, as a new leaf does.
    ///
    /// A budget below the tree's size with every leaf inactive (its split nodes and class
    /// weights) deactivates every leaf: the tree stops growing.
    pub fn set_max_bytes(&mut self, max_bytes: Option<usize>) {
        self.max_bytes = max_bytes;
        self.bytes = if max_bytes.is_some() {
            self.memory_bytes()
        } else {
            0
        };
    }

    /// The tree's memory in bytes: the tree itself, its layout, its node array and what
    /// every node holds (a leaf's class weights, statistics and naive Bayes cache; a
    /// split's children and weights), each vector counted by its length. Not counted: the
    /// allocator's overhead and the working space of the last example (bounded by the
    /// number of attributes). A pure function of the state: the same after a round trip
    /// through serde.
    pub fn memory_bytes(&self) -> usize {
        let l = &self.layout;
        std::mem::size_of::<HoeffdingTree>()
            + vec_bytes(&l.features)
            + vec_bytes(&l.slots)
            + vec_bytes(&l.numeric)
            + vec_bytes(&l.numeric_local)
            + vec_bytes(&l.nominal)
            + self.nodes.len() * NODE_BYTES
            + self.nodes.iter().map(Node::heap_bytes).sum::<usize>()
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

    /// Whether the leaf predicts with naive Bayes now.
    #[inline]
    fn uses_nb(&self, leaf: &LeafNode) -> bool {
        match self.config.leaf_prediction {
            LeafPrediction::MajorityClass => false,
            LeafPrediction::NaiveBayes => true,
            LeafPrediction::NaiveBayesAdaptive => leaf.mc_correct <= leaf.nb_correct,
        }
    }

    /// The label [`predict`](WeakLearner::predict) would give strictly the highest
    /// probability, when that is easy to tell: `None` when only `predict` can say (scores
    /// or weights too close to call, a leaf without weight, ...).
    ///
    /// For callers that need only the predicted label (or sign): no normalization.
    /// `Some(l)` guarantees that `predict(x)` would give `p[l] > p[c]` for every other
    /// label `c`. Like `predict`, it prepares a following `learn` of the same `x`.
    pub fn predict_top(&self, x: &Features) -> Option<usize> {
        self.predict_top_in(x, &mut SharedViews::none())
    }

    /// [`predict_top`](Self::predict_top), sharing the example's view with the other
    /// trees the caller runs through `views`.
    pub fn predict_top_in(&self, x: &Features, views: &mut SharedViews) -> Option<usize> {
        let Ok(mut memo) = self.last.try_borrow_mut() else {
            return None;
        };
        let memo = &mut **memo.get_or_insert_with(Box::default);
        let index = self.locate(x, memo, views);
        let leaf = match &self.nodes[index] {
            Node::Leaf(leaf) => leaf,
            Node::Inactive(leaf) => return clear_majority(&leaf.dist),
            Node::Split(_) => return None,
        };
        if !(self.uses_nb(leaf) && leaf.seen > 0.0) {
            return clear_majority(&leaf.dist);
        }
        self.ensure_likelihoods(index, memo);
        let k = self.layout.k;
        memo.scores.resize(k, 0.0);
        naive_bayes::scores(leaf, &memo.lik, &mut memo.scores);
        let scores = &memo.scores;
        let best = argmax(scores).filter(|&b| scores[b].is_finite())?;
        let top = scores[best];
        let clear = scores.iter().enumerate().all(|(c, &v)| {
            c == best || v.is_nan() || v == f64::NEG_INFINITY || top - v > TOP_MARGIN
        });
        clear.then_some(best)
    }

    /// The leaf `x` falls into (its node index), found from the memo when it describes
    /// `x` (which it does afterwards, path included).
    fn locate(&self, x: &Features, memo: &mut Memo, views: &mut SharedViews) -> usize {
        let mut i = if memo.matches(x) {
            if memo.path_ok && memo.leaf != usize::MAX {
                memo.leaf
            } else {
                memo.path.clear();
                memo.path_ok = true;
                0
            }
        } else {
            memo.set(&self.layout, x, views);
            0
        };
        while let Some(attr) = self.routes[i].attr() {
            let route = self.routes[i];
            let b = match route.branch(memo.value(&self.layout, attr)) {
                Some(b) => b,
                None => {
                    // Decided by the branch weights, which learning changes.
                    memo.path_ok = false;
                    match &self.nodes[i] {
                        Node::Split(s) => s.heaviest(),
                        Node::Leaf(_) | Node::Inactive(_) => break,
                    }
                }
            };
            memo.path.push((i as u32, b as u32));
            i = route.child(b);
        }
        if memo.leaf != i {
            memo.leaf = i;
            memo.lik_valid = false;
        }
        i
    }

    /// Makes `memo.lik` the likelihoods of the memo's example at leaf `index`.
    fn ensure_likelihoods(&self, index: usize, memo: &mut Memo) {
        let Node::Leaf(leaf) = &self.nodes[index] else {
            return;
        };
        if !memo.lik_valid {
            naive_bayes::likelihoods(
                &self.layout,
                leaf,
                &memo.example.view,
                &mut memo.terms,
                &mut memo.locals,
                &mut memo.lik,
            );
            memo.lik_valid = true;
        } else if !memo.pending.is_empty() {
            naive_bayes::update_likelihoods(
                &self.layout,
                leaf,
                &memo.example.view,
                &memo.pending,
                &mut memo.terms,
                &mut memo.locals,
                &mut memo.lik,
            );
        }
        memo.pending.clear();
    }

    /// The class weights of the closest inner node above node `index` on the memo's path.
    fn fallback<'a>(&'a self, memo: &Memo) -> Option<&'a [f64]> {
        let &(node, _) = memo.path.last()?;
        match &self.nodes[node as usize] {
            Node::Split(s) => Some(s.dist.as_slice()),
            Node::Leaf(_) | Node::Inactive(_) => None,
        }
    }

    /// Whether a leaf may still split (depth and size limits, something to split on).
    fn can_grow(&self, leaf: &LeafNode) -> bool {
        !self.layout.features.is_empty()
            && self.config.max_depth.is_none_or(|d| leaf.depth < d)
            && self.config.max_leaves.is_none_or(|m| self.num_leaves < m)
    }

    /// Whether the Hoeffding test of a split attempt at `leaf` may pass when it is not
    /// a tie (`eps >= tie_threshold`): `false` means it surely fails. From bounds on the
    /// merits ([`bounds`]; nominal merits are exact and cheap): the best merit minus the
    /// second best cannot exceed the largest upper bound minus the second largest lower
    /// bound (or 0); and a binary split gains at most 1 bit, a split into `V` branches at
    /// most `log2 V`, which settles many attempts before all attributes are bounded.
    fn may_split(
        &self,
        leaf: &LeafNode,
        eps: f64,
        estimators: &mut Vec<GaussianEstimator>,
    ) -> bool {
        let k = self.layout.k;
        let n = leaf.seen;
        let layout = &self.layout;
        let slots = &layout.slots;
        let f = slots.len();
        // The most the attributes from `i` on can gain: the numeric ones 1 bit, a nominal
        // one `log2 V`.
        let mut nominal_most: Vec<f64> = layout
            .nominal
            .iter()
            .map(|&i| match slots[i] {
                AttrSlot::Nominal { values, .. } => (values.max(2) as f64).log2() + 1e-9,
                AttrSlot::Numeric { .. } => f64::NEG_INFINITY,
            })
            .collect();
        for i in (0..nominal_most.len().saturating_sub(1)).rev() {
            nominal_most[i] = nominal_most[i].max(nominal_most[i + 1]);
        }
        let last_numeric = layout.numeric_local.last().copied();
        let most_from = |i: usize| {
            let p = layout.nominal.partition_point(|&a| a < i);
            let nominal = nominal_most.get(p).copied().unwrap_or(f64::NEG_INFINITY);
            if last_numeric.is_some_and(|l| l >= i) {
                nominal.max(1.0 + 1e-9)
            } else {
                nominal
            }
        };
        let mut local = bounds::BoundScratch::default();
        let mut borrowed = self.bound_scratch.try_borrow_mut();
        let scratch = match &mut borrowed {
            Ok(s) => &mut **s,
            Err(_) => &mut local,
        };
        let mut upper = f64::NEG_INFINITY;
        // The two largest lower bounds.
        let (mut first, mut second) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        // The attributes that are not candidates (numeric columns with only zeros at the
        // leaf) have no bounds; of the checks after them, the last is the strongest.
        let mut next = 0;
        for (attr, column) in self.candidates(leaf) {
            if attr > next && upper.max(most_from(attr)) - second.max(0.0) <= eps {
                return false;
            }
            next = attr + 1;
            let bounds = match slots[attr] {
                AttrSlot::Numeric { .. } => {
                    estimators.clear();
                    estimators.extend(
                        (0..leaf.numeric.slots()).map(|s| leaf.numeric.estimator(s, column)),
                    );
                    bounds::merit_bounds(estimators, self.config.split_points, n, scratch)
                }
                AttrSlot::Nominal { offset, values } => {
                    if leaf.is_used(attr) {
                        None
                    } else {
                        let counts = &leaf.counts[offset..offset + nominal::slots(values, k)];
                        nominal::merit(counts, k, values, n).map(|m| (m, m))
                    }
                }
            };
            if let Some((lo, hi)) = bounds {
                upper = upper.max(hi);
                if lo > first {
                    second = first;
                    first = lo;
                } else if lo > second {
                    second = lo;
                }
            }
            if upper.max(most_from(attr + 1)) - second.max(0.0) <= eps {
                return false;
            }
        }
        if next < f && upper - second.max(0.0) <= eps {
            return false;
        }
        upper > MIN_MERIT
    }

    /// The attributes a split attempt at `leaf` evaluates, ascending, as `(local
    /// attribute, local column of a numeric one)`: all of them, but for the numeric
    /// columns without cells at the leaf (only zeros: no candidate split, no bounds).
    fn candidates(&self, leaf: &LeafNode) -> Vec<(usize, usize)> {
        let layout = &self.layout;
        let numeric = &leaf.numeric;
        if numeric.identity() {
            return layout
                .slots
                .iter()
                .enumerate()
                .map(|(attr, slot)| match *slot {
                    AttrSlot::Numeric { column } => (attr, column),
                    AttrSlot::Nominal { .. } => (attr, usize::MAX),
                })
                .collect();
        }
        let mut out = Vec::with_capacity(layout.nominal.len() + numeric.width());
        let mut nominal = layout.nominal.iter().copied().peekable();
        for l in 0..numeric.width() {
            let attr = layout.numeric_local[numeric.column(l)];
            while let Some(a) = nominal.next_if(|&a| a < attr) {
                out.push((a, usize::MAX));
            }
            out.push((attr, l));
        }
        out.extend(nominal.map(|a| (a, usize::MAX)));
        out
    }

    /// Evaluates the splits of leaf `index` and splits it if the Hoeffding test says so;
    /// `true` if it split.
    fn attempt_split(&mut self, index: usize) -> bool {
        let mut scratch = std::mem::take(&mut self.split_scratch);
        let split = self.try_split(index, &mut scratch);
        self.split_scratch = scratch;
        split
    }

    /// [`attempt_split`](Self::attempt_split) with its working space.
    fn try_split(&mut self, index: usize, scratch: &mut Vec<f64>) -> bool {
        let Node::Leaf(leaf) = &self.nodes[index] else {
            return false;
        };
        if leaf.dist.iter().filter(|&&w| w > 0.0).count() < 2 {
            return false; // pure: nothing to gain
        }
        let old_bytes = leaf.heap_bytes();
        let mut estimators = Vec::with_capacity(leaf.numeric.slots());
        let k = self.layout.k;
        let n = leaf.seen;
        // `n` is the leaf's whole class weight, including what it inherited at its creation
        // (as MOA and River do), not only the weight it has seen itself.
        let eps = split::hoeffding_bound(
            split::gain_range(k),
            self.config.split_confidence,
            leaf.total(),
        );
        let tie = eps < self.config.tie_threshold;
        if !tie && !self.may_split(leaf, eps, &mut estimators) {
            return false;
        }
        // The best candidate, and the second best merit: the null split (merit 0) counts.
        let mut best: Option<(f64, usize, SplitTest)> = None;
        let mut second = 0.0_f64;
        for (attr, column) in self.candidates(leaf) {
            let candidate = match self.layout.slots[attr] {
                AttrSlot::Numeric { .. } => {
                    // Slot 0 (all classes), then the classes the leaf learned, in order.
                    estimators.clear();
                    estimators.extend(
                        (0..leaf.numeric.slots()).map(|s| leaf.numeric.estimator(s, column)),
                    );
                    split::best_numeric_split(&estimators, self.config.split_points, n, scratch)
                        .map(|(merit, threshold)| (merit, SplitTest::Numeric { threshold }))
                }
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
            return false;
        };
        if !(merit > MIN_MERIT && (merit - second > eps || tie)) {
            return false;
        }
        let dists: Vec<Vec<f64>> = match test {
            SplitTest::Numeric { threshold } => {
                let AttrSlot::Numeric { column } = self.layout.slots[attr] else {
                    return false;
                };
                let mut classes = vec![gaussian::GaussianEstimator::new(); k];
                let Some(column) = leaf.numeric.local(column) else {
                    return false;
                };
                for s in 1..leaf.numeric.slots() {
                    classes[leaf.numeric.class_of(s)] = leaf.numeric.estimator(s, column);
                }
                split::numeric_branch_dists(&classes, threshold).into()
            }
            SplitTest::Nominal { values } => {
                let AttrSlot::Nominal { offset, .. } = self.layout.slots[attr] else {
                    return false;
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
            return false;
        }
        let depth = leaf.depth + 1;
        let mut used = leaf.used.clone();
        if let (SplitTest::Nominal { .. }, Err(p)) = (test, used.binary_search(&attr)) {
            used.insert(p, attr);
        }
        let parent_dist = leaf.dist.clone();
        let first = self.nodes.len();
        // The node array grows by an eighth at a time, not doubling: its spare capacity,
        // which `memory_bytes` does not count, stays below 1/8 of it.
        if first + branches > self.nodes.capacity() {
            let more = (first / 8).max(branches);
            self.nodes.reserve_exact(more);
            self.routes.reserve_exact(more);
        }
        let mut branch_weight = Vec::with_capacity(branches);
        for dist in dists {
            branch_weight.push(dist.iter().sum());
            let child = Node::Leaf(Box::new(LeafNode::new(
                &self.layout,
                dist,
                depth,
                used.clone(),
            )));
            self.routes.push(Route::of(&child));
            self.nodes.push(child);
        }
        self.nodes[index] = Node::Split(SplitNode {
            attr,
            test,
            children: (first..first + branches).collect(),
            branch_weight,
            dist: parent_dist,
        });
        self.routes[index] = Route::of(&self.nodes[index]);
        self.num_leaves += branches - 1;
        self.depth = self.depth.max(depth);
        if self.max_bytes.is_some() {
            let added: usize = self.nodes[first..]
                .iter()
                .map(|n| NODE_BYTES + n.heap_bytes())
                .sum();
            self.bytes = self.bytes - old_bytes + self.nodes[index].heap_bytes() + added;
        }
        true
    }
}

/// The layout of the last tree made or restored, shared by the next ones that look at
/// the same attributes: an ensemble of trees over all the attributes holds one layout
/// (which is as long as the dimension), not one per tree.
static LAST_LAYOUT: Mutex<Weak<Layout>> = Mutex::new(Weak::new());

/// `layout`, or an equal one already shared by another tree.
fn shared_layout(layout: Arc<Layout>) -> Arc<Layout> {
    let Ok(mut last) = LAST_LAYOUT.lock() else {
        return layout;
    };
    if let Some(shared) = last.upgrade()
        && *shared == *layout
    {
        return shared;
    }
    *last = Arc::downgrade(&layout);
    layout
}

/// The bytes of one node in the node array and its route.
const NODE_BYTES: usize = std::mem::size_of::<Node>() + std::mem::size_of::<Route>();

/// MOA's `calculatePromise`: the weight outside the majority class (0 without weight).
fn promise(dist: &[f64]) -> f64 {
    let total: f64 = dist.iter().sum();
    match argmax(dist) {
        Some(best) if total > 0.0 => total - dist[best],
        _ => 0.0,
    }
}

/// The majority class, if clearly the heaviest (see [`HoeffdingTree::predict_top`]).
///
/// One pass: the total, the first heaviest class (as [`argmax`]) and the heaviest positive
/// weight of the others (`w - v` falls as `v` grows, so the others are all clearly lighter
/// when that one is).
fn clear_majority(dist: &[f64]) -> Option<usize> {
    let mut total = 0.0;
    let mut best: Option<(usize, f64)> = None;
    let mut second = f64::NEG_INFINITY;
    for (c, &v) in dist.iter().enumerate() {
        total += v;
        if v.is_nan() {
            continue;
        }
        match best {
            Some((_, w)) if v <= w => {
                if v > 0.0 {
                    second = second.max(v);
                }
            }
            Some((_, w)) => {
                if w > 0.0 {
                    second = second.max(w);
                }
                best = Some((c, v));
            }
            None => best = Some((c, v)),
        }
    }
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    let (best, w) = best?;
    (second == f64::NEG_INFINITY || w - second > w * TOP_MARGIN).then_some(best)
}

impl HoeffdingTree {
    /// The bytes an active leaf holds beyond what it would hold inactive.
    #[inline]
    fn active_extra(leaf: &LeafNode) -> usize {
        std::mem::size_of::<LeafNode>() + leaf.stats_bytes()
    }

    /// [`active_extra`](Self::active_extra) of a leaf that has learned every class
    /// without a zero or a missing value: what an inactive leaf is counted at when no
    /// leaf is active.
    fn grown_leaf_extra(&self) -> usize {
        let (k, d) = (self.layout.k, self.layout.numeric.len());
        std::mem::size_of::<LeafNode>()
            + self.layout.num_counts * std::mem::size_of::<f64>()
            + stats::NumericStats::dense_bytes(k + 1, d)
            + naive_bayes::LeafCache::bytes_for(&self.layout, k + 1)
    }

    /// MOA's `enforceTrackerLimit` (see [`set_max_bytes`](Self::set_max_bytes)): the
    /// most promising leaves active within the budget less its slack, the others
    /// inactive. `true` if a leaf changed.
    fn enforce_budget(&mut self, budget: usize) -> bool {
        let target = budget - budget / BUDGET_SLACK;
        let mut leaves: Vec<(f64, usize)> = Vec::with_capacity(self.num_leaves);
        let (mut active_extra, mut active) = (0usize, 0usize);
        for (i, node) in self.nodes.iter().enumerate() {
            match node {
                Node::Leaf(leaf) => {
                    leaves.push((promise(&leaf.dist), i));
                    active_extra += Self::active_extra(leaf);
                    active += 1;
                }
                Node::Inactive(leaf) => leaves.push((promise(&leaf.dist), i)),
                Node::Split(_) => {}
            }
        }
        let fresh = active_extra
            .checked_div(active)
            .unwrap_or_else(|| self.grown_leaf_extra());
        // The most promising first; on ties, the newer leaf.
        leaves.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut size = self.bytes - active_extra;
        let mut cut = leaves.len();
        for (n, &(_, i)) in leaves.iter().enumerate() {
            let cost = match &self.nodes[i] {
                Node::Leaf(leaf) => Self::active_extra(leaf),
                _ => fresh,
            };
            if size + cost > target {
                cut = n;
                break;
            }
            size += cost;
        }
        let mut changed = false;
        for &(_, i) in &leaves[cut..] {
            changed |= self.deactivate(i);
        }
        for &(_, i) in &leaves[..cut] {
            changed |= self.reactivate(i);
        }
        changed
    }

    /// Deactivates leaf `i` if it is active; `true` if it was.
    fn deactivate(&mut self, i: usize) -> bool {
        if !matches!(self.nodes[i], Node::Leaf(_)) {
            return false;
        }
        let placeholder = Node::Inactive(InactiveLeaf {
            depth: 0,
            dist: Vec::new(),
            used: Vec::new(),
        });
        let Node::Leaf(leaf) = std::mem::replace(&mut self.nodes[i], placeholder) else {
            return false;
        };
        let old = leaf.heap_bytes();
        let LeafNode {
            depth, dist, used, ..
        } = *leaf;
        let inactive = InactiveLeaf { depth, dist, used };
        self.bytes = self.bytes - old + inactive.heap_bytes();
        self.nodes[i] = Node::Inactive(inactive);
        self.inactive += 1;
        true
    }

    /// Reactivates leaf `i` with fresh statistics if it is inactive; `true` if it was.
    fn reactivate(&mut self, i: usize) -> bool {
        let Node::Inactive(inactive) = &mut self.nodes[i] else {
            return false;
        };
        let old = inactive.heap_bytes();
        let dist = std::mem::take(&mut inactive.dist);
        let used = std::mem::take(&mut inactive.used);
        let leaf = LeafNode::new(&self.layout, dist, inactive.depth, used);
        self.bytes = self.bytes - old + leaf.heap_bytes();
        self.nodes[i] = Node::Leaf(Box::new(leaf));
        self.inactive -= 1;
        true
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
        self.predict_in(x, out, &mut SharedViews::none());
    }

    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        self.learn_in(x, label, weight, &mut SharedViews::none());
    }

    fn predict_in(&self, x: &Features, out: &mut [f64], views: &mut SharedViews) {
        debug_assert_eq!(out.len(), self.layout.k, "predict: out must have k entries");
        if out.is_empty() {
            return;
        }
        let uniform = 1.0 / out.len() as f64;
        if out.len() != self.layout.k {
            out.fill(uniform);
            return;
        }
        let mut fresh;
        let mut borrowed = self.last.try_borrow_mut();
        let memo = match &mut borrowed {
            Ok(m) => &mut **m.get_or_insert_with(Box::default),
            Err(_) => {
                fresh = Memo::default();
                &mut fresh
            }
        };
        let index = self.locate(x, memo, views);
        let done = match &self.nodes[index] {
            Node::Leaf(leaf) if self.uses_nb(leaf) && leaf.seen > 0.0 => {
                self.ensure_likelihoods(index, memo);
                naive_bayes::scores(leaf, &memo.lik, out);
                naive_bayes::normalize_log(out) || write_normalized(&leaf.dist, out)
            }
            Node::Leaf(leaf) => write_normalized(&leaf.dist, out),
            Node::Inactive(leaf) => write_normalized(&leaf.dist, out),
            Node::Split(_) => {
                out.fill(uniform);
                return;
            }
        };
        if !done
            && !self
                .fallback(memo)
                .is_some_and(|d| write_normalized(d, out))
        {
            out.fill(uniform);
        }
    }

    fn learn_in(&mut self, x: &Features, label: u32, weight: f64, views: &mut SharedViews) {
        let c = label as usize;
        if !(weight > 0.0 && weight.is_finite()) || c >= self.layout.k {
            return;
        }
        // The memo moves out (a box pointer) and back, whatever path `learn_with` takes.
        let mut memo = self.last.get_mut().take().unwrap_or_default();
        self.learn_with(x, label, weight, &mut memo, views);
        *self.last.get_mut() = Some(memo);
    }
}

impl HoeffdingTree {
    /// [`WeakLearner::learn`] of a valid label and weight, with the tree's memo.
    fn learn_with(
        &mut self,
        x: &Features,
        label: u32,
        weight: f64,
        memo: &mut Memo,
        views: &mut SharedViews,
    ) {
        let k = self.layout.k;
        let c = label as usize;
        let index = self.locate(x, memo, views);
        for &(node, b) in &memo.path {
            if let Node::Split(s) = &mut self.nodes[node as usize] {
                s.branch_weight[b as usize] += weight;
            }
        }
        let adaptive = self.config.leaf_prediction == LeafPrediction::NaiveBayesAdaptive;
        if let Node::Inactive(leaf) = &mut self.nodes[index] {
            // MOA's inactive node: the class weights only.
            leaf.dist[c] += weight;
            return;
        }
        let Node::Leaf(leaf) = &self.nodes[index] else {
            return;
        };
        if adaptive && leaf.total() > 0.0 {
            // Score both predictors on this example before learning from it.
            self.ensure_likelihoods(index, memo);
            memo.scores.resize(k, 0.0);
            naive_bayes::scores(leaf, &memo.lik, &mut memo.scores);
            let scores = &memo.scores;
            let mc = argmax(&leaf.dist);
            let nb = argmax(scores)
                .filter(|&b| scores[b] > f64::NEG_INFINITY)
                .or(mc);
            let Node::Leaf(leaf) = &mut self.nodes[index] else {
                return;
            };
            if mc == Some(c) {
                leaf.mc_correct += weight;
            }
            if nb == Some(c) {
                leaf.nb_correct += weight;
            }
        }
        let Node::Leaf(leaf) = &mut self.nodes[index] else {
            return;
        };
        let tracked = self.max_bytes.is_some();
        let before = if tracked { leaf.heap_bytes() } else { 0 };
        let all_changed = leaf.update(
            &self.layout,
            &memo.example.view,
            c,
            weight,
            &mut memo.locals,
        );
        if tracked {
            self.bytes = self.bytes - before + leaf.heap_bytes();
        }
        if all_changed {
            memo.lik_valid = false;
            memo.pending.clear();
        } else if memo.lik_valid && !memo.pending.contains(&label) {
            memo.pending.push(label);
        }
        let mut split = false;
        let leaves_before = self.num_leaves;
        if leaf.seen - leaf.seen_at_last_attempt >= self.config.grace_period {
            leaf.seen_at_last_attempt = leaf.seen;
            let Node::Leaf(leaf) = &self.nodes[index] else {
                return;
            };
            if self.can_grow(leaf) && self.attempt_split(index) {
                memo.lik_valid = false;
                split = true;
            }
        }
        if let Some(budget) = self.max_bytes {
            let over = self.bytes > budget && self.inactive < self.num_leaves;
            let step = (self.num_leaves / 16)
                .next_power_of_two()
                .max(REACTIVATION_LEAVES);
            let reactivate =
                split && self.inactive > 0 && leaves_before / step != self.num_leaves / step;
            if (over || reactivate) && self.enforce_budget(budget) {
                memo.lik_valid = false;
                memo.pending.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::seeded;
    use rand::RngExt;

    /// [`clear_majority`] in two passes, as its documentation states it.
    fn clear_majority_by_definition(dist: &[f64]) -> Option<usize> {
        let total: f64 = dist.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let best = argmax(dist)?;
        let w = dist[best];
        let clear = dist
            .iter()
            .enumerate()
            .all(|(c, &v)| c == best || v.is_nan() || v <= 0.0 || w - v > w * TOP_MARGIN);
        clear.then_some(best)
    }

    /// The one-pass majority agrees with the definition on ties, near ties, zeros,
    /// negative and non-finite weights.
    #[test]
    fn clear_majority_agrees_with_its_definition() {
        let mut rng = seeded(31, 0);
        let pool = [
            0.0,
            -1.0,
            1.0,
            2.0,
            2.0 + 2.0 * TOP_MARGIN,
            2.0 * (1.0 + TOP_MARGIN),
            3.0,
            f64::NAN,
            f64::INFINITY,
            1e-300,
        ];
        let mut clear = 0;
        for _ in 0..20_000 {
            let k = rng.random_range(1..6usize);
            let dist: Vec<f64> = (0..k)
                .map(|_| pool[rng.random_range(0..pool.len())])
                .collect();
            let want = clear_majority_by_definition(&dist);
            assert_eq!(clear_majority(&dist), want, "{dist:?}");
            clear += usize::from(want.is_some());
        }
        assert!(clear > 1_000, "{clear}");
    }
}
