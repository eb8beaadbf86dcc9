/// The confusion counts of one predicted label set against the true one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetCounts {
    /// Labels predicted and relevant.
    pub true_positives: usize,
    /// Labels predicted but not relevant.
    pub false_positives: usize,
    /// Relevant labels not predicted.
    pub false_negatives: usize,
}

impl SetCounts {
    /// Example-based precision `|P ∩ Y| / |P|`; 1 when both sets are empty, 0 when only `P` is.
    pub fn precision(&self) -> f64 {
        let predicted = self.true_positives + self.false_positives;
        if predicted == 0 {
            return if self.false_negatives == 0 { 1.0 } else { 0.0 };
        }
        self.true_positives as f64 / predicted as f64
    }

    /// Example-based recall `|P ∩ Y| / |Y|`; 1 when both sets are empty, 0 when only `Y` is.
    pub fn recall(&self) -> f64 {
        let relevant = self.true_positives + self.false_negatives;
        if relevant == 0 {
            return if self.false_positives == 0 { 1.0 } else { 0.0 };
        }
        self.true_positives as f64 / relevant as f64
    }

    /// Example-based F1 `2 |P ∩ Y| / (|P| + |Y|)`; 1 when both sets are empty.
    pub fn f1(&self) -> f64 {
        let denom = 2 * self.true_positives + self.false_positives + self.false_negatives;
        if denom == 0 {
            return 1.0;
        }
        2.0 * self.true_positives as f64 / denom as f64
    }

    /// The size of the symmetric difference `|P Δ Y|` (Hamming loss times `k`).
    pub fn symmetric_difference(&self) -> usize {
        self.false_positives + self.false_negatives
    }
}

/// Counts true positives, false positives and false negatives of `predicted` against
/// `relevant`; both sorted ascending without repeats.
pub fn set_counts(predicted: &[u32], relevant: &[u32]) -> SetCounts {
    let (mut i, mut j) = (0, 0);
    let mut c = SetCounts::default();
    while i < predicted.len() && j < relevant.len() {
        match predicted[i].cmp(&relevant[j]) {
            std::cmp::Ordering::Equal => {
                c.true_positives += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => {
                c.false_positives += 1;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                c.false_negatives += 1;
                j += 1;
            }
        }
    }
    c.false_positives += predicted.len() - i;
    c.false_negatives += relevant.len() - j;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_counts_and_scores() {
        // P = {0, 2, 5}, Y = {2, 3}: TP = {2}, FP = {0, 5}, FN = {3}.
        let c = set_counts(&[0, 2, 5], &[2, 3]);
        assert_eq!(
            c,
            SetCounts {
                true_positives: 1,
                false_positives: 2,
                false_negatives: 1
            }
        );
        assert!((c.precision() - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(c.recall(), 0.5);
        assert!((c.f1() - 2.0 / 5.0).abs() < 1e-15);
        assert_eq!(c.symmetric_difference(), 3);
    }

    #[test]
    fn empty_sets_follow_the_documented_conventions() {
        let both = set_counts(&[], &[]);
        assert_eq!(
            (both.precision(), both.recall(), both.f1()),
            (1.0, 1.0, 1.0)
        );
        let none_predicted = set_counts(&[], &[1]);
        assert_eq!(
            (
                none_predicted.precision(),
                none_predicted.recall(),
                none_predicted.f1()
            ),
            (0.0, 0.0, 0.0)
        );
        let none_relevant = set_counts(&[1], &[]);
        assert_eq!(
            (
                none_relevant.precision(),
                none_relevant.recall(),
                none_relevant.f1()
            ),
            (0.0, 0.0, 0.0)
        );
    }
}
