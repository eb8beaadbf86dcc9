//! Memoization that is not part of a tree's state (never serialized, never compared):
//! the last example the tree looked at, as a leaf sees it ([`View`]), the path it took to
//! its leaf, and its naive Bayes log likelihoods there, which the usual `predict(x)` then
//! `learn(x, ..)` (once or several times) of boosting reuse.
//!
//! It only ever gives what the computation it replaces would give, bit for bit: it is
//! keyed by the example's bits, and every `learn` either brings it up to date or
//! forgets it.
//!
//! The view of an example is the same for every tree with the same layout (an ensemble's
//! trees share one, see `shared_layout`): the first tree of a thread to see an example
//! builds it, and the next ones take it from a per-thread cache (keyed by the layout's
//! identity and the example's bits) instead of building it again. The cache holds the
//! view of the last example; while a [`SharedViews`] scope lives, the views of up to
//! [`RECENT`] examples, by the record's place in the run the scope names: a block of
//! stages takes up to that many records through each tree before the next
//! (`engine::process_stage_major`, in such a scope), so each tree after the first finds
//! every record's view.

use super::node::{AttrSlot, Layout, View};
use crate::data::Features;
use std::cell::RefCell;
use std::sync::{Arc, LazyLock};

/// The bits of an example, kept to recognize it again (allocations reused).
#[derive(Clone, Debug, Default)]
struct FeaturesKey {
    /// Dense: the values' bits; sparse: the stored values' bits.
    values: Vec<u64>,
    /// Sparse: the indices (empty for dense).
    indices: Vec<u32>,
    /// Sparse: the number of attributes; `None` for dense.
    sparse_dim: Option<u32>,
}

impl FeaturesKey {
    /// Remembers `x`.
    fn set(&mut self, x: &Features) {
        self.values.clear();
        self.indices.clear();
        match x {
            Features::Dense(v) => {
                self.values.extend(v.iter().map(|v| v.to_bits()));
                self.sparse_dim = None;
            }
            Features::Sparse {
                indices,
                values,
                dim,
            } => {
                self.values.extend(values.iter().map(|v| v.to_bits()));
                self.indices.extend_from_slice(indices);
                self.sparse_dim = Some(*dim);
            }
        }
    }

    /// Whether `x` is the remembered example, bit for bit (same representation too).
    fn matches(&self, x: &Features) -> bool {
        match x {
            Features::Dense(v) => {
                self.sparse_dim.is_none()
                    && v.len() == self.values.len()
                    && v.iter().zip(&self.values).all(|(a, &b)| a.to_bits() == b)
            }
            Features::Sparse {
                indices,
                values,
                dim,
            } => {
                self.sparse_dim == Some(*dim)
                    && indices.as_slice() == self.indices.as_slice()
                    && values.len() == self.values.len()
                    && values
                        .iter()
                        .zip(&self.values)
                        .all(|(a, &b)| a.to_bits() == b)
            }
        }
    }
}

/// An example (its bits) and its view under one layout.
#[derive(Debug, Default)]
pub(super) struct ExampleView {
    key: FeaturesKey,
    /// The example as a leaf sees it.
    pub view: View,
}

/// A recent example a thread's trees looked at, under the layout it was viewed with.
struct Recent {
    layout: Arc<Layout>,
    example: Arc<ExampleView>,
    /// What it counts for against [`RECENT_BYTES`].
    bytes: usize,
}

/// The views of a thread's recent examples: in a [`SharedViews`] scope, one slot per
/// place in the run of records ([`SharedViews::record`]); outside, one slot.
#[derive(Default)]
struct RecentViews {
    slots: Vec<Option<Recent>>,
    /// The bytes the views in the slots count for.
    bytes: usize,
    /// How many [`SharedViews`] scopes live.
    scopes: usize,
    /// The place of the record the trees look at now, in a scope.
    current: usize,
}

impl RecentViews {
    /// The slot of the example the trees look at now, with as many slots as the scopes
    /// call for.
    fn slot(&mut self) -> usize {
        let n = if self.scopes > 0 { RECENT } else { 1 };
        if self.slots.len() != n {
            self.slots.clear();
            self.bytes = 0;
            self.slots.resize_with(n, || None);
        }
        if n == 1 { 0 } else { self.current % RECENT }
    }
}

/// A scope in which the trees of this thread share the views of a run of up to 1,024
/// records' examples (about 8 MiB at most), for a run taken through many trees tree by
/// tree: before a tree takes a record, [`record`](Self::record) names its place in the
/// run. When the last scope ends, the views are freed and the trees share the last
/// example's view only. (A view is only ever taken for an example equal to its own, bit
/// for bit: a wrong place costs a view built again, never a wrong result.)
///
/// ```
/// use flowboost_operators::data::{Features, Schema, Task};
/// use flowboost_operators::learners::hoeffding_tree::SharedViews;
/// use flowboost_operators::learners::{HoeffdingTree, HoeffdingTreeConfig, WeakLearner};
///
/// let schema = Schema::numeric(2, 2, Task::Binary);
/// let mut trees: Vec<HoeffdingTree> = (0..3)
///     .map(|i| HoeffdingTree::new(&schema, HoeffdingTreeConfig::default(), i))
///     .collect();
/// let run: Vec<(Features, u32)> = (0..8)
///     .map(|i| (Features::Dense(vec![i as f64, 1.0]), (i % 2) as u32))
///     .collect();
/// let views = SharedViews::begin();
/// for tree in &mut trees {
///     for (place, (x, y)) in run.iter().enumerate() {
///         views.record(place);
///         tree.learn(x, *y, 1.0);
///     }
/// }
/// drop(views);
/// ```
pub struct SharedViews {
    /// Not `Send`: the scope is the thread's.
    _thread: std::marker::PhantomData<*const ()>,
}

impl SharedViews {
    /// Names the place in the run (from 0) of the record the trees look at next.
    #[inline]
    pub fn record(&self, place: usize) {
        RECENT_VIEWS.with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                r.current = place;
            }
        });
    }

    /// Starts a scope (scopes nest).
    pub fn begin() -> SharedViews {
        RECENT_VIEWS.with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                r.scopes += 1;
            }
        });
        SharedViews {
            _thread: std::marker::PhantomData,
        }
    }
}

impl Drop for SharedViews {
    fn drop(&mut self) {
        RECENT_VIEWS.with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                r.scopes = r.scopes.saturating_sub(1);
                if r.scopes == 0 {
                    r.slots = Vec::new();
                    r.bytes = 0;
                }
            }
        });
    }
}

/// How many views of recent examples a thread keeps: as many as the records a block of
/// stages takes through each stage in turn (`engine::WAVEFRONT`).
const RECENT: usize = crate::engine::WAVEFRONT;

/// The most memory the views of recent examples of a thread take, about (a view
/// counts 40 bytes per stored value, plus 256): beyond it, a tree keeps an example's view
/// to itself.
const RECENT_BYTES: usize = 8 << 20;

thread_local! {
    static RECENT_VIEWS: RefCell<RecentViews> = RefCell::new(RecentViews::default());
}

/// Makes `mine` the view of `x` under `layout`: the thread's recent one of the same
/// layout and example when there is one; else `mine` rebuilt in place when no other tree
/// and no slot hold it (else the view the example's slot held, when no tree holds it, or
/// a new one), which then takes the example's slot.
fn set_example(mine: &mut Arc<ExampleView>, layout: &Arc<Layout>, x: &Features) {
    RECENT_VIEWS.with(|recent| {
        let mut recent = recent.try_borrow_mut().ok();
        let mut at = 0;
        let mut spare = None;
        if let Some(r) = recent.as_mut() {
            at = r.slot();
            if let Some(l) = &r.slots[at]
                && Arc::ptr_eq(&l.layout, layout)
                && l.example.key.matches(x)
            {
                *mine = l.example.clone();
                return;
            }
            if let Some(old) = r.slots[at].take() {
                r.bytes -= old.bytes;
                // (`mine` itself, when the slot held it: then rebuilt in place if no other
                // tree holds it.)
                spare = Some(old.example).filter(|view| !Arc::ptr_eq(view, mine));
            }
        }
        if Arc::get_mut(mine).is_none() {
            // (Its allocations reused when no tree holds it any more.)
            *mine = match spare {
                Some(view) if Arc::strong_count(&view) == 1 => view,
                _ => Arc::default(),
            };
        }
        match Arc::get_mut(mine) {
            Some(example) => {
                example.key.set(x);
                example.view.set(layout, x);
            }
            None => {
                let mut example = ExampleView::default();
                example.key.set(x);
                example.view.set(layout, x);
                *mine = Arc::new(example);
            }
        }
        let bytes = 40 * x.stored() + 256;
        if let Some(r) = recent.as_mut()
            && r.bytes + bytes <= RECENT_BYTES
        {
            r.bytes += bytes;
            r.slots[at] = Some(Recent {
                layout: layout.clone(),
                example: mine.clone(),
                bytes,
            });
        }
    })
}

/// What the tree found out about the last example it looked at.
#[derive(Clone, Debug)]
pub(super) struct Memo {
    /// Whether `example` and `path` describe an example.
    valid: bool,
    /// The example and its view (shared with the other trees of the thread that have
    /// the same layout).
    pub example: Arc<ExampleView>,
    /// The split nodes from the root to `leaf` and the branch taken at each.
    pub path: Vec<(u32, u32)>,
    /// The node the path ends at (a leaf, unless the leaf has split since).
    pub leaf: usize,
    /// Whether no branch on the path was chosen for a missing value (such a choice
    /// depends on the branch weights, which learning changes).
    pub path_ok: bool,
    /// Whether `lik` holds the log likelihoods at `leaf` (once those of the classes in
    /// `pending` are brought up to date).
    pub lik_valid: bool,
    /// The naive Bayes log likelihoods of the example at `leaf`, per class.
    pub lik: Vec<f64>,
    /// The classes the leaf learned (from this example) since `lik` was computed.
    pub pending: Vec<u32>,
    /// Working space for log scores.
    pub scores: Vec<f64>,
    /// Working space for the nominal terms of naive Bayes.
    pub terms: Vec<(u32, u32)>,
    /// Working space: the local columns of the view's entries at a leaf.
    pub locals: Vec<u32>,
}

/// A memo that describes no example, without allocating a view: it holds the shared view
/// of no example.
impl Default for Memo {
    fn default() -> Self {
        static NO_EXAMPLE: LazyLock<Arc<ExampleView>> = LazyLock::new(Arc::default);
        Memo {
            valid: false,
            example: NO_EXAMPLE.clone(),
            path: Vec::new(),
            leaf: 0,
            path_ok: false,
            lik_valid: false,
            lik: Vec::new(),
            pending: Vec::new(),
            scores: Vec::new(),
            terms: Vec::new(),
            locals: Vec::new(),
        }
    }
}

impl Memo {
    /// Whether the memo describes `x`.
    #[inline]
    pub fn matches(&self, x: &Features) -> bool {
        self.valid && self.example.key.matches(x)
    }

    /// Starts describing `x`: its view; no path, no likelihoods yet.
    pub fn set(&mut self, layout: &Arc<Layout>, x: &Features) {
        set_example(&mut self.example, layout, x);
        self.path.clear();
        self.leaf = usize::MAX;
        self.path_ok = true;
        self.lik_valid = false;
        self.pending.clear();
        self.valid = true;
    }

    /// The example's value of the attribute the tree looks at with local index `i` (as
    /// `x` gives it, a zero for a column the view has no entry of): read from the view,
    /// so that describing an example writes nothing of the dimension's size.
    #[inline]
    pub fn value(&self, layout: &Layout, i: usize) -> f64 {
        match layout.slots[i] {
            AttrSlot::Numeric { column } => {
                let entries = &self.example.view.entries;
                match entries.binary_search_by_key(&(column as u32), |&(col, _)| col) {
                    Ok(p) => entries[p].1,
                    Err(_) => 0.0,
                }
            }
            AttrSlot::Nominal { .. } => layout
                .nominal
                .binary_search(&i)
                .map_or(0.0, |n| self.example.view.nominal_values[n]),
        }
    }
}
