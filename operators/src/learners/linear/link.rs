//! Link functions: scores to probabilities, safe for any input (NaN, ±inf, huge values).

/// Scores are clamped to `±SCORE_LIMIT` so that the difference of two scores stays finite.
const SCORE_LIMIT: f64 = 1e300;

/// A finite score: NaN becomes 0, ±inf and huge values are clamped to `±1e300`.
#[inline]
pub(super) fn sanitize(s: f64) -> f64 {
    if s.is_nan() {
        0.0
    } else {
        s.clamp(-SCORE_LIMIT, SCORE_LIMIT)
    }
}

/// The logistic function `1 / (1 + e^{-s})`, accurate in both tails.
#[inline]
pub(super) fn sigmoid(s: f64) -> f64 {
    if s >= 0.0 {
        1.0 / (1.0 + (-s).exp())
    } else {
        let e = s.exp();
        e / (1.0 + e)
    }
}

/// Replaces the scores in `v` by their softmax (a distribution: non-negative, summing to 1).
#[inline]
pub(super) fn softmax_in_place(v: &mut [f64]) {
    let mut max = f64::NEG_INFINITY;
    for s in v.iter_mut() {
        *s = sanitize(*s);
        max = max.max(*s);
    }
    let mut sum = 0.0;
    for s in v.iter_mut() {
        *s = (*s - max).exp();
        sum += *s;
    }
    // sum >= 1: the largest score contributes exp(0).
    let inv = 1.0 / sum;
    for s in v.iter_mut() {
        *s *= inv;
    }
}

/// Writes the softmax of `scores` into `out` (same length).
#[inline]
pub(super) fn softmax_into(scores: &[f64], out: &mut [f64]) {
    out.copy_from_slice(scores);
    softmax_in_place(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_and_extremes() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert!((sigmoid(-800.0)).abs() < 1e-300);
        assert_eq!(sigmoid(800.0), 1.0);
        let mut v = [f64::INFINITY, f64::NAN, f64::NEG_INFINITY, 1e308];
        softmax_in_place(&mut v);
        assert!(v.iter().all(|p| p.is_finite() && *p >= 0.0));
        assert!((v.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
