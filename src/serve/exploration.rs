//! The exploration policy of `POST /v1/rank` (`serve --explore`): how the shown top k is
//! drawn from the model's scores, and the exact probability of each shown item at its
//! position (the marginal propensity that `replay-clicks`, the click simulator's log and
//! the off-policy estimators use, the Open Bandit Dataset's `propensity_score`), with the
//! probability of the whole ordered slate.
//!
//! - `greedy` (the default): the model's top k, each at its position with probability 1.
//! - `epsilon-greedy:E`: with probability `1 - E` the model's top k, else the first k of a
//!   uniformly random permutation of the items (the top-k boosters' `uniform`
//!   randomization with `rho = E`, drawn by [`show`]): `P(a at j) = (1 - E) 1(top[j] = a) +
//!   E / m` (all `m` items are shown in the model's order when `k >= m`: probability 1).
//! - `softmax:T`: a Plackett-Luce ranking with weights `exp((score - max) / T)`, floored at
//!   [`SOFTMAX_FLOOR`] (items drawn one by one, each with probability proportional to its
//!   weight among those left): its exact
//!   marginals are the click simulator's [`plackett_luce_marginals`] (`m^(k-1)` slate
//!   prefixes enumerated, so `m^(k-1)` is limited to [`MAX_SOFTMAX_PREFIXES`]).
//!
//! Every draw comes from a generator seeded with the request's id (and `--explore-seed`),
//! so a request is replayed exactly: the same id and the same scores give the same slate.

use flowboost_connectors::generators::clicks::plackett_luce_marginals;
use flowboost_operators::rng::{Rng, seeded, uniform};
use flowboost_operators::topk::randomization::ranking;
use flowboost_operators::topk::{Randomization, TopKConfig, show};
use std::fmt;
use std::str::FromStr;

/// The most slate prefixes (`m^(k-1)`) the exact softmax propensities may enumerate per
/// request.
pub const MAX_SOFTMAX_PREFIXES: f64 = 1e6;

/// How `/v1/rank` draws the shown slate from the model's scores.
///
/// ```
/// use flowboost::serve::Exploration;
///
/// let scores = [0.1, 2.0, -1.0, 0.5];
/// // Greedy: the top 2, each with propensity 1.
/// let slate = Exploration::Greedy.draw(&scores, 2, 7, 0);
/// assert_eq!(slate.items, vec![1, 3]);
/// assert_eq!(slate.propensities, vec![1.0, 1.0]);
/// // Epsilon-greedy: replayed exactly from the request's id.
/// let e: Exploration = "epsilon-greedy:0.2".parse().unwrap();
/// assert_eq!(e.draw(&scores, 2, 7, 0), e.draw(&scores, 2, 7, 0));
/// // Softmax: the propensities are Plackett-Luce marginals (each position sums to 1).
/// let s: Exploration = "softmax:0.5".parse().unwrap();
/// assert_eq!(s.marginals(&scores, 2).len(), 2 * 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exploration {
    /// The model's top k.
    Greedy,
    /// The model's top k with probability `1 - epsilon`, else a uniformly random slate.
    EpsilonGreedy(f64),
    /// A Plackett-Luce draw with weights `exp(score / temperature)`.
    Softmax(f64),
}

/// A drawn slate: the items shown, in display order, with the exact probability of each at
/// its position, and of the whole ordered slate.
#[derive(Clone, Debug, PartialEq)]
pub struct Slate {
    /// The items (label indices), position 1 first.
    pub items: Vec<u32>,
    /// `P(items[j] at position j)` under the policy.
    pub propensities: Vec<f64>,
    /// The probability of the whole ordered slate.
    pub slate_propensity: f64,
}

/// The random stream of the rank draws under `--explore-seed`.
const RANK_STREAM: u64 = 0x7a4b_0001;

impl Exploration {
    /// Checks the policy against `m` items of which `k` are shown.
    pub fn validate(&self, m: usize, k: usize) -> Result<(), String> {
        if let Exploration::Softmax(_) = self {
            let prefixes = (m as f64).powi(k.min(m) as i32 - 1);
            if prefixes > MAX_SOFTMAX_PREFIXES {
                return Err(format!(
                    "--explore softmax: its exact propensities enumerate m^(k-1) = {prefixes} slate prefixes per request ({m} items, k = {k}); at most {MAX_SOFTMAX_PREFIXES}"
                ));
            }
        }
        Ok(())
    }

    /// The request's generator: `seed` (`--explore-seed`) and the request's `id`.
    fn rng(seed: u64, id: u64) -> Rng {
        seeded(seed ^ RANK_STREAM, id)
    }

    /// Draws the shown slate of `k` items (at most all of them) for request `id`.
    pub fn draw(&self, scores: &[f64], k: usize, id: u64, seed: u64) -> Slate {
        let m = scores.len();
        let k = k.min(m);
        let mut rng = Self::rng(seed, id);
        let items = match *self {
            Exploration::Greedy => {
                let mut r = Vec::with_capacity(m);
                ranking(scores, &mut r);
                r.truncate(k);
                r
            }
            Exploration::EpsilonGreedy(epsilon) => {
                let config = TopKConfig {
                    k,
                    rho: epsilon,
                    randomization: Randomization::Uniform,
                    ..TopKConfig::default()
                };
                show(scores, &config, &mut rng).1
            }
            Exploration::Softmax(t) => {
                let w = softmax_weights(scores, t);
                plackett_luce_draw(&w, k, &mut rng)
            }
        };
        let marginals = self.marginals(scores, k);
        let propensities = items
            .iter()
            .enumerate()
            .map(|(j, &a)| marginals[j * m + a as usize])
            .collect();
        let slate_propensity = self.slate_probability(scores, &items);
        Slate {
            items,
            propensities,
            slate_propensity,
        }
    }

    /// `out[j * m + a]`: the probability that item `a` is shown at position `j` (`j < k`).
    pub fn marginals(&self, scores: &[f64], k: usize) -> Vec<f64> {
        let m = scores.len();
        let k = k.min(m);
        let mut out = vec![0.0; k * m];
        match *self {
            Exploration::Greedy | Exploration::EpsilonGreedy(_) => {
                let epsilon = match *self {
                    Exploration::EpsilonGreedy(e) if k < m => e,
                    _ => 0.0,
                };
                let mut top = Vec::with_capacity(m);
                ranking(scores, &mut top);
                for j in 0..k {
                    for a in 0..m {
                        out[j * m + a] = epsilon / m as f64;
                    }
                    out[j * m + top[j] as usize] += 1.0 - epsilon;
                }
            }
            Exploration::Softmax(t) => {
                plackett_luce_marginals(&softmax_weights(scores, t), k, &mut out);
            }
        }
        out
    }

    /// The probability that the policy shows exactly `slate` (in this order).
    pub fn slate_probability(&self, scores: &[f64], slate: &[u32]) -> f64 {
        let m = scores.len();
        let k = slate.len();
        match *self {
            Exploration::Greedy | Exploration::EpsilonGreedy(_) => {
                let epsilon = match *self {
                    Exploration::EpsilonGreedy(e) if k < m => e,
                    _ => 0.0,
                };
                let mut top = Vec::with_capacity(m);
                ranking(scores, &mut top);
                let greedy = if top[..k] == *slate { 1.0 } else { 0.0 };
                // A uniform ordered slate: 1 / (m (m-1) ... (m-k+1)).
                let uniform: f64 = (0..k).map(|j| 1.0 / (m - j) as f64).product();
                (1.0 - epsilon) * greedy + epsilon * uniform
            }
            Exploration::Softmax(t) => {
                let w = softmax_weights(scores, t);
                let mut left: f64 = w.iter().sum();
                let mut p = 1.0;
                for &a in slate {
                    p *= w[a as usize] / left;
                    left -= w[a as usize];
                }
                p
            }
        }
    }
}

/// The smallest softmax weight, relative to the largest: every item keeps a chance at
/// every position (every propensity is positive), and the sums of the weights left, which
/// the draw and the exact marginals divide by, never cancel to rounding noise.
pub const SOFTMAX_FLOOR: f64 = 1e-6;

/// `max(exp((s - max) / t), SOFTMAX_FLOOR)`: the Plackett-Luce weights of a softmax with
/// temperature `t`.
fn softmax_weights(scores: &[f64], t: f64) -> Vec<f64> {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    scores
        .iter()
        .map(|&s| ((s - max) / t).exp().max(SOFTMAX_FLOOR))
        .collect()
}

/// Draws `k` items one by one, each with probability proportional to its weight among the
/// items left.
fn plackett_luce_draw(w: &[f64], k: usize, rng: &mut Rng) -> Vec<u32> {
    let mut left: f64 = w.iter().sum();
    let mut taken = vec![false; w.len()];
    let mut slate = Vec::with_capacity(k);
    for _ in 0..k {
        let mut u = uniform(rng) * left;
        let mut pick = None;
        for (a, &wa) in w.iter().enumerate() {
            if taken[a] {
                continue;
            }
            pick = Some(a);
            if u < wa {
                break;
            }
            u -= wa;
        }
        let Some(a) = pick else { break };
        taken[a] = true;
        left -= w[a];
        slate.push(a as u32);
    }
    slate
}

impl fmt::Display for Exploration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exploration::Greedy => write!(f, "greedy"),
            Exploration::EpsilonGreedy(e) => write!(f, "epsilon-greedy:{e}"),
            Exploration::Softmax(t) => write!(f, "softmax:{t}"),
        }
    }
}

impl FromStr for Exploration {
    type Err = String;

    /// `greedy`, `epsilon-greedy:E` (E in [0, 1]) or `softmax:T` (T > 0, finite;
    /// `plackett-luce:T` too).
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("greedy") {
            return Ok(Exploration::Greedy);
        }
        let expected = || {
            format!("unknown exploration `{s}` (expected greedy, epsilon-greedy:E or softmax:T)")
        };
        let (name, value) = s.split_once(':').ok_or_else(expected)?;
        let value: f64 = value
            .trim()
            .parse()
            .map_err(|_| format!("{}: `{value}` is not a number", name.trim()))?;
        match name.trim().to_ascii_lowercase().as_str() {
            "epsilon-greedy" => {
                if !(0.0..=1.0).contains(&value) {
                    return Err(format!("epsilon-greedy: E must lie in [0, 1], got {value}"));
                }
                Ok(Exploration::EpsilonGreedy(value))
            }
            "softmax" | "plackett-luce" => {
                if !(value.is_finite() && value > 0.0) {
                    return Err(format!(
                        "softmax: the temperature must be finite and > 0, got {value}"
                    ));
                }
                Ok(Exploration::Softmax(value))
            }
            _ => Err(expected()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Every ordered slate of `k` of `m` items.
    fn slates(m: usize, k: usize) -> Vec<Vec<u32>> {
        fn rec(m: usize, k: usize, s: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
            if s.len() == k {
                out.push(s.clone());
                return;
            }
            for a in 0..m as u32 {
                if !s.contains(&a) {
                    s.push(a);
                    rec(m, k, s, out);
                    s.pop();
                }
            }
        }
        let mut out = Vec::new();
        rec(m, k, &mut Vec::new(), &mut out);
        out
    }

    fn policies() -> Vec<Exploration> {
        vec![
            Exploration::Greedy,
            Exploration::EpsilonGreedy(0.3),
            Exploration::EpsilonGreedy(1.0),
            Exploration::Softmax(0.7),
            Exploration::Softmax(5.0),
        ]
    }

    /// The marginals are the sums of the slate probabilities over every ordered slate,
    /// enumerated (and the slate probabilities sum to 1).
    #[test]
    fn propensities_match_enumeration() {
        let scores = [0.4, -1.0, 2.0, 0.9, 0.0];
        let m = scores.len();
        for policy in policies() {
            for k in 1..=m {
                let mut want = vec![0.0; k * m];
                let mut total = 0.0;
                for s in slates(m, k) {
                    let p = policy.slate_probability(&scores, &s);
                    total += p;
                    for (j, &a) in s.iter().enumerate() {
                        want[j * m + a as usize] += p;
                    }
                }
                assert!((total - 1.0).abs() < 1e-12, "{policy} k {k}: {total}");
                let got = policy.marginals(&scores, k);
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() < 1e-12, "{policy} k {k}: {got:?} vs {want:?}");
                }
            }
        }
    }

    /// The slates drawn follow the stated probabilities (frequencies over request ids),
    /// and each drawn slate carries its own marginals and slate probability.
    #[test]
    fn draws_match_their_propensities() {
        let scores = [0.4, -1.0, 2.0, 0.9, 0.0];
        let (m, k, n) = (5, 3, 40_000u64);
        for policy in policies() {
            let marginals = policy.marginals(&scores, k);
            let mut counts = vec![0.0; k * m];
            let mut seen: HashMap<Vec<u32>, (f64, f64)> = HashMap::new();
            for id in 0..n {
                let s = policy.draw(&scores, k, id, 9);
                assert_eq!(s.items.len(), k);
                for (j, (&a, &p)) in s.items.iter().zip(&s.propensities).enumerate() {
                    assert_eq!(p, marginals[j * m + a as usize]);
                    counts[j * m + a as usize] += 1.0;
                }
                let e = seen.entry(s.items.clone()).or_insert((0.0, 0.0));
                e.0 += 1.0;
                e.1 = s.slate_propensity;
            }
            let nf = n as f64;
            for (c, p) in counts.iter().zip(&marginals) {
                let se = (p * (1.0 - p) / nf).sqrt();
                assert!(
                    (c / nf - p).abs() <= 5.0 * se + 1e-12,
                    "{policy}: {c} vs {p}"
                );
            }
            for (s, (c, p)) in seen {
                let se = (p * (1.0 - p) / nf).sqrt();
                assert!(
                    (c / nf - p).abs() <= 5.0 * se + 1e-12,
                    "{policy} {s:?}: {c} vs {p}"
                );
            }
        }
    }

    #[test]
    fn a_request_is_replayed_from_its_id() {
        let scores: Vec<f64> = (0..20).map(|i| (i as f64 * 0.37).sin()).collect();
        for policy in policies() {
            let a: Vec<Slate> = (0..50).map(|id| policy.draw(&scores, 4, id, 1)).collect();
            let b: Vec<Slate> = (0..50).map(|id| policy.draw(&scores, 4, id, 1)).collect();
            assert_eq!(a, b);
        }
        // Another seed, other draws.
        let e = Exploration::Softmax(1.0);
        let a: Vec<Slate> = (0..50).map(|id| e.draw(&scores, 4, id, 1)).collect();
        let b: Vec<Slate> = (0..50).map(|id| e.draw(&scores, 4, id, 2)).collect();
        assert_ne!(a, b);
    }

    #[test]
    fn parsing_names_the_mistake() {
        assert_eq!("greedy".parse(), Ok(Exploration::Greedy));
        assert_eq!(
            "epsilon-greedy:0.1".parse(),
            Ok(Exploration::EpsilonGreedy(0.1))
        );
        assert_eq!("softmax:2".parse(), Ok(Exploration::Softmax(2.0)));
        assert_eq!("plackett-luce:0.5".parse(), Ok(Exploration::Softmax(0.5)));
        for (bad, why) in [
            ("epsilon-greedy:1.5", "[0, 1]"),
            ("softmax:0", "> 0"),
            ("softmax:x", "not a number"),
            ("thompson:1", "unknown exploration"),
            ("softmax", "unknown exploration"),
        ] {
            let e = bad.parse::<Exploration>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(Exploration::Softmax(1.0).validate(1000, 4).is_err());
        assert!(Exploration::Softmax(1.0).validate(46, 3).is_ok());
    }
}
