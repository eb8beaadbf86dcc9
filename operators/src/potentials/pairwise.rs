//! The distribution of the step sum `D_n = X_r - X_l` behind the pairwise potentials of the
//! multi-label ranking boosters, as tables with cumulative sums.
//!
//! OnlineBMR's potential is `phi^n(s) = E L(s + X^n)` with `X^n` the label counts of `n`
//! i.i.d. draws from `u_gamma^Y` (Jung and Tewari 2018, Appendix A). For a pairwise loss
//! `L = w_Y sum_{l in Y, r not in Y} f(s[r] - s[l])`, linearity of expectation leaves one
//! expectation per pair, `E f(g + D_n)` with `g = s[r] - s[l]`, where `D_n = X_r - X_l` is a
//! sum of `n` i.i.d. steps: `+1` (a draw of `r`) with probability `a`, `-1` (a draw of `l`)
//! with probability `a + gamma`, `0` otherwise. Its law depends on `n`, `k`, `|Y|` and
//! `gamma` only, not on the pair, so one [`StepSumTable`] serves every pair of an example,
//! and each pair term is an `O(1)` lookup for an integer or a real gap `g`.

use serde::{Deserialize, Serialize};

/// The pair loss of a pairwise potential, as a function of the gap `g = s[r] - s[l]`
/// between an irrelevant label `r` and a relevant label `l`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PairLoss {
    /// The rank loss: `1(g > 0) + 1/2 1(g = 0)` (the pair is mis-ordered, ties count half).
    Rank,
    /// The hinge loss: `(1 + g)_+`.
    Hinge,
}

impl PairLoss {
    /// The pair loss at gap `g`.
    #[inline]
    pub fn at(self, g: f64) -> f64 {
        match self {
            PairLoss::Rank => {
                if g > 0.0 {
                    1.0
                } else if g == 0.0 {
                    0.5
                } else {
                    0.0
                }
            }
            PairLoss::Hinge => (1.0 + g).max(0.0),
        }
    }
}

/// The step probabilities `(up, down)` of `D_n` for `k` labels, `relevant = |Y|` and edge
/// `gamma`: `up = a = (1 - gamma' |Y|) / k` and `down = a + gamma'`.
///
/// `u_gamma^Y` is a distribution only when `gamma |Y| <= 1`; beyond that (e.g. gamma 0.2
/// with 6 or more relevant labels) the edge is capped at `gamma' = 1 / |Y|` (so `a = 0`:
/// the baseline learner draws relevant labels only), the closest valid baseline. Negative or
/// NaN `gamma` counts as 0.
pub fn step_probabilities(k: usize, relevant: usize, gamma: f64) -> (f64, f64) {
    if k == 0 {
        return (0.0, 0.0);
    }
    let mut g = if gamma > 0.0 { gamma } else { 0.0 };
    if relevant > 0 {
        g = g.min(1.0 / relevant as f64);
    }
    let a = ((1.0 - g * relevant as f64) / k as f64).max(0.0);
    (a, a + g)
}

/// The law of `D_n`, a sum of `n` i.i.d. steps in `{-1, 0, +1}`, with its upper cumulative
/// sums.
///
/// Built by the exact convolution recurrence `P_{j+1}(d) = up P_j(d - 1) + down P_j(d + 1) +
/// (1 - up - down) P_j(d)` (`O(n^2)` once; every term is a sum of non-negative products,
/// so the relative error of each probability is a few `n` ulps, and nothing overflows:
/// probabilities below the smallest double are 0). Kept, for `m` in `-n..=n+1`:
///
/// - `pmf(m) = P(D_n = m)`;
/// - `at_least(m) = P(D_n >= m)`, summed from the top, so small upper tails keep their
///   relative precision;
/// - `excess(m) = E (D_n - m)_+`, by `excess(m) = excess(m + 1) + at_least(m + 1)` (a sum of
///   non-negative terms, no cancellation).
///
/// Every pair term is then a lookup: see [`StepSumTable::rank_term`] and
/// [`StepSumTable::hinge_term`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSumTable {
    n: usize,
    up: f64,
    down: f64,
    /// `P(D = d)` at index `d + n`, `d = -n..=n`.
    pmf: Vec<f64>,
    /// `P(D >= m)` at index `m + n`, `m = -n..=n+1`.
    at_least: Vec<f64>,
    /// `E (D - m)_+` at index `m + n`, `m = -n..=n+1`.
    excess: Vec<f64>,
}

impl StepSumTable {
    /// The table of `D_n` with `P(step = +1) = up`, `P(step = -1) = down` (both clamped to
    /// `[0, 1]`, `down` to at most `1 - up`).
    pub fn new(n: usize, up: f64, down: f64) -> Self {
        let up = if up > 0.0 { up.min(1.0) } else { 0.0 };
        let down = if down > 0.0 { down.min(1.0 - up) } else { 0.0 };
        let stay = (1.0 - up - down).max(0.0);
        let width = 2 * n + 1;
        let mut p = vec![0.0; width];
        let mut next = vec![0.0; width];
        p[n] = 1.0;
        for j in 0..n {
            // Support after j steps: d in -j..=j, i.e. indices n-j..=n+j.
            let lo = n - j;
            let hi = n + j;
            next[lo - 1..=hi + 1].iter_mut().for_each(|v| *v = 0.0);
            for i in lo..=hi {
                let v = p[i];
                next[i + 1] += up * v;
                next[i - 1] += down * v;
                next[i] += stay * v;
            }
            std::mem::swap(&mut p, &mut next);
        }
        let mut at_least = vec![0.0; width + 1];
        let mut excess = vec![0.0; width + 1];
        for i in (0..width).rev() {
            at_least[i] = at_least[i + 1] + p[i];
            excess[i] = excess[i + 1] + at_least[i + 1];
        }
        StepSumTable {
            n,
            up,
            down,
            pmf: p,
            at_least,
            excess,
        }
    }

    /// The table for the multi-label ranking baseline `u_gamma^Y` (see
    /// [`step_probabilities`]).
    pub fn for_labels(n: usize, k: usize, relevant: usize, gamma: f64) -> Self {
        let (up, down) = step_probabilities(k, relevant, gamma);
        Self::new(n, up, down)
    }

    /// The number of steps `n`.
    pub fn steps(&self) -> usize {
        self.n
    }

    /// `(P(step = +1), P(step = -1))`.
    pub fn step_probabilities(&self) -> (f64, f64) {
        (self.up, self.down)
    }

    /// The index of `m` in the cumulative tables, `None` above the support (`m > n`);
    /// values below the support map to `-n`.
    #[inline]
    fn index(&self, m: f64) -> Option<usize> {
        let n = self.n as f64;
        if m > n {
            None
        } else if m <= -n {
            Some(0)
        } else {
            Some((m + n) as usize)
        }
    }

    /// `P(D_n = d)` (0 outside `-n..=n`).
    pub fn pmf(&self, d: i64) -> f64 {
        let i = d + self.n as i64;
        if i < 0 || i >= self.pmf.len() as i64 {
            0.0
        } else {
            self.pmf[i as usize]
        }
    }

    /// `P(D_n >= m)`.
    pub fn at_least(&self, m: i64) -> f64 {
        match self.index(m as f64) {
            None => 0.0,
            Some(i) => self.at_least[i],
        }
    }

    /// `E (D_n - m)_+`.
    pub fn excess(&self, m: i64) -> f64 {
        let lo = -(self.n as i64);
        if m < lo {
            // Every outcome exceeds m: E(D - m) = E(D - lo) + (lo - m) P(D >= lo).
            self.excess[0] + (lo - m) as f64 * self.at_least[0]
        } else {
            match self.index(m as f64) {
                None => 0.0,
                Some(i) => self.excess[i],
            }
        }
    }

    /// `E f(g + D_n)` for the pair loss `loss` and a real gap `g`.
    #[inline]
    pub fn term(&self, loss: PairLoss, g: f64) -> f64 {
        match loss {
            PairLoss::Rank => self.rank_term(g),
            PairLoss::Hinge => self.hinge_term(g),
        }
    }

    /// `E [1(g + D_n > 0) + 1/2 1(g + D_n = 0)] = P(D_n > -g) + 1/2 P(D_n = -g)`: exact for
    /// any real `g` (the half only when `-g` is an integer).
    #[inline]
    pub fn rank_term(&self, g: f64) -> f64 {
        let x = -g;
        let fl = x.floor();
        let above = match self.index(fl + 1.0) {
            None => 0.0,
            Some(i) => self.at_least[i],
        };
        if x == fl && x.abs() <= self.n as f64 {
            above + 0.5 * self.pmf[(x + self.n as f64) as usize]
        } else {
            above
        }
    }

    /// `E (1 + g + D_n)_+`: exact for any real `g`.
    ///
    /// With `t = 1 + g` and `m` the smallest integer above `-t`, the outcomes that count are
    /// `d >= m`, so `E (t + D)_+ = sum_{d >= m} (d - m) P(d) + (m + t) P(D >= m) =
    /// excess(m) + (m + t) at_least(m)`, where `m + t` lies in `(0, 1]`. Below the support
    /// (`m <= -n`) the same formula holds at `m = -n`.
    #[inline]
    pub fn hinge_term(&self, g: f64) -> f64 {
        let t = 1.0 + g;
        let m = (-t).floor() + 1.0;
        let n = self.n as f64;
        if m > n {
            return 0.0;
        }
        let m = m.max(-n);
        let i = (m + n) as usize;
        self.excess[i] + (m + t) * self.at_least[i]
    }

    /// `[E f(g - 1 + D_n), E f(g + D_n), E f(g + 1 + D_n)]` for the pair loss `loss`: the
    /// three terms a pair contributes to a cost vector (adding `e_l` to the relevant label
    /// moves the gap to `g - 1`, adding `e_r` to the irrelevant one moves it to `g + 1`).
    /// The three lookups are neighbours in the tables.
    #[inline]
    pub fn terms3(&self, loss: PairLoss, g: f64) -> [f64; 3] {
        match loss {
            PairLoss::Rank => {
                // f(g + j) = P(D > x - j) + 1/2 P(D = x - j), x = -g.
                let x = -g;
                let fl = x.floor();
                let at = |m: f64| self.index(m).map_or(0.0, |i| self.at_least[i]);
                let mut out = [at(fl + 2.0), at(fl + 1.0), at(fl)];
                if x == fl {
                    for (o, d) in out.iter_mut().zip([fl + 1.0, fl, fl - 1.0]) {
                        if d.abs() <= self.n as f64 {
                            *o += 0.5 * self.pmf[(d + self.n as f64) as usize];
                        }
                    }
                }
                out
            }
            PairLoss::Hinge => {
                let t = 1.0 + g;
                let m = (-t).floor() + 1.0;
                let delta = m + t;
                [
                    self.hinge_at(m + 1.0, delta),
                    self.hinge_at(m, delta),
                    self.hinge_at(m - 1.0, delta),
                ]
            }
        }
    }

    /// `excess(m) + delta at_least(m)` for an integer-valued `m`, extended linearly below the
    /// support (where `excess(m) = excess(-n) + (-n - m)`).
    #[inline]
    fn hinge_at(&self, m: f64, delta: f64) -> f64 {
        let n = self.n as f64;
        if m > n {
            0.0
        } else if m < -n {
            self.excess[0] + (-n - m + delta) * self.at_least[0]
        } else {
            let i = (m + n) as usize;
            self.excess[i] + delta * self.at_least[i]
        }
    }

    /// The approximate heap size of the table in bytes.
    pub fn heap_bytes(&self) -> usize {
        (self.pmf.len() + self.at_least.len() + self.excess.len()) * std::mem::size_of::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_by_hand() {
        let t = StepSumTable::new(1, 0.2, 0.5);
        assert_eq!(t.pmf(-1), 0.5);
        assert!((t.pmf(0) - 0.3).abs() < 1e-15);
        assert_eq!(t.pmf(1), 0.2);
        assert!((t.at_least(0) - 0.5).abs() < 1e-15);
        // E (D - 0)_+ = 0.2; E (D + 1)_+ = 0.3 + 2 * 0.2 = 0.7.
        assert!((t.excess(0) - 0.2).abs() < 1e-15);
        assert!((t.excess(-1) - 0.7).abs() < 1e-15);
        assert!((t.excess(-3) - 2.7).abs() < 1e-15);
        // Rank at g = 0: P(D > 0) + P(D = 0)/2 = 0.2 + 0.15.
        assert!((t.rank_term(0.0) - 0.35).abs() < 1e-15);
        // Hinge at g = 0.5: E (1.5 + D)_+ = 0.5 * 0.5 + 1.5 * 0.3 + 2.5 * 0.2 = 1.2.
        assert!((t.hinge_term(0.5) - 1.2).abs() < 1e-15);
        // Hinge at g = -1.5: E (D - 0.5)_+ = 0.5 * 0.2.
        assert!((t.hinge_term(-1.5) - 0.1).abs() < 1e-15);
        // Far from the support.
        assert_eq!(t.hinge_term(-10.0), 0.0);
        assert!((t.hinge_term(10.0) - (11.0 - 0.3)).abs() < 1e-13);
        assert_eq!(t.rank_term(-10.0), 0.0);
        assert!((t.rank_term(10.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn zero_steps_is_the_loss_itself() {
        let t = StepSumTable::new(0, 0.3, 0.4);
        for g in [-2.0, -1.0, -0.25, 0.0, 0.7, 3.0] {
            assert_eq!(t.rank_term(g), PairLoss::Rank.at(g), "g={g}");
            assert!(
                (t.hinge_term(g) - PairLoss::Hinge.at(g)).abs() < 1e-15,
                "g={g}"
            );
        }
    }

    #[test]
    fn capped_edge_keeps_a_distribution() {
        let (a, b) = step_probabilities(14, 8, 0.2);
        assert_eq!(a, 0.0);
        assert!((b - 0.125).abs() < 1e-15);
        let (a, b) = step_probabilities(6, 2, 0.1);
        assert!((a - 0.8 / 6.0).abs() < 1e-15 && (b - a - 0.1).abs() < 1e-15);
    }
}
