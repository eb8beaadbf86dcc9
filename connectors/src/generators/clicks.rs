//! A click simulator with known truth: a seeded, streaming log of ranked impressions in the
//! Open Bandit Dataset's format, whose click model is known, so that the true expected
//! click-through rate of any ranking policy can be computed exactly.
//!
//! The model (every parameter drawn from the seed):
//!
//! - **Users.** Each impression has a user with `user_features` categorical context
//!   features (`user_feature_0..`), each value drawn uniformly from `feature_values`
//!   values, written as the value's number. Value `v` of feature `f` has a latent vector
//!   `e[f][v]` (standard normal, `latent` dimensions); the user's latent vector is
//!   `z = sum_f e[f][v_f] / sqrt(user_features)`.
//! - **Items.** Item `a` (of `items`) has a latent vector `w_a` (standard normal) and a
//!   popularity `b_a` (normal, standard deviation 0.5); `item_context.csv` lists them as the
//!   item features.
//! - **Relevance** (the ground truth): the probability that the user clicks item `a` once
//!   they have looked at it, `r(z, a) = sigmoid(c + b_a + s z . w_a / sqrt(latent))`, with
//!   `c = logit(base_relevance)` and `s = affinity_scale`.
//! - **Clicks** (a position-based model): the item at position `j` (0-based) is examined
//!   with probability `examination[j]` (by default `1 / (j + 1)`), and clicked with
//!   probability `examination[j] r(z, a)`, independently across positions.
//! - **Delays.** A click arrives `d` impressions after its impression, `d` geometric on
//!   `0, 1, ...` with mean `click_delay` (0: every click comes at once).
//! - **Logging policy**, which chooses the `slots` items shown, in order:
//!   - `uniform`: a uniformly random ordered slate (propensity `1 / items` at each
//!     position);
//!   - `bts`, Thompson-sampling-like, as in the Open Bandit Dataset's "bts" logs: every
//!     `bts_update_every` impressions the policy refreshes its Beta(1, 1) posterior of
//!     each item's click rate from the clicks that have arrived (naively: clicks per
//!     impression shown, at any position), and ranks the items by
//!     `sharpness log(mean_a) + Gumbel noise`, a random perturbation of its beliefs as in
//!     Thompson sampling. The Gumbel noise makes the ranking a Plackett-Luce draw with
//!     weights `mean_a^sharpness` (floored at 1/20 of the largest weight), so the
//!     propensities are exact (no Monte Carlo, unlike the Open Bandit Dataset's).
//!
//!   Each row records the marginal propensity of its item at its position (the Open
//!   Bandit Dataset's `propensity_score`), and each impression the probability of its
//!   whole slate (`slate_propensity`).
//!
//! The **true click-through rate** of a ranking `pi` for a user, per shown slot, is
//! `(1 / slots) sum_j examination[j] r(z, pi[j])` ([`ClickTruth::ranking_ctr`]); the
//! logging policy's, the same expectation over its slate distribution
//! ([`SimulatedImpression::logging_ctr`]).
//!
//! Random streams (independent, from the seed): the model's parameters, the users, the
//! logging policy's draws, the clicks, the delays. The same seed gives the same log.

use super::GeneratorError;
use super::concept::{normal, unit};
use crate::readers::open_bandit::{LoggedImpression, LoggedSlot};
use flowboost_operators::rng::{Rng, below, seeded, splitmix64};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;

/// The policy that chose the logged slates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingPolicy {
    /// A uniformly random ordered slate.
    Uniform,
    /// Thompson-sampling-like: a Plackett-Luce ranking by the items' posterior click
    /// rates, refreshed periodically (see the [module documentation](self)).
    Bts,
}

flowboost_operators::named_values!(LoggingPolicy, "logging policy", Uniform => "uniform", Bts => "bts");

/// The parameters of a simulated click log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClickSimConfig {
    /// The number of impressions.
    pub impressions: u64,
    /// The number of items.
    pub items: usize,
    /// The number of positions shown per impression (the slate's length).
    pub slots: usize,
    /// The number of categorical user features.
    pub user_features: usize,
    /// The number of values of each user feature.
    pub feature_values: usize,
    /// The dimension of the latent user and item vectors.
    pub latent: usize,
    /// The relevance of an average item to an average user, in `(0, 1)`.
    pub base_relevance: f64,
    /// How much the user-item affinity moves the relevance (in logits).
    pub affinity_scale: f64,
    /// The probability that each position is examined, in `(0, 1]` (`slots` values).
    pub examination: Vec<f64>,
    /// The mean delay of a click, in impressions (0: no delay).
    pub click_delay: f64,
    /// The logging policy.
    pub logging: LoggingPolicy,
    /// `bts`: the posterior is refreshed every this many impressions.
    pub bts_update_every: u64,
    /// `bts`: the exponent of the posterior means in the Plackett-Luce weights (0:
    /// uniform; larger: more greedy).
    pub bts_sharpness: f64,
    /// The seed.
    pub seed: u64,
}

/// The largest number of slate prefixes the exact Plackett-Luce marginals may enumerate
/// (`items^(slots - 1)`).
const MAX_PREFIXES: f64 = 1e7;
/// The smallest Plackett-Luce weight of the `bts` policy, relative to the largest.
const BTS_FLOOR: f64 = 0.05;

impl ClickSimConfig {
    /// The defaults: 46 items, 3 slots, 4 user features of 8 values each, latent dimension
    /// 4, base relevance 0.03, affinity scale 1.5, examination `1 / (j + 1)`, no click
    /// delay, uniform logging (`bts`: refreshed every 1,000 impressions, sharpness 2).
    pub fn new(impressions: u64, seed: u64) -> Self {
        ClickSimConfig {
            impressions,
            items: 46,
            slots: 3,
            user_features: 4,
            feature_values: 8,
            latent: 4,
            base_relevance: 0.03,
            affinity_scale: 1.5,
            examination: default_examination(3),
            click_delay: 0.0,
            logging: LoggingPolicy::Uniform,
            bts_update_every: 1_000,
            bts_sharpness: 2.0,
            seed,
        }
    }

    /// Sets the number of slots, with the default examination probabilities
    /// `1 / (j + 1)`.
    pub fn with_slots(mut self, slots: usize) -> Self {
        self.slots = slots;
        self.examination = default_examination(slots);
        self
    }

    /// Checks the parameters; the error names the one that is wrong.
    pub fn validate(&self) -> Result<(), GeneratorError> {
        if self.items == 0 || self.items > u32::MAX as usize {
            return Err(GeneratorError::Items(self.items));
        }
        if self.slots == 0 || self.slots > self.items {
            return Err(GeneratorError::Slots {
                items: self.items,
                slots: self.slots,
            });
        }
        if self.user_features == 0 || self.feature_values == 0 || self.latent == 0 {
            return Err(GeneratorError::NoUserModel);
        }
        if !(self.base_relevance > 0.0 && self.base_relevance < 1.0) {
            return Err(GeneratorError::BaseRelevance(self.base_relevance));
        }
        if !(self.affinity_scale.is_finite() && self.affinity_scale >= 0.0) {
            return Err(GeneratorError::AffinityScale(self.affinity_scale));
        }
        if self.examination.len() != self.slots {
            return Err(GeneratorError::ExaminationCount {
                given: self.examination.len(),
                slots: self.slots,
            });
        }
        if let Some(&e) = self.examination.iter().find(|&&e| !(e > 0.0 && e <= 1.0)) {
            return Err(GeneratorError::Examination(e));
        }
        if !(self.click_delay.is_finite() && self.click_delay >= 0.0) {
            return Err(GeneratorError::ClickDelay(self.click_delay));
        }
        if self.logging == LoggingPolicy::Bts {
            if self.bts_update_every == 0 {
                return Err(GeneratorError::BtsUpdateEvery);
            }
            if !(self.bts_sharpness.is_finite() && self.bts_sharpness >= 0.0) {
                return Err(GeneratorError::BtsSharpness(self.bts_sharpness));
            }
            if (self.items as f64).powi(self.slots as i32 - 1) > MAX_PREFIXES {
                return Err(GeneratorError::BtsPrefixes {
                    items: self.items,
                    slots: self.slots,
                });
            }
        }
        Ok(())
    }
}

/// `1 / (j + 1)` for `j` in `0..slots`.
pub fn default_examination(slots: usize) -> Vec<f64> {
    (0..slots).map(|j| 1.0 / (j + 1) as f64).collect()
}

/// The ground truth of a simulated log: the relevance model and the examination
/// probabilities.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClickTruth {
    /// The probability that each position is examined.
    pub examination: Vec<f64>,
    /// `c = logit(base_relevance)`.
    pub intercept: f64,
    /// `s`, the affinity scale.
    pub scale: f64,
    /// The latent dimension.
    pub latent: usize,
    /// The number of values per user feature.
    pub feature_values: usize,
    /// `e[f][v][i]`, flattened (feature-major, then value, then dimension).
    pub user_embeddings: Vec<f64>,
    /// `b_a`, each item's popularity (in logits).
    pub item_bias: Vec<f64>,
    /// `w_a[i]`, flattened (item-major).
    pub item_vectors: Vec<f64>,
}

impl ClickTruth {
    fn draw(config: &ClickSimConfig, rng: &mut Rng) -> Self {
        let ClickSimConfig {
            user_features,
            feature_values,
            latent,
            items,
            ..
        } = *config;
        let user_embeddings = (0..user_features * feature_values * latent)
            .map(|_| normal(rng))
            .collect();
        let item_vectors = (0..items * latent).map(|_| normal(rng)).collect();
        let item_bias = (0..items).map(|_| 0.5 * normal(rng)).collect();
        let b = config.base_relevance;
        ClickTruth {
            examination: config.examination.clone(),
            intercept: (b / (1.0 - b)).ln(),
            scale: config.affinity_scale,
            latent,
            feature_values,
            user_embeddings,
            item_bias,
            item_vectors,
        }
    }

    /// The number of items.
    pub fn items(&self) -> usize {
        self.item_bias.len()
    }

    /// The number of positions.
    pub fn slots(&self) -> usize {
        self.examination.len()
    }

    /// The relevance `r(z, a)` of every item `a` to the user with feature values `user`
    /// (into `out`). Each value must be below `feature_values`, and there must be no more
    /// values than the simulator's user features (it panics otherwise).
    pub fn relevance(&self, user: &[u32], out: &mut Vec<f64>) {
        let l = self.latent;
        let mut z = vec![0.0; l];
        for (f, &v) in user.iter().enumerate() {
            let at = (f * self.feature_values + v as usize) * l;
            for (zi, e) in z.iter_mut().zip(&self.user_embeddings[at..at + l]) {
                *zi += e;
            }
        }
        let norm = 1.0 / ((user.len().max(1) as f64).sqrt() * (l as f64).sqrt());
        out.clear();
        for (a, w) in self.item_vectors.chunks_exact(l).enumerate() {
            let dot: f64 = z.iter().zip(w).map(|(x, y)| x * y).sum();
            let logit = self.intercept + self.item_bias[a] + self.scale * dot * norm;
            out.push(1.0 / (1.0 + (-logit).exp()));
        }
    }

    /// The expected clicks per shown slot of `ranking` (the items at positions 0, 1, ...)
    /// for a user with item relevances `relevance`: `(1 / slots) sum_j examination[j]
    /// relevance[ranking[j]]` over the first `slots` positions (the items must be below
    /// `relevance.len()`).
    pub fn ranking_ctr(&self, relevance: &[f64], ranking: &[u32]) -> f64 {
        let sum: f64 = self
            .examination
            .iter()
            .zip(ranking)
            .map(|(e, &a)| e * relevance[a as usize])
            .sum();
        sum / self.slots() as f64
    }

    /// The click-through rate of the best ranking for this user: the most relevant items
    /// on the most examined positions.
    pub fn best_ctr(&self, relevance: &[f64]) -> f64 {
        let mut r = relevance.to_vec();
        r.sort_unstable_by(|a, b| b.total_cmp(a));
        let mut e = self.examination.clone();
        e.sort_unstable_by(|a, b| b.total_cmp(a));
        e.iter().zip(&r).map(|(e, r)| e * r).sum::<f64>() / self.slots() as f64
    }
}

/// One simulated impression: its rows in the Open Bandit Dataset's format, and the truth
/// behind them.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedImpression {
    /// The impression's number, from 0.
    pub id: u64,
    /// The logged impression: the user's feature values (as text, as in the log), one
    /// slot per position (the item, its click, the click's delay, the marginal
    /// propensity), the slate's propensity.
    pub impression: LoggedImpression,
    /// The user's feature values.
    pub user: Vec<u32>,
    /// The relevance of every item to this user.
    pub relevance: Vec<f64>,
    /// The logging policy's true expected clicks per slot for this user (an expectation
    /// over its slates).
    pub logging_ctr: f64,
}

impl SimulatedImpression {
    /// Appends the impression's rows in the format of [`ClickSimulator::csv_header`].
    pub fn write_rows(&self, out: &mut String) {
        let slots = self.impression.slots.len() as u64;
        for (j, s) in self.impression.slots.iter().enumerate() {
            let _ = write!(
                out,
                "{},{},{},{},{},{}",
                self.id * slots + j as u64,
                self.impression.timestamp,
                s.item,
                s.position,
                u8::from(s.click),
                s.propensity
            );
            for u in &self.impression.user {
                let _ = write!(out, ",{u}");
            }
            match s.delay {
                Some(d) => {
                    let _ = write!(out, ",{d}");
                }
                None => out.push(','),
            }
            match self.impression.slate_propensity {
                Some(p) => {
                    let _ = writeln!(out, ",{p}");
                }
                None => out.push_str(",\n"),
            }
        }
    }
}

/// The seeded click simulator: an iterator over [`SimulatedImpression`]s (see the
/// [module documentation](self)).
///
/// ```
/// use flowboost_connectors::generators::clicks::{ClickSimConfig, ClickSimulator};
///
/// let sim = ClickSimulator::new(ClickSimConfig::new(1_000, 7)).unwrap();
/// let truth = sim.truth().clone();
/// let log: Vec<_> = sim.collect();
/// assert_eq!(log.len(), 1_000);
/// // Every impression shows 3 of the 46 items, each with its propensity (uniform: 1/46).
/// assert!(log.iter().all(|i| i.impression.slots.len() == 3));
/// assert!(log[0].impression.slots.iter().all(|s| s.propensity == 1.0 / 46.0));
/// // The truth: the best ranking beats the logging policy.
/// let best: f64 = log.iter().map(|i| truth.best_ctr(&i.relevance)).sum();
/// let logging: f64 = log.iter().map(|i| i.logging_ctr).sum();
/// assert!(best > 2.0 * logging);
/// // The same seed gives the same log.
/// let again: Vec<_> = ClickSimulator::new(ClickSimConfig::new(1_000, 7)).unwrap().collect();
/// assert_eq!(again, log);
/// ```
#[derive(Clone, Debug)]
pub struct ClickSimulator {
    config: ClickSimConfig,
    truth: ClickTruth,
    users: Rng,
    policy: Rng,
    clicks: Rng,
    delays: Rng,
    next_id: u64,
    /// `bts`: impressions shown and clicks arrived, per item.
    shown: Vec<f64>,
    clicked: Vec<f64>,
    /// `bts`: clicks not yet arrived: (the first impression that knows of it, item).
    arriving: BinaryHeap<Reverse<(u64, u32)>>,
    /// The Plackett-Luce weights (`bts`).
    weights: Vec<f64>,
    /// The marginal probability of each item at each position (`slots x items`).
    marginals: Vec<f64>,
    /// The logging policy's expected examination-weighted relevance needs, per item, the
    /// sum over positions of `examination[j] P(item at j)`.
    exposure: Vec<f64>,
}

impl ClickSimulator {
    /// A simulator for `config`, or an error naming the invalid parameter.
    pub fn new(config: ClickSimConfig) -> Result<Self, GeneratorError> {
        config.validate()?;
        let base = splitmix64(config.seed ^ 0xc1c4_5e1e_c7ed_0001);
        let truth = ClickTruth::draw(&config, &mut seeded(base, 0));
        let m = config.items;
        let mut sim = ClickSimulator {
            users: seeded(base, 1),
            policy: seeded(base, 2),
            clicks: seeded(base, 3),
            delays: seeded(base, 4),
            next_id: 0,
            shown: vec![0.0; m],
            clicked: vec![0.0; m],
            arriving: BinaryHeap::new(),
            weights: vec![1.0; m],
            marginals: vec![1.0 / m as f64; config.slots * m],
            exposure: Vec::new(),
            truth,
            config,
        };
        sim.refresh_exposure();
        Ok(sim)
    }

    /// The configuration.
    pub fn config(&self) -> &ClickSimConfig {
        &self.config
    }

    /// The ground truth.
    pub fn truth(&self) -> &ClickTruth {
        &self.truth
    }

    /// The names of the user feature columns: `user_feature_0..`.
    pub fn user_feature_names(&self) -> Vec<String> {
        (0..self.config.user_features)
            .map(|f| format!("user_feature_{f}"))
            .collect()
    }

    /// The header of the log's rows: the Open Bandit Dataset's columns (an unnamed index,
    /// `timestamp`, `item_id`, `position`, `click`, `propensity_score`,
    /// `user_feature_*`; no affinity columns), then `click_delay` (empty when not clicked)
    /// and `slate_propensity`.
    pub fn csv_header(&self) -> String {
        let mut h = String::from(",timestamp,item_id,position,click,propensity_score");
        for name in self.user_feature_names() {
            h.push(',');
            h.push_str(&name);
        }
        h.push_str(",click_delay,slate_propensity\n");
        h
    }

    /// The items' features, as the Open Bandit Dataset's `item_context.csv`: an unnamed
    /// index, `item_id`, then `item_feature_0..` (the latent vector) and the popularity.
    pub fn item_context_csv(&self) -> String {
        let l = self.truth.latent;
        let mut out = String::from(",item_id");
        for i in 0..=l {
            let _ = write!(out, ",item_feature_{i}");
        }
        out.push('\n');
        for (a, w) in self.truth.item_vectors.chunks_exact(l).enumerate() {
            let _ = write!(out, "{a},{a}");
            for x in w {
                let _ = write!(out, ",{x}");
            }
            let _ = writeln!(out, ",{}", self.truth.item_bias[a]);
        }
        out
    }

    /// `exposure[a] = sum_j examination[j] P(a at j)` from the marginals.
    fn refresh_exposure(&mut self) {
        let m = self.config.items;
        self.exposure = vec![0.0; m];
        for (j, e) in self.config.examination.iter().enumerate() {
            for (x, p) in self
                .exposure
                .iter_mut()
                .zip(&self.marginals[j * m..(j + 1) * m])
            {
                *x += e * p;
            }
        }
    }

    /// `bts`: takes the clicks arrived before impression `t` and refreshes the policy.
    fn refresh_bts(&mut self, t: u64) {
        while let Some(&Reverse((at, item))) = self.arriving.peek() {
            if at > t {
                break;
            }
            self.arriving.pop();
            self.clicked[item as usize] += 1.0;
        }
        let gamma = self.config.bts_sharpness;
        for ((w, c), s) in self.weights.iter_mut().zip(&self.clicked).zip(&self.shown) {
            *w = ((1.0 + c) / (2.0 + s)).powf(gamma);
        }
        let top = self.weights.iter().copied().fold(0.0, f64::max);
        for w in &mut self.weights {
            *w = w.max(BTS_FLOOR * top);
        }
        plackett_luce_marginals(&self.weights, self.config.slots, &mut self.marginals);
        self.refresh_exposure();
    }

    /// Draws the logging policy's slate; returns it with its probability.
    fn slate(&mut self) -> (Vec<u32>, f64) {
        let m = self.config.items;
        let k = self.config.slots;
        match self.config.logging {
            LoggingPolicy::Uniform => {
                // A partial Fisher-Yates shuffle of 0..m that stores only the swapped
                // positions: (index, value now there), the latest last.
                let mut swapped: Vec<(usize, usize)> = Vec::with_capacity(k);
                let at = |swapped: &[(usize, usize)], i: usize| {
                    swapped
                        .iter()
                        .rev()
                        .find(|&&(x, _)| x == i)
                        .map_or(i, |&(_, v)| v)
                };
                let mut slate: Vec<u32> = Vec::with_capacity(k);
                let mut p = 1.0;
                for j in 0..k {
                    let r = j + below(&mut self.policy, (m - j) as u64) as usize;
                    let (vr, vj) = (at(&swapped, r), at(&swapped, j));
                    // Position j is never read again: only r keeps the swapped value.
                    swapped.push((r, vj));
                    slate.push(vr as u32);
                    p /= (m - j) as f64;
                }
                (slate, p)
            }
            LoggingPolicy::Bts => {
                let total: f64 = self.weights.iter().sum();
                let mut used = 0.0;
                let mut slate: Vec<u32> = Vec::with_capacity(k);
                let mut p = 1.0;
                for _ in 0..k {
                    let left = total - used;
                    let mut u = unit(&mut self.policy) * left;
                    let mut pick = None;
                    for (a, &w) in self.weights.iter().enumerate() {
                        if slate.contains(&(a as u32)) {
                            continue;
                        }
                        pick = Some(a);
                        if u < w {
                            break;
                        }
                        u -= w;
                    }
                    let a = pick.expect("slots <= items");
                    p *= self.weights[a] / left;
                    used += self.weights[a];
                    slate.push(a as u32);
                }
                (slate, p)
            }
        }
    }

    /// The delay of a click, in impressions.
    fn delay(&mut self) -> u64 {
        let mean = self.config.click_delay;
        if mean <= 0.0 {
            return 0;
        }
        let q = 1.0 / (1.0 + mean);
        let u = unit(&mut self.delays);
        ((1.0 - u).ln() / (1.0 - q).ln()).floor().min(1e15) as u64
    }
}

impl Iterator for ClickSimulator {
    type Item = SimulatedImpression;

    fn next(&mut self) -> Option<SimulatedImpression> {
        let t = self.next_id;
        if t >= self.config.impressions {
            return None;
        }
        self.next_id += 1;
        let bts = self.config.logging == LoggingPolicy::Bts;
        if bts && t > 0 && t.is_multiple_of(self.config.bts_update_every) {
            self.refresh_bts(t);
        }
        let user: Vec<u32> = (0..self.config.user_features)
            .map(|_| below(&mut self.users, self.config.feature_values as u64) as u32)
            .collect();
        let mut relevance = Vec::with_capacity(self.config.items);
        self.truth.relevance(&user, &mut relevance);
        let logging_ctr = self
            .exposure
            .iter()
            .zip(&relevance)
            .map(|(x, r)| x * r)
            .sum::<f64>()
            / self.config.slots as f64;
        let (slate, slate_p) = self.slate();
        let m = self.config.items;
        let mut slots = Vec::with_capacity(slate.len());
        for (j, &a) in slate.iter().enumerate() {
            let p_click = self.config.examination[j] * relevance[a as usize];
            let click = unit(&mut self.clicks) < p_click;
            let delay = if click { Some(self.delay()) } else { None };
            if bts {
                self.shown[a as usize] += 1.0;
                if let Some(d) = delay {
                    self.arriving
                        .push(Reverse((t.saturating_add(d).saturating_add(1), a)));
                }
            }
            slots.push(LoggedSlot {
                line: 2 + t * slate.len() as u64 + j as u64,
                item: a,
                position: j as u32 + 1,
                click,
                propensity: self.marginals[j * m + a as usize],
                delay,
            });
        }
        Some(SimulatedImpression {
            id: t,
            impression: LoggedImpression {
                line: 2 + t * slate.len() as u64,
                timestamp: t.to_string(),
                user: user.iter().map(u32::to_string).collect(),
                affinity: Vec::new(),
                slots,
                slate_propensity: Some(slate_p),
            },
            user,
            relevance,
            logging_ctr,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.config.impressions - self.next_id).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// The exact marginal probabilities `out[j * m + a]` that a Plackett-Luce ranking with
/// weights `w` puts item `a` at position `j`, for `j < k`.
///
/// `P(a at j) = sum over ordered prefixes S of length j without a of P(S) w_a / (W -
/// w(S))`, computed for every `a` at once as `w_a (T_j - C_j[a])` with `T_j` the sum of
/// `P(S) / (W - w(S))` over all prefixes and `C_j[a]` the same over the prefixes holding
/// `a`: `O(m^(k-1))` prefixes in all.
pub fn plackett_luce_marginals(w: &[f64], k: usize, out: &mut [f64]) {
    let m = w.len();
    let total: f64 = w.iter().sum();
    let mut contain = vec![0.0; m];
    let mut prefix = Vec::with_capacity(k);
    for j in 0..k {
        contain.fill(0.0);
        let mut sum = 0.0;
        prefixes(
            w,
            total,
            j,
            &mut prefix,
            1.0,
            0.0,
            &mut |prefix, p, used| {
                let f = p / (total - used);
                sum += f;
                for &b in prefix {
                    contain[b] += f;
                }
            },
        );
        for a in 0..m {
            out[j * m + a] = w[a] * (sum - contain[a]);
        }
    }
}

/// Visits every ordered prefix of `len` distinct items with its probability and weight.
fn prefixes(
    w: &[f64],
    total: f64,
    len: usize,
    prefix: &mut Vec<usize>,
    p: f64,
    used: f64,
    visit: &mut dyn FnMut(&[usize], f64, f64),
) {
    if prefix.len() == len {
        visit(prefix, p, used);
        return;
    }
    for b in 0..w.len() {
        if prefix.contains(&b) {
            continue;
        }
        let pb = p * w[b] / (total - used);
        prefix.push(b);
        prefixes(w, total, len, prefix, pb, used + w[b], visit);
        prefix.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All ordered slates of `k` of the `m` items with their Plackett-Luce probability.
    fn brute_force(w: &[f64], k: usize) -> Vec<(Vec<usize>, f64)> {
        let mut out = Vec::new();
        let total: f64 = w.iter().sum();
        fn rec(
            w: &[f64],
            k: usize,
            total: f64,
            s: &mut Vec<usize>,
            p: f64,
            used: f64,
            out: &mut Vec<(Vec<usize>, f64)>,
        ) {
            if s.len() == k {
                out.push((s.clone(), p));
                return;
            }
            for b in 0..w.len() {
                if !s.contains(&b) {
                    s.push(b);
                    rec(w, k, total, s, p * w[b] / (total - used), used + w[b], out);
                    s.pop();
                }
            }
        }
        rec(w, k, total, &mut Vec::new(), 1.0, 0.0, &mut out);
        out
    }

    #[test]
    fn plackett_luce_marginals_match_enumeration() {
        let w = [0.3, 2.0, 0.05, 1.0, 0.7];
        for k in 1..=4 {
            let mut got = vec![0.0; k * w.len()];
            plackett_luce_marginals(&w, k, &mut got);
            let mut want = vec![0.0; k * w.len()];
            for (slate, p) in brute_force(&w, k) {
                for (j, &a) in slate.iter().enumerate() {
                    want[j * w.len() + a] += p;
                }
            }
            for (g, e) in got.iter().zip(&want) {
                assert!((g - e).abs() < 1e-12, "k {k}: {got:?} vs {want:?}");
            }
            // Each position holds exactly one item.
            for j in 0..k {
                let s: f64 = got[j * w.len()..(j + 1) * w.len()].iter().sum();
                assert!((s - 1.0).abs() < 1e-12);
            }
        }
    }

    /// The recorded propensities are the frequencies of the slates drawn.
    #[test]
    fn recorded_propensities_match_the_draws() {
        for logging in [LoggingPolicy::Uniform, LoggingPolicy::Bts] {
            let mut config = ClickSimConfig::new(60_000, 3);
            config.items = 5;
            config.logging = logging;
            config.bts_update_every = 100_000; // refreshed never: fixed propensities...
            config.base_relevance = 0.3;
            let mut sim = ClickSimulator::new(config).unwrap();
            if logging == LoggingPolicy::Bts {
                // ...but not uniform ones.
                sim.clicked = vec![5.0, 40.0, 1.0, 10.0, 20.0];
                sim.shown = vec![100.0; 5];
                sim.refresh_bts(0);
            }
            let mut counts = [0.0; 15];
            let mut props = [0.0; 15];
            let mut slates = std::collections::HashMap::new();
            for imp in sim.by_ref() {
                let key: Vec<u32> = imp.impression.slots.iter().map(|s| s.item).collect();
                let e = slates.entry(key).or_insert((0.0, 0.0));
                e.0 += 1.0;
                e.1 = imp.impression.slate_propensity.unwrap();
                for (j, s) in imp.impression.slots.iter().enumerate() {
                    counts[j * 5 + s.item as usize] += 1.0;
                    props[j * 5 + s.item as usize] = s.propensity;
                }
            }
            let n = 60_000.0;
            for (c, p) in counts.iter().zip(&props) {
                let se = (p * (1.0 - p) / n).sqrt();
                assert!(
                    (c / n - p).abs() < 5.0 * se + 1e-9,
                    "{logging:?}: {c} vs {p}"
                );
            }
            assert_eq!(slates.len(), 60, "every ordered slate of 3 of 5 items");
            for (slate, (c, p)) in slates {
                let se = (p * (1.0 - p) / n).sqrt();
                assert!(
                    (c / n - p).abs() < 5.0 * se,
                    "{logging:?} {slate:?}: {c} vs {p}"
                );
            }
        }
    }

    #[test]
    fn uniform_slates_are_distinct_items() {
        let mut config = ClickSimConfig::new(2_000, 9);
        config.items = 4;
        config.slots = 4;
        config.examination = default_examination(4);
        for imp in ClickSimulator::new(config).unwrap() {
            let mut items: Vec<u32> = imp.impression.slots.iter().map(|s| s.item).collect();
            items.sort_unstable();
            assert_eq!(items, vec![0, 1, 2, 3]);
            assert!((imp.impression.slate_propensity.unwrap() - 1.0 / 24.0).abs() < 1e-15);
        }
    }

    #[test]
    fn click_rates_follow_examination_times_relevance() {
        let mut config = ClickSimConfig::new(100_000, 5);
        config.click_delay = 4.0;
        let sim = ClickSimulator::new(config).unwrap();
        let truth = sim.truth().clone();
        let (mut clicks, mut expected, mut delays, mut n_delays) = (0.0, 0.0, 0.0, 0.0);
        let (mut logging, mut n) = (0.0, 0.0);
        for imp in sim {
            for (j, s) in imp.impression.slots.iter().enumerate() {
                expected += truth.examination[j] * imp.relevance[s.item as usize];
                if s.click {
                    clicks += 1.0;
                    delays += s.delay.unwrap() as f64;
                    n_delays += 1.0;
                } else {
                    assert_eq!(s.delay, None);
                }
            }
            logging += imp.logging_ctr;
            n += 1.0;
        }
        // The clicks' count against its expectation (Poisson-like spread).
        assert!(
            (clicks - expected).abs() < 5.0 * expected.sqrt(),
            "{clicks} vs {expected}"
        );
        // The logging policy's true CTR per slot is the same expectation.
        assert!((logging / n - expected / (3.0 * n)).abs() < 0.002);
        let mean_delay = delays / n_delays;
        assert!((mean_delay - 4.0).abs() < 0.3, "{mean_delay}");
    }

    #[test]
    fn bts_learns_to_show_the_popular_items() {
        let mut config = ClickSimConfig::new(30_000, 11);
        config.logging = LoggingPolicy::Bts;
        let sim = ClickSimulator::new(config.clone()).unwrap();
        let mut uniform_config = config;
        uniform_config.logging = LoggingPolicy::Uniform;
        let uniform = ClickSimulator::new(uniform_config).unwrap();
        let last = |sim: ClickSimulator| -> f64 {
            sim.skip(20_000).map(|i| i.logging_ctr).sum::<f64>() / 10_000.0
        };
        let (bts, uni) = (last(sim), last(uniform));
        assert!(bts > 1.2 * uni, "bts {bts} vs uniform {uni}");
    }

    #[test]
    fn invalid_parameters_are_named() {
        let base = ClickSimConfig::new(10, 1);
        let cases: Vec<(ClickSimConfig, &str)> = vec![
            (
                ClickSimConfig {
                    items: 2,
                    ..base.clone()
                },
                "slots must be in 1..=2",
            ),
            (
                ClickSimConfig {
                    base_relevance: 1.0,
                    ..base.clone()
                },
                "base relevance",
            ),
            (
                ClickSimConfig {
                    examination: vec![1.0, 0.5],
                    ..base.clone()
                },
                "2 examination probabilities for 3 slots",
            ),
            (
                ClickSimConfig {
                    examination: vec![1.0, 0.0, 0.5],
                    ..base.clone()
                },
                "outside (0, 1]",
            ),
            (
                ClickSimConfig {
                    click_delay: -1.0,
                    ..base.clone()
                },
                "click delay",
            ),
            (
                ClickSimConfig {
                    logging: LoggingPolicy::Bts,
                    items: 1000,
                    slots: 4,
                    examination: default_examination(4),
                    ..base.clone()
                },
                "too many",
            ),
        ];
        for (c, reason) in cases {
            let e = ClickSimulator::new(c).unwrap_err().to_string();
            assert!(e.contains(reason), "{e} (expected {reason})");
        }
        assert!("greedy".parse::<LoggingPolicy>().is_err());
        assert_eq!("bts".parse::<LoggingPolicy>(), Ok(LoggingPolicy::Bts));
    }
}
