//! A leaf's numeric statistics, sparse in two ways: only the classes the leaf has
//! learned get estimators, and only non-zero values are added (zeros are folded in when
//! the statistics are read).
//!
//! Layout: one *slot* per class the leaf has learned from, in class order, after slot 0
//! which pools all classes; per (slot, numeric attribute) at `slot * d + column`, the
//! weighted Welford summary of the attribute's non-zero finite values (mean and M2), and
//! in another array their smallest and largest value (what a split attempt reads). Per
//! slot, the weight and the number of examples learned.
//!
//! While every example the leaf learned had a non-zero finite value for every numeric
//! attribute (dense data), that is all (`moments`, 16 bytes per cell): each attribute's
//! non-zero weight is the slot's weight. From the first example with a zero or a missing
//! (non-finite) value on (`zeros`), the leaf keeps instead per (slot, attribute) a
//! [`Summary`]: mean, M2, the non-zero weight and the number of examples with a non-zero
//! or missing value, side by side in 32 bytes, so that what naive Bayes reads for a value
//! and what a learn writes is one cell; and from the first missing value on, the missing
//! weight. The weight of the zeros is the slot's weight less the non-zero and the missing
//! weight, and there were zeros exactly when the slot has learned more examples than had a
//! non-zero or missing value.
//!
//! [`NumericStats::folded`] merges the zeros into the non-zero summary (Chan et al.'s
//! pairwise update), which gives, up to rounding, what a Welford update with every value,
//! zeros included, gives: a sparse example costs work for its non-zero values only.

use super::StatsError;
use super::gaussian::GaussianEstimator;
use serde::{Deserialize, Serialize, Serializer};

/// Per (slot, attribute) of a leaf that has seen zeros or missing values: the weight of
/// the non-zero finite values and the number of examples with a non-zero or missing value
/// (the serialized form; see [`Summary`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct NonZero {
    /// The weight of the non-zero finite values.
    pub weight: f64,
    /// The number of examples with a non-zero or missing value.
    pub touched: u64,
}

/// What a leaf keeps once it has learned an example with a zero or a missing value (the
/// serialized form).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Extra {
    /// Per (slot, column).
    nonzero: Vec<NonZero>,
    /// Per (slot, column): the weight of the missing values (empty until one is seen).
    missing: Vec<f64>,
}

/// Per (slot, column) of a leaf that has seen a zero or a missing value, side by side in
/// 32 bytes (one cache line holds two): the mean and M2 (weighted sum of squared
/// deviations) of the non-zero finite values, their weight, and the number of examples
/// with a non-zero or missing value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[repr(C)]
pub(super) struct Summary {
    /// The mean of the non-zero finite values.
    pub mean: f64,
    /// Their M2.
    pub m2: f64,
    /// Their weight.
    pub weight: f64,
    /// The number of examples with a non-zero or missing value.
    pub touched: u64,
}

/// The numeric statistics of one leaf (see the module documentation).
///
/// Serialized in the format of before the cells (`moments`, `range` and, from the
/// first zero or missing value on, `extra`), so model files keep their format.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "StatsRepr")]
pub(super) struct NumericStats {
    /// The number of numeric attributes (columns).
    pub d: usize,
    /// The number of columns with cells (*local* columns): `d` when every column has its
    /// cells (the identity: local column = column), else `cols.len()`.
    width: usize,
    /// The columns with cells, ascending (local column `l` is column `cols[l]`): those
    /// with a non-zero or a missing value at the leaf; empty for the identity. A column
    /// without cells has only zeros, exactly what cells of zeros would say (see
    /// [`NumericStats::add_columns`]).
    cols: Vec<u32>,
    /// Slot -> class; slot 0 (all classes) holds `u32::MAX`, the others ascend.
    classes: Vec<u32>,
    /// Per slot: the weight learned.
    pub seen: Vec<f64>,
    /// Per slot: the number of examples learned.
    pub count: Vec<u64>,
    /// Per (slot, local column), while the leaf has seen no zero and no missing value
    /// (`zeros` false; empty after): the mean and M2 of the values (16 bytes: the non-zero
    /// weight and count are the slot's).
    pub moments: Vec<[f64; 2]>,
    /// Per (slot, local column), from the first zero or missing value on (empty before):
    /// see [`Summary`].
    pub cells: Vec<Summary>,
    /// Per (slot, local column): the smallest and the largest non-zero finite value.
    range: Vec<[f64; 2]>,
    /// Whether the leaf has learned an example with a zero or a missing value.
    pub zeros: bool,
    /// Per (slot, local column): the weight of the missing values (empty until one is
    /// seen).
    pub missing: Vec<f64>,
}

/// A leaf keeps cells for every column (the identity, no lookup) once the columns with a
/// non-zero or missing value are at least `1 / IDENTITY_SHARE` of them: its memory is
/// then at most this many times what the columns it has seen need.
const IDENTITY_SHARE: usize = 2;

/// `T`s laid out per (slot, local column) with `old` local columns, moved to `new` local
/// columns, local column `l` going to `to[l]`, the new ones `T::default()` (exact
/// capacity).
fn relayout<T: Copy + Default>(
    v: &[T],
    slots: usize,
    old: usize,
    new: usize,
    to: &[usize],
) -> Vec<T> {
    let mut out = vec![T::default(); slots * new];
    for s in 0..slots {
        for (l, &n) in to.iter().enumerate() {
            out[s * new + n] = v[s * old + l];
        }
    }
    out
}

/// The serialized form of [`NumericStats`] (its format before the cells).
#[derive(Deserialize)]
#[serde(rename = "NumericStats")]
struct StatsRepr {
    d: usize,
    classes: Vec<u32>,
    seen: Vec<f64>,
    count: Vec<u64>,
    moments: Vec<[f64; 2]>,
    range: Vec<[f64; 2]>,
    extra: Option<Box<Extra>>,
}

impl TryFrom<StatsRepr> for NumericStats {
    type Error = StatsError;

    fn try_from(r: StatsRepr) -> Result<Self, StatsError> {
        let cells = r.moments.len();
        let slots = r.seen.len();
        if slots == 0
            || r.count.len() != slots
            || slots.checked_mul(r.d) != Some(cells)
            || r.range.len() != cells
            || r.extra.as_ref().is_some_and(|e| {
                e.nonzero.len() != cells || !(e.missing.is_empty() || e.missing.len() == cells)
            })
        {
            return Err(StatsError::Sizes);
        }
        let (moments, cells, zeros, missing) = match r.extra {
            Some(e) => {
                let cells = r
                    .moments
                    .iter()
                    .zip(&e.nonzero)
                    .map(|(&[mean, m2], nz)| Summary {
                        mean,
                        m2,
                        weight: nz.weight,
                        touched: nz.touched,
                    })
                    .collect();
                (Vec::new(), cells, true, e.missing)
            }
            None => (r.moments, Vec::new(), false, Vec::new()),
        };
        let mut stats = NumericStats {
            d: r.d,
            width: r.d,
            cols: Vec::new(),
            classes: r.classes,
            seen: r.seen,
            count: r.count,
            moments,
            cells,
            range: r.range,
            zeros,
            missing,
        };
        stats.compact();
        Ok(stats)
    }
}

/// Per (slot, column) of every column (the serialized form is the identity's), what `f`
/// makes of the cell at (slot, local column), or of `T::default()` for a column without
/// cells.
struct FullWidth<'a, T, F> {
    stats: &'a NumericStats,
    cells: &'a [T],
    f: F,
}

impl<T: Copy + Default, U: Serialize, F: Fn(T) -> U> Serialize for FullWidth<'_, T, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let st = self.stats;
        let (d, width) = (st.d, st.width);
        let mut seq = serializer.serialize_seq(Some(st.slots() * d))?;
        for s in 0..st.slots() {
            let mut l = 0;
            for j in 0..d {
                let cell = if width == d {
                    self.cells[s * width + j]
                } else if l < width && st.cols[l] as usize == j {
                    l += 1;
                    self.cells[s * width + l - 1]
                } else {
                    T::default()
                };
                seq.serialize_element(&(self.f)(cell))?;
            }
        }
        seq.end()
    }
}

impl Serialize for NumericStats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        type Full<'a, T, U> = FullWidth<'a, T, fn(T) -> U>;
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Moments<'a> {
            Dense(Full<'a, [f64; 2], [f64; 2]>),
            Cells(Full<'a, Summary, [f64; 2]>),
        }
        #[derive(Serialize)]
        #[serde(rename = "Extra")]
        struct ExtraRef<'a> {
            nonzero: Full<'a, Summary, NonZero>,
            missing: Missing<'a>,
        }
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Missing<'a> {
            None(&'a [f64]),
            Some(Full<'a, f64, f64>),
        }
        #[derive(Serialize)]
        #[serde(rename = "NumericStats")]
        struct Repr<'a> {
            d: usize,
            classes: &'a [u32],
            seen: &'a [f64],
            count: &'a [u64],
            moments: Moments<'a>,
            range: Full<'a, [f64; 2], [f64; 2]>,
            extra: Option<ExtraRef<'a>>,
        }
        fn full<'a, T, U>(
            stats: &'a NumericStats,
            cells: &'a [T],
            f: fn(T) -> U,
        ) -> Full<'a, T, U> {
            FullWidth { stats, cells, f }
        }
        Repr {
            d: self.d,
            classes: &self.classes,
            seen: &self.seen,
            count: &self.count,
            moments: if self.zeros {
                Moments::Cells(full(self, &self.cells, |c| [c.mean, c.m2]))
            } else {
                Moments::Dense(full(self, &self.moments, |m| m))
            },
            range: full(self, &self.range, |r| r),
            extra: self.zeros.then(|| ExtraRef {
                nonzero: full(self, &self.cells, |c| NonZero {
                    weight: c.weight,
                    touched: c.touched,
                }),
                // (Empty until the first missing value.)
                missing: if self.missing.is_empty() {
                    Missing::None(&[])
                } else {
                    Missing::Some(full(self, &self.missing, |m| m))
                },
            }),
        }
        .serialize(serializer)
    }
}

/// The compact serialized form of [`NumericStats`] (model format 4): the columns with
/// cells and the arrays per (slot, local column) as they are in memory, so a leaf that has
/// seen a few of many columns is written (and read) at the size it has. Written for the
/// leaves whose columns are not the identity (see [`NumericStats::is_compact`]); checked
/// with the tree, like the full form ([`NumericStats::check`]).
#[derive(Serialize)]
#[serde(rename = "CompactStats")]
pub(super) struct CompactStatsRef<'a> {
    d: usize,
    width: usize,
    cols: &'a [u32],
    classes: &'a [u32],
    seen: &'a [f64],
    count: &'a [u64],
    zeros: bool,
    moments: &'a [[f64; 2]],
    cells: &'a [Summary],
    range: &'a [[f64; 2]],
    missing: &'a [f64],
}

/// What [`CompactStatsRef`] writes, read back.
#[derive(Deserialize)]
#[serde(rename = "CompactStats")]
pub(super) struct CompactStats {
    d: usize,
    width: usize,
    cols: Vec<u32>,
    classes: Vec<u32>,
    seen: Vec<f64>,
    count: Vec<u64>,
    zeros: bool,
    moments: Vec<[f64; 2]>,
    cells: Vec<Summary>,
    range: Vec<[f64; 2]>,
    missing: Vec<f64>,
}

impl From<CompactStats> for NumericStats {
    fn from(c: CompactStats) -> Self {
        NumericStats {
            d: c.d,
            width: c.width,
            cols: c.cols,
            classes: c.classes,
            seen: c.seen,
            count: c.count,
            moments: c.moments,
            cells: c.cells,
            range: c.range,
            zeros: c.zeros,
            missing: c.missing,
        }
    }
}

/// The class of slot 0.
const ALL_CLASSES: u32 = u32::MAX;

impl NumericStats {
    /// Whether deserialized statistics are consistent for `d` columns and `k` classes
    /// (a damaged model file must be refused, not make a later read panic).
    pub fn check(&self, d: usize, k: usize) -> Result<(), StatsError> {
        let slots = self.classes.len();
        let cells = slots
            .checked_mul(self.width)
            .ok_or(StatsError::TooManyCells)?;
        if self.d != d
            || slots == 0
            || self.classes[0] != ALL_CLASSES
            || self.seen.len() != slots
            || self.count.len() != slots
            || self.moments.len() != if self.zeros { 0 } else { cells }
            || self.cells.len() != if self.zeros { cells } else { 0 }
            || self.range.len() != cells
            || self.width > d
            || self.cols.len() != if self.width == d { 0 } else { self.width }
            || !self.cols.windows(2).all(|w| w[0] < w[1])
            || self.cols.last().is_some_and(|&c| c as usize >= d)
        {
            return Err(StatsError::Sizes);
        }
        if !self.classes[1..].windows(2).all(|w| w[0] < w[1])
            || self.classes[1..].iter().any(|&c| c as usize >= k)
        {
            return Err(StatsError::Classes);
        }
        // A leaf that has learned only non-zero values has cells for every column.
        // (Without a column, it has learned nothing: one slot, empty.)
        if !self.zeros
            && self.width != d
            && (slots != 1 || self.count[0] != 0 || self.seen[0] != 0.0)
        {
            return Err(StatsError::MissingColumns);
        }
        if !(self.missing.is_empty() || self.zeros && self.missing.len() == cells) {
            return Err(StatsError::ZerosMissingSizes);
        }
        Ok(())
    }

    /// Whether some columns have no cells (a local column table, or none at all while
    /// the leaf has learned nothing): the leaf is then written in the compact form.
    pub fn is_compact(&self) -> bool {
        self.width < self.d
    }

    /// The compact serialized form (see [`CompactStatsRef`]).
    pub fn compact_form(&self) -> CompactStatsRef<'_> {
        CompactStatsRef {
            d: self.d,
            width: self.width,
            cols: &self.cols,
            classes: &self.classes,
            seen: &self.seen,
            count: &self.count,
            zeros: self.zeros,
            moments: &self.moments,
            cells: &self.cells,
            range: &self.range,
            missing: &self.missing,
        }
    }

    /// Empty statistics for `d` numeric attributes (no column has cells yet).
    pub fn new(d: usize) -> Self {
        NumericStats {
            d,
            width: 0,
            cols: Vec::new(),
            classes: vec![ALL_CLASSES],
            seen: vec![0.0],
            count: vec![0],
            moments: Vec::new(),
            cells: Vec::new(),
            range: Vec::new(),
            zeros: false,
            missing: Vec::new(),
        }
    }

    /// Keeps cells only for the columns with a non-zero or missing value (those with
    /// only zeros have cells of zeros), or for every column when they are at least
    /// `1 / IDENTITY_SHARE` of them: what the learning of the same examples gives.
    fn compact(&mut self) {
        debug_assert_eq!(self.width, self.d);
        let d = self.d;
        let keep: Vec<u32> = if self.count[0] == 0 {
            Vec::new()
        } else if !self.zeros {
            return; // Every column had a non-zero value in every example.
        } else {
            (0..d)
                .filter(|&j| self.cells[j].touched > 0)
                .map(|j| j as u32)
                .collect()
        };
        if IDENTITY_SHARE * keep.len() >= d {
            return;
        }
        // Gather: local column `l` takes column `keep[l]`.
        let slots = self.slots();
        let w = keep.len();
        fn gather<T: Copy>(v: &mut Vec<T>, slots: usize, d: usize, keep: &[u32]) {
            if v.is_empty() {
                return;
            }
            let mut out = Vec::with_capacity(slots * keep.len());
            for s in 0..slots {
                out.extend(keep.iter().map(|&j| v[s * d + j as usize]));
            }
            *v = out;
        }
        gather(&mut self.moments, slots, d, &keep);
        gather(&mut self.cells, slots, d, &keep);
        gather(&mut self.range, slots, d, &keep);
        gather(&mut self.missing, slots, d, &keep);
        self.width = w;
        self.cols = keep;
    }

    /// Moves every per-(slot, local column) array to `new` local columns, local column
    /// `l` going to `to[l]`.
    fn relayout(&mut self, new: usize, to: &[usize]) {
        let (slots, old) = (self.slots(), self.width);
        if !self.zeros {
            self.moments = relayout(&self.moments, slots, old, new, to);
        } else {
            self.cells = relayout(&self.cells, slots, old, new, to);
        }
        self.range = relayout(&self.range, slots, old, new, to);
        if !self.missing.is_empty() {
            self.missing = relayout(&self.missing, slots, old, new, to);
        }
        self.width = new;
    }

    /// Gives cells (of zeros: the column had only zeros) to the columns of `entries`
    /// (ascending) that have none; `true` if some had none.
    fn add_columns(&mut self, entries: &[(u32, f64)]) -> bool {
        if self.width == self.d {
            return false;
        }
        let mut at = 0;
        let mut new = 0;
        for &(col, _) in entries {
            match self.cols[at..].binary_search(&col) {
                Ok(p) => at += p + 1,
                Err(p) => {
                    at += p;
                    new += 1;
                }
            }
        }
        if new == 0 {
            return false;
        }
        // The merged columns, and where each old local column goes.
        let width = self.width + new;
        let identity = IDENTITY_SHARE * width >= self.d;
        let mut merged = Vec::with_capacity(width);
        let mut to = Vec::with_capacity(self.width);
        let mut e = entries.iter().map(|&(c, _)| c).peekable();
        for &c in &self.cols {
            while let Some(n) = e.next_if(|&n| n < c) {
                merged.push(n);
            }
            e.next_if(|&n| n == c);
            to.push(if identity { c as usize } else { merged.len() });
            merged.push(c);
        }
        merged.extend(e);
        debug_assert_eq!(merged.len(), width);
        if identity {
            self.relayout(self.d, &to);
            self.cols = Vec::new();
        } else {
            self.relayout(width, &to);
            self.cols = merged;
        }
        true
    }

    /// The bytes of the statistics' vectors, counted by their lengths.
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(self.cols.as_slice())
            + size_of_val(self.classes.as_slice())
            + size_of_val(self.seen.as_slice())
            + size_of_val(self.count.as_slice())
            + size_of_val(self.moments.as_slice())
            + size_of_val(self.cells.as_slice())
            + size_of_val(self.range.as_slice())
            + size_of_val(self.missing.as_slice())
    }

    /// [`heap_bytes`](Self::heap_bytes) of statistics with `slots` slots of `d` columns
    /// that have seen no zero and no missing value.
    pub fn dense_bytes(slots: usize, d: usize) -> usize {
        use std::mem::size_of;
        slots * (size_of::<u32>() + size_of::<f64>() + size_of::<u64>())
            + slots * d * (size_of::<[f64; 2]>() + size_of::<[f64; 2]>())
    }

    /// The number of numeric attributes.
    #[inline]
    pub fn columns(&self) -> usize {
        self.d
    }

    /// The number of local columns (those with cells).
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether every column has cells (local column = column).
    #[inline]
    pub fn identity(&self) -> bool {
        self.width == self.d
    }

    /// The local column of column `j`, `None` when it has no cells (only zeros so far).
    #[inline(always)]
    pub fn local(&self, j: usize) -> Option<usize> {
        if self.width == self.d {
            Some(j)
        } else {
            self.cols.binary_search(&(j as u32)).ok()
        }
    }

    /// The column of local column `l`.
    #[inline(always)]
    pub fn column(&self, l: usize) -> usize {
        if self.width == self.d {
            l
        } else {
            self.cols[l] as usize
        }
    }

    /// The number of slots (the classes learned, plus slot 0).
    #[inline]
    pub fn slots(&self) -> usize {
        self.classes.len()
    }

    /// The summary of slot `s` at column `j` (from either layout; zeros for a column
    /// without cells).
    #[cfg(test)]
    fn cell(&self, s: usize, j: usize) -> Summary {
        let Some(l) = self.local(j) else {
            return Summary::default();
        };
        let i = s * self.width + l;
        if self.zeros {
            self.cells[i]
        } else {
            let [mean, m2] = self.moments[i];
            Summary {
                mean,
                m2,
                weight: self.seen[s],
                touched: self.count[s],
            }
        }
    }

    /// The range of slot `s` at column `j` (`[0, 0]` for a column without cells).
    #[cfg(test)]
    fn range_of(&self, s: usize, j: usize) -> [f64; 2] {
        self.local(j)
            .map_or([0.0; 2], |l| self.range[s * self.width + l])
    }

    /// The missing weight of slot `s` at column `j` (0 for a column without cells).
    #[cfg(test)]
    fn missing_of(&self, s: usize, j: usize) -> f64 {
        self.local(j)
            .map_or(0.0, |l| self.missing[s * self.width + l])
    }

    /// Switches to [`Summary`] cells (the first zero or missing value): every example so
    /// far had a non-zero finite value everywhere, so each non-zero weight and count is
    /// the slot's.
    fn switch_to_cells(&mut self) {
        let w = self.width;
        self.cells = self
            .moments
            .iter()
            .enumerate()
            .map(|(i, &[mean, m2])| Summary {
                mean,
                m2,
                weight: self.seen[i / w],
                touched: self.count[i / w],
            })
            .collect();
        self.moments = Vec::new();
        self.zeros = true;
    }

    /// The class of slot `s >= 1`.
    #[inline]
    pub fn class_of(&self, s: usize) -> usize {
        self.classes[s] as usize
    }

    /// Whether some numeric value the leaf learned was missing.
    #[inline]
    pub fn any_missing(&self) -> bool {
        !self.missing.is_empty()
    }

    /// The slot of class `c`, created (in class order) if the leaf has not learned it.
    fn slot_or_insert(&mut self, c: usize) -> usize {
        match self.classes[1..].binary_search(&(c as u32)) {
            Ok(p) => p + 1,
            Err(p) => {
                let s = p + 1;
                let d = self.width;
                // Exact reservations: a leaf's memory is what `heap_bytes` counts, with no
                // spare capacity from doubling.
                self.classes.reserve_exact(1);
                self.seen.reserve_exact(1);
                self.count.reserve_exact(1);
                self.range.reserve_exact(d);
                if self.zeros {
                    self.cells.reserve_exact(d);
                } else {
                    self.moments.reserve_exact(d);
                }
                if !self.missing.is_empty() {
                    self.missing.reserve_exact(d);
                }
                self.classes.insert(s, c as u32);
                self.seen.insert(s, 0.0);
                self.count.insert(s, 0);
                let at = s * d;
                if self.zeros {
                    self.cells
                        .splice(at..at, std::iter::repeat_n(Summary::default(), d));
                } else {
                    self.moments
                        .splice(at..at, std::iter::repeat_n([0.0; 2], d));
                }
                self.range.splice(at..at, std::iter::repeat_n([0.0; 2], d));
                if !self.missing.is_empty() {
                    self.missing.splice(at..at, std::iter::repeat_n(0.0, d));
                }
                s
            }
        }
    }

    /// Adds an example of class `c` with weight `w` (finite, positive): `entries` are its
    /// non-zero or missing numeric values as `(column, value)`, ascending by column;
    /// `sparse` says whether some column is zero or missing (then it is not in `entries`
    /// or has a non-finite value there). Writes the local column of each entry into
    /// `locals`. Returns the class's slot, and whether columns got cells (the local
    /// columns moved).
    pub fn update(
        &mut self,
        entries: &[(u32, f64)],
        sparse: bool,
        c: usize,
        w: f64,
        locals: &mut Vec<u32>,
    ) -> (usize, bool) {
        debug_assert!(w > 0.0 && w.is_finite());
        if sparse && !self.zeros {
            self.switch_to_cells();
        }
        let grew = self.add_columns(entries);
        let s = self.slot_or_insert(c);
        locals.clear();
        if self.width == self.d {
            locals.extend(entries.iter().map(|&(col, _)| col));
        } else {
            let mut at = 0;
            for &(col, _) in entries {
                // (Every column of `entries` has cells now.)
                let p = self.cols[at..].binary_search(&col).unwrap_or_else(|p| p);
                at += p;
                locals.push(at as u32);
                at += 1;
            }
        }
        let d = self.width;
        let NumericStats {
            seen,
            moments,
            cells,
            range,
            missing,
            zeros,
            ..
        } = self;
        if !*zeros {
            // Dense: every value is non-zero and finite; the non-zero weight is the slot's.
            for (&(_, v), &l) in entries.iter().zip(locals.iter()) {
                for slot in [0, s] {
                    let i = slot * d + l as usize;
                    let [mean, m2] = &mut moments[i];
                    welford(seen[slot], v, w, mean, m2, &mut range[i]);
                }
            }
        } else {
            for (&(_, v), &l) in entries.iter().zip(locals.iter()) {
                for slot in [0, s] {
                    let i = slot * d + l as usize;
                    let cell = &mut cells[i];
                    cell.touched += 1;
                    if !v.is_finite() {
                        if missing.is_empty() {
                            *missing = vec![0.0; cells.len()];
                        }
                        missing[i] += w;
                        continue;
                    }
                    let before = cell.weight;
                    cell.weight = before + w;
                    welford(before, v, w, &mut cell.mean, &mut cell.m2, &mut range[i]);
                }
            }
        }
        let NumericStats { seen, count, .. } = self;
        for slot in [0, s] {
            seen[slot] += w;
            count[slot] += 1;
        }
        (s, grew)
    }

    /// The folded summary of slot `s` at local column `l` (see [`Folded`]).
    #[inline(always)]
    pub fn folded(&self, s: usize, l: usize) -> Folded {
        let i = s * self.width + l;
        let seen = self.seen[s];
        if !self.zeros {
            let [m, m2] = self.moments[i];
            return Folded {
                n: seen,
                r: 1.0 / seen,
                mean: m,
                m2,
                zeros: false,
            };
        }
        let missing = if self.missing.is_empty() {
            None
        } else {
            Some(self.missing[i])
        };
        fold(&self.cells[i], missing, self.count[s], seen)
    }

    /// The Gaussian summary of slot `s` at local column `l`, zeros included (its weight
    /// is the weight of the known values; an empty estimator when there was none).
    #[inline]
    pub fn estimator(&self, s: usize, l: usize) -> GaussianEstimator {
        let f = self.folded(s, l);
        if f.n.is_nan() || f.n <= 0.0 {
            return GaussianEstimator::new();
        }
        let [mut min, mut max] = self.range[s * self.width + l];
        if f.zeros {
            // (Without a non-zero value, min and max are still 0.)
            (min, max) = (min.min(0.0), max.max(0.0));
        }
        GaussianEstimator::from_parts(f.n, f.mean, f.m2, min, max)
    }
}

/// The folded summary of a cell of a leaf that has seen zeros: `missing`, its missing
/// weight (`None` while the leaf has seen no missing value); `count` and `seen`, its
/// slot's.
#[inline(always)]
fn fold(cell: &Summary, missing: Option<f64>, count: u64, seen: f64) -> Folded {
    let &Summary {
        mean: m,
        m2,
        weight: a,
        touched,
    } = cell;
    if count > touched {
        // There were zeros: the known weight less the non-zero weight.
        let n = match missing {
            None => seen,
            Some(missing) => seen - missing,
        };
        let z = (n - a).max(0.0);
        if a <= 0.0 {
            return Folded {
                n: z,
                r: 1.0 / z,
                mean: 0.0,
                m2: 0.0,
                zeros: true,
            };
        }
        let r = 1.0 / n;
        let mean = m * (a * r);
        Folded {
            n,
            r,
            mean,
            m2: m2 + m * mean * z,
            zeros: true,
        }
    } else {
        Folded {
            n: a,
            r: 1.0 / a,
            mean: m,
            m2,
            zeros: false,
        }
    }
}

/// A slot's summary of one column with the zeros folded in (Chan et al.'s merge of the
/// non-zero summary `(a, m, M2)` with the zeros `(z, 0, 0)`): known weight `n` (the
/// slot's weight less the missing weight when there were zeros, else `a`), `r = 1/n`,
/// `mean = m (a r)`, `m2 = M2 + m mean z`; the variance is `m2 r`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Folded {
    /// The known weight.
    pub n: f64,
    /// `1 / n`.
    pub r: f64,
    /// The mean.
    pub mean: f64,
    /// The sum of squared deviations.
    pub m2: f64,
    /// Whether zeros were folded in.
    pub zeros: bool,
}

/// The weighted Welford (West) update of one summary (mean and M2, smallest and largest
/// value) with value `x` and weight `w`, the summary's weight being `before`.
#[inline(always)]
fn welford(before: f64, x: f64, w: f64, mean: &mut f64, m2: &mut f64, range: &mut [f64; 2]) {
    if before <= 0.0 {
        (*mean, *m2) = (x, 0.0);
        *range = [x, x];
        return;
    }
    let total = before + w;
    let delta = x - *mean;
    let step = delta * (w / total);
    *mean += step;
    *m2 += before * delta * step;
    if x < range[0] {
        range[0] = x;
    }
    if x > range[1] {
        range[1] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::seeded;
    use rand::RngExt;

    /// `d` columns, classes in a random order (slots inserted mid-stream), values mostly 0,
    /// sometimes missing when `missing`; returns the examples as dense rows.
    fn stream(seed: u64, d: usize, missing: bool) -> Vec<(Vec<f64>, usize, f64)> {
        let mut rng = seeded(seed, 0);
        (0..400)
            .map(|n| {
                let c = [4, 1, 3, 0][rng.random_range(0..4usize).min(n / 50)];
                let x = (0..d)
                    .map(|j| match rng.random_range(0..10u32) {
                        0..=5 => 0.0,
                        6 if missing && j % 2 == 0 => f64::NAN,
                        _ => c as f64 + rng.random_range(-1.0..1.0) + j as f64,
                    })
                    .collect();
                (x, c, [1.0, 0.5, 3.0][n % 3])
            })
            .collect()
    }

    /// The stats of `rows`, learned as a leaf does (non-zero values only).
    fn learn(d: usize, rows: &[(Vec<f64>, usize, f64)]) -> NumericStats {
        let mut stats = NumericStats::new(d);
        for (x, c, w) in rows {
            let entries: Vec<(u32, f64)> = x
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(j, &v)| (j as u32, v))
                .collect();
            let sparse = entries.len() < d || entries.iter().any(|(_, v)| !v.is_finite());
            stats.update(&entries, sparse, *c, *w, &mut Vec::new());
        }
        stats
    }

    /// The folded summaries equal, up to rounding, a Welford update with every value
    /// (zeros included, missing skipped), per class and for all classes; min and max
    /// exactly.
    #[test]
    fn folded_statistics_match_a_dense_welford_brute_force() {
        for (d, missing) in [(1, false), (5, false), (7, true)] {
            let rows = stream(d as u64, d, missing);
            let stats = learn(d, &rows);
            assert_eq!(stats.slots(), 5);
            for s in 0..stats.slots() {
                for j in 0..d {
                    let mut g = GaussianEstimator::new();
                    for (x, c, w) in &rows {
                        if s == 0 || stats.class_of(s) == *c {
                            g.update(x[j], *w);
                        }
                    }
                    let Some(l) = stats.local(j) else {
                        assert_eq!(g.max(), 0.0, "slot {s} column {j} without cells");
                        continue;
                    };
                    let e = stats.estimator(s, l);
                    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + b.abs());
                    assert!(close(e.weight(), g.weight()), "slot {s} column {j}");
                    assert!(close(e.mean(), g.mean()), "slot {s} column {j}");
                    assert!(close(e.variance(), g.variance()), "slot {s} column {j}");
                    assert_eq!((e.min(), e.max()), (g.min(), g.max()), "slot {s} col {j}");
                }
            }
        }
    }

    /// The serialized form is the one of the statistics before the cells were kept column
    /// by column (slot by slot: `moments`, `range`, `extra`), and it loads back equal.
    #[test]
    fn serialized_slot_by_slot_as_before_and_loads_back() {
        #[derive(Serialize)]
        struct OldExtra {
            nonzero: Vec<NonZero>,
            missing: Vec<f64>,
        }
        #[derive(Serialize)]
        struct Old {
            d: usize,
            classes: Vec<u32>,
            seen: Vec<f64>,
            count: Vec<u64>,
            moments: Vec<[f64; 2]>,
            range: Vec<[f64; 2]>,
            extra: Option<Box<OldExtra>>,
        }
        for (d, missing, dense) in [(4, false, true), (5, false, false), (6, true, false)] {
            let mut rows = stream(10 + d as u64, d, missing);
            if dense {
                for (x, _, _) in &mut rows {
                    x.iter_mut().for_each(|v| *v += 100.0);
                }
            }
            let stats = learn(d, &rows);
            assert_eq!(stats.zeros, !dense);
            assert_eq!(stats.any_missing(), missing);
            let slots = stats.slots();
            let mut moments = Vec::new();
            let mut range = Vec::new();
            let mut nonzero = Vec::new();
            let mut miss = Vec::new();
            for s in 0..slots {
                for j in 0..d {
                    let c = stats.cell(s, j);
                    moments.push([c.mean, c.m2]);
                    range.push(stats.range_of(s, j));
                    nonzero.push(NonZero {
                        weight: c.weight,
                        touched: c.touched,
                    });
                    if missing {
                        miss.push(stats.missing_of(s, j));
                    }
                }
            }
            let old = Old {
                d,
                classes: stats.classes.clone(),
                seen: stats.seen.clone(),
                count: stats.count.clone(),
                moments,
                range,
                extra: (!dense).then(|| {
                    Box::new(OldExtra {
                        nonzero,
                        missing: miss,
                    })
                }),
            };
            let bytes = postcard::to_stdvec(&stats).unwrap();
            assert_eq!(bytes, postcard::to_stdvec(&old).unwrap(), "d {d}");
            let back: NumericStats = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(back, stats);
            let json = serde_json::to_string(&stats).unwrap();
            assert_eq!(json, serde_json::to_string(&old).unwrap());
        }
    }
}
