use crate::data::Features;
use crate::thresholding::{ScoreThreshold, ScoreThresholdConfig, ThresholdConfigError};
use serde::{Deserialize, Serialize};

/// Which rule turns a multi-label score vector into a label set (the command line's
/// `--label-set`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LabelSetKind {
    /// `top-m`: the `m` highest-scored labels, `m` the online mean cardinality.
    #[default]
    TopCardinality,
    /// `positive`: the labels whose score is above 0 (the thresholding learners emit
    /// scores relative to their own learned threshold, so this is their own label set).
    Positive,
    /// `threshold`: an ALT threshold learned online on top of the scores
    /// ([`ScoreThreshold`]).
    Learned,
}

crate::named_values!(
    LabelSetKind,
    "label-set rule",
    TopCardinality => "top-m",
    Positive => "positive",
    Learned => "threshold",
);

/// The online rule that turns a multi-label ranking into a label set.
///
/// * `TopCardinality` (the default): predict the `m` highest-scored labels, where `m` is
///   the mean size of the label sets seen so far, rounded to the nearest integer, at least
///   1 (1 before any label is seen). Ties in score go to the lower label index.
/// * `Positive`: predict `{i : s_i > 0}`.
/// * `Learned`: predict `{i : alpha z_i > theta(x)}` with the [`ScoreThreshold`] learned
///   by the ALT loss on the scores (beyond the thresholding paper: its threshold predictor
///   on top of any ranker's scores).
///
/// Every rule learns only from labels the model learns from, after the prediction, so it
/// never peeks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LabelSetRule {
    seen: u64,
    total_labels: u64,
    kind: LabelSetKind,
    threshold: Option<ScoreThreshold>,
}

impl LabelSetRule {
    /// A rule of `kind`; `Learned` needs the feature dimension and the threshold's
    /// configuration (an invalid one is an error).
    pub fn new(
        kind: LabelSetKind,
        dim: usize,
        config: &ScoreThresholdConfig,
    ) -> Result<Self, ThresholdConfigError> {
        let threshold = match kind {
            LabelSetKind::Learned => Some(ScoreThreshold::new(config, dim, 0)?),
            _ => None,
        };
        Ok(LabelSetRule {
            kind,
            threshold,
            ..LabelSetRule::default()
        })
    }

    /// The rule's kind.
    pub fn kind(&self) -> LabelSetKind {
        self.kind
    }

    /// The learned threshold, for the `Learned` rule.
    pub fn score_threshold(&self) -> Option<&ScoreThreshold> {
        self.threshold.as_ref()
    }

    /// The current set size `m` of the top-m rule.
    pub fn size(&self) -> usize {
        if self.seen == 0 {
            return 1;
        }
        let mean = self.total_labels as f64 / self.seen as f64;
        (mean.round() as usize).max(1)
    }

    /// Writes the predicted set (sorted) for `scores` (of the example with features `x`)
    /// into `out`.
    pub fn predict(&self, x: &Features, scores: &[f64], out: &mut Vec<u32>) {
        out.clear();
        match (self.kind, &self.threshold) {
            (LabelSetKind::Positive, _) => {
                out.extend((0..scores.len() as u32).filter(|&i| scores[i as usize] > 0.0));
            }
            (LabelSetKind::Learned, Some(t)) => {
                t.predict(x, scores, out);
            }
            _ => {
                let m = self.size().min(scores.len());
                out.extend(0..scores.len() as u32);
                // Highest score first, lower index first among equal scores.
                out.sort_by(|&a, &b| {
                    scores[b as usize]
                        .total_cmp(&scores[a as usize])
                        .then(a.cmp(&b))
                });
                out.truncate(m);
                out.sort_unstable();
            }
        }
    }

    /// Records the size of one true label set (all rules).
    pub fn observe(&mut self, relevant: usize) {
        self.seen += 1;
        self.total_labels += relevant as u64;
    }

    /// Learns from one labeled example: `scores` are the scores the rule predicts on (for
    /// the `Learned` rule, its threshold step; the other rules only count the set size).
    pub fn learn(&mut self, x: &Features, scores: &[f64], relevant: &[u32]) {
        self.observe(relevant.len());
        if let Some(t) = &mut self.threshold {
            t.learn(x, scores, relevant);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_m_with_online_mean_cardinality() {
        let mut r = LabelSetRule::default();
        let x = Features::Dense(vec![]);
        let mut out = vec![];
        r.predict(&x, &[0.1, 0.7, 0.7, 0.2], &mut out);
        assert_eq!(out, vec![1]); // m = 1 before any label, tie broken to the lower index
        r.observe(2);
        r.observe(3);
        assert_eq!(r.size(), 3); // 2.5 rounds to 3
        r.predict(&x, &[0.1, 0.7, 0.7, 0.2], &mut out);
        assert_eq!(out, vec![1, 2, 3]);
        r.observe(0);
        r.observe(0);
        r.observe(0);
        assert_eq!(r.size(), 1); // mean 1.0
    }

    #[test]
    fn positive_rule_keeps_the_labels_above_zero() {
        let r = LabelSetRule::new(LabelSetKind::Positive, 0, &Default::default()).unwrap();
        let mut out = vec![];
        r.predict(&Features::Dense(vec![]), &[0.5, 0.0, -1.0, 2.0], &mut out);
        assert_eq!(out, vec![0, 3]);
    }
}
