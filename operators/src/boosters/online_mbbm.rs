use super::WeakSlot;
use crate::data::Label;
use crate::engine::{InFlight, Stage};
use crate::learners::SharedViews;
use crate::potentials::ZeroOnePotential;
use crate::rng::{Rng, below, seeded, uniform};
use serde::{Deserialize, Serialize};

/// The range of the per-tree importance-weight unit of the multiclass boosters under
/// `--tree-params random` (uniform; the authors' example script: 5 to 200).
pub const MULTICLASS_WEIGHT_UNIT_RANGE: (f64, f64) = (5.0, 200.0);

/// The random stream (under the run's seed) of tree `i`'s weight unit.
const WEIGHT_UNIT_STREAM: u64 = 4_000_000;

/// Two expected costs closer than this are a tie (the costs lie in `[-k, k]`; rounding
/// errors are far smaller).
const TIE: f64 = 1e-12;

/// One stage of OnlineMBBM (Jung, Goetz and Tewari 2017, Algorithm 1) with the multiclass
/// 0-1 loss.
///
/// `alpha = 1`; the record carries the integer votes `s^{i-1}`. Stage `i` of `N` uses the
/// exact potential `phi_{N-i}` (see [`ZeroOnePotential`]) for its cost matrix
/// `C[r, l] = phi_{N-i}^r(s^{i-1} + e_l)` (eq. 4).
///
/// - **Weak prediction**: the label of least expected cost under the tree's predicted
///   class distribution `p`, `argmin_l sum_r p[r] C[r, l]` (as the authors' code does;
///   subtracting `C[r, r]` from row `r`, as `D` of eq. 5 does, changes every expected
///   cost by the same amount, so it is the same label); ties (within `1e-12`) are broken
///   uniformly at random with the stage's seeded generator. The vote is `e_l`.
/// - **Learning** (label `y` known): `w = sum_l (C[y, l] - C[y, y])` (Algorithm 1, line 9),
///   normalized by the safe bound [`ZeroOnePotential::weight_bound`] of `||w^i||_inf` so
///   that it lies in `[0, 1]`; the weak learner gets `(x, y, w / bound)` (times the
///   tree's weight unit, see [`random_weight_unit`](Self::random_weight_unit)).
///
/// Rows of labels with equal vote counts are permutations of each other, so a row is
/// computed once per distinct count (and memoized by the potential on its gap vector).
/// Rows are computed lazily, heaviest class probability first: the rows not yet computed
/// can move a label's expected cost by at most their probability mass times a bound on
/// the entries (from the distribution of one gap's change, see
/// [`ZeroOnePotential::step_probability`]), and once that cannot change the winner the
/// rest are skipped (the prediction is the one the full matrix gives).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnlineMbbmStage {
    weak: WeakSlot,
    k: usize,
    potential: ZeroOnePotential,
    weight_unit: f64,
    rng: Rng,
    #[serde(skip)]
    work: Work,
}

/// Scratch (rebuilt lazily; not part of a checkpoint).
#[derive(Clone, Debug, Default)]
struct Work {
    probs: Vec<f64>,
    counts: Vec<i64>,
    sorted: Vec<i64>,
    /// Distinct vote counts, ascending, and how many labels have each.
    vals: Vec<i64>,
    mult: Vec<usize>,
    /// The group (index into `vals`) of each label.
    group: Vec<usize>,
    /// Per group `a`, whether its row is loaded, and `excess[a * d + b] = C[r, l] - C[r, r]`
    /// for `r` in group `a` and `l != r` in group `b` (0 if `b == a` has one label).
    loaded: Vec<bool>,
    excess: Vec<f64>,
    mass: Vec<f64>,
    order: Vec<usize>,
    /// `P(D = vals[a] - vals[b] - 1)` at `a * d + b`, `sum_{m != r} P(D = g_m)` per group,
    /// and the slack of the unloaded rows per column group.
    point: Vec<f64>,
    tie_sum: Vec<f64>,
    slack: Vec<f64>,
    costs: Vec<f64>,
    ties: Vec<usize>,
    gaps: Vec<i64>,
    row: Vec<f64>,
    last_weight: f64,
    last_prediction: u32,
}

impl OnlineMbbmStage {
    /// The weak learner.
    pub fn learner(&self) -> &crate::learners::WeakModel {
        self.weak.model()
    }

    /// The weak learner, to set its memory budget.
    pub(crate) fn learner_mut(&mut self) -> &mut crate::learners::WeakModel {
        self.weak.model_mut()
    }

    /// Stage `i` (1-based) of `n` for `k` labels with edge `gamma`; the weak learner gets
    /// its weights times `weight_unit` (see [`random_weight_unit`](Self::random_weight_unit);
    /// 1 keeps them).
    pub fn new(
        weak: WeakSlot,
        i: usize,
        n: usize,
        k: usize,
        gamma: f64,
        weight_unit: f64,
        seed: u64,
    ) -> Self {
        let potential = ZeroOnePotential::new(k, n.saturating_sub(i), gamma);
        OnlineMbbmStage {
            weak,
            k: potential.num_labels(),
            weight_unit: if weight_unit.is_finite() && weight_unit > 0.0 {
                weight_unit
            } else {
                1.0
            },
            potential,
            rng: seeded(seed, i as u64),
            work: Work::default(),
        }
    }

    /// The importance-weight unit of random tree `i` (0-based) of a multiclass booster
    /// under `--tree-params random`: uniform in `MULTICLASS_WEIGHT_UNIT_RANGE`, seeded
    /// from `(seed, i)`.
    ///
    /// The boosters' weights are the paper's (in `[0, 1]`); a Hoeffding tree, though,
    /// counts weight, not examples, in its grace period and its Hoeffding bound, so the
    /// unit in which it receives them is one of its parameters. The authors' code draws it
    /// per tree together with the split confidence, grace period and tie threshold
    /// (`gen_weaklearners(..., min_weight=5, max_weight=200)` in their example script) and
    /// multiplies AdaBoost.OLM's weight `-C[y, y] / (k - 1)` by it (their OnlineMBBM uses a
    /// tenth of it on `w / (k - 1)`; here both boosters use the unit on their normalized
    /// weight).
    pub fn random_weight_unit(seed: u64, i: usize) -> f64 {
        let (lo, hi) = MULTICLASS_WEIGHT_UNIT_RANGE;
        let mut rng = seeded(seed, WEIGHT_UNIT_STREAM + i as u64);
        lo + (hi - lo) * uniform(&mut rng)
    }

    /// The stage's potential `phi_{N-i}`.
    pub fn potential(&self) -> &ZeroOnePotential {
        &self.potential
    }

    /// The bound that normalizes the weights ([`ZeroOnePotential::weight_bound`]).
    pub fn weight_bound(&self) -> f64 {
        self.potential.weight_bound()
    }

    /// The normalized weight `w / bound` of the last labeled record (before the weight
    /// unit).
    pub fn last_weight(&self) -> f64 {
        self.work.last_weight
    }

    /// The weak prediction (the label voted for) on the last record.
    pub fn last_prediction(&self) -> u32 {
        self.work.last_prediction
    }

    /// The expected excess costs `sum_r probs[r] (C[r, l] - C[r, r])` of every label `l`
    /// at the votes `s` (`k` integer values), written to `out`, from the full matrix.
    pub fn expected_costs(&mut self, s: &[f64], probs: &[f64], out: &mut [f64]) {
        self.work.probs.clear();
        self.work.probs.extend_from_slice(probs);
        self.load_state(s);
        for a in 0..self.work.vals.len() {
            self.load_row(a);
        }
        self.fill_costs();
        out.copy_from_slice(&self.work.costs[..self.k]);
    }

    /// The weak prediction at the votes `s` for the class probabilities `probs`, as
    /// [`process`](Stage::process) makes it (rows loaded lazily; ties at random), without
    /// learning anything.
    pub fn choose_label(&mut self, s: &[f64], probs: &[f64]) -> usize {
        self.work.probs.clear();
        self.work.probs.extend_from_slice(probs);
        self.load_state(s);
        self.predict()
    }

    /// The raw weight `w = sum_l (C[y, l] - C[y, y])` at the votes `s` for label `y`.
    pub fn raw_weight(&mut self, s: &[f64], y: usize) -> f64 {
        self.work.probs.clear();
        self.work.probs.resize(self.k, 0.0);
        self.load_state(s);
        self.weight_of(y)
    }

    /// Groups the labels of the votes `s` by count (and the class probabilities in
    /// `work.probs` by group); no row is loaded yet.
    fn load_state(&mut self, s: &[f64]) {
        let k = self.k;
        let w = &mut self.work;
        w.counts.clear();
        w.counts.extend(
            s.iter()
                .take(k)
                .map(|&v| if v.is_finite() { v.round() as i64 } else { 0 }),
        );
        w.counts.resize(k, 0);
        w.sorted.clear();
        w.sorted.extend_from_slice(&w.counts);
        w.sorted.sort_unstable();
        w.vals.clear();
        w.mult.clear();
        for &v in &w.sorted {
            match (w.vals.last(), w.mult.last_mut()) {
                (Some(&last), Some(m)) if last == v => *m += 1,
                _ => {
                    w.vals.push(v);
                    w.mult.push(1);
                }
            }
        }
        let d = w.vals.len();
        w.group.clear();
        for &c in &w.counts {
            w.group.push(w.vals.partition_point(|&v| v < c));
        }
        w.loaded.clear();
        w.loaded.resize(d, false);
        w.excess.clear();
        w.excess.resize(d * d, 0.0);
        w.mass.clear();
        w.mass.resize(d, 0.0);
        for (l, &g) in w.group.iter().enumerate() {
            let p = w.probs.get(l).copied().unwrap_or(0.0);
            w.mass[g] += if p.is_finite() && p > 0.0 { p } else { 0.0 };
        }
    }

    /// Loads the row of group `a` (a label with count `vals[a]` as the true label).
    fn load_row(&mut self, a: usize) {
        let w = &mut self.work;
        if w.loaded[a] {
            return;
        }
        let d = w.vals.len();
        // Gaps to the other labels, ascending: groups by descending count.
        w.gaps.clear();
        for b in (0..d).rev() {
            let times = w.mult[b] - usize::from(a == b);
            for _ in 0..times {
                w.gaps.push(w.vals[a] - w.vals[b]);
            }
        }
        w.row.clear();
        w.row.resize(self.k, 0.0);
        self.potential.row(&w.gaps, &mut w.row);
        let own = w.row[0];
        let mut pos = 0;
        for b in (0..d).rev() {
            let times = w.mult[b] - usize::from(a == b);
            if times > 0 {
                w.excess[a * d + b] = (w.row[1 + pos] - own).max(0.0);
                pos += times;
            }
        }
        w.loaded[a] = true;
    }

    /// `costs[l] = sum_r probs[r] (C[r, l] - C[r, r])` over the loaded rows.
    fn fill_costs(&mut self) {
        let k = self.k;
        let w = &mut self.work;
        let d = w.vals.len();
        w.costs.clear();
        w.costs.resize(k, 0.0);
        for l in 0..k {
            let b = w.group[l];
            let mut e = 0.0;
            for a in 0..d {
                if w.loaded[a] {
                    e += w.mass[a] * w.excess[a * d + b];
                }
            }
            w.costs[l] = e;
        }
        // The label's own row contributes 0 to its own cost (C[l, l] - C[l, l]), not the
        // excess toward another label of its group.
        for l in 0..k {
            let b = w.group[l];
            if w.loaded[b] && w.mult[b] > 1 {
                let p = w.mass[b] - w.mass_without(l);
                w.costs[l] -= p * w.excess[b * d + b];
            }
        }
    }

    /// The label of least expected cost, loading rows until the unloaded ones cannot
    /// change it.
    ///
    /// An unloaded row `a` (true label `r`, gaps `g_m = s[r] - s[m]`) adds at most
    /// `P_a min(1, P(D = g_l - 1) + sum_{m != r} P(D = g_m))` to label `l`'s expected cost
    /// ([`ZeroOnePotential::step_probability`]); rows load in order of decreasing mass
    /// until the best label beats every other one by more than that slack.
    fn predict(&mut self) -> usize {
        let d = self.work.vals.len();
        {
            let w = &mut self.work;
            w.order.clear();
            w.order.extend((0..d).filter(|&a| w.mass[a] > 0.0));
            let mass = &w.mass;
            w.order
                .sort_by(|&a, &b| mass[b].total_cmp(&mass[a]).then(a.cmp(&b)));
            // sum_{m != r} P(D = g_m) for a true label in group a.
            w.point.clear();
            w.point.resize(d * d, 0.0);
            w.tie_sum.clear();
            w.tie_sum.resize(d, 0.0);
        }
        {
            let n = self.potential.draws() as i64;
            let dist = self.potential.step_distribution();
            let at = |x: i64| {
                if (-n..=n).contains(&x) {
                    dist[(x + n) as usize]
                } else {
                    0.0
                }
            };
            let w = &mut self.work;
            for &a in &w.order {
                let mut total = 0.0;
                for b in 0..d {
                    let gap = w.vals[a] - w.vals[b];
                    let times = w.mult[b] - usize::from(a == b);
                    total += times as f64 * at(gap);
                    w.point[a * d + b] = at(gap - 1);
                }
                w.tie_sum[a] = total;
            }
        }
        let mut next = 0;
        loop {
            self.fill_costs();
            let w = &mut self.work;
            if next == w.order.len() {
                break;
            }
            w.slack.clear();
            w.slack.resize(d, 0.0);
            for &a in &w.order[next..] {
                for b in 0..d {
                    let bound = (w.tie_sum[a] + w.point[a * d + b]).min(1.0);
                    w.slack[b] += w.mass[a] * bound;
                }
            }
            if w.is_clear() {
                break;
            }
            let a = w.order[next];
            self.load_row(a);
            next += 1;
        }
        let w = &mut self.work;
        argmin_random_ties(&w.costs, &mut w.ties, &mut self.rng)
    }

    /// `sum_l (C[y, l] - C[y, y])`, loading `y`'s row.
    fn weight_of(&mut self, y: usize) -> f64 {
        let a = self.work.group[y];
        self.load_row(a);
        let w = &self.work;
        let d = w.vals.len();
        let mut total = 0.0;
        for b in 0..d {
            let count = w.mult[b] - usize::from(a == b);
            if count > 0 {
                total += count as f64 * w.excess[a * d + b];
            }
        }
        total
    }
}

impl Work {
    /// Whether the label of least loaded cost beats every other one even if the unloaded
    /// rows add their whole slack to it (and nothing to the others).
    fn is_clear(&self) -> bool {
        let c = &self.costs;
        let mut best = 0;
        for (l, &v) in c.iter().enumerate() {
            if v < c[best] {
                best = l;
            }
        }
        let top = c[best] + self.slack[self.group[best]] + TIE;
        c.iter().enumerate().all(|(l, &v)| l == best || v > top)
    }

    /// The mass of `l`'s group without `l` itself.
    fn mass_without(&self, l: usize) -> f64 {
        let b = self.group[l];
        let own = self.probs.get(l).copied().unwrap_or(0.0);
        let own = if own.is_finite() && own > 0.0 {
            own
        } else {
            0.0
        };
        self.mass[b] - own
    }
}

/// The index of the smallest value (within `1e-12`), ties broken uniformly at random.
pub(super) fn argmin_random_ties(values: &[f64], ties: &mut Vec<usize>, rng: &mut Rng) -> usize {
    let min = values.iter().cloned().fold(f64::INFINITY, f64::min);
    ties.clear();
    for (l, &v) in values.iter().enumerate() {
        if v <= min + TIE {
            ties.push(l);
        }
    }
    match ties.len() {
        0 => 0,
        1 => ties[0],
        n => ties[below(rng, n as u64) as usize],
    }
}

impl Stage for OnlineMbbmStage {
    fn process(&mut self, rec: &mut InFlight, views: &mut SharedViews) {
        let k = self.k;
        let ex = &*rec.example;
        let p = self.weak.predict(&ex.features, views);
        self.work.probs.clear();
        self.work.probs.extend_from_slice(p);
        self.load_state(&rec.scores);
        // A pass that learns nothing (a prediction whose label comes later, or none) leaves
        // the generator as it found it: the learning pass then breaks the ties the same way,
        // so predicting and learning later is predicting and learning at once.
        let learns = matches!(rec.label(), Some(&Label::Class(y)) if (y as usize) < k);
        let kept = (!learns).then(|| self.rng.clone());
        let l = self.predict();
        if let Some(rng) = kept {
            self.rng = rng;
        }
        self.work.last_prediction = l as u32;
        if let Some(&Label::Class(y)) = rec.label() {
            let y = y as usize;
            if y < k {
                let bound = self.potential.weight_bound();
                let weight = (self.weight_of(y) / bound).clamp(0.0, 1.0);
                self.work.last_weight = weight;
                self.weak
                    .learn(&ex.features, y as u32, weight * self.weight_unit, views);
            }
        }
        rec.scores[l] += 1.0;
    }
}
