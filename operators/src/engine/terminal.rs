use super::{Hedge, InFlight, LabelSetRule, Prediction};
use crate::data::{Label, Task};
use crate::metrics::rank_loss;
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
}

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
        }
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

    /// Emits the prediction for `rec` into `out`, then learns from its label if known.
    pub fn finish(&mut self, rec: &InFlight, out: &mut Prediction) {
        let d = self.score_dim;
        let expert = match &mut self.selector {
            Selector::Last => self.experts.saturating_sub(1),
            Selector::Hedge(h) => h.choose(),
        };
        let scores = match self.selector {
            Selector::Last => &rec.scores[..],
            Selector::Hedge(_) => &rec.trail[expert * d..(expert + 1) * d],
        };
        out.seq = rec.seq;
        out.id = rec.example.id;
        out.expert = expert as u32 + 1;
        out.scores.clear();
        out.scores.extend_from_slice(scores);
        out.class = self.class_of(scores);
        if self.task == Task::Multilabel {
            self.rule.predict(scores, &mut out.labels);
        } else {
            out.labels.clear();
        }
        if let Some(label) = &rec.example.label {
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
            self.rule.observe(label.relevant().len());
        }
    }
}
