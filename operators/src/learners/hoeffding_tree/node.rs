//! The tree's nodes (leaves with their statistics, split nodes with their test), the
//! layout that maps the attributes a tree looks at to a leaf's statistics, and the view of
//! an example a leaf learns from and predicts with.

use super::naive_bayes::LeafCache;
use super::nominal;
use super::stats::{CompactStats, CompactStatsRef, NumericStats};
use crate::data::{AttributeKind, Features, Schema};
use serde::{Deserialize, Serialize};

/// Where one attribute's statistics live in a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) enum AttrSlot {
    /// Column `column` of the leaf's [`NumericStats`].
    Numeric {
        /// The column (the attribute's rank among the numeric ones the tree looks at).
        column: usize,
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
/// leaf.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Layout {
    /// The number of classes.
    pub k: usize,
    /// The attribute indices the tree looks at (strictly ascending).
    pub features: Vec<usize>,
    /// One slot per entry of `features`.
    pub slots: Vec<AttrSlot>,
    /// The attribute index of each numeric column (strictly ascending).
    pub numeric: Vec<usize>,
    /// The local index (into `features`) of each numeric column.
    pub numeric_local: Vec<usize>,
    /// The local index (into `features`) of each nominal attribute.
    pub nominal: Vec<usize>,
    /// Nominal counts per leaf.
    pub num_counts: usize,
}

impl Layout {
    /// The layout for the attributes `features` (ascending) of `schema`.
    pub fn new(schema: &Schema, features: Vec<usize>) -> Self {
        let k = schema.num_labels();
        let mut num_counts = 0;
        let mut numeric = Vec::new();
        let mut numeric_local = Vec::new();
        let mut nominal = Vec::new();
        let slots = features
            .iter()
            .enumerate()
            .map(|(i, &j)| match &schema.attributes[j].kind {
                AttributeKind::Numeric => {
                    numeric.push(j);
                    numeric_local.push(i);
                    AttrSlot::Numeric {
                        column: numeric.len() - 1,
                    }
                }
                AttributeKind::Nominal(values) => {
                    nominal.push(i);
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
            numeric,
            numeric_local,
            nominal,
            num_counts,
        }
    }
}

/// An example as a leaf sees it: its non-zero (or missing) numeric values by column,
/// whether any numeric value is zero or missing, and its nominal values. Built once per
/// example and tree, reused by every leaf computation on it.
#[derive(Clone, Debug, Default)]
pub(super) struct View {
    /// `(column, value)` of every numeric value that is not zero (missing ones included),
    /// ascending by column.
    pub entries: Vec<(u32, f64)>,
    /// Whether some numeric column is zero or missing.
    pub sparse: bool,
    /// Per nominal attribute (in `Layout::nominal` order): its value index, if valid.
    pub nominal: Vec<Option<u32>>,
    /// Per nominal attribute: its value.
    pub nominal_values: Vec<f64>,
}

impl View {
    /// Fills the view with `x` (allocations reused).
    pub fn set(&mut self, layout: &Layout, x: &Features) {
        self.entries.clear();
        self.nominal.clear();
        self.nominal_values.clear();
        let d = layout.numeric.len();
        // At most one entry per column (or per stored value): one allocation for a new
        // view instead of a doubling per push.
        self.entries.reserve(match x {
            Features::Dense(_) => d,
            Features::Sparse { values, .. } => values.len().min(d),
        });
        self.nominal.reserve(layout.nominal.len());
        self.nominal_values.reserve(layout.nominal.len());
        let mut missing = false;
        match x {
            Features::Dense(v) => {
                for (col, &j) in layout.numeric.iter().enumerate() {
                    let value = v.get(j).copied().unwrap_or(0.0);
                    if value != 0.0 {
                        missing |= !value.is_finite();
                        self.entries.push((col as u32, value));
                    }
                }
            }
            Features::Sparse {
                indices, values, ..
            } => {
                let numeric = &layout.numeric;
                let identity = numeric.last().is_none_or(|&l| l + 1 == numeric.len());
                if identity {
                    // The tree looks at attributes 0..d, all numeric: column = index.
                    for (&j, &value) in indices.iter().zip(values) {
                        if (j as usize) < d && value != 0.0 {
                            missing |= !value.is_finite();
                            self.entries.push((j, value));
                        }
                    }
                } else {
                    // A merge of the two ascending lists.
                    let mut col = 0;
                    for (&j, &value) in indices.iter().zip(values) {
                        let j = j as usize;
                        while col < d && numeric[col] < j {
                            col += 1;
                        }
                        if col == d {
                            break;
                        }
                        if numeric[col] == j && value != 0.0 {
                            missing |= !value.is_finite();
                            self.entries.push((col as u32, value));
                        }
                    }
                }
            }
        }
        self.sparse = missing || self.entries.len() < d;
        for &i in &layout.nominal {
            let AttrSlot::Nominal { values, .. } = layout.slots[i] else {
                continue;
            };
            let value = x.get(layout.features[i]);
            self.nominal_values.push(value);
            self.nominal
                .push(nominal::value_index(value, values).map(|v| v as u32));
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
    /// The numeric attributes' statistics.
    pub numeric: NumericStats,
    /// The nominal attributes' counts (see [`AttrSlot::Nominal`]).
    pub counts: Vec<f64>,
    /// Local indices of the nominal attributes split on above this leaf (ascending):
    /// constant here, so neither learned, split on nor used by naive Bayes.
    pub used: Vec<usize>,
    /// What naive Bayes precomputes from the statistics (not state: rebuilt from them
    /// after a deserialization, see [`LeafCache`]).
    #[serde(skip)]
    pub cache: LeafCache,
}

impl LeafNode {
    /// A fresh leaf with the class weights `dist`.
    pub fn new(layout: &Layout, dist: Vec<f64>, depth: usize, used: Vec<usize>) -> Self {
        let mut leaf = LeafNode {
            depth,
            dist,
            seen: 0.0,
            seen_at_last_attempt: 0.0,
            mc_correct: 0.0,
            nb_correct: 0.0,
            numeric: NumericStats::new(layout.numeric.len()),
            counts: vec![0.0; layout.num_counts],
            used,
            cache: LeafCache::default(),
        };
        leaf.rebuild_cache(layout);
        leaf
    }

    /// Computes the naive Bayes cache from the statistics (see [`LeafCache::rebuild`]).
    pub fn rebuild_cache(&mut self, layout: &Layout) {
        self.cache
            .rebuild(layout, &self.dist, &self.numeric, &self.counts, &self.used);
    }

    /// The bytes this leaf holds outside its [`Node`]: the box, its class weights, its
    /// statistics and what naive Bayes caches from them, counted by lengths.
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<LeafNode>()
            + vec_bytes(&self.dist)
            + vec_bytes(&self.used)
            + self.stats_bytes()
    }

    /// The bytes of the attribute statistics and their cache: what a deactivation frees.
    #[inline]
    pub fn stats_bytes(&self) -> usize {
        vec_bytes(&self.counts) + self.numeric.heap_bytes() + self.cache.heap_bytes()
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

    /// Adds `(x, class c, weight w)` to the statistics (missing values skipped) and
    /// refreshes the cache; `w` is finite and positive. `true` when the naive Bayes
    /// likelihoods of more than class `c` and the classes using the statistics of all
    /// classes may have changed.
    /// `locals` is working space (the local columns of `x`'s entries).
    pub fn update(
        &mut self,
        layout: &Layout,
        x: &View,
        c: usize,
        w: f64,
        locals: &mut Vec<u32>,
    ) -> bool {
        debug_assert!(w > 0.0 && w.is_finite());
        let k = layout.k;
        self.dist[c] += w;
        self.seen += w;
        let (s, grew) = self.numeric.update(&x.entries, x.sparse, c, w, locals);
        let mut learned = false;
        for j in 0..self.cache.nominal().len() {
            let a = self.cache.nominal()[j];
            let (offset, values) = (a.offset as usize, a.values as usize);
            if let Some(v) = x.nominal[a.n as usize] {
                let v = v as usize;
                let len = nominal::slots(values, k);
                nominal::update(&mut self.counts[offset..offset + len], k, v, c, w);
                let cache = &mut self.cache;
                cache.refresh_count(&self.counts, offset, values, None, c, k);
                cache.refresh_count(&self.counts, offset, values, Some(v), c, k);
                learned = true;
            }
        }
        if learned {
            self.cache.refresh_den(c);
        }
        self.cache
            .refresh(&self.dist, &self.numeric, x, locals, c, s, grew)
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

/// A leaf deactivated by the memory budget (MOA's `InactiveLearningNode`): its class
/// weights only. It predicts them (majority class), learns only them, and never splits;
/// reactivated, it becomes a fresh [`LeafNode`] with these class weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct InactiveLeaf {
    /// The depth (the root has depth 0).
    pub depth: usize,
    /// Class weights: inherited at the leaf's creation plus all it has learned since.
    pub dist: Vec<f64>,
    /// Local indices of the nominal attributes split on above this leaf (ascending), kept
    /// for a reactivation.
    pub used: Vec<usize>,
}

impl InactiveLeaf {
    /// The bytes this leaf holds outside its [`Node`]: its class weights and `used`.
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        vec_bytes(&self.dist) + vec_bytes(&self.used)
    }
}

/// A node of the tree.
///
/// Serialized as an enum whose variants keep their order (`Leaf` 0, `Split` 1,
/// `Inactive` 2, `CompactLeaf` 3): model files written before `Inactive` existed still
/// load. A leaf whose statistics keep cells for some columns only is written as
/// `CompactLeaf` (model format 4), at its size in memory; a leaf with cells for every
/// column as `Leaf`, as before. Both read back into [`Node::Leaf`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "NodeRepr")]
pub(super) enum Node {
    /// A leaf (boxed: it is much larger than a split node).
    Leaf(Box<LeafNode>),
    /// An inner node.
    Split(SplitNode),
    /// A leaf deactivated by the memory budget.
    Inactive(InactiveLeaf),
}

/// How a [`Node`] is written (a temporary, one at a time).
#[allow(clippy::large_enum_variant)]
#[derive(Serialize)]
#[serde(rename = "Node")]
enum NodeRef<'a> {
    Leaf(&'a LeafNode),
    Split(&'a SplitNode),
    Inactive(&'a InactiveLeaf),
    CompactLeaf(CompactLeafRef<'a>),
}

/// A leaf in the compact form: [`LeafNode`]'s state with its statistics in
/// [`CompactStatsRef`] form.
#[derive(Serialize)]
#[serde(rename = "CompactLeaf")]
struct CompactLeafRef<'a> {
    depth: usize,
    dist: &'a [f64],
    seen: f64,
    seen_at_last_attempt: f64,
    mc_correct: f64,
    nb_correct: f64,
    numeric: CompactStatsRef<'a>,
    counts: &'a [f64],
    used: &'a [usize],
}

/// How a [`Node`] is read.
#[derive(Deserialize)]
#[serde(rename = "Node")]
enum NodeRepr {
    Leaf(Box<LeafNode>),
    Split(SplitNode),
    Inactive(InactiveLeaf),
    CompactLeaf(Box<CompactLeaf>),
}

/// What [`CompactLeafRef`] writes, read back.
#[derive(Deserialize)]
#[serde(rename = "CompactLeaf")]
struct CompactLeaf {
    depth: usize,
    dist: Vec<f64>,
    seen: f64,
    seen_at_last_attempt: f64,
    mc_correct: f64,
    nb_correct: f64,
    numeric: CompactStats,
    counts: Vec<f64>,
    used: Vec<usize>,
}

impl Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Leaf(leaf) if leaf.numeric.is_compact() => NodeRef::CompactLeaf(CompactLeafRef {
                depth: leaf.depth,
                dist: &leaf.dist,
                seen: leaf.seen,
                seen_at_last_attempt: leaf.seen_at_last_attempt,
                mc_correct: leaf.mc_correct,
                nb_correct: leaf.nb_correct,
                numeric: leaf.numeric.compact_form(),
                counts: &leaf.counts,
                used: &leaf.used,
            }),
            Node::Leaf(leaf) => NodeRef::Leaf(leaf),
            Node::Split(split) => NodeRef::Split(split),
            Node::Inactive(leaf) => NodeRef::Inactive(leaf),
        }
        .serialize(serializer)
    }
}

impl From<NodeRepr> for Node {
    fn from(repr: NodeRepr) -> Self {
        match repr {
            NodeRepr::Leaf(leaf) => Node::Leaf(leaf),
            NodeRepr::Split(split) => Node::Split(split),
            NodeRepr::Inactive(leaf) => Node::Inactive(leaf),
            NodeRepr::CompactLeaf(c) => {
                let c = *c;
                // The cache is rebuilt with the tree (`TryFrom<TreeState>`), after the
                // statistics are checked.
                Node::Leaf(Box::new(LeafNode {
                    depth: c.depth,
                    dist: c.dist,
                    seen: c.seen,
                    seen_at_last_attempt: c.seen_at_last_attempt,
                    mc_correct: c.mc_correct,
                    nb_correct: c.nb_correct,
                    numeric: c.numeric.into(),
                    counts: c.counts,
                    used: c.used,
                    cache: LeafCache::default(),
                }))
            }
        }
    }
}

impl Node {
    /// The bytes this node holds outside the node array (its boxed leaf, its vectors),
    /// counted by their lengths (see [`HoeffdingTree::memory_bytes`](super::HoeffdingTree::memory_bytes)).
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        match self {
            Node::Leaf(leaf) => leaf.heap_bytes(),
            Node::Split(s) => {
                vec_bytes(&s.children) + vec_bytes(&s.branch_weight) + vec_bytes(&s.dist)
            }
            Node::Inactive(leaf) => leaf.heap_bytes(),
        }
    }
}

/// The bytes of a vector's elements (its length, not its capacity).
#[inline(always)]
pub(super) fn vec_bytes<T>(v: &[T]) -> usize {
    std::mem::size_of_val(v)
}

/// A node as the way from the root sees it, in one compact array per tree (not state:
/// built from the nodes).
#[derive(Clone, Copy, Debug)]
pub(super) struct Route {
    /// A numeric split's threshold.
    threshold: f64,
    /// The local attribute tested; [`Route::LEAF`] for a leaf.
    attr: u32,
    /// The first child (the children are consecutive).
    first: u32,
    /// 0 for a numeric split, the number of values of a nominal one.
    values: u32,
}

impl Route {
    const LEAF: u32 = u32::MAX;

    /// The route of `node`.
    pub fn of(node: &Node) -> Route {
        match node {
            Node::Leaf(_) | Node::Inactive(_) => Route {
                threshold: 0.0,
                attr: Self::LEAF,
                first: 0,
                values: 0,
            },
            Node::Split(s) => {
                debug_assert!(s.children.windows(2).all(|w| w[1] == w[0] + 1));
                let (threshold, values) = match s.test {
                    SplitTest::Numeric { threshold } => (threshold, 0),
                    SplitTest::Nominal { values } => (0.0, values as u32),
                };
                Route {
                    threshold,
                    attr: s.attr as u32,
                    first: s.children[0] as u32,
                    values,
                }
            }
        }
    }

    /// The local attribute tested, `None` at a leaf.
    #[inline(always)]
    pub fn attr(&self) -> Option<usize> {
        (self.attr != Self::LEAF).then_some(self.attr as usize)
    }

    /// The branch value `x` goes to, `None` when it depends on the branch weights (a
    /// missing or invalid value: see [`SplitNode::branch`]).
    #[inline(always)]
    pub fn branch(&self, x: f64) -> Option<usize> {
        if self.values == 0 {
            if x <= self.threshold {
                Some(0)
            } else if x > self.threshold {
                Some(1)
            } else {
                None
            }
        } else {
            nominal::value_index(x, self.values as usize)
        }
    }

    /// The node index of branch `b`.
    #[inline(always)]
    pub fn child(&self, b: usize) -> usize {
        self.first as usize + b
    }
}
