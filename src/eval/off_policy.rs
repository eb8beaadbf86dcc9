//! Off-policy estimators of a ranking policy's click-through rate from a log of clicks
//! chosen by another policy (the logging policy), each with a standard error and a 95%
//! confidence interval.
//!
//! The log is a sequence of impressions; impression `i` has logged rows `(a, j, c, p)`:
//! item `a` shown at position `j` (0-based), its click `c` (0 or 1) and the logging
//! policy's marginal propensity `p` of `a` at `j`. The evaluated (target) policy is a
//! deterministic ranking `pi_i` per impression, fixed before the impression's clicks are
//! seen (it may have learned from earlier impressions). Per row, the importance weight is
//! `w = 1{pi_i[j] = a} / p`. The estimators of the click-through rate per shown slot
//! (the Open Bandit Pipeline's, for a ranking evaluated position by position):
//!
//! - **IPW** (position-based): `sum_rows c w / rows`. Unbiased for the target's expected
//!   clicks per (impression, position) under any click model.
//! - **PI-IPW** (position-independent): `sum_rows c 1{a in pi_i} / (k p) / rows`, with `k`
//!   the ranking's length. Unbiased only when a click does not depend on the position.
//! - **SNIPW** (self-normalized): `sum_rows c w / sum_rows w` (`E[w] = 1` per row, so the
//!   denominator estimates the number of rows); slightly biased, usually of smaller
//!   variance. 0 when no row agrees with the policy.
//! - **DR** (doubly robust): `sum_rows (q(pi_i[j], j) + w (c - q(a, j))) / rows`, with `q`
//!   a reward model's click probability fitted online on the earlier impressions only
//!   ([`OnlineLogisticReward`]), so each impression's term is unbiased given the past.
//!
//! Each estimate is a ratio `sum_i y_i / sum_i x_i` of per-impression sums ([`RatioMean`]:
//! `x_i` the rows of impression `i`, or its weights for SNIPW). Its standard error is the
//! delta method's, clustered by impression (the rows of one impression share a user):
//! `sqrt(sum_i (y_i - r x_i)^2 / (n (n - 1))) / mean_i x_i` over `n` impressions, which is
//! `sd / sqrt(n)` of the per-row terms when every impression has one row. The interval is
//! `estimate +- 1.96 stderr` (normal). The learned policy changes between impressions,
//! but only with earlier data, so the terms form a martingale difference sequence and the
//! same formula applies (approximately).

use flowboost_operators::data::Features;
use serde::Serialize;

/// The 97.5% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// An estimate with its standard error and a 95% confidence interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// The estimate.
    pub estimate: f64,
    /// Its standard error.
    pub stderr: f64,
    /// The lower end of the 95% interval, `estimate - 1.96 stderr`.
    pub low: f64,
    /// The upper end of the 95% interval, `estimate + 1.96 stderr`.
    pub high: f64,
}

impl Estimate {
    /// The estimate with its normal 95% interval.
    pub fn normal(estimate: f64, stderr: f64) -> Self {
        Estimate {
            estimate,
            stderr,
            low: estimate - Z95 * stderr,
            high: estimate + Z95 * stderr,
        }
    }

    /// Whether `value` lies in the interval.
    pub fn covers(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// A running mean and variance of single values (Welford), as [`Estimate`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Mean {
    /// Adds a value.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// The number of values.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The mean with its standard error `sd / sqrt(n)` (sample standard deviation; 0 for
    /// fewer than two values).
    pub fn estimate(&self) -> Estimate {
        let stderr = if self.n > 1 {
            (self.m2 / (self.n - 1) as f64 / self.n as f64).sqrt()
        } else {
            0.0
        };
        Estimate::normal(self.mean, stderr)
    }
}

/// A ratio of sums `sum_i y_i / sum_i x_i` over clusters `i` (impressions), with the
/// delta method's standard error (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct RatioMean {
    n: u64,
    y: f64,
    x: f64,
    yy: f64,
    xx: f64,
    xy: f64,
}

impl RatioMean {
    /// Adds a cluster's sums.
    pub fn push(&mut self, y: f64, x: f64) {
        self.n += 1;
        self.y += y;
        self.x += x;
        self.yy += y * y;
        self.xx += x * x;
        self.xy += x * y;
    }

    /// The number of clusters.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The ratio (0 when `sum x` is 0) with its standard error (0 for fewer than two
    /// clusters).
    pub fn estimate(&self) -> Estimate {
        if self.x == 0.0 {
            return Estimate::default();
        }
        let r = self.y / self.x;
        let stderr = if self.n > 1 {
            let n = self.n as f64;
            let residual = (self.yy - 2.0 * r * self.xy + r * r * self.xx).max(0.0);
            (residual / (n * (n - 1.0))).sqrt() / (self.x / n)
        } else {
            0.0
        };
        Estimate::normal(r, stderr)
    }
}

/// One logged row, as the estimators see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoggedRow {
    /// The item shown.
    pub item: u32,
    /// Its position, 0-based.
    pub position: usize,
    /// Whether it was clicked.
    pub click: bool,
    /// The logging policy's probability of this item at this position.
    pub propensity: f64,
}

/// The off-policy estimates of a ranking policy's click-through rate per shown slot,
/// accumulated impression by impression (see the [module documentation](self)).
///
/// ```
/// use flowboost::eval::off_policy::{LoggedRow, OffPolicyEstimators};
///
/// let mut est = OffPolicyEstimators::new(2);
/// let row = |item, position, click| LoggedRow { item, position, click, propensity: 0.5 };
/// // The policy ranks items 1, 0; the log showed 1 then 0 (agreeing), then 0 then 1.
/// est.push(&[row(1, 0, true), row(0, 1, false)], &[1, 0], |_, _| 0.0);
/// est.push(&[row(0, 0, true), row(1, 1, true)], &[1, 0], |_, _| 0.0);
/// // IPW: one click at an agreeing row (weight 2) over 4 rows.
/// assert_eq!(est.ipw().estimate, 0.5);
/// // SNIPW: that click over the weights of the 2 agreeing rows.
/// assert_eq!(est.snipw().estimate, 0.5);
/// // PI-IPW: all three clicks are in the policy's top 2: 3 / (2 * 0.5) / 4.
/// assert_eq!(est.ipw_position_independent().estimate, 0.75);
/// ```
#[derive(Clone, Debug)]
pub struct OffPolicyEstimators {
    k: usize,
    ipw: RatioMean,
    ipw_pi: RatioMean,
    snipw: RatioMean,
    dr: RatioMean,
}

impl OffPolicyEstimators {
    /// Estimators for rankings of length `k` (the positions a policy fills).
    pub fn new(k: usize) -> Self {
        OffPolicyEstimators {
            k: k.max(1),
            ipw: RatioMean::default(),
            ipw_pi: RatioMean::default(),
            snipw: RatioMean::default(),
            dr: RatioMean::default(),
        }
    }

    /// Adds one impression: its logged `rows`, the target policy's `ranking` (at least as
    /// long as the rows' positions; its first `k` items count as its top k), and the
    /// reward model's click probability `q(item, position)` fitted before the impression.
    /// Rows at positions beyond the ranking count with weight 0.
    pub fn push(&mut self, rows: &[LoggedRow], ranking: &[u32], q: impl Fn(u32, usize) -> f64) {
        let top = &ranking[..self.k.min(ranking.len())];
        let (mut ipw, mut pi, mut weights, mut dr) = (0.0, 0.0, 0.0, 0.0);
        for r in rows {
            let c = f64::from(u8::from(r.click));
            let target = ranking.get(r.position).copied();
            let w = if target == Some(r.item) {
                1.0 / r.propensity
            } else {
                0.0
            };
            ipw += c * w;
            weights += w;
            if top.contains(&r.item) {
                pi += c / (self.k as f64 * r.propensity);
            }
            if let Some(t) = target {
                dr += q(t, r.position);
            }
            if w != 0.0 {
                dr += w * (c - q(r.item, r.position));
            }
        }
        let n = rows.len() as f64;
        self.ipw.push(ipw, n);
        self.ipw_pi.push(pi, n);
        self.snipw.push(ipw, weights);
        self.dr.push(dr, n);
    }

    /// The number of impressions.
    pub fn impressions(&self) -> u64 {
        self.ipw.count()
    }

    /// IPW (position-based).
    pub fn ipw(&self) -> Estimate {
        self.ipw.estimate()
    }

    /// Position-independent IPW.
    pub fn ipw_position_independent(&self) -> Estimate {
        self.ipw_pi.estimate()
    }

    /// Self-normalized IPW.
    pub fn snipw(&self) -> Estimate {
        self.snipw.estimate()
    }

    /// Doubly robust.
    pub fn dr(&self) -> Estimate {
        self.dr.estimate()
    }
}

/// The reward model of the doubly robust estimator: a logistic regression of a click on
/// the position, the item, and the item crossed with the context features,
/// `q(x, a, j) = sigmoid(b + b_j + b_a + sum_f x_f t[a, f])`, fitted online by AdaGrad
/// (step 0.1) on the rows it is shown, with the logit of the click rate so far as an
/// offset (`(clicks + 1) / (rows + 2)`); its weights start at 0.
///
/// ```
/// use flowboost::eval::off_policy::OnlineLogisticReward;
/// use flowboost::operators::data::Features;
///
/// let mut q = OnlineLogisticReward::new(3, 2, 1);
/// let x = Features::Dense(vec![1.0]);
/// for i in 0..2_000 {
///     // Item 2 at position 0 is clicked half the time, everything else never.
///     q.learn(&x, 2, 0, i % 2 == 0);
///     q.learn(&x, 1, 0, false);
///     q.learn(&x, 2, 1, false);
/// }
/// assert!(q.predict(&x, 1, 0) < 0.05);
/// assert!((q.predict(&x, 2, 0) - 0.5).abs() < 0.1);
/// ```
#[derive(Clone, Debug)]
pub struct OnlineLogisticReward {
    items: usize,
    positions: usize,
    dim: usize,
    /// `[b, b_j.., b_a.., t[a, f]..]`.
    weights: Vec<f64>,
    /// AdaGrad's sums of squared gradients, one per weight.
    squares: Vec<f64>,
    /// Rows and clicks learned: the model's offset is the logit of the smoothed click
    /// rate so far, `(clicks + 1) / (rows + 2)`.
    rows: f64,
    clicks: f64,
}

/// AdaGrad's step size.
const REWARD_STEP: f64 = 0.1;

impl OnlineLogisticReward {
    /// A model for `items` items, `positions` positions and `dim` context features.
    pub fn new(items: usize, positions: usize, dim: usize) -> Self {
        let n = 1 + positions + items + items * dim;
        OnlineLogisticReward {
            items,
            positions,
            dim,
            weights: vec![0.0; n],
            squares: vec![0.0; n],
            rows: 0.0,
            clicks: 0.0,
        }
    }

    fn cross(&self, item: u32) -> usize {
        1 + self.positions + self.items + item as usize * self.dim
    }

    /// The predicted click probability of `item` at `position` in context `x`.
    pub fn predict(&self, x: &Features, item: u32, position: usize) -> f64 {
        let rate = (self.clicks + 1.0) / (self.rows + 2.0);
        let mut z = (rate / (1.0 - rate)).ln()
            + self.weights[0]
            + self.weights[1 + position.min(self.positions - 1)]
            + self.weights[1 + self.positions + item as usize];
        let base = self.cross(item);
        x.for_each(|f, v| {
            if f < self.dim {
                z += v * self.weights[base + f];
            }
        });
        1.0 / (1.0 + (-z).exp())
    }

    /// Learns from one row: `item` at `position` in context `x`, clicked or not.
    pub fn learn(&mut self, x: &Features, item: u32, position: usize, click: bool) {
        let g = self.predict(x, item, position) - f64::from(u8::from(click));
        self.rows += 1.0;
        self.clicks += f64::from(u8::from(click));
        if g == 0.0 {
            return;
        }
        let step = |i: usize, grad: f64, w: &mut [f64], s: &mut [f64]| {
            s[i] += grad * grad;
            w[i] -= REWARD_STEP * grad / s[i].sqrt();
        };
        let (w, s) = (&mut self.weights, &mut self.squares);
        step(0, g, w, s);
        step(1 + position.min(self.positions - 1), g, w, s);
        step(1 + self.positions + item as usize, g, w, s);
        let base = 1 + self.positions + self.items + item as usize * self.dim;
        let dim = self.dim;
        x.for_each(|f, v| {
            if f < dim && v != 0.0 {
                step(base + f, g * v, w, s);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(item: u32, position: usize, click: bool, propensity: f64) -> LoggedRow {
        LoggedRow {
            item,
            position,
            click,
            propensity,
        }
    }

    /// Three impressions of two rows each, computed by hand.
    #[test]
    fn estimates_and_standard_errors_by_hand() {
        let mut est = OffPolicyEstimators::new(2);
        let ranking = [3, 1];
        let q = |a: u32, j: usize| 0.1 * (a as f64) + 0.05 * j as f64;
        // Impression 1: rows agree at both positions; the first clicked.
        est.push(&[row(3, 0, true, 0.25), row(1, 1, false, 0.5)], &ranking, q);
        // Impression 2: position 0 disagrees (item 1, clicked, in the top 2); position 1
        // agrees (clicked).
        est.push(&[row(1, 0, true, 0.5), row(1, 1, true, 0.2)], &ranking, q);
        // Impression 3: nothing agrees, nothing clicked.
        est.push(&[row(0, 0, false, 0.5), row(2, 1, false, 0.5)], &ranking, q);
        // IPW per impression: y = (4, 5, 0), x = (2, 2, 2).
        let (y, x) = ([4.0, 5.0, 0.0], [2.0, 2.0, 2.0]);
        let check = |e: Estimate, y: [f64; 3], x: [f64; 3]| {
            let r = y.iter().sum::<f64>() / x.iter().sum::<f64>();
            let res: f64 = y.iter().zip(&x).map(|(y, x)| (y - r * x).powi(2)).sum();
            let se = (res / 6.0).sqrt() / (x.iter().sum::<f64>() / 3.0);
            assert!((e.estimate - r).abs() < 1e-12, "{e:?} vs {r}");
            assert!((e.stderr - se).abs() < 1e-12, "{e:?} vs {se}");
            assert!((e.low - (r - Z95 * se)).abs() < 1e-12);
            assert!((e.high - (r + Z95 * se)).abs() < 1e-12);
        };
        check(est.ipw(), y, x);
        assert!((est.ipw().estimate - 1.5).abs() < 1e-12);
        // SNIPW: weights (4 + 2, 5, 0).
        check(est.snipw(), y, [6.0, 5.0, 0.0]);
        assert!((est.snipw().estimate - 9.0 / 11.0).abs() < 1e-12);
        // PI-IPW: clicks on items 3 (p 0.25), 1 (p 0.5), 1 (p 0.2); k = 2.
        check(
            est.ipw_position_independent(),
            [2.0, 1.0 + 2.5, 0.0],
            [2.0, 2.0, 2.0],
        );
        // DR: q(3, 0) = 0.3, q(1, 1) = 0.15 are the policy's direct terms in every
        // impression; corrections where the rows agree: 4 (1 - 0.3) and 2 (0 - 0.15) in
        // impression 1, 5 (1 - 0.15) in impression 2.
        let direct = 0.3 + 0.15;
        check(
            est.dr(),
            [direct + 4.0 * 0.7 - 2.0 * 0.15, direct + 5.0 * 0.85, direct],
            [2.0, 2.0, 2.0],
        );
        assert_eq!(est.impressions(), 3);
    }

    /// One row per impression: the clustered standard error is the plain `sd / sqrt(n)`.
    #[test]
    fn single_row_impressions_give_the_plain_standard_error() {
        let values = [0.0, 2.0, 0.0, 0.0, 4.0, 1.0];
        let mut ratio = RatioMean::default();
        let mut mean = Mean::default();
        for v in values {
            ratio.push(v, 1.0);
            mean.push(v);
        }
        let (a, b) = (ratio.estimate(), mean.estimate());
        assert!((a.estimate - b.estimate).abs() < 1e-12);
        assert!((a.stderr - b.stderr).abs() < 1e-12);
        let m = 7.0 / 6.0;
        let sd = (values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 5.0).sqrt();
        assert!((b.stderr - sd / 6f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn empty_and_degenerate_cases() {
        let est = OffPolicyEstimators::new(3);
        assert_eq!(est.ipw(), Estimate::default());
        assert_eq!(est.snipw(), Estimate::default());
        let mut est = OffPolicyEstimators::new(3);
        // No row agrees: SNIPW has no weight, 0; a position beyond the ranking counts 0.
        est.push(
            &[row(5, 0, true, 0.1), row(4, 3, true, 0.1)],
            &[1, 2, 3],
            |_, _| 0.0,
        );
        assert_eq!(est.snipw().estimate, 0.0);
        assert_eq!(est.ipw().estimate, 0.0);
        assert_eq!(est.ipw().stderr, 0.0);
        let one = Estimate::normal(0.5, 0.1);
        assert!(one.covers(0.6) && !one.covers(0.7));
    }

    /// Unbiasedness by enumeration: under a uniform logging policy over 3 items and 1
    /// slot, the expectation of each impression's IPW and DR terms (over the logged item)
    /// is the policy's value, whatever the reward model.
    #[test]
    fn ipw_and_dr_are_unbiased_by_enumeration() {
        let ctr = [0.2, 0.5, 0.1];
        let q = |a: u32, _: usize| [0.9, 0.1, 0.4][a as usize];
        for policy in 0..3u32 {
            let (mut ipw, mut dr) = (0.0, 0.0);
            for shown in 0..3u32 {
                for click in [false, true] {
                    let p = (1.0 / 3.0)
                        * if click {
                            ctr[shown as usize]
                        } else {
                            1.0 - ctr[shown as usize]
                        };
                    let mut est = OffPolicyEstimators::new(1);
                    est.push(&[row(shown, 0, click, 1.0 / 3.0)], &[policy], q);
                    ipw += p * est.ipw().estimate;
                    dr += p * est.dr().estimate;
                }
            }
            let truth = ctr[policy as usize];
            assert!((ipw - truth).abs() < 1e-12, "{ipw} vs {truth}");
            assert!((dr - truth).abs() < 1e-12, "{dr} vs {truth}");
        }
    }
}
