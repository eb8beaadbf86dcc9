//! Potentials and boost-by-majority weights, computed exactly (no Monte Carlo).

mod binomial;
mod multiclass;
mod pairwise;
mod ranking;

pub use binomial::binomial_pmf_row;
pub use multiclass::{MULTICLASS_MEMO_BYTES, ZeroOnePotential, biased_uniform, zero_one_loss};
pub use pairwise::{PairLoss, StepSumTable, step_probabilities};
pub use ranking::{DEFAULT_TABLE_CAPACITY, RankingPotential, is_label_set};
