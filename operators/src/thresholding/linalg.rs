//! The feature-vector arithmetic shared by every thresholding model.
//!
//! **Input rule.** A feature value that is not finite (NaN, the missing-value marker of the
//! readers, or ±inf) is treated as 0, and so is an index at or beyond the model's
//! dimension. Every routine below visits only the non-zero, finite values of `x`, in
//! ascending index order, so a dense vector and a sparse vector holding the same values
//! give bit-identical results (a dense vector's zeros are skipped, not multiplied).

use crate::data::Features;

/// The value of a feature as the models see it: non-finite values count as 0.
#[inline]
pub fn clean(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// Calls `f(j, v)` for every non-zero finite value `v` of `x` at index `j < dim`, in
/// ascending `j` (only the stored entries of a sparse `x`).
#[inline]
pub fn for_each_active(x: &Features, dim: usize, mut f: impl FnMut(usize, f64)) {
    match x {
        Features::Dense(v) => {
            for (j, &value) in v.iter().enumerate().take(dim) {
                let value = clean(value);
                if value != 0.0 {
                    f(j, value);
                }
            }
        }
        Features::Sparse {
            indices, values, ..
        } => {
            for (&j, &value) in indices.iter().zip(values) {
                let j = j as usize;
                if j >= dim {
                    break;
                }
                let value = clean(value);
                if value != 0.0 {
                    f(j, value);
                }
            }
        }
    }
}

/// The squared Euclidean norm of `x` under the input rule.
#[inline]
pub fn squared_norm(x: &Features, dim: usize) -> f64 {
    let mut s = 0.0;
    for_each_active(x, dim, |_, v| s += v * v);
    s
}

/// `labels[i] = x . W[:, i]` for a feature-major matrix `w` (`w[j * k + i]`) with
/// `k = labels.len()` columns, or `k = labels.len() + 1` when `threshold` is given, which
/// then receives the score of the last column. Only the active entries of `x` are
/// visited; each score is summed in ascending feature order.
#[inline]
pub fn feature_major_scores(
    w: &[f64],
    x: &Features,
    labels: &mut [f64],
    mut threshold: Option<&mut f64>,
) {
    let l = labels.len();
    let k = l + usize::from(threshold.is_some());
    let dim = w.len().checked_div(k).unwrap_or(0);
    labels.fill(0.0);
    if let Some(t) = threshold.as_deref_mut() {
        *t = 0.0;
    }
    for_each_active(x, dim, |j, v| {
        let row = &w[j * k..(j + 1) * k];
        for (s, &wi) in labels.iter_mut().zip(row) {
            *s += v * wi;
        }
        if let Some(t) = threshold.as_deref_mut() {
            *t += v * row[l];
        }
    });
}

/// `W[:, i] -= step * coefficients[i] * x` for every column `i` of a feature-major
/// matrix (`k = coefficients.len()` columns); only the active entries of `x` are visited.
#[inline]
pub fn feature_major_step(w: &mut [f64], x: &Features, step: f64, coefficients: &[f64]) {
    let k = coefficients.len();
    let dim = w.len().checked_div(k).unwrap_or(0);
    for_each_active(x, dim, |j, v| {
        let row = &mut w[j * k..(j + 1) * k];
        for (wi, &c) in row.iter_mut().zip(coefficients) {
            if c != 0.0 {
                *wi -= step * c * v;
            }
        }
    });
}

/// Whether every value is finite.
#[inline]
pub fn all_finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}
