//! An online linear learner in the spirit of Vowpal Wabbit's default learner
//! (`--adaptive --normalized --invariant`): logistic regression for binary tasks, softmax
//! regression otherwise.
//!
//! # Model
//!
//! The schema fixes the inputs: one per numeric attribute, one per value of a nominal
//! attribute (one-hot; an out-of-range value index activates nothing), and a bias (always
//! 1). Missing values (`NaN`) and infinities count as absent, like zeros. A
//! [`Task::Binary`] schema with two labels gets one weight vector and predicts
//! `[1 - p, p]`, `p = σ(w · x)`; any other schema gets `k` weight vectors and predicts
//! `softmax(W x)`. Parameters live in one flat vector, one block per input:
//! `[scale s_j, weights w_{j,0..m}, AdaGrad sums G_{j,0..m}]` (`m` = 1 or `k`), so an
//! example touches one contiguous block per non-zero input.
//!
//! # Update (one example `x`, label `y`, importance weight `h`)
//!
//! The learner works in *normalized coordinates*: `x̃_j = x_j / s_j` with `s_j = max |x_j|`
//! seen so far, and `w̃_j = w_j s_j`, so that `w̃ · x̃ = w · x`. This is the algebra of VW's
//! normalized update (Ross, Mineiro & Langford 2013, "Normalized online learning", NAG)
//! rewritten so that nothing overflows for huge feature values:
//!
//! 1. **Scale.** For each input with `|x_j| > s_j`: VW rescales the raw weight so that it
//!    is as if the new scale had always been used (`w_j *= s_j/|x_j|` with adaptive rates,
//!    `(s_j/|x_j|)²` without); in normalized coordinates that leaves `w̃_j` unchanged (with
//!    adaptive rates, plus `G_j *= (s_j/|x_j|)²`) or multiplies it by `s_j/|x_j|` (without).
//!    Then `s_j = |x_j|`. As in the NAG paper, this happens before the prediction, and
//!    [`predict`](super::WeakLearner::predict) computes as if it had happened.
//! 2. **Predict** the scores `P = W̃ x̃` and the gradient of the loss with respect to them:
//!    `g = p - y` (logistic: `p = σ(P)`, `y ∈ {0, 1}`; softmax: `g_c = p_c - 1{c = y}`).
//! 3. **Global normalizer.** `N` = the `h`-weighted mean of `|x̃|²` over the examples
//!    learned so far (this one included); the rates are multiplied by
//!    `μ = N^{power_t - 1}` with adaptive rates (`1/sqrt(N)` for VW's default
//!    `power_t = 0.5`) or `1/N` without (VW's `average_update`).
//! 4. **Adaptive rates** (AdaGrad, Duchi, Hazan & Singer 2011): `G_{j,c} += h g_c² x̃_j²`,
//!    `rate_{j,c} = G_{j,c}^{-power_t}` (0 while `G` is 0); without `adaptive`, rate 1 and a
//!    global decay `t^{-power_t}` with `t` the total importance weight seen.
//! 5. **Step.** Learning time `T = learning_rate · h` (times `t^{-power_t}` without
//!    adaptive rates). Each weight vector moves along its rate-scaled input,
//!    `w̃_{j,c} += u_c μ rate_{j,c} x̃_j`, which moves score `c` by `u_c ppu_c` with
//!    `ppu_c = μ Σ_j x̃_j² rate_{j,c}`. With `invariant`, `u_c` follows the
//!    importance-aware update of Karampatziakis & Langford 2011 ("Online importance weight
//!    aware updates"): the scores follow the gradient flow `dP_c/dt = -ppu_c g_c(P)` for
//!    `t ∈ [0, T]`. For the logistic loss this has the closed form `δ + e^{z0}(e^δ - 1) =
//!    T ppu` for the margin increase `δ` (`z0 = ±P` the margin), solved by a safeguarded
//!    Newton iteration; for softmax there is no closed form, and the `k`-dimensional ODE is
//!    integrated numerically (RK4, steps of at most 0.1 in any score): this is the exact
//!    definition of the invariant update (infinitely many infinitesimal steps, rates frozen
//!    during the update), at `O(k)` cost per integration step and independent of the
//!    number of inputs; a one-dimensional shortcut (a logistic step on the true class's
//!    margin, say) would change the loss being minimized. Without `invariant`, the plain
//!    gradient step `u_c = -T g_c`. See the `importance` module for the derivations.
//! 6. **L2.** With `l2 > 0`, all weights shrink by `exp(-l2 · T)` (the flow of the
//!    penalty `l2/2 |w̃|²` over the same learning time), kept lazily as one global factor
//!    as VW does.
//!
//! With VW's defaults (learning rate 0.5, `power_t` 0.5, adaptive, normalized, invariant)
//! this is VW's update except that the logistic invariant update is solved to machine
//! precision instead of VW's approximation of Lambert's W, the arithmetic is `f64`, and the
//! scale update precedes the prediction. With `power_t ≠ 0.5` and adaptive rates the rates
//! are `G̃^{-power_t}` in normalized coordinates, which keeps predictions invariant to
//! feature scaling (VW's formulas differ there).
//!
//! The learner is deterministic (zero initial weights, no randomness): the seed of
//! [`LinearLearner::new`] is accepted for the uniform weak-learner interface and unused.

mod encoding;
mod importance;
mod link;

use self::encoding::Encoding;
use self::importance::{logistic_margin_step, softmax_flow};
use self::link::{sanitize, sigmoid, softmax_in_place};
use super::WeakLearner;
use crate::data::{Features, Schema, Task};
use serde::{Deserialize, Serialize};

/// The parameters of a [`LinearLearner`]; the defaults are Vowpal Wabbit's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinearConfig {
    /// The base learning rate `η` (VW's `-l`, default 0.5).
    pub learning_rate: f64,
    /// The exponent of the rate decay (VW's `--power_t`, default 0.5): AdaGrad rates
    /// `G^{-power_t}`, or the global decay `t^{-power_t}` without adaptive rates.
    pub power_t: f64,
    /// L2 regularization strength (VW's `--l2`, default 0).
    pub l2: f64,
    /// Per-input AdaGrad rates (VW's `--adaptive`, default on).
    pub adaptive: bool,
    /// Per-input scale normalization and the global normalizer (VW's `--normalized`,
    /// default on).
    pub normalized: bool,
    /// Importance-weight-aware updates (VW's `--invariant`, default on).
    pub invariant: bool,
}

impl Default for LinearConfig {
    fn default() -> Self {
        LinearConfig {
            learning_rate: 0.5,
            power_t: 0.5,
            l2: 0.0,
            adaptive: true,
            normalized: true,
            invariant: true,
        }
    }
}

/// Without normalization, inputs are clamped to this magnitude so that squares stay finite.
const RAW_INPUT_LIMIT: f64 = 1e100;
/// The global L2 factor is folded into the weights when it falls below this.
const MIN_CONTRACTION: f64 = 1e-100;

/// An online linear learner: logistic regression (binary tasks) or softmax regression
/// (multiclass, and multi-label schemas fed single labels), trained by VW-style adaptive,
/// normalized, importance-invariant gradient steps. See the [module documentation](self).
///
/// ```
/// use flowboost_operators::data::{Features, Schema, Task};
/// use flowboost_operators::learners::{LinearConfig, LinearLearner, WeakLearner};
///
/// let schema = Schema::numeric(2, 2, Task::Binary);
/// let mut learner = LinearLearner::new(&schema, LinearConfig::default(), 0);
/// let x = Features::Dense(vec![3.0, -0.5]);
/// let mut p = [0.0; 2];
/// learner.predict(&x, &mut p);
/// assert_eq!(p, [0.5, 0.5]);
/// // Label 1 (positive) with importance weight 2: the same as two updates of weight 1
/// // for a constant learning rate, and never an overshoot however large the weight.
/// learner.learn(&x, 1, 2.0);
/// learner.predict(&x, &mut p);
/// assert!(p[1] > 0.5 && p[1] < 1.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinearLearner {
    config: LinearConfig,
    /// The number of labels `k`.
    k: usize,
    /// The number of weight vectors `m`: 1 (logistic) or `k` (softmax).
    outputs: usize,
    encoding: Encoding,
    /// One block of `1 + 2m` values per input: `[s_j, w̃_{j,0..m}, G_{j,0..m}]`.
    params: Vec<f64>,
    /// A factor multiplying every weight (lazy L2 shrinkage).
    contraction: f64,
    /// The total importance weight learned from.
    total_weight: f64,
    /// The importance-weighted mean of `|x̃|²` (the global normalizer `N`).
    mean_norm: f64,
    /// Per-example scratch space (scores, gradients, ppu, update coefficients, ODE work).
    #[serde(skip)]
    work: Vec<f64>,
}

impl LinearLearner {
    /// A learner for `schema`'s attributes and labels, with all weights zero (so it first
    /// predicts the uniform distribution). `seed` is unused: the learner has no randomness.
    pub fn new(schema: &Schema, config: LinearConfig, seed: u64) -> Self {
        let _ = seed;
        let k = schema.num_labels();
        let outputs = if schema.task == Task::Binary && k == 2 {
            1
        } else {
            k
        };
        let encoding = Encoding::new(schema);
        let params = vec![0.0; encoding.width() * (1 + 2 * outputs)];
        LinearLearner {
            config,
            k,
            outputs,
            encoding,
            params,
            contraction: 1.0,
            total_weight: 0.0,
            mean_norm: 0.0,
            work: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LinearConfig {
        &self.config
    }

    /// Whether the learner is a logistic regression (binary schema) rather than softmax.
    pub fn is_logistic(&self) -> bool {
        self.outputs == 1
    }

    /// The number of weights (inputs times weight vectors).
    pub fn num_weights(&self) -> usize {
        self.num_inputs() * self.outputs
    }

    /// The number of encoded inputs (numeric attributes, nominal values, and the bias).
    pub fn num_inputs(&self) -> usize {
        self.encoding.width()
    }

    /// The total importance weight learned from so far.
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }

    /// Writes the raw scores `W x` (one per weight vector: 1 for logistic, `k` for softmax)
    /// into `scores`, computing as if the scale update of [`learn`](WeakLearner::learn) had
    /// happened (without changing the learner).
    fn scores_into(&self, x: &Features, scores: &mut [f64]) {
        let m = self.outputs;
        let stride = 1 + 2 * m;
        let normalized = self.config.normalized;
        let adaptive = self.config.adaptive;
        scores.fill(0.0);
        let params = &self.params;
        self.encoding.for_each(x, |j, v| {
            let block = &params[j * stride..(j + 1) * stride];
            let (xt, r) = if normalized {
                let a = v.abs();
                let s = block[0];
                if a > s {
                    let r = if !adaptive && s > 0.0 { s / a } else { 1.0 };
                    (v / a, r)
                } else {
                    (v / s, 1.0)
                }
            } else {
                (v.clamp(-RAW_INPUT_LIMIT, RAW_INPUT_LIMIT), 1.0)
            };
            for (score, w) in scores.iter_mut().zip(&block[1..1 + m]) {
                *score += w * r * xt;
            }
        });
        for score in scores.iter_mut() {
            *score = sanitize(*score * self.contraction);
        }
    }

    /// The rate of an input whose AdaGrad sum is `g`.
    #[inline(always)]
    fn rate(adaptive: bool, power_t: f64, g: f64) -> f64 {
        if !adaptive {
            1.0
        } else if g > 0.0 {
            if power_t == 0.5 {
                1.0 / g.sqrt()
            } else {
                g.powf(-power_t)
            }
        } else {
            0.0
        }
    }
}

impl WeakLearner for LinearLearner {
    fn num_labels(&self) -> usize {
        self.k
    }

    fn predict(&self, x: &Features, out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.k, "predict: out.len() must be k");
        if out.len() != self.k || self.k == 0 {
            let n = out.len();
            out.fill(1.0 / n as f64);
            return;
        }
        if self.outputs == 1 {
            let mut s = [0.0];
            self.scores_into(x, &mut s);
            out[0] = sigmoid(-s[0]);
            out[1] = sigmoid(s[0]);
        } else {
            self.scores_into(x, out);
            softmax_in_place(out);
        }
    }

    fn learn(&mut self, x: &Features, label: u32, weight: f64) {
        let h = weight;
        let y = label as usize;
        if !h.is_finite() || h <= 0.0 || y >= self.k || self.outputs == 0 {
            return;
        }
        let m = self.outputs;
        let stride = 1 + 2 * m;
        let LinearConfig {
            learning_rate,
            power_t,
            l2,
            adaptive,
            normalized,
            invariant,
        } = self.config;
        if self.work.len() != 10 * m {
            self.work.resize(10 * m, 0.0);
        }
        let (scores, rest) = self.work.split_at_mut(m);
        let (grad, rest) = rest.split_at_mut(m);
        let (ppu, rest) = rest.split_at_mut(m);
        let (coef, ode) = rest.split_at_mut(m);

        // 1. Scale update, 2. scores.
        scores.fill(0.0);
        let mut norm = 0.0;
        let params = &mut self.params;
        self.encoding.for_each(x, |j, v| {
            let block = &mut params[j * stride..(j + 1) * stride];
            let xt = if normalized {
                let a = v.abs();
                let s = block[0];
                if a > s {
                    if s > 0.0 {
                        let r = s / a;
                        if adaptive {
                            let r2 = r * r;
                            block[1 + m..].iter_mut().for_each(|g| *g *= r2);
                        } else {
                            block[1..1 + m].iter_mut().for_each(|w| *w *= r);
                        }
                    }
                    block[0] = a;
                }
                v / block[0]
            } else {
                v.clamp(-RAW_INPUT_LIMIT, RAW_INPUT_LIMIT)
            };
            for (score, w) in scores.iter_mut().zip(&block[1..1 + m]) {
                *score += w * xt;
            }
            norm += xt * xt;
        });
        for score in scores.iter_mut() {
            *score = sanitize(*score * self.contraction);
        }
        if m == 1 {
            grad[0] = sigmoid(scores[0]) - if y == 1 { 1.0 } else { 0.0 };
        } else {
            grad.copy_from_slice(scores);
            softmax_in_place(grad);
            grad[y] -= 1.0;
        }

        // 3. Global normalizer.
        self.total_weight += h;
        let mult = if normalized {
            self.mean_norm += (h / self.total_weight) * (norm - self.mean_norm);
            if self.mean_norm.is_nan() || self.mean_norm <= 0.0 {
                return;
            }
            if adaptive {
                if power_t == 0.5 {
                    1.0 / self.mean_norm.sqrt()
                } else {
                    self.mean_norm.powf(power_t - 1.0)
                }
            } else {
                1.0 / self.mean_norm
            }
        } else {
            1.0
        };
        let time = if adaptive {
            learning_rate * h
        } else {
            learning_rate * h * self.total_weight.powf(-power_t)
        };

        // 4. AdaGrad sums and the score sensitivity ppu.
        ppu.fill(0.0);
        let sq_grad: &mut [f64] = coef;
        for (s, g) in sq_grad.iter_mut().zip(grad.iter()) {
            *s = h * g * g;
        }
        self.encoding.for_each(x, |j, v| {
            let block = &mut params[j * stride..(j + 1) * stride];
            let xt = if normalized {
                v / block[0]
            } else {
                v.clamp(-RAW_INPUT_LIMIT, RAW_INPUT_LIMIT)
            };
            let x2 = xt * xt;
            let (_, rest) = block.split_at_mut(1 + m);
            for ((acc, p), s) in rest.iter_mut().zip(ppu.iter_mut()).zip(sq_grad.iter()) {
                if adaptive {
                    *acc += s * x2;
                }
                *p += x2 * Self::rate(adaptive, power_t, *acc);
            }
        });

        // 5. The step in score space, then the update coefficients.
        if m == 1 {
            let p = ppu[0] * mult;
            coef[0] = if !p.is_finite() || p <= 0.0 {
                0.0
            } else if invariant {
                let sign = if y == 1 { 1.0 } else { -1.0 };
                sign * logistic_margin_step(sign * scores[0], time * p) / p
            } else {
                -time * grad[0]
            };
        } else if invariant {
            for p in ppu.iter_mut() {
                *p *= mult;
                if !p.is_finite() {
                    *p = 0.0;
                }
            }
            // `coef` holds the starting scores, `scores` the integrated ones.
            coef.copy_from_slice(scores);
            softmax_flow(scores, ppu, y, time, ode);
            for c in 0..m {
                coef[c] = if ppu[c] > 0.0 {
                    (scores[c] - coef[c]) / ppu[c]
                } else {
                    0.0
                };
            }
        } else {
            for c in 0..m {
                coef[c] = -time * grad[c];
            }
        }
        let scale = mult / self.contraction;
        for c in coef.iter_mut() {
            *c *= scale;
            if !c.is_finite() {
                *c = 0.0;
            }
        }
        self.encoding.for_each(x, |j, v| {
            let block = &mut params[j * stride..(j + 1) * stride];
            let xt = if normalized {
                v / block[0]
            } else {
                v.clamp(-RAW_INPUT_LIMIT, RAW_INPUT_LIMIT)
            };
            let (head, acc) = block.split_at_mut(1 + m);
            for ((w, g), u) in head[1..].iter_mut().zip(acc.iter()).zip(coef.iter()) {
                *w += u * xt * Self::rate(adaptive, power_t, *g);
            }
        });

        // 6. L2 shrinkage.
        if l2 > 0.0 {
            self.contraction *= (-l2 * time).exp();
            if self.contraction < MIN_CONTRACTION {
                let c = self.contraction;
                for block in self.params.chunks_exact_mut(stride) {
                    block[1..1 + m].iter_mut().for_each(|w| *w *= c);
                }
                self.contraction = 1.0;
            }
        }
    }
}
