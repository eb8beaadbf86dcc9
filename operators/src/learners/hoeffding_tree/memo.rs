//! Memoization that is not part of a tree's state (never serialized, never compared):
//! the logarithms naive Bayes needs at a leaf, and what the last prediction found out
//! about naive Bayes at its leaf (its scores or its best class), which the usual
//! `predict(x)` then `learn(x, ..)` of boosting reuses.
//!
//! Both only ever return what the computation they replace would return, bit for bit:
//! a logarithm is keyed by its argument, the last prediction by the example's bits and
//! the tree's state (any `learn` invalidates it).

use super::naive_bayes::ClassSum;
use crate::data::Features;
use std::cell::Cell;

/// A memoized `ln`: the last argument and its logarithm (argument NaN: empty).
#[derive(Clone, Copy, Debug)]
struct LnEntry {
    arg: f64,
    ln: f64,
}

impl Default for LnEntry {
    fn default() -> Self {
        LnEntry {
            arg: f64::NAN,
            ln: f64::NAN,
        }
    }
}

/// One memoized logarithm per slot of a leaf's statistics: `ln(arg)` is recomputed only
/// when the slot's argument changed since the last call. Interior mutability, so that
/// predicting (`&self`) fills it; `Send`, not `Sync`.
///
/// Empty after deserialization (it is not state): [`LnMemos::ensure_len`] sizes it again,
/// and until then [`LnMemos::ln`] just computes.
#[derive(Clone, Debug, Default)]
pub(super) struct LnMemos(Vec<Cell<LnEntry>>);

impl LnMemos {
    /// `n` empty slots.
    pub fn new(n: usize) -> Self {
        LnMemos(vec![Cell::new(LnEntry::default()); n])
    }

    /// Makes room for `n` slots (a no-op unless the memo was dropped by serde).
    #[inline]
    pub fn ensure_len(&mut self, n: usize) {
        if self.0.len() != n {
            self.0.resize(n, Cell::new(LnEntry::default()));
        }
    }

    /// `arg.ln()`, memoized in slot `i` (exactly `arg.ln()`: the same argument, bit for
    /// bit up to the sign of zero, gives the same logarithm).
    #[inline]
    pub fn ln(&self, i: usize, arg: f64) -> f64 {
        let Some(cell) = self.0.get(i) else {
            return arg.ln();
        };
        let entry = cell.get();
        if entry.arg == arg {
            entry.ln
        } else {
            let ln = arg.ln();
            cell.set(LnEntry { arg, ln });
            ln
        }
    }
}

/// Not state: two leaves with equal statistics are equal whatever they memoized.
impl PartialEq for LnMemos {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

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

/// What the last prediction found out about naive Bayes at its leaf.
pub(super) enum Verdict<'a> {
    /// Its log scores ([`log_scores`](super::naive_bayes::log_scores)).
    Scores(&'a [f64]),
    /// Only its best class, which is strictly the best
    /// ([`bounded_argmax`](super::naive_bayes::bounded_argmax)).
    Best(usize),
}

/// What the last prediction found out about naive Bayes (its log scores or its best
/// class), with the example and the leaf it belongs to. Valid until the tree changes.
#[derive(Clone, Debug, Default)]
pub(super) struct LastPrediction {
    valid: bool,
    key: FeaturesKey,
    leaf: usize,
    /// `Some`: only the best class is known; `None`: `scores` are.
    best: Option<usize>,
    scores: Vec<f64>,
    /// Working space of the prediction (not what it found out).
    pub sums: Vec<ClassSum>,
}

impl LastPrediction {
    /// Remembers the log scores `scores` of `x` at leaf (node index) `leaf`.
    pub fn record_scores(&mut self, x: &Features, leaf: usize, scores: &[f64]) {
        self.key.set(x);
        self.leaf = leaf;
        self.best = None;
        self.scores.clear();
        self.scores.extend_from_slice(scores);
        self.valid = true;
    }

    /// Remembers that `best` is the best class of `x` at leaf (node index) `leaf`.
    pub fn record_best(&mut self, x: &Features, leaf: usize, best: usize) {
        self.key.set(x);
        self.leaf = leaf;
        self.best = Some(best);
        self.valid = true;
    }

    /// Forgets it (the tree is about to change).
    #[inline]
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// What the last prediction found out, if it was about `x` at `leaf`.
    #[inline]
    pub fn get(&self, x: &Features, leaf: usize) -> Option<Verdict<'_>> {
        if !(self.valid && self.leaf == leaf && self.key.matches(x)) {
            return None;
        }
        Some(match self.best {
            Some(best) => Verdict::Best(best),
            None => Verdict::Scores(&self.scores),
        })
    }
}
