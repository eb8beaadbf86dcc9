//! Top-k feedback (Zhang, Jung and Tewari, "Online Boosting for Multilabel Ranking with
//! Top-k Feedback"): after the booster ranks the labels, only the relevance of the `k`
//! labels shown first is revealed.
//!
//! - [`randomization`]: the randomized ranking actually shown (uniform or single-swap
//!   exploration with rate `rho`) and the exact probability that two labels are both shown.
//! - [`estimator`]: the observed (relevant, irrelevant) pairs with their importance weights
//!   `1 / Pr[a, b in top-k]`, from which every pairwise-decomposable loss, cost vector and
//!   gradient is estimated without bias (the paper's eq. 1).
//! - [`logged`]: the same pairs from a log of another policy's clicks, weighted by the
//!   logging propensities.

pub mod estimator;
pub mod logged;
pub mod randomization;

pub use estimator::{PairFeedback, WeightedPair, full_information_pairs, observe};
pub use logged::logged_pairs;
pub use randomization::{Randomization, TopKConfig, TopKError, pair_probability, show};
