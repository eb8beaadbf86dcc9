use super::{InFlight, LabelSetRule, Prediction};
use crate::data::{Label, Task};
use crate::hedge::Hedge;
use crate::metrics::rank_loss;
use crate::rng::{Rng, seeded};
use crate::topk::{PairFeedback, TopKConfig, full_information_pairs, show};
use serde::{Deserialize, Serialize};

/// How to read a score vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScoreKind {
    /// One value on the binary margin scale: predict positive (class 1) when `s >= 0`
    /// (`sign(0) = +1`, as in the binary paper).
    Margin,
    /// One value per label: predict the highest (the lowest index among equals); for
    /// multi-label, the label set comes from the [`LabelSetRule`].
    Votes,
}

/// Which expert the terminal follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExpertSelection {
    /// Always the last expert (all weak learners): Online BBM, OnlineMBBM, OnlineBMR, Oza.
    Last,
    /// Hedge over the `N` experts: AdaBoost.OL, AdaBoost.OLM, Ada.OLMR.
    Hedge,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Selector {
    Last,
    Hedge(Hedge),
}

/// The terminal stage: chooses the expert, emits the prediction, and updates Hedge (and the
/// label-set rule) when the label is known.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Terminal {
    task: Task,
    kind: ScoreKind,
    score_dim: usize,
    experts: usize,
    selector: Selector,
    rule: LabelSetRule,
    /// Top-k boosters: the shown ranking's randomization, and its generator.
    topk: Option<(TopKConfig, Rng)>,
}

/// The random stream of the terminal's top-k randomization (under the run's seed).
const TOPK_STREAM: u64 = 5_000_000;

impl Terminal {
    /// A terminal for `experts` experts whose score vectors have `score_dim` values.
    pub fn new(
        task: Task,
        kind: ScoreKind,
        score_dim: usize,
        experts: usize,
        selection: ExpertSelection,
        seed: u64,
    ) -> Self {
        let selector = match selection {
            ExpertSelection::Last => Selector::Last,
            ExpertSelection::Hedge => Selector::Hedge(Hedge::new(experts, seed)),
        };
        Terminal {
            task,
            kind,
            score_dim,
            experts,
            selector,
            rule: LabelSetRule::default(),
            topk: None,
        }
    }

    /// Makes this the terminal of a top-k booster: every prediction also ranks the labels
    /// and shows a randomized top-k (see [`crate::topk::show`]); Hedge learns from the
    /// estimated unweighted rank loss of each expert (ties count as losses), also under full
    /// information (all pairs, weight 1).
    pub fn with_topk(mut self, config: TopKConfig, seed: u64) -> Self {
        self.topk = Some((config, seeded(seed, TOPK_STREAM)));
        self
    }

    /// Replaces the label-set rule (multi-label tasks; the default is the top-m rule).
    pub fn with_label_set(mut self, rule: LabelSetRule) -> Self {
        self.rule = rule;
        self
    }

    /// Whether this terminal has the shape of `other` (task, score kind and size, experts,
    /// expert selection, top-k or not), as a terminal restored from a file must have that
    /// of a freshly built one.
    pub fn fits(&self, other: &Terminal) -> bool {
        let selectors = match (&self.selector, &other.selector) {
            (Selector::Last, Selector::Last) => true,
            (Selector::Hedge(a), Selector::Hedge(b)) => a.len() == b.len(),
            _ => false,
        };
        self.task == other.task
            && self.kind == other.kind
            && self.score_dim == other.score_dim
            && self.experts == other.experts
            && selectors
            && self.topk.is_some() == other.topk.is_some()
    }

    /// The label-set rule.
    pub fn label_set(&self) -> &LabelSetRule {
        &self.rule
    }

    /// Whether the stages must append their expert scores to the record's trail.
    pub fn needs_trail(&self) -> bool {
        matches!(self.selector, Selector::Hedge(_))
    }

    /// The Hedge weights' probabilities, if this terminal uses Hedge.
    pub fn hedge_probabilities(&self) -> Option<Vec<f64>> {
        match &self.selector {
            Selector::Hedge(h) => Some(h.probabilities()),
            Selector::Last => None,
        }
    }

    /// The class a score vector predicts.
    fn class_of(&self, scores: &[f64]) -> u32 {
        match self.kind {
            ScoreKind::Margin => u32::from(scores[0] >= 0.0),
            ScoreKind::Votes => {
                let mut best = 0;
                for (l, &s) in scores.iter().enumerate() {
                    if s > scores[best] {
                        best = l;
                    }
                }
                best as u32
            }
        }
    }

    /// The loss of expert scores against a label: 0-1 for single-label tasks, the weighted
    /// rank loss for multi-label ones.
    fn loss(&self, scores: &[f64], label: &Label) -> f64 {
        match label {
            Label::Class(y) => f64::from(self.class_of(scores) != *y),
            Label::Set(y) => rank_loss(scores, y),
        }
    }

    /// Emits the prediction for `rec` into `out` (unless `rec` is a learning pass), then
    /// learns from its label or top-k feedback if any; returns whether `out` was written.
    pub fn finish(&mut self, rec: &InFlight, out: &mut Prediction) -> bool {
        let mut chosen = None;
        if rec.emit {
            let expert = match &mut self.selector {
                Selector::Last => self.experts.saturating_sub(1),
                Selector::Hedge(h) => h.choose(),
            };
            chosen = Some(expert);
            let scores = self.expert_scores(rec, expert);
            out.seq = rec.seq;
            out.id = rec.example.id;
            out.expert = expert as u32 + 1;
            out.version = rec.version;
            out.scores.clear();
            out.scores.extend_from_slice(scores);
            out.class = self.class_of(scores);
            if self.task == Task::Multilabel {
                self.rule
                    .predict(&rec.example.features, scores, &mut out.labels);
            } else {
                out.labels.clear();
            }
            if let Some((config, rng)) = &mut self.topk {
                (out.top, out.shown) = show(scores, config, rng);
            } else {
                out.top.clear();
                out.shown.clear();
            }
        }
        self.learn(rec, chosen);
        rec.emit
    }

    /// The score vector of `expert` (0-based) in `rec`.
    fn expert_scores<'a>(&self, rec: &'a InFlight, expert: usize) -> &'a [f64] {
        let d = self.score_dim;
        match self.selector {
            Selector::Last => &rec.scores[..],
            Selector::Hedge(_) => &rec.trail[expert * d..(expert + 1) * d],
        }
    }

    /// The expert whose scores the label-set rule learns from: the one chosen for the
    /// prediction when this pass emitted one, else (a learning pass of an event predicted
    /// earlier) the last expert without Hedge and Hedge's most probable expert with it
    /// (the lowest index among equals), so that both engines agree.
    fn rule_expert(&self, chosen: Option<usize>) -> usize {
        if let Some(e) = chosen {
            return e;
        }
        match &self.selector {
            Selector::Last => self.experts.saturating_sub(1),
            Selector::Hedge(h) => {
                let p = h.probabilities();
                let mut best = 0;
                for (i, &v) in p.iter().enumerate() {
                    if v > p[best] {
                        best = i;
                    }
                }
                best
            }
        }
    }

    /// Updates Hedge and the label-set rule from the record's label or top-k feedback.
    fn learn(&mut self, rec: &InFlight, chosen: Option<usize>) {
        let d = self.score_dim;
        let full;
        let pairs: Option<&PairFeedback> = match (&rec.pairs, rec.label()) {
            (Some(p), _) => Some(p),
            (None, Some(label)) if self.topk.is_some() => {
                full = full_information_pairs(label.relevant(), d);
                Some(&full)
            }
            _ => None,
        };
        if let Some(p) = pairs {
            if let Selector::Hedge(h) = &mut self.selector {
                let losses: Vec<f64> = rec.trail.chunks_exact(d).map(|s| p.rank_loss(s)).collect();
                h.update(losses);
            }
            // The label-set rule sees the relevant labels that were revealed.
            self.rule.observe(p.relevant.len());
        } else if let Some(label) = rec.label() {
            // The label-set rule learns first, from the scores before Hedge's update.
            if self.task == Task::Multilabel {
                let expert = self.rule_expert(chosen);
                let scores = self.expert_scores(rec, expert);
                let mut rule = std::mem::take(&mut self.rule);
                rule.learn(&rec.example.features, scores, label.relevant());
                self.rule = rule;
            }
            if let Selector::Hedge(_) = self.selector {
                let losses: Vec<f64> = rec
                    .trail
                    .chunks_exact(d)
                    .map(|s| self.loss(s, label))
                    .collect();
                if let Selector::Hedge(h) = &mut self.selector {
                    h.update(losses);
                }
            }
            if self.task != Task::Multilabel {
                self.rule.observe(label.relevant().len());
            }
        }
    }
}
