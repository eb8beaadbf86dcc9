//! The randomized top-k the user is shown, and `Pr[a, b in top-k]` exactly.

use crate::rng::{Rng, below, uniform};
use serde::{Deserialize, Serialize};

/// How the shown ranking explores (section 2.2 and Appendix B.1 of the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Randomization {
    /// With probability `rho`, a uniformly random permutation of the labels replaces the
    /// booster's ranking.
    Uniform,
    /// With probability `rho`, two successive swaps, each of a uniformly random label of
    /// the current top-k with a uniformly random label outside it (needs `3 <= k < m`).
    SingleSwap,
}

crate::named_values!(Randomization, "randomization", Uniform => "uniform", SingleSwap => "single-swap");

/// The top-k feedback setting and the authors' stabilizers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopKConfig {
    /// How many labels are shown (and have their relevance revealed).
    pub k: usize,
    /// The exploration rate `rho` in `(0, 1)`.
    pub rho: f64,
    /// The exploration scheme.
    pub randomization: Randomization,
    /// Probabilities `Pr[a, b in top-k]` are clipped to `[clip, 1 - clip]` before they
    /// divide (the authors used 0.005; 0 turns it off).
    pub clip_probability: f64,
    /// Top-k Adaptive's SGD gradient estimate for `alpha` is clipped to `[-c, c]` (the
    /// authors used 1.0; 0 or infinity turns it off).
    pub clip_gradient: f64,
}

impl Default for TopKConfig {
    /// `k = 3`, `rho = 0.04`, uniform randomization, the authors' clipping (0.005 and 1).
    fn default() -> Self {
        TopKConfig {
            k: 3,
            rho: 0.04,
            randomization: Randomization::Uniform,
            clip_probability: 0.005,
            clip_gradient: 1.0,
        }
    }
}

/// Why a [`TopKConfig`] does not fit a stream ([`TopKConfig::validate`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TopKError {
    /// `k` is 0.
    #[error("--k must be at least 1")]
    NoneShown,
    /// The exploration rate is outside `(0, 1)`.
    #[error("--rho must lie in (0, 1), got {0}")]
    Rho(f64),
    /// The probability clip is outside `[0, 0.5)`.
    #[error("the probability clip must lie in [0, 0.5), got {0}")]
    ClipProbability(f64),
    /// The gradient clip is negative or NaN.
    #[error("the gradient clip must be >= 0, got {0}")]
    ClipGradient(f64),
    /// Single-swap randomization without `3 <= k < m`.
    #[error("single-swap randomization needs 3 <= k < m (k = {k}, m = {m})")]
    SingleSwap {
        /// The labels shown.
        k: usize,
        /// The labels.
        m: usize,
    },
}

impl TopKConfig {
    /// Checks the setting against `m` labels.
    pub fn validate(&self, m: usize) -> Result<(), TopKError> {
        if self.k == 0 {
            return Err(TopKError::NoneShown);
        }
        if !(self.rho > 0.0 && self.rho < 1.0) {
            return Err(TopKError::Rho(self.rho));
        }
        if !(0.0..0.5).contains(&self.clip_probability) {
            return Err(TopKError::ClipProbability(self.clip_probability));
        }
        if self.clip_gradient.is_nan() || self.clip_gradient < 0.0 {
            return Err(TopKError::ClipGradient(self.clip_gradient));
        }
        if self.randomization == Randomization::SingleSwap && !(3 <= self.k && self.k < m) {
            return Err(TopKError::SingleSwap { k: self.k, m });
        }
        Ok(())
    }

    /// The number of labels shown among `m`.
    pub fn shown(&self, m: usize) -> usize {
        self.k.min(m)
    }
}

/// The booster's ranking of `scores` (highest first; equal scores by lower label index).
pub fn ranking(scores: &[f64], out: &mut Vec<u32>) {
    out.clear();
    out.extend(0..scores.len() as u32);
    out.sort_by(|&a, &b| {
        scores[b as usize]
            .total_cmp(&scores[a as usize])
            .then(a.cmp(&b))
    });
}

/// Ranks `scores` and randomizes: returns `(top, shown)`, the booster's own top-k
/// (`T^k(r)`, in rank order) and the top-k of the randomized ranking actually shown (in
/// display order). Draws from `rng` (one uniform, then the exploration's draws if any).
pub fn show(scores: &[f64], config: &TopKConfig, rng: &mut Rng) -> (Vec<u32>, Vec<u32>) {
    let m = scores.len();
    let k = config.shown(m);
    let mut r = Vec::with_capacity(m);
    ranking(scores, &mut r);
    let top = r[..k].to_vec();
    if uniform(rng) >= config.rho || k == m {
        return (top.clone(), top);
    }
    match config.randomization {
        Randomization::Uniform => {
            // The first k of a uniform permutation (a partial Fisher-Yates shuffle).
            for i in 0..k {
                let j = i + below(rng, (m - i) as u64) as usize;
                r.swap(i, j);
            }
        }
        Randomization::SingleSwap => {
            for _ in 0..2 {
                let i = below(rng, k as u64) as usize;
                let j = k + below(rng, (m - k) as u64) as usize;
                r.swap(i, j);
            }
        }
    }
    r.truncate(k);
    (top, r)
}

/// `Pr[a, b both in the shown top-k]` for two distinct labels among `m`, given how many
/// of them (`inside`: 0, 1 or 2) are in the booster's own top-k.
///
/// Uniform: `(1 - rho) 1(both inside) + rho k(k-1) / (m(m-1))`. Single-swap: `(1 - rho)
/// 1(both inside) + rho P2`, where `P2` is the chance both are in after two swap steps:
/// each step moves a label of the set out with probability `1/k` (only one of them) and
/// a label outside in with probability `1/(m-k)` (only one), independently; a
/// four-state chain on (a inside, b inside). With `k >= m` every label is shown: 1.
pub fn pair_probability(config: &TopKConfig, m: usize, inside: usize) -> f64 {
    let k = config.shown(m);
    if k >= m {
        return 1.0;
    }
    if k < 2 {
        return 0.0;
    }
    let rho = config.rho;
    let kept = if inside == 2 { 1.0 - rho } else { 0.0 };
    let explore = match config.randomization {
        Randomization::Uniform => (k * (k - 1)) as f64 / (m * (m - 1)) as f64,
        Randomization::SingleSwap => {
            let (kf, of) = (k as f64, (m - k) as f64);
            let (leave, enter) = (1.0 / kf, 1.0 / of);
            // States: 0 = both in, 1 = exactly one in, 2 = both out (by symmetry, which
            // one is in does not matter).
            let step = |p: [f64; 3]| -> [f64; 3] {
                let mut q = [0.0; 3];
                // Both in: one of them leaves with probability 2/k.
                q[0] += p[0] * (1.0 - 2.0 * leave);
                q[1] += p[0] * 2.0 * leave;
                // One in: the inside one leaves (1/k), the outside one enters (1/(m-k)).
                q[0] += p[1] * (1.0 - leave) * enter;
                q[1] += p[1] * ((1.0 - leave) * (1.0 - enter) + leave * enter);
                q[2] += p[1] * leave * (1.0 - enter);
                // Both out: one of them enters with probability 2/(m-k).
                q[1] += p[2] * 2.0 * enter;
                q[2] += p[2] * (1.0 - 2.0 * enter);
                q
            };
            let start = match inside {
                2 => [1.0, 0.0, 0.0],
                1 => [0.0, 1.0, 0.0],
                _ => [0.0, 0.0, 1.0],
            };
            step(step(start))[0]
        }
    };
    kept + rho * explore
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Every (exploration, draws) outcome of `show` enumerated exactly for small `m`: the
    /// probability that each pair is shown equals `pair_probability`.
    fn enumerate_uniform(m: usize, k: usize, rho: f64, top: &[u32]) -> HashMap<(u32, u32), f64> {
        let mut probs = HashMap::new();
        // All permutations' top-k prefixes: ordered k-subsets, each with probability
        // (m-k)!/m!.
        let mut count = 0usize;
        let mut hits: HashMap<(u32, u32), usize> = HashMap::new();
        fn rec(m: usize, k: usize, cur: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) {
            if cur.len() == k {
                f(cur);
                return;
            }
            for l in 0..m as u32 {
                if !cur.contains(&l) {
                    cur.push(l);
                    rec(m, k, cur, f);
                    cur.pop();
                }
            }
        }
        rec(m, k, &mut vec![], &mut |shown: &[u32]| {
            count += 1;
            for &a in shown {
                for &b in shown {
                    if a != b {
                        *hits.entry((a, b)).or_default() += 1;
                    }
                }
            }
        });
        for a in 0..m as u32 {
            for b in 0..m as u32 {
                if a != b {
                    let explore = *hits.get(&(a, b)).unwrap_or(&0) as f64 / count as f64;
                    let kept = f64::from(u8::from(top.contains(&a) && top.contains(&b)));
                    probs.insert((a, b), (1.0 - rho) * kept + rho * explore);
                }
            }
        }
        probs
    }

    fn enumerate_single_swap(m: usize, k: usize, rho: f64) -> HashMap<(u32, u32), f64> {
        let start: Vec<u32> = (0..k as u32).collect();
        let mut hits: HashMap<(u32, u32), f64> = HashMap::new();
        let outside = |set: &[u32]| {
            (0..m as u32)
                .filter(|l| !set.contains(l))
                .collect::<Vec<_>>()
        };
        let p1 = 1.0 / (k * (m - k)) as f64;
        for &u in &start {
            for &v in &outside(&start) {
                let s1: Vec<u32> = start.iter().map(|&x| if x == u { v } else { x }).collect();
                for &u2 in &s1 {
                    for &v2 in &outside(&s1) {
                        let s2: Vec<u32> =
                            s1.iter().map(|&x| if x == u2 { v2 } else { x }).collect();
                        for &a in &s2 {
                            for &b in &s2 {
                                if a != b {
                                    *hits.entry((a, b)).or_default() += p1 * p1;
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut probs = HashMap::new();
        for a in 0..m as u32 {
            for b in 0..m as u32 {
                if a != b {
                    let kept = f64::from(u8::from(start.contains(&a) && start.contains(&b)));
                    let explore = *hits.get(&(a, b)).unwrap_or(&0.0);
                    probs.insert((a, b), (1.0 - rho) * kept + rho * explore);
                }
            }
        }
        probs
    }

    #[test]
    fn pair_probabilities_match_enumeration() {
        for m in 2..=6 {
            for k in 1..=m {
                let top: Vec<u32> = (0..k as u32).collect();
                let config = TopKConfig {
                    k,
                    rho: 0.3,
                    ..TopKConfig::default()
                };
                let exact = enumerate_uniform(m, k, 0.3, &top);
                for ((a, b), p) in exact {
                    let inside = usize::from(a < k as u32) + usize::from(b < k as u32);
                    let got = pair_probability(&config, m, inside);
                    assert!(
                        (got - p).abs() < 1e-12,
                        "m {m} k {k} ({a},{b}): {got} vs {p}"
                    );
                }
            }
        }
        for m in 4..=8 {
            for k in 3..m {
                let config = TopKConfig {
                    k,
                    rho: 0.2,
                    randomization: Randomization::SingleSwap,
                    ..TopKConfig::default()
                };
                for ((a, b), p) in enumerate_single_swap(m, k, 0.2) {
                    let inside = usize::from(a < k as u32) + usize::from(b < k as u32);
                    let got = pair_probability(&config, m, inside);
                    assert!(
                        (got - p).abs() < 1e-12,
                        "m {m} k {k} ({a},{b}): {got} vs {p}"
                    );
                }
            }
        }
    }

    #[test]
    fn show_follows_the_ranking_or_explores_at_rate_rho() {
        let scores = [0.1, 0.9, 0.5, 0.5, -1.0, 0.3];
        let config = TopKConfig {
            k: 3,
            rho: 0.25,
            ..TopKConfig::default()
        };
        let mut rng = crate::rng::seeded(3, 0);
        let (mut kept, n) = (0, 20_000);
        let mut pair_hits = HashMap::new();
        for _ in 0..n {
            let (top, shown) = show(&scores, &config, &mut rng);
            // Ties by lower index: 1, then 2 before 3.
            assert_eq!(top, vec![1, 2, 3]);
            assert_eq!(shown.len(), 3);
            kept += usize::from(shown == top);
            for &a in &shown {
                for &b in &shown {
                    if a < b {
                        *pair_hits.entry((a, b)).or_insert(0usize) += 1;
                    }
                }
            }
        }
        // P(shown == top) = 1 - rho + rho / (6 * 5 * 4).
        let expect = 0.75 + 0.25 / 120.0;
        let rate = kept as f64 / n as f64;
        assert!((rate - expect).abs() < 0.01, "{rate} vs {expect}");
        // Empirical pair frequencies agree with the exact probabilities.
        for ((a, b), hits) in pair_hits {
            let inside = [a, b].iter().filter(|l| [1, 2, 3].contains(*l)).count();
            let p = pair_probability(&config, 6, inside);
            let f = hits as f64 / n as f64;
            assert!((f - p).abs() < 0.012, "({a},{b}) {f} vs {p}");
        }
    }

    #[test]
    fn configs_are_validated() {
        let ok = TopKConfig::default();
        assert!(ok.validate(6).is_ok());
        for bad in [
            TopKConfig { k: 0, ..ok },
            TopKConfig { rho: 0.0, ..ok },
            TopKConfig { rho: 1.0, ..ok },
            TopKConfig {
                clip_probability: 0.5,
                ..ok
            },
            TopKConfig {
                randomization: Randomization::SingleSwap,
                k: 2,
                ..ok
            },
            TopKConfig {
                randomization: Randomization::SingleSwap,
                k: 6,
                ..ok
            },
        ] {
            assert!(bad.validate(6).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn validation_messages_name_the_option() {
        let ok = TopKConfig::default();
        let message = |c: TopKConfig, m: usize| c.validate(m).unwrap_err().to_string();
        assert_eq!(
            message(TopKConfig { k: 0, ..ok }, 6),
            "--k must be at least 1"
        );
        assert_eq!(
            message(TopKConfig { rho: 1.5, ..ok }, 6),
            "--rho must lie in (0, 1), got 1.5"
        );
        assert_eq!(
            message(
                TopKConfig {
                    clip_probability: 0.5,
                    ..ok
                },
                6
            ),
            "the probability clip must lie in [0, 0.5), got 0.5"
        );
        assert_eq!(
            message(
                TopKConfig {
                    clip_gradient: -1.0,
                    ..ok
                },
                6
            ),
            "the gradient clip must be >= 0, got -1"
        );
        assert_eq!(
            message(
                TopKConfig {
                    randomization: Randomization::SingleSwap,
                    k: 3,
                    ..ok
                },
                3
            ),
            "single-swap randomization needs 3 <= k < m (k = 3, m = 3)"
        );
    }
}
