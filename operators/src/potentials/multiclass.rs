//! The multiclass 0-1 potential of OnlineMBBM (Jung, Goetz and Tewari 2017, eq. 2 and 3),
//! computed exactly: no Monte Carlo.
//!
//! With `k` labels, true label `r`, edge `gamma` and `n` weak learners still to vote,
//! `phi_n^r(s) = E L^r(s + X)`, where `L^r(s) = 1(max_{l != r} s[l] >= s[r])` (a tie is a
//! loss) and `X` is the vector of label counts of `n` independent draws from
//! `u_gamma^r = (1 - gamma)/k + gamma e_r`. This is the unique solution of the paper's
//! recursion `phi_0^r = L^r`, `phi_{i+1}^r(s) = E_{l ~ u_gamma^r} phi_i^r(s + e_l)`.
//!
//! # How it is computed
//!
//! The loss only depends on the gaps `g_m = s[r] - s[m]` (`m != r`), and the draws treat
//! the labels other than `r` alike, so the potential depends only on the *sorted* gap
//! vector. With `D_m = X_m - X_r`,
//!
//! ```text
//! 1 - phi = P(X_m <= X_r + g_m - 1 for every m != r)
//!         = sum_j Bin(n, p_r)(j) * Q_j,      p_r = (1 - gamma)/k + gamma,
//! ```
//!
//! where, given `X_r = j`, the other `n - j` draws are uniform over the `k - 1` other
//! labels and `Q_j` is the probability that every label `m` gets at most
//! `c_m = j + g_m - 1` of them. `Q_j` is a dynamic program over the labels (the counts of a
//! uniform multinomial are sequential binomials: label `t` of the `R` still open gets
//! `Bin(remaining, 1/R)`), whose state is the number of draws used so far. Labels whose
//! cap is at least the number of draws left impose nothing; a gap `<= -n` makes the loss
//! certain (`phi = 1`) and a gap `> n` can never be closed, so gaps are clamped to
//! `[-n, n + 1]` before memoization. Values are exact up to rounding (checked against the
//! enumeration of all `k^n` draw sequences to `1e-12`).
//!
//! A [`ZeroOnePotential`] is made for one `(k, n, gamma)` (in OnlineMBBM, one per stage:
//! stage `i` needs `n = N - i`) and memoizes its values on the clamped, sorted gap vector,
//! in a table bounded to [`MULTICLASS_MEMO_BYTES`] (it is cleared when full: the values do not
//! depend on the memo, only the speed does).

use super::binomial_pmf_row;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

/// A probability treated as zero when it only decides whether a far-off label can still
/// catch up (far below the rounding of the values themselves).
const NEGLIGIBLE: f64 = 1e-17;

/// The memory budget of one potential's memo, in bytes (approximate: keys, values and
/// the table's overhead).
pub const MULTICLASS_MEMO_BYTES: usize = 1 << 20;

/// The multiclass 0-1 loss `L^r(s) = 1(max_{l != r} s[l] >= s[r])` (ties count as errors,
/// as in the paper's eq. 2). `r` must be a valid index of `s`.
pub fn zero_one_loss(s: &[f64], r: usize) -> f64 {
    let sr = s[r];
    let lost = s.iter().enumerate().any(|(l, &v)| l != r && v >= sr);
    if lost { 1.0 } else { 0.0 }
}

/// The edge-over-random distribution `u_gamma^r`: `(1 - gamma)/k` on every label, plus
/// `gamma` on `r`.
pub fn biased_uniform(k: usize, gamma: f64, r: usize) -> Vec<f64> {
    let mut u = vec![(1.0 - gamma) / k as f64; k];
    if r < k {
        u[r] += gamma;
    }
    u
}

/// A fast, deterministic hasher for short integer keys (FxHash's multiply-rotate, then
/// SplitMix64's finalizer).
#[derive(Clone, Copy, Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // A final avalanche, so that the table's control bits (the top ones) vary too.
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.add(i as u32 as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

impl KeyHasher {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A hash map keyed by short integer slices, with [`KeyHasher`].
type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The exact multiclass 0-1 potential `phi_n^r` for `k` labels, `n` draws and edge
/// `gamma`, with a bounded memo. See the module documentation of `potentials::multiclass`.
///
/// ```
/// use flowboost_operators::potentials::ZeroOnePotential;
/// // Two labels, one draw left, gamma = 0.2: u = (0.6, 0.4) with the true label first.
/// let mut phi = ZeroOnePotential::new(2, 1, 0.2);
/// // Tied (s = (0, 0)): the draw must go to the true label to avoid a loss.
/// assert!((phi.phi(&[0, 0], 0) - 0.4).abs() < 1e-15);
/// // Ahead by one: only a draw for the other label brings a tie.
/// assert!((phi.phi(&[1, 0], 0) - 0.4).abs() < 1e-15);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ZeroOnePotential {
    k: usize,
    n: usize,
    gamma: f64,
    bound: f64,
    #[serde(skip)]
    cache: Cache,
}

/// Tables and scratch, rebuilt lazily (not part of a checkpoint).
#[derive(Clone, Debug, Default)]
struct Cache {
    ready: bool,
    /// `Bin(n, p_r)(j)` for `j = 0..=n`.
    true_pmf: Vec<f64>,
    /// `tail[j] = sum_{j' >= j} true_pmf[j']`, `j = 0..=n + 1`.
    true_tail: Vec<f64>,
    /// `P(D = d)` at `n + d` (see [`ZeroOnePotential::step_probability`]).
    step_pmf: Vec<f64>,
    /// Rows whose smallest gap is at most `gap_lo` are lost with probability above
    /// `1 - NEGLIGIBLE`; gaps of at least `gap_hi` are closed with probability below it.
    gap_lo: i64,
    gap_hi: i64,
    /// `Bin(m, 1/R)` rows and their cumulative sums (shared by every potential with the
    /// same `k`; `None` beyond [`BINOMIAL_TABLE_BYTES`], then rows are made on demand).
    tables: Option<Arc<BinomialTables>>,
    /// On-demand rows (without tables): `(R, m)`, pmf, cdf.
    spare: (usize, usize, Vec<f64>, Vec<f64>),
    caps: Vec<usize>,
    opens: Vec<usize>,
    memo: KeyMap<Box<[i32]>, f64>,
    capacity: usize,
    /// Cost rows by base gap vector: `[phi(g + 1), phi(g - e_0), .., phi(g - e_{k-2})]`.
    rows: KeyMap<Box<[i32]>, Box<[f64]>>,
    row_capacity: usize,
    row_key: Vec<i32>,
    key: Vec<i32>,
    /// Row scratch: forward and backward DP values (flattened, one block per label),
    /// block offsets and widths, groups of equal gaps (first index, size), per-group
    /// accumulators and this `j`'s values.
    fwd: Vec<f64>,
    bwd: Vec<f64>,
    offs: Vec<usize>,
    widths: Vec<usize>,
    groups: Vec<(usize, usize)>,
    acc: Vec<f64>,
    qcur: Vec<f64>,
    dp: Vec<f64>,
    next: Vec<f64>,
    hits: u64,
    misses: u64,
    row_hits: u64,
    row_misses: u64,
}

impl ZeroOnePotential {
    /// The potential with `k >= 2` labels, `n` draws to go and edge `gamma` in `[0, 1)`
    /// (values outside are clamped).
    pub fn new(k: usize, n: usize, gamma: f64) -> Self {
        let k = k.max(2);
        let gamma = if gamma.is_finite() {
            gamma.clamp(0.0, 1.0)
        } else {
            0.0
        };
        ZeroOnePotential {
            k,
            n,
            gamma,
            bound: weight_bound(k, n, gamma),
            cache: Cache::default(),
        }
    }

    /// The number of labels `k`.
    pub fn num_labels(&self) -> usize {
        self.k
    }

    /// The number of draws to go `n`.
    pub fn draws(&self) -> usize {
        self.n
    }

    /// The edge `gamma`.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// A safe bound on OnlineMBBM's weight `w = sum_l (phi(s + e_l) - phi(s + e_r))` over
    /// every state `s` and true label `r` (the weight of a stage with `n` learners after it):
    /// `min(k - 1, (k - 1) pi2_n + (k - 1)(k - 2) pi_n)`, where `pi_n = max_x P(D = x)` and
    /// `pi2_n = max_x P(D in {x - 1, x})` for `D = X_m - X_r` (a sum of `n` steps: `+1`
    /// with probability `(1 - gamma)/k`, `-1` with `(1 - gamma)/k + gamma`, else 0).
    /// For `k = 2` it is the exact maximum (Online BBM's normalization).
    ///
    /// Proof: with gaps `g_m = s[r] - s[m]`, `B = {D_m >= g_m + 1 for some m}` (a loss
    /// after `e_r`) lies in `A_l = {D_l >= g_l - 1, or D_m >= g_m for some m != l}` (a loss
    /// after `e_l`), so `phi(s + e_l) - phi(s + e_r) = P(A_l \ B)`; on `A_l \ B`, `D_l` is
    /// `g_l - 1` or `g_l`, or `D_m = g_m` for some other `m`. The union bound gives
    /// `w <= sum_l P(D_l in {g_l - 1, g_l}) + sum_l sum_{m != l} P(D_m = g_m)`; and each
    /// difference is at most 1. (The paper's Lemma 10 is an `O(k^{5/2} / sqrt(N - i))`
    /// bound without explicit constants, so it cannot serve as a normalizer as such.)
    pub fn weight_bound(&self) -> f64 {
        self.bound
    }

    /// Memo statistics: `(hits, misses, entries)` of the potential values, then of the
    /// cost rows.
    pub fn memo_stats(&self) -> [(u64, u64, usize); 2] {
        [
            (self.cache.hits, self.cache.misses, self.cache.memo.len()),
            (
                self.cache.row_hits,
                self.cache.row_misses,
                self.cache.rows.len(),
            ),
        ]
    }

    /// `phi_n^r(s)` for integer votes `s` (`k` values) and true label `r < k`.
    pub fn phi(&mut self, s: &[i64], r: usize) -> f64 {
        assert!(
            s.len() == self.k && r < self.k,
            "phi: {} votes and label {r} for {} labels",
            s.len(),
            self.k
        );
        let n = self.n as i64;
        let mut key = std::mem::take(&mut self.cache.key);
        key.clear();
        let mut certain = false;
        for (m, &v) in s.iter().enumerate() {
            if m != r {
                let g = s[r].saturating_sub(v);
                if g <= -n {
                    certain = true;
                }
                key.push(g.min(n + 1) as i32);
            }
        }
        let value = if certain {
            1.0
        } else {
            key.sort_unstable();
            self.lookup(&key)
        };
        self.cache.key = key;
        value
    }

    /// `phi_n^r` of a state given by its gaps `g_m = s[r] - s[m]` (`k - 1` values, any
    /// order).
    pub fn phi_gaps(&mut self, gaps: &[i64]) -> f64 {
        assert!(
            gaps.len() + 1 == self.k,
            "phi_gaps: {} gaps for {} labels",
            gaps.len(),
            self.k
        );
        let n = self.n as i64;
        if gaps.iter().any(|&g| g <= -n) {
            return 1.0;
        }
        let mut key = std::mem::take(&mut self.cache.key);
        key.clear();
        key.extend(gaps.iter().map(|&g| g.min(n + 1) as i32));
        key.sort_unstable();
        let value = self.lookup(&key);
        self.cache.key = key;
        value
    }

    /// The cost row `C[r, l] = phi_n^r(s + e_l)` for every label `l`, written to `out`.
    pub fn cost_row(&mut self, s: &[i64], r: usize, out: &mut [f64]) {
        let mut t = s.to_vec();
        for (l, o) in out.iter_mut().enumerate().take(self.k) {
            t[l] += 1;
            *o = self.phi(&t, r);
            t[l] -= 1;
        }
    }

    /// One row of OnlineMBBM's cost matrix from the gaps `g_m = s[r] - s[m]` of the votes
    /// `s` (`k - 1` values, **ascending**): `out[0] = phi(s + e_r)` (all gaps plus one),
    /// and `out[1 + t] = phi(s + e_m)` for the label `m` at position `t` (its gap minus
    /// one). `out` needs `k` values. Rows are memoized on the (clamped) gap vector; equal
    /// gaps share one computation.
    ///
    /// A gap so large that the other label closes it with probability below `1e-17` counts
    /// as never closed, and a row whose true label is behind so far that it loses with
    /// probability above `1 - 1e-17` is all ones: each changes a value by less than
    /// `1e-17` per label (far below the rounding of a value near 1), and makes the memo
    /// hit far more often.
    pub fn row(&mut self, gaps: &[i64], out: &mut [f64]) {
        let k = self.k;
        assert!(
            gaps.len() + 1 == k && out.len() >= k,
            "row: {} gaps and {} outputs for {} labels",
            gaps.len(),
            out.len(),
            k
        );
        debug_assert!(
            gaps.windows(2).all(|w| w[0] <= w[1]),
            "row: gaps not ascending"
        );
        let n = self.n as i64;
        if gaps[0] < -n {
            // Some label is ahead by more than n even after one more true vote.
            out[..k].fill(1.0);
            return;
        }
        self.ensure_ready();
        let (lo, hi) = (self.cache.gap_lo, self.cache.gap_hi);
        if gaps[0] <= lo {
            // Lost with probability above 1 - 1e-17 whatever the vote.
            out[..k].fill(1.0);
            return;
        }
        let mut key = std::mem::take(&mut self.cache.row_key);
        key.clear();
        // A label that catches up with probability below 1e-17 never does.
        key.extend(
            gaps.iter()
                .map(|&g| if g >= hi { n + 2 } else { g.min(n + 2) } as i32),
        );
        if let Some(v) = self.cache.rows.get(&key[..]) {
            self.cache.row_hits += 1;
            out[..k].copy_from_slice(v);
            self.cache.row_key = key;
            return;
        }
        self.cache.row_misses += 1;
        if self.cache.tables.is_some() {
            self.compute_row(&key, out);
        } else {
            self.row_by_potentials(&key, out);
        }
        if self.cache.rows.len() >= self.cache.row_capacity {
            self.cache.rows.clear();
        }
        self.cache
            .rows
            .insert(key.as_slice().into(), out[..k].into());
        self.cache.row_key = key;
    }

    /// A bound on one entry's excess `phi(s + e_l) - phi(s + e_r)` over every state:
    /// `min(1, pi2_n + (k - 2) pi_n)` (see [`weight_bound`](Self::weight_bound)).
    pub fn entry_bound(&self) -> f64 {
        let (pi, pi2) = step_sum_maxima(self.k, self.n, self.gamma);
        (pi2 + (self.k - 2) as f64 * pi).min(1.0)
    }

    /// `P(D = d)` for `D = X_m - X_r` (`m != r`): the change of one gap `s[m] - s[r]`
    /// over the `n` draws. With it, `phi(s + e_l) - phi(s + e_r) <= P(D = g_l - 1) +
    /// sum_m P(D = g_m)` for the gaps `g_m = s[r] - s[m]` (the union bound of
    /// [`weight_bound`](Self::weight_bound), state by state).
    pub fn step_probability(&mut self, d: i64) -> f64 {
        self.ensure_ready();
        let n = self.n as i64;
        if d < -n || d > n {
            0.0
        } else {
            self.cache.step_pmf[(n + d) as usize]
        }
    }

    /// The distribution of `D` (see [`step_probability`](Self::step_probability)):
    /// `P(D = d)` at index `n + d`, `d = -n..=n`.
    pub fn step_distribution(&mut self) -> &[f64] {
        self.ensure_ready();
        &self.cache.step_pmf
    }

    /// `phi` of a clamped (`-n < g <= n + 1`), ascending gap vector, memoized.
    fn lookup(&mut self, key: &[i32]) -> f64 {
        let n = self.n as i32;
        if key[0] > n {
            return 0.0; // no label can ever catch up
        }
        self.ensure_ready();
        if let Some(&v) = self.cache.memo.get(key) {
            self.cache.hits += 1;
            return v;
        }
        self.cache.misses += 1;
        let v = self.compute(key);
        if self.cache.memo.len() >= self.cache.capacity {
            self.cache.memo.clear();
        }
        self.cache.memo.insert(key.into(), v);
        v
    }

    fn ensure_ready(&mut self) {
        if self.cache.ready {
            return;
        }
        let (k, n) = (self.k, self.n);
        let p_r = (1.0 - self.gamma) / k as f64 + self.gamma;
        let c = &mut self.cache;
        c.true_pmf = binomial_pmf_row(n, p_r.min(1.0));
        c.true_tail = vec![0.0; n + 2];
        for j in (0..=n).rev() {
            c.true_tail[j] = c.true_tail[j + 1] + c.true_pmf[j];
        }
        c.tables = shared_tables(k - 1, n);
        c.step_pmf = step_sum_pmf(k, n, self.gamma);
        let ni = n as i64;
        // P(D >= d) from the top and P(D < d) from the bottom (each summed from its small
        // end, so that tiny tails are accurate).
        let at = |d: i64| c.step_pmf[(d + ni) as usize];
        c.gap_hi = ni + 2;
        let mut upper = 0.0;
        for d in (-ni..=ni).rev() {
            upper += at(d);
            if upper > NEGLIGIBLE {
                // P(D >= d) > eps but P(D >= d + 1) <= eps: gaps g with g - 1 >= d + 1.
                c.gap_hi = d + 2;
                break;
            }
        }
        c.gap_lo = -ni - 1;
        let mut lower = 0.0;
        for d in -ni..=ni {
            lower += at(d);
            if lower > NEGLIGIBLE {
                // P(D < d + 1) > eps but P(D < d) <= eps: rows with g0 + 1 <= d.
                c.gap_lo = d - 1;
                break;
            }
        }
        c.spare = (0, 0, Vec::new(), Vec::new());
        let entry = (k - 1) * 4 + 64;
        c.capacity = (MULTICLASS_MEMO_BYTES / entry).max(64);
        let row_entry = (k - 1) * 4 + k * 8 + 80;
        c.row_capacity = (MULTICLASS_MEMO_BYTES / row_entry).max(64);
        c.ready = true;
    }

    /// A cost row as `k` separate potentials (without the shared tables: thousands of
    /// learners with many labels).
    fn row_by_potentials(&mut self, key: &[i32], out: &mut [f64]) {
        let n = self.n as i32;
        let mut variant: Vec<i32> = key.iter().map(|&g| (g + 1).min(n + 1)).collect();
        out[0] = self.lookup(&variant);
        for t in 0..key.len() {
            if t > 0 && key[t] == key[t - 1] {
                out[1 + t] = out[t];
                continue;
            }
            variant.clear();
            variant.extend(key.iter().map(|&g| g.min(n + 1)));
            variant[t] = (key[t] - 1).min(n + 1);
            out[1 + t] = if variant[t] <= -n {
                1.0
            } else {
                self.lookup(&variant)
            };
        }
    }

    /// A whole cost row at once (see [`row`](Self::row)) for the clamped, ascending base
    /// gaps `key`, with `g_0 >= -n`.
    ///
    /// With the base caps `c_m = j + g_m - 1` (given `X_r = j`, `M = n - j` draws for the
    /// others), the vote for label `m` lowers `c_m` by one, so its no-loss probability is
    /// `Q_j - P(box, X_m = c_m)`: one forward and one backward pass of the label DP give
    /// every such boundary term. The true label's vote raises every cap by one; with one
    /// more draw uniform over the others, `P(Mult(M + 1) <= c) = (1 / (k - 1)) sum_m
    /// P(Mult(M) <= c - e_m)`, which are the other variants at `j + 1`.
    fn compute_row(&mut self, key: &[i32], out: &mut [f64]) {
        let cells = self.k - 1;
        let n = self.n;
        {
            let c = &mut self.cache;
            c.groups.clear();
            for t in 0..cells {
                if t > 0 && key[t] == key[t - 1] {
                    if let Some(g) = c.groups.last_mut() {
                        g.1 += 1;
                    }
                } else {
                    c.groups.push((t, 1));
                }
            }
            let ng = c.groups.len();
            c.acc.clear();
            c.acc.resize(ng, 0.0);
            c.qcur.clear();
            c.qcur.resize(ng, 0.0);
        }
        let g0 = i64::from(key[0]);
        let ni = n as i64;
        // Below j_start some cap is negative (no variant avoids the loss); from j_all on,
        // every cap exceeds the draws left (every variant avoids it).
        let j_start = (1 - g0).max(0);
        let j_all = ((ni + 2 - g0 + 1) / 2).clamp(j_start, ni + 1);
        let mut acc0 = 0.0;
        for j in j_start..j_all {
            self.row_terms(key, j);
            let c = &mut self.cache;
            let b = c.true_pmf[j as usize];
            let mut mixed = 0.0;
            for (m, &(_, size)) in c.groups.iter().enumerate() {
                c.acc[m] += b * c.qcur[m];
                mixed += size as f64 * c.qcur[m];
            }
            if j >= 1 {
                acc0 += c.true_pmf[j as usize - 1] * mixed / cells as f64;
            }
        }
        let c = &mut self.cache;
        let tail = c.true_tail[j_all as usize];
        for a in c.acc.iter_mut() {
            *a += tail;
        }
        // V0 at j - 1 for j >= j_all (every variant is 1 there), and V0 at n (no draws).
        let from = (j_all - 1).max(0) as usize;
        let upto = n; // B(n) for V0 at j = n
        if from <= upto {
            acc0 += c.true_tail[from];
        }
        out[0] = (1.0 - acc0).clamp(0.0, 1.0);
        for (m, &(first, size)) in c.groups.iter().enumerate() {
            let v = (1.0 - c.acc[m]).clamp(0.0, 1.0);
            for o in &mut out[1 + first..1 + first + size] {
                *o = v;
            }
        }
    }

    /// For one `j`: each group's no-loss probability with one vote for a label of the
    /// group, into `cache.qcur`. Needs the shared tables.
    ///
    /// The labels with equal gaps (equal caps) are taken together: of `rem` draws over the
    /// `R` labels still open, a group of `mu` labels gets `S ~ Bin(rem, mu / R)`, spread
    /// uniformly over its labels, which all stay within the cap `c` with probability
    /// `A_mu(S, c)` (see [`BinomialTables`]). The last group is summed in closed form (two
    /// single labels sharing the rest, a group taking the rest, or a cumulative binomial).
    fn row_terms(&mut self, key: &[i32], j: i64) {
        let cells = self.k - 1;
        let n = self.n;
        let draws = (n as i64 - j) as usize;
        let cap_of = |t: usize| j + i64::from(key[t]) - 1;
        // The probability that a label with cap == draws takes all of them.
        let all_to_one = (-(draws as f64) * (cells as f64).ln()).exp();
        let boundary_free = |first: usize| {
            if cap_of(first) == draws as i64 {
                all_to_one
            } else {
                0.0
            }
        };
        let Cache {
            tables,
            caps,
            opens,
            fwd,
            bwd,
            offs,
            widths,
            groups,
            qcur,
            ..
        } = &mut self.cache;
        let Some(tb) = tables.as_deref() else {
            return;
        };
        // Constrained groups (cap < draws), their caps, and the labels still open at each.
        caps.clear();
        opens.clear();
        let mut labels = 0;
        for &(first, size) in groups.iter() {
            let cap = cap_of(first);
            if cap >= draws as i64 {
                break;
            }
            caps.push(cap as usize); // j >= j_start, so cap >= 0
            opens.push(cells - labels);
            labels += size;
        }
        let constrained = caps.len();
        if constrained == 0 {
            for (m, &(first, _)) in groups.iter().enumerate() {
                qcur[m] = 1.0 - boundary_free(first);
            }
            return;
        }
        if cells == 1 {
            // One other label takes every draw, more than its cap.
            qcur.iter_mut().for_each(|q| *q = 0.0);
            return;
        }
        let all = labels == cells;
        let pair = all
            && constrained >= 2
            && groups[constrained - 1].1 == 1
            && groups[constrained - 2].1 == 1;
        // The group closed in one step.
        let last = if pair {
            constrained - 2
        } else {
            constrained - 1
        };
        // Forward: P_b (the distribution of the draws used before group b), b = 0..=last.
        offs.clear();
        widths.clear();
        fwd.clear();
        offs.push(0);
        widths.push(1);
        fwd.push(1.0);
        for b in 0..last {
            let (size, cap, open) = (groups[b].1, caps[b], opens[b]);
            let (o, w) = (offs[b], widths[b]);
            let nw = (w + size * cap).min(draws + 1);
            let no = fwd.len();
            fwd.resize(no + nw, 0.0);
            for u in 0..w {
                let p = fwd[o + u];
                if p == 0.0 {
                    continue;
                }
                let rem = draws - u;
                let top = (size * cap).min(rem);
                let dst = &mut fwd[no + u..=no + u + top];
                if size == 1 {
                    let row = tb.row(open, rem).0;
                    for (d, &v) in dst.iter_mut().zip(&row[..=top]) {
                        *d += p * v;
                    }
                } else {
                    let (bin, a) = (tb.group_row(size, open, rem), tb.a_row(cap, size));
                    for ((d, &v), &f) in dst.iter_mut().zip(&bin[..=top]).zip(&a[..=top]) {
                        *d += p * v * f;
                    }
                }
            }
            offs.push(no);
            widths.push(nw);
        }
        // The closed form at `last` (W_last), with the boundary terms of the groups it
        // closes: `b_last` (group `last`) and `b_final` (the single label after it).
        bwd.clear();
        bwd.resize(fwd.len(), 0.0);
        let (mut b_last, mut b_final) = (0.0, 0.0);
        let (o, w) = (offs[last], widths[last]);
        if pair {
            // Two single labels share the rest: P(rem - cb <= X <= ca) for X ~ Bin(rem, 1/2)
            // = F(ca) + F(cb) - 1 (symmetry), and P(X = rem - cb) = P(X = cb).
            let lo_rem = draws + 1 - w;
            let (ca, cb) = (caps[last], caps[last + 1]);
            let ca_cdf = &tb.col_cdf(2, ca)[lo_rem..=draws];
            let cb_cdf = &tb.col_cdf(2, cb)[lo_rem..=draws];
            let ca_pmf = &tb.col_pmf(2, ca)[lo_rem..=draws];
            let cb_pmf = &tb.col_pmf(2, cb)[lo_rem..=draws];
            let reach = ca + cb;
            for u in 0..w {
                let i = w - 1 - u;
                bwd[o + u] = (ca_cdf[i] + cb_cdf[i] - 1.0).max(0.0);
                if draws - u <= reach {
                    b_last += fwd[o + u] * ca_pmf[i];
                    b_final += fwd[o + u] * cb_pmf[i];
                }
            }
        } else if all {
            // The last group takes the rest.
            let (size, cap) = (groups[last].1, caps[last]);
            for u in 0..w {
                let rem = draws - u;
                if rem <= size * cap {
                    bwd[o + u] = tb.a_row(cap, size)[rem];
                    b_last += fwd[o + u] * tb.e_row(cap, size)[rem];
                }
            }
        } else {
            let (size, cap, open) = (groups[last].1, caps[last], opens[last]);
            if size == 1 {
                let lo_rem = draws + 1 - w;
                let cdf = &tb.col_cdf(open, cap)[lo_rem..=draws];
                let pmf = &tb.col_pmf(open, cap)[lo_rem..=draws];
                for u in 0..w {
                    let i = w - 1 - u;
                    bwd[o + u] = cdf[i];
                    b_last += fwd[o + u] * pmf[i];
                }
            } else {
                let (a, ea) = (tb.a_row(cap, size), tb.e_row(cap, size));
                for u in 0..w {
                    let rem = draws - u;
                    let top = (size * cap).min(rem);
                    let bin = &tb.group_row(size, open, rem)[..=top];
                    let v: f64 = bin.iter().zip(&a[..=top]).map(|(&x, &y)| x * y).sum();
                    let e: f64 = bin.iter().zip(&ea[..=top]).map(|(&x, &y)| x * y).sum();
                    bwd[o + u] = v;
                    b_last += fwd[o + u] * e;
                }
            }
        }
        // Backward: W_b on P_b's support, from `last - 1` down to 0.
        for b in (0..last).rev() {
            let (size, cap, open) = (groups[b].1, caps[b], opens[b]);
            let (o, w) = (offs[b], widths[b]);
            let o1 = offs[b + 1];
            for u in 0..w {
                let rem = draws - u;
                let top = (size * cap).min(rem);
                let next = &bwd[o1 + u..=o1 + u + top];
                let mut v = 0.0;
                if size == 1 {
                    let row = tb.row(open, rem).0;
                    for (&pv, &wv) in row[..=top].iter().zip(next) {
                        v += pv * wv;
                    }
                } else {
                    let (bin, a) = (tb.group_row(size, open, rem), tb.a_row(cap, size));
                    for ((&pv, &f), &wv) in bin[..=top].iter().zip(&a[..=top]).zip(next) {
                        v += pv * f * wv;
                    }
                }
                bwd[o + u] = v;
            }
        }
        let q = bwd[0];
        for (m, &(first, size)) in groups.iter().enumerate() {
            let boundary = if m >= constrained {
                boundary_free(first)
            } else if m < last {
                // P(box, one label of group m at its cap), through the group's kernel.
                let (cap, open) = (caps[m], opens[m]);
                let (o, w) = (offs[m], widths[m]);
                let o1 = offs[m + 1];
                let mut total = 0.0;
                for u in 0..w {
                    let p = fwd[o + u];
                    let rem = draws - u;
                    if p == 0.0 || cap > rem {
                        continue;
                    }
                    if size == 1 {
                        total += p * tb.col_pmf(open, cap)[rem] * bwd[o1 + u + cap];
                    } else {
                        let top = (size * cap).min(rem);
                        let bin = &tb.group_row(size, open, rem)[cap..=top];
                        let ea = &tb.e_row(cap, size)[cap..=top];
                        let next = &bwd[o1 + u + cap..=o1 + u + top];
                        let mut e = 0.0;
                        for ((&x, &y), &z) in bin.iter().zip(ea).zip(next) {
                            e += x * y * z;
                        }
                        total += p * e;
                    }
                }
                total
            } else if m == last {
                b_last
            } else {
                b_final
            };
            qcur[m] = (q - boundary).max(0.0);
        }
    }

    /// `1 - P(no loss)`, by conditioning on the true label's count (see the module docs).
    fn compute(&mut self, key: &[i32]) -> f64 {
        let n = self.n as i64;
        let gmin = i64::from(key[0]);
        // Q_j = 0 while some cap j + g - 1 is negative.
        let j_start = (1 - gmin).max(0);
        // Q_j = 1 once every cap j + g - 1 reaches the n - j draws left.
        let j_free = ((n + 1 - gmin + 1) / 2).clamp(j_start, n + 1);
        let mut safe = 0.0;
        for j in j_start..j_free {
            let b = self.cache.true_pmf[j as usize];
            if b > 0.0 {
                safe += b * self.no_loss_given(key, j);
            }
        }
        safe += self.cache.true_tail[j_free as usize];
        (1.0 - safe).clamp(0.0, 1.0)
    }

    /// `Q_j`: the probability that, of `n - j` draws uniform over the `k - 1` other labels,
    /// every label `m` gets at most `j + g_m - 1`.
    ///
    /// Labels in ascending order of cap; label `t` of the `R = k - 1 - t` still open gets
    /// `Bin(remaining, 1/R)` draws. The last constrained label is summed with a cumulative
    /// row (when every label is constrained, the last two at once: the second to last gets
    /// `x`, the last `remaining - x`).
    fn no_loss_given(&mut self, key: &[i32], j: i64) -> f64 {
        let cells = self.k - 1;
        let draws = (self.n as i64 - j) as usize;
        let Cache {
            tables,
            spare,
            caps,
            dp,
            next,
            ..
        } = &mut self.cache;
        let table = tables.as_deref();
        caps.clear();
        for &g in key {
            let cap = j + i64::from(g) - 1;
            if cap >= draws as i64 {
                break; // this label and the rest (larger gaps) impose nothing
            }
            caps.push(cap as usize);
        }
        let constrained = caps.len();
        if constrained == 0 {
            return 1.0;
        }
        if cells == 1 {
            return if draws <= caps[0] { 1.0 } else { 0.0 };
        }
        let full = if constrained == cells {
            cells - 2
        } else {
            constrained - 1
        };
        dp.clear();
        dp.push(1.0);
        for (t, &cap) in caps.iter().enumerate().take(full) {
            let open = cells - t;
            let width = dp.len();
            next.clear();
            next.resize((width + cap).min(draws + 1), 0.0);
            for (u, &p) in dp.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                let rem = draws - u;
                let top = cap.min(rem);
                let row = binomial_row(table, spare, open, rem).0;
                for (dst, &v) in next[u..=u + top].iter_mut().zip(&row[..=top]) {
                    *dst += p * v;
                }
            }
            std::mem::swap(dp, next);
        }
        let mut q = 0.0;
        if constrained == cells {
            let (ca, cb) = (caps[cells - 2], caps[cells - 1]);
            for (u, &p) in dp.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                let rem = draws - u;
                let lo = rem.saturating_sub(cb);
                let hi = ca.min(rem);
                if lo <= hi {
                    let cdf = binomial_row(table, spare, 2, rem).1;
                    let below = if lo > 0 { cdf[lo - 1] } else { 0.0 };
                    q += p * (cdf[hi] - below).max(0.0);
                }
            }
        } else {
            let cap = caps[constrained - 1];
            let open = cells - (constrained - 1);
            for (u, &p) in dp.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                let rem = draws - u;
                let cdf = binomial_row(table, spare, open, rem).1;
                q += p * cdf[cap.min(rem)];
            }
        }
        q
    }
}

/// The memory budget of one table of binomial rows, in bytes; beyond it (thousands of
/// learners with many labels), rows are computed when needed (same values, slower).
const BINOMIAL_TABLE_BYTES: usize = 128 << 20;

/// `Bin(m, 1/R)` (from [`binomial_pmf_row`]) and its cumulative sums, for
/// `R = 2..=cells` and `m = 0..=n`, flattened.
#[derive(Debug)]
struct BinomialTables {
    cells: usize,
    n: usize,
    pmf: Vec<f64>,
    cdf: Vec<f64>,
    /// Where row `(R, m)` starts, at `(R - 2) * (n + 1) + m`.
    starts: Vec<usize>,
    /// The same values by columns: `P(X = x)` and `P(X <= min(x, m))` for `m = 0..=n`,
    /// column `(R, x)` at `((R - 2) * (n + 1) + x) * (n + 1)`.
    col_pmf: Vec<f64>,
    col_cdf: Vec<f64>,
    /// `A_mu(S, c)`: the probability that `S` draws uniform over `mu` labels give none
    /// more than `c`, at `((c * (cells + 1)) + mu) * (n + 1) + S`.
    a: Vec<f64>,
    /// `E_mu(S, c) = Bin(S, 1/mu)(c) A_{mu-1}(S - c, c)`: one given label of the `mu` at
    /// exactly `c`, the others within it (same layout as `a`).
    e: Vec<f64>,
    /// Rows `Bin(m, mu / R)` for `2 <= mu < R <= cells`, `m = 0..=n` (triangles), and
    /// where each `(mu, R)` block starts, at `mu * (cells + 1) + R`.
    grp: Vec<f64>,
    grp_start: Vec<usize>,
}

impl BinomialTables {
    fn build(cells: usize, n: usize) -> Self {
        let per = (n + 1) * (n + 2) / 2;
        let size = cells.saturating_sub(1) * per;
        let mut pmf = Vec::with_capacity(size);
        let mut cdf = Vec::with_capacity(size);
        let mut starts = Vec::with_capacity(cells.saturating_sub(1) * (n + 1));
        for r in 2..=cells {
            for m in 0..=n {
                starts.push(pmf.len());
                let row = binomial_pmf_row(m, 1.0 / r as f64);
                let mut acc = 0.0;
                for v in row {
                    pmf.push(v);
                    acc += v;
                    cdf.push(acc);
                }
            }
        }
        let side = n + 1;
        let blocks = cells.saturating_sub(1);
        let mut col_pmf = vec![0.0; blocks * side * side];
        let mut col_cdf = vec![0.0; blocks * side * side];
        for b in 0..blocks {
            for m in 0..=n {
                let at = starts[b * side + m];
                for x in 0..=n {
                    let i = (b * side + x) * side + m;
                    if x <= m {
                        col_pmf[i] = pmf[at + x];
                        col_cdf[i] = cdf[at + x];
                    } else {
                        col_cdf[i] = cdf[at + m];
                    }
                }
            }
        }
        let mut t = BinomialTables {
            cells,
            n,
            pmf,
            cdf,
            starts,
            col_pmf,
            col_cdf,
            a: Vec::new(),
            e: Vec::new(),
            grp: Vec::new(),
            grp_start: vec![usize::MAX; (cells + 1) * (cells + 1)],
        };
        // A_0(S) = 1(S = 0); A_1(S) = 1(S <= c); A_mu(S) = sum_{x <= c} Bin(S, 1/mu)(x)
        // A_{mu-1}(S - x).
        let width = cells + 1;
        let mut a = vec![0.0; side * width * side];
        for c in 0..=n {
            let base = c * width * side;
            a[base] = 1.0;
            for s in 0..=c {
                a[base + side + s] = 1.0;
            }
            for mu in 2..=cells {
                for s in 0..=n.min(mu * c) {
                    let row = t.row(mu, s).0;
                    let prev = base + (mu - 1) * side;
                    let mut v = 0.0;
                    for x in 0..=c.min(s) {
                        v += row[x] * a[prev + s - x];
                    }
                    a[base + mu * side + s] = v;
                }
            }
        }
        t.a = a;
        let mut e = vec![0.0; side * width * side];
        for c in 0..=n {
            for mu in 1..=cells {
                for s in c..=n {
                    e[(c * width + mu) * side + s] = if mu == 1 {
                        if s == c { 1.0 } else { 0.0 }
                    } else {
                        let rest = t.a_row(c, mu - 1)[s - c];
                        if rest == 0.0 {
                            0.0
                        } else {
                            t.row(mu, s).0[c] * rest
                        }
                    };
                }
            }
        }
        t.e = e;
        for r in 3..=cells {
            for mu in 2..r {
                t.grp_start[mu * width + r] = t.grp.len();
                for m in 0..=n {
                    t.grp.extend(binomial_pmf_row(m, mu as f64 / r as f64));
                }
            }
        }
        t
    }

    /// `A_mu(S, c)` for `S = 0..=n`.
    #[inline(always)]
    fn a_row(&self, c: usize, mu: usize) -> &[f64] {
        let side = self.n + 1;
        let at = (c * (self.cells + 1) + mu) * side;
        &self.a[at..at + side]
    }

    /// `Bin(m, mu / r)` for `2 <= mu < r <= cells`.
    #[inline(always)]
    fn group_row(&self, mu: usize, r: usize, m: usize) -> &[f64] {
        let at = self.grp_start[mu * (self.cells + 1) + r] + m * (m + 1) / 2;
        &self.grp[at..=at + m]
    }

    /// `E_mu(S, c)` for `S = 0..=n`: of `S` draws uniform over `mu` labels, one given label
    /// gets exactly `c` and the others at most `c`.
    #[inline(always)]
    fn e_row(&self, c: usize, mu: usize) -> &[f64] {
        let side = self.n + 1;
        let at = (c * (self.cells + 1) + mu) * side;
        &self.e[at..at + side]
    }

    /// `P(X = x)` for `X ~ Bin(m, 1/r)`, `m = 0..=n`.
    #[inline(always)]
    fn col_pmf(&self, r: usize, x: usize) -> &[f64] {
        let side = self.n + 1;
        let at = ((r - 2) * side + x) * side;
        &self.col_pmf[at..at + side]
    }

    /// `P(X <= x)` for `X ~ Bin(m, 1/r)`, `m = 0..=n`.
    #[inline(always)]
    fn col_cdf(&self, r: usize, x: usize) -> &[f64] {
        let side = self.n + 1;
        let at = ((r - 2) * side + x) * side;
        &self.col_cdf[at..at + side]
    }

    #[inline(always)]
    fn row(&self, r: usize, m: usize) -> (&[f64], &[f64]) {
        let at = self.starts[(r - 2) * (self.n + 1) + m];
        (&self.pmf[at..=at + m], &self.cdf[at..=at + m])
    }
}

/// The row `Bin(m, 1/r)` and its cumulative sums, from the shared tables or made now.
#[inline(always)]
fn binomial_row<'a>(
    table: Option<&'a BinomialTables>,
    spare: &'a mut (usize, usize, Vec<f64>, Vec<f64>),
    r: usize,
    m: usize,
) -> (&'a [f64], &'a [f64]) {
    if let Some(t) = table {
        return t.row(r, m);
    }
    spare_row(spare, r, m)
}

/// [`binomial_row`] without tables: the row made now (and kept until another is asked).
#[inline(never)]
fn spare_row(
    spare: &mut (usize, usize, Vec<f64>, Vec<f64>),
    r: usize,
    m: usize,
) -> (&[f64], &[f64]) {
    if spare.0 != r || spare.1 != m || spare.2.is_empty() {
        spare.2 = binomial_pmf_row(m, 1.0 / r as f64);
        spare.3.clear();
        let mut acc = 0.0;
        for &v in &spare.2 {
            acc += v;
            spare.3.push(acc);
        }
        spare.0 = r;
        spare.1 = m;
    }
    (&spare.2, &spare.3)
}

/// The tables for `cells` labels up to `n` draws, shared by every potential of the process
/// (the values do not depend on which table serves them), or `None` past the budget.
fn shared_tables(cells: usize, n: usize) -> Option<Arc<BinomialTables>> {
    static TABLES: Mutex<Vec<Arc<BinomialTables>>> = Mutex::new(Vec::new());
    // Rows (a triangle) and columns (a square), each with pmf and cdf; the A and E tables;
    // the group rows.
    let side = n + 1;
    let pairs = cells.saturating_sub(2) * cells.saturating_sub(1) / 2;
    let bytes = cells.saturating_sub(1) * side * (3 * n + 4) / 2 * 16
        + side * (cells + 1) * side * 16
        + pairs * side * (n + 2) / 2 * 8;
    if bytes > BINOMIAL_TABLE_BYTES {
        return None;
    }
    let mut all = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = all.iter().find(|t| t.cells == cells && t.n >= n) {
        return Some(t.clone());
    }
    let t = Arc::new(BinomialTables::build(cells, n));
    all.retain(|old| old.cells != cells);
    all.push(t.clone());
    Some(t)
}

/// `min(k - 1, (k - 1) pi2_n + (k - 1) (k - 2) pi_n)`; see
/// [`ZeroOnePotential::weight_bound`].
fn weight_bound(k: usize, n: usize, gamma: f64) -> f64 {
    let (pi, pi2) = step_sum_maxima(k, n, gamma);
    let km1 = (k - 1) as f64;
    km1.min(km1 * pi2 + km1 * (km1 - 1.0) * pi)
}

/// `(max_x P(D = x), max_x P(D in {x - 1, x}))` for `D = X_m - X_r`, a sum of `n` steps:
/// `+1` with probability `(1 - gamma)/k`, `-1` with `(1 - gamma)/k + gamma`, else 0.
fn step_sum_maxima(k: usize, n: usize, gamma: f64) -> (f64, f64) {
    let dist = step_sum_pmf(k, n, gamma);
    let pi = dist.iter().cloned().fold(0.0, f64::max);
    let pi2 = dist.windows(2).map(|w| w[0] + w[1]).fold(pi, f64::max);
    (pi, pi2)
}

/// The distribution of `D = X_m - X_r` (see [`step_sum_maxima`]), `P(D = d)` at `n + d`.
fn step_sum_pmf(k: usize, n: usize, gamma: f64) -> Vec<f64> {
    let q = (1.0 - gamma) / k as f64;
    let down = q + gamma;
    let stay = (1.0 - q - down).max(0.0);
    // Distribution of D after i steps, at offset n + d.
    let mut dist = vec![0.0; 2 * n + 1];
    let mut next = vec![0.0; 2 * n + 1];
    dist[n] = 1.0;
    for step in 0..n {
        next.iter_mut().for_each(|v| *v = 0.0);
        for d in (n - step)..=(n + step) {
            let p = dist[d];
            if p != 0.0 {
                next[d + 1] += p * q;
                next[d - 1] += p * down;
                next[d] += p * stay;
            }
        }
        std::mem::swap(&mut dist, &mut next);
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_labels_match_the_binomial_tail() {
        // k = 2: loss iff X_other - X_r >= g, X_r ~ Bin(n, p_r).
        let (n, gamma) = (9usize, 0.3);
        let p_r = (1.0 - gamma) / 2.0 + gamma;
        let pmf = binomial_pmf_row(n, p_r);
        let mut phi = ZeroOnePotential::new(2, n, gamma);
        for g in -12i64..=12 {
            // X_other - X_r = n - 2 X_r >= g  <=>  X_r <= (n - g) / 2
            let direct: f64 = (0..=n)
                .filter(|&j| n as i64 - 2 * j as i64 >= g)
                .map(|j| pmf[j])
                .sum();
            let v = phi.phi_gaps(&[g]);
            assert!((v - direct).abs() < 1e-14, "g={g}: {v} vs {direct}");
        }
    }

    #[test]
    fn no_draws_is_the_loss() {
        let mut phi = ZeroOnePotential::new(4, 0, 0.1);
        for s in [[0i64, 0, 0, 0], [3, 1, 2, 0], [1, 3, 2, 0], [2, 2, 1, 0]] {
            let f: Vec<f64> = s.iter().map(|&v| v as f64).collect();
            for r in 0..4 {
                assert_eq!(phi.phi(&s, r), zero_one_loss(&f, r), "{s:?} r={r}");
            }
        }
    }

    #[test]
    fn values_without_tables_match_values_with_them() {
        // Past the table budget, rows of binomials are made when needed: same values.
        let mut state = 7u64;
        let mut next = |m: u64| {
            state = crate::rng::splitmix64(state);
            state % m
        };
        for (k, n) in [(2usize, 12usize), (3, 30), (4, 25), (6, 20), (9, 15)] {
            let mut with = ZeroOnePotential::new(k, n, 0.1);
            let mut without = ZeroOnePotential::new(k, n, 0.1);
            without.ensure_ready();
            without.cache.tables = None;
            for _ in 0..40 {
                let mut gaps: Vec<i64> = (0..k - 1)
                    .map(|_| next(2 * n as u64 + 4) as i64 - n as i64)
                    .collect();
                gaps.sort_unstable();
                let (mut a, mut b) = (vec![0.0; k], vec![0.0; k]);
                with.row(&gaps, &mut a);
                without.row(&gaps, &mut b);
                for (x, y) in a.iter().zip(&b) {
                    assert!(
                        (x - y).abs() < 1e-14,
                        "k={k} n={n} {gaps:?}: {a:?} vs {b:?}"
                    );
                }
                let (x, y) = (with.phi_gaps(&gaps), without.phi_gaps(&gaps));
                assert!((x - y).abs() < 1e-14, "k={k} n={n} {gaps:?}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn weight_bound_is_trivial_without_draws() {
        assert_eq!(ZeroOnePotential::new(3, 0, 0.1).weight_bound(), 2.0);
        let b = ZeroOnePotential::new(3, 60, 0.1).weight_bound();
        assert!(b > 0.0 && b < 0.5, "{b}");
    }
}
