//! Naive Bayes at a leaf: the class prior times the per-attribute likelihoods, in log
//! space, normalized by log-sum-exp.

use super::gaussian::{ln_normal_pdf, ln_normal_pdf_with_ln_variance};
use super::node::{AttrSlot, Layout, LeafNode};
use super::nominal;
use crate::data::Features;

/// A class's variance on an attribute is at least this fraction of the attribute's
/// variance over all classes at the leaf (so a class seen a couple of times, or always
/// with one value, does not get a near-zero variance and a density spike).
pub(super) const VARIANCE_FLOOR_FRACTION: f64 = 1e-2;
/// An absolute variance floor, for attributes constant at the leaf.
pub(super) const MIN_VARIANCE: f64 = 1e-12;

/// Writes the unnormalized naive Bayes log scores of the classes at `leaf` for `x` into
/// `out`: `ln prior + sum ln likelihood` (`-inf` for a class with no weight at the leaf).
///
/// Numeric attributes: the class's Gaussian with the variance floor; a class not yet
/// seen with this attribute known gets the attribute's Gaussian over all classes.
/// Nominal attributes: Laplace-smoothed frequencies. Missing values are skipped, and so
/// are nominal attributes already split on above the leaf.
pub(super) fn log_scores(layout: &Layout, leaf: &LeafNode, x: &Features, out: &mut [f64]) {
    let k = layout.k;
    let total = leaf.total();
    for (o, &w) in out.iter_mut().zip(&leaf.dist) {
        *o = if w > 0.0 && total > 0.0 {
            (w / total).ln()
        } else {
            f64::NEG_INFINITY
        };
    }
    if leaf.seen <= 0.0 {
        return;
    }
    layout.for_each_value(x, |i, value| {
        if !value.is_finite() {
            return;
        }
        match layout.slots[i] {
            AttrSlot::Numeric { offset } => {
                let pooled = &leaf.gaussians[offset];
                if pooled.weight() <= 0.0 {
                    return;
                }
                let pooled_var = pooled.variance();
                let floor = (VARIANCE_FLOOR_FRACTION * pooled_var).max(MIN_VARIANCE);
                let ln_floor = floor.ln();
                let pooled_ln = ln_normal_pdf(value, pooled.mean(), pooled_var.max(floor));
                let classes = &leaf.gaussians[offset + 1..offset + 1 + k];
                for (o, g) in out.iter_mut().zip(classes) {
                    if *o == f64::NEG_INFINITY {
                        continue;
                    }
                    *o += if g.weight() > 0.0 {
                        // ln max(var, floor) = max(ln var, ln floor): no logarithm here.
                        ln_normal_pdf_with_ln_variance(
                            value,
                            g.mean(),
                            g.variance().max(floor),
                            g.ln_variance().max(ln_floor),
                        )
                    } else {
                        pooled_ln
                    };
                }
            }
            AttrSlot::Nominal { offset, values } => {
                if leaf.is_used(i) {
                    return;
                }
                let Some(v) = nominal::value_index(value, values) else {
                    return;
                };
                let counts = &leaf.counts[offset..offset + nominal::slots(values, k)];
                for (c, o) in out.iter_mut().enumerate() {
                    if *o != f64::NEG_INFINITY {
                        *o += nominal::ln_likelihood(counts, k, values, v, c);
                    }
                }
            }
        }
    });
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
        *o = if o.is_nan() { 0.0 } else { (*o - max).exp() };
        sum += *o;
    }
    if !(sum > 0.0 && sum.is_finite()) {
        return false;
    }
    out.iter_mut().for_each(|o| *o /= sum);
    true
}
