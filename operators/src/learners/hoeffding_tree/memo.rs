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
//! trees share one, see `shared_layout`): the first tree to see an example builds it, and
//! the next ones take it from the [`SharedViews`] their caller passes (keyed by the
//! layout's identity and the example's bits) instead of building it again. A block of
//! stages takes a run of records through each tree before the next
//! (`engine::process_stage_major`, with one view per place in the run), so each tree
//! after the first finds every record's view.

use super::node::{AttrSlot, Layout, View};
use super::shared_views::{RECENT_BYTES, Recent, SharedViews};
use crate::data::Features;
use std::sync::{Arc, LazyLock};

/// The bits of an example, kept to recognize it again (allocations reused).
#[derive(Clone, Debug, Default)]
pub(super) struct FeaturesKey {
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
    pub(super) fn matches(&self, x: &Features) -> bool {
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
    pub(super) key: FeaturesKey,
    /// The example as a leaf sees it.
    pub view: View,
}

/// Makes `mine` the view of `x` under `layout`: the one `views` keeps at the example's
/// place, when it has the same layout and example; else `mine` rebuilt in place when no other tree
/// and no slot hold it (else the view the example's slot held, when no tree holds it, or
/// a new one), which then takes the example's slot.
fn set_example(
    mine: &mut Arc<ExampleView>,
    layout: &Arc<Layout>,
    x: &Features,
    views: &mut SharedViews,
) {
    let at = views.slot();
    let mut spare = None;
    if let Some(at) = at {
        if let Some(l) = &views.slots[at]
            && Arc::ptr_eq(&l.layout, layout)
            && l.example.key.matches(x)
        {
            *mine = l.example.clone();
            return;
        }
        if let Some(old) = views.slots[at].take() {
            views.bytes -= old.bytes;
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
    if let Some(at) = at
        && views.bytes + bytes <= RECENT_BYTES
    {
        views.bytes += bytes;
        views.slots[at] = Some(Recent {
            layout: layout.clone(),
            example: mine.clone(),
            bytes,
        });
    }
}

/// What the tree found out about the last example it looked at.
#[derive(Clone, Debug)]
pub(super) struct Memo {
    /// Whether `example` and `path` describe an example.
    valid: bool,
    /// The example and its view (shared with the other trees that have
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
    pub fn set(&mut self, layout: &Arc<Layout>, x: &Features, views: &mut SharedViews) {
        set_example(&mut self.example, layout, x, views);
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
