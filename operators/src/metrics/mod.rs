//! Evaluation metrics: accuracy for single-label tasks; weighted rank loss, Hamming loss and
//! the set-based precision, recall and F1 scores for multi-label tasks.
//!
//! Each metric exists as a pure function of one prediction (checked against hand-computed
//! cases) and as a running accumulator ([`SingleLabelMetrics`], [`MultilabelMetrics`]).

mod accumulators;
mod rank_loss;
mod set_scores;

pub use accumulators::{MultilabelMetrics, SingleLabelMetrics};
pub use rank_loss::{rank_loss, unweighted_rank_loss};
pub use set_scores::{SetCounts, set_counts};
