//! ADWIN: adaptive windowing (Bifet and Gavaldà 2007), in its ADWIN2 form with the
//! exponential histogram of buckets.

use super::{DriftConfigError, DriftDetector, DriftState};
use serde::{Deserialize, Serialize};

/// ADWIN's parameters. The defaults are River's (`drift.ADWIN()`): `delta` 0.002, `clock`
/// 32, `max_buckets` 5, `min_window_length` 5, `grace_period` 10, and the reset after a
/// drift.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdwinConfig {
    /// The confidence `δ` of the cut test, in `(0, 1)`: smaller, fewer false alarms and
    /// later detections.
    pub delta: f64,
    /// Test for a cut every `clock` values (1: after every value), at least 1.
    pub clock: u64,
    /// `M`: buckets of each size kept before the two oldest of a row merge, at least 2.
    pub max_buckets: usize,
    /// The least length of either sub-window of a cut, at least 1.
    pub min_window_length: u64,
    /// No test while the window holds `grace_period` values or fewer.
    pub grace_period: u64,
    /// After a drift, start the next value with an empty window (River); `false` keeps
    /// the window that the cut left (the paper, MOA).
    pub reset_on_drift: bool,
}

impl Default for AdwinConfig {
    fn default() -> Self {
        AdwinConfig {
            delta: 0.002,
            clock: 32,
            max_buckets: 5,
            min_window_length: 5,
            grace_period: 10,
            reset_on_drift: true,
        }
    }
}

impl AdwinConfig {
    /// `Ok(())` when every parameter is in range.
    pub fn validate(&self) -> Result<(), DriftConfigError> {
        const D: &str = "ADWIN";
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(DriftConfigError::Confidence {
                detector: D,
                name: "delta",
                value: self.delta,
            });
        }
        let too_small = |name, min, value| DriftConfigError::TooSmall {
            detector: D,
            name,
            min,
            value,
        };
        if self.clock < 1 {
            return Err(too_small("clock", 1, self.clock));
        }
        if self.max_buckets < 2 {
            return Err(too_small("max_buckets", 2, self.max_buckets as u64));
        }
        if self.min_window_length < 1 {
            return Err(too_small("min_window_length", 1, self.min_window_length));
        }
        Ok(())
    }
}

/// One bucket of ADWIN's histogram: the sum of its `2^i` values (row `i`) and their sum
/// of squared deviations from their own mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The sum of the bucket's values.
    pub total: f64,
    /// The sum of squared deviations of the bucket's values from their mean.
    pub variance: f64,
}

/// ADWIN (Bifet and Gavaldà, *Learning from time-changing data with adaptive windowing*,
/// SDM 2007), the ADWIN2 form.
///
/// ADWIN keeps a window `W` of the most recent values and drops its oldest part whenever
/// two sub-windows `W = W0 · W1` (`W0` older, both at least `min_window_length` long) have
/// means further apart than
///
/// ```text
/// ε_cut = sqrt(2 · (1/n0' + 1/n1') · σ²_W · δ'') + 2/3 · δ'' · (1/n0' + 1/n1'),
///     δ'' = ln(2 · ln|W| / δ),    n_i' = |W_i| − min_window_length + 1,
/// ```
///
/// where `σ²_W` is the variance of the whole window (its sum of squared deviations over
/// `|W|`). This is the paper's variance-based (Bernstein) bound `sqrt(2/m σ² ln(2/δ')) +
/// 2/(3m) ln(2/δ')` with `1/m = 1/n0 + 1/n1` and `δ' = δ / ln|W|`, as MOA and River compute
/// it (the `− min_window_length + 1` is theirs), not the Hoeffding bound `sqrt(1/(2m)
/// ln(4/δ'))` of the paper's ADWIN0. While a cut is found, the oldest bucket is dropped
/// and all cuts are tested again; a value after which at least one was dropped is a
/// [`Drift`](DriftState::Drift).
///
/// **Buckets (ADWIN2).** The window is an exponential histogram: row `i` holds up to `M =
/// max_buckets` buckets of `2^i` values each (a [`Bucket`]: total and variance); a new
/// value enters row 0 as a bucket of one, and when a row holds `M + 1` buckets its two
/// oldest merge into one bucket of the next row (their variances combine as `v1 + v2 +
/// n/2 · (μ1 − μ2)²`, Babcock et al. 2003). The memory is `O(M log(|W|/M))` buckets, and a
/// test visits each bucket boundary once, the only candidate cut points.
///
/// **As River 0.26 (the default), where it departs from the paper:**
/// - cuts are tested only every `clock` values (counted from the start or the last
///   reset), and only while the window holds more than `grace_period` values;
/// - the last bucket boundary (`|W1| = 0`) is not tested, and sub-windows shorter than
///   `min_window_length` are skipped;
/// - after a drift, the next value starts from an empty window (`reset_on_drift`; the
///   paper keeps `W1`);
/// - the window's running mean and variance are kept incrementally (Welford's update on
///   insert, the reverse on deletion), in the same order of floating-point operations as
///   River, so the same values give the same change points.
///
/// ```
/// use flowboost_operators::drift::{Adwin, AdwinConfig, DriftDetector, DriftState};
///
/// let mut adwin = Adwin::new(AdwinConfig { clock: 1, ..AdwinConfig::default() })?;
/// let mut found = None;
/// for i in 0..600 {
///     let x = if i < 300 { 0.0 } else { 1.0 };
///     if adwin.update(x) == DriftState::Drift {
///         found = Some(i);
///         break;
///     }
/// }
/// let i = found.unwrap_or(0);
/// assert!((300..320).contains(&i), "detected at {i}");
/// # Ok::<(), flowboost_operators::drift::DriftConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Adwin {
    config: AdwinConfig,
    /// Row `i`: buckets of `2^i` values, oldest first; the last row is the oldest.
    rows: Vec<Vec<Bucket>>,
    /// `|W|`.
    width: u64,
    /// The sum of the window's values.
    total: f64,
    /// The window's sum of squared deviations from its mean.
    variance: f64,
    /// Values since the last test, modulo `clock`.
    tick: u64,
    /// Cuts detected since the start or the last reset.
    detections: u64,
    state: DriftState,
}

impl Default for Adwin {
    /// ADWIN with River's defaults.
    fn default() -> Self {
        Adwin::fresh(AdwinConfig::default())
    }
}

impl Adwin {
    /// An empty ADWIN, or the first parameter out of range.
    pub fn new(config: AdwinConfig) -> Result<Self, DriftConfigError> {
        config.validate()?;
        Ok(Adwin::fresh(config))
    }

    fn fresh(config: AdwinConfig) -> Self {
        Adwin {
            config,
            rows: vec![Vec::new()],
            width: 0,
            total: 0.0,
            variance: 0.0,
            tick: 0,
            detections: 0,
            state: DriftState::Stable,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &AdwinConfig {
        &self.config
    }

    /// `|W|`: the number of values in the window.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// The sum of the window's values.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The window's variance (its sum of squared deviations over `|W|`); 0 when empty.
    pub fn variance(&self) -> f64 {
        if self.width == 0 {
            0.0
        } else {
            self.variance / self.width as f64
        }
    }

    /// Drifts detected since the start or the last reset (with `reset_on_drift`, at
    /// most 1).
    pub fn detections(&self) -> u64 {
        self.detections
    }

    /// The histogram: row `i` holds the buckets of `2^i` values, oldest first (the
    /// highest row holds the oldest values).
    pub fn rows(&self) -> &[Vec<Bucket>] {
        &self.rows
    }

    /// The number of buckets kept (at most `(M + 1) · rows`).
    pub fn bucket_count(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// `ε_cut` for sub-windows of `n0` (older) and `n1` values in the current window
    /// (see the type's documentation).
    pub fn cut_threshold(&self, n0: u64, n1: u64) -> f64 {
        let width = self.width as f64;
        let mwl = self.config.min_window_length as f64;
        let delta_prime = (2.0 * width.ln() / self.config.delta).ln();
        let m_recip = 1.0 / (n0 as f64 - mwl + 1.0) + 1.0 / (n1 as f64 - mwl + 1.0);
        (2.0 * m_recip * (self.variance / width) * delta_prime).sqrt()
            + 2.0 / 3.0 * delta_prime * m_recip
    }

    /// Adds `x` to the window (row 0), then merges full rows upwards.
    fn insert(&mut self, x: f64) {
        self.width += 1;
        let width = self.width as f64;
        if self.width > 1 {
            let d = x - self.total / (width - 1.0);
            self.variance += (width - 1.0) * d * d / width;
        }
        self.total += x;
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        if let Some(row) = self.rows.first_mut() {
            row.push(Bucket {
                total: x,
                variance: 0.0,
            });
        }
        self.compress();
    }

    /// Merges the two oldest buckets of each row holding `M + 1` into the next row.
    fn compress(&mut self) {
        // At least 3 (`max_buckets` is at least 2), even for a state read from a file.
        let full = self.config.max_buckets.max(2) + 1;
        let mut i = 0;
        while i < self.rows.len() && self.rows[i].len() == full {
            let n = row_size(i) as f64;
            let (a, b) = (self.rows[i][0], self.rows[i][1]);
            let (mu1, mu2) = (a.total / n, b.total / n);
            let merged = Bucket {
                total: a.total + b.total,
                variance: a.variance + b.variance + n * 0.5 * (mu1 - mu2) * (mu1 - mu2),
            };
            self.rows[i].drain(..2);
            if i + 1 == self.rows.len() {
                self.rows.push(Vec::new());
            }
            self.rows[i + 1].push(merged);
            i += 1;
        }
    }

    /// Drops the oldest bucket (the first of the last row).
    fn drop_oldest(&mut self) {
        let last = self.rows.len().saturating_sub(1);
        let Some(oldest) = self.rows.get_mut(last).filter(|r| !r.is_empty()) else {
            return;
        };
        let b = oldest.remove(0);
        let size = row_size(last);
        let n = size as f64;
        let mu = b.total / n;
        self.width = self.width.saturating_sub(size);
        self.total -= b.total;
        let width = self.width as f64;
        let mu_window = self.total / width;
        self.variance -= b.variance + n * width * (mu - mu_window) * (mu - mu_window) / (n + width);
        while self.rows.len() > 1 && self.rows.last().is_some_and(Vec::is_empty) {
            self.rows.pop();
        }
    }

    /// One scan over the bucket boundaries, oldest first: whether some cut holds (and
    /// then the oldest bucket is dropped).
    fn cut_once(&mut self) -> bool {
        let mwl = self.config.min_window_length;
        let (mut n0, mut n1) = (0u64, self.width);
        let (mut u0, mut u1) = (0.0f64, self.total);
        for i in (0..self.rows.len()).rev() {
            let size = row_size(i);
            let len = self.rows[i].len();
            for k in 0..len {
                let t = self.rows[i][k].total;
                n0 += size;
                n1 = n1.saturating_sub(size);
                u0 += t;
                u1 -= t;
                if i == 0 && k + 1 == len {
                    return false;
                }
                let delta_mean = u0 / n0 as f64 - u1 / n1 as f64;
                if n1 >= mwl && n0 >= mwl && delta_mean.abs() > self.cut_threshold(n0, n1) {
                    self.drop_oldest();
                    return true;
                }
            }
        }
        false
    }
}

impl DriftDetector for Adwin {
    fn update(&mut self, x: f64) -> DriftState {
        if !x.is_finite() {
            return DriftState::Stable;
        }
        if self.state == DriftState::Drift && self.config.reset_on_drift {
            self.reset();
        }
        self.insert(x);
        self.tick = (self.tick + 1) % self.config.clock.max(1);
        let mut changed = false;
        if self.tick == 0 && self.width > self.config.grace_period {
            while self.cut_once() {
                changed = true;
            }
        }
        if changed {
            self.detections += 1;
        }
        self.state = if changed {
            DriftState::Drift
        } else {
            DriftState::Stable
        };
        self.state
    }

    fn state(&self) -> DriftState {
        self.state
    }

    fn reset(&mut self) {
        *self = Adwin::fresh(self.config.clone());
    }

    fn estimate(&self) -> f64 {
        if self.width == 0 {
            0.0
        } else {
            self.total / self.width as f64
        }
    }
}

/// The number of values in a bucket of row `i`: `2^i`.
fn row_size(i: usize) -> u64 {
    u32::try_from(i)
        .ok()
        .and_then(|i| 1u64.checked_shl(i))
        .unwrap_or(u64::MAX)
}
