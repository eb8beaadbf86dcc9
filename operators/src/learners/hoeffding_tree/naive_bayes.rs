//! Naive Bayes at a leaf: the class prior times the per-attribute likelihoods, in log
//! space, normalized by log-sum-exp; and what a leaf precomputes for it.
//!
//! The log score of a class `c` with weight at the leaf is `prior_c + L_c(x)`, with
//! `prior_c = ln dist_c - ln total` and the log likelihood `L_c(x)` the sum of
//!
//! - per numeric attribute with a known value at the leaf, the class's Gaussian log
//!   density at `x_j` (its statistics with zeros folded in, see
//!   [`NumericStats::estimator`]; the statistics of all classes together when the class
//!   has no known value there; a zero variance is a point mass, as in MOA: `0` at the
//!   mean, `-inf` elsewhere; no variance floor: a floor turns a rare 0/1 feature a class
//!   never had into a density spike at 0 that lets rare classes win, see
//!   `docs/notes/hoeffding-tree-vs-moa.md`);
//! - per nominal attribute not split on above the leaf, the Laplace-smoothed frequency
//!   `(n_vc + 1) / (n_c + V)` of the value.
//!
//! Missing values are skipped. The Gaussian terms `-ln(2 pi)/2 - ln(var)/2 -
//! (x - mean)^2 / (2 var)` are not computed one by one: per class, the leaf keeps
//! `C = sum (-ln(2 pi)/2 - ln(var)/2)` (one logarithm of the product of the variances)
//! and `Q0 = sum mean^2 / (2 var)` (the quadratic terms of an all-zero example), and an
//! example costs work for its non-zero values only: `L = C - Q0 + sum over non-zero
//! x_j of (mean^2 - (x_j - mean)^2) / (2 var)`, or `L = C - sum (x_j - mean)^2 / (2 var)`
//! when no value is zero (dense data). The nominal terms are sums of logarithms the leaf
//! keeps per count: `ln(n_vc + 1)` per value and class, and per class the sum of
//! `ln(n_c + V)` over the attributes, refreshed when a count changes (a table of `ln` of
//! the whole numbers serves unit and Poisson weights), so an example costs one addition
//! per attribute and class. Every score is a function of the
//! leaf's state and the example's values only: the same for a dense and a sparse
//! example, memoized or computed from scratch.

use super::gaussian::HALF_LN_2PI;
use super::node::{AttrSlot, Layout, LeafNode, View};
use super::stats::{NumericStats, Summary};
use std::cell::Cell;
use std::sync::OnceLock;

/// What a leaf precomputes per slot of its numeric statistics (see the module
/// documentation).
#[derive(Clone, Copy, Debug, Default)]
struct SlotCache {
    /// Whether the rest is up to date.
    fresh: bool,
    /// `C`: `-ln(2 pi)/2 - ln(var)/2` summed over the attributes with a positive variance.
    c: f64,
    /// `Q0`: `mean^2 / (2 var)` summed over the same attributes.
    q0: f64,
    /// The number of point masses (zero variance) away from 0: each makes an all-zero
    /// example impossible.
    dead0: u32,
}

/// What naive Bayes precomputes at a leaf: per slot of the numeric statistics, the sums
/// of [`SlotCache`] (computed when first needed after a change); the logarithms of the
/// class weights and of their total; which numeric attributes have a known value. Not
/// state: [`rebuild`](Self::rebuild) computes it from the statistics, and every update
/// keeps it equal to what a rebuild gives.
#[derive(Clone, Debug, Default)]
pub(super) struct LeafCache {
    slots: Vec<Cell<SlotCache>>,
    /// `ln dist_c` (`-inf` for `dist_c <= 0`).
    ln_dist: Vec<f64>,
    /// `ln(sum dist)`.
    ln_total: f64,
    /// Per local numeric column (see [`NumericStats::local`]): some value is known at the
    /// leaf. (A column without cells has only zeros: known once the leaf has learned
    /// something, a point mass at 0 that adds nothing to the sums.)
    active: Vec<bool>,
    /// Per slot, at a leaf that has seen zeros but no missing value: the local columns
    /// with a non-zero value, as a bit set (bit `l % 64` of word `l / 64`, read in
    /// ascending order); the others are point masses at 0 for the slot, which add nothing
    /// to its sums. Empty otherwise.
    nonzero_columns: Vec<ColumnSet>,
    /// The nominal attributes naive Bayes uses at the leaf (not split on above it), in
    /// layout order.
    nominal: Vec<NominalAttr>,
    /// Parallel to the leaf's nominal counts: `ln(n_vc + 1)` at the count of a value and
    /// class, `ln(n_c + V)` at an attribute's total of a class.
    ln_counts: Vec<f64>,
    /// Per class: `ln(n_c + V)` summed over `nominal`, in its order.
    ln_den: Vec<f64>,
}

/// A nominal attribute naive Bayes uses at a leaf.
#[derive(Clone, Copy, Debug)]
pub(super) struct NominalAttr {
    /// Its index among the layout's nominal attributes (into `View::nominal`).
    pub n: u32,
    /// Its first count (the class totals) in the leaf's counts.
    pub offset: u32,
    /// Its number of values.
    pub values: u32,
}

/// Not state: two leaves with equal statistics are equal whatever they cache.
impl PartialEq for LeafCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl LeafCache {
    /// The bytes of the cache's vectors, counted by their lengths.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(self.slots.as_slice())
            + size_of_val(self.ln_dist.as_slice())
            + size_of_val(self.active.as_slice())
            + size_of_val(self.nonzero_columns.as_slice())
            + size_of_val(self.nominal.as_slice())
            + size_of_val(self.ln_counts.as_slice())
            + size_of_val(self.ln_den.as_slice())
            + self
                .nonzero_columns
                .iter()
                .map(|c| size_of_val(c.words.as_slice()))
                .sum::<usize>()
    }

    /// [`heap_bytes`](Self::heap_bytes) of the cache of a leaf of `layout` with `slots`
    /// slots that has seen no zero and split on no nominal attribute above it.
    pub fn bytes_for(layout: &Layout, slots: usize) -> usize {
        use std::mem::size_of;
        let (k, d) = (layout.k, layout.numeric.len());
        slots * size_of::<Cell<SlotCache>>()
            + 2 * k * size_of::<f64>()
            + d * size_of::<bool>()
            + layout.nominal.len() * size_of::<NominalAttr>()
            + layout.num_counts * size_of::<f64>()
    }

    /// Computes everything from a leaf's statistics (the slots' sums when first needed):
    /// its class weights, numeric statistics, nominal counts and the nominal attributes
    /// split on above it.
    pub fn rebuild(
        &mut self,
        layout: &Layout,
        dist: &[f64],
        numeric: &NumericStats,
        counts: &[f64],
        used: &[usize],
    ) {
        let k = layout.k;
        self.nominal.clear();
        self.ln_counts.clear();
        self.ln_counts.resize(counts.len(), 0.0);
        for (n, &i) in layout.nominal.iter().enumerate() {
            let AttrSlot::Nominal { offset, values } = layout.slots[i] else {
                continue;
            };
            if used.binary_search(&i).is_err() {
                self.nominal.push(NominalAttr {
                    n: n as u32,
                    offset: offset as u32,
                    values: values as u32,
                });
            }
            for c in 0..k {
                self.refresh_count(counts, offset, values, None, c, k);
                for v in 0..values {
                    self.refresh_count(counts, offset, values, Some(v), c, k);
                }
            }
        }
        self.ln_den.clear();
        self.ln_den.resize(k, 0.0);
        for c in 0..k {
            self.refresh_den(c);
        }
        self.ln_dist.clear();
        self.ln_dist.extend(dist.iter().map(|&w| ln_weight(w)));
        self.ln_total = ln_weight(dist.iter().sum());
        self.active.clear();
        self.active
            .extend((0..numeric.width()).map(|l| numeric.folded(0, l).n > 0.0));
        self.slots.clear();
        self.slots
            .resize(numeric.slots(), Cell::new(SlotCache::default()));
        self.nonzero_columns.clear();
        if numeric.zeros && !numeric.any_missing() {
            self.nonzero_columns
                .extend((0..numeric.slots()).map(|s| nonzero_columns(numeric, s)));
        }
    }

    /// Brings the cache up to date after the leaf learned class `c` (slot `s`; `locals`:
    /// the local column of each of `x`'s entries; `grew`: columns got cells, the local
    /// columns moved); `true` when the likelihoods of other classes than `c` and those
    /// without a slot may have changed.
    #[allow(clippy::too_many_arguments)]
    pub fn refresh(
        &mut self,
        dist: &[f64],
        numeric: &NumericStats,
        x: &View,
        locals: &[u32],
        c: usize,
        s: usize,
        grew: bool,
    ) -> bool {
        self.ln_dist[c] = ln_weight(dist[c]);
        self.ln_total = ln_weight(dist.iter().sum());
        let new_slot = self.slots.len() != numeric.slots();
        if new_slot {
            // The class's first example at this leaf: a new slot.
            self.slots.insert(s, Cell::new(SlotCache::default()));
        }
        if !numeric.zeros || numeric.any_missing() {
            self.nonzero_columns.clear();
        } else if self.nonzero_columns.is_empty() || grew {
            // The first zero at this leaf, or columns moved.
            self.nonzero_columns.clear();
            self.nonzero_columns
                .extend((0..numeric.slots()).map(|s| nonzero_columns(numeric, s)));
        } else {
            if new_slot {
                self.nonzero_columns
                    .insert(s, ColumnSet::new(numeric.width()));
            }
            for t in [0, s] {
                let columns = &mut self.nonzero_columns[t];
                for (&(_, v), &l) in x.entries.iter().zip(locals) {
                    if v.is_finite() {
                        columns.insert(l);
                    }
                }
            }
        }
        let d = numeric.columns();
        let mut all = false;
        if numeric.any_missing() {
            // Which attributes have a known value may change, and a class without one
            // uses the statistics of all classes: recompute everything.
            all = true;
            self.active.clear();
            self.active
                .extend((0..numeric.width()).map(|l| numeric.folded(0, l).n > 0.0));
        } else if d > 0 && numeric.count[0] == 1 {
            // The first example: every attribute has a known value from now on.
            all = true;
            self.active.clear();
            self.active.resize(numeric.width(), true);
        } else if grew {
            // (Nothing missing: every column is known.)
            self.active.resize(numeric.width(), true);
        }
        if all {
            for slot in &self.slots {
                slot.set(SlotCache::default());
            }
        } else {
            self.slots[0].set(SlotCache::default());
            self.slots[s].set(SlotCache::default());
        }
        all
    }

    /// The nominal attributes naive Bayes uses at the leaf.
    #[inline]
    pub fn nominal(&self) -> &[NominalAttr] {
        &self.nominal
    }

    /// Refreshes the logarithm of the count of value `v` (`None`: the total) and class
    /// `c` of the nominal attribute at `offset` with `values` values (`k` classes).
    #[inline]
    pub fn refresh_count(
        &mut self,
        counts: &[f64],
        offset: usize,
        values: usize,
        v: Option<usize>,
        c: usize,
        k: usize,
    ) {
        let (i, add) = match v {
            None => (offset + c, values as f64),
            Some(v) => (offset + (v + 1) * k + c, 1.0),
        };
        self.ln_counts[i] = ln_count(counts[i] + add);
    }

    /// Refreshes the sum of the denominators of class `c` (after
    /// [`refresh_count`](Self::refresh_count) of its totals).
    #[inline]
    pub fn refresh_den(&mut self, c: usize) {
        let mut sum = 0.0;
        for a in &self.nominal {
            sum += self.ln_counts[a.offset as usize + c];
        }
        self.ln_den[c] = sum;
    }

    /// The log prior of a class with weight at the leaf.
    #[inline]
    fn prior(&self, c: usize) -> f64 {
        self.ln_dist[c] - self.ln_total
    }

    /// The sums of slot `s`, computed if stale.
    #[inline]
    fn slot(&self, numeric: &NumericStats, s: usize) -> SlotCache {
        let sc = self.slots[s].get();
        if sc.fresh {
            return sc;
        }
        let columns = self.nonzero_columns.get(s);
        let sc = slot_cache(numeric, &self.active, columns, s);
        self.slots[s].set(sc);
        sc
    }
}

/// A set of columns as bits: `insert` is one `or`, and the members come out ascending.
#[derive(Clone, Debug, Default, PartialEq)]
struct ColumnSet {
    words: Vec<u64>,
}

impl ColumnSet {
    /// The empty set of `d` columns.
    fn new(d: usize) -> Self {
        ColumnSet {
            words: vec![0; d.div_ceil(64)],
        }
    }

    /// Adds column `col` (`< d`).
    #[inline(always)]
    fn insert(&mut self, col: u32) {
        self.words[(col / 64) as usize] |= 1 << (col % 64);
    }

    /// Calls `f(column)` for every member, ascending.
    #[inline(always)]
    fn for_each(&self, mut f: impl FnMut(usize)) {
        for (w, &word) in self.words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                f(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }

    /// The members, ascending.
    fn to_vec(&self) -> Vec<u32> {
        let mut v = Vec::new();
        self.for_each(|j| v.push(j as u32));
        v
    }
}

/// The local columns where slot `s` has a non-zero value.
fn nonzero_columns(numeric: &NumericStats, s: usize) -> ColumnSet {
    let d = numeric.width();
    let mut set = ColumnSet::new(d);
    if numeric.zeros {
        for (j, cell) in numeric.cells[s * d..(s + 1) * d].iter().enumerate() {
            if cell.weight > 0.0 {
                set.insert(j as u32);
            }
        }
    }
    set
}

/// `ln w` for a positive weight (see [`ln_count`]), `-inf` otherwise.
#[inline]
fn ln_weight(w: f64) -> f64 {
    if w > 0.0 {
        ln_count(w)
    } else {
        f64::NEG_INFINITY
    }
}

/// The mean and variance naive Bayes uses for slot `s` at local column `j`: the slot's
/// own (zeros folded in), or those of all classes when the slot has no known value there.
#[inline(always)]
fn mean_var(numeric: &NumericStats, s: usize, j: usize) -> (f64, f64) {
    let f = numeric.folded(s, j);
    if f.n > 0.0 || s == 0 {
        (f.mean, f.m2 * f.r)
    } else {
        let f = numeric.folded(0, j);
        (f.mean, f.m2 * f.r)
    }
}

/// Adds one attribute's `(mean, var)` to the sums of a slot.
#[inline(always)]
fn accumulate(
    mean: f64,
    var: f64,
    variances: &mut LogProduct,
    positive: &mut u32,
    q0: &mut f64,
    dead0: &mut u32,
) {
    if var > 0.0 {
        *positive += 1;
        variances.mul_positive(var, *positive);
        *q0 += mean * mean * (0.5 / var);
    } else if mean != 0.0 {
        *dead0 += 1;
    }
}

/// The sums of slot `s` (see [`SlotCache`]); `columns`: where it has a non-zero value,
/// when the leaf has seen zeros but no missing value (the others add nothing).
fn slot_cache(
    numeric: &NumericStats,
    active: &[bool],
    columns: Option<&ColumnSet>,
    s: usize,
) -> SlotCache {
    let mut variances = LogProduct::ONE;
    let mut positive = 0u32;
    let mut q0 = 0.0;
    let mut dead0 = 0;
    // (The columns without cells have only zeros: point masses at 0, which add nothing.)
    let d = numeric.width();
    let base = s * d;
    let seen = numeric.seen[s];
    match numeric.zeros {
        // Dense: every attribute's known weight is the slot's, and every attribute is
        // known (the slot has learned something: slot 0 may not have).
        false if seen > 0.0 => {
            let r = 1.0 / seen;
            for &[mean, m2] in &numeric.moments[base..base + d] {
                let var = m2 * r;
                accumulate(
                    mean,
                    var,
                    &mut variances,
                    &mut positive,
                    &mut q0,
                    &mut dead0,
                );
            }
        }
        // Zeros but nothing missing: the known weight is the slot's weight everywhere.
        true if !numeric.any_missing() && seen > 0.0 => {
            let r = 1.0 / seen;
            let count = numeric.count[s];
            let cells = &numeric.cells[base..base + d];
            let empty = ColumnSet::default();
            let columns = columns.unwrap_or(&empty);
            debug_assert_eq!(columns.to_vec(), nonzero_columns(numeric, s).to_vec());
            columns.for_each(|j| {
                let (mean, var) = fold_no_missing(&cells[j], count, seen, r);
                accumulate(
                    mean,
                    var,
                    &mut variances,
                    &mut positive,
                    &mut q0,
                    &mut dead0,
                );
            });
        }
        _ => {
            for (j, _) in active.iter().enumerate().filter(|(_, a)| **a) {
                let (mean, var) = mean_var(numeric, s, j);
                accumulate(
                    mean,
                    var,
                    &mut variances,
                    &mut positive,
                    &mut q0,
                    &mut dead0,
                );
            }
        }
    }
    variances.rescale();
    SlotCache {
        fresh: true,
        c: -f64::from(positive) * HALF_LN_2PI - 0.5 * variances.ln(),
        q0,
        dead0,
    }
}

/// [`mean_var`] of a slot with weight `seen > 0` (`r = 1/seen`) at a leaf that has seen
/// zeros but no missing value, from the column's moments and non-zero weight, without a
/// branch: where there was no zero, the non-zero weight is the slot's weight (bit for bit:
/// the same sum), the factor is 1 and the zeros' weight 0; where there was no non-zero
/// value, mean and M2 are 0. The same as [`NumericStats::folded`].
#[inline(always)]
fn fold_no_missing(cell: &Summary, count: u64, seen: f64, r: f64) -> (f64, f64) {
    let (m, m2) = (cell.mean, cell.m2);
    let zeros = count > cell.touched;
    let a = cell.weight;
    let factor = if zeros { a * r } else { 1.0 };
    let z = if zeros { (seen - a).max(0.0) } else { 0.0 };
    let mean = m * factor;
    // (Where there was no zero, exactly `m2 r`, as for dense data, also when `m mean`
    // overflows.)
    let folded = if zeros { m2 + m * mean * z } else { m2 };
    (mean, folded * r)
}

/// The numeric part of the log likelihood of slot `s` (see the module documentation);
/// `locals`: the local column of each of `x`'s entries, [`NO_CELLS`] for a column without
/// cells (only zeros at the leaf: a point mass at 0, which a non-zero value makes
/// impossible and a missing one leaves out).
fn numeric_likelihood(
    numeric: &NumericStats,
    cache: &LeafCache,
    s: usize,
    x: &View,
    locals: &[u32],
) -> f64 {
    let sc = cache.slot(numeric, s);
    let d = numeric.width();
    let base = s * d;
    let seen = numeric.seen[s];
    if !x.sparse {
        // Every numeric value is non-zero and known.
        let mut acc = sc.c;
        if !numeric.zeros {
            let r = 1.0 / seen;
            // (A leaf without zeros has cells for every column.)
            debug_assert!(numeric.identity());
            for (&(_, v), &col) in x.entries.iter().zip(locals) {
                let [mean, m2] = numeric.moments[base + col as usize];
                let var = m2 * r;
                if var > 0.0 {
                    let d = v - mean;
                    acc -= d * d * (0.5 / var);
                } else if v != mean {
                    return f64::NEG_INFINITY;
                }
            }
        } else {
            for (&(_, v), &col) in x.entries.iter().zip(locals) {
                if col == NO_CELLS {
                    return f64::NEG_INFINITY;
                }
                let j = col as usize;
                if !cache.active[j] {
                    continue;
                }
                let (mean, var) = mean_var(numeric, s, j);
                if var > 0.0 {
                    let d = v - mean;
                    acc -= d * d * (0.5 / var);
                } else if v != mean {
                    return f64::NEG_INFINITY;
                }
            }
        }
        return acc;
    }
    let mut acc = sc.c - sc.q0;
    let mut dead = sc.dead0;
    let fast = numeric.zeros && !numeric.any_missing() && seen > 0.0;
    let r = 1.0 / seen;
    let count = numeric.count[s];
    let cells = if fast {
        &numeric.cells[base..base + d]
    } else {
        &[]
    };
    for (&(_, v), &col) in x.entries.iter().zip(locals) {
        if col == NO_CELLS {
            if v.is_finite() {
                return f64::NEG_INFINITY;
            }
            continue;
        }
        let j = col as usize;
        let (mean, var) = match fast {
            // Nothing missing at the leaf: every attribute known, `v` finite.
            true => fold_no_missing(&cells[j], count, seen, r),
            false => {
                if !cache.active[j] {
                    continue;
                }
                mean_var(numeric, s, j)
            }
        };
        if var > 0.0 {
            let inv2 = 0.5 / var;
            let q0 = mean * mean * inv2;
            if v.is_finite() {
                let d = v - mean;
                acc += q0 - d * d * inv2;
            } else {
                // Missing: the attribute is skipped.
                acc += q0 + (HALF_LN_2PI + 0.5 * var.ln());
            }
        } else {
            if mean != 0.0 {
                dead -= 1;
            }
            if v.is_finite() && v != mean {
                return f64::NEG_INFINITY;
            }
        }
    }
    if dead > 0 { f64::NEG_INFINITY } else { acc }
}

/// The local column of a column without cells (see [`numeric_likelihood`]).
const NO_CELLS: u32 = u32::MAX;

/// Writes the local column of each of `x`'s entries at `numeric` into `locals`
/// ([`NO_CELLS`] for a column without cells).
fn local_columns(numeric: &NumericStats, x: &View, locals: &mut Vec<u32>) {
    locals.clear();
    if numeric.identity() {
        locals.extend(x.entries.iter().map(|&(col, _)| col));
    } else {
        locals.extend(
            x.entries
                .iter()
                .map(|&(col, _)| numeric.local(col as usize).map_or(NO_CELLS, |l| l as u32)),
        );
    }
}

/// The nominal attributes naive Bayes uses for `x` at `leaf` (not split on above it, with
/// a valid value), as the indices of the value's count and of the attribute's total of
/// class 0 into the leaf's counts.
fn nominal_terms(layout: &Layout, leaf: &LeafNode, x: &View, terms: &mut Vec<(u32, u32)>) {
    terms.clear();
    let k = layout.k as u32;
    for a in leaf.cache.nominal() {
        if let Some(v) = x.nominal[a.n as usize] {
            terms.push((a.offset + (v + 1) * k, a.offset));
        }
    }
}

/// The nominal part of the log likelihood of class `c`: the sum over the `terms` of the
/// Laplace-smoothed `ln((n_vc + 1) / (n_c + V))`, as the sum of the numerators'
/// logarithms less the sum of the denominators' (the leaf's sum when no value is
/// missing, the same).
#[inline]
fn nominal_likelihood(leaf: &LeafNode, terms: &[(u32, u32)], c: usize) -> f64 {
    let cache = &leaf.cache;
    let ln = cache.ln_counts.as_slice();
    let mut num = 0.0;
    for &(value, _) in terms {
        num += ln[value as usize + c];
    }
    let den = if terms.len() == cache.nominal.len() {
        cache.ln_den[c]
    } else {
        let mut den = 0.0;
        for &(_, total) in terms {
            den += ln[total as usize + c];
        }
        den
    };
    num - den
}

/// The length of the table of [`ln_count`].
const LN_TABLE_LEN: usize = 1 << 14;

/// `ln v` for a count `v > 0`: read from a table of `ln` of the whole numbers below
/// [`LN_TABLE_LEN`] when `v` is one (the value `f64::ln` gives), computed otherwise.
#[inline]
fn ln_count(v: f64) -> f64 {
    // In static memory (not on the heap, where a tree's byte count would miss it).
    static TABLE: OnceLock<[f64; LN_TABLE_LEN]> = OnceLock::new();
    let i = v as u32;
    if f64::from(i) == v && (i as usize) < LN_TABLE_LEN {
        let table = TABLE.get_or_init(|| std::array::from_fn(|i| (i as f64).ln()));
        table[i as usize]
    } else {
        v.ln()
    }
}

/// Writes the log likelihood `L_c(x)` of every class with weight at `leaf` into `out`
/// (`-inf` for the others; all 0 while the leaf has learned nothing).
pub(super) fn likelihoods(
    layout: &Layout,
    leaf: &LeafNode,
    x: &View,
    terms: &mut Vec<(u32, u32)>,
    locals: &mut Vec<u32>,
    out: &mut Vec<f64>,
) {
    let k = layout.k;
    out.clear();
    out.resize(k, f64::NEG_INFINITY);
    if leaf.seen <= 0.0 {
        out.fill(0.0);
        return;
    }
    nominal_terms(layout, leaf, x, terms);
    each_class(
        leaf,
        x,
        locals,
        out,
        |_, _| true,
        |o, num, c| *o = num + nominal_likelihood(leaf, terms, c),
    );
}

/// Brings `out` (the [`likelihoods`] of `x` at `leaf` before it learned the classes
/// `learned`) up to date, the cache having said that only the classes learned and those
/// without a slot may have changed.
pub(super) fn update_likelihoods(
    layout: &Layout,
    leaf: &LeafNode,
    x: &View,
    learned: &[u32],
    terms: &mut Vec<(u32, u32)>,
    locals: &mut Vec<u32>,
    out: &mut [f64],
) {
    let d = leaf.numeric.columns();
    nominal_terms(layout, leaf, x, terms);
    each_class(
        leaf,
        x,
        locals,
        out,
        |c, has_slot| (d > 0 && !has_slot) || learned.contains(&(c as u32)),
        |o, num, c| *o = num + nominal_likelihood(leaf, terms, c),
    );
}

/// For every class `c` with weight at `leaf` for which `wanted(c, has a slot)`: computes
/// its numeric log likelihood `num` and calls `set(&mut out[c], num, c)`.
#[inline]
fn each_class(
    leaf: &LeafNode,
    x: &View,
    locals: &mut Vec<u32>,
    out: &mut [f64],
    wanted: impl Fn(usize, bool) -> bool,
    set: impl Fn(&mut f64, f64, usize),
) {
    let numeric = &leaf.numeric;
    local_columns(numeric, x, locals);
    let d = numeric.columns();
    let slots = numeric.slots();
    let mut pooled = None;
    let mut s = 1;
    for (c, o) in out.iter_mut().enumerate() {
        while s < slots && numeric.class_of(s) < c {
            s += 1;
        }
        if leaf.dist[c] <= 0.0 {
            continue;
        }
        let has_slot = s < slots && numeric.class_of(s) == c;
        if !wanted(c, has_slot) {
            continue;
        }
        let num = if d == 0 {
            0.0
        } else if has_slot {
            numeric_likelihood(numeric, &leaf.cache, s, x, locals)
        } else {
            *pooled.get_or_insert_with(|| numeric_likelihood(numeric, &leaf.cache, 0, x, locals))
        };
        set(o, num, c);
    }
}

/// The log scores `prior_c + L_c` from the likelihoods `lik` into `out` (`-inf` for a class
/// without weight at the leaf).
pub(super) fn scores(leaf: &LeafNode, lik: &[f64], out: &mut [f64]) {
    let total_live = leaf.cache.ln_total > f64::NEG_INFINITY;
    for (c, (o, &l)) in out.iter_mut().zip(lik).enumerate() {
        *o = if total_live && leaf.dist[c] > 0.0 {
            leaf.cache.prior(c) + l
        } else {
            f64::NEG_INFINITY
        };
    }
}

/// A product of positive factors as `mantissa * 2^exp`, so that many factors cost one
/// logarithm at the end. Rescaling by powers of two is exact: the product is the plain
/// product of the factors, rounded the same way, but it never overflows or underflows.
#[derive(Clone, Copy, Debug)]
struct LogProduct {
    mantissa: f64,
    exp: i64,
}

/// Factors in `[2^-100, 2^100]` are multiplied as they are, others split first.
const MIN_FACTOR: f64 = 7.888_609_052_210_118e-31; // 2^-100
const MAX_FACTOR: f64 = 1.267_650_600_228_229_4e30; // 2^100
/// The mantissa is rescaled to `[1, 2)` once it leaves `[2^-400, 2^400]`.
const RESCALE_LOW: f64 = 3.872_591_914_849_318e-121; // 2^-400
const RESCALE_HIGH: f64 = 2.582_249_878_086_908_6e120; // 2^400
/// `2^100`.
const TWO_POW_100: f64 = MAX_FACTOR;

impl LogProduct {
    const ONE: LogProduct = LogProduct {
        mantissa: 1.0,
        exp: 0,
    };

    /// `(m, e)` with `v = m 2^e`, `m` in `[1, 2)`, for a positive finite `v`.
    #[inline]
    fn split(v: f64) -> (f64, i64) {
        let (v, shift) = if v < f64::MIN_POSITIVE {
            (v * TWO_POW_100, -100)
        } else {
            (v, 0)
        };
        let bits = v.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
        (
            f64::from_bits((bits & !(0x7ff << 52)) | (1023 << 52)),
            e + shift,
        )
    }

    /// Multiplies by a positive `v`, the `n`-th factor: the mantissa is rescaled every
    /// fourth factor only (from `[2^-400, 2^400]`, four factors in `[2^-100, 2^100]` cannot
    /// overflow); call [`rescale`](Self::rescale) before reading it. (A non-finite `v`
    /// makes the product meaningless, as its logarithm would be.)
    #[inline(always)]
    fn mul_positive(&mut self, v: f64, n: u32) {
        let v = if (MIN_FACTOR..=MAX_FACTOR).contains(&v) || !v.is_finite() {
            v
        } else {
            let (m, e) = Self::split(v);
            self.exp += e;
            m
        };
        self.mantissa *= v;
        if n.is_multiple_of(4) {
            self.rescale();
        }
    }

    /// Brings the mantissa back to `[1, 2)` if it left `[2^-400, 2^400]` (exact).
    #[inline(always)]
    fn rescale(&mut self) {
        if !(RESCALE_LOW..=RESCALE_HIGH).contains(&self.mantissa) && self.mantissa.is_finite() {
            let (m, e) = Self::split(self.mantissa);
            if self.mantissa > 0.0 {
                self.exp += e;
                self.mantissa = m;
            }
        }
    }

    /// The logarithm of the product.
    #[inline]
    fn ln(&self) -> f64 {
        if self.exp == 0 {
            self.mantissa.ln()
        } else {
            self.mantissa.ln() + self.exp as f64 * std::f64::consts::LN_2
        }
    }
}

/// Turns log scores into a distribution in place (log-sum-exp); `false` (and `out`
/// unspecified) when no score is finite or the result is not a distribution.
pub(super) fn normalize_log(out: &mut [f64]) -> bool {
    let max = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return false;
    }
    let mut sum = 0.0;
    for o in out.iter_mut() {
        // exp(0) = 1 and exp(-inf) = 0 exactly: the top score and impossible classes need
        // no call.
        *o = if *o == max {
            1.0
        } else if o.is_nan() || *o == f64::NEG_INFINITY {
            0.0
        } else {
            (*o - max).exp()
        };
        sum += *o;
    }
    if !(sum > 0.0 && sum.is_finite()) {
        return false;
    }
    out.iter_mut().for_each(|o| *o /= sum);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Attribute, Features, Schema, Task};
    use crate::learners::hoeffding_tree::gaussian::{GaussianEstimator, ln_normal_pdf};
    use crate::rng::seeded;
    use rand::RngExt;

    /// Six numeric attributes (mostly zero, sometimes missing) and a nominal one, 3 classes.
    fn schema() -> Schema {
        let mut attributes: Vec<Attribute> = (0..6)
            .map(|j| Attribute::numeric(format!("a{j}")))
            .collect();
        attributes.push(Attribute::nominal(
            "n",
            vec!["x".into(), "y".into(), "z".into()],
        ));
        Schema {
            attributes,
            labels: vec!["p".into(), "q".into(), "r".into()],
            task: Task::Multiclass,
        }
    }

    fn example(rng: &mut crate::rng::Rng, sparse: bool) -> (Features, usize) {
        let c = rng.random_range(0..3usize);
        let mut x: Vec<f64> = (0..6)
            .map(|j| match rng.random_range(0..10u32) {
                0..=5 => 0.0,
                6 if j == 4 => f64::NAN,
                // Attribute 5 is 0 for class 2 and 1.5 for the others: a point mass.
                _ if j == 5 => {
                    if c == 2 {
                        0.0
                    } else {
                        1.5
                    }
                }
                _ => c as f64 + rng.random_range(-1.0..1.0),
            })
            .collect();
        x.push(f64::from(rng.random_range(0..3u32)));
        if !sparse {
            return (Features::Dense(x), c);
        }
        let (indices, values) = x
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(j, &v)| (j as u32, v))
            .unzip();
        (
            Features::Sparse {
                indices,
                values,
                dim: 7,
            },
            c,
        )
    }

    /// The log likelihoods of the folded, cached computation agree with a brute force
    /// one: Welford over every value (zeros included, missing skipped) per class and for
    /// all classes, then the log densities summed attribute by attribute.
    #[test]
    fn likelihoods_match_a_dense_brute_force_computation() {
        let schema = schema();
        let layout = Layout::new(&schema, (0..7).collect());
        // Fractional weights, and whole ones (whose logarithms come from a table).
        for (sparse, weights) in [
            (false, [1.0, 0.3, 2.0]),
            (true, [1.0, 0.3, 2.0]),
            (false, [1.0, 3.0, 2.0]),
            (true, [1.0, 3.0, 2.0]),
        ] {
            let mut rng = seeded(8, u64::from(sparse));
            let mut leaf = LeafNode::new(&layout, vec![0.5, 0.0, 0.25], 0, vec![]);
            let mut brute = vec![vec![GaussianEstimator::new(); 6]; 4];
            let mut counts = [[0.0; 3]; 4];
            let mut view = View::default();
            let mut lik = Vec::new();
            let mut terms = Vec::new();
            let (mut compared, mut impossible) = (0, 0);
            for n in 0..600 {
                let (x, c) = example(&mut rng, sparse);
                let w = weights[n % 3];
                view.set(&layout, &x);
                leaf.update(&layout, &view, c, w, &mut Vec::new());
                for (j, g) in brute[0].iter_mut().enumerate() {
                    g.update(x.get(j), w);
                }
                for (j, g) in brute[1 + c].iter_mut().enumerate() {
                    g.update(x.get(j), w);
                }
                counts[0][c] += w;
                counts[1 + x.get(6) as usize][c] += w;
                let (probe, _) = example(&mut rng, sparse);
                view.set(&layout, &probe);
                likelihoods(&layout, &leaf, &view, &mut terms, &mut Vec::new(), &mut lik);
                for (class, &got) in lik.iter().enumerate() {
                    if leaf.dist[class] <= 0.0 {
                        continue;
                    }
                    let mut want = 0.0;
                    for (j, (pooled, own)) in brute[0].iter().zip(&brute[1 + class]).enumerate() {
                        let v = probe.get(j);
                        if !v.is_finite() || pooled.weight() <= 0.0 {
                            continue;
                        }
                        let g = if own.weight() > 0.0 { own } else { pooled };
                        want += if g.variance() > 0.0 {
                            ln_normal_pdf(v, g.mean(), g.variance())
                        } else if v == g.mean() {
                            0.0
                        } else {
                            f64::NEG_INFINITY
                        };
                    }
                    let v = probe.get(6) as usize;
                    want += ((counts[1 + v][class] + 1.0) / (counts[0][class] + 3.0)).ln();
                    if want == f64::NEG_INFINITY {
                        assert_eq!(got, want, "n {n}, class {class}");
                        impossible += 1;
                    } else {
                        let tol = 1e-9 * (1.0 + want.abs());
                        assert!(
                            (got - want).abs() <= tol,
                            "n {n}, class {class}: {got} vs {want}"
                        );
                        compared += 1;
                    }
                }
            }
            assert!(
                compared > 500 && impossible > 100,
                "{compared} {impossible}"
            );
        }
    }

    /// What a learn brings up to date equals what a leaf computes from scratch.
    #[test]
    fn updated_likelihoods_equal_fresh_ones() {
        let schema = schema();
        let layout = Layout::new(&schema, (0..7).collect());
        let mut rng = seeded(9, 0);
        let mut leaf = LeafNode::new(&layout, vec![1.0, 1.0, 1.0], 0, vec![]);
        let (mut view, mut lik, mut fresh) = (View::default(), Vec::new(), Vec::new());
        let mut terms = Vec::new();
        for n in 0..500 {
            let (x, c) = example(&mut rng, n % 2 == 0);
            view.set(&layout, &x);
            likelihoods(&layout, &leaf, &view, &mut terms, &mut Vec::new(), &mut lik);
            let all = leaf.update(&layout, &view, c, 1.0, &mut Vec::new());
            if all {
                likelihoods(&layout, &leaf, &view, &mut terms, &mut Vec::new(), &mut lik);
            } else {
                update_likelihoods(
                    &layout,
                    &leaf,
                    &view,
                    &[c as u32],
                    &mut terms,
                    &mut Vec::new(),
                    &mut lik,
                );
            }
            let mut rebuilt = leaf.clone();
            rebuilt.cache = LeafCache::default();
            rebuilt.rebuild_cache(&layout);
            likelihoods(
                &layout,
                &rebuilt,
                &view,
                &mut terms,
                &mut Vec::new(),
                &mut fresh,
            );
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&lik), bits(&fresh), "example {n}");
        }
    }

    /// `normalize_log` gives, bit for bit, `exp(s - max) / sum` over the scores, with NaN
    /// read as impossible; `false` without a finite score.
    #[test]
    fn normalize_log_is_the_log_sum_exp_definition() {
        let mut rng = seeded(77, 0);
        let pool = [f64::NEG_INFINITY, f64::NAN, 0.0, -1.5, -800.0, 3.25];
        for _ in 0..2000 {
            let k = rng.random_range(1..7);
            let scores: Vec<f64> = (0..k)
                .map(|_| {
                    if rng.random_bool(0.4) {
                        pool[rng.random_range(0..pool.len())]
                    } else {
                        rng.random_range(-60.0..5.0)
                    }
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut out = scores.clone();
            let ok = normalize_log(&mut out);
            if !max.is_finite() {
                assert!(!ok, "{scores:?}");
                continue;
            }
            let e: Vec<f64> = scores
                .iter()
                .map(|&s| if s.is_nan() { 0.0 } else { (s - max).exp() })
                .collect();
            let sum: f64 = e.iter().sum();
            assert!(ok, "{scores:?}");
            for (o, v) in out.iter().zip(&e) {
                assert_eq!(o.to_bits(), (v / sum).to_bits(), "{scores:?}");
            }
        }
    }
}
