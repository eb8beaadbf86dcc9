//! Beyond the paper: a small grid of settings run side by side, chosen online by Hedge
//! (the command line's `--grid`).
//!
//! The paper tunes eta, M and the kernel width by ten-fold cross-validation on the
//! training file, which a stream does not have. [`HedgeGrid`] runs one model per setting
//! of a [`ThresholdGrid`](super::ThresholdGrid) on every example and keeps a
//! [`Hedge`] weight per member: on each learned example every member first predicts
//! (progressively, before it learns the example) and suffers the loss
//! `1 - F1(Y^, Y)` of its predicted set (the per-example F1 `2 |Y^ n Y| / (|Y^| + |Y|)`,
//! 1 when both sets are empty), in `[0, 1]`; Hedge multiplies its weight by
//! `exp(-loss)`; then every member learns the example. The grid predicts with the
//! member of largest Hedge weight (the first on a tie) rather than drawing one at
//! random, so a prediction needs no random state and reads the model only; with weights
//! `exp(-cumulative loss)` that member is the one with the least progressive loss so far.
//!
//! Cost: the members' time and memory add up, and each learned example is predicted once
//! more per member (for its loss).

use super::ThresholdLearner;
use crate::data::Features;
use crate::hedge::Hedge;
use crate::metrics::set_counts;
use serde::{Deserialize, Serialize};

/// Models of one algorithm with different settings and their Hedge weights.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HedgeGrid {
    members: Vec<ThresholdLearner>,
    /// Each member's setting, for reports: `(eta, kernel width)`.
    settings: Vec<(f64, Option<f64>)>,
    hedge: Hedge,
    /// The member that predicts (the largest weight), kept in step with `hedge`.
    leader: usize,
    #[serde(skip)]
    scores: Vec<f64>,
    #[serde(skip)]
    labels: Vec<u32>,
}

impl HedgeGrid {
    /// A grid over `members` (at least one) with their settings `(eta, kernel width)`.
    pub(super) fn new(members: Vec<ThresholdLearner>, settings: Vec<(f64, Option<f64>)>) -> Self {
        debug_assert_eq!(members.len(), settings.len());
        debug_assert!(!members.is_empty());
        HedgeGrid {
            hedge: Hedge::new(members.len(), 0),
            members,
            settings,
            leader: 0,
            scores: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// The members.
    pub fn members(&self) -> &[ThresholdLearner] {
        &self.members
    }

    /// Each member's `(eta, kernel width)`.
    pub fn settings(&self) -> &[(f64, Option<f64>)] {
        &self.settings
    }

    /// The members' Hedge probabilities (normalized weights).
    pub fn weights(&self) -> Vec<f64> {
        self.hedge.probabilities()
    }

    /// The index of the member that predicts.
    pub fn leader(&self) -> usize {
        self.leader
    }

    /// The leader's prediction (see [`ThresholdLearner::predict`]).
    pub fn predict(&self, x: &Features, scores: &mut [f64], labels: &mut Vec<u32>) -> f64 {
        self.members[self.leader].predict(x, scores, labels)
    }

    /// Every member's loss on `(x, relevant)` as it predicts `x` now (before learning it),
    /// and Hedge's update. `x` must be the features as a prediction would see them (with
    /// online scaling: scaled before `x` joins the statistics).
    pub fn suffer(&mut self, x: &Features, relevant: &[u32]) {
        let l = self.members[0].num_labels();
        let mut scores = std::mem::take(&mut self.scores);
        let mut labels = std::mem::take(&mut self.labels);
        scores.resize(l, 0.0);
        let mut losses = Vec::with_capacity(self.members.len());
        for m in &self.members {
            m.predict(x, &mut scores, &mut labels);
            losses.push(1.0 - set_f1(&labels, relevant, l));
        }
        self.hedge.update(losses);
        self.leader = self.hedge.leader();
        self.scores = scores;
        self.labels = labels;
    }

    /// Every member learns `(x, relevant)` (call [`HedgeGrid::suffer`] first).
    pub fn learn(&mut self, x: &Features, relevant: &[u32]) {
        for m in &mut self.members {
            m.learn(x, relevant);
        }
    }
}

/// The per-example F1 of a predicted set against the relevant set (both sorted; relevant
/// indices `>= l`, which the models ignore, are ignored): the metrics' `2 |P n Y| / (|P| +
/// |Y|)`, 1 when both are empty.
pub fn set_f1(predicted: &[u32], relevant: &[u32], l: usize) -> f64 {
    let relevant = &relevant[..relevant.partition_point(|&y| (y as usize) < l)];
    set_counts(predicted, relevant).f1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_f1_by_hand() {
        assert_eq!(set_f1(&[], &[], 3), 1.0);
        assert_eq!(set_f1(&[0], &[], 3), 0.0);
        assert_eq!(set_f1(&[], &[1], 3), 0.0);
        assert_eq!(set_f1(&[0, 1], &[1, 2], 3), 0.5);
        assert_eq!(
            set_f1(&[0, 2], &[0, 2, 7], 3),
            1.0,
            "index 7 >= L is ignored"
        );
    }
}
