//! Memoization that is not part of a tree's state (never serialized, never compared):
//! the last example the tree looked at, as a leaf sees it ([`View`]), the path it took to
//! its leaf, and its naive Bayes log likelihoods there, which the usual `predict(x)` then
//! `learn(x, ..)` (once or several times) of boosting reuse.
//!
//! It only ever gives what the computation it replaces would give, bit for bit: it is
//! keyed by the example's bits, and every `learn` either brings it up to date or
//! forgets it.

use super::node::{AttrSlot, Layout, View};
use crate::data::Features;

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

/// What the tree found out about the last example it looked at.
#[derive(Clone, Debug, Default)]
pub(super) struct Memo {
    /// Whether `key`, `view` and `path` describe an example.
    valid: bool,
    key: FeaturesKey,
    /// The example as a leaf sees it.
    pub view: View,
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
    pub terms: Vec<(u32, u32, f64)>,
    /// Working space: the local columns of the view's entries at a leaf.
    pub locals: Vec<u32>,
}

impl Memo {
    /// Whether the memo describes `x`.
    #[inline]
    pub fn matches(&self, x: &Features) -> bool {
        self.valid && self.key.matches(x)
    }

    /// Starts describing `x`: its view; no path, no likelihoods yet.
    pub fn set(&mut self, layout: &Layout, x: &Features) {
        self.key.set(x);
        self.view.set(layout, x);
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
                let entries = &self.view.entries;
                match entries.binary_search_by_key(&(column as u32), |&(col, _)| col) {
                    Ok(p) => entries[p].1,
                    Err(_) => 0.0,
                }
            }
            AttrSlot::Nominal { .. } => layout
                .nominal
                .binary_search(&i)
                .map_or(0.0, |n| self.view.nominal_values[n]),
        }
    }
}
