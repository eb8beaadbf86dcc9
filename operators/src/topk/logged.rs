//! The pair estimator for feedback logged by another policy (a replay of logged clicks).
//!
//! In a log such as the Open Bandit Dataset, the shown items were chosen by the logging
//! policy, and the log gives for each shown item `a` only its marginal propensity `p_a`
//! (the probability that the logging policy put `a` at that position). The joint
//! probability `Pr[a, b both shown]` that the paper's estimator (eq. 1) divides by is not
//! in the log, and most impressions of the OBD sample hold a single row, so pairs of two
//! shown items are (almost) never observed.
//!
//! The estimator used instead weighs by the clicked item's propensity alone: every clicked
//! item `a` forms the pairs `(a, b)` with every label `b` not clicked in the impression,
//! each with weight `1 / p_a`. Over the logging policy's choice, the expectation of the
//! estimate of a pairwise loss is `sum_{a in R} sum_{b != a} f(s[a], s[b])` (`R` the items
//! the user would click at that position): the paper's `sum_{a in R, b not in R}` whenever
//! at most one item would be clicked, which is the case the data describe (a click-through
//! of about 0.4 %). Pairs of two clicked items (two clicks in one impression) are left
//! out.

use super::estimator::{PairFeedback, WeightedPair, clipped};

/// The feedback of one logged impression among `m` labels: `clicked` holds each clicked
/// item with its logging propensity. The propensity is clipped like a pair probability
/// (`clip`, see [`TopKConfig::clip_probability`](super::TopKConfig)). Items out of range
/// and propensities that are not positive are ignored.
pub fn logged_pairs(m: usize, clicked: &[(u32, f64)], clip: f64) -> PairFeedback {
    let mut relevant: Vec<(u32, f64)> = clicked
        .iter()
        .copied()
        .filter(|&(a, p)| (a as usize) < m && p > 0.0)
        .collect();
    relevant.sort_by_key(|&(a, _)| a);
    relevant.dedup_by_key(|&mut (a, _)| a);
    let mut fb = PairFeedback {
        relevant: relevant.iter().map(|&(a, _)| a).collect(),
        ..PairFeedback::default()
    };
    fb.irrelevant = (0..m as u32)
        .filter(|l| fb.relevant.binary_search(l).is_err())
        .collect();
    for &(a, p) in &relevant {
        let weight = 1.0 / clipped(p, clip);
        for &b in &fb.irrelevant {
            fb.pairs.push(WeightedPair { a, b, weight });
        }
    }
    fb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_click_pairs_with_every_other_label() {
        let fb = logged_pairs(4, &[(2, 0.25)], 0.005);
        assert_eq!(fb.relevant, vec![2]);
        assert_eq!(fb.irrelevant, vec![0, 1, 3]);
        assert_eq!(fb.pairs.len(), 3);
        assert!(fb.pairs.iter().all(|p| p.a == 2 && p.weight == 4.0));
        // No click: nothing to learn from.
        assert!(logged_pairs(4, &[], 0.005).pairs.is_empty());
        // A tiny propensity is clipped; a certain one is not.
        let fb = logged_pairs(3, &[(0, 0.001), (9, 0.5)], 0.005);
        assert_eq!(fb.pairs.len(), 2);
        assert!((fb.pairs[0].weight - 200.0).abs() < 1e-9);
        assert_eq!(logged_pairs(3, &[(1, 1.0)], 0.005).pairs[0].weight, 1.0);
    }

    /// Under a uniform logging policy (each of `m` items with propensity `1 / m`) and one
    /// relevant item, the expectation of the estimate is the true pairwise loss.
    #[test]
    fn unbiased_for_one_relevant_item_under_uniform_logging() {
        let m = 5;
        let scores = [0.3, -1.2, 2.0, 0.7, 0.1];
        let f = |sa: f64, sb: f64| (1.0 + sb - sa).max(0.0);
        let r = 3u32;
        let exact: f64 = (0..m as u32)
            .filter(|&b| b != r)
            .map(|b| f(scores[r as usize], scores[b as usize]))
            .sum();
        let p = 1.0 / m as f64;
        let expectation: f64 = (0..m as u32)
            .map(|shown| {
                let clicked: Vec<(u32, f64)> = if shown == r { vec![(shown, p)] } else { vec![] };
                p * logged_pairs(m, &clicked, 0.0).estimate(&scores, f)
            })
            .sum();
        assert!(
            (expectation - exact).abs() < 1e-12,
            "{expectation} vs {exact}"
        );
    }
}
