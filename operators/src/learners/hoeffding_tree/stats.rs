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
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
    /// Slot -> class; slot 0 (all classes) holds `u32::MAX`, the others ascend.
    classes: Vec<u32>,
    /// Per slot: the weight learned.
    pub seen: Vec<f64>,
    /// Per slot: the number of examples learned.
    pub count: Vec<u64>,
    /// Per (slot, column), while the leaf has seen no zero and no missing value (`zeros`
    /// false; empty after): the mean and M2 of the values (16 bytes: the non-zero weight
    /// and count are the slot's).
    pub moments: Vec<[f64; 2]>,
    /// Per (slot, column), from the first zero or missing value on (empty before): see
    /// [`Summary`].
    pub cells: Vec<Summary>,
    /// Per (slot, column): the smallest and the largest non-zero finite value.
    range: Vec<[f64; 2]>,
    /// Whether the leaf has learned an example with a zero or a missing value.
    pub zeros: bool,
    /// Per (slot, column): the weight of the missing values (empty until one is seen).
    pub missing: Vec<f64>,
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
    type Error = String;

    fn try_from(r: StatsRepr) -> Result<Self, String> {
        let cells = r.moments.len();
        let slots = r.seen.len();
        if r.count.len() != slots
            || slots.checked_mul(r.d) != Some(cells)
            || r.range.len() != cells
            || r.extra.as_ref().is_some_and(|e| {
                e.nonzero.len() != cells || !(e.missing.is_empty() || e.missing.len() == cells)
            })
        {
            return Err("numeric statistics of inconsistent sizes".into());
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
        Ok(NumericStats {
            d: r.d,
            classes: r.classes,
            seen: r.seen,
            count: r.count,
            moments,
            cells,
            range: r.range,
            zeros,
            missing,
        })
    }
}

/// The means and M2, serialized as a sequence of pairs (from either layout).
enum MomentsSeq<'a> {
    Dense(&'a [[f64; 2]]),
    Cells(&'a [Summary]),
}

impl Serialize for MomentsSeq<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MomentsSeq::Dense(m) => m.serialize(serializer),
            MomentsSeq::Cells(c) => serializer.collect_seq(c.iter().map(|c| [c.mean, c.m2])),
        }
    }
}

/// The non-zero weights and counts of the cells, serialized as a sequence of [`NonZero`].
struct NonZeroSeq<'a>(&'a [Summary]);

impl Serialize for NonZeroSeq<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|c| NonZero {
            weight: c.weight,
            touched: c.touched,
        }))
    }
}

impl Serialize for NumericStats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename = "Extra")]
        struct ExtraRef<'a> {
            nonzero: NonZeroSeq<'a>,
            missing: &'a [f64],
        }
        #[derive(Serialize)]
        #[serde(rename = "NumericStats")]
        struct Repr<'a> {
            d: usize,
            classes: &'a [u32],
            seen: &'a [f64],
            count: &'a [u64],
            moments: MomentsSeq<'a>,
            range: &'a [[f64; 2]],
            extra: Option<ExtraRef<'a>>,
        }
        Repr {
            d: self.d,
            classes: &self.classes,
            seen: &self.seen,
            count: &self.count,
            moments: if self.zeros {
                MomentsSeq::Cells(&self.cells)
            } else {
                MomentsSeq::Dense(&self.moments)
            },
            range: &self.range,
            extra: self.zeros.then(|| ExtraRef {
                nonzero: NonZeroSeq(&self.cells),
                missing: &self.missing,
            }),
        }
        .serialize(serializer)
    }
}

/// The class of slot 0.
const ALL_CLASSES: u32 = u32::MAX;

impl NumericStats {
    /// Whether deserialized statistics are consistent for `d` columns and `k` classes
    /// (a damaged model file must be refused, not make a later read panic).
    pub fn check(&self, d: usize, k: usize) -> Result<(), String> {
        let slots = self.classes.len();
        let cells = slots.checked_mul(d).ok_or("too many numeric cells")?;
        if self.d != d
            || slots == 0
            || self.classes[0] != ALL_CLASSES
            || self.seen.len() != slots
            || self.count.len() != slots
            || self.moments.len() != if self.zeros { 0 } else { cells }
            || self.cells.len() != if self.zeros { cells } else { 0 }
            || self.range.len() != cells
        {
            return Err("numeric statistics of inconsistent sizes".into());
        }
        if !self.classes[1..].windows(2).all(|w| w[0] < w[1])
            || self.classes[1..].iter().any(|&c| c as usize >= k)
        {
            return Err("numeric statistics of unknown or unordered classes".into());
        }
        if !(self.missing.is_empty() || self.zeros && self.missing.len() == cells) {
            return Err("numeric statistics of inconsistent sizes (zeros, missing)".into());
        }
        Ok(())
    }

    /// Empty statistics for `d` numeric attributes.
    pub fn new(d: usize) -> Self {
        NumericStats {
            d,
            classes: vec![ALL_CLASSES],
            seen: vec![0.0],
            count: vec![0],
            moments: vec![[0.0; 2]; d],
            cells: Vec::new(),
            range: vec![[0.0; 2]; d],
            zeros: false,
            missing: Vec::new(),
        }
    }

    /// The bytes of the statistics' vectors, counted by their lengths.
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(self.classes.as_slice())
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

    /// The number of slots (the classes learned, plus slot 0).
    #[inline]
    pub fn slots(&self) -> usize {
        self.classes.len()
    }

    /// The index of (slot `s`, column `j`) in the per-cell arrays (slot by slot, so that
    /// the split of a slot's sums reads its cells in order).
    #[cfg(test)]
    fn at(&self, s: usize, j: usize) -> usize {
        s * self.d + j
    }

    /// The summary of slot `s` at column `j` (from either layout).
    #[cfg(test)]
    fn cell(&self, s: usize, j: usize) -> Summary {
        let i = self.at(s, j);
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

    /// Switches to [`Summary`] cells (the first zero or missing value): every example so
    /// far had a non-zero finite value everywhere, so each non-zero weight and count is
    /// the slot's.
    fn switch_to_cells(&mut self) {
        let d = self.d;
        self.cells = self
            .moments
            .iter()
            .enumerate()
            .map(|(i, &[mean, m2])| Summary {
                mean,
                m2,
                weight: self.seen[i / d],
                touched: self.count[i / d],
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
                let d = self.d;
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
    /// or has a non-finite value there). Returns the class's slot.
    pub fn update(&mut self, entries: &[(u32, f64)], sparse: bool, c: usize, w: f64) -> usize {
        debug_assert!(w > 0.0 && w.is_finite());
        let s = self.slot_or_insert(c);
        if sparse && !self.zeros {
            self.switch_to_cells();
        }
        let d = self.d;
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
            for &(col, v) in entries {
                for slot in [0, s] {
                    let i = slot * d + col as usize;
                    let [mean, m2] = &mut moments[i];
                    welford(seen[slot], v, w, mean, m2, &mut range[i]);
                }
            }
        } else {
            for &(col, v) in entries {
                for slot in [0, s] {
                    let i = slot * d + col as usize;
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
        s
    }

    /// The folded summary of slot `s` at column `j` (see [`Folded`]).
    #[inline(always)]
    pub fn folded(&self, s: usize, j: usize) -> Folded {
        let i = s * self.d + j;
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
        let Summary {
            mean: m,
            m2,
            weight: a,
            touched,
        } = self.cells[i];
        if self.count[s] > touched {
            // There were zeros: the known weight less the non-zero weight.
            let n = if self.missing.is_empty() {
                seen
            } else {
                seen - self.missing[i]
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

    /// The Gaussian summary of slot `s` at column `j`, zeros included (its weight is the
    /// weight of the known values; an empty estimator when there was none).
    #[inline]
    pub fn estimator(&self, s: usize, j: usize) -> GaussianEstimator {
        let f = self.folded(s, j);
        if f.n.is_nan() || f.n <= 0.0 {
            return GaussianEstimator::new();
        }
        let [mut min, mut max] = self.range[s * self.d + j];
        if f.zeros {
            // (Without a non-zero value, min and max are still 0.)
            (min, max) = (min.min(0.0), max.max(0.0));
        }
        GaussianEstimator::from_parts(f.n, f.mean, f.m2, min, max)
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
            stats.update(&entries, sparse, *c, *w);
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
                    let e = stats.estimator(s, j);
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
                    range.push(stats.range[stats.at(s, j)]);
                    nonzero.push(NonZero {
                        weight: c.weight,
                        touched: c.touched,
                    });
                    if missing {
                        miss.push(stats.missing[stats.at(s, j)]);
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
