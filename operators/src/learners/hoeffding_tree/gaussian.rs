//! The numeric attribute estimator: a weighted Gaussian (weight, mean, sum of squared
//! deviations by weighted Welford, smallest and largest value), and a precise error
//! function and normal CDF to split it at a threshold.

use serde::{Deserialize, Serialize};

/// A weighted Gaussian summary of the values one attribute took (for one class, or for
/// all classes together): total weight, mean, weighted sum of squared deviations (M2),
/// smallest and largest value.
///
/// An update with weight `w` gives the same state, up to rounding, as `w` updates with
/// weight 1. Non-finite values and non-positive weights are ignored. An update costs no
/// logarithm: naive Bayes keeps per leaf the sums it needs (see `naive_bayes`).
///
/// ```
/// use flowboost_operators::learners::hoeffding_tree::gaussian::GaussianEstimator;
/// let mut g = GaussianEstimator::new();
/// g.update(1.0, 1.0);
/// g.update(3.0, 3.0);
/// assert_eq!(g.weight(), 4.0);
/// assert!((g.mean() - 2.5).abs() < 1e-12);
/// assert!((g.variance() - 0.75).abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GaussianEstimator {
    weight: f64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl GaussianEstimator {
    /// An empty estimator (weight 0).
    pub const fn new() -> Self {
        GaussianEstimator {
            weight: 0.0,
            mean: 0.0,
            m2: 0.0,
            min: 0.0,
            max: 0.0,
        }
    }

    /// An estimator from its parts (the caller keeps them consistent).
    #[inline]
    pub(super) fn from_parts(weight: f64, mean: f64, m2: f64, min: f64, max: f64) -> Self {
        GaussianEstimator {
            weight,
            mean,
            m2,
            min,
            max,
        }
    }

    /// Adds value `x` with importance weight `w` (weighted Welford / West update).
    #[inline]
    pub fn update(&mut self, x: f64, w: f64) {
        if w > 0.0 && w.is_finite() && x.is_finite() {
            self.update_valid(x, w);
        }
    }

    /// [`update`](Self::update) for a finite `x` and a finite `w > 0` (the caller checked).
    #[inline]
    pub(super) fn update_valid(&mut self, x: f64, w: f64) {
        debug_assert!(w > 0.0 && w.is_finite() && x.is_finite());
        if self.weight <= 0.0 {
            *self = GaussianEstimator {
                weight: w,
                mean: x,
                m2: 0.0,
                min: x,
                max: x,
            };
            return;
        }
        let total = self.weight + w;
        let delta = x - self.mean;
        let step = delta * (w / total);
        self.mean += step;
        self.m2 += self.weight * delta * step;
        self.weight = total;
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
    }

    /// The total weight seen.
    #[inline]
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The weighted mean (0 when empty).
    #[inline]
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The weighted (population) variance `M2 / weight`, 0 when empty.
    ///
    /// Dividing by the weight rather than `weight - 1` keeps the estimate invariant under
    /// a rescaling of all importance weights, which boosters do freely.
    #[inline]
    pub fn variance(&self) -> f64 {
        if self.weight > 0.0 {
            (self.m2 / self.weight).max(0.0)
        } else {
            0.0
        }
    }

    /// `ln(variance)` (the log of the smallest positive double for a variance of 0).
    #[inline]
    pub fn ln_variance(&self) -> f64 {
        self.variance().max(f64::MIN_POSITIVE).ln()
    }

    /// The standard deviation, `sqrt(variance)`.
    #[inline]
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
    }

    /// The smallest value seen (0 when empty).
    #[inline]
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The largest value seen (0 when empty).
    #[inline]
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The estimated weight of the values `<= threshold`: all of it above the largest
    /// value seen, none below the smallest, `weight * Phi((threshold - mean) / sd)` in
    /// between (as MOA's Gaussian observer).
    #[inline]
    pub fn weight_at_or_below(&self, threshold: f64) -> f64 {
        if self.weight <= 0.0 || threshold < self.min {
            0.0
        } else if threshold >= self.max {
            self.weight
        } else {
            let sd = self.std_dev();
            if sd > 0.0 {
                self.weight * normal_cdf((threshold - self.mean) / sd)
            } else if threshold >= self.mean {
                self.weight
            } else {
                0.0
            }
        }
    }
}

/// `ln(2 pi) / 2`.
pub(super) const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// The log density at `x` of the normal distribution with the given mean and variance.
#[inline]
pub fn ln_normal_pdf(x: f64, mean: f64, variance: f64) -> f64 {
    ln_normal_pdf_with_ln_variance(x, mean, variance, variance.ln())
}

/// [`ln_normal_pdf`] with `ln variance` supplied by the caller.
#[inline]
pub(super) fn ln_normal_pdf_with_ln_variance(
    x: f64,
    mean: f64,
    variance: f64,
    ln_variance: f64,
) -> f64 {
    let d = x - mean;
    -HALF_LN_2PI - 0.5 * ln_variance - d * d / (2.0 * variance)
}

/// The standard normal CDF `Phi(z)`: absolute error below 1e-15 and relative error
/// below 1e-8 everywhere (tails included).
///
/// For `|z| < 7.07`, Hart's double-precision rational approximation (algorithm 5666, as
/// published by G. West, "Better approximations to cumulative normal functions", 2005):
/// about 20 flops and one `exp`, several times faster than [`erfc`], which it falls back
/// to in the far tails.
#[inline]
pub fn normal_cdf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    let a = z.abs();
    let lower = if a < 7.071_067_811_865_47 {
        let mut num = 3.526_249_659_989_11e-2 * a + 0.700_383_064_443_688;
        num = num * a + 6.373_962_203_531_65;
        num = num * a + 33.912_866_078_383;
        num = num * a + 112.079_291_497_871;
        num = num * a + 221.213_596_169_931;
        num = num * a + 220.206_867_912_376;
        let mut den = 8.838_834_764_831_84e-2 * a + 1.755_667_163_182_64;
        den = den * a + 16.064_177_579_207;
        den = den * a + 86.780_732_202_946_1;
        den = den * a + 296.564_248_779_674;
        den = den * a + 637.333_633_378_831;
        den = den * a + 793.826_512_519_948;
        den = den * a + 440.413_735_824_752;
        (-0.5 * a * a).exp() * num / den
    } else {
        0.5 * erfc(a * std::f64::consts::FRAC_1_SQRT_2)
    };
    if z > 0.0 { 1.0 - lower } else { lower }
}

/// Below this, `erf` by its power series; from it on, `erfc` by its continued fraction.
const SERIES_LIMIT: f64 = 2.5;

/// The error function, accurate to about 1e-15 (relative) everywhere.
///
/// A power series with positive terms for `|x| < 2.5`, `1 - erfc(|x|)` by a continued
/// fraction beyond.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let a = x.abs();
    let r = if a < SERIES_LIMIT {
        erf_series(a)
    } else {
        1.0 - erfc_continued_fraction(a)
    };
    if x < 0.0 { -r } else { r }
}

/// The complementary error function `1 - erf(x)`, accurate to about 1e-13 (relative)
/// also deep in the upper tail.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x < 0.0 {
        2.0 - erfc(-x)
    } else if x < SERIES_LIMIT {
        1.0 - erf_series(x)
    } else if x > 27.3 {
        0.0
    } else {
        erfc_continued_fraction(x)
    }
}

/// `erf(x)` for `0 <= x < 2.5`:
/// `2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1))` (no cancellation).
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    // At most ~40 terms on [0, 2.5); the cap only guards against surprises.
    for _ in 0..200 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
        if term <= sum * 1e-17 {
            break;
        }
    }
    std::f64::consts::FRAC_2_SQRT_PI * (-x2).exp() * sum
}

/// `erfc(x)` for `x >= 2.5` by the continued fraction
/// `exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))`
/// (modified Lentz; at most ~40 steps on this range).
fn erfc_continued_fraction(x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for n in 1..500 {
        let a = 0.5 * n as f64;
        d = x + a * d;
        if d.abs() < TINY {
            d = TINY;
        }
        d = 1.0 / d;
        c = x + a / c;
        if c.abs() < TINY {
            c = TINY;
        }
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
}
