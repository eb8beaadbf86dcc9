//! Split criteria: entropy and information gain (log2, importance weights throughout),
//! the Hoeffding bound, and the evaluation of binary threshold splits on a numeric
//! attribute's Gaussian estimators.

use super::gaussian::GaussianEstimator;

/// A split must send at least this fraction of the (known) weight down each of at least
/// two branches (MOA's `minBranchFrac`); otherwise it is not a candidate.
pub(super) const MIN_BRANCH_FRACTION: f64 = 0.01;

/// `w log2 w`, with `0 log 0 = 0` (and 0 for the tiny negative values rounding can make).
#[inline]
pub(super) fn xlog2x(w: f64) -> f64 {
    if w > 0.0 { w * w.log2() } else { 0.0 }
}

/// The entropy in bits of the distribution proportional to the non-negative weights
/// `dist` (0 when they sum to 0).
///
/// ```
/// use flowboost_operators::learners::hoeffding_tree::split::entropy;
/// assert!((entropy(&[2.0, 2.0]) - 1.0).abs() < 1e-12);
/// assert_eq!(entropy(&[5.0, 0.0]), 0.0);
/// ```
pub fn entropy(dist: &[f64]) -> f64 {
    let (total, sum) = dist.iter().fold((0.0, 0.0), |(t, s), &w| {
        if w > 0.0 {
            (t + w, s + xlog2x(w))
        } else {
            (t, s)
        }
    });
    if total > 0.0 {
        (xlog2x(total) - sum) / total
    } else {
        0.0
    }
}

/// The information gain in bits of splitting the class weights `pre` into the branches
/// `post`: `H(pre) - sum_b (W_b / W) H(post_b)`, with `W` the total weight of `post`
/// (0 when `post` is empty or weightless).
///
/// ```
/// use flowboost_operators::learners::hoeffding_tree::split::information_gain;
/// // A perfect split of a 50/50 distribution gains one bit.
/// let g = information_gain(&[3.0, 3.0], &[&[3.0, 0.0], &[0.0, 3.0]]);
/// assert!((g - 1.0).abs() < 1e-12);
/// ```
pub fn information_gain(pre: &[f64], post: &[&[f64]]) -> f64 {
    let total: f64 = post
        .iter()
        .flat_map(|b| b.iter())
        .filter(|&&w| w > 0.0)
        .sum();
    if total <= 0.0 {
        return 0.0;
    }
    let after: f64 = post
        .iter()
        .map(|b| {
            let wb: f64 = b.iter().filter(|&&w| w > 0.0).sum();
            wb * entropy(b)
        })
        .sum();
    entropy(pre) - after / total
}

/// The Hoeffding bound `sqrt(R^2 ln(1/delta) / (2 n))`: with probability `1 - delta`,
/// the true mean of a variable with range `R` is within it of the mean of `n`
/// observations (`n` is a weight here; infinite when `n <= 0`).
///
/// ```
/// use flowboost_operators::learners::hoeffding_tree::split::hoeffding_bound;
/// let eps = hoeffding_bound(1.0, 1e-7, 200.0);
/// assert!((eps - (16.1181_f64 / 400.0).sqrt()).abs() < 1e-4);
/// ```
pub fn hoeffding_bound(range: f64, confidence: f64, n: f64) -> f64 {
    if n <= 0.0 {
        return f64::INFINITY;
    }
    (range * range * (1.0 / confidence).ln() / (2.0 * n)).sqrt()
}

/// The range of the information gain for `k` classes, `log2(max(k, 2))`.
pub(super) fn gain_range(k: usize) -> f64 {
    (k.max(2) as f64).log2()
}

/// The best binary split `x <= t` of a numeric attribute, from its estimators laid out
/// as `[all classes, class 0, .., class k-1]`: `(merit, t)` over `split_points`
/// thresholds evenly spaced strictly between the smallest and largest value seen, or
/// `None` when there is no valid candidate.
///
/// The merit is the information gain on the examples where the attribute was known,
/// times the fraction of the leaf's weight they carry (`leaf_weight`), as in C4.5.
/// `scratch` is working space (resized to `4 * split_points`).
pub(super) fn best_numeric_split(
    stats: &[GaussianEstimator],
    split_points: usize,
    leaf_weight: f64,
    scratch: &mut Vec<f64>,
) -> Option<(f64, f64)> {
    let (pooled, classes) = stats.split_first()?;
    if pooled.weight() <= 0.0 || pooled.max() <= pooled.min() || split_points == 0 {
        return None;
    }
    let (lo, hi) = (pooled.min(), pooled.max());
    let step = (hi - lo) / (split_points as f64 + 1.0);
    let threshold = |i: usize| lo + step * (i + 1) as f64;
    // Per threshold: left weight, right weight, sum of w log2 w left, and right.
    scratch.clear();
    scratch.resize(4 * split_points, 0.0);
    let (mut known, mut pre_sum) = (0.0, 0.0);
    // Class by class, so that a class entirely on one side of a threshold (the common
    // case with many classes) costs an addition, not a CDF and two logarithms.
    for g in classes.iter().filter(|g| g.weight() > 0.0) {
        let w = g.weight();
        let wlw = xlog2x(w);
        known += w;
        pre_sum += wlw;
        for (i, acc) in scratch.chunks_exact_mut(4).enumerate() {
            let t = threshold(i);
            if t < g.min() {
                acc[1] += w;
                acc[3] += wlw;
            } else if t >= g.max() {
                acc[0] += w;
                acc[2] += wlw;
            } else {
                let l = g.weight_at_or_below(t);
                let r = w - l;
                acc[0] += l;
                acc[1] += r;
                acc[2] += xlog2x(l);
                acc[3] += xlog2x(r);
            }
        }
    }
    if known <= 0.0 || leaf_weight <= 0.0 {
        return None;
    }
    let fraction = (known / leaf_weight).min(1.0);
    let before = xlog2x(known) - pre_sum; // known * H(pre)
    let min_branch = MIN_BRANCH_FRACTION * known;
    let mut best: Option<(f64, f64)> = None;
    for (i, acc) in scratch.chunks_exact(4).enumerate() {
        let (left, right) = (acc[0], acc[1]);
        if left < min_branch || right < min_branch {
            continue;
        }
        let after = xlog2x(left) - acc[2] + xlog2x(right) - acc[3];
        let merit = fraction * (before - after) / known;
        if best.is_none_or(|(m, _)| merit > m) {
            best = Some((merit, threshold(i)));
        }
    }
    best
}

/// The class weights a numeric split at `threshold` sends left (`<= threshold`) and
/// right, from the per-class estimators.
pub(super) fn numeric_branch_dists(classes: &[GaussianEstimator], threshold: f64) -> [Vec<f64>; 2] {
    let left: Vec<f64> = classes
        .iter()
        .map(|g| g.weight_at_or_below(threshold))
        .collect();
    let right = classes
        .iter()
        .zip(&left)
        .map(|(g, l)| (g.weight() - l).max(0.0))
        .collect();
    [left, right]
}
