//! The unbiased pair estimator (the paper's eq. 1): every observed (relevant, irrelevant)
//! pair with the importance weight `1 / Pr[a, b in top-k]`.

use super::randomization::{TopKConfig, pair_probability};
use serde::{Deserialize, Serialize};

/// One observed pair: `a` relevant, `b` irrelevant, both shown.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightedPair {
    /// The relevant label.
    pub a: u32,
    /// The irrelevant label.
    pub b: u32,
    /// `1 / Pr[a, b in the shown top-k]` (clipped, see [`TopKConfig::clip_probability`]).
    pub weight: f64,
}

/// What top-k feedback reveals about one event, ready for the estimators: for any pairwise
/// loss `L(s, R) = sum_{a in R, b not in R} f(s[a], s[b])`, the estimate is
/// `sum_pairs weight f(s[a], s[b])`, unbiased over the randomization of the shown ranking
/// (before clipping).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PairFeedback {
    /// The shown labels found relevant (sorted).
    pub relevant: Vec<u32>,
    /// The shown labels found irrelevant (sorted).
    pub irrelevant: Vec<u32>,
    /// Every (relevant, irrelevant) pair of shown labels with its weight.
    pub pairs: Vec<WeightedPair>,
}

impl PairFeedback {
    /// The estimate `sum_pairs weight f(s[a], s[b])` of a pairwise loss.
    pub fn estimate(&self, scores: &[f64], f: impl Fn(f64, f64) -> f64) -> f64 {
        self.pairs
            .iter()
            .map(|p| p.weight * f(scores[p.a as usize], scores[p.b as usize]))
            .sum()
    }

    /// The estimated unweighted rank loss `sum w 1(s[b] >= s[a])` (the paper's
    /// `L-hat^rnk`, ties counted as losses), what Top-k Adaptive's Hedge uses.
    pub fn rank_loss(&self, scores: &[f64]) -> f64 {
        self.estimate(scores, |sa, sb| f64::from(u8::from(sb >= sa)))
    }
}

/// The clipped probability (see [`TopKConfig::clip_probability`]): a certain event (`p =
/// 1`, e.g. every label shown) is not clipped.
pub(crate) fn clipped(p: f64, clip: f64) -> f64 {
    if p >= 1.0 || clip <= 0.0 {
        p
    } else {
        p.clamp(clip, 1.0 - clip)
    }
}

/// The feedback of one event among `m` labels: `top` is the booster's own top-k (before
/// randomization), `shown` what was shown, `relevant(l)` the revealed relevance of a shown
/// label. Labels out of range are ignored.
pub fn observe(
    config: &TopKConfig,
    m: usize,
    top: &[u32],
    shown: &[u32],
    relevant: impl Fn(u32) -> bool,
) -> PairFeedback {
    let mut fb = PairFeedback::default();
    for &l in shown {
        if (l as usize) < m {
            if relevant(l) {
                fb.relevant.push(l);
            } else {
                fb.irrelevant.push(l);
            }
        }
    }
    fb.relevant.sort_unstable();
    fb.relevant.dedup();
    fb.irrelevant.sort_unstable();
    fb.irrelevant.dedup();
    let inside = |l: u32| usize::from(top.contains(&l));
    for &a in &fb.relevant {
        for &b in &fb.irrelevant {
            let p = pair_probability(config, m, inside(a) + inside(b));
            let p = clipped(p, config.clip_probability);
            if p > 0.0 {
                fb.pairs.push(WeightedPair {
                    a,
                    b,
                    weight: 1.0 / p,
                });
            }
        }
    }
    fb
}

/// Full information as pair feedback: every (relevant, irrelevant) pair, weight 1.
pub fn full_information_pairs(relevant: &[u32], m: usize) -> PairFeedback {
    let mut fb = PairFeedback {
        relevant: relevant
            .iter()
            .copied()
            .filter(|&l| (l as usize) < m)
            .collect(),
        ..PairFeedback::default()
    };
    fb.relevant.sort_unstable();
    fb.relevant.dedup();
    fb.irrelevant = (0..m as u32)
        .filter(|l| fb.relevant.binary_search(l).is_err())
        .collect();
    for &a in &fb.relevant {
        for &b in &fb.irrelevant {
            fb.pairs.push(WeightedPair { a, b, weight: 1.0 });
        }
    }
    fb
}

#[cfg(test)]
mod tests {
    use super::super::randomization::Randomization;
    use super::*;

    /// The expectation of the estimate over every outcome of the uniform randomization
    /// (enumerated exactly) equals the true loss, for an arbitrary pair function.
    #[test]
    fn the_estimate_is_unbiased_under_uniform_randomization() {
        let m = 5;
        let scores = [0.3, -1.2, 2.0, 0.7, 0.1];
        let truth = [0u32, 3];
        let f = |sa: f64, sb: f64| (1.0 + sb - sa).max(0.0) + 0.25 * sb * sb;
        let exact: f64 = truth
            .iter()
            .flat_map(|&a| {
                (0..m as u32)
                    .filter(|b| !truth.contains(b))
                    .map(move |b| (a, b))
            })
            .map(|(a, b)| f(scores[a as usize], scores[b as usize]))
            .sum();
        for k in 2..=m {
            let config = TopKConfig {
                k,
                rho: 0.3,
                clip_probability: 0.0,
                ..TopKConfig::default()
            };
            let top: Vec<u32> = vec![2, 3, 0, 4, 1][..k].to_vec();
            // Outcomes: the ranking itself with probability 1 - rho; each ordered k-prefix of
            // a uniform permutation with probability rho (m-k)!/m!.
            let mut prefixes = vec![];
            fn rec(m: usize, k: usize, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
                if cur.len() == k {
                    out.push(cur.clone());
                    return;
                }
                for l in 0..m as u32 {
                    if !cur.contains(&l) {
                        cur.push(l);
                        rec(m, k, cur, out);
                        cur.pop();
                    }
                }
            }
            rec(m, k, &mut vec![], &mut prefixes);
            let each = config.rho / prefixes.len() as f64;
            let estimate = |shown: &[u32]| {
                observe(&config, m, &top, shown, |l| truth.contains(&l)).estimate(&scores, f)
            };
            let mut expectation = (1.0 - config.rho) * estimate(&top);
            for shown in &prefixes {
                expectation += each * estimate(shown);
            }
            assert!(
                (expectation - exact).abs() < 1e-10,
                "k {k}: {expectation} vs {exact}"
            );
        }
    }

    #[test]
    fn observed_pairs_and_weights_by_hand() {
        // m = 6, k = 3, rho = 0.1: a pair inside the booster's top-3 is shown with
        // probability 0.9 + 0.1 * 6/30 = 0.92, any other pair with 0.1 * 6/30 = 0.02.
        let config = TopKConfig {
            k: 3,
            rho: 0.1,
            ..TopKConfig::default()
        };
        let fb = observe(&config, 6, &[4, 1, 0], &[4, 5, 1], |l| l == 4 || l == 3);
        assert_eq!(fb.relevant, vec![4]);
        assert_eq!(fb.irrelevant, vec![1, 5]);
        assert_eq!(fb.pairs.len(), 2);
        assert_eq!((fb.pairs[0].a, fb.pairs[0].b), (4, 1));
        assert!((fb.pairs[0].weight - 1.0 / 0.92).abs() < 1e-12);
        assert_eq!((fb.pairs[1].a, fb.pairs[1].b), (4, 5));
        assert!((fb.pairs[1].weight - 1.0 / 0.02).abs() < 1e-9);
        // Clipping: with rho = 0.01 the outside pair has 0.002 < 0.005.
        let low = TopKConfig {
            rho: 0.01,
            ..config
        };
        let fb = observe(&low, 6, &[4, 1, 0], &[4, 5, 1], |l| l == 4);
        assert!((fb.pairs[1].weight - 200.0).abs() < 1e-9);
        // Single swap: a pair with one label inside.
        let ss = TopKConfig {
            randomization: Randomization::SingleSwap,
            ..config
        };
        let fb = observe(&ss, 6, &[4, 1, 0], &[4, 5, 1], |l| l == 4);
        let p = pair_probability(&ss, 6, 1);
        assert!((fb.pairs[1].weight - 1.0 / p).abs() < 1e-9);
        // Rank loss estimate: s[4] = 1 beats s[1] = 0 but ties s[5] = 1.
        let scores = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
        assert!((fb.rank_loss(&scores) - 1.0 / p).abs() < 1e-9);
    }

    #[test]
    fn full_information_has_every_pair_once() {
        let fb = full_information_pairs(&[3, 1, 3, 9], 5);
        assert_eq!(fb.relevant, vec![1, 3]);
        assert_eq!(fb.irrelevant, vec![0, 2, 4]);
        assert_eq!(fb.pairs.len(), 6);
        assert!(fb.pairs.iter().all(|p| p.weight == 1.0));
        // Everything shown: the observed pairs are all pairs, weight 1 (not clipped).
        let config = TopKConfig {
            k: 5,
            ..TopKConfig::default()
        };
        let obs = observe(&config, 5, &[0, 1, 2, 3, 4], &[4, 3, 2, 1, 0], |l| {
            l == 1 || l == 3
        });
        assert_eq!(obs.pairs.len(), 6);
        assert!(obs.pairs.iter().all(|p| p.weight == 1.0));
    }
}
