//! Cheap, guaranteed bounds on the merits of a leaf's split candidates, so that a split
//! attempt whose Hoeffding test cannot pass is told without computing any merit exactly.
//!
//! A numeric attribute's merit at a threshold is (see [`split::best_numeric_split`])
//! `fraction (h2(L/W) - sum_c (w_c/W) h2(p_c))`: `W` the known weight, `L` the weight at or
//! below the threshold, `p_c` the fraction of class `c`'s weight at or below it (its
//! Gaussian's CDF at the standardized threshold `z_c`), `h2` the binary entropy in bits.
//! Here `Phi(z)` and `h2(Phi(z))` come from a table (step 1/256 on `|z| <= 8.5`, linear
//! interpolation) instead of an exponential, a division and two logarithms per (class,
//! threshold): within [`EPS_P`] and [`EPS_G`] of the exact functions (the tests measure ten
//! times less). `|h2(x) - h2(y)| <= h2(|x - y|)` turns that into a bound on the merit, widened
//! by a margin for the rounding of the exact computation. A threshold counts as a candidate
//! if it may be one (bounds from above) or surely is (bounds from below).
//!
//! The split attempt then fails for sure when the largest upper bound minus the second
//! largest lower bound (or 0: the null split) is at most the Hoeffding bound: the exact
//! best merit minus the exact second best cannot be larger. Only the attempts this does not
//! settle compute the merits exactly, so every split is the one the exact computation makes.

use super::gaussian::{GaussianEstimator, normal_cdf};
use super::split::MIN_BRANCH_FRACTION;
use std::sync::OnceLock;

/// `1.5 2^52`: adding it to a double of magnitude below `2^51` rounds it to an integer,
/// which the low bits of the sum hold.
const ROUND_TO_INT: f64 = 6_755_399_441_055_744.0;
/// The grid step of the tables.
const STEP: f64 = 1.0 / 256.0;
/// The tables cover `|z|` in `[0, Z_MAX]`; beyond, `Phi(-|z|)` (below `1e-17`) and
/// `h2(Phi(z))` (below `1e-15`) count as 0.
const Z_MAX: f64 = 8.5;
/// A bound on the error of the interpolated `Phi`.
pub(super) const EPS_P: f64 = 5e-6;
/// A bound on the error of the interpolated `h2(Phi)` (bits).
pub(super) const EPS_G: f64 = 2e-5;
/// A margin for the rounding of the exact merit (bits): its terms are sums of at most a few
/// thousand products, each rounded to about `1e-16` of their magnitude.
const ROUNDING: f64 = 1e-9;

/// Per grid point `a = i STEP`: `Phi(-a)` and `h2(Phi(-a))`.
fn table() -> &'static [[f64; 2]] {
    static TABLE: OnceLock<Vec<[f64; 2]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let n = (Z_MAX / STEP).round() as usize + 2;
        (0..n)
            .map(|i| {
                let p = normal_cdf(-(i as f64 * STEP));
                [p, h2(p)]
            })
            .collect()
    })
}

/// The binary entropy in bits of `p` in `[0, 1]`.
#[inline]
pub(super) fn h2(p: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        return 0.0;
    }
    -(p * p.ln() + (1.0 - p) * (-p).ln_1p()) * std::f64::consts::LOG2_E
}

/// `(Phi(z), h2(Phi(z)))` interpolated (within [`EPS_P`] and [`EPS_G`]).
#[inline(always)]
fn phi_h2(table: &[[f64; 2]], z: f64) -> (f64, f64) {
    let a = z.abs();
    let (lower, g) = if a < Z_MAX {
        let x = a * (1.0 / STEP);
        // floor(x) for 0 <= x < 2^31 without a saturating conversion: x - 1/2 rounded to
        // an integer by adding 1.5 2^52, read from the low bits (a tie may round down to
        // x - 1: then t = 1, fine).
        let i = ((x - 0.5 + ROUND_TO_INT).to_bits() & 0xffff_ffff) as usize;
        let t = x - i as f64;
        let (p0, p1) = (table[i], table[i + 1]);
        (p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1]))
    } else {
        (0.0, 0.0)
    };
    (if z > 0.0 { 1.0 - lower } else { lower }, g)
}

/// Working space of [`merit_bounds`].
#[derive(Clone, Debug, Default)]
pub(super) struct BoundScratch {
    /// Per threshold: the weight at or below, and `sum w_c h2(p_c)`.
    acc: Vec<[f64; 2]>,
    /// The thresholds.
    thresholds: Vec<f64>,
}

/// Bounds on the merit of the best split of a numeric attribute (see
/// [`split::best_numeric_split`], same arguments): `None` when it surely has no candidate;
/// else `(lower, upper)`, `lower = -inf` when it may have none.
pub(super) fn merit_bounds(
    stats: &[GaussianEstimator],
    split_points: usize,
    leaf_weight: f64,
    scratch: &mut BoundScratch,
) -> Option<(f64, f64)> {
    let (pooled, classes) = stats.split_first()?;
    if pooled.weight() <= 0.0 || pooled.max() <= pooled.min() || split_points == 0 {
        return None;
    }
    let (lo, hi) = (pooled.min(), pooled.max());
    let step = (hi - lo) / (split_points as f64 + 1.0);
    let table = table();
    let BoundScratch { acc, thresholds } = scratch;
    thresholds.clear();
    thresholds.extend((0..split_points).map(|i| lo + step * (i + 1) as f64));
    acc.clear();
    acc.resize(split_points, [0.0; 2]);
    let mut known = 0.0;
    for g in classes.iter().filter(|g| g.weight() > 0.0) {
        let w = g.weight();
        known += w;
        let sd = g.std_dev();
        let (min, max, mean) = (g.min(), g.max(), g.mean());
        // The thresholds ascend: those below `min` (all the class's weight above), then
        // those inside, then those at or above `max` (all of it at or below). Counted
        // without a branch.
        let below = thresholds
            .iter()
            .map(|&t| usize::from(t < min))
            .sum::<usize>();
        let under = thresholds
            .iter()
            .map(|&t| usize::from(t < max))
            .sum::<usize>();
        for a in &mut acc[under.max(below)..] {
            a[0] += w;
        }
        if below >= under {
            continue;
        }
        let inside = &thresholds[below..under];
        let acc = &mut acc[below..under];
        if sd > 0.0 {
            // (Multiplying by 1/sd instead of dividing moves z by an ulp: far inside
            // EPS_P.)
            let inv_sd = 1.0 / sd;
            for (a, &t) in acc.iter_mut().zip(inside) {
                let (p, h) = phi_h2(table, (t - mean) * inv_sd);
                a[0] += w * p;
                a[1] += w * h;
            }
        } else {
            for (a, &t) in acc.iter_mut().zip(inside) {
                if t >= mean {
                    a[0] += w;
                }
            }
        }
    }
    if known <= 0.0 || leaf_weight <= 0.0 {
        return None;
    }
    let fraction = (known / leaf_weight).min(1.0);
    let min_branch = MIN_BRANCH_FRACTION * known;
    // The error of the interpolated weights at or below (plus their rounding).
    let slack = known * (EPS_P + 1e-12);
    let delta = fraction * (h2((slack / known).min(0.5)) + EPS_G + ROUNDING);
    let (mut lower, mut upper): (f64, Option<f64>) = (f64::NEG_INFINITY, None);
    for a in acc.iter() {
        let (left, right) = (a[0], known - a[0]);
        if left + slack < min_branch || right + slack < min_branch {
            continue;
        }
        let merit = fraction * (h2((left / known).clamp(0.0, 1.0)) - a[1] / known);
        upper = Some(upper.map_or(merit + delta, |u: f64| u.max(merit + delta)));
        if left - slack >= min_branch && right - slack >= min_branch {
            lower = lower.max(merit - delta);
        }
    }
    upper.map(|u| (lower, u))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learners::hoeffding_tree::split::best_numeric_split;
    use crate::rng::seeded;
    use rand::RngExt;

    #[test]
    fn interpolated_functions_are_within_their_bounds() {
        let table = table();
        let (mut worst_p, mut worst_g) = (0.0_f64, 0.0_f64);
        let mut z = -9.0;
        while z <= 9.0 {
            let (p, g) = phi_h2(table, z);
            let exact = normal_cdf(z);
            worst_p = worst_p.max((p - exact).abs());
            worst_g = worst_g.max((g - h2(exact)).abs());
            z += 1.0 / 4096.0 + 1e-7;
        }
        println!("worst errors: Phi {worst_p:e}, h2(Phi) {worst_g:e}");
        assert!(worst_p < EPS_P / 10.0, "Phi: {worst_p:e}");
        assert!(worst_g < EPS_G / 10.0, "h2(Phi): {worst_g:e}");
    }

    #[test]
    fn the_exact_merit_lies_within_the_bounds() {
        let mut rng = seeded(3, 0);
        let mut scratch = BoundScratch::default();
        let mut exact_scratch = Vec::new();
        let mut checked = 0;
        for round in 0..3000 {
            let classes = 1 + round % 12;
            let mut stats = vec![GaussianEstimator::new(); classes + 1];
            for _ in 0..rng.random_range(2..200) {
                let c = rng.random_range(0..classes);
                let x = if rng.random_range(0..4) == 0 {
                    0.0
                } else {
                    rng.random_range(-1.0..1.0) + c as f64 * 0.3
                };
                let w = rng.random_range(0.1..3.0);
                stats[0].update(x, w);
                stats[1 + c].update(x, w);
            }
            let leaf = stats[0].weight() * rng.random_range(1.0..1.5);
            let exact = best_numeric_split(&stats, 10, leaf, &mut exact_scratch);
            let bounds = merit_bounds(&stats, 10, leaf, &mut scratch);
            match (exact, bounds) {
                (None, _) => {}
                (Some(_), None) => panic!("round {round}: a candidate the bounds missed"),
                (Some((m, _)), Some((lo, hi))) => {
                    assert!(lo <= m && m <= hi, "round {round}: {lo} <= {m} <= {hi}");
                    assert!(hi - lo < 1e-3 || lo == f64::NEG_INFINITY, "{lo} {hi}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 2000, "{checked}");
    }
}
