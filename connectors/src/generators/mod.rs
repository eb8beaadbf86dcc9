//! Seeded synthetic streams for binary, multiclass and multi-label learning, and a click
//! simulator with known truth ([`clicks`]).
//!
//! Every stream draws dense features uniformly in `[-1, 1)` and labels them with a hidden
//! random concept: a two-layer network of steep `tanh` units ("soft hyperplanes", each on 4
//! random features), each output (the binary score, a class score, a label score) a random
//! combination of 4 of them. A linear model captures much of such a concept and a tree can
//! approximate it with axis-aligned splits, but neither represents it exactly: the
//! decision boundaries bend where the units saturate, which is where combining weak
//! learners (boosting) pays.
//!
//! - **Binary**: label 1 when the score exceeds its median (classes about balanced).
//! - **Multiclass**: the class with the highest score plus a per-class offset, the offsets
//!   calibrated so that the classes are about equally frequent.
//! - **Multi-label**: label `l` is relevant when its score exceeds a per-label threshold.
//!   Label base rates follow a Zipf law over a random order of the labels (a few frequent
//!   labels, a long tail, as in real multi-label data); the thresholds are the matching
//!   quantiles of each score, scaled together so that the mean number of relevant labels
//!   (cardinality) matches the target. An example with no label above its threshold gets
//!   the label closest to its threshold (in score standard deviations), so every example
//!   has at least one relevant label; the calibration accounts for that.
//!
//! Label noise: binary labels flip, and multiclass labels become a uniformly drawn other
//! class, with probability `noise`; in multi-label streams each label's relevance flips
//! with a probability chosen so that the label's frequency is unchanged (`noise` for a
//! relevant label, `noise · π / (1 - π)` for an irrelevant one with base rate `π`).
//!
//! Quantiles and offsets are calibrated once, at construction, on 4,000 draws of a separate
//! random stream (fewer beyond 2,000 labels, to hold at most 8 million scores for that
//! moment); after that a generator stores only the concept and a few vectors
//! (`O(dim + labels)` memory, no examples), and produces examples one at a time. Everything
//! is determined by the seed: the concept (stream 0 of [`seeded`]), the features (stream
//! 1), the calibration draws (stream 2), the label order of the Zipf law (stream 3) and
//! the label noise (stream 4; so the same seed gives the same features at any noise
//! level).

pub mod clicks;
mod concept;
mod error;

pub use error::GeneratorError;

use self::concept::{Concept, unit};
use flowboost_operators::data::{Example, Features, Label, Schema, Task};
use flowboost_operators::rng::{Rng, seeded};
use serde::{Deserialize, Serialize};

/// The parameters of a synthetic stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeneratorConfig {
    /// The task: binary, multiclass or multi-label.
    pub task: Task,
    /// The number of examples in the stream.
    pub examples: u64,
    /// The number of (numeric) features.
    pub dim: usize,
    /// The number of labels (2 for a binary task).
    pub labels: usize,
    /// The mean number of relevant labels per example (multi-label streams only; at least
    /// 1, since every example has a relevant label).
    pub cardinality: f64,
    /// The label noise rate, in `[0, 1)`.
    pub noise: f64,
    /// The seed that determines the concept and the examples.
    pub seed: u64,
}

impl GeneratorConfig {
    /// A binary stream: 20,000 examples, 20 features, 5% label noise.
    pub fn binary(seed: u64) -> Self {
        GeneratorConfig {
            task: Task::Binary,
            examples: 20_000,
            dim: 20,
            labels: 2,
            cardinality: 1.0,
            noise: 0.05,
            seed,
        }
    }

    /// A multiclass stream: 20,000 examples, 20 features, 5 classes, 5% label noise.
    pub fn multiclass(seed: u64) -> Self {
        GeneratorConfig {
            task: Task::Multiclass,
            examples: 20_000,
            dim: 20,
            labels: 5,
            cardinality: 1.0,
            noise: 0.05,
            seed,
        }
    }

    /// A multi-label stream: 5,000 examples, 30 features, 8 labels, cardinality 2, 2% noise.
    pub fn multilabel(seed: u64) -> Self {
        GeneratorConfig {
            task: Task::Multilabel,
            examples: 5_000,
            dim: 30,
            labels: 8,
            cardinality: 2.0,
            noise: 0.02,
            seed,
        }
    }

    /// A multi-label stream shaped like MULAN's mediamill: 43,907 examples, 120 numeric
    /// features, 101 labels, cardinality 4.4 (mediamill's is 4.376), 2% noise.
    pub fn mediamill_like(seed: u64) -> Self {
        GeneratorConfig {
            task: Task::Multilabel,
            examples: 43_907,
            dim: 120,
            labels: 101,
            cardinality: 4.4,
            noise: 0.02,
            seed,
        }
    }

    /// The preset of that name: `binary`, `multiclass`, `multilabel` or `mediamill`.
    pub fn preset(name: &str, seed: u64) -> Option<Self> {
        match name {
            "binary" => Some(Self::binary(seed)),
            "multiclass" => Some(Self::multiclass(seed)),
            "multilabel" => Some(Self::multilabel(seed)),
            "mediamill" => Some(Self::mediamill_like(seed)),
            _ => None,
        }
    }

    /// The names [`preset`](Self::preset) accepts.
    pub const PRESETS: [&'static str; 4] = ["binary", "multiclass", "multilabel", "mediamill"];

    /// Checks the parameters: `dim >= 1`, `labels >= 2` (exactly 2 for a binary task),
    /// `0 <= noise < 1`, `0 < cardinality < labels` (and `cardinality >= 1` for a
    /// multi-label task, since every example has a relevant label).
    pub fn validate(&self) -> Result<(), GeneratorError> {
        if self.dim == 0 {
            return Err(GeneratorError::NoDim);
        }
        if self.dim > u32::MAX as usize {
            return Err(GeneratorError::DimTooLarge(self.dim));
        }
        if self.labels < 2 {
            return Err(GeneratorError::TooFewLabels(self.labels));
        }
        if self.labels > u32::MAX as usize {
            return Err(GeneratorError::TooManyLabels(self.labels));
        }
        if self.task == Task::Binary && self.labels != 2 {
            return Err(GeneratorError::BinaryLabels(self.labels));
        }
        if !(self.noise >= 0.0 && self.noise < 1.0) {
            return Err(GeneratorError::Noise(self.noise));
        }
        if !(self.cardinality > 0.0 && self.cardinality < self.labels as f64) {
            return Err(GeneratorError::Cardinality {
                labels: self.labels,
                cardinality: self.cardinality,
            });
        }
        if self.task == Task::Multilabel && self.cardinality < 1.0 {
            return Err(GeneratorError::MultilabelCardinality(self.cardinality));
        }
        Ok(())
    }
}

/// The number of calibration draws (fewer for very many labels: the draws times the
/// outputs stay below `CALIBRATION_CELLS`).
const CALIBRATION: usize = 4_000;
/// The most calibration scores held at once (64 MB).
const CALIBRATION_CELLS: usize = 8_000_000;
/// The largest base rate of a label.
const MAX_RATE: f64 = 0.99;

/// How scores become labels.
#[derive(Clone, Debug)]
enum Labeler {
    Binary {
        threshold: f64,
    },
    Multiclass {
        offsets: Vec<f64>,
    },
    Multilabel {
        thresholds: Vec<f64>,
        /// Each score's standard deviation (to compare distances to the thresholds).
        spread: Vec<f64>,
        /// Each label's base rate (for the noise).
        rates: Vec<f64>,
    },
}

/// A seeded synthetic stream: an iterator over labeled [`Example`]s with ids
/// `0..examples`. See the [module documentation](self) for the concepts.
///
/// ```
/// use flowboost_connectors::generators::{Generator, GeneratorConfig};
///
/// let mut config = GeneratorConfig::multilabel(7);
/// config.examples = 100;
/// let stream = Generator::new(config.clone()).unwrap();
/// assert_eq!(stream.schema().num_labels(), 8);
/// let examples: Vec<_> = stream.collect();
/// assert_eq!(examples.len(), 100);
/// assert!(examples.iter().all(|e| !e.label.as_ref().unwrap().relevant().is_empty()));
/// // The same seed gives the same stream.
/// assert_eq!(Generator::new(config).unwrap().collect::<Vec<_>>(), examples);
/// ```
#[derive(Clone, Debug)]
pub struct Generator {
    config: GeneratorConfig,
    schema: Schema,
    concept: Concept,
    labeler: Labeler,
    /// Draws the features.
    rng: Rng,
    /// Draws the label noise (separately, so that the features do not depend on `noise`).
    noise_rng: Rng,
    next_id: u64,
    hidden: Vec<f64>,
    scores: Vec<f64>,
}

impl Generator {
    /// A generator for `config`, or an error naming the invalid parameter.
    pub fn new(config: GeneratorConfig) -> Result<Self, GeneratorError> {
        config.validate()?;
        let (dim, labels) = (config.dim, config.labels);
        let outputs = if config.task == Task::Binary {
            1
        } else {
            labels
        };
        let concept = Concept::new(&mut seeded(config.seed, 0), dim, outputs);
        let mut hidden = vec![0.0; concept.units()];
        let mut scores = vec![0.0; concept.outputs()];

        // Calibration scores, one column of `n` draws per output.
        let n = (CALIBRATION_CELLS / outputs).clamp(500, CALIBRATION);
        let mut cal = vec![0.0; n * outputs];
        let mut rng = seeded(config.seed, 2);
        let mut x = vec![0.0; dim];
        for i in 0..n {
            draw_features(&mut rng, &mut x);
            concept.scores(&x, &mut hidden, &mut scores);
            for (o, s) in scores.iter().enumerate() {
                cal[o * n + i] = *s;
            }
        }
        let labeler = match config.task {
            Task::Binary => Labeler::Binary {
                threshold: median(&mut cal),
            },
            Task::Multiclass => Labeler::Multiclass {
                offsets: balance_offsets(&cal, labels),
            },
            Task::Multilabel => {
                let mut order_rng = seeded(config.seed, 3);
                calibrate_multilabel(&mut cal, labels, config.cardinality, &mut order_rng)
            }
        };

        let mut schema = Schema::numeric(dim, labels, config.task);
        schema.labels = (0..labels)
            .map(|l| match config.task {
                Task::Binary => l.to_string(),
                Task::Multiclass => format!("c{l}"),
                Task::Multilabel => format!("l{l}"),
            })
            .collect();
        Ok(Generator {
            rng: seeded(config.seed, 1),
            noise_rng: seeded(config.seed, 4),
            config,
            schema,
            concept,
            labeler,
            next_id: 0,
            hidden,
            scores,
        })
    }

    /// The stream's schema: numeric attributes `f0..`, labels `0`/`1` (binary), `c0..`
    /// (multiclass) or `l0..` (multi-label).
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The configuration.
    pub fn config(&self) -> &GeneratorConfig {
        &self.config
    }

    /// Draws one example's label from the current scores.
    fn label(&mut self) -> Label {
        let noise = self.config.noise;
        let rng = &mut self.noise_rng;
        match &self.labeler {
            Labeler::Binary { threshold } => {
                let mut y = u32::from(self.scores[0] > *threshold);
                if unit(rng) < noise {
                    y = 1 - y;
                }
                Label::Class(y)
            }
            Labeler::Multiclass { offsets } => {
                let k = offsets.len();
                let mut y = argmax(self.scores.iter().zip(offsets).map(|(s, o)| s + o));
                if unit(rng) < noise {
                    // Another class, uniformly.
                    let other = ((unit(rng) * (k - 1) as f64) as usize).min(k - 2);
                    y = if other >= y { other + 1 } else { other };
                }
                Label::Class(y as u32)
            }
            Labeler::Multilabel {
                thresholds,
                spread,
                rates,
            } => {
                let mut set = Vec::new();
                for (l, ((s, t), pi)) in self.scores.iter().zip(thresholds).zip(rates).enumerate() {
                    let relevant = s > t;
                    let flip = if relevant {
                        noise
                    } else {
                        noise * pi / (1.0 - pi)
                    };
                    if relevant != (unit(rng) < flip) {
                        set.push(l as u32);
                    }
                }
                if set.is_empty() {
                    let closest = argmax(
                        self.scores
                            .iter()
                            .zip(thresholds)
                            .zip(spread)
                            .map(|((s, t), sd)| (s - t) / sd),
                    );
                    set.push(closest as u32);
                }
                Label::Set(set)
            }
        }
    }
}

impl Iterator for Generator {
    type Item = Example;

    fn next(&mut self) -> Option<Example> {
        if self.next_id >= self.config.examples {
            return None;
        }
        let mut x = vec![0.0; self.config.dim];
        draw_features(&mut self.rng, &mut x);
        self.concept.scores(&x, &mut self.hidden, &mut self.scores);
        let label = self.label();
        let id = self.next_id;
        self.next_id += 1;
        Some(Example {
            id,
            features: Features::Dense(x),
            label: Some(label),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.config.examples - self.next_id;
        let left = usize::try_from(left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// Fills `x` with uniform draws in `[-1, 1)`.
fn draw_features(rng: &mut Rng, x: &mut [f64]) {
    for v in x.iter_mut() {
        *v = 2.0 * unit(rng) - 1.0;
    }
}

/// The index of the largest value (the first of ties).
fn argmax(values: impl Iterator<Item = f64>) -> usize {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, v) in values.enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    best.0
}

/// The median of `v` (reordered).
fn median(v: &mut [f64]) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    0.5 * (v[(n - 1) / 2] + v[n / 2])
}

/// Per-class offsets that make `argmax(score + offset)` about uniform over the classes on
/// the calibration draws (`cal` has one column of scores per class).
fn balance_offsets(cal: &[f64], k: usize) -> Vec<f64> {
    let n = cal.len() / k;
    let mut offsets = vec![0.0; k];
    let mut counts = vec![0usize; k];
    for _ in 0..100 {
        counts.fill(0);
        for i in 0..n {
            let y = argmax((0..k).map(|c| cal[c * n + i] + offsets[c]));
            counts[y] += 1;
        }
        let target = n as f64 / k as f64;
        for (o, &n) in offsets.iter_mut().zip(&counts) {
            *o += 0.3 * (target / (n as f64).max(0.5)).ln();
        }
    }
    offsets
}

/// Thresholds, spreads and base rates for a multi-label stream of the given mean
/// cardinality (`cal` has one column of scores per label; sorted in place).
///
/// The base rates are `min(0.99, λ z_l)` with `z` Zipf weights over a random order of the
/// labels; `λ` is found by bisection so that the mean cardinality on the calibration draws,
/// counting the "at least one label" rule, matches the target.
fn calibrate_multilabel(
    cal: &mut [f64],
    labels: usize,
    cardinality: f64,
    rng: &mut Rng,
) -> Labeler {
    let n = cal.len() / labels;
    // Zipf weights over a random order of the labels.
    let mut order: Vec<usize> = (0..labels).collect();
    for i in (1..labels).rev() {
        let j = ((unit(rng) * (i + 1) as f64) as usize).min(i);
        order.swap(i, j);
    }
    let mut zipf = vec![0.0; labels];
    for (rank, &l) in order.iter().enumerate() {
        zipf[l] = 1.0 / (rank + 1) as f64;
    }
    let total: f64 = zipf.iter().sum();
    zipf.iter_mut().for_each(|z| *z /= total);

    let spread: Vec<f64> = cal
        .chunks_exact(n)
        .map(|c| {
            let mean = c.iter().sum::<f64>() / n as f64;
            let var = c.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
            var.sqrt().max(1e-12)
        })
        .collect();
    // Each draw's rank within each label's column, then the columns sorted.
    let mut ranks = vec![0u32; cal.len()];
    let mut index: Vec<u32> = (0..n as u32).collect();
    for (column, rank) in cal.chunks_exact_mut(n).zip(ranks.chunks_exact_mut(n)) {
        index.sort_unstable_by(|&a, &b| column[a as usize].total_cmp(&column[b as usize]));
        for (r, &i) in index.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        column.sort_unstable_by(f64::total_cmp);
    }
    let rates_for =
        |scale: f64| -> Vec<f64> { zipf.iter().map(|z| (z * scale).min(MAX_RATE)).collect() };
    // How many of the calibration draws exceed a label's threshold at base rate `rate`.
    let above = |rate: f64| ((rate * n as f64).round() as usize).min(n);
    // The mean cardinality on the calibration draws, with at least one label each.
    let mut counts = vec![0u32; n];
    let mut cardinality_for = |scale: f64| -> f64 {
        counts.fill(0);
        for (rank, rate) in ranks.chunks_exact(n).zip(rates_for(scale)) {
            let cut = (n - above(rate)) as u32;
            for (n, &r) in counts.iter_mut().zip(rank) {
                *n += u32::from(r >= cut);
            }
        }
        counts.iter().map(|&n| n.max(1) as f64).sum::<f64>() / n as f64
    };
    let min_zipf = zipf.iter().copied().fold(f64::INFINITY, f64::min);
    let (mut lo, mut hi) = (0.0, MAX_RATE / min_zipf);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if cardinality_for(mid) < cardinality {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The threshold that `rate` of a sorted column exceeds.
    let threshold = |column: &[f64], rate: f64| -> f64 {
        match above(rate) {
            0 => column[n - 1] + 1.0,
            a if a >= n => column[0] - 1.0,
            a => 0.5 * (column[n - a - 1] + column[n - a]),
        }
    };
    let rates = rates_for(0.5 * (lo + hi));
    let thresholds = cal
        .chunks_exact(n)
        .zip(&rates)
        .map(|(c, r)| threshold(c, *r))
        .collect();
    Labeler::Multilabel {
        thresholds,
        spread,
        rates,
    }
}
