//! OnlineBMR's potentials `phi^n` for the rank and hinge losses (Jung and Tewari 2018,
//! eq. 1), and the cost vectors `c[j] = phi^n(s + e_j)` (eq. 2), computed exactly.
//!
//! `phi^n(s) = E L^Y(s + X^n) = w_Y sum_{l in Y} sum_{r not in Y} E f(s[r] - s[l] + D_n)`
//! with `D_n = X_r - X_l` tabulated once per `|Y|` by [`StepSumTable`]. Adding `e_j`
//! changes only the pairs that contain `j`, so a whole cost vector costs three neighbouring
//! table lookups per (relevant, irrelevant) pair, `O(|Y| |Y^c|)`, whatever `n`:
//!
//! ```text
//! B      = sum_{l, r} F(g_lr),                F(g) = E f(g + D_n), g_lr = s[r] - s[l]
//! c[l]   = w_Y (B + sum_{r not in Y} (F(g_lr - 1) - F(g_lr)))     for l in Y
//! c[r]   = w_Y (B + sum_{l in Y}     (F(g_lr + 1) - F(g_lr)))     for r not in Y
//! ```

use super::pairwise::{PairLoss, StepSumTable};
use serde::{Deserialize, Serialize};

/// The number of `|Y|` tables a potential keeps by default (least recently used evicted).
pub const DEFAULT_TABLE_CAPACITY: usize = 32;

/// Whether `relevant` is a valid label set for `k` labels: strictly increasing (sorted,
/// no repeats) and every label below `k`.
pub fn is_label_set(relevant: &[u32], k: usize) -> bool {
    relevant.windows(2).all(|w| w[0] < w[1]) && relevant.last().is_none_or(|&l| (l as usize) < k)
}

#[derive(Clone, Debug)]
struct CachedTable {
    relevant: usize,
    last_use: u64,
    table: StepSumTable,
}

/// The potential `phi^n` of a pairwise loss for `k` labels and edge `gamma`, with `n`
/// weak learners left (stage `i` of `N` uses `n = N - i`).
///
/// The tables of `D_n` are built lazily per label-set size `|Y|` and kept in a small
/// least-recently-used cache (at most [`DEFAULT_TABLE_CAPACITY`] by default), so a stage
/// builds each table once in practice. The cache is not part of the serialized state: it
/// is rebuilt on demand after a restore, with identical values.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankingPotential {
    loss: PairLoss,
    n: usize,
    k: usize,
    gamma: f64,
    capacity: usize,
    #[serde(skip)]
    tables: Vec<CachedTable>,
    #[serde(skip)]
    clock: u64,
    #[serde(skip)]
    irrelevant: Vec<u32>,
}

impl RankingPotential {
    /// The potential of `loss` with `n` draws left, `k` labels and edge `gamma`.
    pub fn new(loss: PairLoss, n: usize, k: usize, gamma: f64) -> Self {
        RankingPotential {
            loss,
            n,
            k,
            gamma,
            capacity: DEFAULT_TABLE_CAPACITY,
            tables: Vec::new(),
            clock: 0,
            irrelevant: Vec::new(),
        }
    }

    /// The same potential keeping at most `capacity` (at least 1) tables.
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// The pair loss.
    pub fn loss(&self) -> PairLoss {
        self.loss
    }

    /// The number of draws left `n`.
    pub fn steps(&self) -> usize {
        self.n
    }

    /// The number of tables currently cached.
    pub fn cached_tables(&self) -> usize {
        self.tables.len()
    }

    /// The table of `D_n` for label sets of `relevant` labels (built on first use).
    pub fn table(&mut self, relevant: usize) -> &StepSumTable {
        self.clock += 1;
        let now = self.clock;
        let pos = match self.tables.iter().position(|t| t.relevant == relevant) {
            Some(p) => p,
            None => {
                let entry = CachedTable {
                    relevant,
                    last_use: now,
                    table: StepSumTable::for_labels(self.n, self.k, relevant, self.gamma),
                };
                if self.tables.len() >= self.capacity {
                    let oldest = (0..self.tables.len())
                        .min_by_key(|&i| self.tables[i].last_use)
                        .unwrap_or(0);
                    self.tables[oldest] = entry;
                    oldest
                } else {
                    self.tables.push(entry);
                    self.tables.len() - 1
                }
            }
        };
        self.tables[pos].last_use = now;
        &self.tables[pos].table
    }

    /// Fills the irrelevant labels `0..k` minus `relevant` (sorted) into the scratch list.
    fn complement(&mut self, relevant: &[u32]) {
        self.irrelevant.clear();
        let mut it = relevant.iter().peekable();
        for j in 0..self.k as u32 {
            if it.peek() == Some(&&j) {
                it.next();
            } else {
                self.irrelevant.push(j);
            }
        }
    }

    /// `phi^n(s)` for the label set `relevant`; `None` when there is no (relevant,
    /// irrelevant) pair or the input is invalid (`scores.len() != k`, labels unsorted,
    /// repeated or out of range).
    pub fn value(&mut self, scores: &[f64], relevant: &[u32]) -> Option<f64> {
        if scores.len() != self.k || !is_label_set(relevant, self.k) {
            return None;
        }
        let pairs = relevant.len() * (self.k - relevant.len());
        if pairs == 0 {
            return None;
        }
        self.complement(relevant);
        let loss = self.loss;
        let irrelevant = std::mem::take(&mut self.irrelevant);
        let table = self.table(relevant.len());
        let mut sum = 0.0;
        for &l in relevant {
            let sl = scores[l as usize];
            for &r in &irrelevant {
                sum += table.term(loss, scores[r as usize] - sl);
            }
        }
        self.irrelevant = irrelevant;
        Some(sum / pairs as f64)
    }

    /// Writes the cost vector `out[j] = phi^n(s + e_j)`, `j = 0..k`, and returns `true`;
    /// with `F(g) = E f(g + D_n)` and `g_lr = s[r] - s[l]`, adding `e_j` only moves the
    /// gaps of the pairs that contain `j`, so with `B = sum_{l, r} F(g_lr)`:
    /// `c[l] = w_Y (B + sum_{r not in Y} (F(g_lr - 1) - F(g_lr)))` for `l in Y` and
    /// `c[r] = w_Y (B + sum_{l in Y} (F(g_lr + 1) - F(g_lr)))` for `r not in Y`: three
    /// neighbouring table lookups per pair ([`StepSumTable::terms3`]), `O(|Y| |Y^c|)`.
    ///
    /// returns `false` with `out` all zero when there is no (relevant, irrelevant) pair or
    /// the input is invalid (see [`value`](Self::value); `out.len()` must be `k` too).
    pub fn cost_vector(&mut self, scores: &[f64], relevant: &[u32], out: &mut [f64]) -> bool {
        out.iter_mut().for_each(|v| *v = 0.0);
        if scores.len() != self.k || out.len() != self.k || !is_label_set(relevant, self.k) {
            return false;
        }
        let pairs = relevant.len() * (self.k - relevant.len());
        if pairs == 0 {
            return false;
        }
        self.complement(relevant);
        let loss = self.loss;
        let irrelevant = std::mem::take(&mut self.irrelevant);
        let table = self.table(relevant.len());
        let mut base = 0.0;
        for &l in relevant {
            let sl = scores[l as usize];
            let mut dl = 0.0;
            for &r in &irrelevant {
                let [minus, zero, plus] = table.terms3(loss, scores[r as usize] - sl);
                base += zero;
                dl += minus - zero;
                out[r as usize] += plus - zero;
            }
            out[l as usize] = dl;
        }
        self.irrelevant = irrelevant;
        let w = 1.0 / pairs as f64;
        out.iter_mut().for_each(|v| *v = w * (base + *v));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_sets() {
        assert!(is_label_set(&[], 3));
        assert!(is_label_set(&[0, 2], 3));
        assert!(!is_label_set(&[2, 0], 3));
        assert!(!is_label_set(&[1, 1], 3));
        assert!(!is_label_set(&[3], 3));
    }

    #[test]
    fn one_draw_left_by_hand() {
        // k = 3, Y = {0}, gamma = 0.1: a = 0.3, u = (0.4, 0.3, 0.3); s = 0, n = 1, rank loss.
        // c[0] = phi^1(e_0): gaps -1 for both pairs; a pair is hit (gap 0, loss 1/2) only
        // when its r is drawn (0.3): E = 0.15 per pair, c[0] = 0.15.
        // c[1] = phi^1(e_1): pair (0,1) gap 1 -> 1 unless 0 is drawn (gap 0: 1/2):
        // 0.6 + 0.4 * 0.5 = 0.8; pair (0,2) gap 0 -> 1 if 2 drawn (0.3), 1/2 if 1 drawn
        // (0.3), 0 if 0 drawn: 0.3 + 0.15 = 0.45. c[1] = (0.8 + 0.45) / 2 = 0.625.
        let mut p = RankingPotential::new(PairLoss::Rank, 1, 3, 0.1);
        let mut c = [0.0; 3];
        assert!(p.cost_vector(&[0.0; 3], &[0], &mut c));
        assert!((c[0] - 0.15).abs() < 1e-15, "{c:?}");
        assert!((c[1] - 0.625).abs() < 1e-15, "{c:?}");
        assert!((c[2] - 0.625).abs() < 1e-15, "{c:?}");
    }

    #[test]
    fn no_pairs_or_bad_input_give_zero_costs() {
        let mut p = RankingPotential::new(PairLoss::Hinge, 4, 3, 0.1);
        let mut c = [1.0; 3];
        assert!(!p.cost_vector(&[0.0; 3], &[], &mut c));
        assert_eq!(c, [0.0; 3]);
        assert!(!p.cost_vector(&[0.0; 3], &[0, 1, 2], &mut c));
        assert!(!p.cost_vector(&[0.0; 3], &[5], &mut c));
        assert!(!p.cost_vector(&[0.0; 2], &[0], &mut c));
        assert_eq!(p.value(&[0.0; 3], &[1, 0]), None);
    }

    #[test]
    fn cache_is_bounded_and_lru() {
        let mut p = RankingPotential::new(PairLoss::Rank, 5, 10, 0.05).with_capacity(2);
        let mut c = [0.0; 10];
        p.cost_vector(&[0.0; 10], &[1], &mut c);
        p.cost_vector(&[0.0; 10], &[1, 2], &mut c);
        p.cost_vector(&[0.0; 10], &[3], &mut c); // |Y| = 1 again: hit
        p.cost_vector(&[0.0; 10], &[1, 2, 3], &mut c); // evicts |Y| = 2
        assert_eq!(p.cached_tables(), 2);
        let sizes: Vec<usize> = p.tables.iter().map(|t| t.relevant).collect();
        assert!(sizes.contains(&1) && sizes.contains(&3), "{sizes:?}");
    }
}
