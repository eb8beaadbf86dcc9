//! The hidden concept of a synthetic stream: a random two-layer network of steep `tanh`
//! units ("soft hyperplanes"), each looking at a few input features.

use flowboost_operators::rng::Rng;
use rand::{Rng as _, RngExt};

/// A standard normal draw (Box–Muller; one of the pair is used).
pub(super) fn normal(rng: &mut Rng) -> f64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - rng.random_range(0.0..1.0f64);
    let u2 = rng.random_range(0.0..1.0f64);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A uniform draw in `[0, 1)` from 53 random bits.
#[inline]
pub(super) fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `score_o(x) = Σ_i a_{o,i} tanh(κ (w_u · x + b_u))` over a few hidden units `u` per output.
#[derive(Clone, Debug)]
pub(super) struct Concept {
    /// Inputs per hidden unit.
    fan_in: usize,
    /// Feature index of each hidden unit's inputs (`units × fan_in`).
    unit_inputs: Vec<u32>,
    /// The matching weights, scaled so that `w · x` has standard deviation 1 for uniform
    /// features in `[-1, 1)`.
    unit_weights: Vec<f64>,
    unit_bias: Vec<f64>,
    /// Hidden units per output.
    fan_out: usize,
    /// The hidden units of each output (`outputs × fan_out`) and their weights.
    output_units: Vec<u32>,
    output_weights: Vec<f64>,
    steepness: f64,
}

impl Concept {
    /// A random concept over `dim` features with `outputs` outputs.
    pub(super) fn new(rng: &mut Rng, dim: usize, outputs: usize) -> Self {
        let units = ((2.0 * (outputs as f64).sqrt()) as usize + 3).clamp(4, 32);
        let fan_in = dim.min(4);
        let fan_out = units.min(4);
        let mut pool: Vec<u32> = (0..dim as u32).collect();
        let mut unit_inputs = Vec::with_capacity(units * fan_in);
        let mut unit_weights = Vec::with_capacity(units * fan_in);
        let mut unit_bias = Vec::with_capacity(units);
        for _ in 0..units {
            // A partial Fisher–Yates shuffle picks `fan_in` distinct features.
            for i in 0..fan_in {
                let j = rng.random_range(i..dim);
                pool.swap(i, j);
            }
            unit_inputs.extend_from_slice(&pool[..fan_in]);
            let w: Vec<f64> = (0..fan_in).map(|_| normal(rng)).collect();
            // Var(w · x) = |w|² / 3 for x uniform in [-1, 1): scale to 1.
            let norm = (w.iter().map(|v| v * v).sum::<f64>() / 3.0)
                .sqrt()
                .max(1e-12);
            unit_weights.extend(w.iter().map(|v| v / norm));
            unit_bias.push(rng.random_range(-0.5..0.5));
        }
        let mut unit_pool: Vec<u32> = (0..units as u32).collect();
        let mut output_units = Vec::with_capacity(outputs * fan_out);
        let mut output_weights = Vec::with_capacity(outputs * fan_out);
        for _ in 0..outputs {
            for i in 0..fan_out {
                let j = rng.random_range(i..units);
                unit_pool.swap(i, j);
            }
            output_units.extend_from_slice(&unit_pool[..fan_out]);
            output_weights.extend((0..fan_out).map(|_| normal(rng)));
        }
        Concept {
            fan_in,
            unit_inputs,
            unit_weights,
            unit_bias,
            fan_out,
            output_units,
            output_weights,
            steepness: 2.0,
        }
    }

    /// The number of hidden units.
    pub(super) fn units(&self) -> usize {
        self.unit_bias.len()
    }

    /// The number of outputs.
    pub(super) fn outputs(&self) -> usize {
        self.output_units.len() / self.fan_out
    }

    /// Writes every output's score for `x` into `scores`, using `hidden` (one value per
    /// hidden unit) as scratch space.
    pub(super) fn scores(&self, x: &[f64], hidden: &mut [f64], scores: &mut [f64]) {
        for (u, h) in hidden.iter_mut().enumerate() {
            let span = u * self.fan_in..(u + 1) * self.fan_in;
            let z: f64 = self.unit_inputs[span.clone()]
                .iter()
                .zip(&self.unit_weights[span])
                .map(|(&j, w)| w * x[j as usize])
                .sum();
            *h = (self.steepness * (z + self.unit_bias[u])).tanh();
        }
        for (o, s) in scores.iter_mut().enumerate() {
            let span = o * self.fan_out..(o + 1) * self.fan_out;
            *s = self.output_units[span.clone()]
                .iter()
                .zip(&self.output_weights[span])
                .map(|(&u, a)| a * hidden[u as usize])
                .sum();
        }
    }
}
