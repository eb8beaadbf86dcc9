//! Online per-feature min-max scaling, kept inside a thresholding model (the command
//! line's `--online-scaling min-max`, its default for the thresholding learners).
//!
//! The thresholding paper's learners use raw inner products and RBF distances, so features
//! on very different scales (emotions: -99 to 237; birds: up to 9e4) let a few features
//! dominate, and an RBF kernel with a fixed width is then either nearly constant or nearly
//! the identity. The paper does not say how it preprocessed. [`OnlineMinMax`] is the
//! one-pass version of the batch `eval --scale min-max`: it keeps each feature's running
//! minimum, maximum and largest absolute value over the examples the model has *learned*
//! (labelled examples only, so a frozen test never moves it), and maps a feature the same
//! way as the batch version:
//!
//! * a dense vector: `(x_j - min_j) / (max_j - min_j)`; a feature not yet seen with two
//!   different values maps to 0;
//! * a sparse vector stays sparse: its stored values are divided by `max_j |x_j|` (zeros
//!   stay zeros; for non-negative data such as bibtex's binary features this is min-max);
//! * non-finite values are left as they are (the models read them as 0) and are not
//!   counted; indices at or beyond the model's dimension are left as they are (the models
//!   ignore them).
//!
//! A prediction uses the statistics of the examples learned before it, so the first
//! examples of a stream are scaled with few statistics; a kernel model's support vectors
//! are stored scaled as they were when they were learned (the ranges settle after a few
//! hundred examples on the MULAN sets). With a dense stream, scaling breaks the rule that
//! a dense and a sparse vector with the same values give the same result (the batch
//! scaling does too).

use crate::data::Features;
use serde::{Deserialize, Serialize};

/// How a thresholding model scales its input features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FeatureScaling {
    /// The raw features (the paper's algorithms as written).
    #[default]
    None,
    /// Online min-max scaling ([`OnlineMinMax`]).
    MinMax,
}

crate::named_values!(FeatureScaling, "feature scaling", None => "none", MinMax => "min-max");

/// Running per-feature statistics for online min-max scaling (see the module).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OnlineMinMax {
    min: Vec<f64>,
    max: Vec<f64>,
    max_abs: Vec<f64>,
}

impl OnlineMinMax {
    /// No statistics yet, for `dim` features.
    pub fn new(dim: usize) -> Self {
        OnlineMinMax {
            min: vec![f64::INFINITY; dim],
            max: vec![f64::NEG_INFINITY; dim],
            max_abs: vec![0.0; dim],
        }
    }

    /// The running minimum and maximum of feature `j` (infinite before any value).
    pub fn range(&self, j: usize) -> Option<(f64, f64)> {
        Some((*self.min.get(j)?, *self.max.get(j)?))
    }

    /// Counts the finite values of `x` (a dense vector's zeros included; a sparse
    /// vector's stored values only, its implicit zeros also lowering the minimum and
    /// raising the maximum to 0, as in the batch scaling).
    pub fn observe(&mut self, x: &Features) {
        let dim = self.min.len();
        let mut update = |j: usize, v: f64| {
            if j < dim && v.is_finite() {
                self.min[j] = self.min[j].min(v);
                self.max[j] = self.max[j].max(v);
                self.max_abs[j] = self.max_abs[j].max(v.abs());
            }
        };
        match x {
            Features::Dense(v) => {
                for (j, &value) in v.iter().enumerate() {
                    update(j, value);
                }
            }
            Features::Sparse {
                indices, values, ..
            } => {
                for (&j, &value) in indices.iter().zip(values) {
                    update(j as usize, value);
                    update(j as usize, 0.0);
                }
            }
        }
    }

    /// `x` scaled with the current statistics.
    pub fn apply(&self, x: &Features) -> Features {
        match x {
            Features::Dense(v) => Features::Dense(
                v.iter()
                    .enumerate()
                    .map(|(j, &value)| {
                        if j >= self.min.len() || !value.is_finite() {
                            return value;
                        }
                        let (lo, hi) = (self.min[j], self.max[j]);
                        if hi > lo && lo.is_finite() && hi.is_finite() {
                            (value - lo) / (hi - lo)
                        } else {
                            0.0
                        }
                    })
                    .collect(),
            ),
            Features::Sparse {
                indices,
                values,
                dim,
            } => Features::Sparse {
                indices: indices.clone(),
                values: indices
                    .iter()
                    .zip(values)
                    .map(|(&j, &value)| {
                        let j = j as usize;
                        if j >= self.max_abs.len() || !value.is_finite() {
                            return value;
                        }
                        let m = self.max_abs[j];
                        if m > 0.0 { value / m } else { 0.0 }
                    })
                    .collect(),
                dim: *dim,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_values_map_to_the_running_range() {
        let mut s = OnlineMinMax::new(3);
        // Nothing seen: every feature maps to 0.
        assert_eq!(
            s.apply(&Features::Dense(vec![5.0, 1.0, 2.0])),
            Features::Dense(vec![0.0, 0.0, 0.0])
        );
        s.observe(&Features::Dense(vec![-99.0, 1.0, f64::NAN]));
        s.observe(&Features::Dense(vec![237.0, 1.0, 4.0]));
        let y = s.apply(&Features::Dense(vec![-15.0, 7.0, f64::NAN, 3.0]));
        let Features::Dense(y) = y else { panic!() };
        assert_eq!(y[0], (-15.0 + 99.0) / 336.0);
        assert_eq!(y[1], 0.0, "a constant feature maps to 0");
        assert!(y[2].is_nan(), "a non-finite value is left as it is");
        assert_eq!(y[3], 3.0, "an index beyond the dimension is left as it is");
        assert_eq!(s.range(2), Some((4.0, 4.0)), "NaN is not counted");
    }

    #[test]
    fn sparse_vectors_stay_sparse_divided_by_the_largest_magnitude() {
        let mut s = OnlineMinMax::new(4);
        let x = |i: Vec<u32>, v: Vec<f64>| Features::Sparse {
            indices: i,
            values: v,
            dim: 4,
        };
        s.observe(&x(vec![0, 2], vec![2.0, -8.0]));
        s.observe(&x(vec![0], vec![4.0]));
        assert_eq!(
            s.apply(&x(vec![0, 2, 3], vec![1.0, 2.0, 5.0])),
            x(vec![0, 2, 3], vec![0.25, 0.25, 0.0])
        );
        assert_eq!(s.range(2), Some((-8.0, 0.0)), "implicit zeros count");
    }
}
