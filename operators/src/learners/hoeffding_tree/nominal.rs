//! The nominal attribute estimator: weighted counts per (value, class), laid out flat per
//! attribute as `[class totals (k)] [value 0 (k)] .. [value V-1 (k)]`, and the multiway
//! split on it.

use super::split::{MIN_BRANCH_FRACTION, xlog2x};

/// The number of counts one nominal attribute with `values` values needs for `k` classes.
#[inline]
pub(super) fn slots(values: usize, k: usize) -> usize {
    (values + 1) * k
}

/// The value index of feature value `x` (an integral value in `0..values`), or `None`
/// for a missing, non-integral or out-of-range value.
#[inline]
pub(super) fn value_index(x: f64, values: usize) -> Option<usize> {
    // In range, adding 1.5 2^52 rounds `x` to an integer, which the low bits of the sum
    // hold: `x` is integral when the rounding changed nothing (no saturating conversion,
    // no call to `trunc`).
    const ROUND: f64 = 6_755_399_441_055_744.0;
    if !(x >= 0.0 && x < values as f64) {
        return None;
    }
    let r = x + ROUND;
    (r - ROUND == x).then_some((r.to_bits() & 0xffff_ffff) as usize)
}

/// Adds weight `w` for value `v` and class `c` to one attribute's counts.
#[inline]
pub(super) fn update(counts: &mut [f64], k: usize, v: usize, c: usize, w: f64) {
    counts[c] += w;
    counts[(v + 1) * k + c] += w;
}

/// The merit of the multiway split on this attribute: the information gain on the
/// examples where it was known times the fraction of the leaf's weight they carry;
/// `None` unless at least two branches get [`MIN_BRANCH_FRACTION`] of the weight.
pub(super) fn merit(counts: &[f64], k: usize, values: usize, leaf_weight: f64) -> Option<f64> {
    let totals = &counts[..k];
    let (known, pre_sum) = totals
        .iter()
        .fold((0.0, 0.0), |(t, s), &w| (t + w, s + xlog2x(w)));
    if known <= 0.0 || leaf_weight <= 0.0 {
        return None;
    }
    let min_branch = MIN_BRANCH_FRACTION * known;
    let mut after = 0.0;
    let mut big_branches = 0;
    for v in 0..values {
        let branch = &counts[(v + 1) * k..(v + 2) * k];
        let (wb, sb) = branch
            .iter()
            .fold((0.0, 0.0), |(t, s), &w| (t + w, s + xlog2x(w)));
        if wb >= min_branch && wb > 0.0 {
            big_branches += 1;
        }
        after += xlog2x(wb) - sb;
    }
    if big_branches < 2 {
        return None;
    }
    let before = xlog2x(known) - pre_sum;
    Some((known / leaf_weight).min(1.0) * (before - after) / known)
}

/// The class weights of each branch (one per value) of the split on this attribute.
pub(super) fn branch_dists(counts: &[f64], k: usize, values: usize) -> Vec<Vec<f64>> {
    (0..values)
        .map(|v| counts[(v + 1) * k..(v + 2) * k].to_vec())
        .collect()
}
