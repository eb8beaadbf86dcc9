//! Min-max feature scaling fitted on the training part (`eval --scale min-max`).
//!
//! The thresholding paper's learners use raw inner products and RBF distances, so features
//! on very different scales (emotions: -99 to 237; birds: up to 9e4) let a few features
//! dominate. `--scale min-max` maps every feature of a dense vector to
//! `(x - min_j) / (max_j - min_j)` with `min_j`, `max_j` taken over the training part
//! (part 0) only, so the test part is scaled with the training statistics and may fall
//! outside [0, 1]. A constant feature maps to 0. A sparse vector stays sparse: its stored
//! values are divided by `max_j |x_j|` (zeros stay zeros; for non-negative data such as
//! bibtex's binary features this is the same as min-max). Non-finite values are left as
//! they are (the learners read them as 0) and are ignored when fitting.
//!
//! This is a batch preprocessing step (one pass over the training file before the stream
//! starts), as the paper's offline protocol allows; with one file (prequential) the
//! statistics are those of the whole file.

use crate::source::Dataset;
use flowboost_operators::data::{Example, Features};

/// Per-feature statistics of the training part.
#[derive(Clone, Debug)]
pub struct MinMaxScaling {
    min: Vec<f64>,
    max: Vec<f64>,
    max_abs: Vec<f64>,
}

impl MinMaxScaling {
    /// Fits the statistics on part 0 of `data` (one streaming pass). Implicit zeros of
    /// sparse vectors count as values.
    pub fn fit(data: &Dataset, dim: usize) -> Result<Self, String> {
        let mut s = MinMaxScaling {
            min: vec![f64::INFINITY; dim],
            max: vec![f64::NEG_INFINITY; dim],
            max_abs: vec![0.0; dim],
        };
        let mut any_sparse = false;
        for ex in data.stream(0)? {
            let ex = ex?;
            if matches!(ex.features, Features::Sparse { .. }) {
                any_sparse = true;
            }
            ex.features.for_each(|j, v| {
                if j < dim && v.is_finite() {
                    s.min[j] = s.min[j].min(v);
                    s.max[j] = s.max[j].max(v);
                    s.max_abs[j] = s.max_abs[j].max(v.abs());
                }
            });
        }
        if any_sparse {
            for j in 0..dim {
                s.min[j] = s.min[j].min(0.0);
                s.max[j] = s.max[j].max(0.0);
            }
        }
        Ok(s)
    }

    /// Scales one example's features.
    pub fn apply(&self, mut ex: Example) -> Example {
        match &mut ex.features {
            Features::Dense(v) => {
                for (j, x) in v.iter_mut().enumerate() {
                    if j >= self.min.len() || !x.is_finite() {
                        continue;
                    }
                    let (lo, hi) = (self.min[j], self.max[j]);
                    *x = if hi > lo && lo.is_finite() {
                        (*x - lo) / (hi - lo)
                    } else {
                        0.0
                    };
                }
            }
            Features::Sparse {
                indices, values, ..
            } => {
                for (&j, x) in indices.iter().zip(values.iter_mut()) {
                    let j = j as usize;
                    if j >= self.max_abs.len() || !x.is_finite() {
                        continue;
                    }
                    let m = self.max_abs[j];
                    *x = if m > 0.0 { *x / m } else { 0.0 };
                }
            }
        }
        ex
    }
}
