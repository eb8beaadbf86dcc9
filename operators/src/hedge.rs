//! Hedge over experts: the terminal's choice among a booster's experts and the
//! thresholding grid's choice among its members both use it.

use crate::rng::{Rng, seeded, uniform};
use serde::{Deserialize, Serialize};

/// Hedge (Freund and Schapire 1997) over `N` experts: pick expert `i` with probability
/// proportional to `v^i`, then `v^i <- v^i exp(-loss^i)`.
///
/// The weights are kept as logarithms, so they never underflow however long the stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hedge {
    log_v: Vec<f64>,
    rng: Rng,
}

impl Hedge {
    /// Hedge over `n` experts with equal weights; `seed` drives the random choice.
    pub fn new(n: usize, seed: u64) -> Self {
        Hedge {
            log_v: vec![0.0; n],
            rng: seeded(seed, u64::MAX),
        }
    }

    /// The number of experts.
    pub fn len(&self) -> usize {
        self.log_v.len()
    }

    /// Whether there are no experts.
    pub fn is_empty(&self) -> bool {
        self.log_v.is_empty()
    }

    /// The normalized probabilities of the experts.
    pub fn probabilities(&self) -> Vec<f64> {
        let max = self.log_v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = self.log_v.iter().map(|&l| (l - max).exp()).collect();
        let total: f64 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    }

    /// The expert with the largest weight (0-based; the first on a tie): the one with the
    /// least cumulative loss.
    pub fn leader(&self) -> usize {
        let mut best = 0;
        for (i, &l) in self.log_v.iter().enumerate() {
            if l > self.log_v[best] {
                best = i;
            }
        }
        best
    }

    /// Draws an expert (0-based) with probability proportional to its weight.
    pub fn choose(&mut self) -> usize {
        let u = uniform(&mut self.rng);
        Self::pick(&self.log_v, u)
    }

    /// The expert that a uniform draw `u` in [0, 1) selects by inverting the cumulative
    /// distribution of the weights.
    fn pick(log_v: &[f64], u: f64) -> usize {
        let max = log_v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = log_v.iter().map(|&l| (l - max).exp()).sum();
        let target = u * total;
        let mut acc = 0.0;
        for (i, &l) in log_v.iter().enumerate() {
            acc += (l - max).exp();
            if target < acc {
                return i;
            }
        }
        log_v.len() - 1
    }

    /// Multiplies each expert's weight by `exp(-loss)`.
    pub fn update(&mut self, losses: impl IntoIterator<Item = f64>) {
        for (l, loss) in self.log_v.iter_mut().zip(losses) {
            *l -= loss;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_exp_minus_cumulative_loss() {
        let mut h = Hedge::new(3, 1);
        h.update([1.0, 0.0, 2.0]);
        h.update([1.0, 0.0, 0.0]);
        let p = h.probabilities();
        let z = (-2.0f64).exp() + 1.0 + (-2.0f64).exp();
        assert!((p[0] - (-2.0f64).exp() / z).abs() < 1e-15);
        assert!((p[1] - 1.0 / z).abs() < 1e-15);
        assert!((p[2] - (-2.0f64).exp() / z).abs() < 1e-15);
    }

    #[test]
    fn leader_has_the_least_cumulative_loss_first_on_ties() {
        let mut h = Hedge::new(3, 1);
        assert_eq!(h.leader(), 0);
        h.update([0.5, 0.25, 0.25]);
        assert_eq!(h.leader(), 1);
        h.update([0.0, 0.5, 0.0]);
        assert_eq!(h.leader(), 2);
    }

    #[test]
    fn pick_inverts_the_cumulative_distribution() {
        let log_v = [0.0, 0.0f64.ln_1p(), (3.0f64).ln()]; // weights 1, 1, 3
        assert_eq!(Hedge::pick(&log_v, 0.0), 0);
        assert_eq!(Hedge::pick(&log_v, 0.19), 0);
        assert_eq!(Hedge::pick(&log_v, 0.21), 1);
        assert_eq!(Hedge::pick(&log_v, 0.41), 2);
        assert_eq!(Hedge::pick(&log_v, 0.999), 2);
    }

    #[test]
    fn no_underflow_after_huge_losses() {
        let mut h = Hedge::new(2, 1);
        for _ in 0..100_000 {
            h.update([1.0, 1.0]);
        }
        let p = h.probabilities();
        assert!((p[0] - 0.5).abs() < 1e-12);
        let mut counts = [0; 2];
        for _ in 0..1000 {
            counts[h.choose()] += 1;
        }
        assert!(counts[0] > 400 && counts[1] > 400, "{counts:?}");
    }
}
