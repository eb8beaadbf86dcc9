use super::{rank_loss, set_counts};
use serde::{Deserialize, Serialize};

/// Running accuracy of single-label (binary or multiclass) predictions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SingleLabelMetrics {
    /// Predictions scored.
    pub count: u64,
    /// Correct predictions.
    pub correct: u64,
}

impl SingleLabelMetrics {
    /// Scores one prediction.
    pub fn update(&mut self, predicted: u32, truth: u32) {
        self.count += 1;
        self.correct += u64::from(predicted == truth);
    }

    /// The fraction of correct predictions (0 before any).
    pub fn accuracy(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.correct as f64 / self.count as f64
        }
    }

    /// `1 - accuracy`: the 0-1 loss (0 before any prediction).
    pub fn zero_one_loss(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            1.0 - self.accuracy()
        }
    }
}

/// Running multi-label metrics: the averages over examples of the weighted rank loss, the
/// Hamming loss and the example-based precision, recall and F1; micro-F1 from the summed
/// counts over all labels; macro-F1 as the mean over labels of each label's F1 (a label
/// never relevant and never predicted counts as F1 = 1, the MULAN convention).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MultilabelMetrics {
    /// Examples scored.
    pub count: u64,
    rank_loss: f64,
    hamming: f64,
    precision: f64,
    recall: f64,
    f1: f64,
    true_positives: Vec<u64>,
    false_positives: Vec<u64>,
    false_negatives: Vec<u64>,
}

impl MultilabelMetrics {
    /// Metrics for `k` labels.
    pub fn new(k: usize) -> Self {
        MultilabelMetrics {
            count: 0,
            rank_loss: 0.0,
            hamming: 0.0,
            precision: 0.0,
            recall: 0.0,
            f1: 0.0,
            true_positives: vec![0; k],
            false_positives: vec![0; k],
            false_negatives: vec![0; k],
        }
    }

    /// Scores one prediction: the `scores` of the ranking and the predicted label set, against
    /// the relevant labels (both sets sorted ascending, without repeats).
    pub fn update(&mut self, scores: &[f64], predicted: &[u32], relevant: &[u32]) {
        let k = self.true_positives.len();
        self.count += 1;
        self.rank_loss += rank_loss(scores, relevant);
        let c = set_counts(predicted, relevant);
        self.hamming += c.symmetric_difference() as f64 / k as f64;
        self.precision += c.precision();
        self.recall += c.recall();
        self.f1 += c.f1();
        for &l in predicted {
            if relevant.binary_search(&l).is_ok() {
                self.true_positives[l as usize] += 1;
            } else {
                self.false_positives[l as usize] += 1;
            }
        }
        for &l in relevant {
            if predicted.binary_search(&l).is_err() {
                self.false_negatives[l as usize] += 1;
            }
        }
    }

    fn mean(&self, sum: f64) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            sum / self.count as f64
        }
    }

    /// Mean weighted rank loss.
    pub fn rank_loss(&self) -> f64 {
        self.mean(self.rank_loss)
    }

    /// Mean Hamming loss `|P Δ Y| / k`.
    pub fn hamming_loss(&self) -> f64 {
        self.mean(self.hamming)
    }

    /// Mean example-based precision.
    pub fn precision(&self) -> f64 {
        self.mean(self.precision)
    }

    /// Mean example-based recall.
    pub fn recall(&self) -> f64 {
        self.mean(self.recall)
    }

    /// Mean example-based F1.
    pub fn f1(&self) -> f64 {
        self.mean(self.f1)
    }

    /// Micro-averaged F1: `2 TP / (2 TP + FP + FN)` over all labels and examples.
    pub fn micro_f1(&self) -> f64 {
        let tp: u64 = self.true_positives.iter().sum();
        let fp: u64 = self.false_positives.iter().sum();
        let fn_: u64 = self.false_negatives.iter().sum();
        let denom = 2 * tp + fp + fn_;
        if denom == 0 {
            1.0
        } else {
            2.0 * tp as f64 / denom as f64
        }
    }

    /// Macro-averaged F1: the mean over labels of each label's F1.
    pub fn macro_f1(&self) -> f64 {
        let k = self.true_positives.len();
        if k == 0 {
            return 0.0;
        }
        let sum: f64 = (0..k)
            .map(|l| {
                let tp = self.true_positives[l];
                let denom = 2 * tp + self.false_positives[l] + self.false_negatives[l];
                if denom == 0 {
                    1.0
                } else {
                    2.0 * tp as f64 / denom as f64
                }
            })
            .sum();
        sum / k as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_counts() {
        let mut m = SingleLabelMetrics::default();
        m.update(1, 1);
        m.update(0, 1);
        m.update(2, 2);
        m.update(2, 0);
        assert_eq!(m.accuracy(), 0.5);
        assert_eq!(m.zero_one_loss(), 0.5);
    }

    #[test]
    fn multilabel_hand_computed() {
        // k = 3. Example 1: scores rank 0 > 1 > 2, P = {0}, Y = {0, 1}.
        //   rank loss 0 (pairs (0,2), (1,2) right); Hamming 1/3; P 1, R 1/2, F1 2/3.
        // Example 2: scores rank 2 > 1 > 0, P = {2}, Y = {0}.
        //   rank loss 1 (pairs (0,1), (0,2) wrong); Hamming 2/3; P 0, R 0, F1 0.
        let mut m = MultilabelMetrics::new(3);
        m.update(&[3.0, 2.0, 1.0], &[0], &[0, 1]);
        m.update(&[1.0, 2.0, 3.0], &[2], &[0]);
        assert_eq!(m.rank_loss(), 0.5);
        assert!((m.hamming_loss() - 0.5).abs() < 1e-15);
        assert_eq!(m.precision(), 0.5);
        assert_eq!(m.recall(), 0.25);
        assert!((m.f1() - 1.0 / 3.0).abs() < 1e-15);
        // Per label: 0: TP 1, FN 1; 1: FN 1; 2: FP 1. Micro: 2 / (2 + 1 + 2) = 0.4.
        assert!((m.micro_f1() - 0.4).abs() < 1e-15);
        // Macro: label 0 F1 = 2/3, label 1 = 0, label 2 = 0 -> 2/9.
        assert!((m.macro_f1() - 2.0 / 9.0).abs() < 1e-15);
    }
}
