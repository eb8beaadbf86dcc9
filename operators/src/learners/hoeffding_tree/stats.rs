//! A leaf's numeric statistics, sparse in two ways: only the classes the leaf has
//! learned get estimators, and only non-zero values are added (zeros are folded in when
//! the statistics are read).
//!
//! Layout: one *slot* per class the leaf has learned from, in class order, after slot 0
//! which pools all classes; per (slot, numeric attribute) at `slot * d + column`, the
//! weighted Welford summary of the attribute's non-zero finite values: mean and M2 side
//! by side (what naive Bayes reads), smallest and largest value side by side (what a split
//! attempt reads). Per slot, the weight and the number of examples learned.
//!
//! While every example the leaf learned had a non-zero finite value for every numeric
//! attribute (dense data), that is all: each attribute's non-zero weight is the slot's
//! weight. From the first example with a zero or a missing (non-finite) value on, the leaf
//! also keeps per (slot, attribute) the non-zero weight and the number of examples with a
//! non-zero or missing value ([`NonZero`]), and from the first missing value on, the
//! missing weight. The weight of the zeros is the slot's weight less the non-zero and the
//! missing weight, and there were zeros exactly when the slot has learned more examples
//! than had a non-zero or missing value.
//!
//! [`NumericStats::folded`] merges the zeros into the non-zero summary (Chan et al.'s
//! pairwise update), which gives, up to rounding, what a Welford update with every value,
//! zeros included, gives: a sparse example costs work for its non-zero values only.

use super::gaussian::GaussianEstimator;
use serde::{Deserialize, Serialize};

/// Per (slot, attribute) of a leaf that has seen zeros or missing values: the weight of
/// the non-zero finite values and the number of examples with a non-zero or missing value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct NonZero {
    /// The weight of the non-zero finite values.
    pub weight: f64,
    /// The number of examples with a non-zero or missing value.
    pub touched: u64,
}

/// What a leaf keeps once it has learned an example with a zero or a missing value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Extra {
    /// Per (slot, column).
    pub nonzero: Vec<NonZero>,
    /// Per (slot, column): the weight of the missing values (empty until one is seen).
    pub missing: Vec<f64>,
}

/// The numeric statistics of one leaf (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct NumericStats {
    /// The number of numeric attributes (columns).
    pub d: usize,
    /// Slot -> class; slot 0 (all classes) holds `u32::MAX`, the others ascend.
    classes: Vec<u32>,
    /// Per slot: the weight learned.
    pub seen: Vec<f64>,
    /// Per slot: the number of examples learned.
    pub count: Vec<u64>,
    /// Per (slot, column): the mean and M2 (weighted sum of squared deviations) of the
    /// non-zero finite values.
    pub moments: Vec<[f64; 2]>,
    /// Per (slot, column): the smallest and the largest of them.
    range: Vec<[f64; 2]>,
    /// Present from the first example with a zero or missing value on.
    pub extra: Option<Box<Extra>>,
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
            || self.moments.len() != cells
            || self.range.len() != cells
        {
            return Err("numeric statistics of inconsistent sizes".into());
        }
        if !self.classes[1..].windows(2).all(|w| w[0] < w[1])
            || self.classes[1..].iter().any(|&c| c as usize >= k)
        {
            return Err("numeric statistics of unknown or unordered classes".into());
        }
        if let Some(e) = &self.extra
            && (e.nonzero.len() != cells || !(e.missing.is_empty() || e.missing.len() == cells))
        {
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
            range: vec![[0.0; 2]; d],
            extra: None,
        }
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

    /// The class of slot `s >= 1`.
    #[inline]
    pub fn class_of(&self, s: usize) -> usize {
        self.classes[s] as usize
    }

    /// Whether some numeric value the leaf learned was missing.
    #[inline]
    pub fn any_missing(&self) -> bool {
        self.extra.as_ref().is_some_and(|e| !e.missing.is_empty())
    }

    /// The slot of class `c`, created (in class order) if the leaf has not learned it.
    fn slot_or_insert(&mut self, c: usize) -> usize {
        match self.classes[1..].binary_search(&(c as u32)) {
            Ok(p) => p + 1,
            Err(p) => {
                let s = p + 1;
                let d = self.d;
                self.classes.insert(s, c as u32);
                self.seen.insert(s, 0.0);
                self.count.insert(s, 0);
                let at = s * d;
                self.moments
                    .splice(at..at, std::iter::repeat_n([0.0; 2], d));
                self.range.splice(at..at, std::iter::repeat_n([0.0; 2], d));
                if let Some(e) = &mut self.extra {
                    e.nonzero
                        .splice(at..at, std::iter::repeat_n(NonZero::default(), d));
                    if !e.missing.is_empty() {
                        e.missing.splice(at..at, std::iter::repeat_n(0.0, d));
                    }
                }
                s
            }
        }
    }

    /// Starts keeping the per-attribute weights: every example so far had a non-zero
    /// finite value everywhere.
    fn ensure_extra(&mut self) {
        if self.extra.is_some() {
            return;
        }
        let d = self.d;
        let mut nonzero = Vec::with_capacity(self.moments.len());
        for (&weight, &touched) in self.seen.iter().zip(&self.count) {
            nonzero.extend(std::iter::repeat_n(NonZero { weight, touched }, d));
        }
        self.extra = Some(Box::new(Extra {
            nonzero,
            missing: Vec::new(),
        }));
    }

    /// Adds an example of class `c` with weight `w` (finite, positive): `entries` are its
    /// non-zero or missing numeric values as `(column, value)`, ascending by column;
    /// `sparse` says whether some column is zero or missing (then it is not in `entries`
    /// or has a non-finite value there). Returns the class's slot.
    pub fn update(&mut self, entries: &[(u32, f64)], sparse: bool, c: usize, w: f64) -> usize {
        debug_assert!(w > 0.0 && w.is_finite());
        let s = self.slot_or_insert(c);
        if sparse {
            self.ensure_extra();
        }
        let d = self.d;
        let NumericStats {
            seen,
            moments,
            range,
            extra,
            count,
            ..
        } = self;
        for &(col, v) in entries {
            for slot in [0, s] {
                let i = slot * d + col as usize;
                let before = match extra {
                    Some(e) => {
                        let nz = &mut e.nonzero[i];
                        nz.touched += 1;
                        if !v.is_finite() {
                            if e.missing.is_empty() {
                                e.missing = vec![0.0; e.nonzero.len()];
                            }
                            e.missing[i] += w;
                            continue;
                        }
                        let b = nz.weight;
                        nz.weight = b + w;
                        b
                    }
                    None => seen[slot],
                };
                welford(before, v, w, &mut moments[i], &mut range[i]);
            }
        }
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
        let [m, m2] = self.moments[i];
        let Some(e) = &self.extra else {
            return Folded {
                n: seen,
                r: 1.0 / seen,
                mean: m,
                m2,
                zeros: false,
            };
        };
        let NonZero { weight: a, touched } = e.nonzero[i];
        if self.count[s] > touched {
            // There were zeros: the known weight less the non-zero weight.
            let n = if e.missing.is_empty() {
                seen
            } else {
                seen - e.missing[i]
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
fn welford(before: f64, x: f64, w: f64, moments: &mut [f64; 2], range: &mut [f64; 2]) {
    if before <= 0.0 {
        *moments = [x, 0.0];
        *range = [x, x];
        return;
    }
    let [mean, m2] = moments;
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
