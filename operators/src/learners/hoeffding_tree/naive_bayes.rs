//! Naive Bayes at a leaf: the class prior times the per-attribute likelihoods, in log
//! space, normalized by log-sum-exp.

use super::gaussian::{HALF_LN_2PI, ln_normal_pdf_with_ln_variance};
use super::node::{AttrSlot, Layout, LeafNode};
use super::nominal;
use crate::data::Features;

/// The log likelihood of `value` under a class's Gaussian `(mean, var)`: its log density
/// when the variance is positive; a zero variance (every value the class saw at the leaf
/// was the same) is a point mass, as in MOA: `0` at the mean, `-inf` elsewhere. No
/// variance floor: a floor turns a rare 0/1 feature a class never had into a density
/// spike at 0 that lets rare classes win (see `docs/notes/hoeffding-tree-vs-moa.md`).
/// `ln_var` gives `ln var` (memoized by the caller) and is called only when needed.
#[inline]
fn ln_likelihood(value: f64, mean: f64, var: f64, ln_var: impl FnOnce(f64) -> f64) -> f64 {
    if var > 0.0 {
        ln_normal_pdf_with_ln_variance(value, mean, var, ln_var(var))
    } else if value == mean {
        0.0
    } else {
        f64::NEG_INFINITY
    }
}

/// Writes the unnormalized naive Bayes log scores of the classes at `leaf` for `x` into
/// `out`: `ln prior + sum ln likelihood` (`-inf` for a class with no weight at the leaf).
///
/// Numeric attributes: the class's Gaussian (a point mass when its variance is zero, see
/// [`ln_likelihood`]); a class not yet seen with this attribute known gets the
/// attribute's Gaussian over all classes.
/// Nominal attributes: Laplace-smoothed frequencies. Missing values are skipped, and so
/// are nominal attributes already split on above the leaf.
///
/// The logarithms of the variances are memoized per estimator
/// at the leaf (keyed by their argument): between two examples at a leaf, only those of
/// the class learned in between have changed.
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
    let lns = &leaf.gaussian_lns;
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
                // Computed on first use only (most examples do not need it).
                let mut pooled_ln = f64::NAN;
                let classes = &leaf.gaussians[offset + 1..offset + 1 + k];
                for (c, (o, g)) in out.iter_mut().zip(classes).enumerate() {
                    if *o == f64::NEG_INFINITY {
                        continue;
                    }
                    *o += if g.weight() > 0.0 {
                        ln_likelihood(value, g.mean(), g.variance(), |v| lns.ln(offset + 1 + c, v))
                    } else {
                        if pooled_ln.is_nan() {
                            pooled_ln = ln_likelihood(value, pooled.mean(), pooled_var, |v| {
                                lns.ln(offset, v)
                            });
                        }
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
                        let q = nominal::likelihood(counts, k, values, v, c);
                        *o += q.ln();
                    }
                }
            }
        }
    });
}

/// What [`bounded_argmax`] accumulates for one class.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClassSum {
    /// Whether the class has weight at the leaf (its score is finite, not `-inf`).
    live: bool,
    /// The terms without a logarithm: `-ln(2 pi)/2 - d^2 / (2 var)` per numeric attribute.
    linear: f64,
    /// The product of the (positive) variances: `-1/2` times its logarithm is the rest of
    /// the numeric terms.
    variances: LogProduct,
    /// The product of the prior and the nominal likelihoods.
    probabilities: LogProduct,
}

impl ClassSum {
    const EMPTY: ClassSum = ClassSum {
        live: false,
        linear: 0.0,
        variances: LogProduct::ONE,
        probabilities: LogProduct::ONE,
    };
}

/// A product of positive factors as `mantissa * 2^exp`, so that many factors cost one
/// logarithm at the end. The rescaling by powers of two is exact.
#[derive(Clone, Copy, Debug)]
struct LogProduct {
    mantissa: f64,
    exp: i64,
}

/// The factors [`LogProduct`] takes: in `[2^-100, 2^100]`, so `|ln factor| < 70`.
const MIN_FACTOR: f64 = 7.888_609_052_210_118e-31; // 2^-100
const MAX_FACTOR: f64 = 1.267_650_600_228_229_4e30; // 2^100
/// A bound on `|ln factor|` for the factors [`LogProduct`] takes.
const MAX_LN_FACTOR: f64 = 70.0;
/// The mantissa is rescaled to `[1, 2)` once it leaves `[2^-400, 2^400]`.
const RESCALE_LOW: f64 = 3.872_591_914_849_318e-121; // 2^-400
const RESCALE_HIGH: f64 = 2.582_249_878_086_908_6e120; // 2^400

impl LogProduct {
    const ONE: LogProduct = LogProduct {
        mantissa: 1.0,
        exp: 0,
    };

    /// Multiplies by `v`; `false` (and no change) if `v` is not in
    /// `[MIN_FACTOR, MAX_FACTOR]`.
    #[inline]
    fn mul(&mut self, v: f64) -> bool {
        if !(MIN_FACTOR..=MAX_FACTOR).contains(&v) {
            return false;
        }
        self.mantissa *= v;
        if !(RESCALE_LOW..=RESCALE_HIGH).contains(&self.mantissa) {
            let bits = self.mantissa.to_bits();
            self.exp += ((bits >> 52) & 0x7ff) as i64 - 1023;
            self.mantissa = f64::from_bits((bits & !(0x7ff << 52)) | (1023 << 52));
        }
        true
    }

    /// The logarithm of the product.
    #[inline]
    fn ln(&self) -> f64 {
        self.mantissa.ln() + self.exp as f64 * std::f64::consts::LN_2
    }
}

/// The class naive Bayes ranks first at `leaf` for `x`, as adaptive leaves score it
/// before learning (the first best class of [`log_scores`], `Some(None)` if every score
/// is `-inf`), found without computing the scores exactly: `None` when the scores are
/// too close to tell, and then only [`log_scores`] can.
///
/// Each class's score is approximated with one logarithm per product of factors instead
/// of one per attribute. Both it and the score [`log_scores`] computes are within
/// `(3 n + 20) u (A + 1024)` of the exact real number (`u = 2^-53`, `n` terms, `A` the
/// sum of the terms' magnitudes; assuming only that `ln` is accurate to a few ulps), and
/// the bound used is over 2700 times that. A class is returned only if its approximate
/// score beats every other by more than both bounds, so it is exactly the class
/// [`log_scores`] ranks first. Anything unusual (a non-finite term, a factor outside
/// `[2^-100, 2^100]`) also gives `None`.
pub(super) fn bounded_argmax(
    layout: &Layout,
    leaf: &LeafNode,
    x: &Features,
    sums: &mut Vec<ClassSum>,
) -> Option<Option<usize>> {
    let k = layout.k;
    sums.clear();
    sums.resize(k, ClassSum::EMPTY);
    let total = leaf.total();
    let mut ok = true;
    for (s, &w) in sums.iter_mut().zip(&leaf.dist) {
        if w > 0.0 && total > 0.0 {
            s.live = true;
            ok &= s.probabilities.mul(w / total);
        }
    }
    // The number of terms of each score (the prior included).
    let mut terms = 1usize;
    if leaf.seen > 0.0 {
        layout.for_each_value(x, |i, value| {
            if !ok || !value.is_finite() {
                return;
            }
            match layout.slots[i] {
                AttrSlot::Numeric { offset } => {
                    let pooled = &leaf.gaussians[offset];
                    if pooled.weight() <= 0.0 {
                        return;
                    }
                    terms += 1;
                    let pooled_var = pooled.variance();
                    let classes = &leaf.gaussians[offset + 1..offset + 1 + k];
                    for (s, g) in sums.iter_mut().zip(classes) {
                        if !s.live {
                            continue;
                        }
                        let (mean, var) = if g.weight() > 0.0 {
                            (g.mean(), g.variance())
                        } else {
                            (pooled.mean(), pooled_var)
                        };
                        if var > 0.0 {
                            let d = value - mean;
                            let quad = d * d / (2.0 * var);
                            s.linear += -HALF_LN_2PI - quad;
                            ok &= quad.is_finite() && s.variances.mul(var);
                        } else if value != mean {
                            // A point mass elsewhere: the score is -inf (see ln_likelihood).
                            s.live = false;
                        }
                    }
                }
                AttrSlot::Nominal { offset, values } => {
                    if leaf.is_used(i) {
                        return;
                    }
                    let Some(v) = nominal::value_index(value, values) else {
                        return;
                    };
                    terms += 1;
                    let counts = &leaf.counts[offset..offset + nominal::slots(values, k)];
                    for (c, s) in sums.iter_mut().enumerate() {
                        if s.live {
                            ok &= s
                                .probabilities
                                .mul(nominal::likelihood(counts, k, values, v, c));
                        }
                    }
                }
            }
        });
    }
    if !ok {
        return None;
    }
    // (score, bound) of the live classes; the first best.
    let scale = (terms as f64 + 64.0) * BOUND_UNIT;
    let score = |s: &ClassSum| {
        let value = s.linear + s.probabilities.ln() - 0.5 * s.variances.ln();
        let magnitude = -s.linear + MAX_LN_FACTOR * terms as f64;
        (value, (magnitude + 1024.0) * scale)
    };
    let mut best: Option<(usize, f64, f64)> = None;
    for (c, s) in sums.iter().enumerate() {
        if !s.live {
            continue;
        }
        let (value, bound) = score(s);
        if !(value.is_finite() && bound.is_finite()) {
            return None;
        }
        if best.is_none_or(|(_, b, _)| value > b) {
            best = Some((c, value, bound));
        }
    }
    let Some((b, best_value, best_bound)) = best else {
        return Some(None);
    };
    for (c, s) in sums.iter().enumerate() {
        if c != b && s.live {
            let (value, bound) = score(s);
            if best_value - best_bound <= value + bound {
                return None;
            }
        }
    }
    Some(Some(b))
}

/// `2^-40`: the bound of [`bounded_argmax`] is `(n + 64) 2^-40 (A + 1024)`, over 2700
/// times `(3 n + 20) 2^-53 (A + 1024)`.
const BOUND_UNIT: f64 = 9.094_947_017_729_282e-13;

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

#[cfg(test)]
mod tests {
    use super::super::argmax;
    use super::*;
    use crate::data::{Attribute, Schema, Task};
    use crate::rng::seeded;
    use rand::RngExt;

    /// Two numeric attributes (one missing now and then) and two nominal ones, 3 classes.
    fn layout() -> Layout {
        let values = |n: usize| (0..n).map(|v| v.to_string()).collect::<Vec<_>>();
        let schema = Schema {
            attributes: vec![
                Attribute::numeric("a"),
                Attribute::nominal("b", values(3)),
                Attribute::numeric("c"),
                Attribute::nominal("d", values(5)),
            ],
            labels: vec!["x".into(), "y".into(), "z".into()],
            task: Task::Multiclass,
        };
        Layout::new(&schema, (0..4).collect())
    }

    fn example(rng: &mut crate::rng::Rng) -> Features {
        let a = if rng.random_range(0..10) == 0 {
            f64::NAN
        } else {
            rng.random_range(-2.0..2.0)
        };
        Features::Dense(vec![
            a,
            f64::from(rng.random_range(0..3u32)),
            rng.random_range(0.0..1.0),
            f64::from(rng.random_range(0..5u32)),
        ])
    }

    fn exact_best(layout: &Layout, leaf: &LeafNode, x: &Features) -> Option<usize> {
        let mut scores = vec![0.0; layout.k];
        log_scores(layout, leaf, x, &mut scores);
        argmax(&scores).filter(|&b| scores[b] > f64::NEG_INFINITY)
    }

    #[test]
    fn bounded_argmax_agrees_with_the_exact_scores() {
        let layout = layout();
        let mut rng = seeded(5, 0);
        let mut sums = vec![];
        let (mut told, mut untold) = (0, 0);
        for round in 0..20 {
            let mut leaf = LeafNode::new(&layout, vec![0.0; 3], 0, vec![]);
            // No weight at all: every score is -inf.
            let x = example(&mut rng);
            assert_eq!(bounded_argmax(&layout, &leaf, &x, &mut sums), Some(None));
            assert_eq!(exact_best(&layout, &leaf, &x), None);
            for n in 0..300 {
                let x = example(&mut rng);
                // Classes 0 and 1 get the same examples in the even rounds: their scores
                // tie exactly, and only the exact computation may break the tie.
                let c = if round % 2 == 0 { 1 + n % 3 / 2 } else { n % 3 };
                let w = rng.random_range(0.1..2.0);
                leaf.update(&layout, &x, c, w);
                if round % 2 == 0 && c == 1 {
                    leaf.update(&layout, &x, 0, w);
                }
                let probe = example(&mut rng);
                let exact = exact_best(&layout, &leaf, &probe);
                match bounded_argmax(&layout, &leaf, &probe, &mut sums) {
                    Some(best) => {
                        told += 1;
                        assert_eq!(best, exact, "round {round}, example {n}");
                    }
                    None => untold += 1,
                }
            }
        }
        assert!(told > 3000 && untold > 1000, "{told} told, {untold} not");
    }

    #[test]
    fn a_zero_variance_class_is_a_point_mass() {
        // Class 0 always saw a = 1.0, class 1 a wide spread around 1.0 (variance ~33, so
        // a density below 1 at 1.0: the point mass's likelihood 1 wins there).
        let layout = layout();
        let mut leaf = LeafNode::new(&layout, vec![0.0; 3], 0, vec![]);
        let x = |a: f64| Features::Dense(vec![a, 0.0, 0.5, 0.0]);
        for n in 0..40 {
            leaf.update(&layout, &x(1.0), 0, 1.0);
            leaf.update(&layout, &x(-9.0 + f64::from(n) / 2.0), 1, 1.0);
        }
        let mut sums = vec![];
        let mut scores = vec![0.0; 3];
        // At the mean: the point mass contributes ln 1 = 0 and beats the spread class.
        log_scores(&layout, &leaf, &x(1.0), &mut scores);
        assert!(scores[0].is_finite() && scores[0] > scores[1], "{scores:?}");
        assert_eq!(scores[2], f64::NEG_INFINITY);
        assert_eq!(
            bounded_argmax(&layout, &leaf, &x(1.0), &mut sums),
            Some(Some(0))
        );
        // Anywhere else: class 0 is impossible.
        log_scores(&layout, &leaf, &x(1.0 + 1e-9), &mut scores);
        assert_eq!(scores[0], f64::NEG_INFINITY);
        assert!(scores[1].is_finite());
        assert_eq!(
            bounded_argmax(&layout, &leaf, &x(1.0 + 1e-9), &mut sums),
            Some(Some(1))
        );
    }
}
